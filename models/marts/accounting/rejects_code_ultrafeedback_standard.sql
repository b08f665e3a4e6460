-- One row per raw RLHFlow/CodeUltraFeedback-standard row that the audit can't read as a pair
-- (chosen/rejected not a [user, assistant] list), with the reason.
with

published as (

    select * from {{ ref('stg_code_ultrafeedback__published_pairs') }}

),

audited as (

    select distinct published_pair_id from {{ ref('audit_code_ultrafeedback_published') }}
    where published_pair_id is not null

),

final as (

    select
        published.published_pair_id,
        published.source_file,
        published.source_row,
        case
            when audited.published_pair_id is null then 'not_in_audit'
            else 'malformed_messages'
        end as reason
    from published
    left join audited on published.published_pair_id = audited.published_pair_id
    where audited.published_pair_id is null
        or coalesce(published.n_chosen_messages, 0) != 2
        or coalesce(published.n_rejected_messages, 0) != 2

)

select * from final
