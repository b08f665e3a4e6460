-- One row per raw row x completion: the completion's two long texts (response, critique), read
-- from the raw Parquet through the staging view. The one place the intermediate layer keeps
-- them: every other UltraFeedback model carries keys, and the models that publish a text join
-- it here, by (prompt_id, completion_index), as their last step. A table, not a view: the
-- completions list is one nested Parquet column, read whole by each reader of a view (about 8 s
-- a read at scale 1.0); here it is read once. Same list positions as
-- int_ultrafeedback__completions_parsed (the same explode of the same list).

with

prompts as (

    select
        prompt_id,
        completions
    from {{ ref('stg_ultrafeedback__prompts') }}

),

unnested as (

    select
        prompt_id,
        {{ explode_with_index('completions', 'completion_index', 'completion') }}
    from prompts

)

select
    prompt_id,
    cast(completion_index as integer) as completion_index,
    completion.response as response,  -- noqa: AL09
    completion.critique as critique  -- noqa: AL09
from unnested
