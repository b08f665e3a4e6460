-- One row per raw row of OpenRubrics/ReVeR-Traces-Rubric: one rubric-design example.
with

source as (

    select * from {{ source('rever', 'rever_traces_rubric') }}

),

renamed as (

    select
        ---------- keys
        {{ stable_hash(["'rever_rubric'", file_basename('filename'), 'file_row_number']) }} as rubric_row_id,
        {{ file_basename('filename') }} as source_file,
        cast(file_row_number as bigint) as source_row,
        id,

        ---------- attributes
        source,
        messages,
        {{ list_size('messages') }} as n_messages

    from source

)

select * from renamed
