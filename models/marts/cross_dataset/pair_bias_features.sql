-- One row per clean training pair of preference_pairs (its split is the dataset's, not `_flagged`): the
-- lengths and format patterns of its two responses, and the largest token budget at which a
-- truncated pair collapses (chosen and rejected identical after truncation), for
-- pair_bias_profile, truncation_collapse, their audits and the length-balanced mixture.
-- Not a public table: protected, in schema intermediate (the export takes schema main only).
-- A response's text is its messages' contents joined by a newline; lengths in characters.
-- Collapse at budget B: prompt_len + d >= 4 x B, d = the first character where chosen and
-- rejected differ (the shorter one's length when one is a prefix of the other); tested as "the
-- first 4 x B - prompt_len characters of both are equal", one comparison per budget. With the
-- var tokenizer_file, in tokens instead: prompt tokens + shared leading tokens >= B.
{%- set patterns = format_patterns() %}
{%- set budgets = truncation_budgets() %}

with

pairs as (

    select
        dataset,
        split,
        pair_id,
        prompt_id,
        source,
        chosen_model,
        margin,
        {{ messages_content_text('prompt') }} as prompt_text,
        {{ messages_content_text('chosen') }} as chosen_text,
        {{ messages_content_text('rejected') }} as rejected_text
    from {{ ref('preference_pairs') }}
    where split = dataset

),

measured as (

    select
        *,
        length(prompt_text) as prompt_len,
        length(chosen_text) as chosen_len,
        length(rejected_text) as rejected_len
    from pairs

),

final as (

    select
        measured.dataset,
        measured.split,
        measured.pair_id,
        measured.prompt_id,
        measured.source,
        measured.chosen_model,
        measured.margin,
        cast(prompt_len as bigint) as prompt_len,
        cast(chosen_len as bigint) as chosen_len,
        cast(rejected_len as bigint) as rejected_len,
        {%- for name, pattern in patterns.items() %}
        coalesce({{ regex_contains('chosen_text', pattern) }}, false) as chosen_has_{{ name }},
        coalesce({{ regex_contains('rejected_text', pattern) }}, false) as rejected_has_{{ name }},
        {%- endfor %}
        -- collapse is monotone in the budget: the largest budget it collapses at says them all
        case
            {%- for budget in budgets | reverse %}
            {%- if tokenizer_file() %}
            when token_counts.n_prompt_tokens + token_counts.n_shared_tokens >= {{ budget }}
            {%- else %}
            {%- set k = '(' ~ (budget * (chars_per_token() | int)) ~ ' - prompt_len)' %}
            when {{ k }} <= 0
                or (least(chosen_len, rejected_len) >= {{ k }} and left(chosen_text, {{ k }}) = left(rejected_text, {{ k }}))
            {%- endif %}
                then {{ budget }}
            {%- endfor %}
        end as max_collapsed_budget
    from measured
    {%- if tokenizer_file() %}
    -- counted with the tokenizer of the var tokenizer_file
    left join {{ ref('int_preference_pairs__token_counts') }} as token_counts
        on measured.pair_id = token_counts.pair_id
    {%- endif %}

)

select * from final
