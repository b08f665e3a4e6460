-- The completions the score grid leaves out (no overall_score or no average rating), for the
-- note under it. One row.
{{ config(enabled=dataset_enabled('ultrafeedback')) }}

with

completion_scores as (

    select * from {{ ref('ultrafeedback_completion_scores').include(database=False) }}

),

final as (

    select
        count(*) as n_completions,
        count(case when overall_score is null or average_rating is null then 1 end) as n_unplotted
    from completion_scores

)

select * from final
