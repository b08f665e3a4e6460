{#- Seeds on Spark. dbt-spark 1.11's session method pastes each CSV value into the INSERT as
    '<value>' without escaping (a quote in a seed breaks the statement, an empty cell becomes
    the text 'None'). This version writes every value as an escaped Spark SQL literal, NULL
    for an empty cell, and sends no bindings. -#}
{% macro spark__load_csv_rows(model, agate_table) %}
    {%- set batch_size = get_batch_size() -%}
    {%- set column_override = model['config'].get('column_types', {}) -%}
    {%- set types = [] -%}
    {%- for col_name in agate_table.column_names -%}
        {%- do types.append(column_override.get(col_name, adapter.convert_type(agate_table, loop.index0))) -%}
    {%- endfor -%}
    {%- set statements = [] -%}
    {%- for chunk in agate_table.rows | batch(batch_size) -%}
        {%- set sql -%}
            insert into {{ this.render() }} values
            {% for row in chunk -%}
                ({%- for value in row -%}
                    cast({{ spark_literal(value) }} as {{ types[loop.index0] }}){{ ", " if not loop.last }}
                {%- endfor -%}){{ "," if not loop.last }}
            {% endfor %}
        {%- endset -%}
        {%- do adapter.add_query(sql, abridge_sql_log=True) -%}
        {%- if loop.first -%}{%- do statements.append(sql) -%}{%- endif -%}
    {%- endfor -%}
    {{ return(statements[0] if statements else '') }}
{% endmacro %}

{#- A Python value from a seed (agate) as a Spark SQL literal. -#}
{% macro spark_literal(value) -%}
    {%- if value is none -%}null
    {%- elif value is sameas true -%}true
    {%- elif value is sameas false -%}false
    {%- elif value is number -%}{{ value }}
    {%- else -%}'{{ value | string | replace('\\', '\\\\') | replace("'", "\\'") }}'
    {%- endif -%}
{%- endmacro %}
