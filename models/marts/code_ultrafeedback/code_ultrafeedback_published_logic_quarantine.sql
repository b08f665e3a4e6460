-- One row per raw coseal row the published script cannot process (it would raise and stop):
-- its pairs are left out of code_ultrafeedback_pairs_published_logic, with the reason here
-- (int_code_ultrafeedback__prompts_quarantined) and the row's keys and script state.
with

prompts as (

    select * from {{ ref('int_code_ultrafeedback__prompts_sequenced') }}

),

failures as (

    select * from {{ ref('int_code_ultrafeedback__prompts_quarantined') }}

),

described as (

    select
        ---------- keys
        prompts.prompt_id,
        prompts.source_file,
        prompts.source_row,
        prompts.prompt_order,

        ---------- why
        failures.reason,
        failures.error_type,
        failures.failing_combination_index,
        failures.missing_model,

        ---------- context
        prompts.n_responses,
        prompts.n_annotations,
        prompts.script_rating,
        prompts.is_script_rating_stale

    from failures
    inner join prompts
        on failures.prompt_id = prompts.prompt_id

)

select * from described
