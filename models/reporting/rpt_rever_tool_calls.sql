-- ReVeR: tool-call rate of the judge trajectories and pair figures, per source (rever_summary's
-- per-source rows).
{{ config(enabled=dataset_enabled('rever')) }}

with

rever_summary as (

    select * from {{ ref('rever_summary').include(database=False) }}

),

final as (

    select
        source,
        n_trajectories,
        n_trajectories_with_tool,
        tool_call_rate,
        n_pairs,
        mean_score_margin,
        share_decided_by_principles
    from rever_summary
    where scope = 'source'

)

select * from final
