-- One row per related pair of pairs of preference_pairs and relation (same_comparison,
-- label_conflict), with the Jaccards that decided it (docs/near-duplicates.md).
with

pair_matches as (

    select * from {{ ref('int_near_duplicates__pair_matches') }}

),

final as (

    select
        pair_id_a,
        pair_id_b,
        dataset_a,
        dataset_b,
        relation,
        prompt_jaccard,
        chosen_a_jaccard,
        rejected_a_jaccard
    from pair_matches

)

select * from final
