-- One pair per raw row of the registry's preference and transcript entries, in TRL's
-- explicit-prompt conversational form (prompt, chosen, rejected as message lists):
--   explicit prompt   chosen / rejected lists that repeat the prompt's turns lose them;
--   implicit prompt   (messages, and transcripts split into turns) the turns chosen and rejected
--                     share, up to the last user turn among them, are the prompt (TRL's
--                     maybe_extract_prompt); strings: their common prefix, a space before the
--                     first differing character going to the responses.
-- Scores parsed: a number, or a string holding one; anything else NULL.
with

raw_rows as (

    select * from {{ ref('stg_extra__preference_rows') }}

),

turns as (

    select
        *,
        case when text_format = 'transcript' then {{ transcript_messages('chosen_text') }} else chosen end as chosen_turns,
        case when text_format = 'transcript' then {{ transcript_messages('rejected_text') }} else rejected end as rejected_turns,
        case when text_format = 'implicit_prompt_strings'
            then {{ common_text_prefix_length('chosen_text', 'rejected_text') }} end as n_shared_characters
    from raw_rows

),

shared as (

    select
        *,
        {{ common_prefix_length('chosen_turns', 'rejected_turns') }} as n_shared_turns,
        -- TRL's rule for strings: a space just before the first difference goes to the responses
        case
            when n_shared_characters > 0 and substr(chosen_text, n_shared_characters, 1) = ' '
                then n_shared_characters - 1
            else n_shared_characters
        end as n_prompt_characters
    from turns

),

prompt_turns as (

    select
        *,
        -- up to and including the last user turn among the shared ones
        coalesce({{ list_max(positions_where('n_shared_turns', list_at('chosen_turns', 'i') ~ ".role = 'user'")) }} + 1, 0)
            as n_prompt_turns,
        {{ list_size('prompt') }} as n_mapped_prompt_turns
    from shared

),

split as (

    select
        row_key,
        dataset,
        source_file,
        source_row,
        source,
        case text_format
            when 'explicit_prompt' then prompt
            when 'implicit_prompt_strings' then {{ chat_messages([('user', 'substr(chosen_text, 1, n_prompt_characters)')]) }}
            else {{ list_slice0('chosen_turns', 0, 'n_prompt_turns') }}
        end as prompt,
        {%- for side in ['chosen', 'rejected'] %}
        case text_format
            when 'explicit_prompt' then
                case
                    when n_mapped_prompt_turns > 0
                        and coalesce({{ list_slice0(side, 0, 'n_mapped_prompt_turns') }} = prompt, false)
                        then {{ list_slice0(side, 'n_mapped_prompt_turns', list_size(side)) }}
                    else {{ side }}
                end
            when 'implicit_prompt_strings' then {{ chat_messages([('assistant', 'substr(' ~ side ~ '_text, n_prompt_characters + 1)')]) }}
            else {{ list_slice0(side ~ '_turns', 'n_prompt_turns', list_size(side ~ '_turns')) }}
        end as {{ side }},
        {%- endfor %}
        chosen_model,
        rejected_model,
        chosen_score_text,
        rejected_score_text,
        {{ parse_number('chosen_score_text') }} as chosen_score,
        {{ parse_number('rejected_score_text') }} as rejected_score
    from prompt_turns

)

select * from split
