-- One row per unordered pair of near-duplicate prompts of preference_pairs (docs/near-duplicates.md).
with

prompt_matches as (

    select * from {{ ref('int_near_duplicates__prompt_matches') }}

),

final as (

    select
        dataset_a,
        prompt_id_a,
        dataset_b,
        prompt_id_b,
        jaccard,
        n_shared_shingles
    from prompt_matches

)

select * from final
