-- Where every raw row went: per raw dataset, the raw row count, the rows that reach the
-- training pairs, the rows whose pairs are all flagged by an integrity check (kept out of the
-- training split, by flag) and the rows rejected, by reason. The test row_accounting_balances
-- fails the build when, for any dataset, the three don't add up to the raw rows.
{%- set parts = [] %}

with

-- per raw prompt with pairs: does any of its pairs reach a training split; else its first flag
pair_outcomes as (

    select
        dataset,
        prompt_id,
        case when max(case when split = dataset then 1 else 0 end) = 1 then 'in_marts' else 'flagged' end as outcome,
        case
            when max(case when split = dataset then 1 else 0 end) = 1 then 'preference_pairs'
            else min({{ list_at('integrity_flags', 0) }})
        end as destination
    from {{ ref('preference_pairs') }}
    group by dataset, prompt_id

),

{% if dataset_enabled('ultrafeedback') -%}
{%- do parts.append('ultrafeedback') %}
ultrafeedback as (

    select 'ultrafeedback' as dataset_key, outcome, destination, count(*) as n_rows
    from pair_outcomes
    where dataset = 'ultrafeedback'
    group by outcome, destination
    union all
    select 'ultrafeedback' as dataset_key, 'rejected' as outcome, reason as destination, count(*) as n_rows
    from {{ ref('rejects_ultrafeedback') }}
    group by reason
    union all
    select 'ultrafeedback' as dataset_key, 'raw' as outcome, 'stg_ultrafeedback__prompts' as destination, count(*) as n_rows
    from {{ ref('stg_ultrafeedback__prompts') }}

),

{% endif -%}
{% if dataset_enabled('code_ultrafeedback') -%}
{%- do parts.append('code_ultrafeedback') %}
code_ultrafeedback as (

    select 'code_ultrafeedback' as dataset_key, outcome, destination, count(*) as n_rows
    from pair_outcomes
    where dataset = 'code_ultrafeedback'
    group by outcome, destination
    union all
    select 'code_ultrafeedback' as dataset_key, 'rejected' as outcome, reason as destination, count(*) as n_rows
    from {{ ref('rejects_code_ultrafeedback') }}
    group by reason
    union all
    select 'code_ultrafeedback' as dataset_key, 'raw' as outcome, 'stg_code_ultrafeedback__prompts' as destination, count(*) as n_rows
    from {{ ref('stg_code_ultrafeedback__prompts') }}
    union all
    select
        'code_ultrafeedback_standard' as dataset_key,
        'in_marts' as outcome,
        'audit_code_ultrafeedback_published' as destination,
        count(*) as n_rows
    from {{ ref('stg_code_ultrafeedback__published_pairs') }} as published
    where
        published.published_pair_id in (
            select audited.published_pair_id from {{ ref('audit_code_ultrafeedback_published') }} as audited
        )
        and published.n_chosen_messages = 2
        and published.n_rejected_messages = 2
    union all
    select 'code_ultrafeedback_standard' as dataset_key, 'rejected' as outcome, reason as destination, count(*) as n_rows
    from {{ ref('rejects_code_ultrafeedback_standard') }}
    group by reason
    union all
    select
        'code_ultrafeedback_standard' as dataset_key,
        'raw' as outcome,
        'stg_code_ultrafeedback__published_pairs' as destination,
        count(*) as n_rows
    from {{ ref('stg_code_ultrafeedback__published_pairs') }}

),

{% endif -%}
{% if dataset_enabled('rever') -%}
{%- do parts.append('rever') %}
rever as (

    select 'rever_judge' as dataset_key, pair_outcomes.outcome, pair_outcomes.destination, count(*) as n_rows
    from {{ ref('rever_trajectories') }} as trajectories
    inner join pair_outcomes
        on trajectories.id = pair_outcomes.prompt_id
        and pair_outcomes.dataset = 'rever'
    where trajectories.is_pair_member
    group by pair_outcomes.outcome, pair_outcomes.destination
    union all
    select 'rever_judge' as dataset_key, 'rejected' as outcome, reason as destination, count(*) as n_rows
    from {{ ref('rejects_rever_judge') }}
    group by reason
    union all
    select 'rever_judge' as dataset_key, 'raw' as outcome, 'stg_rever__trajectories' as destination, count(*) as n_rows
    from {{ ref('stg_rever__trajectories') }}
    union all
    select
        'rever_rubric' as dataset_key,
        'in_marts' as outcome,
        'rever_rubric_items' as destination,
        count(distinct rubric_row_id) as n_rows
    from {{ ref('rever_rubric_items') }}
    union all
    select 'rever_rubric' as dataset_key, 'rejected' as outcome, reason as destination, count(*) as n_rows
    from {{ ref('rejects_rever_rubric') }}
    group by reason
    union all
    select 'rever_rubric' as dataset_key, 'raw' as outcome, 'stg_rever__rubrics' as destination, count(*) as n_rows
    from {{ ref('stg_rever__rubrics') }}

),

{% endif -%}
unioned as (

    {% for part in parts %}
    select * from {{ part }}
    {% if not loop.last %}union all{% endif %}
    {% endfor %}

),

raw_counts as (

    select dataset_key, n_rows as raw_rows from unioned where outcome = 'raw'

),

registry as (

    select * from {{ ref('dataset_registry') }}

),

final as (

    select
        unioned.dataset_key,
        registry.hub_id,
        raw_counts.raw_rows,
        unioned.outcome,
        unioned.destination,
        cast(unioned.n_rows as bigint) as n_rows
    from unioned
    inner join raw_counts on unioned.dataset_key = raw_counts.dataset_key
    left join registry on unioned.dataset_key = registry.dataset_key
    where unioned.outcome != 'raw'

)

select * from final
