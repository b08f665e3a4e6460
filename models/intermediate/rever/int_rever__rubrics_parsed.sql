-- One row per rubric-design example (raw row of ReVeR-Traces-Rubric): the rubric's criteria,
-- read from the numbered list that ends its (last) assistant message. A row whose message
-- does not end with a numbered list keeps an empty list (rever_integrity: rubric_unparsed).
with

rubrics as (

    select * from {{ ref('stg_rever__rubrics') }}

),

message_picked as (

    select
        rubric_row_id,
        source_file,
        source_row,
        id,
        source,
        n_messages,
        {{ list_last(list_filter('messages', 'm', "m.role = 'assistant'")) }}.content as assistant_content

    from rubrics

),

criteria_listed as (

    select
        *,
        coalesce({{ rever_trailing_numbered_items('assistant_content') }}, {{ make_list([]) }}) as criteria

    from message_picked

),

primary_picked as (

    -- an id published twice: the first row (file, row number) is the rubric of the pair
    select
        *,
        row_number() over (
            partition by id
            order by source_file, source_row
        ) = 1 as is_primary

    from criteria_listed

),

final as (

    select
        ---------- keys
        rubric_row_id,
        source_file,
        source_row,
        id,

        ---------- attributes
        source,
        n_messages,
        assistant_content is not null as has_assistant_message,
        criteria,
        {{ list_size('criteria') }} as n_items,
        is_primary

    from primary_picked

)

select * from final
