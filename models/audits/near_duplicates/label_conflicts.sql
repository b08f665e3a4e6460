-- The label conflicts: two pairs whose prompts are the same or near, where one's chosen is near the
-- other's rejected and the other way round (audits.near_duplicate_pairs' rows of that relation:
-- a's chosen is near b's rejected, a's rejected near b's chosen). Run:  dbt show -s label_conflicts --limit 20
select *
from {{ ref('near_duplicate_pair_texts').include(database=False) }}
where relation = 'label_conflict'
