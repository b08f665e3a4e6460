-- The clean training pairs that collapse at the smallest budget of truncation_budgets: truncated
-- to it, prompt + chosen and prompt + rejected are the same sequence. The texts side by side,
-- with where they start to differ.
-- Run:  dbt show -s truncation_collapsed_pairs --limit 20
{%- set budget = truncation_budgets()[0] %}

with

collapsed as (

    select * from {{ ref('pair_bias_features').include(database=False) }}
    where max_collapsed_budget >= {{ budget }}

),

pairs as (

    select * from {{ ref('preference_pairs').include(database=False) }}

)

select
    collapsed.dataset,
    collapsed.pair_id,
    collapsed.prompt_id,
    cast({{ budget }} as bigint) as budget_tokens,
    collapsed.max_collapsed_budget,
    collapsed.prompt_len,
    collapsed.chosen_len,
    collapsed.rejected_len,
    pairs.prompt,
    pairs.chosen,
    pairs.rejected
from collapsed
inner join pairs
    on collapsed.pair_id = pairs.pair_id
order by collapsed.dataset, collapsed.pair_id
