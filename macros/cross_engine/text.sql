{#- The file name without its folder, from the reader's `filename` column. -#}
{% macro file_basename(path_expr) -%} regexp_extract({{ path_expr }}, '[^/]+$', 0) {%- endmacro %}

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

{#- An exact key over text parts: md5 of the parts' own md5s joined with ':' (a NULL part hashes
    as the literal 'null', which no md5 hex digest equals). A ':' inside a part cannot fool it, and
    NULL differs from ''. -#}
{% macro exact_key(parts) -%}
    md5(concat_ws(':', {% for p in parts %}coalesce(md5({{ p }}), 'null'){{ ", " if not loop.last }}{% endfor %}))
{%- endmacro %}

{#- The exact key of a list, as a text: md5 of its elements' exact keys joined with ':', each
    element's key over `parts`, expressions of the element `x` (the element itself by default);
    NULL for a NULL list, md5('') for an empty one. -#}
{% macro list_exact_key(list_expr, parts=['x']) -%}
    case when {{ list_expr }} is not null then md5({{ list_join(list_transform(list_expr, 'x', exact_key(parts)), "':'") }}) end
{%- endmacro %}

{#- Each raw row's key, from a second read of `relation` that keeps only the columns the key is
    made of: `filename`, `file_row_number` and `<key_name>`, md5 of
    '<dataset key>:<content key>:<occurrence>'. The content key is exact_key over `content`,
    expressions of what the row is about (its prompt, or a pair's prompt and responses; never
    ratings); occurrence numbers the rows of one dataset with the same content key by file path,
    then row, 0 for the first. Removing, adding or reordering other rows, or converting a file
    between Parquet and JSON, changes no key. The staging model joins these keys to its rows on
    (row_keys_match): the occurrence is a window, and a window over the whole rows
    would hold every text of the dataset in memory. `contract_key`: read the relation with the
    raw contract's types first. -#}
{% macro raw_row_keys(relation, dataset_key, key_name, content, contract_key=none) -%}
    select
        filename,
        file_row_number,
        {{ stable_hash(["'" ~ dataset_key ~ "'", 'content_key', 'row_number() over (partition by content_key order by filename, file_row_number) - 1']) }} as {{ key_name }}
    from (
        select filename, file_row_number, {{ exact_key(content) }} as content_key
        {%- if contract_key %}
        from (select {{ raw_columns_as_contract(contract_key) }}, filename, file_row_number from {{ relation }}) as typed_rows
        {%- else %}
        from {{ relation }} as raw_rows
        {%- endif %}
    ) as contents
{%- endmacro %}

{#- Where a staging row was read: `source_file` (file name without folder) and `source_row`
    (0-based row number in that file), from the reader's filename/file_row_number. -#}
{% macro provenance_columns(relation) -%}
    {{ file_basename(relation ~ '.filename') }} as source_file,
        cast({{ relation }}.file_row_number as bigint) as source_row
{%- endmacro %}

{#- The join condition of a staging relation and its row keys (raw_row_keys). -#}
{% macro row_keys_match(relation, keys='row_keys') -%}
    {{ relation }}.filename = {{ keys }}.filename and {{ relation }}.file_row_number = {{ keys }}.file_row_number
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

{#- The exact key of two keys in either order (the smaller first): a pair keeps it when its two
    sides are swapped. A NULL side counts as the text 'null' (least/greatest would skip it, and
    (NULL, x) would share the key of (x, x)). -#}
{% macro unordered_pair_key(a, b) -%}
    {%- set a, b = "coalesce(" ~ a ~ ", 'null')", "coalesce(" ~ b ~ ", 'null')" -%}
    {{ exact_key(['least(' ~ a ~ ', ' ~ b ~ ')', 'greatest(' ~ a ~ ', ' ~ b ~ ')']) }}
{%- endmacro %}
