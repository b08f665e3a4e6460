{#- List (array) helpers. DuckDB and Spark spell these differently; the models call these. -#}

{#- A lambda for list_transform / list_filter: `lambda x: body` (DuckDB 2) or `x -> body` (Spark). -#}
{% macro lambda_(param, body) -%}
    {{ return(adapter.dispatch('lambda_', 'preference_warehouse')(param, body)) }}
{%- endmacro %}
{% macro default__lambda_(param, body) -%} lambda {{ param }}: {{ body }} {%- endmacro %}
{% macro spark__lambda_(param, body) -%} {{ param }} -> {{ body }} {%- endmacro %}

{% macro list_transform(list_expr, param, body) -%}
    {{ return(adapter.dispatch('list_transform', 'preference_warehouse')(list_expr, param, body)) }}
{%- endmacro %}
{% macro default__list_transform(list_expr, param, body) -%}
    list_transform({{ list_expr }}, {{ preference_warehouse.lambda_(param, body) }})
{%- endmacro %}
{% macro spark__list_transform(list_expr, param, body) -%}
    transform({{ list_expr }}, {{ preference_warehouse.lambda_(param, body) }})
{%- endmacro %}

{% macro list_filter(list_expr, param, body) -%}
    {{ return(adapter.dispatch('list_filter', 'preference_warehouse')(list_expr, param, body)) }}
{%- endmacro %}
{% macro default__list_filter(list_expr, param, body) -%}
    list_filter({{ list_expr }}, {{ preference_warehouse.lambda_(param, body) }})
{%- endmacro %}
{% macro spark__list_filter(list_expr, param, body) -%}
    filter({{ list_expr }}, {{ preference_warehouse.lambda_(param, body) }})
{%- endmacro %}

{#- The elements of a list of texts joined with `sep` (a SQL string literal). -#}
{% macro list_join(list_expr, sep) -%}
    {{ return(adapter.dispatch('list_join', 'preference_warehouse')(list_expr, sep)) }}
{%- endmacro %}
{% macro default__list_join(list_expr, sep) -%} array_to_string({{ list_expr }}, {{ sep }}) {%- endmacro %}
{% macro spark__list_join(list_expr, sep) -%} concat_ws({{ sep }}, {{ list_expr }}) {%- endmacro %}

{#- Number of elements; NULL for a NULL list. -#}
{% macro list_size(list_expr) -%}
    {{ return(adapter.dispatch('list_size', 'preference_warehouse')(list_expr)) }}
{%- endmacro %}
{% macro default__list_size(list_expr) -%} len({{ list_expr }}) {%- endmacro %}
{#- A BIGINT, as DuckDB's len(); size() is -1 for NULL when ANSI mode is off (dbt-spark
    turns it off): guarded. -#}
{% macro spark__list_size(list_expr) -%} cast(case when {{ list_expr }} is not null then size({{ list_expr }}) end as bigint) {%- endmacro %}

{#- Element at a 0-based position; NULL when out of range. -#}
{% macro list_at(list_expr, index0) -%}
    {{ return(adapter.dispatch('list_at', 'preference_warehouse')(list_expr, index0)) }}
{%- endmacro %}
{% macro default__list_at(list_expr, index0) -%} {{ list_expr }}[({{ index0 }}) + 1] {%- endmacro %}
{#- As DuckDB's list[i]: NULL out of range (also for position 0, which Spark rejects), a
    negative position counts from the end. -#}
{% macro spark__list_at(list_expr, index0) -%} try_element_at({{ list_expr }}, cast(nullif(({{ index0 }}) + 1, 0) as int)) {%- endmacro %}

{#- Last element; NULL for an empty list. -#}
{% macro list_last(list_expr) -%}
    {{ return(adapter.dispatch('list_last', 'preference_warehouse')(list_expr)) }}
{%- endmacro %}
{% macro default__list_last(list_expr) -%} {{ list_expr }}[-1] {%- endmacro %}
{% macro spark__list_last(list_expr) -%} try_element_at({{ list_expr }}, -1) {%- endmacro %}

{#- A list literal from expressions. -#}
{% macro make_list(items) -%}
    {{ return(adapter.dispatch('make_list', 'preference_warehouse')(items)) }}
{%- endmacro %}
{% macro default__make_list(items) -%} [{{ items | join(', ') }}] {%- endmacro %}
{% macro spark__make_list(items) -%} array({{ items | join(', ') }}) {%- endmacro %}

{#- Concatenation of two lists. -#}
{% macro list_concat(a, b) -%}
    {{ return(adapter.dispatch('list_concat', 'preference_warehouse')(a, b)) }}
{%- endmacro %}
{% macro default__list_concat(a, b) -%} list_concat({{ a }}, {{ b }}) {%- endmacro %}
{#- DuckDB skips a NULL list (NULL + NULL gives []); Spark's concat would give NULL. -#}
{% macro spark__list_concat(a, b) -%} concat(coalesce({{ a }}, array()), coalesce({{ b }}, array())) {%- endmacro %}

{#- Unnest a list with its 0-based position, as select-list items:
    `select t.key, {{ explode_with_index('t.items', 'item_index', 'item') }} from t`.
    Rows whose list is empty or NULL produce no output: callers account for them. -#}
{% macro explode_with_index(list_expr, index_name, value_name) -%}
    {{ return(adapter.dispatch('explode_with_index', 'preference_warehouse')(list_expr, index_name, value_name)) }}
{%- endmacro %}
{% macro default__explode_with_index(list_expr, index_name, value_name) -%}
    unnest({{ list_expr }}) as {{ value_name }}, generate_subscripts({{ list_expr }}, 1) - 1 as {{ index_name }}
{%- endmacro %}
{#- inline() of (value, bigint position) structs: the same two columns, in the same order and
    with the same types as DuckDB's (posexplode would give an int position, first). -#}
{% macro spark__explode_with_index(list_expr, index_name, value_name) -%}
    inline(transform({{ list_expr }}, (explode_value, explode_index) -> named_struct(
        '{{ value_name }}', explode_value, '{{ index_name }}', cast(explode_index as bigint))))
{%- endmacro %}

{#- The names whose condition holds, in the order given, as a list of strings ([] when none):
    flag_list([('a > 1', 'too_big'), ('b is null', 'missing_b')]). A NULL condition counts as false. -#}
{% macro flag_list(conditions) -%}
    {%- set items = [] -%}
    {%- for condition, name in conditions -%}
        {%- do items.append("case when " ~ condition ~ " then '" ~ name ~ "' end") -%}
    {%- endfor -%}
    {{ preference_warehouse.list_filter(preference_warehouse.make_list(items), 'flag', 'flag is not null') }}
{%- endmacro %}

{#- Aggregate: the distinct non-NULL values of a string expression, sorted, as a list. -#}
{% macro sorted_distinct_list_agg(expr) -%}
    {{ return(adapter.dispatch('sorted_distinct_list_agg', 'preference_warehouse')(expr)) }}
{%- endmacro %}
{% macro default__sorted_distinct_list_agg(expr) -%}
    list(distinct {{ expr }} order by {{ expr }}) filter (where {{ expr }} is not null)
{%- endmacro %}
{% macro spark__sorted_distinct_list_agg(expr) -%}
    array_sort(collect_set({{ expr }}))
{%- endmacro %}

{#- Concatenation of two lists of strings without repeats, sorted. -#}
{% macro sorted_union_lists(a, b) -%}
    {{ return(adapter.dispatch('sorted_union_lists', 'preference_warehouse')(a, b)) }}
{%- endmacro %}
{% macro default__sorted_union_lists(a, b) -%}
    list_sort(list_distinct(list_concat(coalesce({{ a }}, []), coalesce({{ b }}, []))))
{%- endmacro %}
{% macro spark__sorted_union_lists(a, b) -%}
    array_sort(array_distinct(concat(coalesce({{ a }}, array()), coalesce({{ b }}, array()))))
{%- endmacro %}

{#- Whether a list holds a value (NULL for a NULL list). -#}
{% macro list_has(list_expr, value) -%}
    {{ return(adapter.dispatch('list_has', 'preference_warehouse')(list_expr, value)) }}
{%- endmacro %}
{% macro default__list_has(list_expr, value) -%} list_contains({{ list_expr }}, {{ value }}) {%- endmacro %}
{% macro spark__list_has(list_expr, value) -%} array_contains({{ list_expr }}, {{ value }}) {%- endmacro %}
