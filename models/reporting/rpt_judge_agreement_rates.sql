-- Judge agreement: how often the ReVeR rubric judge agrees with each UltraFeedback score, among
-- the matched pairs where that score has a strict preference. One row per score (none when
-- judge_agreement_summary is empty).
{{ config(enabled=dataset_enabled('ultrafeedback') and dataset_enabled('rever')) }}

with

agreement_summary as (

    select * from {{ ref('judge_agreement_summary').include(database=False) }}

),

average_rating as (

    select
        'average rating (fixed)' as score,
        n_decisive_average_rating as n_decisive,
        n_judge_agrees_with_average_rating as n_agree,
        judge_agreement_rate_with_average_rating as agreement_rate
    from agreement_summary

),

overall_score as (

    select
        'overall_score (buggy)' as score,
        n_decisive_overall_score as n_decisive,
        n_judge_agrees_with_overall_score as n_agree,
        judge_agreement_rate_with_overall_score as agreement_rate
    from agreement_summary

),

final as (

    select * from average_rating
    union all
    select * from overall_score

)

select * from final
