{#- Picks among the rated items of a group (the completions of a prompt), one rule for every
    dataset: UltraFeedback's completions (int_ultrafeedback__completions_ranked) and the
    rated_completions entries of the registry (int_extra__rated_completions_ranked).

    ranked_picks(relation, group_key, index, picks): the rows of `relation` with, for each
    (pick, score column) in `picks`:
      is_<pick>                         the highest score, NULL below every number, ties to the
                                        first in list order (smallest `index`);
      is_below_<pick>                   strictly below the pick's score (NULL is below any number,
                                        nothing is below a NULL pick);
      n_below_<pick>                    how many of the group are below;
      is_alternate_candidate_for_<pick> those below; when none is, every other item;
      is_random_for_<pick>              the candidate with the smallest
                                        stable_hash(random_seed, pick, group key, index): uniform,
                                        deterministic for a seed, independent of threads and engine.
    Returns the SQL of a subquery. -#}
{% macro ranked_picks(relation, group_key, index, picks) %}
    {%- set sql -%}
(
    with

    ranked as (

        select
            *,
            {%- for pick, score in picks %}
            row_number() over (
                partition by {{ group_key }}
                order by {{ score }} desc nulls last, {{ index }} asc
            ) as {{ pick }}_rank,
            max({{ score }}) over (partition by {{ group_key }}) as {{ pick }}_score{{ "," if not loop.last }}
            {%- endfor %}
        from {{ relation }}

    ),

    compared as (

        select
            *,
            {%- for pick, score in picks %}
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
            sum(case when is_below_{{ pick }} then 1 else 0 end) over (partition by {{ group_key }})
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
            {{ stable_hash(["'" ~ var('random_seed') ~ "'", "'" ~ pick ~ "'", group_key, index]) }}
                as {{ pick }}_draw_key{{ "," if not loop.last }}
            {%- endfor %}
        from eligibility

    ),

    drawn as (

        select
            *,
            {%- for pick, score in picks %}
            row_number() over (
                partition by {{ group_key }}
                order by
                    case when is_alternate_candidate_for_{{ pick }} then 0 else 1 end,
                    {{ pick }}_draw_key,
                    {{ index }}
            ) as {{ pick }}_draw_rank{{ "," if not loop.last }}
            {%- endfor %}
        from candidates

    )

    select
        *,
        {%- for pick, score in picks %}
        {{ pick }}_rank = 1 as is_{{ pick }},
        is_alternate_candidate_for_{{ pick }} and {{ pick }}_draw_rank = 1 as is_random_for_{{ pick }}{{ "," if not loop.last }}
        {%- endfor %}
    from drawn
)
    {%- endset -%}
    {{ return(sql) }}
{% endmacro %}

{#- The mean of the non-NULL values among `exprs` (a list of SQL expressions), NULL when all are
    NULL; added in the order given, so the result does not depend on row order. -#}
{% macro mean_of_present(exprs) -%}
    cast(({% for e in exprs %}coalesce({{ e }}, 0){{ ' + ' if not loop.last }}{% endfor %}) as double)
        / nullif({% for e in exprs %}case when {{ e }} is not null then 1 else 0 end{{ ' + ' if not loop.last }}{% endfor %}, 0)
{%- endmacro %}
