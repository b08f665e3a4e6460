{#- JSON and regex helpers. DuckDB (default__) and Spark spell these differently; the models
    call these. Every helper is NULL-safe: a NULL input gives NULL (or an empty list where
    noted). Only `json_is_valid` may be given text that is not valid JSON: guard the others
    with it (`case when {{ json_is_valid('x') }} then x end`), since DuckDB's JSON functions
    raise an error on malformed input instead of returning NULL. -#}

{#- true when the text is one strict (RFC 8259) JSON value, false when it is not, NULL for NULL.
    DuckDB's json_valid also accepts trailing commas ('[1,]', '{"a":1,}') and NaN/Infinity:
    those are rejected here by a regex over the text with its string literals blanked out. -#}
{% macro json_is_valid(expr) -%}
    {{ return(adapter.dispatch('json_is_valid', 'preference_warehouse')(expr)) }}
{%- endmacro %}
{% macro default__json_is_valid(expr) -%}
    (json_valid({{ expr }})
        and not (
            -- cheap pre-check on the raw text first; only suspects get their strings blanked
            regexp_matches({{ expr }}, ',\s*[\]}]|\bNaN\b|\bInfinity\b')
            and regexp_matches(
                regexp_replace({{ expr }}, '"(?:[^"\\]|\\.)*"', '""', 'g'),
                ',\s*[\]}]|\bNaN\b|\bInfinity\b')))
{%- endmacro %}
{% macro spark__json_is_valid(expr) -%}
    (case when {{ expr }} is not null then try_parse_json({{ expr }}) is not null end)
{%- endmacro %}

{#- The JSON type of the value at `path`, engine-neutral and lower case:
    'object', 'array', 'number', 'string', 'boolean', 'null'; NULL when the path is absent. -#}
{% macro json_kind(expr, path='$') -%}
    {{ return(adapter.dispatch('json_kind', 'preference_warehouse')(expr, path)) }}
{%- endmacro %}
{% macro default__json_kind(expr, path) -%}
    (case json_type({{ expr }}, '{{ path }}')
        when 'OBJECT' then 'object'
        when 'ARRAY' then 'array'
        when 'BIGINT' then 'number'
        when 'UBIGINT' then 'number'
        when 'HUGEINT' then 'number'
        when 'DOUBLE' then 'number'
        when 'VARCHAR' then 'string'
        when 'BOOLEAN' then 'boolean'
        when 'NULL' then 'null'
    end)
{%- endmacro %}
{% macro spark__json_kind(expr, path) -%}
    (case
        when try_variant_get(try_parse_json({{ expr }}), '{{ path }}') is null then null
        when schema_of_variant(try_variant_get(try_parse_json({{ expr }}), '{{ path }}')) like 'OBJECT%' then 'object'
        when schema_of_variant(try_variant_get(try_parse_json({{ expr }}), '{{ path }}')) like 'ARRAY%' then 'array'
        when schema_of_variant(try_variant_get(try_parse_json({{ expr }}), '{{ path }}')) in ('BIGINT', 'DOUBLE', 'FLOAT')
          or schema_of_variant(try_variant_get(try_parse_json({{ expr }}), '{{ path }}')) like 'DECIMAL%' then 'number'
        when schema_of_variant(try_variant_get(try_parse_json({{ expr }}), '{{ path }}')) = 'STRING' then 'string'
        when schema_of_variant(try_variant_get(try_parse_json({{ expr }}), '{{ path }}')) = 'BOOLEAN' then 'boolean'
        when schema_of_variant(try_variant_get(try_parse_json({{ expr }}), '{{ path }}')) = 'VOID' then 'null'
    end)
{%- endmacro %}

{#- The value at `path` as text: a string without its quotes, a number or boolean as written,
    an object or array as JSON text; NULL when absent or JSON null. -#}
{% macro json_text(expr, path) -%}
    {{ return(adapter.dispatch('json_text', 'preference_warehouse')(expr, path)) }}
{%- endmacro %}
{% macro default__json_text(expr, path) -%} json_extract_string({{ expr }}, '{{ path }}') {%- endmacro %}
{% macro spark__json_text(expr, path) -%} get_json_object({{ expr }}, '{{ path }}') {%- endmacro %}

{#- The value at `path` as JSON text (a string keeps its quotes); NULL when absent. -#}
{% macro json_fragment(expr, path) -%}
    {{ return(adapter.dispatch('json_fragment', 'preference_warehouse')(expr, path)) }}
{%- endmacro %}
{% macro default__json_fragment(expr, path) -%} cast(json_extract({{ expr }}, '{{ path }}') as varchar) {%- endmacro %}
{% macro spark__json_fragment(expr, path) -%} to_json(try_variant_get(try_parse_json({{ expr }}), '{{ path }}')) {%- endmacro %}

{#- The elements of a JSON array, each as JSON text (list of strings); NULL when the
    value is not an array. -#}
{% macro json_array_items(expr) -%}
    {{ return(adapter.dispatch('json_array_items', 'preference_warehouse')(expr)) }}
{%- endmacro %}
{% macro default__json_array_items(expr) -%}
    (case when json_type({{ expr }}) = 'ARRAY' then cast(json_extract({{ expr }}, '$[*]') as varchar[]) end)
{%- endmacro %}
{% macro spark__json_array_items(expr) -%}
    from_json({{ expr }}, 'array<string>')
{%- endmacro %}

{#- The members of a JSON object in document order, as a list of {key, value} structs
    (value as JSON text). Duplicate keys are all kept (DuckDB); NULL when the value is not an
    object. -#}
{% macro json_object_entries(expr) -%}
    {{ return(adapter.dispatch('json_object_entries', 'preference_warehouse')(expr)) }}
{%- endmacro %}
{% macro default__json_object_entries(expr) -%}
    (case when json_type({{ expr }}) = 'OBJECT' then
        list_transform(
            list_zip(json_keys({{ expr }}), cast(json_extract({{ expr }}, '$.*') as varchar[])),
            lambda kv: struct_pack(key := kv[1], value := kv[2])
        )
    end)
{%- endmacro %}
{% macro spark__json_object_entries(expr) -%}
    map_entries(from_json({{ expr }}, 'map<string,string>'))
{%- endmacro %}

{#- Every match of a regex's capture group `group`, in order; an empty list when nothing
    matches. Patterns use the RE2/Java common subset (inline flags like (?s), (?m)). -#}
{% macro regex_extract_all(expr, pattern, group=1) -%}
    {{ return(adapter.dispatch('regex_extract_all', 'preference_warehouse')(expr, pattern, group)) }}
{%- endmacro %}
{% macro default__regex_extract_all(expr, pattern, group) -%}
    regexp_extract_all({{ expr }}, '{{ pattern }}', {{ group }})
{%- endmacro %}
{#- Pattern translated to Java's regex semantics and escaped (spark_regex_literal). -#}
{% macro spark__regex_extract_all(expr, pattern, group) -%}
    regexp_extract_all({{ expr }}, {{ preference_warehouse.spark_regex_literal(pattern) }}, {{ group }})
{%- endmacro %}
