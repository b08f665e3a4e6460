-- One row per raw CodeUltraFeedback row that yields no corrected pair, with the reason
-- (code_ultrafeedback_prompts.no_pair_reason: a rule on the row's responses and ratings).
with

prompts as (

    select * from {{ ref('code_ultrafeedback_prompts') }}

),

final as (

    select
        prompt_id,
        source_file,
        source_row,
        no_pair_reason as reason
    from prompts
    where no_pair_reason is not null

)

select * from final
