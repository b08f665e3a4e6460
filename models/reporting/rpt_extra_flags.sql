-- The report's flags-by-kind chart of each `extra_datasets` entry: its flagged pairs per
-- integrity flag (a pair with several flags counts under each).

with

extra_pairs as (

    select * from {{ ref('rpt_extra_pairs').include(database=False) }}

),

flags as (

    select
        dataset,
        {{ explode_with_index('integrity_flags', 'flag_index', 'flag') }}
    from extra_pairs
    where is_flagged

),

final as (

    select
        dataset,
        flag,
        count(*) as n_pairs
    from flags
    group by dataset, flag

)

select * from final
