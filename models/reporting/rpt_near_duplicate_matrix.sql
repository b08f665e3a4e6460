-- The report's dataset x dataset matrix of near duplicates: the rows of near_duplicate_summary
-- (dataset_a at or before dataset_b, the same dataset included, zeros included) with each
-- dataset's position in dataset order. near_duplicate_summary has a row (x, d) for every dataset
-- x at or before d, so d's 0-based position is its rows as dataset_b, less one.

with

near_duplicate_summary as (

    select * from {{ ref('near_duplicate_summary').include(database=False) }}

),

dataset_orders as (

    select
        dataset_b as dataset,
        count(*) - 1 as dataset_order
    from near_duplicate_summary
    group by dataset_b

),

final as (

    select
        near_duplicate_summary.dataset_a,
        near_duplicate_summary.dataset_b,
        orders_a.dataset_order as dataset_order_a,
        orders_b.dataset_order as dataset_order_b,
        near_duplicate_summary.n_prompt_pairs,
        near_duplicate_summary.n_same_comparison,
        near_duplicate_summary.n_label_conflicts
    from near_duplicate_summary
    inner join dataset_orders as orders_a
        on near_duplicate_summary.dataset_a = orders_a.dataset
    inner join dataset_orders as orders_b
        on near_duplicate_summary.dataset_b = orders_b.dataset

)

select * from final
