{#- on-run-start (DuckDB): a build killed between dbt-duckdb's COMMIT of a table and its drop of
    `<table>__dbt_backup` (or of a `__dbt_tmp` relation) leaves that relation behind; with several
    models running at once any of them can be at that step. Every such relation of the warehouse
    is dropped before anything is built, each named in the log. The marts are whole either way
    (the backup holds a table's previous version). -#}
{% macro drop_interrupted_build_leftovers() %}
    {%- if not execute or target.type != 'duckdb' or flags.WHICH not in ('build', 'run', 'seed', 'snapshot', 'retry') -%}
        {{ return('') }}
    {%- endif -%}
    {%- set found = run_query(
        "select schema_name, table_name, 'table' from duckdb_tables() where database_name = current_database()"
        ~ " and regexp_matches(table_name, '__dbt_(backup|tmp)$')"
        ~ " union all select schema_name, view_name, 'view' from duckdb_views() where database_name = current_database()"
        ~ " and not internal and regexp_matches(view_name, '__dbt_(backup|tmp)$')"
        ~ " order by 1, 2") -%}
    {%- for schema, name, kind in found.rows -%}
        {%- do run_query('drop ' ~ kind ~ ' if exists ' ~ adapter.quote(schema) ~ '.' ~ adapter.quote(name)) -%}
        {%- do log('removed ' ~ schema ~ '.' ~ name ~ ', left by an interrupted build (the table it backed up is whole)', info=True) -%}
    {%- endfor -%}
    {%- if found.rows -%}{%- do adapter.commit() -%}{%- endif -%}
    {{ return('') }}
{% endmacro %}
