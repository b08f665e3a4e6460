-- One row per raw row x completion: the completions list unnested once (0-based list
-- position), each aspect's Rating parsed and their mean recomputed. Narrow (no long texts):
-- response and critique are in int_ultrafeedback__completion_texts. Rows whose list is
-- empty or NULL produce no row here; they stay in the prompt-grain models with
-- `has_no_completions` (int_ultrafeedback__prompts_picked, ultrafeedback_curated).
{#- The aspects (in alphabetical order), the column each rating goes to and its scale come from
    the seed ultrafeedback_aspects, read when the model is compiled to run: from the seed's table
    (a build loads it first: it is a ref), or, where that table is not there (a unit test, lint,
    `dbt compile` before the first build), from seeds/ultrafeedback_aspects.csv through DuckDB. -#}
{%- set aspects_seed = ref('ultrafeedback_aspects') %}
{%- set aspects = [] %}
{%- if execute %}
    {%- set seed_table = load_relation(aspects_seed) if model.resource_type != 'unit_test' %}
    {%- if seed_table is none and target.type != 'duckdb' %}
        {{- exceptions.raise_compiler_error('Load the seed first: dbt seed -s ultrafeedback_aspects') }}
    {%- endif %}
    {#- the CSV by its absolute path where the graph gives it (dbt may run from another folder
        with --project-dir); a unit test has no graph: relative to the working directory -#}
    {%- set seed_node = (graph.get('nodes') or {}).get('seed.' ~ project_name ~ '.ultrafeedback_aspects') %}
    {%- set seed_path = (seed_node.root_path ~ '/' ~ seed_node.original_file_path) if seed_node
                        else 'seeds/ultrafeedback_aspects.csv' %}
    {%- set seed_csv = "read_csv(" ~ sql_string(seed_path) ~ ")" %}
    {%- set seed_rows = run_query(
        'select aspect, rating_column, scale_min, scale_max from '
        ~ (seed_table or seed_csv) ~ ' order by aspect'
    ) %}
    {%- for row in seed_rows %}
        {%- do aspects.append({
            'name': row['aspect'],
            'rating_column': row['rating_column'],
            'scale': range(row['scale_min'] | int, (row['scale_max'] | int) + 1) | map('string') | list,
        }) %}
    {%- endfor %}
{%- endif %}

with

prompts as (

    select * from {{ ref('stg_ultrafeedback__prompts') }}

),

unnested as (

    select
        prompt_id,
        {{ explode_with_index('completions', 'completion_index', 'completion') }}
    from prompts

),

flattened as (

    select
        ---------- keys
        {{ stable_hash(['prompt_id', 'completion_index']) }} as completion_id,
        prompt_id,
        cast(completion_index as integer) as completion_index,

        ---------- completion
        completion.model as model,  -- noqa: AL09
        -- the texts are in int_ultrafeedback__completion_texts; their md5s are kept here: the
        -- critique's is the key of its VADER score, the response's matches argilla's published picks
        md5(completion.response) as response_md5,
        md5(completion.critique) as critique_md5,
        completion.overall_score as overall_score,  -- noqa: AL09
        completion.published_average_rating as published_average_rating,  -- noqa: AL09

        ---------- raw rating strings
        {%- for a in aspects %}
        completion.{{ a.name }}_rating_raw as {{ a.name }}_rating_raw{{ "," if not loop.last }}  -- noqa: AL09
        {%- endfor %}

    from unnested

),

ratings_parsed as (

    select
        *,
        -- a rating on the aspect's scale is cast; "N/A" and anything else are NULL
        {%- for a in aspects %}
        case
            when {{ a.name }}_rating_raw in ('{{ a.scale | join("', '") }}')
                then cast({{ a.name }}_rating_raw as integer)
        end as {{ a.rating_column }},
        {%- endfor %}
        -- invalid: NULL, or neither on the scale nor "N/A"
        {%- for a in aspects %}
        ({{ a.name }}_rating_raw is null or {{ a.name }}_rating_raw not in ('{{ a.scale | join("', '") }}', 'N/A'))
            as {{ a.name }}_rating_is_invalid{{ "," if not loop.last }}
        {%- endfor %}
    from flattened

),

averaged as (

    select
        *,
        {%- for a in aspects %}
        case when {{ a.rating_column }} is not null then 1 else 0 end{{ " +" if not loop.last }}
        {%- endfor %} as n_valid_ratings,
        {%- for a in aspects %}
        {{ a.name }}_rating_is_invalid{{ " or" if not loop.last }}
        {%- endfor %} as has_invalid_rating
    from ratings_parsed

),

final as (

    select
        *,
        {{ mean_of_present(aspects | map(attribute='rating_column') | list) }} as average_rating
    from averaged

)

select * from final
