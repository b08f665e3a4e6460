-- One row per raw CodeUltraFeedback row that yields no corrected pair, with the reason.
with

prompts as (

    select * from {{ ref('code_ultrafeedback_prompts') }}

),

responses as (

    select * from {{ ref('code_ultrafeedback_responses') }}

),

pairs as (

    select distinct prompt_id
    from {{ ref('preference_pairs') }}
    where dataset = 'code_ultrafeedback'

),

rated as (

    select
        prompt_id,
        count(rating) as n_rated_responses,
        count(distinct rating) as n_distinct_ratings
    from responses
    group by prompt_id

),

without_pair as (

    select
        prompts.prompt_id,
        prompts.source_file,
        prompts.source_row,
        prompts.n_responses,
        prompts.n_annotations,
        coalesce(rated.n_rated_responses, 0) as n_rated_responses,
        coalesce(rated.n_distinct_ratings, 0) as n_distinct_ratings
    from prompts
    left join rated on prompts.prompt_id = rated.prompt_id
    left join pairs on prompts.prompt_id = pairs.prompt_id
    where pairs.prompt_id is null

),

final as (

    select
        prompt_id,
        source_file,
        source_row,
        case
            when coalesce(n_responses, 0) = 0 then 'no_responses'
            when coalesce(n_annotations, 0) = 0 then 'empty_annotations'
            when n_rated_responses < 2 then 'fewer_than_two_rated_responses'
            when n_distinct_ratings = 1 then 'all_ratings_equal'
            else 'unexplained'
        end as reason
    from without_pair

)

select * from final
