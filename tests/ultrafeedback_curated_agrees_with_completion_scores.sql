-- The prompt-grain picks in ultrafeedback_curated are the completions flagged in
-- ultrafeedback_completion_scores, with the same model, score and response.
with

completions as (

    select * from {{ ref('ultrafeedback_completion_scores') }}

),

curated as (

    select * from {{ ref('ultrafeedback_curated') }}

),

flagged as (

    select
        prompt_id,
        max(case when is_best_rated then completion_index end) as best_rated_index,
        max(case when is_best_rated then model end) as best_rated_model,
        max(case when is_best_rated then average_rating end) as score_best_rated,
        max(case when is_best_rated then response end) as best_rated_response,
        max(case when is_best_overall then completion_index end) as best_overall_index,
        max(case when is_best_overall then overall_score end) as score_best_overall,
        max(case when is_best_overall then critique_sentiment end) as best_overall_critique_sentiment,
        max(case when is_random_for_best_rated then completion_index end) as random_for_best_rated_index,
        max(case when is_random_for_best_rated then average_rating end) as score_random_for_best_rated,
        max(case when is_random_for_best_overall then completion_index end) as random_for_best_overall_index,
        max(case when is_random_for_best_overall then overall_score end) as score_random_for_best_overall
    from completions
    group by prompt_id

)

select curated.prompt_id
from curated
left join flagged
    on curated.prompt_id = flagged.prompt_id
where
    curated.best_rated_index is distinct from flagged.best_rated_index
    or curated.best_rated_model is distinct from flagged.best_rated_model
    or curated.score_best_rated is distinct from flagged.score_best_rated
    or curated.best_rated_response is distinct from flagged.best_rated_response
    or curated.best_overall_index is distinct from flagged.best_overall_index
    or curated.score_best_overall is distinct from flagged.score_best_overall
    or curated.best_overall_score_response_critique_sentiment is distinct from flagged.best_overall_critique_sentiment
    or curated.random_for_best_rated_index is distinct from flagged.random_for_best_rated_index
    or curated.score_random_response_for_best_rated is distinct from flagged.score_random_for_best_rated
    or curated.random_for_best_overall_index is distinct from flagged.random_for_best_overall_index
    or curated.score_random_response_for_best_overall is distinct from flagged.score_random_for_best_overall
    or curated.best_rated_is_different_from_best_overall
    is distinct from (flagged.best_rated_index <> flagged.best_overall_index)
