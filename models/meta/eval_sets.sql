-- The `eval_sets` entries this build checked the training prompts against (macros/eval_sets.sql),
-- one row each in registry order, with the var `contamination`'s settings. The export's cards,
-- the report and row_accounting read the registry from here.
{%- set entries = eval_sets() %}
{%- set settings = contamination_settings() %}
{%- set string = dbt.type_string() %}

{% for e in entries %}
select
    cast({{ e.order }} as integer) as registry_order,
    {{ sql_string(e.name) }} as eval_set,
    {{ sql_string(e.hub_id) }} as hub_id,
    {{ sql_string(e.config) if e.config is not none else 'cast(null as ' ~ string ~ ')' }} as config,
    {{ sql_string(tojson(e.splits)) if e.splits is not none else 'cast(null as ' ~ string ~ ')' }} as splits,
    {{ sql_string(tojson(e.fields)) }} as fields,
    cast({{ settings.ngram }} as integer) as ngram,
    cast({{ settings.threshold }} as double) as threshold,
    cast({{ settings.max_eval_share }} as double) as max_eval_share
{% if not loop.last %}union all{% endif %}
{% endfor %}
{% if not entries %}
-- no entry: no row, the same columns
select
    cast(null as integer) as registry_order, cast(null as {{ string }}) as eval_set, cast(null as {{ string }}) as hub_id,
    cast(null as {{ string }}) as config, cast(null as {{ string }}) as splits, cast(null as {{ string }}) as fields,
    cast(null as integer) as ngram, cast(null as double) as threshold, cast(null as double) as max_eval_share
where false
{% endif %}
