-- One row per trajectory x rubric item of its task, with the judge's score for the item from
-- the verdict (the last <judge> block), matched by rubric_id; plus one row per verdict entry
-- whose rubric_id matches no item of the task (item_status unknown_rubric_id), so no entry is
-- lost. Only the first entry of a rubric_id is matched; later ones make the item ambiguous.
-- The item status rule: rever_verdicts publishes the rows, int_rever__trajectories_scored
-- counts them per trajectory. A view: each reader reads the columns it needs. Its refs name no
-- database, so the view keeps working in a copied or renamed warehouse file.
with

task_items as (

    select * from {{ ref('int_rever__task_items_unnested').include(database=False) }}

),

verdict_entries as (

    select * from {{ ref('int_rever__verdict_entries_unnested').include(database=False) }}

),

first_entries as (

    select * from verdict_entries where is_first_for_rubric_id

),

items_matched as (

    select
        coalesce(task_items.trajectory_id, first_entries.trajectory_id) as trajectory_id,
        task_items.item_index,
        first_entries.entry_index,
        coalesce(task_items.rubric_id, first_entries.rubric_id) as rubric_id,
        task_items.criterion,
        task_items.kind,
        task_items.verdict_parsed,
        task_items.is_first_for_rubric_id as is_first_item_for_rubric_id,
        first_entries.n_entries_for_rubric_id,
        first_entries.score,
        first_entries.explanation

    from task_items
    full outer join first_entries
        on task_items.trajectory_id = first_entries.trajectory_id
        and task_items.rubric_id = first_entries.rubric_id
        and task_items.is_first_for_rubric_id

),

items_checked as (

    select
        *,
        case
            when item_index is null then 'unknown_rubric_id'
            when not verdict_parsed then 'no_verdict'
            when not is_first_item_for_rubric_id or n_entries_for_rubric_id > 1 then 'duplicate_rubric_id'
            when entry_index is null then 'missing_item'
            when kind = 'unknown' then 'unknown_kind'
            when score is null then 'invalid_score'
            when kind = 'hard_rule' and score not in (0, 1) then 'score_out_of_range'
            when kind = 'principle' and (score < 0 or score > 100 or score != floor(score)) then 'score_out_of_range'
            else 'ok'
        end as item_status

    from items_matched

),

final as (

    select
        ---------- keys
        trajectory_id,
        item_index,
        entry_index,
        rubric_id,

        ---------- rubric item
        kind,
        criterion,

        ---------- verdict
        score,
        explanation,
        item_status,
        item_status = 'ok' as is_valid

    from items_checked

)

select * from final
