-- Every raw row is accounted for exactly once: for each raw dataset, rows that reach the
-- marts plus rows rejected (with a reason) equal the raw rows; and no reject is 'unexplained'.
-- Returns the datasets that don't balance.
with

accounting as (

    select * from {{ ref('row_accounting') }}

),

by_dataset as (

    select
        dataset_key,
        max(raw_rows) as raw_rows,
        sum(n_rows) as accounted_rows,
        sum(case when destination = 'unexplained' then n_rows else 0 end) as unexplained_rows
    from accounting
    group by dataset_key

)

select *
from by_dataset
where raw_rows != accounted_rows or unexplained_rows > 0
