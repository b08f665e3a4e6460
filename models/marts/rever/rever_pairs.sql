-- One row per pair id, from either dataset: the pair's rubric (ReVeR-Traces-Rubric) and its
-- two trajectories (ReVeR-Traces-Judge), chosen and rejected, joined by id
-- (int_rever__pairs), with the integrity flags of a kept pair as preference_pairs computes
-- them: the filter `kept and not is_flagged` gives the `rever` split of preference_pairs.
with

pairs as (

    select * from {{ ref('int_rever__pairs') }}

),

flags as (

    select
        pair_id,
        integrity_flags,
        is_flagged
    from {{ ref('preference_pairs') }}
    where dataset = 'rever'

),

final as (

    select
        ---------- keys
        pairs.id,
        pairs.rubric_row_id,
        pairs.chosen_trajectory_id,
        pairs.rejected_trajectory_id,

        ---------- texts (kept here for training exports and cross-dataset matching)
        pairs.source,
        pairs.instruction,
        pairs.chosen_response,
        pairs.rejected_response,

        ---------- scores
        pairs.chosen_verdict_status,
        pairs.rejected_verdict_status,
        pairs.chosen_score,
        pairs.rejected_score,
        pairs.score_margin,
        pairs.margin,
        pairs.decided_by,
        pairs.kept,

        ---------- tool use
        pairs.chosen_used_tool,
        pairs.rejected_used_tool,

        ---------- integrity
        pairs.rubric_found,
        pairs.rubric_matches_chosen,
        pairs.rubric_matches_rejected,
        pairs.n_trajectories,
        pairs.n_chosen,
        pairs.n_rejected,
        flags.integrity_flags,
        flags.is_flagged
    from pairs
    left join flags
        on {{ preference_pair_id('rever', 'pairs.id') }} = flags.pair_id

)

select * from final
