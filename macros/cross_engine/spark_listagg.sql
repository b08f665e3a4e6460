{#- dbt.listagg on Spark. dbt-spark's version drops the order_by_clause (with a warning), so
    the concatenation order would depend on the shuffle; Spark 4 has listagg ... WITHIN GROUP
    (ORDER BY ...), which keeps the order DuckDB's string_agg(... ORDER BY ...) gives. -#}
{% macro spark__listagg(measure, delimiter_text, order_by_clause, limit_num) -%}
    {%- if limit_num -%}
        {{ exceptions.raise_compiler_error('spark__listagg: limit_num is not supported (models do not use it)') }}
    {%- endif -%}
    listagg({{ measure }}, {{ delimiter_text }}){% if order_by_clause %} within group ({{ order_by_clause }}){% endif %}
{%- endmacro %}
