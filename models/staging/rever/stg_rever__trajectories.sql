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

identified as (

    -- what the row is about (the pair's id, the candidate and the messages): its key's basis
    select
        *,
        {{ exact_key(['id', 'candidate', list_exact_key('messages', ['x.role', 'x.content'])]) }} as content_key

    from typed

),

renamed as (

    select
        ---------- keys
        {{ raw_row_key_columns('rever_judge', 'trajectory_id') }},
        id,

        ---------- attributes
        source,
        candidate,
        messages,
        {{ list_size('messages') }} as n_messages,
        tools

    from identified

)

select * from renamed
