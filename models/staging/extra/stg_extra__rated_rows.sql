-- One row per raw row of every `extra_datasets` entry of shape rated_completions: the prompt and
-- its completions, each completion's response, model and the values at its rating paths (as text,
-- parsed downstream), under canonical names. Rows with an empty or NULL completions list are kept
-- (n_completions 0 or NULL): the rejects account for them.
{%- set entries = extra_datasets_of(['rated_completions']) %}
{%- set string = dbt.type_string() %}

{% for e in entries %}
{%- set rating_fields = {} %}
{%- for path in e.ratings %}
    {%- do rating_fields.update({'rating_' ~ loop.index0: 'cast(' ~ struct_path('c', path) ~ ' as ' ~ string ~ ')'}) %}
{%- endfor %}
select
    row_keys.row_key,
    {{ provenance_columns('raw_rows') }},
    '{{ e.name }}' as dataset,
    cast({{ extra_column(e, 'source') }} as {{ string }}) as source,
    cast({{ extra_column(e, 'prompt') }} as {{ string }}) as prompt,
    {{ list_size(extra_column(e, 'completions')) }} as n_completions,
    {{ list_transform(extra_column(e, 'completions'), 'c', make_struct({
        'response': 'cast(' ~ struct_path('c', e.columns.response) ~ ' as ' ~ string ~ ')',
        'model': ('cast(' ~ struct_path('c', e.columns.model) ~ ' as ' ~ string ~ ')') if 'model' in e.columns else 'cast(null as ' ~ string ~ ')',
        'ratings': make_list(rating_fields.values() | list),
    })) }} as completions
from {{ extra_dataset_relation(e) }} as raw_rows
inner join (
    -- each row's key, from what the row is about: its prompt
    {{ raw_row_keys(extra_dataset_relation(e), e.name, 'row_key', ['cast(' ~ extra_column(e, 'prompt') ~ ' as ' ~ string ~ ')']) }}
) as row_keys on {{ row_keys_match('raw_rows') }}
{% if not loop.last %}union all{% endif %}
{% endfor %}
{% if not entries %}
-- no entry of this shape: no row, the same columns
select
    cast(null as {{ string }}) as row_key, cast(null as {{ string }}) as source_file, cast(null as bigint) as source_row,
    cast(null as {{ string }}) as dataset, cast(null as {{ string }}) as source, cast(null as {{ string }}) as prompt,
    cast(null as bigint) as n_completions,
    {{ make_list([make_struct({'response': 'cast(null as ' ~ string ~ ')', 'model': 'cast(null as ' ~ string ~ ')',
                                'ratings': make_list(['cast(null as ' ~ string ~ ')'])})]) }} as completions
where false
{% endif %}
