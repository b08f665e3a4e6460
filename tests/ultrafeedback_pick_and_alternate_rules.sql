-- Re-checks the ranking and alternate rules on the mart, pairwise:
--   * no completion beats the pick: none has a higher score, none earlier has the same score
--     (NULL below every number);
--   * the alternate is another completion, and is strictly below the pick unless no other
--     completion is below it.
{%- set picks = [('best_rated', 'average_rating'), ('best_overall', 'overall_score')] %}

with

completions as (

    select * from {{ ref('ultrafeedback_completion_scores') }}

),

{% for pick, score in picks %}
{{ pick }}_pairs as (

    select
        '{{ pick }}' as pick,
        chosen.prompt_id,
        chosen.completion_index as pick_index,
        other.completion_index as other_index,
        other.is_random_for_{{ pick }} as other_is_random,
        -- other strictly above / equal / strictly below the pick, NULL lowest
        case
            when chosen.{{ score }} is null and other.{{ score }} is null then 0
            when chosen.{{ score }} is null then 1
            when other.{{ score }} is null then -1
            when other.{{ score }} > chosen.{{ score }} then 1
            when other.{{ score }} < chosen.{{ score }} then -1
            else 0
        end as other_vs_pick
    from completions as chosen
    inner join completions as other
        on chosen.prompt_id = other.prompt_id
        and chosen.completion_index <> other.completion_index
    where chosen.is_{{ pick }}

),
{% endfor %}

pairs as (

    {% for pick, score in picks %}
    select * from {{ pick }}_pairs
    {{ "union all" if not loop.last }}
    {% endfor %}

),

per_pick as (

    select
        pick,
        prompt_id,
        sum(case when other_vs_pick = 1 then 1 else 0 end) as n_above,
        sum(case when other_vs_pick = 0 and other_index < pick_index then 1 else 0 end) as n_earlier_tie,
        sum(case when other_vs_pick = -1 then 1 else 0 end) as n_below,
        sum(case when other_is_random then 1 else 0 end) as n_random_among_others,
        sum(case when other_is_random and other_vs_pick = -1 then 1 else 0 end) as n_random_below
    from pairs
    group by pick, prompt_id

)

select *
from per_pick
where n_above > 0
    or n_earlier_tie > 0
    or n_random_among_others <> 1
    or (n_below > 0 and n_random_below <> 1)
