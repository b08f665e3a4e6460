-- One row per two datasets of this build (dataset_a at or before dataset_b in dataset order, the
-- same dataset included; the enabled built-in groups, then the `extra_datasets` entries), zeros
-- included: the near-duplicate prompt pairs, same comparisons and label conflicts between them
-- (near_duplicate_prompts, near_duplicate_pairs).
{%- set datasets = build_dataset_names() %}

with

datasets as (

    {% for name in datasets %}
    select '{{ name }}' as dataset, {{ loop.index0 }} as dataset_order
    {% if not loop.last %}union all{% endif %}
    {% endfor %}

),

dataset_pairs as (

    select
        datasets_a.dataset as dataset_a,
        datasets_b.dataset as dataset_b,
        datasets_a.dataset_order as dataset_order_a,
        datasets_b.dataset_order as dataset_order_b
    from datasets as datasets_a
    inner join datasets as datasets_b
        on datasets_a.dataset_order <= datasets_b.dataset_order

),

prompt_pairs as (

    select
        dataset_a,
        dataset_b,
        count(*) as n_prompt_pairs
    from {{ ref('near_duplicate_prompts') }}
    group by dataset_a, dataset_b

),

pair_relations as (

    select
        dataset_a,
        dataset_b,
        sum(case when relation = 'same_comparison' then 1 else 0 end) as n_same_comparison,
        sum(case when relation = 'label_conflict' then 1 else 0 end) as n_label_conflicts
    from {{ ref('near_duplicate_pairs') }}
    group by dataset_a, dataset_b

),

final as (

    select
        dataset_pairs.dataset_a,
        dataset_pairs.dataset_b,
        coalesce(prompt_pairs.n_prompt_pairs, 0) as n_prompt_pairs,
        cast(coalesce(pair_relations.n_same_comparison, 0) as bigint) as n_same_comparison,
        cast(coalesce(pair_relations.n_label_conflicts, 0) as bigint) as n_label_conflicts
    from dataset_pairs
    left join prompt_pairs
        on dataset_pairs.dataset_a = prompt_pairs.dataset_a and dataset_pairs.dataset_b = prompt_pairs.dataset_b
    left join pair_relations
        on dataset_pairs.dataset_a = pair_relations.dataset_a and dataset_pairs.dataset_b = pair_relations.dataset_b

)

select * from final
