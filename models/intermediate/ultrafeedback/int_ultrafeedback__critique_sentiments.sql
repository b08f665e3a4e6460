-- One row per raw row x completion: VADER compound sentiment of the critique, looked up by
-- md5(critique) in int_ultrafeedback__critique_sentiment_scores (each distinct critique is
-- scored once, and only once across builds: that model is incremental). NULL for a NULL or
-- blank critique. On Spark, models/spark/ holds the version of this model that scores in place.
with

completions as (

    select prompt_id, completion_index, critique_md5
    from {{ ref('int_ultrafeedback__completions_parsed') }}

),

scores as (

    select critique_md5, critique_sentiment
    from {{ ref('int_ultrafeedback__critique_sentiment_scores') }}

)

select
    completions.prompt_id,
    completions.completion_index,
    scores.critique_sentiment
from completions
left join scores
    on completions.critique_md5 = scores.critique_md5
