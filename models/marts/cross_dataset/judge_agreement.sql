{{ config(enabled=dataset_enabled('ultrafeedback') and dataset_enabled('rever')) }}
-- One row per ReVeR pair of source `ultrafeedback` whose instruction and both responses are
-- found in one UltraFeedback prompt: which response UltraFeedback's recomputed average rating
-- prefers, which its (buggy) overall_score prefers, and which the rubric judge preferred.
with

rever_pairs as (

    select * from {{ ref('rever_pairs') }}

),

completion_scores as (

    select * from {{ ref('ultrafeedback_completion_scores') }}

),

rever_ultrafeedback as (

    select
        id,
        instruction,
        {{ normalize_text('instruction') }} as instruction_key,
        chosen_response,
        rejected_response,
        chosen_score as judge_chosen_score,
        rejected_score as judge_rejected_score,
        kept
    from rever_pairs
    where source = 'ultrafeedback'

),

ultrafeedback_completions as (

    select
        prompt_id,
        {{ normalize_text('instruction') }} as instruction_key,
        completion_index,
        model,
        response,
        average_rating,
        overall_score
    from completion_scores

),

-- only the completions of prompts whose instruction a ReVeR pair has: the two joins below read
-- this twice, so the engine keeps it whole (a few rows here, not every completion's text)
matchable_completions as (

    select * from ultrafeedback_completions
    where instruction_key in (select instruction_key from rever_ultrafeedback)

),

-- both responses must come from the same UltraFeedback prompt (two different completions)
candidates as (

    select
        rever.*,
        chosen_side.prompt_id as ultrafeedback_prompt_id,
        chosen_side.completion_index as chosen_completion_index,
        rejected_side.completion_index as rejected_completion_index,
        chosen_side.model as chosen_model,
        rejected_side.model as rejected_model,
        chosen_side.average_rating as chosen_average_rating,
        rejected_side.average_rating as rejected_average_rating,
        chosen_side.overall_score as chosen_overall_score,
        rejected_side.overall_score as rejected_overall_score,
        count(*) over (partition by rever.id) as n_ultrafeedback_matches,
        row_number() over (
            partition by rever.id
            order by chosen_side.prompt_id, chosen_side.completion_index, rejected_side.completion_index
        ) as match_rank
    from rever_ultrafeedback as rever
    inner join matchable_completions as chosen_side
        on rever.instruction_key = chosen_side.instruction_key
        and rever.chosen_response = chosen_side.response
    inner join matchable_completions as rejected_side
        on chosen_side.prompt_id = rejected_side.prompt_id
        and rever.rejected_response = rejected_side.response
        and chosen_side.completion_index != rejected_side.completion_index

),

matched as (

    select * from candidates where match_rank = 1

),

preferences as (

    select
        *,
        {{ preference_side('chosen_average_rating', 'rejected_average_rating') }} as average_rating_prefers,
        {{ preference_side('chosen_overall_score', 'rejected_overall_score') }} as overall_score_prefers,
        {{ preference_side('judge_chosen_score', 'judge_rejected_score') }} as judge_prefers
    from matched

),

final as (

    select
        id,
        ultrafeedback_prompt_id,
        n_ultrafeedback_matches,
        cast(chosen_completion_index as bigint) as chosen_completion_index,
        cast(rejected_completion_index as bigint) as rejected_completion_index,
        chosen_model,
        rejected_model,
        chosen_average_rating,
        rejected_average_rating,
        chosen_overall_score,
        rejected_overall_score,
        judge_chosen_score,
        judge_rejected_score,
        kept,
        average_rating_prefers,
        overall_score_prefers,
        judge_prefers,
        average_rating_prefers in ('chosen', 'rejected')
            and overall_score_prefers in ('chosen', 'rejected')
            and average_rating_prefers != overall_score_prefers as ratings_disagree,
        judge_prefers in ('chosen', 'rejected') and judge_prefers = average_rating_prefers as judge_agrees_with_average_rating,
        judge_prefers in ('chosen', 'rejected') and judge_prefers = overall_score_prefers as judge_agrees_with_overall_score
    from preferences

)

select * from final
