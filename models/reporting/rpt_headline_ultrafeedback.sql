-- The report's headline numbers for UltraFeedback: the bug summary's total row and the raw
-- row counts. One row.
{{ config(enabled=dataset_enabled('ultrafeedback')) }}

with

curated as (

    select * from {{ ref('ultrafeedback_curated').include(database=False) }}

),

score_bug_summary as (

    select * from {{ ref('ultrafeedback_score_bug_summary').include(database=False) }}

),

prompt_counts as (

    select
        count(*) as n_prompts,
        count(case when has_no_completions then 1 end) as n_no_completions
    from curated

),

all_sources as (

    select
        n_completions,
        n_best_rated_is_different,
        share_best_rated_is_different,
        n_overall_score_10,
        n_overall_score_10_low_rating
    from score_bug_summary
    where scope = 'total'

),

final as (

    select
        prompt_counts.n_prompts,
        prompt_counts.n_no_completions,
        all_sources.n_completions,
        all_sources.n_best_rated_is_different,
        all_sources.share_best_rated_is_different,
        all_sources.n_overall_score_10,
        all_sources.n_overall_score_10_low_rating
    from all_sources
    cross join prompt_counts

)

select * from final
