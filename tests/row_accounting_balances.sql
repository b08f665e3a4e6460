-- Nothing lost, nothing counted twice: for each raw dataset, the rows its marts keep plus the
-- rows its rejects model names equal the rows of its Parquet files (stg_raw__files reads the
-- count from the files, not through staging). Kept and rejected are two independent rules, so
-- a row both claim, or neither, or a row lost or duplicated by a join, breaks the balance.
-- Also fails when a raw dataset has rows but no accounting at all. Returns the datasets that
-- don't balance.
with

accounting as (

    select * from {{ ref('row_accounting') }}

),

raw_files as (

    select * from {{ ref('stg_raw__files') }}

),

raw_counts as (

    select
        dataset_key as dataset,
        sum(n_rows) as raw_rows
    from raw_files
    group by dataset_key

),

accounted as (

    select
        dataset,
        sum(n_rows) as accounted_rows
    from accounting
    group by dataset

),

compared as (

    select
        coalesce(raw_counts.dataset, accounted.dataset) as dataset,
        coalesce(raw_counts.raw_rows, 0) as raw_rows,
        coalesce(accounted.accounted_rows, 0) as accounted_rows
    from raw_counts
    full outer join accounted
        on raw_counts.dataset = accounted.dataset

)

select *
from compared
where raw_rows != accounted_rows
