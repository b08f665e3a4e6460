-- rever_summary's counts add up to the marts they summarise. Returns a row when they don't.
with

summary as (

    select
        sum(n_pairs) as n_pairs,
        sum(n_trajectories) as n_trajectories,
        sum(n_trajectories_with_tool) as n_with_tool,
        sum(n_integrity_breaks) as n_breaks
    from {{ ref('rever_summary') }}

),

actual as (

    select
        (select count(*) from {{ ref('rever_pairs') }}) as n_pairs,
        (select count(*) from {{ ref('stg_rever__trajectories') }}) as n_trajectories,
        (select count(*) from {{ ref('rever_trajectories') }} where used_tool) as n_with_tool,
        (select count(*) from {{ ref('rever_integrity') }}) as n_breaks

)

select summary.*, actual.*
from summary
cross join actual
where summary.n_pairs != actual.n_pairs
    or summary.n_trajectories != actual.n_trajectories
    or summary.n_with_tool != actual.n_with_tool
    or summary.n_breaks != actual.n_breaks
