-- One row per source of the pairs (helpsteer3, ultrafeedback, ...; scope 'source') and one over
-- all sources (scope 'total'), each aggregated from the pairs, trajectories and integrity rows in
-- one grouping-sets pass (macros/cross_engine/summary_scopes.sql): pairs, tool use, how pairs are
-- decided, mean margin and integrity breaks.
with

pairs as (

    select * from {{ ref('rever_pairs') }}

),

trajectories as (

    select * from {{ ref('rever_trajectories') }}

),

integrity as (

    select * from {{ ref('rever_integrity') }}

),

pair_stats as (

    select
        {{ summary_scope(['source']) }} as scope,
        source,
        count(*) as n_pairs,
        count(case when decided_by != 'unscored' then 1 end) as n_pairs_scored,
        count(case when kept then 1 end) as n_pairs_kept,
        count(case when decided_by = 'hard_rules' then 1 end) as n_decided_by_hard_rules,
        count(case when decided_by = 'principles' then 1 end) as n_decided_by_principles,
        count(case when decided_by = 'tie' then 1 end) as n_ties,
        {{ exact_mean("score_margin") }} as mean_score_margin

    from pairs
    {{ summary_group_by(['source']) }}

),

trajectory_stats as (

    select
        {{ summary_scope(['source']) }} as scope,
        source,
        count(*) as n_trajectories,
        count(case when used_tool then 1 end) as n_trajectories_with_tool,
        count(case when verdict_status = 'ok' then 1 end) as n_verdicts_ok

    from trajectories
    {{ summary_group_by(['source']) }}

),

integrity_stats as (

    select
        {{ summary_scope(['source']) }} as scope,
        source,
        count(*) as n_integrity_breaks

    from integrity
    {{ summary_group_by(['source']) }}

),

-- every source seen by any of the stats, and the total row even without rows (see
-- summary_scopes)
scopes as (

    select scope, source from pair_stats
    union
    select scope, source from trajectory_stats
    union
    select scope, source from integrity_stats
    union
    select
        'total' as scope,
        cast(null as {{ dbt.type_string() }}) as source

),

joined as (

    select
        scopes.scope,
        scopes.source,
        coalesce(pair_stats.n_pairs, 0) as n_pairs,
        coalesce(pair_stats.n_pairs_scored, 0) as n_pairs_scored,
        coalesce(pair_stats.n_pairs_kept, 0) as n_pairs_kept,
        coalesce(pair_stats.n_decided_by_hard_rules, 0) as n_decided_by_hard_rules,
        coalesce(pair_stats.n_decided_by_principles, 0) as n_decided_by_principles,
        coalesce(pair_stats.n_ties, 0) as n_ties,
        pair_stats.mean_score_margin,
        coalesce(trajectory_stats.n_trajectories, 0) as n_trajectories,
        coalesce(trajectory_stats.n_trajectories_with_tool, 0) as n_trajectories_with_tool,
        coalesce(trajectory_stats.n_verdicts_ok, 0) as n_verdicts_ok,
        coalesce(integrity_stats.n_integrity_breaks, 0) as n_integrity_breaks

    from scopes
    left join pair_stats
        on scopes.scope = pair_stats.scope
        and scopes.source is not distinct from pair_stats.source
    left join trajectory_stats
        on scopes.scope = trajectory_stats.scope
        and scopes.source is not distinct from trajectory_stats.source
    left join integrity_stats
        on scopes.scope = integrity_stats.scope
        and scopes.source is not distinct from integrity_stats.source

),

final as (

    select
        ---------- keys
        scope,
        source,

        ---------- pairs
        n_pairs,
        n_pairs_scored,
        n_pairs_kept,
        n_decided_by_hard_rules,
        n_decided_by_principles,
        n_ties,
        cast(n_decided_by_principles as double) / nullif(n_pairs_scored, 0) as share_decided_by_principles,
        mean_score_margin,

        ---------- trajectories
        n_trajectories,
        n_trajectories_with_tool,
        cast(n_trajectories_with_tool as double) / nullif(n_trajectories, 0) as tool_call_rate,
        n_verdicts_ok,

        ---------- integrity
        n_integrity_breaks

    from joined

)

select * from final
