-- The report's headline numbers for ReVeR: rever_summary's per-source rows added up, and the
-- number of integrity breaks. One row.
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
        sum(n_pairs) as n_pairs,
        sum(n_pairs_kept) as n_pairs_kept,
        sum(n_pairs) - sum(n_pairs_scored) as n_pairs_unscored,
        sum(n_trajectories_with_tool) / nullif(cast(sum(n_trajectories) as double), 0) as tool_call_rate,
        {{ exact_sum('mean_score_margin * n_pairs_scored') }}
        / nullif(cast(sum(n_pairs_scored) as double), 0) as mean_margin
    from rever_summary

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
        totals.mean_margin,
        integrity_breaks.n_integrity_breaks
    from totals
    cross join integrity_breaks

)

select * from final
