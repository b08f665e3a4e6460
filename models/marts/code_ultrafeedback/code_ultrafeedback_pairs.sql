-- The corrected pairs: for each raw coseal row, every unordered pair of two responses that
-- both have a valid integer rating (1..5) and different ratings; chosen is the higher.
with

pairs as (

    select * from {{ ref('int_code_ultrafeedback__response_pairs_enumerated') }}
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
    from {{ ref('stg_code_ultrafeedback__prompts') }}

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
        'code-' || prompts.preference as preference,
        oriented.chosen_model,
        oriented.rejected_model,
        oriented.chosen_response_index,
        oriented.rejected_response_index,
        oriented.chosen_rating,
        oriented.rejected_rating,
        oriented.chosen_rating - oriented.rejected_rating as margin,

        ---------- published shape: [{content, role}] user prompt then assistant response
        {{ chat_pair('prompts.instruction',
                     list_at('prompts.response_list', 'oriented.chosen_response_index') ~ '.response',
                     field_order=('content', 'role')) }} as chosen,
        {{ chat_pair('prompts.instruction',
                     list_at('prompts.response_list', 'oriented.rejected_response_index') ~ '.response',
                     field_order=('content', 'role')) }} as rejected

    from oriented
    inner join prompts
        on oriented.prompt_id = prompts.prompt_id

)

select * from messages
