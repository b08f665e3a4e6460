-- The report's headline numbers over all datasets: training pairs in preference_pairs, by
-- dataset. One row.

with

preference_pairs as (

    select * from {{ ref('preference_pairs').include(database=False) }}

),

final as (

    select
        count(*) as n_pairs,
        count(case when dataset = 'ultrafeedback' then 1 end) as n_ultrafeedback,
        count(case when dataset = 'code_ultrafeedback' then 1 end) as n_code_ultrafeedback,
        count(case when dataset = 'rever' then 1 end) as n_rever
    from preference_pairs

)

select * from final
