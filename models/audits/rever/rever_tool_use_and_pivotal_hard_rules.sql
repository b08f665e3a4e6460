-- Audit: how often tool use coincides with a Hard Rule verdict that flips the outcome.
-- A Hard Rule verdict is pivotal when scoring that one item the other way (0 <-> 1), all
-- else equal, changes whether the pair is kept (chosen strictly higher: Hard Rule counts
-- first, then Principle means). Pivotal verdicts are counted by whether the trajectory
-- that gave them called the tool. Only pairs whose two verdicts are ok are considered.
-- dbt show -s rever_tool_use_and_pivotal_hard_rules
with

pairs as (

    select * from {{ ref('rever_pairs').include(database=False) }} where decided_by != 'unscored'

),

trajectories as (

    select * from {{ ref('rever_trajectories').include(database=False) }}

),

verdicts as (

    select * from {{ ref('rever_verdicts').include(database=False) }} where kind = 'hard_rule' and is_valid

),

pair_sides as (

    select
        pairs.id,
        pairs.kept,
        chosen.hard_rules_satisfied as chosen_hard,
        rejected.hard_rules_satisfied as rejected_hard,
        coalesce(chosen.principle_mean, 0) as chosen_principles,
        coalesce(rejected.principle_mean, 0) as rejected_principles,
        pairs.chosen_trajectory_id,
        pairs.rejected_trajectory_id

    from pairs
    inner join trajectories as chosen
        on pairs.chosen_trajectory_id = chosen.trajectory_id
    inner join trajectories as rejected
        on pairs.rejected_trajectory_id = rejected.trajectory_id

),

-- each pair once per side (an equi-join below, not `in (chosen, rejected)`, which DuckDB can only
-- run as a nested loop: 40 s at scale 1.0)
pair_side_trajectories as (

    select
        pair_sides.*,
        pair_sides.chosen_trajectory_id as side_trajectory_id
    from pair_sides

    union all

    select
        pair_sides.*,
        pair_sides.rejected_trajectory_id as side_trajectory_id
    from pair_sides
    where pair_sides.rejected_trajectory_id is distinct from pair_sides.chosen_trajectory_id

),

hard_rule_verdicts as (

    select
        pair_side_trajectories.id,
        pair_side_trajectories.kept,
        pair_side_trajectories.chosen_hard,
        pair_side_trajectories.rejected_hard,
        pair_side_trajectories.chosen_principles,
        pair_side_trajectories.rejected_principles,
        verdicts.trajectory_id,
        verdicts.candidate,
        verdicts.score,
        -- the chosen side's Hard Rule count minus the rejected side's, after flipping this item
        (pair_side_trajectories.chosen_hard - pair_side_trajectories.rejected_hard)
            + case verdicts.candidate when 'chosen' then 1 else -1 end
            * case when verdicts.score = 1 then -1 else 1 end as flipped_hard_difference

    from verdicts
    inner join pair_side_trajectories
        on verdicts.trajectory_id = pair_side_trajectories.side_trajectory_id

),

pivotal_flagged as (

    select
        hard_rule_verdicts.*,
        kept != (
            flipped_hard_difference > 0
            or (flipped_hard_difference = 0 and chosen_principles > rejected_principles)
        ) as is_pivotal

    from hard_rule_verdicts

),

with_tool_use as (

    select pivotal_flagged.*, trajectories.used_tool
    from pivotal_flagged
    inner join trajectories
        on pivotal_flagged.trajectory_id = trajectories.trajectory_id

)

select
    used_tool,
    count(*) as n_hard_rule_verdicts,
    count(case when is_pivotal then 1 end) as n_pivotal,
    round(count(case when is_pivotal then 1 end) / count(*), 4) as pivotal_share,
    count(distinct case when is_pivotal then id end) as n_pairs_with_pivotal_verdict
from with_tool_use
group by used_tool
order by used_tool
