-- The published-logic pairs where an 'N/A'-rated response is chosen (kept because the row's
-- last annotation was not 'N/A', chosen because 'N/A' > any digit as a string), with the
-- raw RLHFlow row each one is in, if any.
--   dbt show -s cuf_na_rated_chosen_pairs --limit 50
with

corrections as (

    select * from {{ ref('audit_code_ultrafeedback_corrections').include(database=False) }}
    where reason = 'na_rated_chosen'

),

published_audit as (

    select
        pair_id,
        published_pair_id,
        source_file as published_source_file,
        source_row as published_source_row
    from {{ ref('audit_code_ultrafeedback_published').include(database=False) }}
    where pair_id is not null

),

prompts as (

    select
        prompt_id,
        source_file,
        source_row
    from {{ ref('code_ultrafeedback_prompts').include(database=False) }}

),

listed as (

    select
        prompts.source_file,
        prompts.source_row,
        corrections.preference,
        corrections.published_chosen_model,
        corrections.published_chosen_score,
        corrections.published_rejected_model,
        corrections.published_rejected_score,
        published_audit.published_pair_id,
        published_audit.published_source_file,
        published_audit.published_source_row
    from corrections
    inner join prompts
        on corrections.prompt_id = prompts.prompt_id
    left join published_audit
        on corrections.pair_id = published_audit.pair_id

)

select * from listed
order by source_file, source_row, published_chosen_model, published_rejected_model
