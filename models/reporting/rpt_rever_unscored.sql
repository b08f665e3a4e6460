-- ReVeR: pairs with a side without a score (left out of the margin histograms), for the note
-- under them. One row.
{{ config(enabled=dataset_enabled('rever')) }}

with

rever_pairs as (

    select * from {{ ref('rever_pairs').include(database=False) }}

),

final as (

    select
        count(case when score_margin is null then 1 end) as n_unscored,
        count(*) as n_pairs
    from rever_pairs

)

select * from final
