{#- The summary marts' total-row convention (ultrafeedback_score_bug_summary,
    code_ultrafeedback_bug_summary, rever_summary). A summary has one row per group of each
    grouping level and one row over all rows, told apart by a `scope` column: 'total' on the row
    over all rows, else the name of the key column the row groups by. The other key columns are
    NULL on a row (all of them on the total row), so a consumer selects a level with
    `where scope = '<level>'` and never adds rows up itself.

    Every row, the total included, is aggregated from the underlying rows in one pass: a total
    mean is the mean over all rows, never a mean of the groups' means, and a total count is the
    count, not a sum of group rows.

    summary_group_by(keys): the grouping sets ((), (key1), (key2), ...). Written as
    `rollup (key)` for one key and as `cube (key1, key2, ...)` keeping the sets with at most one
    key (`having`) for several, because sqlfluff's DuckDB dialect cannot parse GROUPING SETS;
    DuckDB and Spark both run either form, with the same rows.
    summary_scope(keys): the row's scope from grouping(): 'key1' on the rows grouped by key1,
    ..., 'total' on the () row. A key may be qualified (`t.source`); the scope is its bare name.

    ROLLUP/CUBE and grouping() behave the same on DuckDB and Spark, except on an empty input:
    DuckDB returns the () row, Spark returns no row. So each summary left joins its aggregates
    onto a spine of scopes that holds the total row itself ('total' with NULL keys), with counts
    coalesced to 0: the total row exists on both engines, always. -#}
{% macro summary_group_by(keys) -%}
    {%- if keys | length == 1 -%}
    group by rollup ({{ keys[0] }})
    {%- else -%}
    group by cube ({{ keys | join(', ') }})
    having {% for key in keys %}grouping({{ key }}){{ ' + ' if not loop.last }}{% endfor %} >= {{ keys | length - 1 }}
    {%- endif %}
{%- endmacro %}

{% macro summary_scope(keys) -%}
    case{% for key in keys %} when grouping({{ key }}) = 0 then '{{ key.split(".")[-1] }}'{% endfor %} else 'total' end
{%- endmacro %}
