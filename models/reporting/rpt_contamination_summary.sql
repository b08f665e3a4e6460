-- The report's dataset x eval set table: the rows of contamination_summary with the eval set's
-- registry order and the limit its exceeds_limit compares with.

with

contamination_summary as (

    select * from {{ ref('contamination_summary').include(database=False) }}

),

eval_sets as (

    select * from {{ ref('eval_sets').include(database=False) }}

),

final as (

    select
        contamination_summary.dataset,
        contamination_summary.eval_set,
        eval_sets.registry_order,
        contamination_summary.n_eval_items,
        contamination_summary.n_eval_items_matched,
        contamination_summary.pct_eval_set_matched,
        contamination_summary.n_prompts_matched,
        contamination_summary.n_pairs_flagged,
        contamination_summary.exceeds_limit,
        eval_sets.max_eval_share
    from contamination_summary
    inner join eval_sets
        on contamination_summary.eval_set = eval_sets.eval_set

)

select * from final
