-- The published-logic pairs against the corrected pairs, one row per pair of responses in
-- either set (same pair_id = same prompt and the same two response positions), with the
-- reason for every difference. Keys, models and ratings only: texts are in the pair marts.
with

published_logic as (

    select
        pair_id,
        prompt_id,
        chosen_response_index,
        rejected_response_index,
        chosen_model,
        rejected_model,
        chosen_score,
        rejected_score
    from {{ ref('code_ultrafeedback_pairs_published_logic') }}

),

corrected as (

    select
        pair_id,
        prompt_id,
        chosen_response_index,
        rejected_response_index,
        chosen_model,
        rejected_model,
        chosen_rating,
        rejected_rating
    from {{ ref('code_ultrafeedback_pairs') }}

),

response_pairs as (

    select
        pair_id,
        is_script_combination
    from {{ ref('int_code_ultrafeedback__response_pairs_enumerated') }}

),

prompts as (

    select
        prompt_id,
        preference,
        script_outcome
    from {{ ref('code_ultrafeedback_prompts') }}

),

compared as (

    select
        coalesce(published_logic.pair_id, corrected.pair_id) as pair_id,
        coalesce(published_logic.prompt_id, corrected.prompt_id) as prompt_id,
        case
            when corrected.pair_id is null then 'only_published_logic'
            when published_logic.pair_id is null then 'only_corrected'
            when published_logic.chosen_response_index = corrected.chosen_response_index then 'same'
            else 'flipped'
        end as status,
        published_logic.chosen_response_index as published_chosen_response_index,
        published_logic.rejected_response_index as published_rejected_response_index,
        published_logic.chosen_model as published_chosen_model,
        published_logic.rejected_model as published_rejected_model,
        published_logic.chosen_score as published_chosen_score,
        published_logic.rejected_score as published_rejected_score,
        corrected.chosen_response_index as corrected_chosen_response_index,
        corrected.rejected_response_index as corrected_rejected_response_index,
        corrected.chosen_model as corrected_chosen_model,
        corrected.rejected_model as corrected_rejected_model,
        corrected.chosen_rating as corrected_chosen_rating,
        corrected.rejected_rating as corrected_rejected_rating
    from published_logic
    full outer join corrected
        on published_logic.pair_id = corrected.pair_id

),

with_context as (

    select
        compared.*,
        prompts.preference,
        prompts.script_outcome,
        response_pairs.is_script_combination,
        -- both scores are digit strings whose numeric order is the reverse of their string
        -- order (the published-logic chosen_score is always the greater string): "2" over "10"
        case
            when {{ is_digit_string('compared.published_chosen_score') }}
                and {{ is_digit_string('compared.published_rejected_score') }}
                then cast(compared.published_chosen_score as double) < cast(compared.published_rejected_score as double)
            else false
        end as is_numeric_order_inverted,
        coalesce({{ binary_string('compared.published_chosen_score') }} = {{ binary_string("'N/A'") }}, false)
            as is_chosen_na,
        coalesce({{ binary_string('compared.published_rejected_score') }} = {{ binary_string("'N/A'") }}, false)
            as is_rejected_na,
        coalesce(compared.published_chosen_score in ('1', '2', '3', '4', '5'), false)
            and coalesce(compared.published_rejected_score in ('1', '2', '3', '4', '5'), false)
            as are_both_scores_valid
    from compared
    inner join prompts
        on compared.prompt_id = prompts.prompt_id
    inner join response_pairs
        on compared.pair_id = response_pairs.pair_id

),

reasoned as (

    select
        ---------- keys
        pair_id,
        prompt_id,
        preference,

        ---------- comparison
        status,
        status != 'same' as is_difference,
        case
            when status = 'same' then null
            when status = 'flipped' then 'string_order_inverted'
            when status = 'only_published_logic' and is_chosen_na then 'na_rated_chosen'
            when status = 'only_published_logic' and is_rejected_na then 'na_rated_rejected'
            when status = 'only_published_logic' and is_numeric_order_inverted then 'string_order_inverted'
            when status = 'only_published_logic' and not are_both_scores_valid then 'invalid_rating'
            when status = 'only_corrected' and script_outcome = 'quarantined' then 'prompt_quarantined'
            when status = 'only_corrected' and script_outcome = 'dropped_by_na_rating' then 'prompt_dropped_by_last_na'
            when status = 'only_corrected' and not is_script_combination then 'duplicate_model'
            else 'unexplained'
        end as reason,
        script_outcome,

        ---------- published logic
        published_chosen_response_index,
        published_rejected_response_index,
        published_chosen_model,
        published_rejected_model,
        published_chosen_score,
        published_rejected_score,

        ---------- corrected
        corrected_chosen_response_index,
        corrected_rejected_response_index,
        corrected_chosen_model,
        corrected_rejected_model,
        corrected_chosen_rating,
        corrected_rejected_rating

    from with_context

)

select * from reasoned
