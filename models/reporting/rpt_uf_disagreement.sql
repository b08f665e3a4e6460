-- Best-rated vs best-overall disagreement by source, and over all sources (the bug summary's
-- total row, shown as dimension = 'all').
{{ config(enabled=dataset_enabled('ultrafeedback')) }}

with

score_bug_summary as (

    select * from {{ ref('ultrafeedback_score_bug_summary').include(database=False) }}

),

final as (

    select
        coalesce(source, '(no source)') as source,
        case when scope = 'total' then 'all' else scope end as dimension,
        n_best_overall_picks,
        n_best_rated_is_different,
        share_best_rated_is_different,
        mean_average_rating_gap,
        mean_overall_score_gap
    from score_bug_summary
    where scope in ('source', 'total')

)

select * from final
