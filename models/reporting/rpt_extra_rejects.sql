-- The report's rejects-by-reason chart of each `extra_datasets` entry: its raw rows that became
-- no pair, by reason (the `rejected` rows of its block of row_accounting, i.e. the rows of
-- rejects_extra_datasets).

with

entries as (

    select * from {{ ref('extra_datasets').include(database=False) }}

),

row_accounting as (

    select * from {{ ref('row_accounting').include(database=False) }}

),

final as (

    select
        row_accounting.dataset,
        row_accounting.destination as reason,
        cast(sum(row_accounting.n_rows) as bigint) as n_rows
    from row_accounting
    inner join entries
        on row_accounting.dataset = entries.dataset
    where row_accounting.outcome = 'rejected'
    group by row_accounting.dataset, row_accounting.destination

)

select * from final
