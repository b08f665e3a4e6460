-- One row per (dataset, eval set): every dataset of this build (the enabled built-in groups and
-- the `extra_datasets` entries) against every registered eval set, zeros included. An eval set
-- counts as reached by a dataset when more than `max_eval_share` percent of its items match one of
-- the dataset's prompts (docs/decontamination.md).
{%- set settings = contamination_settings() %}
{%- set datasets = build_dataset_names() %}
{%- set string = dbt.type_string() %}

with

datasets as (

    {% for name in datasets %}
    select '{{ name }}' as dataset, {{ loop.index0 }} as dataset_order
    {% if not loop.last %}union all{% endif %}
    {% endfor %}

),

eval_sets as (

    select
        eval_set,
        count(distinct item_id) as n_eval_items
    from {{ ref('eval_items') }}
    group by eval_set

),

matched as (

    select
        dataset,
        eval_set,
        count(distinct item_id) as n_eval_items_matched,
        count(distinct prompt_id) as n_prompts_matched
    from {{ ref('contamination_matches') }}
    group by dataset, eval_set

),

flagged as (

    select
        prompts.dataset,
        prompts.eval_set,
        count(*) as n_pairs_flagged
    from (
        select distinct dataset, eval_set, prompt_id
        from {{ ref('contamination_matches') }}
    ) as prompts
    inner join {{ ref('preference_pairs') }} as pairs
        on prompts.dataset = pairs.dataset and prompts.prompt_id = pairs.prompt_id
    group by prompts.dataset, prompts.eval_set

),

counted as (

    select
        datasets.dataset,
        eval_sets.eval_set,
        eval_sets.n_eval_items,
        coalesce(matched.n_eval_items_matched, 0) as n_eval_items_matched,
        case when eval_sets.n_eval_items > 0
            then cast(100 as double) * coalesce(matched.n_eval_items_matched, 0) / eval_sets.n_eval_items
            else 0.0
        end as pct_eval_set_matched,
        coalesce(matched.n_prompts_matched, 0) as n_prompts_matched,
        coalesce(flagged.n_pairs_flagged, 0) as n_pairs_flagged
    from datasets
    cross join eval_sets
    left join matched
        on datasets.dataset = matched.dataset and eval_sets.eval_set = matched.eval_set
    left join flagged
        on datasets.dataset = flagged.dataset and eval_sets.eval_set = flagged.eval_set

)

select
    dataset,
    eval_set,
    cast(n_eval_items as bigint) as n_eval_items,
    cast(n_eval_items_matched as bigint) as n_eval_items_matched,
    cast(pct_eval_set_matched as double) as pct_eval_set_matched,
    cast(n_prompts_matched as bigint) as n_prompts_matched,
    cast(n_pairs_flagged as bigint) as n_pairs_flagged,
    pct_eval_set_matched > cast({{ settings.max_eval_share }} as double) as exceeds_limit
from counted
