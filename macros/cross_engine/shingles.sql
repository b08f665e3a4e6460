{#- Hashes for the near-duplicate rule (docs/near-duplicates.md): a 64-bit hash of a few values,
    a token list as hashes, a text's shingles as a set of hashes, and MinHash permutations.
    The hashes are the engine's own (DuckDB hash, Spark xxhash64): they never leave the
    intermediate tables, and every Jaccard they give is the count of shared shingles over the union. -#}

{#- A 64-bit hash of the values (DuckDB UBIGINT, Spark BIGINT). -#}
{% macro hash_values(parts) -%}
    {{ return(adapter.dispatch('hash_values', 'preference_warehouse')(parts)) }}
{%- endmacro %}
{% macro default__hash_values(parts) -%} hash({{ parts | join(', ') }}) {%- endmacro %}
{% macro spark__hash_values(parts) -%} xxhash64({{ parts | join(', ') }}) {%- endmacro %}

{#- A token list (text_tokens) as a list of token hashes. -#}
{% macro token_hashes(tokens) -%}
    {{ preference_warehouse.list_transform(tokens, 'token', preference_warehouse.hash_values(['token'])) }}
{%- endmacro %}

{#- A text's word n-grams as hashes, one per start position (a repeated n-gram repeats: its set
    is the distinct values), from its token hashes (a column: it is read once per n-gram): a text of
    1 <= m < n tokens has one shingle, its whole sequence; a text without tokens has none. -#}
{% macro shingle_hashes(hashes, n) -%}
    {{ return(adapter.dispatch('shingle_hashes', 'preference_warehouse')(hashes, n)) }}
{%- endmacro %}
{#- hashes[i + k] past the end is NULL: a short text's one shingle hashes its tokens and NULLs -#}
{% macro default__shingle_hashes(hashes, n) -%}
    list_transform(
        range(case when len({{ hashes }}) = 0 then 0 else greatest(len({{ hashes }}) - {{ n }} + 1, 1) end),
        lambda i: hash({% for k in range(1, n + 1) %}{{ hashes }}[i + {{ k }}]{{ ', ' if not loop.last }}{% endfor %})
    )
{%- endmacro %}
{% macro spark__shingle_hashes(hashes, n) -%}
    case when size({{ hashes }}) = 0 then cast(array() as array<bigint>) else transform(
        sequence(0, greatest(size({{ hashes }}) - {{ n }}, 0)),
        i -> xxhash64(slice({{ hashes }}, i + 1, {{ n }}))
    ) end
{%- endmacro %}

{#- The number of distinct values of a list. -#}
{% macro distinct_count(list_expr) -%}
    {{ return(adapter.dispatch('distinct_count', 'preference_warehouse')(list_expr)) }}
{%- endmacro %}
{% macro default__distinct_count(list_expr) -%} cast(list_unique({{ list_expr }}) as bigint) {%- endmacro %}
{% macro spark__distinct_count(list_expr) -%} cast(size(array_distinct({{ list_expr }})) as bigint) {%- endmacro %}

{#- The number of distinct values two lists share, given each one's distinct count: a + b minus
    the distinct values of both together (cheaper than intersecting the lists). -#}
{% macro shared_count(a, b, count_a, count_b) -%}
    {{ count_a }} + {{ count_b }} - {{ preference_warehouse.distinct_count(preference_warehouse.list_concat(a, b)) }}
{%- endmacro %}

{#- The distinct values of a list as one hash, whatever their order and repeats (the key of a
    shingle set). -#}
{% macro set_hash(list_expr) -%}
    {{ return(adapter.dispatch('set_hash', 'preference_warehouse')(list_expr)) }}
{%- endmacro %}
{% macro default__set_hash(list_expr) -%} hash(list_sort(list_distinct({{ list_expr }}))) {%- endmacro %}
{% macro spark__set_hash(list_expr) -%} xxhash64(array_sort(array_distinct({{ list_expr }}))) {%- endmacro %}

{#- One MinHash hash function of a shingle hash: the hash of its XOR with the function's constant
    (a pseudo-random permutation of the 64-bit values; the signature keeps each function's least value). -#}
{% macro minhash_value(hash_expr, constant) -%}
    {{ return(adapter.dispatch('minhash_value', 'preference_warehouse')(hash_expr, constant)) }}
{%- endmacro %}
{% macro default__minhash_value(hash_expr, constant) -%} hash(xor({{ hash_expr }}, {{ constant }})) {%- endmacro %}
{% macro spark__minhash_value(hash_expr, constant) -%} xxhash64({{ hash_expr }} ^ {{ constant }}) {%- endmacro %}

{#- The constants of `count` MinHash functions: a fixed sequence (a 64-bit linear congruential
    generator, 63 bits kept), the same on every engine and every build. -#}
{% macro minhash_constants(count) -%}
    {%- set state = namespace(x=20240607) -%}
    {%- set out = [] -%}
    {%- for i in range(count) -%}
        {%- set state.x = (state.x * 6364136223846793005 + 1442695040888963407) % 18446744073709551616 -%}
        {%- do out.append(state.x // 2) -%}
    {%- endfor -%}
    {{ return(out) }}
{%- endmacro %}

{#- Written between a CTE's `as` and its `(`: DuckDB computes the CTE as a step of its own. A CTE
    without an aggregate is otherwise inlined into each reader: one read twice shingles its texts
    twice, and one read once runs its list functions inside its reader's pipeline, on fewer
    threads (int_near_duplicates__pair_responses at scale 1.0: 13.5 s wall inlined, 8 s
    materialized, the same CPU). Spark has no such keyword. -#}
{% macro computed_once() -%}
    {{ return(adapter.dispatch('computed_once', 'preference_warehouse')()) }}
{%- endmacro %}
{% macro default__computed_once() -%} materialized {%- endmacro %}
{% macro spark__computed_once() -%} {%- endmacro %}
