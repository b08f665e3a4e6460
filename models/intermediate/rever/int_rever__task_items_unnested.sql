-- One row per trajectory x rubric item of its task (the `rubrics` list of the user message),
-- with the item kind read from the tag that ends the criterion. Trajectories whose task has
-- no rubric list, or an empty one, produce no row here: int_rever__trajectories_scored gives
-- them their verdict_status (malformed_user_message / no_rubric_items).
with

trajectories as (

    select * from {{ ref('int_rever__trajectories_parsed') }}

),

items_unnested as (

    select
        trajectory_id,
        verdict_entries is not null as verdict_parsed,
        {{ explode_with_index('task_rubric_items', 'item_index', 'item') }}

    from trajectories

),

items_classified as (

    select
        ---------- keys
        {{ stable_hash(['trajectory_id', 'item_index']) }} as task_item_id,
        trajectory_id,
        cast(item_index as bigint) as item_index,

        ---------- attributes
        verdict_parsed,
        item.rubric_id as rubric_id,
        item.criterion as criterion,
        {{ rever_criterion_kind('item.criterion') }} as kind

    from items_unnested

),

first_of_rubric_id as (

    -- a rubric_id listed twice in one task is ambiguous: only its first item can be matched
    select
        *,
        row_number() over (
            partition by trajectory_id, rubric_id
            order by item_index
        ) = 1 as is_first_for_rubric_id

    from items_classified

)

select * from first_of_rubric_id
