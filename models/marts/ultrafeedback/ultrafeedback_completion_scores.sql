-- One row per raw row x completion: the parsed aspect ratings, the recomputed average_rating
-- beside the published one, overall_score, the critique and its VADER sentiment, and which
-- completion each ranking picks. Raw rows without completions have no row here (see
-- ultrafeedback_curated.has_no_completions).
with

prompts as (

    select
        prompt_id,
        source_file,
        source_row,
        source,
        instruction
    from {{ ref('stg_ultrafeedback__prompts') }}

),

completions as (

    select * from {{ ref('int_ultrafeedback__completions_parsed') }}

),

ranked as (

    select * from {{ ref('int_ultrafeedback__completions_ranked') }}

),

sentiments as (

    select * from {{ ref('int_ultrafeedback__critique_sentiments') }}

),

-- the long texts last, by key (they are not stored by the intermediate layer)
completion_texts as (

    select * from {{ ref('int_ultrafeedback__completion_texts') }}

),

joined as (

    select
        ---------- keys
        completions.completion_id,
        completions.prompt_id,
        prompts.source_file,
        prompts.source_row,

        ---------- prompt
        prompts.source,
        prompts.instruction,

        ---------- completion
        completions.completion_index,
        completions.model,

        ---------- ratings
        completions.helpfulness_rating,
        completions.honesty_rating,
        completions.instruction_following_rating,
        completions.truthfulness_rating,
        completions.has_invalid_rating,
        completions.average_rating,
        completions.published_average_rating,
        completions.overall_score,

        ---------- texts
        completion_texts.critique,
        sentiments.critique_sentiment,
        completion_texts.response,

        ---------- picks
        ranked.is_best_rated,
        ranked.is_best_overall,
        ranked.is_random_for_best_rated,
        ranked.is_random_for_best_overall

    from completions
    inner join prompts
        on completions.prompt_id = prompts.prompt_id
    inner join ranked
        on completions.prompt_id = ranked.prompt_id
        and completions.completion_index = ranked.completion_index
    left join sentiments
        on completions.prompt_id = sentiments.prompt_id
        and completions.completion_index = sentiments.completion_index
    inner join completion_texts
        on completions.prompt_id = completion_texts.prompt_id
        and completions.completion_index = completion_texts.completion_index

)

select * from joined
