-- One row per dataset of this build and kind of the scan for secrets and personal data (the seed
-- pii_patterns), zeros included: the findings (matches), the pairs holding one, and of those the
-- pairs flagged for it in preference_pairs (contains_secret for a secret; contains_personal_data
-- for personal data, only with the var pii_flag_personal true).
{%- set datasets = build_dataset_names() %}

with

datasets as (

    {% for name in datasets %}
    select '{{ name }}' as dataset, {{ loop.index0 }} as dataset_order
    {% if not loop.last %}union all{% endif %}
    {% endfor %}

),

kinds as (

    select
        kind,
        category,
        case category when 'secret' then 'contains_secret' else 'contains_personal_data' end as flag
    from {{ ref('pii_patterns') }}

),

findings as (

    select * from {{ ref('pii_findings') }}

),

pair_flags as (

    select
        pair_id,
        integrity_flags
    from {{ ref('preference_pairs') }}

),

pairs_by_kind as (

    select
        findings.dataset,
        findings.kind,
        findings.pair_id,
        cast(sum(findings.n_occurrences) as bigint) as n_findings,
        max(case when {{ list_has('pair_flags.integrity_flags', 'kinds.flag') }} then 1 else 0 end) as is_flagged
    from findings
    inner join kinds
        on findings.kind = kinds.kind
    inner join pair_flags
        on findings.pair_id = pair_flags.pair_id
    group by findings.dataset, findings.kind, findings.pair_id

),

counted as (

    select
        dataset,
        kind,
        cast(sum(n_findings) as bigint) as n_findings,
        count(*) as n_pairs,
        cast(sum(is_flagged) as bigint) as n_pairs_flagged
    from pairs_by_kind
    group by dataset, kind

),

final as (

    select
        datasets.dataset,
        kinds.kind,
        kinds.category,
        coalesce(counted.n_findings, 0) as n_findings,
        coalesce(counted.n_pairs, 0) as n_pairs,
        coalesce(counted.n_pairs_flagged, 0) as n_pairs_flagged
    from datasets
    cross join kinds
    left join counted
        on datasets.dataset = counted.dataset and kinds.kind = counted.kind
    order by datasets.dataset_order, kinds.kind

)

select * from final
