-- One row per raw row x completion, narrow (keys, model, scores, picks): the best-rated and
-- best-overall picks and their random alternates, by the rules in the yml (macros/ranked_picks.sql,
-- the rule every dataset with rated completions uses).
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
        overall_score,
        has_invalid_rating
    from {{ ref('int_ultrafeedback__completions_parsed') }}

),

drawn as (

    select * from {{ ranked_picks('completions', 'prompt_id', 'completion_index', picks) }} as picked

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
        has_invalid_rating,

        ---------- picks
        {%- for pick, score in picks %}
        is_{{ pick }},
        is_alternate_candidate_for_{{ pick }},
        is_random_for_{{ pick }},
        {%- endfor %}
        cast(n_below_best_rated as integer) as n_below_best_rated,
        cast(n_below_best_overall as integer) as n_below_best_overall
    from drawn

)

select * from final
