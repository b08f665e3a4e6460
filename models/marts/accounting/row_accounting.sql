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
      pairs_of / prompt_key      for a dataset that yields training pairs: its `dataset` in
                                 preference_pairs and the kept model's column matching their
                                 prompt_id. A kept row is flagged when every pair it has there is
                                 flagged (reported by the first flag), as for the registry's entries;
      rejects_model              the rows the dataset's reject rules name, one per raw row. -#}
{%- set datasets = [
    {'key': 'ultrafeedback', 'group': 'ultrafeedback',
     'kept_model': 'ultrafeedback_curated', 'kept_where': 'has_pair', 'kept_rows': 'count(*)',
     'destination': 'preference_pairs', 'pairs_of': 'ultrafeedback', 'prompt_key': 'prompt_id',
     'rejects_model': 'rejects_ultrafeedback'},
    {'key': 'code_ultrafeedback', 'group': 'code_ultrafeedback',
     'kept_model': 'code_ultrafeedback_prompts', 'kept_where': 'has_pair', 'kept_rows': 'count(*)',
     'destination': 'preference_pairs', 'pairs_of': 'code_ultrafeedback', 'prompt_key': 'prompt_id',
     'rejects_model': 'rejects_code_ultrafeedback'},
    {'key': 'code_ultrafeedback_standard', 'group': 'code_ultrafeedback',
     'kept_model': 'audit_code_ultrafeedback_published',
     'kept_where': 'published_pair_id is not null and is_pair_shaped', 'kept_rows': 'count(*)',
     'destination': 'audit_code_ultrafeedback_published',
     'rejects_model': 'rejects_code_ultrafeedback_standard'},
    {'key': 'rever_judge', 'group': 'rever',
     'kept_model': 'rever_pairs', 'kept_where': 'kept',
     'kept_rows': 'count(chosen_trajectory_id) + count(rejected_trajectory_id)',
     'destination': 'preference_pairs', 'pairs_of': 'rever', 'prompt_key': 'id',
     'rejects_model': 'rejects_rever_judge'},
    {'key': 'rever_rubric', 'group': 'rever',
     'kept_model': 'rever_rubric_items', 'kept_where': 'true', 'kept_rows': 'count(distinct rubric_row_id)',
     'destination': 'rever_rubric_items',
     'rejects_model': 'rejects_rever_rubric'},
] | selectattr('group', 'in', enabled_dataset_groups()) | list %}

with

raw_files as (

    select * from {{ ref('stg_raw__files') }}

),

-- per (dataset, prompt) of preference_pairs: is every pair flagged, and the first flag
pair_flags as (

    select
        dataset,
        prompt_id,
        {%- if train_on_flagged %}
        false as is_all_flagged,
        {%- else %}
        min(case when is_flagged then 1 else 0 end) = 1 as is_all_flagged,
        {%- endif %}
        min(case when is_flagged then {{ list_at('integrity_flags', 0) }} end) as first_flag
    from {{ ref('preference_pairs') }}
    group by 1, 2

),

{% for d in datasets %}
{{ d.key }}_kept as (

    select
        {%- if d.pairs_of %}
        coalesce(pair_flags.is_all_flagged, false) as is_all_flagged,
        pair_flags.first_flag,
        {%- else %}
        false as is_all_flagged,
        cast(null as {{ dbt.type_string() }}) as first_flag,
        {%- endif %}
        kept_model.*
    from {{ ref(d.kept_model) }} as kept_model
    {%- if d.pairs_of %}
    left join pair_flags
        on pair_flags.dataset = '{{ d.pairs_of }}'
        and kept_model.{{ d.prompt_key }} = pair_flags.prompt_id
    {%- endif %}
    where {{ d.kept_where }}

),

{{ d.key }}_outcomes as (

    select
        '{{ d.key }}' as dataset,
        case when is_all_flagged then 'flagged' else 'in_marts' end as outcome,
        case when is_all_flagged then first_flag else '{{ d.destination }}' end as destination,
        {{ d.kept_rows }} as n_rows
    from {{ d.key }}_kept
    group by 1, 2, 3
    union all
    select
        '{{ d.key }}' as dataset,
        'rejected' as outcome,
        reason as destination,
        count(*) as n_rows
    from {{ ref(d.rejects_model) }}
    group by 1, 2, 3

),

{% endfor %}
-- the `extra_datasets` entries: a raw row is kept when it has a pair in preference_pairs (its
-- prompt_id is the raw-row key), else it is in rejects_extra_datasets with the reason
extra_outcomes as (

    select
        pair_flags.dataset,
        case when pair_flags.is_all_flagged then 'flagged' else 'in_marts' end as outcome,
        case when pair_flags.is_all_flagged then pair_flags.first_flag else 'preference_pairs' end as destination,
        count(*) as n_rows
    from pair_flags
    inner join {{ ref('extra_datasets') }} as entries
        on pair_flags.dataset = entries.dataset
    group by 1, 2, 3
    union all
    select
        dataset,
        'rejected' as outcome,
        reason as destination,
        count(*) as n_rows
    from {{ ref('rejects_extra_datasets') }}
    group by 1, 2, 3

),

-- the `eval_sets` entries: every raw row is an item of eval_items
eval_outcomes as (

    select
        eval_set as dataset,
        'in_marts' as outcome,
        'eval_items' as destination,
        count(distinct item_id) as n_rows
    from {{ ref('eval_items') }}
    group by 1, 2, 3

),

outcomes as (

    {% for d in datasets %}
    select * from {{ d.key }}_outcomes
    union all
    {% endfor %}
    select * from extra_outcomes
    union all
    select * from eval_outcomes

),

raw_counts as (

    select
        dataset_key as dataset,
        sum(n_rows) as raw_rows
    from raw_files
    group by 1

),

registry as (

    select dataset_key as dataset, hub_id from {{ ref('dataset_registry') }}
    union all
    select dataset, hub_id from {{ ref('extra_datasets') }}
    union all
    select eval_set as dataset, hub_id from {{ ref('eval_sets') }}

),

final as (

    select
        outcomes.dataset,
        registry.hub_id,
        cast(raw_counts.raw_rows as bigint) as raw_rows,
        outcomes.outcome,
        outcomes.destination,
        cast(outcomes.n_rows as bigint) as n_rows
    from outcomes
    left join raw_counts
        on outcomes.dataset = raw_counts.dataset
    left join registry
        on outcomes.dataset = registry.dataset
    where outcomes.n_rows > 0

)

select * from final
