-- One row per raw row: each of argilla's published columns beside the recomputed value and
-- whether they agree. The published random alternates can't be matched row for row (argilla's
-- seed is unknown), so they are located in the row's completions (same model and response)
-- and checked: another completion than the published pick, and obeying the lower-score rule
-- (strictly below the published pick on the recomputed score, NULL lowest; any other
-- completion when none is below).
{%- set picks = [
    {'name': 'best_rated', 'score': 'average_rating',
     'pick_model': 'published_best_rated_response_model', 'pick_response': 'published_best_rated_response_md5',
     'alt_model': 'published_random_response_for_best_rated_model', 'alt_response': 'published_random_response_for_best_rated_md5',
     'alt_score': 'published_score_random_response_for_best_rated'},
    {'name': 'best_overall', 'score': 'overall_score',
     'pick_model': 'published_best_overall_score_response_model', 'pick_response': 'published_best_overall_score_response_md5',
     'alt_model': 'published_random_response_for_best_overall_model', 'alt_response': 'published_random_response_for_best_overall_md5',
     'alt_score': 'published_score_random_response_for_best_overall'},
] %}

with

published as (

    select
        prompt_id,
        published_best_rated_model,
        published_score_best_rated,
        published_best_overall_model,
        published_score_best_overall,
        published_best_rated_is_different_from_best_overall,
        published_best_rated_response_model,
        published_best_rated_response_md5,
        published_best_overall_score_response_model,
        published_best_overall_score_response_md5,
        published_random_response_for_best_rated_model,
        published_random_response_for_best_rated_md5,
        published_score_random_response_for_best_rated,
        published_random_response_for_best_overall_model,
        published_random_response_for_best_overall_md5,
        published_score_random_response_for_best_overall,
        published_best_overall_score_response_critique_sentiment
    from {{ ref('stg_ultrafeedback__prompts') }}

),

picks as (

    select * from {{ ref('int_ultrafeedback__prompts_picked') }}

),

sentiments as (

    select * from {{ ref('int_ultrafeedback__critique_sentiments') }}

),

recomputed as (

    select
        picks.*,
        sentiments.critique_sentiment as best_overall_score_response_critique_sentiment
    from picks
    left join sentiments
        on picks.prompt_id = sentiments.prompt_id
        and picks.best_overall_index = sentiments.completion_index

),

completions as (

    select
        prompt_id,
        completion_index,
        model,
        response_md5,
        average_rating,
        published_average_rating,
        overall_score
    from {{ ref('int_ultrafeedback__completions_parsed') }}

),

-- which completion each published pick / alternate is (same model and response text; the texts
-- are compared by md5, so the join carries 32 characters, not the responses)
completions_matched as (

    select
        completions.prompt_id,
        completions.completion_index,
        completions.average_rating,
        completions.overall_score,
        {{ ultrafeedback_same_number('completions.average_rating', 'completions.published_average_rating') }}
            as average_rating_agrees,
        {%- for p in picks %}
        coalesce(completions.model = published.{{ p.pick_model }}
            and completions.response_md5 = published.{{ p.pick_response }}, false) as is_published_{{ p.name }},
        coalesce(completions.model = published.{{ p.alt_model }}
            and completions.response_md5 = published.{{ p.alt_response }}, false) as is_published_random_for_{{ p.name }}{{ "," if not loop.last }}
        {%- endfor %}
    from completions
    inner join published
        on completions.prompt_id = published.prompt_id

),

published_pick_positions as (

    select
        prompt_id,
        {%- for p in picks %}
        min(case when is_published_{{ p.name }} then completion_index end) as published_{{ p.name }}_index,
        {%- endfor %}
        sum(case when average_rating_agrees then 0 else 1 end) as n_average_rating_mismatches
    from completions_matched
    group by prompt_id

),

-- each completion against the published pick's recomputed score
completions_vs_published_pick as (

    select
        completions_matched.*,
        published_pick_positions.n_average_rating_mismatches,
        {%- for p in picks %}
        published_pick_positions.published_{{ p.name }}_index,
        max(case when completions_matched.completion_index = published_pick_positions.published_{{ p.name }}_index
            then completions_matched.{{ p.score }} end) over (partition by completions_matched.prompt_id)
            as published_{{ p.name }}_recomputed_score{{ "," if not loop.last }}
        {%- endfor %}
    from completions_matched
    inner join published_pick_positions
        on completions_matched.prompt_id = published_pick_positions.prompt_id

),

completions_compared as (

    select
        *,
        {%- for p in picks %}
        coalesce(completion_index <> published_{{ p.name }}_index, true) as is_other_than_published_{{ p.name }},
        case
            when published_{{ p.name }}_index is null then null
            when completion_index = published_{{ p.name }}_index then false
            when published_{{ p.name }}_recomputed_score is null then false
            when {{ p.score }} is null then true
            else {{ p.score }} < published_{{ p.name }}_recomputed_score
        end as is_below_published_{{ p.name }}{{ "," if not loop.last }}
        {%- endfor %}
    from completions_vs_published_pick

),

alternate_checks as (

    select
        prompt_id,
        max(n_average_rating_mismatches) as n_average_rating_mismatches,
        {%- for p in picks %}
        max(published_{{ p.name }}_index) as published_{{ p.name }}_index,
        min(case when is_published_random_for_{{ p.name }} and is_other_than_published_{{ p.name }}
            then completion_index end) as published_random_for_{{ p.name }}_index,
        max(case when is_published_random_for_{{ p.name }} and is_other_than_published_{{ p.name }}
            then {{ p.score }} end) as published_random_for_{{ p.name }}_recomputed_score,
        max(case when is_published_random_for_{{ p.name }} and is_other_than_published_{{ p.name }}
            then 1 else 0 end) = 1 as published_random_for_{{ p.name }}_is_other_completion,
        max(case when is_published_random_for_{{ p.name }} and is_below_published_{{ p.name }}
            then 1 else 0 end) = 1 as published_random_for_{{ p.name }}_is_below,
        sum(case when is_below_published_{{ p.name }} then 1 else 0 end) as n_below_published_{{ p.name }}{{ "," if not loop.last }}
        {%- endfor %}
    from completions_compared
    group by prompt_id

),

compared as (

    select
        ---------- keys
        recomputed.prompt_id,
        recomputed.source_file,
        recomputed.source_row,
        recomputed.n_completions,
        recomputed.has_no_completions,

        ---------- best rated
        published.published_best_rated_model,
        recomputed.best_rated_model,
        (recomputed.best_rated_model is not distinct from published.published_best_rated_model)
            as best_rated_model_agrees,
        published.published_score_best_rated,
        recomputed.score_best_rated,
        {{ ultrafeedback_same_number('recomputed.score_best_rated', 'published.published_score_best_rated') }}
            as score_best_rated_agrees,

        ---------- best overall
        published.published_best_overall_model,
        recomputed.best_overall_model,
        (recomputed.best_overall_model is not distinct from published.published_best_overall_model)
            as best_overall_model_agrees,
        published.published_score_best_overall,
        recomputed.score_best_overall,
        {{ ultrafeedback_same_number('recomputed.score_best_overall', 'published.published_score_best_overall') }}
            as score_best_overall_agrees,

        ---------- the flag
        published.published_best_rated_is_different_from_best_overall,
        recomputed.best_rated_is_different_from_best_overall,
        (
            recomputed.best_rated_is_different_from_best_overall
            is not distinct from published.published_best_rated_is_different_from_best_overall
        ) as best_rated_is_different_from_best_overall_agrees,

        ---------- each completion's average_rating
        cast(coalesce(alternate_checks.n_average_rating_mismatches, 0) as bigint) as n_average_rating_mismatches,
        coalesce(alternate_checks.n_average_rating_mismatches, 0) = 0 as average_ratings_agree,

        ---------- critique sentiment (argilla's method is not documented: shown, not compared)
        published.published_best_overall_score_response_critique_sentiment,
        recomputed.best_overall_score_response_critique_sentiment,

        ---------- published random alternates
        {%- for p in picks %}
        published.{{ p.alt_model }},
        alternate_checks.published_{{ p.name }}_index,
        alternate_checks.published_random_for_{{ p.name }}_index,
        case when published.{{ p.alt_response }} is not null
            then coalesce(alternate_checks.published_random_for_{{ p.name }}_is_other_completion, false)
        end as published_random_for_{{ p.name }}_is_other_completion,
        case
            when published.{{ p.alt_response }} is null then null
            when alternate_checks.published_{{ p.name }}_index is null then null
            else coalesce(alternate_checks.published_random_for_{{ p.name }}_is_other_completion, false)
                and (alternate_checks.published_random_for_{{ p.name }}_is_below
                    or alternate_checks.n_below_published_{{ p.name }} = 0)
        end as published_random_for_{{ p.name }}_obeys_rule,
        published.{{ p.alt_score }},
        {{ ultrafeedback_same_number('published.' ~ p.alt_score, 'alternate_checks.published_random_for_' ~ p.name ~ '_recomputed_score') }}
            as {{ p.alt_score | replace('published_', '') }}_agrees,
        {%- endfor %}

        ---------- summary
        (recomputed.best_rated_model is not distinct from published.published_best_rated_model)
            and {{ ultrafeedback_same_number('recomputed.score_best_rated', 'published.published_score_best_rated') }}
            and (recomputed.best_overall_model is not distinct from published.published_best_overall_model)
            and {{ ultrafeedback_same_number('recomputed.score_best_overall', 'published.published_score_best_overall') }}
            and (
                recomputed.best_rated_is_different_from_best_overall
                is not distinct from published.published_best_rated_is_different_from_best_overall
            )
            and coalesce(alternate_checks.n_average_rating_mismatches, 0) = 0
            as published_picks_agree

    from recomputed
    inner join published
        on recomputed.prompt_id = published.prompt_id
    left join alternate_checks
        on recomputed.prompt_id = alternate_checks.prompt_id

)

select * from compared
