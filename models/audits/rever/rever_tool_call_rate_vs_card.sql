-- Audit: the tool-call rate over all trajectories against the card's 58.9 %.
-- dbt show -s rever_tool_call_rate_vs_card
select
    sum(n_trajectories_with_tool) as n_trajectories_with_tool,
    sum(n_trajectories) as n_trajectories,
    round(sum(n_trajectories_with_tool) / sum(n_trajectories), 4) as tool_call_rate,
    0.589 as card_tool_call_rate
from {{ ref('rever_summary').include(database=False) }}
