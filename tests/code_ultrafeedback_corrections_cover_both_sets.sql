-- The corrections audit holds every published-logic pair and every corrected pair exactly
-- once, and every difference has a known reason.
with

audit as (

    select * from {{ ref('audit_code_ultrafeedback_corrections') }}

),

counts as (

    select
        (select count(*) from {{ ref('code_ultrafeedback_pairs_published_logic') }}) as n_published_logic,
        (select count(*) from {{ ref('code_ultrafeedback_pairs') }}) as n_corrected,
        (
            select count(*) from audit
            where status != 'only_corrected'
        ) as n_audit_published_logic,
        (
            select count(*) from audit
            where status != 'only_published_logic'
        ) as n_audit_corrected,
        (
            select count(*) from audit
            where is_difference and (reason is null or reason = 'unexplained')
        ) as n_unexplained,
        (
            select count(*) from audit
            where not is_difference and reason is not null
        ) as n_same_with_reason

)

select *
from counts
where
    n_published_logic != n_audit_published_logic
    or n_corrected != n_audit_corrected
    or n_unexplained > 0
    or n_same_with_reason > 0
