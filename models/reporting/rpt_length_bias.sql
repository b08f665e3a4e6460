-- Known biases: the chosen-longer share of each dataset and slice of pair_bias_profile (slices of
-- at least 20 pairs, so that a share means something), for the report's chart.
with

profile as (

    select * from {{ ref('pair_bias_profile').include(database=False) }}

)

select
    dataset,
    slice_kind,
    slice,
    n_pairs,
    pct_chosen_longer
from profile
where pct_chosen_longer is not null
    and (slice_kind = 'dataset' or n_pairs >= 20)
