-- Spark's version of models/intermediate/ultrafeedback/int_ultrafeedback__critique_sentiments.sql
-- and the Python model it joins (int_ultrafeedback__critique_sentiment_scores.py), enabled only
-- on Spark, where dbt Python models cannot run (both are disabled there).
-- Same grain, columns, rule and values: one row per raw row x completion, VADER compound
-- score of the critique (NULL for a NULL or blank critique), each distinct critique scored once
-- by the vaderSentiment package through Spark's script transformation (spark_vader_compound).
-- Documented and tested by the DuckDB model's entry in _ultrafeedback__models.yml.
with

completions as (

    select prompt_id, completion_index, critique
    from {{ ref('int_ultrafeedback__completion_texts') }}

),

distinct_critiques as (

    select md5(critique) as critique_md5, first(critique) as critique
    from completions
    where critique is not null
    group by md5(critique)

),

scored as (

    {{ spark_vader_compound('distinct_critiques', 'critique_md5', 'critique') }}

),

final as (

    select
        completions.prompt_id,
        completions.completion_index,
        scored.critique_sentiment
    from completions
    left join scored
        on md5(completions.critique) = scored.critique_md5

)

select * from final
