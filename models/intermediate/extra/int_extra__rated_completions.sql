-- One row per raw row x completion of the registry's rated_completions entries: the completion's
-- rating (the mean of its rating paths' values that are numbers, or strings holding one, within
-- the entry's score_range; NULL when none is) and the best-rated pick with its random lower
-- alternate, by the rule every dataset with rated completions uses (macros/ranked_picks.sql).
{%- set n_ratings = extra_datasets_of(['rated_completions']) | map(attribute='ratings') | map('length') | max or 1 %}
{%- set rating_columns = [] %}
{%- for i in range(n_ratings) %}{% do rating_columns.append('rating_' ~ i) %}{% endfor %}

with

raw_rows as (

    select * from {{ ref('stg_extra__rated_rows') }}

),

registry as (

    select * from {{ ref('extra_datasets') }}

),

completions as (

    select
        raw_rows.row_key as prompt_id,
        raw_rows.dataset,
        raw_rows.source_file,
        raw_rows.source_row,
        raw_rows.source,
        raw_rows.prompt,
        {{ explode_with_index('raw_rows.completions', 'completion_index', 'completion') }}
    from raw_rows

),

fields as (

    select
        prompt_id,
        dataset,
        source_file,
        source_row,
        source,
        prompt,
        completion_index,
        completion.response as response,  -- noqa: AL09
        completion.model as model,  -- noqa: AL09
        completion.ratings as ratings  -- noqa: AL09
    from completions

),

parsed as (

    select
        fields.prompt_id,
        fields.dataset,
        fields.source_file,
        fields.source_row,
        fields.source,
        fields.prompt,
        fields.completion_index,
        fields.response,
        fields.model,
        registry.pairing,
        {%- for i in range(n_ratings) %}
        case
            when {{ parse_number(list_at('fields.ratings', i)) }}
                between registry.score_min and registry.score_max
                then {{ parse_number(list_at('fields.ratings', i)) }}
        end as rating_{{ i }}{{ ',' if not loop.last }}
        {%- endfor %}
    from fields
    inner join registry
        on fields.dataset = registry.dataset

),

rated as (

    select
        prompt_id,
        dataset,
        source_file,
        source_row,
        source,
        prompt,
        completion_index,
        response,
        model,
        pairing,
        {{ mean_of_present(rating_columns) }} as rating
    from parsed

),

picked as (

    select * from {{ ranked_picks('rated', 'prompt_id', 'completion_index', [('best_rated', 'rating')]) }} as picks

)

select
    prompt_id,
    dataset,
    source_file,
    source_row,
    source,
    prompt,
    completion_index,
    response,
    model,
    pairing,
    rating,
    is_best_rated,
    is_below_best_rated,
    is_random_for_best_rated
from picked
