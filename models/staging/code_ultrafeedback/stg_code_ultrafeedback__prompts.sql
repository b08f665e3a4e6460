-- One row per raw row of coseal/CodeUltraFeedback: a coding instruction, its responses and
-- the judge's annotations (lists kept as they are; unnested in intermediate models).
-- A table: the row keys' window runs once per build, and the many models that read it read the
-- warehouse instead of the raw files.
{{ config(materialized='table') }}

with

source as (

    select * from {{ source('code_ultrafeedback', 'code_ultrafeedback') }}

),

typed as (

    -- the contract's types, whatever representation the raw files use (README: "Raw data contract")
    select
        {{ raw_columns_as_contract('code_ultrafeedback') }},
        filename,
        file_row_number

    from source

),

row_keys as (

    -- each row's key, from what the row is about: its preference, instruction, models and responses, not their ratings
    {{ raw_row_keys(source('code_ultrafeedback', 'code_ultrafeedback'), 'code_ultrafeedback', 'prompt_id',
        ['preference', 'instruction', list_exact_key('models'), list_exact_key('responses', ['x.model', 'x.response'])], contract_key='code_ultrafeedback') }}

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
        instruction,
        preference,

        ---------- responses and annotations
        models,
        responses,
        annotations,
        {{ list_size('responses') }} as n_responses,
        {{ list_size('annotations') }} as n_annotations

    from keyed

)

select * from renamed
