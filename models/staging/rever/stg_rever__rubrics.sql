-- One row per raw row of OpenRubrics/ReVeR-Traces-Rubric: one rubric-design example.
with

source as (

    select * from {{ source('rever', 'rever_traces_rubric') }}

),

typed as (

    -- the contract's types, whatever representation the raw files use (README: "Raw data contract")
    select
        {{ raw_columns_as_contract('rever_rubric') }},
        filename,
        file_row_number

    from source

),

identified as (

    -- what the row is about (the example's id and messages): its key's basis
    select
        *,
        {{ exact_key(['id', list_exact_key('messages', ['x.role', 'x.content'])]) }} as content_key

    from typed

),

renamed as (

    select
        ---------- keys
        {{ raw_row_key_columns('rever_rubric', 'rubric_row_id') }},
        id,

        ---------- attributes
        source,
        messages,
        {{ list_size('messages') }} as n_messages

    from identified

)

select * from renamed
