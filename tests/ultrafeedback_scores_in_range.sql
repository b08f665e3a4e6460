-- Parsed ratings are 1..5, the recomputed average_rating lies between the row's smallest and
-- largest parsed rating (so in 1..5) and is NULL exactly when all four are NULL; the critique
-- sentiment is in [-1, 1].
with

completions as (

    select * from {{ ref('ultrafeedback_completion_scores') }}

),

bounds as (

    select
        *,
        least(
            coalesce(helpfulness_rating, 9), coalesce(honesty_rating, 9),
            coalesce(instruction_following_rating, 9), coalesce(truthfulness_rating, 9)
        ) as min_rating,
        greatest(
            coalesce(helpfulness_rating, 0), coalesce(honesty_rating, 0),
            coalesce(instruction_following_rating, 0), coalesce(truthfulness_rating, 0)
        ) as max_rating
    from completions

)

select prompt_id, completion_index
from bounds
where
    (average_rating is null) <> (max_rating = 0)
    or average_rating < min_rating
    or average_rating > max_rating
    or min_rating < 1
    or (max_rating > 5)
    or critique_sentiment < -1
    or critique_sentiment > 1
