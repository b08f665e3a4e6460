-- rever_integrity agrees with the flags of the other marts: every trajectory whose verdict
-- is not ok has its verdict_<status> row, every pair with kept = false its not_kept row,
-- every pair whose side does not match the rubric a criteria_mismatch row, and the
-- reverse (no such row without the flag). Returns the disagreements.
with

expected as (

    select 'verdict_' || verdict_status as kind, id, candidate, trajectory_id
    from {{ ref('rever_trajectories') }}
    where verdict_status != 'ok'

    union all

    select 'not_kept' as kind, id, cast(null as {{ dbt.type_string() }}) as candidate,
        cast(null as {{ dbt.type_string() }}) as trajectory_id
    from {{ ref('rever_pairs') }}
    where not kept

    union all

    select 'criteria_mismatch' as kind, id, candidate, trajectory_id
    from {{ ref('rever_trajectories') }}
    where rubric_found and not criteria_match_rubric and verdict_status != 'malformed_user_message'

),

reported as (

    select kind, id, candidate, trajectory_id
    from {{ ref('rever_integrity') }}
    where kind like 'verdict_%' or kind in ('not_kept', 'criteria_mismatch')

),

missing as (

    select * from expected
    except all
    select * from reported

),

extra as (

    select * from reported
    except all
    select * from expected

)

select 'missing from rever_integrity' as problem, * from missing
union all
select 'unexpected in rever_integrity' as problem, * from extra
