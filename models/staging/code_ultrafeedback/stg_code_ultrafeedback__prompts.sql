-- One row per raw row of coseal/CodeUltraFeedback: a coding instruction, its responses and
-- the judge's annotations (lists kept as they are; unnested in intermediate models).
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

    select * from {{ ref('base_code_ultrafeedback__row_keys').include(database=False) }}

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
