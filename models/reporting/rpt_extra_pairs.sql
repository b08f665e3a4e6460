-- The pairs of the `extra_datasets` entries as the report's charts and numbers count them: one
-- row per pair of preference_pairs whose dataset is an entry (meta.extra_datasets), its split,
-- flags and margins (no text). Read by rpt_extra_flags and rpt_extra_margins.

with

entries as (

    select * from {{ ref('extra_datasets').include(database=False) }}

),

preference_pairs as (

    select * from {{ ref('preference_pairs').include(database=False) }}

),

final as (

    select
        preference_pairs.dataset,
        preference_pairs.pair_id,
        preference_pairs.split,
        preference_pairs.is_flagged,
        preference_pairs.integrity_flags,
        preference_pairs.score_margin,
        preference_pairs.margin
    from preference_pairs
    inner join entries
        on preference_pairs.dataset = entries.dataset

)

select * from final
