-- Slices of at least 100 clean training pairs where the chosen response is the longer one in 60%
-- or more of the pairs of unequal length: a reward model trained on them learns length.
-- Run:  dbt show -s length_biased_slices
with

profile as (

    select * from {{ ref('pair_bias_profile').include(database=False) }}

)

select
    dataset,
    slice_kind,
    slice,
    n_pairs,
    n_chosen_longer,
    n_rejected_longer,
    pct_chosen_longer,
    mean_chosen_len,
    mean_rejected_len,
    length_margin_corr
from profile
where n_pairs >= 100 and pct_chosen_longer >= 60
order by pct_chosen_longer desc, n_pairs desc, dataset asc, slice_kind asc, slice asc
