-- Audit: pairs that break the upstream retention rule (the chosen response must score
-- strictly higher), and pairs that cannot be checked because a side has no score.
-- dbt show -s rever_pairs_breaking_retention_rule --limit 50
with

pairs as (

    select * from {{ ref('rever_pairs').include(database=False) }}

),

trajectories as (

    select * from {{ ref('rever_trajectories').include(database=False) }}

),

not_kept_or_unscored as (

    select
        pairs.id,
        pairs.source,
        pairs.decided_by,
        pairs.kept,
        pairs.chosen_verdict_status,
        pairs.rejected_verdict_status,
        chosen.hard_rules_satisfied as chosen_hard_rules,
        rejected.hard_rules_satisfied as rejected_hard_rules,
        chosen.principle_mean as chosen_principle_mean,
        rejected.principle_mean as rejected_principle_mean,
        pairs.chosen_score,
        pairs.rejected_score,
        pairs.score_margin,
        pairs.n_trajectories,
        pairs.rubric_found

    from pairs
    left join trajectories as chosen
        on pairs.chosen_trajectory_id = chosen.trajectory_id
    left join trajectories as rejected
        on pairs.rejected_trajectory_id = rejected.trajectory_id
    where pairs.kept is distinct from true

)

select *
from not_kept_or_unscored
order by kept nulls last, score_margin, id
