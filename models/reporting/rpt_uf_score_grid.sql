-- The UltraFeedback score grid: completions per model x overall_score x average_rating bin
-- (0.5 wide; 5.0 falls in [4.5, 5]), drawn as one heatmap per model.
{{ config(enabled=dataset_enabled('ultrafeedback')) }}

with

completion_scores as (

    select * from {{ ref('ultrafeedback_completion_scores').include(database=False) }}

),

completions as (

    select
        coalesce(model, '(no model)') as model,
        overall_score,
        least(floor(average_rating * 2) / 2, 4.5) as rating_bin_start
    from completion_scores
    where overall_score is not null and average_rating is not null

),

grid as (

    select
        model,
        overall_score,
        rating_bin_start,
        count(*) as n_completions
    from completions
    group by model, overall_score, rating_bin_start

),

final as (

    select
        model,
        cast(overall_score as double) as overall_score,
        cast(rating_bin_start as double) as rating_bin_start,
        cast(rating_bin_start + 0.5 as double) as rating_bin_end,
        cast(overall_score - 0.25 as double) as score_bin_start,
        cast(overall_score + 0.25 as double) as score_bin_end,
        n_completions
    from grid

)

select * from final
