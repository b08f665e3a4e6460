-- Judge agreement: among matched pairs where the two UltraFeedback scores prefer different
-- responses, which one the ReVeR rubric judge sides with (neither: a tie or no verdict). One row
-- per side, in the order the chart lists them (sort_order); none when judge_agreement_summary is
-- empty.
{{ config(enabled=dataset_enabled('ultrafeedback') and dataset_enabled('rever')) }}

with

agreement_summary as (

    select * from {{ ref('judge_agreement_summary').include(database=False) }}

),

average_rating as (

    select
        1 as sort_order,
        'average rating (fixed)' as judge_sides_with,
        n_disagreements_judge_sides_with_average_rating as n_pairs
    from agreement_summary

),

overall_score as (

    select
        2 as sort_order,
        'overall_score (buggy)' as judge_sides_with,
        n_disagreements_judge_sides_with_overall_score as n_pairs
    from agreement_summary

),

neither as (

    select
        3 as sort_order,
        'neither (tie or no verdict)' as judge_sides_with,
        coalesce(n_ratings_disagree, 0)
        - coalesce(n_disagreements_judge_sides_with_average_rating, 0)
        - coalesce(n_disagreements_judge_sides_with_overall_score, 0) as n_pairs
    from agreement_summary

),

final as (

    select * from average_rating
    union all
    select * from overall_score
    union all
    select * from neither

)

select * from final
