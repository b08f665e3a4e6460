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

row_keys as (

    -- each row's key, from what the row is about: its id
    {{ raw_row_keys(source('rever', 'rever_traces_rubric'), 'rever_rubric', 'rubric_row_id', ['id'], contract_key='rever_rubric') }}

),

keyed as (

    select
        typed.*,
        row_keys.rubric_row_id

    from typed
    inner join row_keys on {{ row_keys_match('typed') }}

),

renamed as (

    select
        ---------- keys
        rubric_row_id,
        {{ provenance_columns('keyed') }},
        id,

        ---------- attributes
        source,
        messages,
        {{ list_size('messages') }} as n_messages

    from keyed

)

select * from renamed
