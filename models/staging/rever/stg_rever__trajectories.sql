-- One row per raw row of OpenRubrics/ReVeR-Traces-Judge: one judge trajectory (one response
-- of a pair scored against the pair's rubric). Messages are parsed in intermediate models.
with

source as (

    select * from {{ source('rever', 'rever_traces_judge') }}

),

renamed as (

    select
        ---------- keys
        {{ stable_hash(["'rever_judge'", file_basename('filename'), 'file_row_number']) }} as trajectory_id,
        {{ file_basename('filename') }} as source_file,
        cast(file_row_number as bigint) as source_row,
        id,

        ---------- attributes
        source,
        candidate,
        messages,
        {{ list_size('messages') }} as n_messages,
        tools

    from source

)

select * from renamed
