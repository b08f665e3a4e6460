-- Known biases: the share of each dataset's clean pairs that collapse at each token budget
-- (truncation_collapse), for the report's chart.
with

collapse as (

    select * from {{ ref('truncation_collapse').include(database=False) }}

)

select
    dataset,
    budget_tokens,
    n_pairs,
    n_collapsed,
    pct_collapsed,
    counted_with
from collapse
