-- The report's secrets and personal data per dataset x kind: the rows of pii_summary (every
-- dataset of this build and every kind of the seed pii_patterns, zeros included) with each
-- dataset's 0-based position in dataset order (the enabled built-in groups, then the
-- extra_datasets entries: build_dataset_names, the list pii_summary is built from).
{%- set datasets = build_dataset_names() %}

with

pii_summary as (

    select * from {{ ref('pii_summary').include(database=False) }}

),

dataset_orders as (

    {%- for name in datasets %}
    select
        {{ sql_string(name) }} as dataset,
        {{ loop.index0 }} as dataset_order
    {% if not loop.last %}union all{% endif %}
    {%- endfor %}

),

final as (

    select
        pii_summary.dataset,
        cast(dataset_orders.dataset_order as integer) as dataset_order,
        pii_summary.kind,
        pii_summary.category,
        pii_summary.n_findings,
        pii_summary.n_pairs,
        pii_summary.n_pairs_flagged
    from pii_summary
    inner join dataset_orders
        on pii_summary.dataset = dataset_orders.dataset

)

select * from final
