{#- The scan for secrets and personal data (docs/pii.md). Its patterns are the seed pii_patterns
    (the same file the export's redaction and the publish check read), as (kind, category, pattern)
    rows ordered by kind: read from the seed's file on DuckDB, so that a compile or the lint needs no
    loaded seed; from the loaded seed on Spark (dbt build loads it first). None while dbt parses,
    and none with the var pii_scan false (nothing is scanned: what the scan costs, make bench). -#}
{% macro pii_patterns() %}
    {%- set relation = ref('pii_patterns') -%}
    {%- if not execute or not pii_scan_enabled() -%}
        {{ return([]) }}
    {%- endif -%}
    {%- set rows = run_query(adapter.dispatch('pii_patterns_query', 'preference_warehouse')(relation)).rows -%}
    {{ return(rows | map('list') | list) }}
{% endmacro %}
{% macro default__pii_patterns_query(relation) -%}
    select kind, category, pattern
    from read_csv({{ sql_string(project_path('seeds/pii_patterns.csv')) }}, header = true, all_varchar = true, quote = '"', escape = '"')
    order by kind
{%- endmacro %}
{% macro spark__pii_patterns_query(relation) -%}
    select kind, category, pattern from {{ relation }} order by kind
{%- endmacro %}

{#- Does this build scan the texts (the var pii_scan, default true)? -#}
{% macro pii_scan_enabled() %}
    {{ return(var('pii_scan', true) | string | lower not in ['false', '0', 'no']) }}
{% endmacro %}

{#- Does the var pii_flag_personal ask for pairs with personal data to be flagged? -#}
{% macro pii_flag_personal() %}
    {{ return(var('pii_flag_personal', false) | string | lower in ['true', '1', 'yes']) }}
{% endmacro %}

{#- An IPv4 address's octets as a bigint (dotted text of four numbers). -#}
{% macro ipv4_number(expr) -%}
    ({% for i in range(1, 5) %}cast(split_part({{ expr }}, '.', {{ i }}) as bigint) * {{ 256 ** (4 - i) }}{{ ' + ' if not loop.last }}{% endfor %})
{%- endmacro %}

{#- Is every octet of the dotted address at most 255? -#}
{% macro ipv4_octets_valid(expr) -%}
    ({% for i in range(1, 5) %}cast(split_part({{ expr }}, '.', {{ i }}) as bigint) <= 255{{ ' and ' if not loop.last }}{% endfor %})
{%- endmacro %}
