-- The overall_score bug in numbers: one row per source (scope 'source'), one per model (scope
-- 'model') and one over all completions (scope 'total'), all aggregated from the completions in
-- one grouping-sets pass (macros/cross_engine/summary_scopes.sql). Counts of completions with
-- overall_score 10 and a low recomputed average_rating (<= 2) and/or a negative critique (VADER
-- compound <= -0.05), how often the best-overall pick is not the best-rated one, and the score
-- gaps between the two picks when they differ. Raw rows without completions have nothing to
-- count here.
with

ranked as (

    select * from {{ ref('int_ultrafeedback__completions_ranked') }}

),

picks as (

    select
        prompt_id,
        source,
        best_rated_is_different_from_best_overall
    from {{ ref('int_ultrafeedback__prompts_picked') }}

),

sentiments as (

    select * from {{ ref('int_ultrafeedback__critique_sentiments') }}

),

-- the scores of both picks side by side, per prompt
pick_scores as (

    select
        prompt_id,
        max(case when is_best_rated then average_rating end) as best_rated_average_rating,
        max(case when is_best_rated then overall_score end) as best_rated_overall_score,
        max(case when is_best_overall then average_rating end) as best_overall_average_rating,
        max(case when is_best_overall then overall_score end) as best_overall_overall_score
    from ranked
    group by prompt_id

),

completion_facts as (

    select
        ranked.prompt_id,
        picks.source,
        ranked.model,
        ranked.overall_score = 10 as has_overall_score_10,
        coalesce(ranked.average_rating <= 2, false) as has_low_rating,
        coalesce(sentiments.critique_sentiment <= -0.05, false) as has_negative_critique,
        ranked.is_best_overall,
        ranked.is_best_overall and picks.best_rated_is_different_from_best_overall
            as is_best_overall_not_best_rated,
        case when ranked.is_best_overall and picks.best_rated_is_different_from_best_overall
            then pick_scores.best_rated_average_rating - pick_scores.best_overall_average_rating
        end as average_rating_gap,
        case when ranked.is_best_overall and picks.best_rated_is_different_from_best_overall
            then pick_scores.best_overall_overall_score - pick_scores.best_rated_overall_score
        end as overall_score_gap
    from ranked
    inner join picks
        on ranked.prompt_id = picks.prompt_id
    inner join pick_scores
        on ranked.prompt_id = pick_scores.prompt_id
    left join sentiments
        on ranked.prompt_id = sentiments.prompt_id
        and ranked.completion_index = sentiments.completion_index

),

aggregated as (

    select
        {{ summary_scope(['source', 'model']) }} as scope,
        source,
        model,
        count(distinct prompt_id) as n_prompts,
        count(*) as n_completions,
        sum(case when has_overall_score_10 then 1 else 0 end) as n_overall_score_10,
        sum(case when has_overall_score_10 and has_low_rating then 1 else 0 end)
            as n_overall_score_10_low_rating,
        sum(case when has_overall_score_10 and has_negative_critique then 1 else 0 end)
            as n_overall_score_10_negative_critique,
        sum(case when has_overall_score_10 and has_low_rating and has_negative_critique then 1 else 0 end)
            as n_overall_score_10_low_rating_negative_critique,
        sum(case when is_best_overall then 1 else 0 end) as n_best_overall_picks,
        sum(case when is_best_overall_not_best_rated then 1 else 0 end) as n_best_rated_is_different,
        {{ exact_mean("average_rating_gap") }} as mean_average_rating_gap,
        {{ exact_mean("overall_score_gap") }} as mean_overall_score_gap
    from completion_facts
    {{ summary_group_by(['source', 'model']) }}

),

-- every group, and the total row even without completions (see summary_scopes)
scopes as (

    select
        scope,
        source,
        model
    from aggregated
    union
    select
        'total' as scope,
        cast(null as {{ dbt.type_string() }}) as source,
        cast(null as {{ dbt.type_string() }}) as model

),

final as (

    select
        -- the grouping level and its value: the keys of the source and model rows are those of
        -- the former (dimension, dimension_value) rows
        {{ stable_hash(['scopes.scope', 'coalesce(scopes.source, scopes.model)']) }} as summary_key,
        scopes.scope,
        scopes.source,
        scopes.model,
        coalesce(aggregated.n_prompts, 0) as n_prompts,
        coalesce(aggregated.n_completions, 0) as n_completions,
        cast(coalesce(aggregated.n_overall_score_10, 0) as bigint) as n_overall_score_10,
        cast(coalesce(aggregated.n_overall_score_10_low_rating, 0) as bigint) as n_overall_score_10_low_rating,
        cast(coalesce(aggregated.n_overall_score_10_negative_critique, 0) as bigint)
            as n_overall_score_10_negative_critique,
        cast(coalesce(aggregated.n_overall_score_10_low_rating_negative_critique, 0) as bigint)
            as n_overall_score_10_low_rating_negative_critique,
        cast(aggregated.n_overall_score_10_low_rating as double) / nullif(aggregated.n_overall_score_10, 0)
            as share_overall_score_10_low_rating,
        cast(coalesce(aggregated.n_best_overall_picks, 0) as bigint) as n_best_overall_picks,
        cast(coalesce(aggregated.n_best_rated_is_different, 0) as bigint) as n_best_rated_is_different,
        cast(aggregated.n_best_rated_is_different as double) / nullif(aggregated.n_best_overall_picks, 0)
            as share_best_rated_is_different,
        aggregated.mean_average_rating_gap,
        aggregated.mean_overall_score_gap
    from scopes
    left join aggregated
        on scopes.scope = aggregated.scope
        and scopes.source is not distinct from aggregated.source
        and scopes.model is not distinct from aggregated.model

)

select * from final
