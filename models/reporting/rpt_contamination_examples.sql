-- The report's example matches: per eval set, its match of highest coverage in
-- contamination_matches (ties: the first by dataset, prompt_id, item_id, field and turn), with
-- the evidence, the longest run of the eval text's tokens found in the prompt.

with

contamination_matches as (

    select * from {{ ref('contamination_matches').include(database=False) }}

),

ranked as (

    select
        *,
        row_number() over (
            partition by eval_set
            order by coverage desc, dataset asc, prompt_id asc, item_id asc, field asc, turn asc
        ) as example_rank
    from contamination_matches

),

final as (

    select
        eval_set,
        dataset,
        prompt_id,
        item_id,
        field,
        turn,
        match_kind,
        coverage,
        longest_shared_run
    from ranked
    where example_rank = 1

)

select * from final
