-- Every raw row with completions has exactly one best-rated and one best-overall completion,
-- and exactly one random alternate of each when it has two or more completions (none
-- otherwise); raw rows without completions have none (they have no completion row at all).
with

completions as (

    select * from {{ ref('ultrafeedback_completion_scores') }}

),

curated as (

    select * from {{ ref('ultrafeedback_curated') }}

),

per_prompt as (

    select
        prompt_id,
        count(*) as n_rows,
        sum(case when is_best_rated then 1 else 0 end) as n_best_rated,
        sum(case when is_best_overall then 1 else 0 end) as n_best_overall,
        sum(case when is_random_for_best_rated then 1 else 0 end) as n_random_for_best_rated,
        sum(case when is_random_for_best_overall then 1 else 0 end) as n_random_for_best_overall
    from completions
    group by prompt_id

),

checked as (

    select
        curated.prompt_id,
        curated.n_completions,
        per_prompt.n_rows,
        per_prompt.n_best_rated,
        per_prompt.n_best_overall,
        per_prompt.n_random_for_best_rated,
        per_prompt.n_random_for_best_overall
    from curated
    left join per_prompt
        on curated.prompt_id = per_prompt.prompt_id

)

select *
from checked
where
    coalesce(n_rows, 0) <> coalesce(n_completions, 0)
    or (coalesce(n_completions, 0) > 0 and (n_best_rated <> 1 or n_best_overall <> 1))
    or (coalesce(n_completions, 0) >= 2 and (n_random_for_best_rated <> 1 or n_random_for_best_overall <> 1))
    or (coalesce(n_completions, 0) = 1 and (n_random_for_best_rated <> 0 or n_random_for_best_overall <> 0))
