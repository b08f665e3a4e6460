-- One row per raw ReVeR-Traces-Rubric row that yields no rubric item, with the reason: no id,
-- or no numbered list at the end of the assistant message.
with

rubrics as (

    select * from {{ ref('int_rever__rubrics_parsed') }}

),

reasons as (

    select
        rubric_row_id,
        id,
        source_file,
        source_row,
        case
            when coalesce(n_items, 0) = 0 and id is null then 'null_id'
            when coalesce(n_items, 0) = 0 then 'no_rubric_items'
        end as reason
    from rubrics

),

final as (

    select * from reasons
    where reason is not null

)

select * from final
