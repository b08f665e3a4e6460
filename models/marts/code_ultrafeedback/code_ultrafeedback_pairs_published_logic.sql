-- What the published RLHFlow script outputs, reproduced: one row per element of its `data`
-- list, in its order (pair_order). Rows it could not process are in
-- code_ultrafeedback_published_logic_quarantine instead.
with

combinations as (

    select * from {{ ref('int_code_ultrafeedback__combinations_scripted') }}

),

prompts as (

    select
        prompt_id,
        source_file,
        source_row,
        preference,
        instruction,
        responses as response_list
    from {{ ref('stg_code_ultrafeedback__prompts') }}

),

-- `if rating1 == rating2: continue`; a failing combination anywhere stops the whole row
emitted as (

    select * from combinations
    where
        not is_prompt_failed
        and not is_tie

),

-- `if rating1 > rating2:` response1 is chosen, else response2
oriented as (

    select
        pair_id,
        prompt_id,
        prompt_order,
        combination_index,
        case when is_a_chosen then response_index_a else response_index_b end as chosen_response_index,
        case when is_a_chosen then response_index_b else response_index_a end as rejected_response_index,
        case when is_a_chosen then model_a else model_b end as chosen_model,
        case when is_a_chosen then model_b else model_a end as rejected_model,
        -- `responses[model]` holds the model's LAST response
        case when is_a_chosen then script_text_index_a else script_text_index_b end as chosen_text_index,
        case when is_a_chosen then script_text_index_b else script_text_index_a end as rejected_text_index,
        case when is_a_chosen then rating_raw_a else rating_raw_b end as chosen_score,
        case when is_a_chosen then rating_raw_b else rating_raw_a end as rejected_score
    from emitted

),

messages as (

    select
        ---------- keys and script order
        oriented.pair_id,
        oriented.prompt_id,
        prompts.source_file,
        prompts.source_row,
        oriented.combination_index,
        row_number() over (order by oriented.prompt_order, oriented.combination_index) - 1 as pair_order,

        ---------- pair
        prompts.preference,
        oriented.chosen_model,
        oriented.rejected_model,
        oriented.chosen_response_index,
        oriented.rejected_response_index,
        oriented.chosen_score,
        oriented.rejected_score,

        ---------- published shape: [{content, role}] user prompt then assistant response
        {{ chat_pair('prompts.instruction',
                     list_at('prompts.response_list', 'oriented.chosen_text_index') ~ '.response',
                     field_order=('content', 'role')) }} as chosen,
        {{ chat_pair('prompts.instruction',
                     list_at('prompts.response_list', 'oriented.rejected_text_index') ~ '.response',
                     field_order=('content', 'role')) }} as rejected

    from oriented
    inner join prompts
        on oriented.prompt_id = prompts.prompt_id

)

select * from messages
