-- Audit: the tool-call rate over all trajectories (rever_summary's total row) against the
-- card's 58.9 %.
-- dbt show -s rever_tool_call_rate_vs_card
select
    n_trajectories_with_tool,
    n_trajectories,
    round(tool_call_rate, 4) as tool_call_rate,
    0.589 as card_tool_call_rate
from {{ ref('rever_summary').include(database=False) }}
where scope = 'total'
