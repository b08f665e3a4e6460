{{ config(enabled=dataset_enabled('ultrafeedback') and dataset_enabled('rever')) }}
-- Agreement rates over judge_agreement: does the rubric judge side with UltraFeedback's
-- recomputed average rating or with its buggy overall_score? One row.
with

rever_pairs as (

    select * from {{ ref('rever_pairs') }}

),

judge_agreement as (

    select * from {{ ref('judge_agreement') }}

),

rever_ultrafeedback as (

    select count(*) as n_rever_ultrafeedback_pairs
    from rever_pairs
    where source = 'ultrafeedback'

),

counts as (

    select
        count(*) as n_matched_pairs,
        cast(sum(case when average_rating_prefers in ('chosen', 'rejected') and judge_prefers in ('chosen', 'rejected') then 1 else 0 end) as bigint)
            as n_decisive_average_rating,
        cast(sum(case when judge_agrees_with_average_rating then 1 else 0 end) as bigint) as n_judge_agrees_with_average_rating,
        cast(sum(case when overall_score_prefers in ('chosen', 'rejected') and judge_prefers in ('chosen', 'rejected') then 1 else 0 end) as bigint)
            as n_decisive_overall_score,
        cast(sum(case when judge_agrees_with_overall_score then 1 else 0 end) as bigint) as n_judge_agrees_with_overall_score,
        cast(sum(case when ratings_disagree then 1 else 0 end) as bigint) as n_ratings_disagree,
        cast(sum(case when ratings_disagree and judge_agrees_with_average_rating then 1 else 0 end) as bigint) as n_disagreements_judge_sides_with_average_rating,
        cast(sum(case when ratings_disagree and judge_agrees_with_overall_score then 1 else 0 end) as bigint) as n_disagreements_judge_sides_with_overall_score
    from judge_agreement

),

final as (

    select
        rever_ultrafeedback.n_rever_ultrafeedback_pairs,
        counts.n_matched_pairs,
        counts.n_decisive_average_rating,
        counts.n_judge_agrees_with_average_rating,
        counts.n_judge_agrees_with_average_rating / nullif(cast(counts.n_decisive_average_rating as double), 0)
            as judge_agreement_rate_with_average_rating,
        counts.n_decisive_overall_score,
        counts.n_judge_agrees_with_overall_score,
        counts.n_judge_agrees_with_overall_score / nullif(cast(counts.n_decisive_overall_score as double), 0)
            as judge_agreement_rate_with_overall_score,
        counts.n_ratings_disagree,
        counts.n_disagreements_judge_sides_with_average_rating,
        counts.n_disagreements_judge_sides_with_overall_score
    from counts
    cross join rever_ultrafeedback

)

select * from final
