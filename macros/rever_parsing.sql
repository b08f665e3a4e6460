{#- ReVeR text parsing rules, written once and used by the rever intermediate models.
    They only call the cross-engine helpers, so they run unchanged on DuckDB and Spark. -#}

{#- The bodies of every complete <judge>...</judge> block of a message, in order (an empty
    list when there is none, NULL for a NULL message). A block is the text after a `<judge>`
    up to the first `</judge>`; a `<judge>` never closed before the next `<judge>` opens no
    block. The verdict is the LAST element. Split-based rather than a lazy regex: same
    result, ~25x faster on long messages. -#}
{% macro rever_judge_blocks(content_expr) -%}
    {{ return(adapter.dispatch('rever_judge_blocks', 'preference_warehouse')(content_expr)) }}
{%- endmacro %}
{% macro default__rever_judge_blocks(content_expr) -%}
    list_transform(
        list_filter(string_split({{ content_expr }}, '<judge>')[2:], lambda piece: contains(piece, '</judge>')),
        lambda piece: split_part(piece, '</judge>', 1)
    )
{%- endmacro %}
{% macro spark__rever_judge_blocks(content_expr) -%}
    transform(
        filter(slice(split({{ content_expr }}, '<judge>'), 2, 2147483647), piece -> contains(piece, '</judge>')),
        piece -> split_part(piece, '</judge>', 1)
    )
{%- endmacro %}

{#- The rubric item kind from the tag at the very end of the criterion:
    'hard_rule' for `[Hard Rule]`, 'principle' for `[Principle]`, else 'unknown'. -#}
{% macro rever_criterion_kind(criterion_expr) -%}
    (case {{ regex_group(criterion_expr, '\[([^\[\]]*)\]\s*$', 1) }}
        when 'Hard Rule' then 'hard_rule'
        when 'Principle' then 'principle'
        else 'unknown'
    end)
{%- endmacro %}

{#- The items of the numbered list that ends a message ("1. text" lines, one per line, up to
    the end of the message), without their numbers. Numbered lines earlier in the message
    (e.g. inside <think>) are ignored: only the last unbroken run of numbered lines counts.
    An empty list when the message does not end with a numbered list. -#}
{% macro rever_trailing_numbered_items(content_expr) -%}
    {{ regex_extract_all(
        regex_group(content_expr, '(?s)((?:^|\n)[ \t]*[0-9]+[.][^\n]*(?:\n[ \t]*[0-9]+[.][^\n]*)*)\s*$', 1),
        '(?m)^[ \t]*[0-9]+[.][ \t]*([^\n]*?)[ \t]*$', 1) }}
{%- endmacro %}
