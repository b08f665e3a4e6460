{#- Chat message lists ([{role, content}], TRL's conversational form) for the registry's shapes
    (models/intermediate/extra/). -#}

{#- A column as a message list: a string becomes one turn of `role`; a list of {role, content}
    structs keeps its turns (fields re-ordered role, content; other fields dropped); NULL -> []. -#}
{% macro as_messages(expr, kind, role) -%}
    {%- if kind == 'list' -%}
        coalesce({{ list_transform(expr, 'm', make_struct({'role': 'cast(m.role as ' ~ dbt.type_string() ~ ')', 'content': 'cast(m.content as ' ~ dbt.type_string() ~ ')'})) }}, {{ empty_messages() }})
    {%- else -%}
        case when {{ expr }} is null then {{ empty_messages() }} else {{ chat_messages([(role, 'cast(' ~ expr ~ ' as ' ~ dbt.type_string() ~ ')')]) }} end
    {%- endif -%}
{%- endmacro %}

{% macro empty_messages() -%}
    {{ return(adapter.dispatch('empty_messages', 'preference_warehouse')()) }}
{%- endmacro %}
{% macro default__empty_messages() -%} cast([] as struct("role" varchar, "content" varchar)[]) {%- endmacro %}
{% macro spark__empty_messages() -%} cast(array() as array<struct<role: string, content: string>>) {%- endmacro %}

{#- Elements [start, end) of a list (0-based, end exclusive; out-of-range parts left out). -#}
{% macro list_slice0(list_expr, start, end) -%}
    {{ return(adapter.dispatch('list_slice0', 'preference_warehouse')(list_expr, start, end)) }}
{%- endmacro %}
{% macro default__list_slice0(list_expr, start, end) -%}
    list_slice({{ list_expr }}, ({{ start }}) + 1, {{ end }})
{%- endmacro %}
{% macro spark__list_slice0(list_expr, start, end) -%}
    slice({{ list_expr }}, ({{ start }}) + 1, greatest(least({{ end }}, size({{ list_expr }})) - ({{ start }}), 0))
{%- endmacro %}

{#- The 0-based positions i < n (an expression) where `condition` (on `i`) holds, as a list. -#}
{% macro positions_where(n, condition) -%}
    {{ return(adapter.dispatch('positions_where', 'preference_warehouse')(n, condition)) }}
{%- endmacro %}
{% macro default__positions_where(n, condition) -%}
    list_filter(range(greatest({{ n }}, 0)), lambda i: {{ condition }})
{%- endmacro %}
{#- sequence(0, -1) counts down in Spark: the guard keeps an empty range empty -#}
{% macro spark__positions_where(n, condition) -%}
    filter(sequence(0, greatest({{ n }}, 1) - 1), i -> i < {{ n }} and ({{ condition }}))
{%- endmacro %}

{% macro list_min(list_expr) -%}{{ return(adapter.dispatch('list_min', 'preference_warehouse')(list_expr)) }}{%- endmacro %}
{% macro default__list_min(list_expr) -%} list_min({{ list_expr }}) {%- endmacro %}
{% macro spark__list_min(list_expr) -%} array_min({{ list_expr }}) {%- endmacro %}
{% macro list_max(list_expr) -%}{{ return(adapter.dispatch('list_max', 'preference_warehouse')(list_expr)) }}{%- endmacro %}
{% macro default__list_max(list_expr) -%} list_max({{ list_expr }}) {%- endmacro %}
{% macro spark__list_max(list_expr) -%} array_max({{ list_expr }}) {%- endmacro %}

{#- Length of the common prefix of two lists (elements compared whole; NULL-safe). -#}
{% macro common_prefix_length(a, b) -%}
    {%- set n = 'least(' ~ list_size(a) ~ ', ' ~ list_size(b) ~ ')' -%}
    coalesce({{ list_min(positions_where(n, 'not (' ~ list_at(a, 'i') ~ ' is not distinct from ' ~ list_at(b, 'i') ~ ')')) }}, {{ n }})
{%- endmacro %}

{#- Length of the common prefix of two strings, in characters. -#}
{% macro common_text_prefix_length(a, b) -%}
    {%- set n = 'least(length(' ~ a ~ '), length(' ~ b ~ '))' -%}
    coalesce({{ list_min(positions_where(n, 'substr(' ~ a ~ ', i + 1, 1) != substr(' ~ b ~ ', i + 1, 1)')) }}, {{ n }})
{%- endmacro %}

{#- An Anthropic/hh-rlhf transcript ("\n\nHuman: ...\n\nAssistant: ...") as a message list:
    Human -> user, Assistant -> assistant, each content trimmed of white space; text before the
    first marker is a user turn when it is not blank. -#}
{% macro transcript_messages(expr) -%}
    {{ return(adapter.dispatch('transcript_messages', 'preference_warehouse')(expr)) }}
{%- endmacro %}
{#- split at the markers: the part before the first marker, then one part per turn -#}
{% macro default__transcript_messages(expr) -%}
    list_concat(
        case when regexp_replace(split_part(regexp_replace(coalesce({{ expr }}, ''), '\n\n(Human|Assistant):', chr(1) || '\1' || chr(2), 'g'), chr(1), 1), '^\s+|\s+$', '', 'g') != ''
            then [{'role': 'user', 'content': regexp_replace(split_part(regexp_replace(coalesce({{ expr }}, ''), '\n\n(Human|Assistant):', chr(1) || '\1' || chr(2), 'g'), chr(1), 1), '^\s+|\s+$', '', 'g')}]
            else cast([] as struct("role" varchar, "content" varchar)[])
        end,
        list_transform(
            string_split(regexp_replace(coalesce({{ expr }}, ''), '\n\n(Human|Assistant):', chr(1) || '\1' || chr(2), 'g'), chr(1))[2:],
            lambda part: {'role': case when split_part(part, chr(2), 1) = 'Human' then 'user' else 'assistant' end,
                          'content': regexp_replace(substr(part, strpos(part, chr(2)) + 1), '^\s+|\s+$', '', 'g')}
        )
    )
{%- endmacro %}
{% macro spark__transcript_messages(expr) -%}
    concat(
        case when regexp_replace(split(regexp_replace(coalesce({{ expr }}, ''), '\n\n(Human|Assistant):', '\u0001$1\u0002'), '\u0001')[0], '^\\s+|\\s+$', '') != ''
            then array(named_struct('role', 'user', 'content', regexp_replace(split(regexp_replace(coalesce({{ expr }}, ''), '\n\n(Human|Assistant):', '\u0001$1\u0002'), '\u0001')[0], '^\\s+|\\s+$', '')))
            else cast(array() as array<struct<role: string, content: string>>)
        end,
        transform(
            slice(split(regexp_replace(coalesce({{ expr }}, ''), '\n\n(Human|Assistant):', '\u0001$1\u0002'), '\u0001'), 2, 1000000),
            part -> named_struct('role', case when split_part(part, '\u0002', 1) = 'Human' then 'user' else 'assistant' end,
                                 'content', regexp_replace(substr(part, instr(part, '\u0002') + 1), '^\\s+|\\s+$', ''))
        )
    )
{%- endmacro %}

{#- Content of a message list for matching pairs across datasets: every content lower-cased with
    runs of white space collapsed (normalize_text), as one text. -#}
{% macro messages_text_key(expr) -%}
    {{ return(adapter.dispatch('messages_text_key', 'preference_warehouse')(expr)) }}
{%- endmacro %}
{% macro default__messages_text_key(expr) -%}
    to_json(list_transform({{ expr }}, lambda m: {'role': m.role, 'content': {{ normalize_text('m.content') }}}))
{%- endmacro %}
{% macro spark__messages_text_key(expr) -%}
    to_json(transform({{ expr }}, m -> named_struct('role', m.role, 'content', {{ normalize_text('m.content') }})))
{%- endmacro %}

{#- A message list as exact text (for keys over whole pairs). -#}
{% macro messages_exact_key(expr) -%}
    {{ return(adapter.dispatch('messages_exact_key', 'preference_warehouse')(expr)) }}
{%- endmacro %}
{% macro default__messages_exact_key(expr) -%} cast(to_json({{ expr }}) as varchar) {%- endmacro %}
{% macro spark__messages_exact_key(expr) -%} to_json({{ expr }}) {%- endmacro %}

{#- Does a message list hold no text: no turn, or every content NULL or blank? -#}
{% macro messages_are_empty(expr) -%}
    coalesce({{ list_size(list_filter(expr, 'm', has_text('m.content'))) }}, 0) = 0
{%- endmacro %}

{#- Does a text hold anything but white space (NULL for NULL)? A search for the first such
    character, not a rewrite of the text. -#}
{% macro has_text(expr) -%}
    {{ return(adapter.dispatch('has_text', 'preference_warehouse')(expr)) }}
{%- endmacro %}
{% macro default__has_text(expr) -%} regexp_matches({{ expr }}, '\S') {%- endmacro %}
{% macro spark__has_text(expr) -%} ({{ expr }} rlike '\\S') {%- endmacro %}

{#- The user turns' contents of a message list as one text, joined by a blank line. -#}
{% macro user_turns_text(expr) -%}
    {{ return(adapter.dispatch('user_turns_text', 'preference_warehouse')(expr)) }}
{%- endmacro %}
{% macro default__user_turns_text(expr) -%}
    nullif(array_to_string(list_transform(list_filter({{ expr }}, lambda m: m.role = 'user'), lambda m: m.content), chr(10) || chr(10)), '')
{%- endmacro %}
{% macro spark__user_turns_text(expr) -%}
    nullif(array_join(transform(filter({{ expr }}, m -> m.role = 'user'), m -> m.content), '\n\n'), '')
{%- endmacro %}

{#- A message list's contents joined by a newline, NULL contents left out: the text of a response
    ('' for no turn or no content). -#}
{% macro messages_content_text(expr) -%}
    {{ return(adapter.dispatch('messages_content_text', 'preference_warehouse')(expr)) }}
{%- endmacro %}
{% macro default__messages_content_text(expr) -%}
    coalesce(array_to_string(list_transform({{ expr }}, lambda m: m.content), chr(10)), '')
{%- endmacro %}
{% macro spark__messages_content_text(expr) -%}
    coalesce(array_join(transform({{ expr }}, m -> m.content), '\n'), '')
{%- endmacro %}
