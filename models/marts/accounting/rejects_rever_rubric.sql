-- One row per raw ReVeR-Traces-Rubric row with no parsed rubric item in rever_rubric_items.
with

rubrics as (

    select * from {{ ref('stg_rever__rubrics') }}

),

items as (

    select distinct rubric_row_id from {{ ref('rever_rubric_items') }}

),

final as (

    select
        rubrics.rubric_row_id,
        rubrics.id,
        rubrics.source_file,
        rubrics.source_row,
        case
            when rubrics.id is null then 'null_id'
            else 'no_rubric_items'
        end as reason
    from rubrics
    left join items on rubrics.rubric_row_id = items.rubric_row_id
    where items.rubric_row_id is null

)

select * from final
