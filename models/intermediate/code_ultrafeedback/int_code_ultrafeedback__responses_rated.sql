-- One row per raw coseal row x response (position in the responses list), with the
-- annotation of its model and the script's dict semantics: `responses[model]` keeps a
-- repeated model at its FIRST position with its LAST response; `annotations[model]` keeps the
-- LAST annotation of a model. No long texts here: they are read back by position.
with

prompts as (

    select
        prompt_id,
        responses,
        annotations
    from {{ ref('stg_code_ultrafeedback__prompts') }}

),

-- empty/NULL responses lists produce no rows: those prompts keep n_responses = 0/NULL
-- in int_code_ultrafeedback__prompts_sequenced and code_ultrafeedback_prompts
responses_unnested as (

    select
        prompt_id,
        {{ explode_with_index('responses', 'response_index', 'response_entry') }}
    from prompts

),

annotations_unnested as (

    select
        prompt_id,
        {{ explode_with_index('annotations', 'annotation_index', 'annotation') }}
    from prompts

),

responses_keyed as (

    select
        prompt_id,
        response_index,
        response_entry is null as is_null_entry,
        response_entry.model as model,
        -- dict keys compare exactly (codepoints), whatever the collation
        {{ binary_string('response_entry.model') }} as model_key
    from responses_unnested

),

annotations_keyed as (

    select
        prompt_id,
        annotation_index,
        annotation.rating as rating_raw,
        {{ binary_string('annotation.model') }} as model_key
    from annotations_unnested
    -- a NULL entry has no model (the script raises TypeError on it: see row_error_reason)
    where annotation is not null

),

annotations_ranked as (

    select
        *,
        row_number() over (
            partition by prompt_id, model_key
            order by annotation_index desc
        ) as rank_from_last
    from annotations_keyed

),

-- `annotations[model_name] = rating`: the last annotation of a model wins
annotations_last_per_model as (

    select
        prompt_id,
        model_key,
        annotation_index,
        rating_raw
    from annotations_ranked
    where rank_from_last = 1

),

-- `responses[model_name] = response`: first position, last value
dict_positions as (

    select
        *,
        min(response_index) over (partition by prompt_id, is_null_entry, model_key) as model_first_response_index,
        max(response_index) over (partition by prompt_id, is_null_entry, model_key) as model_last_response_index
    from responses_keyed

),

rated as (

    select
        dict_positions.prompt_id,
        dict_positions.response_index,
        dict_positions.is_null_entry,
        dict_positions.model,
        dict_positions.model_first_response_index,
        dict_positions.model_last_response_index,
        dict_positions.response_index = dict_positions.model_first_response_index as is_first_of_model,
        annotations_last_per_model.annotation_index,
        annotations_last_per_model.annotation_index is not null as has_annotation,
        annotations_last_per_model.rating_raw,
        case
            when annotations_last_per_model.rating_raw in ('1', '2', '3', '4', '5')
                then cast(annotations_last_per_model.rating_raw as integer)
        end as rating
    from dict_positions
    left join annotations_last_per_model
        on dict_positions.prompt_id = annotations_last_per_model.prompt_id
        and dict_positions.model_key is not distinct from annotations_last_per_model.model_key
        and not dict_positions.is_null_entry

)

select * from rated
