-- The report's margin histogram of each scored `extra_datasets` entry: its pairs with a margin
-- (margin = score difference / width of the entry's score_range, so comparable across entries)
-- per bin of 0.1, clean and flagged pairs apart.

with

extra_pairs as (

    select * from {{ ref('rpt_extra_pairs').include(database=False) }}

),

scored as (

    select
        dataset,
        case when is_flagged then 'flagged' else 'clean' end as pairs,
        floor(margin * 10) / 10 as margin_bin_start
    from extra_pairs
    where margin is not null

),

final as (

    select
        dataset,
        pairs,
        cast(margin_bin_start as double) as margin_bin_start,
        cast(margin_bin_start + 0.1 as double) as margin_bin_end,
        count(*) as n_pairs
    from scored
    group by dataset, pairs, margin_bin_start

)

select * from final
