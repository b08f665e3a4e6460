-- One row per raw coseal row the published script cannot process (it would raise and stop), with
-- the reason: an error of the per-row code before the pair loop, else the first combination
-- that raises (the script stops there). The quarantine mart adds the row's keys and context;
-- int_code_ultrafeedback__pairs flags the row's corrected pairs; code_ultrafeedback_prompts
-- gives the row's outcome.
with

prompts as (

    select * from {{ ref('int_code_ultrafeedback__prompts_sequenced') }}
    where row_error_reason is not null

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

)

select * from failures
