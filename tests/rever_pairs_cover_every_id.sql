-- Every id published in either ReVeR dataset has exactly one row in rever_pairs, and
-- rever_pairs invents no id. Returns the ids that break this.
with

published_ids as (

    select id from {{ ref('stg_rever__trajectories') }} where id is not null
    union
    select id from {{ ref('stg_rever__rubrics') }} where id is not null

),

pair_ids as (

    select id, count(*) as n_rows from {{ ref('rever_pairs') }} group by id

)

select
    coalesce(published_ids.id, pair_ids.id) as id,
    pair_ids.n_rows
from published_ids
full outer join pair_ids
    on published_ids.id = pair_ids.id
where published_ids.id is null
    or pair_ids.id is null
    or pair_ids.n_rows != 1
