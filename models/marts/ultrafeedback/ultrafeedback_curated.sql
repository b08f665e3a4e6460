-- One row per raw row, with argilla's column names and the recomputed values: the best-rated
-- and best-overall picks, their random alternates, and a DPO-ready pair in TRL's explicit-prompt
-- conversational form (prompt = [user turn], chosen = [best rated], rejected = [its random
-- alternate], assistant turns only), its margin and integrity flags, and whether the row yields
-- a preference pair (has_pair) or why not (no_pair_reason): rejects_ultrafeedback takes the
-- second. The training columns (prompt, chosen, rejected, margin) are filled on the rows with a
-- pair only; the pair's margin and integrity flags are preference_pairs' (where every dataset's
-- checks are computed), so the filter `has_pair and not is_flagged` gives the `ultrafeedback`
-- split of preference_pairs, row for row.

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

sentiments as (

    select * from {{ ref('int_ultrafeedback__critique_sentiments') }}

),

-- the margin and integrity flags of the row's pair, as preference_pairs has them
pairs as (

    select
        pair_id,
        margin,
        integrity_flags,
        is_flagged
    from {{ ref('preference_pairs') }}
    where dataset = 'ultrafeedback'

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
        end) as random_response_for_best_overall
    from picks
    inner join completion_texts as completions
        on picks.prompt_id = completions.prompt_id
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
        sentiments.critique_sentiment as best_overall_score_response_critique_sentiment,

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
            when picks.has_pair
                then {{ chat_messages([('user', 'prompts.instruction')]) }}
        end as prompt,
        case
            when picks.has_pair
                then {{ chat_messages([('assistant', 'picked_texts.best_rated_response')]) }}
        end as chosen,
        case
            when picks.has_pair
                then {{ chat_messages([('assistant', 'picked_texts.random_response_for_best_rated')]) }}
        end as rejected,
        picks.score_best_rated - picks.score_random_response_for_best_rated as score_margin,
        pairs.margin,

        ---------- integrity: the pair's flags; a row without a pair has the checks of its two
        ---------- picks only (an invalid aspect rating on either side)
        coalesce(pairs.integrity_flags, picks.dataset_flags) as integrity_flags,
        coalesce(pairs.is_flagged, {{ list_size('picks.dataset_flags') }} > 0) as is_flagged,

        ---------- training pair or not, and why
        picks.has_pair,
        picks.no_pair_reason

    from picks
    inner join prompts
        on picks.prompt_id = prompts.prompt_id
    left join picked_texts
        on picks.prompt_id = picked_texts.prompt_id
    left join sentiments
        on
            picks.prompt_id = sentiments.prompt_id
            and picks.best_overall_index = sentiments.completion_index
    left join pairs
        on {{ preference_pair_id('ultrafeedback', 'picks.prompt_id') }} = pairs.pair_id

)

select * from joined
