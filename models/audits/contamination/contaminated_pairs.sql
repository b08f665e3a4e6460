-- The pairs flagged eval_contamination, one row per pair and matching eval text: the pair, the
-- eval text and the evidence (the longest run of its tokens the prompt shares), for a reviewer.
-- Run:  dbt show -s contaminated_pairs --limit 20
select
    pairs.dataset,
    pairs.split,
    pairs.pair_id,
    pairs.prompt_id,
    matches.eval_set,
    matches.item_id,
    matches.field,
    matches.turn,
    matches.match_kind,
    matches.coverage,
    matches.longest_shared_run,
    eval_items.text as eval_text,
    pairs.prompt
from {{ ref('preference_pairs').include(database=False) }} as pairs
inner join {{ ref('contamination_matches').include(database=False) }} as matches
    on pairs.dataset = matches.dataset and pairs.prompt_id = matches.prompt_id
inner join {{ ref('eval_items').include(database=False) }} as eval_items
    on
        matches.eval_set = eval_items.eval_set
        and matches.item_id = eval_items.item_id
        and matches.field = eval_items.field
        and matches.turn = eval_items.turn
