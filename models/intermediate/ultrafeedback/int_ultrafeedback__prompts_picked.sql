-- One row per raw row (every raw row, also those with an empty or NULL completions list):
-- the list positions, models and scores of the four picks, side by side, and the row's
-- preference pair (the best rated vs its random alternate): whether there is one, why not, and
-- the invalid ratings on its two sides. Narrow on purpose (no long texts): the marts fetch texts
-- by (prompt_id, completion_index).
with

prompts as (

    select
        prompt_id,
        source_file,
        source_row,
        source,
        n_completions
    from {{ ref('stg_ultrafeedback__prompts') }}

),

ranked as (

    select * from {{ ref('int_ultrafeedback__completions_ranked') }}

),

picks as (

    select
        prompt_id,
        {%- for pick, score in [('best_rated', 'average_rating'), ('best_overall', 'overall_score')] %}
        max(case when is_{{ pick }} then completion_index end) as {{ pick }}_index,
        max(case when is_{{ pick }} then model end) as {{ pick }}_model,
        max(case when is_{{ pick }} then {{ score }} end) as score_{{ pick }},
        max(case when is_random_for_{{ pick }} then completion_index end) as random_for_{{ pick }}_index,
        max(case when is_random_for_{{ pick }} then model end) as random_response_for_{{ pick }}_model,
        max(case when is_random_for_{{ pick }} then {{ score }} end) as score_random_response_for_{{ pick }},
        {%- endfor %}
        max(case when has_invalid_rating then 1 else 0 end) = 1 as has_invalid_rating,
        max(case when is_best_rated and has_invalid_rating then 1 else 0 end) = 1 as best_rated_has_invalid_rating,
        max(case when is_random_for_best_rated and has_invalid_rating then 1 else 0 end) = 1
            as random_for_best_rated_has_invalid_rating
    from ranked
    group by prompt_id

),

joined as (

    select
        ---------- keys
        prompts.prompt_id,
        prompts.source_file,
        prompts.source_row,

        ---------- prompt
        prompts.source,
        prompts.n_completions,
        coalesce(prompts.n_completions, 0) = 0 as has_no_completions,
        coalesce(picks.has_invalid_rating, false) as has_invalid_rating,

        ---------- picks
        picks.best_rated_index,
        picks.best_rated_model,
        picks.score_best_rated,
        picks.best_overall_index,
        picks.best_overall_model,
        picks.score_best_overall,
        picks.best_rated_index <> picks.best_overall_index as best_rated_is_different_from_best_overall,
        picks.random_for_best_rated_index,
        picks.random_response_for_best_rated_model,
        picks.score_random_response_for_best_rated,
        picks.random_for_best_overall_index,
        picks.random_response_for_best_overall_model,
        picks.score_random_response_for_best_overall,

        ---------- the pair: best rated vs its random alternate, when the alternate scores
        ---------- strictly lower; else why not, by the first rule that applies (two rules,
        ---------- independent of each other: row_accounting's balance fails on a row both or
        ---------- neither of them claim)
        coalesce(picks.score_best_rated > picks.score_random_response_for_best_rated, false) as has_pair,
        case
            when coalesce(prompts.n_completions, 0) = 0 then 'no_completions'
            when prompts.n_completions = 1 then 'single_completion'
            when picks.score_best_rated is null then 'no_rated_completion'
            when picks.score_random_response_for_best_rated is null then 'alternate_unrated'
            when picks.score_random_response_for_best_rated = picks.score_best_rated then 'all_rated_equal'
        end as no_pair_reason,
        {{ flag_list([
            ('picks.best_rated_has_invalid_rating', 'invalid_rating_chosen'),
            ('picks.random_for_best_rated_has_invalid_rating', 'invalid_rating_rejected'),
        ]) }} as dataset_flags
    from prompts
    left join picks on prompts.prompt_id = picks.prompt_id

)

select * from joined
