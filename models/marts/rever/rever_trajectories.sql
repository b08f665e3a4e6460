-- One row per raw judge row (trajectory of ReVeR-Traces-Judge): its task, whether it used
-- the tool, the outcome of parsing its verdict (verdict_status) and, when the verdict is
-- sound, the response score (int_rever__trajectories_scored).
with

trajectories as (

    select * from {{ ref('int_rever__trajectories_parsed') }}

),

scores as (

    select * from {{ ref('int_rever__trajectories_scored') }}

),

final as (

    select
        ---------- keys
        trajectories.trajectory_id,
        trajectories.source_file,
        trajectories.source_row,
        trajectories.id,
        trajectories.candidate,

        ---------- attributes
        trajectories.source,
        trajectories.instruction,
        trajectories.response,
        trajectories.n_messages,
        trajectories.used_tool,
        trajectories.n_judge_blocks,
        trajectories.verdict_shape,

        ---------- rubric
        scores.n_rubric_items,
        scores.n_hard_rules,
        scores.n_principles,
        scores.rubric_found,
        scores.criteria_match_rubric,

        ---------- scores
        scores.verdict_status,
        scores.hard_rules_satisfied,
        scores.principle_mean,
        scores.response_score,
        scores.is_pair_member

    from trajectories
    inner join scores
        on trajectories.trajectory_id = scores.trajectory_id

)

select * from final
