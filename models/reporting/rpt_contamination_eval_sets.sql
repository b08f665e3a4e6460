-- The report's list of the eval sets this build checked the training prompts against: one row per
-- entry of meta.eval_sets (registry order), with the rule's settings and the eval set's items.

with

eval_sets as (

    select * from {{ ref('eval_sets').include(database=False) }}

),

eval_items as (

    select * from {{ ref('eval_items').include(database=False) }}

),

items as (

    select
        eval_set,
        count(distinct item_id) as n_eval_items
    from eval_items
    group by eval_set

),

final as (

    select
        eval_sets.registry_order,
        eval_sets.eval_set,
        eval_sets.hub_id,
        eval_sets.config,
        eval_sets.splits,
        eval_sets.fields,
        eval_sets.ngram,
        eval_sets.threshold,
        eval_sets.max_eval_share,
        coalesce(items.n_eval_items, 0) as n_eval_items
    from eval_sets
    left join items
        on eval_sets.eval_set = items.eval_set

)

select * from final
