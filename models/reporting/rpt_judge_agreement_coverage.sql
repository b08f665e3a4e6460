-- Judge agreement: how many ReVeR ultrafeedback pairs matched an UltraFeedback prompt and both
-- its completions, for the note under the chart. One row (none when judge_agreement_summary is
-- empty).
{{ config(enabled=dataset_enabled('ultrafeedback') and dataset_enabled('rever')) }}

with

agreement_summary as (

    select * from {{ ref('judge_agreement_summary').include(database=False) }}

),

final as (

    select
        n_matched_pairs,
        n_rever_ultrafeedback_pairs
    from agreement_summary

)

select * from final
