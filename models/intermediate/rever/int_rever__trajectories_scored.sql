-- One row per trajectory (raw judge row): the outcome of parsing its verdict (verdict_status)
-- and, when the verdict is sound, the response score: hard_rules_satisfied + principle_mean / 101
-- (0 for the principle part when the rubric has no Principle); whether its task's criteria are
-- those of the id's rubric, and whether it stands for its (id, candidate) in the pair.
-- rever_trajectories publishes these columns beside the parsed ones, int_rever__pairs compares
-- the two sides of each pair with them.
with

trajectories as (

    select
        trajectory_id,
        id,
        task_is_json,
        task_has_rubric_list,
        task_rubric_items,
        n_judge_blocks,
        verdict_is_json,
        verdict_shape

    from {{ ref('int_rever__trajectories_parsed') }}

),

-- the keys of pair membership, read on their own: a CTE read twice is materialized by DuckDB,
-- so the window reading `trajectories` too would copy the task rubric lists (about a third of
-- this model's time at scale 1.0)
trajectory_keys as (

    select
        trajectory_id,
        id,
        candidate,
        source_file,
        source_row

    from {{ ref('int_rever__trajectories_parsed') }}

),

verdict_items as (

    select * from {{ ref('int_rever__verdict_items_checked') }}

),

rubrics as (

    select * from {{ ref('int_rever__rubrics_parsed') }}

),

item_summary as (

    select
        trajectory_id,
        count(item_index) as n_rubric_items,
        count(case when item_index is not null and kind = 'hard_rule' then 1 end) as n_hard_rules,
        count(case when item_index is not null and kind = 'principle' then 1 end) as n_principles,
        count(case when item_status = 'unknown_rubric_id' then 1 end) as n_unknown_rubric_ids,
        count(case when item_status = 'duplicate_rubric_id' then 1 end) as n_duplicate_rubric_ids,
        count(case when item_status = 'missing_item' then 1 end) as n_missing_items,
        count(case when item_status = 'unknown_kind' then 1 end) as n_unknown_kind,
        count(case when item_status = 'invalid_score' then 1 end) as n_invalid_scores,
        count(case when item_status = 'score_out_of_range' then 1 end) as n_scores_out_of_range,
        count(case when kind = 'hard_rule' and is_valid and score = 1 then 1 end) as n_hard_rules_scored_1,
        {{ exact_mean("case when kind = 'principle' and is_valid then score end") }} as valid_principle_mean

    from verdict_items
    group by trajectory_id

),

rubric_criteria as (

    select id, criteria from rubrics where is_primary

),

pair_members as (

    -- duplicated rows of one (id, candidate): the first (file, row number) stands for the pair
    select
        trajectory_id,
        row_number() over (
            partition by id, candidate
            order by source_file, source_row
        ) = 1 as is_pair_member

    from trajectory_keys

),

joined as (

    select
        trajectories.*,
        coalesce(item_summary.n_rubric_items, 0) as n_rubric_items,
        coalesce(item_summary.n_hard_rules, 0) as n_hard_rules,
        coalesce(item_summary.n_principles, 0) as n_principles,
        coalesce(item_summary.n_unknown_kind, 0) as n_unknown_kind,
        item_summary.n_unknown_rubric_ids,
        item_summary.n_duplicate_rubric_ids,
        item_summary.n_missing_items,
        item_summary.n_invalid_scores,
        item_summary.n_scores_out_of_range,
        item_summary.n_hard_rules_scored_1,
        item_summary.valid_principle_mean,
        rubric_criteria.id is not null as rubric_found,
        {{ list_transform('trajectories.task_rubric_items', 'r', 'r.criterion') }} = rubric_criteria.criteria as criteria_match_rubric,
        pair_members.is_pair_member

    from trajectories
    left join item_summary
        on trajectories.trajectory_id = item_summary.trajectory_id
    left join rubric_criteria
        on trajectories.id = rubric_criteria.id
    inner join pair_members
        on trajectories.trajectory_id = pair_members.trajectory_id

),

status_assigned as (

    -- the first failing check wins, in this order
    select
        *,
        case
            when not task_is_json or not task_has_rubric_list then 'malformed_user_message'
            when n_rubric_items = 0 then 'no_rubric_items'
            when n_judge_blocks = 0 then 'no_judge_block'
            when not verdict_is_json then 'malformed_json'
            when verdict_shape = 'unrecognised' then 'unrecognised_shape'
            when n_unknown_rubric_ids > 0 then 'unknown_rubric_id'
            when n_duplicate_rubric_ids > 0 then 'duplicate_rubric_id'
            when n_missing_items > 0 then 'missing_items'
            when n_unknown_kind > 0 then 'unknown_rubric_kind'
            when n_invalid_scores > 0 then 'invalid_score'
            when n_scores_out_of_range > 0 then 'score_out_of_range'
            else 'ok'
        end as verdict_status

    from joined

),

scored as (

    select
        *,
        case when verdict_status = 'ok' then n_hard_rules_scored_1 end as hard_rules_satisfied,
        case when verdict_status = 'ok' then valid_principle_mean end as principle_mean

    from status_assigned

),

final as (

    select
        ---------- keys
        trajectory_id,

        ---------- rubric
        n_rubric_items,
        n_hard_rules,
        n_principles,
        rubric_found,
        coalesce(criteria_match_rubric, false) as criteria_match_rubric,

        ---------- scores
        verdict_status,
        hard_rules_satisfied,
        principle_mean,
        hard_rules_satisfied + coalesce(principle_mean / 101.0, 0) as response_score,
        is_pair_member

    from scored

)

select * from final
