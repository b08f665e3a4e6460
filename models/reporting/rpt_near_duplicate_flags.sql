-- The report's near-duplicate flags per dataset: of each dataset's pairs in preference_pairs, how
-- many each near-duplicate check flags (near_duplicate_pair, label_conflict,
-- near_identical_responses; a pair can have several), how many any of the three flags, and how
-- many no other check flags: the pairs these checks alone take out of the training split.
{%- set checks = ['near_duplicate_pair', 'label_conflict', 'near_identical_responses'] %}
{%- set quoted = [] %}
{%- for check in checks %}{%- do quoted.append("'" ~ check ~ "'") %}{%- endfor %}

with

preference_pairs as (

    select * from {{ ref('preference_pairs').include(database=False) }}

),

pair_checks as (

    select
        dataset,
        {%- for check in checks %}
        {{ list_has('integrity_flags', "'" ~ check ~ "'") }} as is_{{ check }},
        {%- endfor %}
        {{ list_size(list_filter('integrity_flags', 'f', 'f in (' ~ quoted | join(', ') ~ ')')) }} as n_near_duplicate_checks,
        {{ list_size('integrity_flags') }} as n_checks
    from preference_pairs

),

final as (

    select
        dataset,
        count(*) as n_pairs,
        {%- for check in checks %}
        cast(sum(case when is_{{ check }} then 1 else 0 end) as bigint) as n_{{ check }},
        {%- endfor %}
        cast(sum(case when n_near_duplicate_checks > 0 then 1 else 0 end) as bigint) as n_flagged,
        cast(sum(case when n_near_duplicate_checks > 0 and n_near_duplicate_checks = n_checks then 1 else 0 end) as bigint)
            as n_flagged_by_no_other_check
    from pair_checks
    group by dataset

)

select * from final
