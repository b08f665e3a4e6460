{#- After a run (on-run-end): one line per node that ran out of DuckDB's memory, naming the node
    and the setting to raise. DuckDB's error names neither. -#}
{% macro report_out_of_memory(results) %}
    {%- set failed = [] -%}
    {%- for r in results if (r.status | string) in ['error', 'fail'] and 'Out of Memory' in (r.message or '') -%}
        {%- do failed.append(r.node) -%}
    {%- endfor -%}
    {%- if execute and failed -%}
        {%- set limit = run_query("select current_setting('memory_limit')").columns[0].values()[0] -%}
        {%- for node in failed -%}
            {{ log(node.resource_type ~ ' ' ~ node.name ~ ' ran out of memory at DuckDB memory_limit ' ~ limit
                ~ ': set DUCKDB_MEMORY_LIMIT higher (or DBT_THREADS=1, one model at a time) and build again',
                info=True) }}
        {%- endfor -%}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}
