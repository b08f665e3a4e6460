-- The published audit holds every raw RLHFlow row and every reproduced pair exactly once.
with

audit as (

    select * from {{ ref('audit_code_ultrafeedback_published') }}

),

counts as (

    select
        (select count(*) from {{ ref('stg_code_ultrafeedback__published_pairs') }}) as n_published,
        (select count(*) from {{ ref('code_ultrafeedback_pairs_published_logic') }}) as n_reproduced,
        (select count(distinct published_pair_id) from audit) as n_audit_published,
        (
            select count(*) from audit
            where published_pair_id is not null
        ) as n_audit_published_rows,
        (select count(distinct pair_id) from audit) as n_audit_reproduced,
        (
            select count(*) from audit
            where pair_id is not null
        ) as n_audit_reproduced_rows

)

select *
from counts
where
    n_published != n_audit_published
    or n_published != n_audit_published_rows
    or n_reproduced != n_audit_reproduced
    or n_reproduced != n_audit_reproduced_rows
