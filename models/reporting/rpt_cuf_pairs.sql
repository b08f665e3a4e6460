-- CodeUltraFeedback: published (script) vs corrected pair counts per preference, one row per
-- preference x kind of pairs.
{{ config(enabled=dataset_enabled('code_ultrafeedback')) }}

with

bug_summary as (

    select * from {{ ref('code_ultrafeedback_bug_summary').include(database=False) }}

),

by_preference as (

    select * from bug_summary
    where scope = 'preference'

),

published as (

    select
        coalesce(preference, '(unmatched)') as preference,
        'published (script)' as pairs,
        n_published_pairs as n_pairs
    from by_preference

),

corrected as (

    select
        coalesce(preference, '(unmatched)') as preference,
        'corrected' as pairs,
        n_corrected_pairs as n_pairs
    from by_preference

),

final as (

    select * from published
    union all
    select * from corrected

)

select * from final
