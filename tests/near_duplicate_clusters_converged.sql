-- The clusters are the connected components of their relations (macros/near_duplicates.sql,
-- connected_components, spreads labels a fixed number of rounds): two near-duplicate prompts are in
-- one prompt cluster, and two pairs making the same comparison are both flagged or the first of
-- them is the only one left clean. A failure names a component wider than the rounds.
select
    'near-duplicate prompts in two clusters' as problem,
    matches.dataset_a || ':' || matches.prompt_id_a || ' ~ ' || matches.dataset_b || ':' || matches.prompt_id_b as detail
from {{ ref('near_duplicate_prompts') }} as matches
inner join {{ ref('prompt_clusters') }} as clusters_a
    on matches.dataset_a = clusters_a.dataset and matches.prompt_id_a = clusters_a.prompt_id
inner join {{ ref('prompt_clusters') }} as clusters_b
    on matches.dataset_b = clusters_b.dataset and matches.prompt_id_b = clusters_b.prompt_id
where clusters_a.cluster_id != clusters_b.cluster_id

union all

select
    'same comparison with neither pair flagged near_duplicate_pair' as problem,
    relations.pair_id_a || ' ~ ' || relations.pair_id_b as detail
from {{ ref('near_duplicate_pairs') }} as relations
inner join {{ ref('preference_pairs') }} as pairs_a
    on relations.pair_id_a = pairs_a.pair_id
inner join {{ ref('preference_pairs') }} as pairs_b
    on relations.pair_id_b = pairs_b.pair_id
where relations.relation = 'same_comparison'
    and not {{ list_has('pairs_a.integrity_flags', "'near_duplicate_pair'") }}
    and not {{ list_has('pairs_b.integrity_flags', "'near_duplicate_pair'") }}
