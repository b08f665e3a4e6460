-- The corrected pairs: for each raw coseal row, every unordered pair of two responses that
-- both have a valid integer rating (1..5) and different ratings; chosen is the higher. In the
-- training format (prompt = [user], chosen/rejected = [assistant]) with a margin and the
-- dataset's own checks of the pair (dataset_flags); preference_pairs adds the checks every
-- dataset gets, and code_ultrafeedback_pairs takes the pair's flags from there.
{%- set scale = builtin_score_ranges()['code_ultrafeedback'] %}

with

pairs as (

    select * from {{ ref('int_code_ultrafeedback__response_pairs_enumerated').include(database=False) }}
    where
        rating_a is not null
        and rating_b is not null
        and rating_a != rating_b

),

prompts as (

    select
        prompt_id,
        preference,
        instruction,
        responses as response_list
    from {{ ref('stg_code_ultrafeedback__prompts').include(database=False) }}

),

quarantine as (

    select
        prompt_id,
        reason as quarantine_reason
    from {{ ref('int_code_ultrafeedback__prompts_quarantined').include(database=False) }}

),

-- models that answer more than once in a row: which rating is whose is ambiguous
duplicate_models as (

    select
        prompt_id,
        model
    from {{ ref('int_code_ultrafeedback__responses_rated').include(database=False) }}
    where model is not null
    group by prompt_id, model
    having count(*) > 1

),

oriented as (

    select
        pair_id,
        prompt_id,
        case when rating_a > rating_b then response_index_a else response_index_b end as chosen_response_index,
        case when rating_a > rating_b then response_index_b else response_index_a end as rejected_response_index,
        case when rating_a > rating_b then model_a else model_b end as chosen_model,
        case when rating_a > rating_b then model_b else model_a end as rejected_model,
        case when rating_a > rating_b then rating_a else rating_b end as chosen_rating,
        case when rating_a > rating_b then rating_b else rating_a end as rejected_rating
    from pairs

),

messages as (

    select
        ---------- keys
        oriented.pair_id,
        oriented.prompt_id,

        ---------- pair
        prompts.preference,
        oriented.chosen_model,
        oriented.rejected_model,
        oriented.chosen_response_index,
        oriented.rejected_response_index,
        oriented.chosen_rating,
        oriented.rejected_rating,
        oriented.chosen_rating - oriented.rejected_rating as score_margin,
        {{ margin('oriented.chosen_rating - oriented.rejected_rating', scale.score_min, scale.score_max) }} as margin,

        ---------- training format: [user] prompt, [assistant] chosen / rejected
        {{ chat_messages([('user', 'prompts.instruction')]) }} as prompt,
        {{ chat_messages([('assistant',
            list_at('prompts.response_list', 'oriented.chosen_response_index') ~ '.response')]) }} as chosen,
        {{ chat_messages([('assistant',
            list_at('prompts.response_list', 'oriented.rejected_response_index') ~ '.response')]) }} as rejected,

        ---------- the dataset's own checks of the pair
        {{ list_concat(
            flag_list([
                ('chosen_duplicate.model is not null or rejected_duplicate.model is not null', 'duplicate_model'),
            ]),
            "case when quarantine.prompt_id is not null then "
                ~ make_list(["'quarantined_' || quarantine.quarantine_reason"]) ~ " end"
        ) }} as dataset_flags

    from oriented
    inner join prompts
        on oriented.prompt_id = prompts.prompt_id
    left join quarantine
        on oriented.prompt_id = quarantine.prompt_id
    left join duplicate_models as chosen_duplicate
        on oriented.prompt_id = chosen_duplicate.prompt_id
        and oriented.chosen_model = chosen_duplicate.model
    left join duplicate_models as rejected_duplicate
        on oriented.prompt_id = rejected_duplicate.prompt_id
        and oriented.rejected_model = rejected_duplicate.model

)

select * from messages
