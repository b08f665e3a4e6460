-- One row per raw UltraFeedback row that yields no training pair in preference_pairs, with
-- the reason. Every such row is still in ultrafeedback_curated; this says why it can't train.
with

curated as (

    select * from {{ ref('ultrafeedback_curated') }}

),

pairs as (

    select prompt_id
    from {{ ref('preference_pairs') }}
    where dataset = 'ultrafeedback'

),

without_pair as (

    select curated.*
    from curated
    left join pairs on curated.prompt_id = pairs.prompt_id
    where pairs.prompt_id is null

),

final as (

    select
        prompt_id,
        source_file,
        source_row,
        case
            when coalesce(n_completions, 0) = 0 then 'no_completions'
            when n_completions = 1 then 'single_completion'
            when score_best_rated is null then 'no_rated_completion'
            when score_random_response_for_best_rated is null then 'alternate_unrated'
            when score_random_response_for_best_rated = score_best_rated then 'all_rated_equal'
            else 'unexplained'
        end as reason
    from without_pair

)

select * from final
