-- Where every raw row went. Per raw dataset: its raw rows (counted in the Parquet files
-- themselves, stg_raw__files), the rows kept by its marts (split into those that reach a
-- training split and those whose pairs are all flagged by an integrity check) and the rows of
-- its rejects model, by reason. Kept and rejected come from two independent rules of the
-- dataset's marts, so the test row_accounting_balances fails the build when a raw row is
-- claimed by both, by neither, or lost or doubled on the way from the files.
{%- set train_on_flagged = var('train_on_flagged_pairs', false) | string | lower in ['true', '1', 'yes'] %}

{#- One entry per raw dataset:
      kept_model / kept_where    the mart that holds what the dataset's kept rows became, and the
                                 predicate selecting them;
      kept_rows                  the raw rows a kept record stands for (an aggregate);
      destination                where kept rows go (the mart a user reads them in);
      all_flagged / first_flag   kept rows whose every pair is flagged, and the flag to report
                                 (`flags_from`: the model, key and condition holding the flags
                                 when the kept model does not carry them);
      rejects_model              the rows the dataset's reject rules name, one per raw row. -#}
{%- set datasets = [
    {'key': 'ultrafeedback', 'group': 'ultrafeedback',
     'kept_model': 'ultrafeedback_curated', 'kept_where': 'has_pair', 'kept_rows': 'count(*)',
     'destination': 'preference_pairs',
     'all_flagged': 'is_flagged', 'first_flag': list_at('integrity_flags', 0),
     'rejects_model': 'rejects_ultrafeedback'},
    {'key': 'code_ultrafeedback', 'group': 'code_ultrafeedback',
     'kept_model': 'code_ultrafeedback_prompts', 'kept_where': 'has_pair', 'kept_rows': 'count(*)',
     'destination': 'preference_pairs',
     'all_flagged': 'n_flagged_corrected_pairs = n_corrected_pairs', 'first_flag': 'first_integrity_flag',
     'rejects_model': 'rejects_code_ultrafeedback'},
    {'key': 'code_ultrafeedback_standard', 'group': 'code_ultrafeedback',
     'kept_model': 'audit_code_ultrafeedback_published',
     'kept_where': 'published_pair_id is not null and is_pair_shaped', 'kept_rows': 'count(*)',
     'destination': 'audit_code_ultrafeedback_published',
     'all_flagged': 'false', 'first_flag': 'null',
     'rejects_model': 'rejects_code_ultrafeedback_standard'},
    {'key': 'rever_judge', 'group': 'rever',
     'kept_model': 'rever_pairs', 'kept_where': 'kept',
     'kept_rows': 'count(chosen_trajectory_id) + count(rejected_trajectory_id)',
     'destination': 'preference_pairs',
     'all_flagged': 'first_flag is not null', 'first_flag': 'first_flag',
     'flags_from': {'model': 'rever_integrity', 'key': 'id', 'flag': 'kind',
                    'where': "id is not null and kind != 'not_kept'"},
     'rejects_model': 'rejects_rever_judge'},
    {'key': 'rever_rubric', 'group': 'rever',
     'kept_model': 'rever_rubric_items', 'kept_where': 'true', 'kept_rows': 'count(distinct rubric_row_id)',
     'destination': 'rever_rubric_items',
     'all_flagged': 'false', 'first_flag': 'null',
     'rejects_model': 'rejects_rever_rubric'},
] | selectattr('group', 'in', enabled_dataset_groups()) | list %}

with

raw_files as (

    select * from {{ ref('stg_raw__files') }}

),

{% for d in datasets %}
{{ d.key }}_kept_model as (

    select * from {{ ref(d.kept_model) }}

),

{% if d.flags_from %}
{{ d.key }}_flags as (

    select
        {{ d.flags_from.key }},
        min({{ d.flags_from.flag }}) as first_flag
    from {{ ref(d.flags_from.model) }}
    where {{ d.flags_from.where }}
    group by {{ d.flags_from.key }}

),

{% endif %}
{{ d.key }}_kept as (

    select
        *,
        {%- if train_on_flagged %}
        false as is_all_flagged
        {%- else %}
        coalesce({{ d.all_flagged }}, false) as is_all_flagged
        {%- endif %}
    from (
        select
            {{ d.key }}_kept_model.*
            {%- if d.flags_from %},
            {{ d.key }}_flags.first_flag
            {%- endif %}
        from {{ d.key }}_kept_model
        {%- if d.flags_from %}
        left join {{ d.key }}_flags
            on {{ d.key }}_kept_model.{{ d.flags_from.key }} = {{ d.key }}_flags.{{ d.flags_from.key }}
        {%- endif %}
        where {{ d.kept_where }}
    ) as kept_records

),

{{ d.key }}_rejects as (

    select * from {{ ref(d.rejects_model) }}

),

{{ d.key }}_outcomes as (

    select
        '{{ d.key }}' as dataset_key,
        case when is_all_flagged then 'flagged' else 'in_marts' end as outcome,
        case when is_all_flagged then {{ d.first_flag }} else '{{ d.destination }}' end as destination,
        {{ d.kept_rows }} as n_rows
    from {{ d.key }}_kept
    group by 1, 2, 3
    union all
    select
        '{{ d.key }}' as dataset_key,
        'rejected' as outcome,
        reason as destination,
        count(*) as n_rows
    from {{ d.key }}_rejects
    group by 1, 2, 3

),

{% endfor %}
outcomes as (

    {% for d in datasets %}
    select * from {{ d.key }}_outcomes
    {% if not loop.last %}union all{% endif %}
    {% endfor %}
    {% if not datasets %}
    select
        cast(null as {{ dbt.type_string() }}) as dataset_key, cast(null as {{ dbt.type_string() }}) as outcome,
        cast(null as {{ dbt.type_string() }}) as destination, cast(null as bigint) as n_rows
    where false
    {% endif %}

),

raw_counts as (

    select
        dataset_key,
        sum(n_rows) as raw_rows
    from raw_files
    group by 1

),

registry as (

    select * from {{ ref('dataset_registry') }}

),

final as (

    select
        outcomes.dataset_key,
        registry.hub_id,
        cast(raw_counts.raw_rows as bigint) as raw_rows,
        outcomes.outcome,
        outcomes.destination,
        cast(outcomes.n_rows as bigint) as n_rows
    from outcomes
    left join raw_counts
        on outcomes.dataset_key = raw_counts.dataset_key
    left join registry
        on outcomes.dataset_key = registry.dataset_key
    where outcomes.n_rows > 0

)

select * from final
