-- The report's headline numbers for ReVeR: rever_summary's total row, and the number of
-- integrity breaks. One row.
{{ config(enabled=dataset_enabled('rever')) }}

with

rever_summary as (

    select * from {{ ref('rever_summary').include(database=False) }}

),

rever_integrity as (

    select * from {{ ref('rever_integrity').include(database=False) }}

),

totals as (

    select
        n_pairs,
        n_pairs_kept,
        n_pairs - n_pairs_scored as n_pairs_unscored,
        tool_call_rate,
        mean_score_margin
    from rever_summary
    where scope = 'total'

),

integrity_breaks as (

    select count(*) as n_integrity_breaks
    from rever_integrity

),

final as (

    select
        totals.n_pairs,
        totals.n_pairs_kept,
        totals.n_pairs_unscored,
        totals.tool_call_rate,
        totals.mean_score_margin,
        integrity_breaks.n_integrity_breaks
    from totals
    cross join integrity_breaks

)

select * from final
