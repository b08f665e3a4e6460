-- Which completions carry overall_score 10 but a recomputed average_rating <= 2 (the
-- overall_score bug), most negative critique first? A strongly negative critique beside a 10
-- is the bug's signature.
-- Run:  dbt show -s uf_overall_score_10_low_rating --limit 50
--   or  dbt compile -s uf_overall_score_10_low_rating, then run the SQL in
--       target/compiled/.../uf_overall_score_10_low_rating.sql against the warehouse.
with

completions as (

    select * from {{ ref('ultrafeedback_completion_scores').include(database=False) }}

),

flagged as (

    select
        prompt_id,
        source_file,
        source_row,
        source,
        completion_index,
        model,
        overall_score,
        average_rating,
        helpfulness_rating,
        honesty_rating,
        instruction_following_rating,
        truthfulness_rating,
        critique_sentiment,
        is_best_overall,
        is_best_rated,
        critique
    from completions
    where overall_score = 10
        and average_rating <= 2

)

select * from flagged
order by critique_sentiment asc nulls last, prompt_id asc, completion_index asc
