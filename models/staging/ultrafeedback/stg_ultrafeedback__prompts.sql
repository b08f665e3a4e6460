-- One row per raw row of argilla/ultrafeedback-binarized-curation (a prompt and its rated
-- completions). Only the fields the warehouse uses are projected out of the completion
-- structs (the raw rows carry each completion twice, in `completions` and the pick columns).
-- A table: the row keys' window runs once per build, and the many models that read it read the
-- warehouse instead of the raw files.
{{ config(materialized='table') }}

with

source as (

    select * from {{ source('ultrafeedback', 'ultrafeedback_binarized_curation') }}

),

typed as (

    -- the contract's types, whatever representation the raw files use (README: "Raw data contract")
    select
        {{ raw_columns_as_contract('ultrafeedback') }},
        filename,
        file_row_number

    from source

),

row_keys as (

    -- each row's key, from what the row is about: its source, instruction and completions' models and responses, not their ratings
    {{ raw_row_keys(source('ultrafeedback', 'ultrafeedback_binarized_curation'), 'ultrafeedback', 'prompt_id',
        ['source', 'instruction', list_exact_key('completions', ['x.model', 'x.response'])], contract_key='ultrafeedback') }}

),

keyed as (

    select
        typed.*,
        row_keys.prompt_id

    from typed
    inner join row_keys on {{ row_keys_match('typed') }}

),

renamed as (

    select
        ---------- keys
        prompt_id,
        {{ provenance_columns('keyed') }},

        ---------- prompt
        source,
        instruction,

        ---------- completions, projected
        {{ list_size('completions') }} as n_completions,
        {{ list_transform('completions', 'c', make_struct({
            'model': 'c.model',
            'response': 'c.response',
            'critique': 'c.critique',
            'overall_score': 'cast(c.overall_score as double)',
            'published_average_rating': 'cast(c.average_rating as double)',
            'helpfulness_rating_raw': 'c.annotations.helpfulness."Rating"',
            'honesty_rating_raw': 'c.annotations.honesty."Rating"',
            'instruction_following_rating_raw': 'c.annotations.instruction_following."Rating"',
            'truthfulness_rating_raw': 'c.annotations.truthfulness."Rating"',
        })) }} as completions,

        ---------- argilla's published columns (for the audits)
        -- a published response as the md5 of its text: all the audit compares, and the table
        -- then holds each response text once (in completions)
        best_rated_model as published_best_rated_model,
        cast(score_best_rated as double) as published_score_best_rated,
        best_overall_model as published_best_overall_model,
        cast(score_best_overall as double) as published_score_best_overall,
        best_rated_is_different_from_best_overall as published_best_rated_is_different_from_best_overall,
        best_rated_response.model as published_best_rated_response_model,
        md5(best_rated_response.response) as published_best_rated_response_md5,
        best_overall_score_response.model as published_best_overall_score_response_model,
        md5(best_overall_score_response.response) as published_best_overall_score_response_md5,
        random_response_for_best_rated.model as published_random_response_for_best_rated_model,
        md5(random_response_for_best_rated.response) as published_random_response_for_best_rated_md5,
        cast(score_random_response_for_rated as double) as published_score_random_response_for_best_rated,
        random_response_for_best_overall.model as published_random_response_for_best_overall_model,
        md5(random_response_for_best_overall.response) as published_random_response_for_best_overall_md5,
        cast(score_random_response_for_best_overall as double) as published_score_random_response_for_best_overall,
        cast(best_overall_score_response_critique_sentiment as double) as published_best_overall_score_response_critique_sentiment

    from keyed

)

select * from renamed
