-- The pairs of the registry's rated_completions entries, by the entry's pairing:
--   best_vs_lower  the best-rated completion against a seeded random one strictly below it (an
--                  unrated completion counts as below every rated one); no pair when none is;
--   all_pairs      every two completions both rated, with different ratings, the higher chosen.
-- A raw row without a pair is in rejects_extra_datasets.
with

completions as (

    select * from {{ ref('int_extra__rated_completions') }}

),

raw_rows as (

    select row_key, source_file, source_row, source, prompt from {{ ref('stg_extra__rated_rows') }}

),

registry as (

    select dataset, pairing from {{ ref('extra_datasets') }}

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
    inner join registry
        on best.dataset = registry.dataset
        and registry.pairing = 'best_vs_lower'
    where best.is_best_rated

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
    inner join registry
        on higher.dataset = registry.dataset
        and registry.pairing = 'all_pairs'

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
        raw_rows.source_file,
        raw_rows.source_row,
        pairs.chosen_index,
        pairs.rejected_index,
        raw_rows.source,
        {{ chat_messages([('user', 'raw_rows.prompt')]) }} as prompt,
        {{ chat_messages([('assistant', 'chosen.response')]) }} as chosen,
        {{ chat_messages([('assistant', 'rejected.response')]) }} as rejected,
        chosen.model as chosen_model,
        rejected.model as rejected_model,
        chosen.rating as chosen_score,
        rejected.rating as rejected_score
    from pairs
    inner join raw_rows
        on pairs.prompt_id = raw_rows.row_key
    inner join completions as chosen
        on pairs.prompt_id = chosen.prompt_id
        and pairs.chosen_index = chosen.completion_index
    inner join completions as rejected
        on pairs.prompt_id = rejected.prompt_id
        and pairs.rejected_index = rejected.completion_index

)

select * from final
