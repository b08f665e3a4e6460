-- One row per raw UltraFeedback row that yields no preference pair, with the reason
-- (ultrafeedback_curated.no_pair_reason: a rule on the row's own picks). Every such row is
-- still in ultrafeedback_curated; this says why it can't train.
with

curated as (

    select * from {{ ref('ultrafeedback_curated') }}

),

final as (

    select
        prompt_id,
        source_file,
        source_row,
        no_pair_reason as reason
    from curated
    where no_pair_reason is not null

)

select * from final
