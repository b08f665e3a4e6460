-- The pairs of the registry's rated_completions entries, by the entry's pairing:
--   best_vs_lower  the best-rated completion against a seeded random one strictly below it (an
--                  unrated completion counts as below every rated one); no pair when none is;
--   all_pairs      every two completions both rated, with different ratings, the higher chosen.
-- A raw row without a pair is in rejects_extra_datasets.
with

completions as (

    select * from {{ ref('int_extra__rated_completions') }}

),

best_vs_lower as (

    select
        best.prompt_id,
        best.completion_index as chosen_index,
        lower.completion_index as rejected_index
    from completions as best
    inner join completions as lower
        on best.prompt_id = lower.prompt_id
        and lower.is_random_for_best_rated
        and lower.is_below_best_rated
    where best.is_best_rated
        and best.pairing = 'best_vs_lower'

),

all_pairs as (

    select
        higher.prompt_id,
        higher.completion_index as chosen_index,
        lower.completion_index as rejected_index
    from completions as higher
    inner join completions as lower
        on higher.prompt_id = lower.prompt_id
        and higher.rating > lower.rating
    where higher.pairing = 'all_pairs'

),

pairs as (

    select * from best_vs_lower
    union all
    select * from all_pairs

),

final as (

    select
        pairs.prompt_id as row_key,
        chosen.dataset,
        chosen.source_file,
        chosen.source_row,
        pairs.chosen_index,
        pairs.rejected_index,
        chosen.source,
        {{ chat_messages([('user', 'chosen.prompt')]) }} as prompt,
        {{ chat_messages([('assistant', 'chosen.response')]) }} as chosen,
        {{ chat_messages([('assistant', 'rejected.response')]) }} as rejected,
        chosen.model as chosen_model,
        rejected.model as rejected_model,
        chosen.rating as chosen_score,
        rejected.rating as rejected_score
    from pairs
    inner join completions as chosen
        on pairs.prompt_id = chosen.prompt_id
        and pairs.chosen_index = chosen.completion_index
    inner join completions as rejected
        on pairs.prompt_id = rejected.prompt_id
        and pairs.rejected_index = rejected.completion_index

)

select * from final
