-- One row per raw row of OpenRubrics/ReVeR-Traces-Rubric: one rubric-design example.
with

source as (

    select * from {{ source('rever', 'rever_traces_rubric') }}

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

    from source

)

select * from renamed
