-- Nothing lost between the parsed trajectories and rever_verdicts: every task item has
-- exactly one row, and every verdict entry is either matched (one row) or a later duplicate
-- of a rubric_id (counted on the matched row's item_status). Returns one row per mismatch.
with

task_items as (

    select
        trajectory_id,
        {{ list_size('task_rubric_items') }} as n_items,
        {{ list_size('verdict_entries') }} as n_entries
    from {{ ref('int_rever__trajectories_parsed') }}

),

verdict_rows as (

    select
        trajectory_id,
        count(item_index) as n_item_rows,
        count(distinct item_index) as n_distinct_items,
        count(entry_index) as n_entry_rows
    from {{ ref('rever_verdicts') }}
    group by trajectory_id

),

later_duplicates as (

    select trajectory_id, count(*) as n_later
    from {{ ref('int_rever__verdict_entries_unnested') }}
    where not is_first_for_rubric_id
    group by trajectory_id

)

select
    task_items.trajectory_id,
    task_items.n_items,
    task_items.n_entries,
    verdict_rows.n_item_rows,
    verdict_rows.n_entry_rows,
    later_duplicates.n_later
from task_items
left join verdict_rows
    on task_items.trajectory_id = verdict_rows.trajectory_id
left join later_duplicates
    on task_items.trajectory_id = later_duplicates.trajectory_id
where coalesce(task_items.n_items, 0) != coalesce(verdict_rows.n_item_rows, 0)
    or coalesce(task_items.n_items, 0) != coalesce(verdict_rows.n_distinct_items, 0)
    or coalesce(task_items.n_entries, 0)
        != coalesce(verdict_rows.n_entry_rows, 0) + coalesce(later_duplicates.n_later, 0)
