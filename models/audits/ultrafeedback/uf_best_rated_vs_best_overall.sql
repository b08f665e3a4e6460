-- Prompts where the best-rated and the best-overall picks disagree: both responses and their
-- critiques side by side, with the scores that ranked them, largest rating gap first.
-- Run:  dbt show -s uf_best_rated_vs_best_overall --limit 20
--   or  dbt compile -s uf_best_rated_vs_best_overall and query the compiled SQL.
with

curated as (

    select * from {{ ref('ultrafeedback_curated').include(database=False) }}

),

completions as (

    select * from {{ ref('ultrafeedback_completion_scores').include(database=False) }}

),

disagreements as (

    select
        prompt_id,
        source,
        instruction,
        best_rated_index,
        best_overall_index
    from curated
    where best_rated_is_different_from_best_overall

),

side_by_side as (

    select
        disagreements.prompt_id,
        disagreements.source,
        disagreements.instruction,
        best_rated.model as best_rated_model,
        best_rated.average_rating as best_rated_average_rating,
        best_rated.overall_score as best_rated_overall_score,
        best_rated.critique_sentiment as best_rated_critique_sentiment,
        best_overall.model as best_overall_model,
        best_overall.average_rating as best_overall_average_rating,
        best_overall.overall_score as best_overall_overall_score,
        best_overall.critique_sentiment as best_overall_critique_sentiment,
        best_rated.average_rating - best_overall.average_rating as average_rating_gap,
        best_rated.response as best_rated_response,
        best_rated.critique as best_rated_critique,
        best_overall.response as best_overall_response,
        best_overall.critique as best_overall_critique
    from disagreements
    inner join completions as best_rated
        on disagreements.prompt_id = best_rated.prompt_id
        and disagreements.best_rated_index = best_rated.completion_index
    inner join completions as best_overall
        on disagreements.prompt_id = best_overall.prompt_id
        and disagreements.best_overall_index = best_overall.completion_index

)

select * from side_by_side
order by average_rating_gap desc nulls last, prompt_id asc
