-- One row per raw row, with argilla's column names and the recomputed values: the best-rated
-- and best-overall picks, their random alternates, and a DPO-ready pair in TRL's explicit-prompt
-- conversational form (prompt = [user turn], chosen = [best rated], rejected = [its random
-- alternate], assistant turns only), its margin and the integrity flags of the two completions,
-- and whether the row yields a preference pair (has_pair) or why not (no_pair_reason):
-- preference_pairs takes the first, rejects_ultrafeedback the second. The training columns
-- (prompt, chosen, rejected, margin) are filled on the rows with a pair only.
-- Built after ultrafeedback_completion_scores, never beside it: the two write the UltraFeedback
-- texts, and side by side they share DuckDB's one memory_limit (1GB by default) with too little
-- to spare; a run at scale 1.0 failed out of memory that way (benchmarks/README.md).
-- depends_on: {{ ref('ultrafeedback_completion_scores') }}
{%- set has_pair = 'coalesce(picks.score_best_rated > picks.score_random_response_for_best_rated, false)' %}

with

prompts as (

    select
        prompt_id,
        instruction
    from {{ ref('stg_ultrafeedback__prompts') }}

),

picks as (

    select * from {{ ref('int_ultrafeedback__prompts_picked') }}

),

completion_texts as (

    select
        prompt_id,
        completion_index,
        response
    from {{ ref('int_ultrafeedback__completion_texts') }}

),

completions as (

    select
        parsed.prompt_id,
        parsed.completion_index,
        completion_texts.response,
        parsed.has_invalid_rating
    from {{ ref('int_ultrafeedback__completions_parsed') }} as parsed
    inner join completion_texts
        on
            parsed.prompt_id = completion_texts.prompt_id
            and parsed.completion_index = completion_texts.completion_index

),

sentiments as (

    select * from {{ ref('int_ultrafeedback__critique_sentiments') }}

),

-- the texts of the four picks, one pass over the completions
picked_texts as (

    select
        picks.prompt_id,
        max(case
            when completions.completion_index = picks.best_rated_index
                then completions.response
        end) as best_rated_response,
        max(case
            when completions.completion_index = picks.best_overall_index
                then completions.response
        end) as best_overall_score_response,
        max(case
            when completions.completion_index = picks.random_for_best_rated_index
                then completions.response
        end) as random_response_for_best_rated,
        max(case
            when completions.completion_index = picks.random_for_best_overall_index
                then completions.response
        end) as random_response_for_best_overall,
        max(case
            when completions.completion_index = picks.best_overall_index
                then sentiments.critique_sentiment
        end) as best_overall_score_response_critique_sentiment,
        bool_or(
            completions.completion_index = picks.best_rated_index and completions.has_invalid_rating
        ) as best_rated_has_invalid_rating,
        bool_or(
            completions.completion_index = picks.random_for_best_rated_index and completions.has_invalid_rating
        ) as random_for_best_rated_has_invalid_rating
    from picks
    inner join completions
        on picks.prompt_id = completions.prompt_id
    left join sentiments
        on
            completions.prompt_id = sentiments.prompt_id
            and completions.completion_index = sentiments.completion_index
    group by picks.prompt_id

),

joined as (

    select
        ---------- keys
        picks.prompt_id,
        picks.source_file,
        picks.source_row,

        ---------- prompt
        picks.source,
        prompts.instruction,
        picks.n_completions,
        picks.has_no_completions,
        picks.has_invalid_rating,

        ---------- best rated vs best overall
        picks.best_rated_model,
        picks.score_best_rated,
        picks.best_overall_model,
        picks.score_best_overall,
        picks.best_rated_is_different_from_best_overall,
        picked_texts.best_rated_response,
        picked_texts.best_overall_score_response,
        picked_texts.best_overall_score_response_critique_sentiment,

        ---------- random alternates
        picked_texts.random_response_for_best_rated,
        picks.random_response_for_best_rated_model,
        picks.score_random_response_for_best_rated,
        picked_texts.random_response_for_best_overall,
        picks.random_response_for_best_overall_model,
        picks.score_random_response_for_best_overall,

        ---------- list positions of the picks (0-based)
        picks.best_rated_index,
        picks.best_overall_index,
        picks.random_for_best_rated_index,
        picks.random_for_best_overall_index,

        ---------- DPO pair (TRL explicit-prompt conversational form; NULL without a pair)
        case
            when {{ has_pair }}
                then {{ chat_messages([('user', 'prompts.instruction')]) }}
        end as prompt,
        case
            when {{ has_pair }}
                then {{ chat_messages([('assistant', 'picked_texts.best_rated_response')]) }}
        end as chosen,
        case
            when {{ has_pair }}
                then {{ chat_messages([('assistant', 'picked_texts.random_response_for_best_rated')]) }}
        end as rejected,
        picks.score_best_rated - picks.score_random_response_for_best_rated as score_margin,
        case
            when {{ has_pair }}
                then cast(picks.score_best_rated - picks.score_random_response_for_best_rated as double) / 4
        end as margin,

        ---------- integrity of the pair: an invalid aspect rating on either side
        {{ flag_list([
            ('picked_texts.best_rated_has_invalid_rating', 'invalid_rating_chosen'),
            ('picked_texts.random_for_best_rated_has_invalid_rating', 'invalid_rating_rejected'),
        ]) }} as integrity_flags,
        coalesce(picked_texts.best_rated_has_invalid_rating, false)
            or coalesce(picked_texts.random_for_best_rated_has_invalid_rating, false) as is_flagged,

        ---------- training pair or not, and why (two rules, independent of each other: the
        ---------- balance of row_accounting fails on a row both or neither of them claim)
        {{ has_pair }} as has_pair,
        case
            when coalesce(picks.n_completions, 0) = 0 then 'no_completions'
            when picks.n_completions = 1 then 'single_completion'
            when picks.score_best_rated is null then 'no_rated_completion'
            when picks.score_random_response_for_best_rated is null then 'alternate_unrated'
            when picks.score_random_response_for_best_rated = picks.score_best_rated then 'all_rated_equal'
        end as no_pair_reason

    from picks
    inner join prompts
        on picks.prompt_id = prompts.prompt_id
    left join picked_texts
        on picks.prompt_id = picked_texts.prompt_id

)

select * from joined
