-- One row per judge trajectory (raw row of ReVeR-Traces-Judge): the task of the user message
-- (instruction, response, rubric items) and the verdict entries of the LAST <judge> block of
-- the last assistant message, parsed once. Nothing is evaluated: malformed text gives NULLs
-- and flags, which int_rever__trajectories_scored turns into a verdict_status.
with

trajectories as (

    select * from {{ ref('stg_rever__trajectories') }}

),

messages_picked as (

    select
        trajectory_id,
        source_file,
        source_row,
        id,
        source,
        candidate,
        n_messages,
        coalesce({{ list_size(list_filter('messages', 'm', "m.role in ('tool_call', 'tool')")) }} > 0, false) as used_tool,
        {{ list_at(list_filter('messages', 'm', "m.role = 'user'"), 0) }}.content as user_content,
        {{ list_last(list_filter('messages', 'm', "m.role = 'assistant'")) }}.content as final_assistant_content

    from trajectories

),

judge_blocks_found as (

    select
        *,
        {{ rever_judge_blocks('final_assistant_content') }} as judge_blocks

    from messages_picked

),

json_guarded as (

    -- DuckDB's JSON functions raise on malformed text: only texts that parse go further
    select
        *,
        case when {{ json_is_valid('user_content') }} then user_content end as task_json,
        trim({{ list_last('judge_blocks') }}) as verdict_text

    from judge_blocks_found

),

verdict_guarded as (

    select
        *,
        case when {{ json_is_valid('verdict_text') }} then verdict_text end as verdict_json

    from json_guarded

),

task_parsed as (

    select
        *,
        {{ json_text('task_json', '$.instruction') }} as instruction,
        {{ json_text('task_json', '$.response') }} as response,
        {{ list_transform(
            json_array_items(json_fragment('task_json', '$.rubrics')),
            'r',
            make_struct({
                'rubric_id': json_text('r', '$.rubric_id'),
                'criterion': json_text('r', '$.criterion'),
            })
        ) }} as task_rubric_items,
        {{ json_kind('verdict_json') }} as verdict_json_kind,
        {{ json_object_entries('verdict_json') }} as verdict_members

    from verdict_guarded

),

verdict_shaped as (

    -- list shape: a bare array, or an object with a single member whose value is an array
    -- (the key is free: "scores", "verdicts", ...); map shape: any other object, its keys
    -- being the rubric ids
    select
        *,
        case
            when verdict_json_kind = 'array' then 'list'
            when verdict_json_kind = 'object'
                and {{ list_size('verdict_members') }} = 1
                and {{ json_kind(list_at('verdict_members', 0) ~ '.value') }} = 'array' then 'list'
            when verdict_json_kind = 'object' then 'map'
            when verdict_json is not null then 'unrecognised'
        end as verdict_shape

    from task_parsed

),

verdict_entries_listed as (

    -- one {rubric_id, entry_json} per verdict entry, whatever the shape
    select
        *,
        case
            when verdict_shape = 'list' and verdict_json_kind = 'object'
                then {{ list_at('verdict_members', 0) }}.key
        end as verdict_list_key,
        case verdict_shape
            when 'list' then {{ list_transform(
                json_array_items("case when verdict_json_kind = 'array' then verdict_json else " ~ list_at('verdict_members', 0) ~ ".value end"),
                'v',
                make_struct({'rubric_id': json_text('v', '$.rubric_id'), 'entry_json': 'v'})
            ) }}
            when 'map' then {{ list_transform(
                'verdict_members',
                'e',
                make_struct({'rubric_id': 'e.key', 'entry_json': 'e.value'})
            ) }}
        end as verdict_entries

    from verdict_shaped

),

final as (

    select
        ---------- keys
        trajectory_id,
        source_file,
        source_row,
        id,

        ---------- attributes
        source,
        candidate,
        n_messages,
        used_tool,
        final_assistant_content is not null as has_assistant_message,

        ---------- task (user message)
        task_json is not null as task_is_json,
        task_rubric_items is not null as task_has_rubric_list,
        instruction,
        response,
        task_rubric_items,

        ---------- verdict (last <judge> block of the last assistant message)
        coalesce({{ list_size('judge_blocks') }}, 0) as n_judge_blocks,
        verdict_json is not null as verdict_is_json,
        verdict_shape,
        verdict_list_key,
        verdict_entries

    from verdict_entries_listed

)

select * from final
