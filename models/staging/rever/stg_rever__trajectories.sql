-- One row per raw row of OpenRubrics/ReVeR-Traces-Judge: one judge trajectory (one response
-- of a pair scored against the pair's rubric). Messages are parsed in intermediate models.
with

source as (

    select * from {{ source('rever', 'rever_traces_judge') }}

),

typed as (

    -- the contract's types, whatever representation the raw files use (README: "Raw data contract")
    select
        {{ raw_columns_as_contract('rever_judge') }},
        filename,
        file_row_number

    from source

),

row_keys as (

    -- each row's key, from what the row is about: its id and candidate
    {{ raw_row_keys(source('rever', 'rever_traces_judge'), 'rever_judge', 'trajectory_id', ['id', 'candidate'], contract_key='rever_judge') }}

),

keyed as (

    select
        typed.*,
        row_keys.trajectory_id

    from typed
    inner join row_keys on {{ row_keys_match('typed') }}

),

renamed as (

    select
        ---------- keys
        trajectory_id,
        {{ provenance_columns('keyed') }},
        id,

        ---------- attributes
        source,
        candidate,
        messages,
        {{ list_size('messages') }} as n_messages,
        tools

    from keyed

)

select * from renamed
