-- One row per trajectory x rubric item of its task, with the judge's score for the item from
-- the verdict (the last <judge> block), matched by rubric_id; plus one row per verdict entry
-- whose rubric_id matches no item of the task (item_status unknown_rubric_id), so no entry is
-- lost: the rows of int_rever__verdict_items_checked, keyed, with the trajectory's pair id and
-- candidate.
with

items as (

    select * from {{ ref('int_rever__verdict_items_checked') }}

),

trajectories as (

    select trajectory_id, id, candidate from {{ ref('int_rever__trajectories_parsed') }}

),

final as (

    select
        ---------- keys
        {{ stable_hash(['items.trajectory_id', 'items.item_index', 'items.entry_index']) }} as verdict_id,
        items.trajectory_id,
        trajectories.id,
        trajectories.candidate,
        items.item_index,
        items.entry_index,
        items.rubric_id,

        ---------- rubric item
        items.kind,
        items.criterion,

        ---------- verdict
        items.score,
        items.explanation,
        items.item_status,
        items.is_valid

    from items
    inner join trajectories
        on items.trajectory_id = trajectories.trajectory_id

)

select * from final
