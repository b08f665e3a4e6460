-- audits.near_duplicate_pairs (the view's name; the model is named apart from the mart it explains):
-- the related pairs of pairs of near_duplicate_pairs, one row per relation, with both pairs'
-- scores, prompt, chosen and rejected side by side, for a reviewer.
-- Run:  dbt show -s near_duplicate_pair_texts --limit 20
select
    relations.relation,
    relations.dataset_a,
    relations.pair_id_a,
    relations.dataset_b,
    relations.pair_id_b,
    relations.prompt_jaccard,
    relations.chosen_a_jaccard,
    relations.rejected_a_jaccard,
    pairs_a.chosen_score as chosen_score_a,
    pairs_a.rejected_score as rejected_score_a,
    pairs_b.chosen_score as chosen_score_b,
    pairs_b.rejected_score as rejected_score_b,
    pairs_a.score_kind as score_kind_a,
    pairs_b.score_kind as score_kind_b,
    pairs_a.prompt as prompt_a,
    pairs_b.prompt as prompt_b,
    pairs_a.chosen as chosen_a,
    pairs_b.chosen as chosen_b,
    pairs_a.rejected as rejected_a,
    pairs_b.rejected as rejected_b
from {{ ref('near_duplicate_pairs').include(database=False) }} as relations
inner join {{ ref('preference_pairs').include(database=False) }} as pairs_a
    on relations.pair_id_a = pairs_a.pair_id
inner join {{ ref('preference_pairs').include(database=False) }} as pairs_b
    on relations.pair_id_b = pairs_b.pair_id
