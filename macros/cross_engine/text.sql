{#- The file name without its folder, from the reader's `filename` column. -#}
{% macro file_basename(path_expr) -%}
    {{ return(adapter.dispatch('file_basename', 'preference_warehouse')(path_expr)) }}
{%- endmacro %}
{% macro default__file_basename(path_expr) -%} regexp_extract({{ path_expr }}, '[^/]+$', 0) {%- endmacro %}
{#- Spark's `filename` is a URI (file:/..., s3a://...): the part after the last '/' too. -#}
{% macro spark__file_basename(path_expr) -%} regexp_extract({{ path_expr }}, '[^/]+$', 0) {%- endmacro %}

{#- First capture group of a regex, '' when there is no match (same on both engines). -#}
{% macro regex_group(expr, pattern, group=1) -%}
    {{ return(adapter.dispatch('regex_group', 'preference_warehouse')(expr, pattern, group)) }}
{%- endmacro %}
{% macro default__regex_group(expr, pattern, group) -%} regexp_extract({{ expr }}, '{{ pattern }}', {{ group }}) {%- endmacro %}
{% macro spark__regex_group(expr, pattern, group) -%} regexp_extract({{ expr }}, {{ preference_warehouse.spark_regex_literal(pattern) }}, {{ group }}) {%- endmacro %}

{#- A stable text key: md5 hex of the parts joined with ':' (md5 exists on both engines, so
    keys and random draws agree across engines). NULL parts become ''. -#}
{% macro stable_hash(parts) -%}
    md5(concat_ws(':', {% for p in parts %}coalesce(cast({{ p }} as {{ dbt.type_string() }}), ''){{ ", " if not loop.last }}{% endfor %}))
{%- endmacro %}

{#- Text normalised for matching prompts across datasets: lower case, runs of white space
    collapsed to one space, trimmed. The pattern matches only what changes (a run of two or more,
    or one white space character other than a space): the same result as `\s+`, three times
    faster on DuckDB, which otherwise rewrites every single space. -#}
{% macro normalize_text(expr) -%}
    {{ return(adapter.dispatch('normalize_text', 'preference_warehouse')(expr)) }}
{%- endmacro %}
{% macro default__normalize_text(expr) -%} trim(regexp_replace(lower({{ expr }}), '\s{2,}|[^\S ]', ' ', 'g')) {%- endmacro %}
{% macro spark__normalize_text(expr) -%} trim(regexp_replace(lower({{ expr }}), '\\s{2,}|[^\\S ]', ' ')) {%- endmacro %}

{#- Is a dataset group enabled by the `datasets` var? Cross-dataset models include only those. -#}
{% macro dataset_enabled(group) -%}
    {{ return(group in enabled_dataset_groups()) }}
{%- endmacro %}

{#- The three key columns every staging model starts with: `<key_name>` (md5 of the dataset key,
    the file name without its format suffix and the row number in the file: a row keeps its key
    when its file is converted between Parquet and JSON), `source_file` (file name without folder)
    and `source_row` (0-based row number in that file), from the reader's filename/file_row_number. -#}
{% macro raw_row_key_columns(dataset_key, key_name) -%}
    {{ stable_hash(["'" ~ dataset_key ~ "'", regex_group(file_basename('filename'), '^(.+?)(\\.parquet|\\.jsonl?(\\.gz|\\.zst)?)?$'), 'file_row_number']) }} as {{ key_name }},
        {{ file_basename('filename') }} as source_file,
        cast(file_row_number as bigint) as source_row
{%- endmacro %}

{#- A score given as a number or as a string holding one ("4", " 4.5 ", "1e0") -> DOUBLE; anything
    else ("N/A", "", text, NULL) -> NULL. -#}
{% macro parse_number(expr) -%}
    try_cast(trim(cast({{ expr }} as {{ dbt.type_string() }})) as double)
{%- endmacro %}

{#- Does a text contain a match of a regex (RE2 syntax, as on DuckDB)? NULL for NULL. -#}
{% macro regex_contains(expr, pattern) -%}
    {{ return(adapter.dispatch('regex_contains', 'preference_warehouse')(expr, pattern)) }}
{%- endmacro %}
{% macro default__regex_contains(expr, pattern) -%} regexp_matches({{ expr }}, '{{ pattern }}') {%- endmacro %}
{% macro spark__regex_contains(expr, pattern) -%} ({{ expr }} rlike {{ preference_warehouse.spark_regex_literal(pattern) }}) {%- endmacro %}
