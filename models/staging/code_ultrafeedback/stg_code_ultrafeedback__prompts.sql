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

identified as (

    -- what the row is about (the instruction and its models and responses, not their ratings): its key's basis
    select
        *,
        {{ exact_key(['preference', 'instruction', list_exact_key('models'), list_exact_key('responses', ['x.model', 'x.response'])]) }} as content_key

    from typed

),

renamed as (

    select
        ---------- keys
        {{ raw_row_key_columns('code_ultrafeedback', 'prompt_id') }},

        ---------- prompt
        instruction,
        preference,

        ---------- responses and annotations
        models,
        responses,
        annotations,
        {{ list_size('responses') }} as n_responses,
        {{ list_size('annotations') }} as n_annotations

    from identified

)

select * from renamed
