-- One row per raw coseal row the published script cannot process (it would raise and stop):
-- its pairs are left out of code_ultrafeedback_pairs_published_logic, with the reason here.
with

prompts as (

    select * from {{ ref('int_code_ultrafeedback__prompts_sequenced') }}

),

combinations as (

    select * from {{ ref('int_code_ultrafeedback__combinations_scripted') }}
    where combination_error_reason is not null

),

-- errors in the per-row code before the pair loop
row_failures as (

    select
        prompt_id,
        row_error_reason as reason,
        row_error_type as error_type,
        cast(null as bigint) as failing_combination_index,
        cast(null as {{ dbt.type_string() }}) as missing_model
    from prompts
    where row_error_reason is not null

),

-- the first combination that raises (the script stops there)
first_failing_combinations as (

    select
        *,
        row_number() over (partition by prompt_id order by combination_index) as failure_rank
    from combinations

),

combination_failures as (

    select
        prompt_id,
        combination_error_reason as reason,
        combination_error_type as error_type,
        combination_index as failing_combination_index,
        missing_model
    from first_failing_combinations
    where failure_rank = 1

),

failures as (

    select * from row_failures
    union all
    select * from combination_failures

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
