-- Prompts the stale variable dropped entirely (their `rating` was 'N/A' at the test) although
-- they have valid, different ratings: the corrected pairs the published data lost.
--   dbt show -s cuf_prompts_dropped_with_valid_ratings --limit 50
with

prompts as (

    select * from {{ ref('code_ultrafeedback_prompts').include(database=False) }}
    where script_outcome = 'dropped_by_na_rating'

),

responses as (

    select
        prompt_id,
        count(*) as n_responses_with_valid_rating
    from {{ ref('code_ultrafeedback_responses').include(database=False) }}
    where rating is not null
    group by prompt_id

),

listed as (

    select
        prompts.source_file,
        prompts.source_row,
        prompts.preference,
        prompts.n_responses,
        prompts.n_annotations,
        prompts.own_last_rating,
        prompts.is_script_rating_stale,
        coalesce(responses.n_responses_with_valid_rating, 0) as n_responses_with_valid_rating,
        prompts.n_corrected_pairs as n_corrected_pairs_lost
    from prompts
    left join responses
        on prompts.prompt_id = responses.prompt_id
    where prompts.n_corrected_pairs > 0

)

select * from listed
order by n_corrected_pairs_lost desc, source_file asc, source_row asc
