-- ReVeR: scored pairs per source x decided_by x score_margin bin (0.25 wide), for the score
-- margin histograms. Unscored pairs (score_margin NULL) are counted in rpt_rever_unscored.
{{ config(enabled=dataset_enabled('rever')) }}

with

rever_pairs as (

    select * from {{ ref('rever_pairs').include(database=False) }}

),

scored as (

    select
        coalesce(source, '(no source)') as source,
        decided_by,
        floor(score_margin * 4) / 4 as score_margin_bin_start
    from rever_pairs
    where score_margin is not null

),

final as (

    select
        source,
        decided_by,
        cast(score_margin_bin_start as double) as score_margin_bin_start,
        cast(score_margin_bin_start + 0.25 as double) as score_margin_bin_end,
        count(*) as n_pairs
    from scored
    group by source, decided_by, score_margin_bin_start

)

select * from final
