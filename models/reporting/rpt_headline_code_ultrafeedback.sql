-- The report's headline numbers for CodeUltraFeedback: the bug summary's total row.
{{ config(enabled=dataset_enabled('code_ultrafeedback')) }}

with

bug_summary as (

    select * from {{ ref('code_ultrafeedback_bug_summary').include(database=False) }}

),

final as (

    select
        n_prompts,
        n_prompts_dropped,
        n_prompts_quarantined,
        n_published_pairs,
        n_published_chosen_score_na,
        n_corrected_pairs,
        n_pairs_unchanged
    from bug_summary
    where scope = 'total'

)

select * from final
