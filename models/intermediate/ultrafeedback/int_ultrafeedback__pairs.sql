-- One row per raw row with a preference pair (has_pair): the best-rated completion (chosen) vs
-- its random alternate (rejected), in preference_pairs' columns. preference_pairs adds the
-- checks every dataset gets.
{%- set scale = builtin_score_ranges()['ultrafeedback'] %}

with

picks as (

    select * from {{ ref('int_ultrafeedback__prompts_picked').include(database=False) }}
    where has_pair

),

prompts as (

    select
        prompt_id,
        instruction
    from {{ ref('stg_ultrafeedback__prompts').include(database=False) }}

),

completion_texts as (

    select
        prompt_id,
        completion_index,
        response
    from {{ ref('int_ultrafeedback__completion_texts').include(database=False) }}

),

-- the two picks' texts, one pass over the completions
pair_texts as (

    select
        picks.prompt_id,
        max(case
            when completion_texts.completion_index = picks.best_rated_index
                then completion_texts.response
        end) as chosen_response,
        max(case
            when completion_texts.completion_index = picks.random_for_best_rated_index
                then completion_texts.response
        end) as rejected_response
    from picks
    inner join completion_texts
        on
            picks.prompt_id = completion_texts.prompt_id
            and completion_texts.completion_index in (picks.best_rated_index, picks.random_for_best_rated_index)
    group by picks.prompt_id

),

final as (

    select
        picks.prompt_id,
        picks.source,
        {{ chat_messages([('user', 'prompts.instruction')]) }} as prompt,
        {{ chat_messages([('assistant', 'pair_texts.chosen_response')]) }} as chosen,
        {{ chat_messages([('assistant', 'pair_texts.rejected_response')]) }} as rejected,
        picks.best_rated_model as chosen_model,
        picks.random_response_for_best_rated_model as rejected_model,
        picks.score_best_rated as chosen_score,
        picks.score_random_response_for_best_rated as rejected_score,
        '{{ scale.score_kind }}' as score_kind,
        picks.score_best_rated - picks.score_random_response_for_best_rated as score_margin,
        {{ margin('picks.score_best_rated - picks.score_random_response_for_best_rated',
                  scale.score_min, scale.score_max) }} as margin,
        picks.dataset_flags
    from picks
    inner join prompts
        on picks.prompt_id = prompts.prompt_id
    inner join pair_texts
        on picks.prompt_id = pair_texts.prompt_id

)

select * from final
