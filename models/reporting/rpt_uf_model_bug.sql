-- Per model: how often an overall_score of 10 went to a completion whose average rating is 2 or
-- less (the overall_score bug), from the bug summary's per-model rows.
{{ config(enabled=dataset_enabled('ultrafeedback')) }}

with

score_bug_summary as (

    select * from {{ ref('ultrafeedback_score_bug_summary').include(database=False) }}

),

final as (

    select
        coalesce(model, '(no model)') as model,
        n_completions,
        n_overall_score_10,
        n_overall_score_10_low_rating,
        n_overall_score_10_negative_critique,
        coalesce(share_overall_score_10_low_rating, 0.0) as share_overall_score_10_low_rating
    from score_bug_summary
    where scope = 'model'

)

select * from final
