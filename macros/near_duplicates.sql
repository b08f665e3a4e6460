{#- The var `near_duplicates`, the near-duplicate rule's settings (docs/near-duplicates.md), with its
    defaults; a wrong value stops the build with one line naming the key, the value and the fix:

      near_duplicates: {enabled: true, ngram: 5, threshold: 0.8, keep: one, bands: 20, rows: 5}

    enabled: false builds the tables empty and flags nothing. keep: one flags every copy of a
    same-comparison group but its first; none flags them all. bands x rows: the MinHash LSH
    banding that finds the candidate prompt pairs (each verified exactly). -#}
{% macro near_duplicate_settings(given=none, report=false) %}
    {{ return(checked_settings('near_duplicates', (var('near_duplicates', {}) if given is none else given) or {},
        {'enabled': true, 'ngram': 5, 'threshold': 0.8, 'keep': 'one', 'bands': 20, 'rows': 5}, near_duplicate_problem, report)) }}
{% endmacro %}

{#- What is wrong with the var near_duplicates (`given`; `s`: with the defaults), or ''. -#}
{% macro near_duplicate_problem(given, s) %}
    {%- if given is not mapping -%}
        {{ return('var near_duplicates is a mapping, e.g. near_duplicates: {enabled: true, ngram: 5, threshold: 0.8, keep: one, bands: 20, rows: 5}; got: ' ~ given) }}
    {%- endif -%}
    {%- if s.enabled is not boolean -%}
        {{ return('var near_duplicates: `enabled` is true or false; got: ' ~ s.enabled) }}
    {%- endif -%}
    {%- if not (s.ngram is integer and s.ngram is not boolean and s.ngram >= 1) -%}
        {{ return('var near_duplicates: `ngram` is a whole number of tokens >= 1, e.g. ngram: 5; got: ' ~ s.ngram) }}
    {%- endif -%}
    {%- if not (s.threshold is number and s.threshold is not boolean and 0 < s.threshold <= 1) -%}
        {{ return('var near_duplicates: `threshold` is the Jaccard similarity at or above which two texts are near, greater than 0 and at most 1, e.g. threshold: 0.8; got: ' ~ s.threshold) }}
    {%- endif -%}
    {%- if s.keep not in ['one', 'none'] -%}
        {{ return('var near_duplicates: `keep` is one (the first copy of a same-comparison group stays clean) or none (every copy is flagged); got: ' ~ s.keep) }}
    {%- endif -%}
    {%- for key in ['bands', 'rows'] -%}
        {%- if not (s[key] is integer and s[key] is not boolean and 1 <= s[key] <= 64) -%}
            {{ return('var near_duplicates: `' ~ key ~ '` is a whole number from 1 to 64 (the LSH banding: bands x rows MinHash values), e.g. bands: 20, rows: 5; got: ' ~ s[key]) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return('') }}
{% endmacro %}

{#- `dbt run-operation near_duplicate_settings_cases --args '{cases: [{...}, ...]}'` logs each
    value's verdict, one line each (`settings case <i>: ok` or the problem). -#}
{% macro near_duplicate_settings_cases(cases) %}
    {%- for case in cases -%}
        {%- set found = near_duplicate_settings(case, report=true) -%}
        {%- do log('settings case ' ~ loop.index0 ~ ': ' ~ (found if found is string else 'ok'), info=True) -%}
    {%- endfor -%}
{% endmacro %}

{#- The connected components of an undirected graph, as a subquery of (node, component): every
    node of `edges` (a relation of integer columns node_a, node_b) with the least node of its
    component. Labels spread one link a round, each node taking the least label among itself and
    its neighbours, for `rounds` rounds: exact for components up to `rounds` links across (the
    test near_duplicate_clusters_converged fails on a longer one). Each round reads the one
    before once, so no engine evaluates a round twice. -#}
{% macro connected_components(edges, rounds=24) -%}
(
    with

    links as (

        select node_a as node, node_b as neighbour from {{ edges }}
        union all
        select node_b as node, node_a as neighbour from {{ edges }}
        union all
        select node_a as node, node_a as neighbour from {{ edges }}
        union all
        select node_b as node, node_b as neighbour from {{ edges }}

    ),

    labels_0 as (

        select
            node,
            min(neighbour) as label
        from links
        group by node

    ),
    {%- for i in range(1, rounds + 1) %}

    labels_{{ i }} as (

        select
            links.node,
            min(labels.label) as label
        from links
        inner join labels_{{ i - 1 }} as labels
            on links.neighbour = labels.node
        group by links.node

    ){{ ',' if not loop.last }}
    {%- endfor %}

    select
        node,
        label as component
    from labels_{{ rounds }}
)
{%- endmacro %}

{#- The Jaccard of two shingle sets from their counts: shared / (a + b - shared), a double; NULL
    when `shared` is NULL (not counted) or both sets are empty. -#}
{% macro jaccard(shared, count_a, count_b) -%}
    cast({{ shared }} as double) / cast(nullif({{ count_a }} + {{ count_b }} - {{ shared }}, 0) as double)
{%- endmacro %}

{#- The bound Jaccard <= smaller / larger of two shingle counts, a double: two sets are compared
    only when it reaches the threshold (0 when either set is empty, which is never near). -#}
{% macro size_ratio(count_a, count_b) -%}
    coalesce(cast(least({{ count_a }}, {{ count_b }}) as double) / cast(nullif(greatest({{ count_a }}, {{ count_b }}), 0) as double), 0)
{%- endmacro %}
