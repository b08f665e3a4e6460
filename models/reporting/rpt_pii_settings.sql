-- The report's secrets-and-personal-data setting and totals, one row: whether pairs with personal
-- data are flagged (the var pii_flag_personal, compiled in from the var, as
-- meta.warehouse_build_info records it, which is rebuilt by every build and so is not read here:
-- this view is reused while its var and marts are unchanged); the pairs of preference_pairs, those
-- with a secret finding in pii_findings, those with a personal one, and those preference_pairs
-- flags contains_secret or contains_personal_data.

with

preference_pairs as (

    select * from {{ ref('preference_pairs').include(database=False) }}

),

pii_findings as (

    select * from {{ ref('pii_findings').include(database=False) }}

),

finding_pairs as (

    select
        count(distinct case when category = 'secret' then pair_id end) as n_pairs_with_secret,
        count(distinct case when category = 'personal' then pair_id end) as n_pairs_with_personal_data
    from pii_findings

),

flagged_pairs as (

    select
        count(*) as n_pairs,
        count(
            case
                when {{ list_has('integrity_flags', "'contains_secret'") }}
                    or {{ list_has('integrity_flags', "'contains_personal_data'") }} then 1
            end
        ) as n_pairs_flagged
    from preference_pairs

),

final as (

    select
        {{ 'true' if pii_flag_personal() else 'false' }} as pii_flag_personal,
        flagged_pairs.n_pairs,
        finding_pairs.n_pairs_with_secret,
        finding_pairs.n_pairs_with_personal_data,
        flagged_pairs.n_pairs_flagged
    from flagged_pairs
    cross join finding_pairs

)

select * from final
