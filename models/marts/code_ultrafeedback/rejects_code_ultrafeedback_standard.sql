-- One row per raw RLHFlow/CodeUltraFeedback-standard row that the audit can't read as a pair,
-- with the reason: the row is missing from the audit, or a side is not a two-message list.
with

published as (

    select * from {{ ref('stg_code_ultrafeedback__published_pairs') }}

),

audited as (

    select
        published_pair_id,
        is_pair_shaped
    from {{ ref('audit_code_ultrafeedback_published') }}
    where published_pair_id is not null

),

reasons as (

    select
        published.published_pair_id,
        published.source_file,
        published.source_row,
        case
            when audited.published_pair_id is null then 'not_in_audit'
            when not audited.is_pair_shaped then 'malformed_messages'
        end as reason
    from published
    left join audited
        on published.published_pair_id = audited.published_pair_id

),

final as (

    select * from reasons
    where reason is not null

)

select * from final
