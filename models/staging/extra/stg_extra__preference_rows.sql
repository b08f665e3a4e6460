-- One row per raw row of every `extra_datasets` entry of shape preference or transcript
-- (macros/extra_datasets.sql), the entry's columns under their canonical names: texts as message
-- lists (a string becomes one turn), the raw strings kept where the rule needs them (implicit
-- prompts of string pairs, transcripts), scores as text (parsed downstream).
{%- set entries = extra_datasets_of(['preference', 'transcript']) %}
{%- set string = dbt.type_string() %}

{% for e in entries %}
{%- set kinds = extra_column_kinds(e) %}
{%- set chosen_kind = kinds.get(e.columns.chosen, 'string') %}
{%- if 'prompt' in e.columns %}
{%- set prompt = as_messages(extra_column(e, 'prompt'), kinds.get(e.columns.prompt), 'user') %}
{%- else %}
{%- set prompt = empty_messages() %}
{%- endif %}
{%- if e.shape == 'transcript' %}
{%- set chosen, rejected = empty_messages(), empty_messages() %}
{%- else %}
{%- set chosen = as_messages(extra_column(e, 'chosen'), chosen_kind, 'assistant') %}
{%- set rejected = as_messages(extra_column(e, 'rejected'), kinds.get(e.columns.rejected), 'assistant') %}
{%- endif %}
{%- if chosen_kind == 'list' %}
{%- set chosen_text, rejected_text = 'cast(null as ' ~ string ~ ')', 'cast(null as ' ~ string ~ ')' %}
{%- else %}
{%- set chosen_text = 'cast(' ~ extra_column(e, 'chosen') ~ ' as ' ~ string ~ ')' %}
{%- set rejected_text = 'cast(' ~ extra_column(e, 'rejected') ~ ' as ' ~ string ~ ')' %}
{%- endif %}
select
    row_keys.row_key,
    {{ provenance_columns('raw_rows') }},
    '{{ e.name }}' as dataset,
    {%- if e.shape == 'transcript' %}
    'transcript' as text_format,
    {%- elif 'prompt' in e.columns %}
    'explicit_prompt' as text_format,
    {%- elif chosen_kind == 'list' %}
    'implicit_prompt_messages' as text_format,
    {%- else %}
    'implicit_prompt_strings' as text_format,
    {%- endif %}
    cast({{ extra_column(e, 'source') }} as {{ string }}) as source,
    {{ prompt }} as prompt,
    {{ chosen }} as chosen,
    {{ rejected }} as rejected,
    {{ chosen_text }} as chosen_text,
    {{ rejected_text }} as rejected_text,
    cast({{ extra_column(e, 'chosen_score') }} as {{ string }}) as chosen_score_text,
    cast({{ extra_column(e, 'rejected_score') }} as {{ string }}) as rejected_score_text,
    cast({{ extra_column(e, 'chosen_model') }} as {{ string }}) as chosen_model,
    cast({{ extra_column(e, 'rejected_model') }} as {{ string }}) as rejected_model
from {{ extra_dataset_relation(e) }} as raw_rows
inner join (
    -- each row's key, from what the row is about: the prompt and the two responses in either
    -- order, so a swapped pair keeps its key
    {{ raw_row_keys(extra_dataset_relation(e), e.name, 'row_key', [list_exact_key(prompt, ['x.role', 'x.content']), unordered_pair_key(
        exact_key([list_exact_key(chosen, ['x.role', 'x.content']), chosen_text]),
        exact_key([list_exact_key(rejected, ['x.role', 'x.content']), rejected_text]))]) }}
) as row_keys on {{ row_keys_match('raw_rows') }}
{% if not loop.last %}union all{% endif %}
{% endfor %}
{% if not entries %}
-- no entry of these shapes: no row, the same columns
select
    cast(null as {{ string }}) as row_key, cast(null as {{ string }}) as source_file, cast(null as bigint) as source_row,
    cast(null as {{ string }}) as dataset, cast(null as {{ string }}) as text_format, cast(null as {{ string }}) as source,
    {{ empty_messages() }} as prompt, {{ empty_messages() }} as chosen, {{ empty_messages() }} as rejected,
    cast(null as {{ string }}) as chosen_text, cast(null as {{ string }}) as rejected_text,
    cast(null as {{ string }}) as chosen_score_text, cast(null as {{ string }}) as rejected_score_text,
    cast(null as {{ string }}) as chosen_model, cast(null as {{ string }}) as rejected_model
where false
{% endif %}
