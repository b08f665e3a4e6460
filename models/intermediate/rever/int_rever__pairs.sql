-- One row per pair id, from either dataset: the pair's rubric (ReVeR-Traces-Rubric) and its
-- two trajectories (ReVeR-Traces-Judge), chosen and rejected, joined by id. When an id has
-- several trajectories of one candidate, the first (file, row number) is used and
-- n_trajectories tells. The sides' scores are int_rever__trajectories_scored's. Scores are
-- compared Hard Rules first, then Principles; `kept` is the upstream retention rule (chosen
-- strictly higher), NULL when a side has no score.
-- rever_pairs adds the pair's integrity flags (preference_pairs'), rever_integrity reads the
-- counts and preference_pairs the kept pairs.
{%- set scale = builtin_score_ranges()['rever'] %}

with

rubrics as (

    select * from {{ ref('int_rever__rubrics_parsed').include(database=False) }}

),

primary_rubrics as (

    select * from rubrics where is_primary and id is not null

),

-- every trajectory's pair id and candidate, for the counts
trajectory_keys as (

    select
        id,
        candidate,
        source

    from {{ ref('int_rever__trajectories_parsed').include(database=False) }}

),

trajectory_counts as (

    select
        id,
        count(*) as n_trajectories,
        count(case when candidate = 'chosen' then 1 end) as n_chosen,
        count(case when candidate = 'rejected' then 1 end) as n_rejected,
        min(source) as trajectory_source

    from trajectory_keys
    where id is not null
    group by id

),

-- the trajectory that stands for each side, with its score. Each side reads the two tables
-- itself: a CTE both sides read would be materialized by DuckDB, every text included.
{%- for side in ['chosen', 'rejected'] %}
{{ side }} as (

    select
        parsed.trajectory_id,
        parsed.id,
        parsed.instruction,
        parsed.response,
        parsed.used_tool,
        scores.verdict_status,
        scores.hard_rules_satisfied,
        scores.principle_mean,
        scores.response_score,
        scores.n_hard_rules,
        scores.n_principles,
        scores.criteria_match_rubric

    from {{ ref('int_rever__trajectories_parsed').include(database=False) }} as parsed
    inner join {{ ref('int_rever__trajectories_scored').include(database=False) }} as scores
        on parsed.trajectory_id = scores.trajectory_id
    where parsed.candidate = '{{ side }}' and scores.is_pair_member

),
{% endfor %}
pair_ids as (

    select id from primary_rubrics
    union
    select id from trajectory_counts

),

joined as (

    select
        pair_ids.id,
        coalesce(primary_rubrics.source, trajectory_counts.trajectory_source) as source,
        coalesce(chosen.instruction, rejected.instruction) as instruction,
        chosen.response as chosen_response,
        rejected.response as rejected_response,
        primary_rubrics.rubric_row_id,
        chosen.trajectory_id as chosen_trajectory_id,
        rejected.trajectory_id as rejected_trajectory_id,
        chosen.verdict_status as chosen_verdict_status,
        rejected.verdict_status as rejected_verdict_status,
        chosen.hard_rules_satisfied as chosen_hard_rules_satisfied,
        rejected.hard_rules_satisfied as rejected_hard_rules_satisfied,
        chosen.principle_mean as chosen_principle_mean,
        rejected.principle_mean as rejected_principle_mean,
        chosen.response_score as chosen_score,
        rejected.response_score as rejected_score,
        -- the highest score the pair's rubric allows (the top of its scale): every Hard Rule
        -- satisfied, Principle mean 100
        greatest(
            chosen.n_hard_rules + case when chosen.n_principles > 0 then cast(100 as double) / 101 else 0 end,
            rejected.n_hard_rules + case when rejected.n_principles > 0 then cast(100 as double) / 101 else 0 end
        ) as max_possible_score,
        chosen.used_tool as chosen_used_tool,
        rejected.used_tool as rejected_used_tool,
        primary_rubrics.id is not null as rubric_found,
        chosen.criteria_match_rubric as rubric_matches_chosen,
        rejected.criteria_match_rubric as rubric_matches_rejected,
        coalesce(trajectory_counts.n_trajectories, 0) as n_trajectories,
        coalesce(trajectory_counts.n_chosen, 0) as n_chosen,
        coalesce(trajectory_counts.n_rejected, 0) as n_rejected

    from pair_ids
    left join primary_rubrics
        on pair_ids.id = primary_rubrics.id
    left join trajectory_counts
        on pair_ids.id = trajectory_counts.id
    left join chosen
        on pair_ids.id = chosen.id
    left join rejected
        on pair_ids.id = rejected.id

),

compared as (

    -- exact comparison, Hard Rule counts first: no float rounding can turn a tie into a win
    select
        *,
        case
            when chosen_score is null or rejected_score is null then 'unscored'
            when chosen_hard_rules_satisfied != rejected_hard_rules_satisfied then 'hard_rules'
            when coalesce(chosen_principle_mean, 0) != coalesce(rejected_principle_mean, 0) then 'principles'
            else 'tie'
        end as decided_by

    from joined

),

kept_decided as (

    select
        *,
        case decided_by
            when 'hard_rules' then chosen_hard_rules_satisfied > rejected_hard_rules_satisfied
            when 'principles' then coalesce(chosen_principle_mean, 0) > coalesce(rejected_principle_mean, 0)
            when 'tie' then false
        end as kept

    from compared

),

final as (

    select
        ---------- keys
        id,
        rubric_row_id,
        chosen_trajectory_id,
        rejected_trajectory_id,

        ---------- texts (kept here for training exports and cross-dataset matching)
        source,
        instruction,
        chosen_response,
        rejected_response,

        ---------- scores
        chosen_verdict_status,
        rejected_verdict_status,
        chosen_score,
        rejected_score,
        chosen_score - rejected_score as score_margin,
        {{ margin('chosen_score - rejected_score', scale.score_min, scale.score_max) }} as margin,
        max_possible_score,
        decided_by,
        kept,

        ---------- tool use
        chosen_used_tool,
        rejected_used_tool,

        ---------- integrity
        rubric_found,
        rubric_matches_chosen,
        rubric_matches_rejected,
        n_trajectories,
        n_chosen,
        n_rejected

    from kept_decided

)

select * from final
