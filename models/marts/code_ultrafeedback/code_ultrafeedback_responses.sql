-- One row per raw coseal row x response, with the rating its model received.
with

responses as (

    select * from {{ ref('int_code_ultrafeedback__responses_rated') }}

),

prompts as (

    select
        prompt_id,
        preference,
        instruction,
        responses as response_list
    from {{ ref('stg_code_ultrafeedback__prompts') }}

),

joined as (

    select
        ---------- keys
        responses.prompt_id,
        responses.response_index,

        ---------- prompt
        prompts.preference,
        prompts.instruction,

        ---------- response
        responses.model,
        {{ list_at('prompts.response_list', 'responses.response_index') }}.response as response,
        responses.is_first_of_model,

        ---------- rating
        responses.annotation_index,
        responses.rating_raw,
        responses.rating

    from responses
    inner join prompts
        on responses.prompt_id = prompts.prompt_id

)

select * from joined
