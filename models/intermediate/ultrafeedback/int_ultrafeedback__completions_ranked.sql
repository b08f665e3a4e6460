-- One row per raw row x completion, narrow (keys, model, scores, picks): the best-rated and
-- best-overall picks and their random alternates, by the rules in the yml.
-- Ranking: higher value first, NULL below every number, ties to the first in list order.
-- Alternates: among the other completions, those strictly below the pick (NULL counts as
-- below any number); when none is below, all the others. The draw is the candidate with the
-- smallest stable_hash(random_seed, pick name, prompt_id, completion_index): uniform,
-- deterministic for a seed, independent of threads and engine.
{%- set picks = [('best_rated', 'average_rating'), ('best_overall', 'overall_score')] %}

with

completions as (

    select
        prompt_id,
        completion_index,
        model,
        average_rating,
        overall_score
    from {{ ref('int_ultrafeedback__completions_parsed') }}

),

ranked as (

    select
        *,
        {%- for pick, score in picks %}
        row_number() over (
            partition by prompt_id
            order by {{ score }} desc nulls last, completion_index asc
        ) as {{ pick }}_rank,
        max({{ score }}) over (partition by prompt_id) as {{ pick }}_score{{ "," if not loop.last }}
        {%- endfor %}
    from completions

),

compared as (

    select
        *,
        {%- for pick, score in picks %}
        -- strictly below the pick's score; NULL is below any number, NULL is not below NULL
        case
            when {{ pick }}_score is null then false
            when {{ score }} is null then true
            else {{ score }} < {{ pick }}_score
        end as is_below_{{ pick }}{{ "," if not loop.last }}
        {%- endfor %}
    from ranked

),

eligibility as (

    select
        *,
        {%- for pick, score in picks %}
        sum(case when is_below_{{ pick }} then 1 else 0 end) over (partition by prompt_id)
            as n_below_{{ pick }}{{ "," if not loop.last }}
        {%- endfor %}
    from compared

),

candidates as (

    select
        *,
        {%- for pick, score in picks %}
        {{ pick }}_rank > 1 and (is_below_{{ pick }} or n_below_{{ pick }} = 0)
            as is_alternate_candidate_for_{{ pick }},
        {{ stable_hash(["'" ~ var('random_seed') ~ "'", "'" ~ pick ~ "'", 'prompt_id', 'completion_index']) }}
            as {{ pick }}_draw_key{{ "," if not loop.last }}
        {%- endfor %}
    from eligibility

),

drawn as (

    select
        *,
        {%- for pick, score in picks %}
        row_number() over (
            partition by prompt_id
            order by
                case when is_alternate_candidate_for_{{ pick }} then 0 else 1 end,
                {{ pick }}_draw_key,
                completion_index
        ) as {{ pick }}_draw_rank{{ "," if not loop.last }}
        {%- endfor %}
    from candidates

),

final as (

    select
        ---------- keys
        prompt_id,
        completion_index,

        ---------- completion
        model,
        average_rating,
        overall_score,

        ---------- picks
        {%- for pick, score in picks %}
        {{ pick }}_rank = 1 as is_{{ pick }},
        is_alternate_candidate_for_{{ pick }},
        is_alternate_candidate_for_{{ pick }} and {{ pick }}_draw_rank = 1
            as is_random_for_{{ pick }},
        {%- endfor %}
        cast(n_below_best_rated as integer) as n_below_best_rated,
        cast(n_below_best_overall as integer) as n_below_best_overall
    from drawn

)

select * from final
