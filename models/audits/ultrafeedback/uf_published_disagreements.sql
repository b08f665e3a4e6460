-- Which of argilla's published columns disagree with this warehouse's recomputation, row by
-- row: the picks, their scores, the flag, the per-completion average_rating, and published
-- random alternates that are not another completion or break the lower-score rule.
-- `what_disagrees` lists the failing checks. Per-completion detail of an average_rating
-- mismatch: ultrafeedback_completion_scores (average_rating vs published_average_rating).
-- Run:  dbt show -s uf_published_disagreements --limit 50
--   or  dbt compile -s uf_published_disagreements and query the compiled SQL.
{%- set checks = [
    'best_rated_model_agrees', 'score_best_rated_agrees', 'best_overall_model_agrees',
    'score_best_overall_agrees', 'best_rated_is_different_from_best_overall_agrees',
    'average_ratings_agree', 'published_random_for_best_rated_is_other_completion',
    'published_random_for_best_rated_obeys_rule', 'score_random_response_for_best_rated_agrees',
    'published_random_for_best_overall_is_other_completion',
    'published_random_for_best_overall_obeys_rule', 'score_random_response_for_best_overall_agrees',
] %}
with

audit as (

    select * from {{ ref('audit_ultrafeedback_published').include(database=False) }}

),

labelled as (

    select
        *,
        concat_ws(', '
            {%- for c in checks %},
            case when not {{ c }} then '{{ c | replace("_agrees", "") | replace("_agree", "") }}' end
            {%- endfor %}
        ) as what_disagrees
    from audit

)

select
    prompt_id,
    source_file,
    source_row,
    what_disagrees,
    published_best_rated_model,
    best_rated_model,
    published_score_best_rated,
    score_best_rated,
    published_best_overall_model,
    best_overall_model,
    published_score_best_overall,
    score_best_overall,
    published_best_rated_is_different_from_best_overall,
    best_rated_is_different_from_best_overall,
    n_average_rating_mismatches,
    published_random_response_for_best_rated_model,
    published_random_for_best_rated_index,
    published_random_response_for_best_overall_model,
    published_random_for_best_overall_index
from labelled
where what_disagrees <> ''
order by source_file asc, source_row asc
