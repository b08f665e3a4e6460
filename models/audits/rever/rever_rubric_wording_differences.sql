-- Audit: rubric items whose wording differs between ReVeR-Traces-Rubric (the rubric) and
-- the task given to the judge (the user message of ReVeR-Traces-Judge), item by item.
-- An item present on one side only shows with NULL on the other.
-- dbt show -s rever_rubric_wording_differences --limit 50
with

trajectories as (

    select * from {{ ref('rever_trajectories').include(database=False) }}

),

task_items as (

    select * from {{ ref('rever_verdicts').include(database=False) }} where item_index is not null

),

rubric_items as (

    select * from {{ ref('rever_rubric_items').include(database=False) }} where is_primary_rubric

),

mismatched_trajectories as (

    select trajectory_id, id, candidate
    from trajectories
    where rubric_found and not criteria_match_rubric

),

task_side as (

    select task_items.trajectory_id, task_items.item_index, task_items.criterion
    from task_items
    inner join mismatched_trajectories
        on task_items.trajectory_id = mismatched_trajectories.trajectory_id

),

rubric_side as (

    select mismatched_trajectories.trajectory_id, rubric_items.item_index, rubric_items.criterion
    from rubric_items
    inner join mismatched_trajectories
        on rubric_items.id = mismatched_trajectories.id

),

compared as (

    select
        coalesce(task_side.trajectory_id, rubric_side.trajectory_id) as trajectory_id,
        coalesce(task_side.item_index, rubric_side.item_index) as item_index,
        rubric_side.criterion as rubric_criterion,
        task_side.criterion as trajectory_criterion

    from task_side
    full outer join rubric_side
        on task_side.trajectory_id = rubric_side.trajectory_id
        and task_side.item_index = rubric_side.item_index

)

select
    mismatched_trajectories.id,
    mismatched_trajectories.candidate,
    compared.item_index,
    compared.rubric_criterion,
    compared.trajectory_criterion
from compared
inner join mismatched_trajectories
    on compared.trajectory_id = mismatched_trajectories.trajectory_id
where compared.rubric_criterion is distinct from compared.trajectory_criterion
order by mismatched_trajectories.id, mismatched_trajectories.candidate, compared.item_index
