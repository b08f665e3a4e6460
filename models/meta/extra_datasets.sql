-- The `extra_datasets` entries this build used (macros/extra_datasets.sql), one row each in
-- registry order, with the defaults filled in. The export, its cards and the report read the
-- registry from here, so they need no arguments after `dbt build --vars '{extra_datasets: [...]}'`.
{%- set entries = extra_datasets() %}
{%- set string = dbt.type_string() %}

{% for e in entries %}
select
    cast({{ e.order }} as integer) as registry_order,
    {{ sql_string(e.name) }} as dataset,
    {{ sql_string(e.hub_id) }} as hub_id,
    {{ sql_string(e.shape) }} as shape,
    {{ sql_string(e.config) if e.config is not none else 'cast(null as ' ~ string ~ ')' }} as config,
    {{ sql_string(tojson(e.splits)) if e.splits is not none else 'cast(null as ' ~ string ~ ')' }} as splits,
    {{ sql_string(tojson(e.columns)) }} as column_mapping,
    cast({{ e.score_min if e.scored else 'null' }} as double) as score_min,
    cast({{ e.score_max if e.scored else 'null' }} as double) as score_max,
    {%- if e.scored %}
    '{{ 'average_rating' if e.shape == 'rated_completions' else 'score' }}_{{ '%g' % e.score_min }}_{{ '%g' % e.score_max }}' as score_kind,
    {%- else %}
    cast(null as {{ string }}) as score_kind,
    {%- endif %}
    {{ sql_string(e.pairing) if e.pairing else 'cast(null as ' ~ string ~ ')' }} as pairing,
    {{ sql_string(e.license) }} as license
{% if not loop.last %}union all{% endif %}
{% endfor %}
{% if not entries %}
-- no entry: no row, the same columns
select
    cast(null as integer) as registry_order, cast(null as {{ string }}) as dataset, cast(null as {{ string }}) as hub_id,
    cast(null as {{ string }}) as shape, cast(null as {{ string }}) as config, cast(null as {{ string }}) as splits,
    cast(null as {{ string }}) as column_mapping, cast(null as double) as score_min, cast(null as double) as score_max,
    cast(null as {{ string }}) as score_kind, cast(null as {{ string }}) as pairing, cast(null as {{ string }}) as license
where false
{% endif %}
