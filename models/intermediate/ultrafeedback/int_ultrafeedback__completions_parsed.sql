-- One row per raw row x completion: the completions list unnested once (0-based list
-- position), each aspect's Rating parsed and their mean recomputed. Narrow (no long texts):
-- response and critique are in int_ultrafeedback__completion_texts. Rows whose list is
-- empty or NULL produce no row here; they stay in the prompt-grain models with
-- `has_no_completions` (int_ultrafeedback__prompts_picked, ultrafeedback_curated).
{#- UltraFeedback's four rated aspects (the raw field `<aspect>_rating_raw`, parsed into
    `<aspect>_rating`), each rated 1..5 or "N/A". -#}
{%- set aspects = ['helpfulness', 'honesty', 'instruction_following', 'truthfulness'] %}

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
        completion.{{ a }}_rating_raw as {{ a }}_rating_raw{{ "," if not loop.last }}  -- noqa: AL09
        {%- endfor %}

    from unnested

),

ratings_parsed as (

    select
        *,
        -- a rating on the 1..5 scale is cast; "N/A" and anything else are NULL
        {%- for a in aspects %}
        case
            when {{ a }}_rating_raw in ('1', '2', '3', '4', '5')
                then cast({{ a }}_rating_raw as integer)
        end as {{ a }}_rating,
        {%- endfor %}
        -- invalid: NULL, or neither on the scale nor "N/A"
        {%- for a in aspects %}
        ({{ a }}_rating_raw is null or {{ a }}_rating_raw not in ('1', '2', '3', '4', '5', 'N/A'))
            as {{ a }}_rating_is_invalid{{ "," if not loop.last }}
        {%- endfor %}
    from flattened

),

averaged as (

    select
        *,
        {%- for a in aspects %}
        case when {{ a }}_rating is not null then 1 else 0 end{{ " +" if not loop.last }}
        {%- endfor %} as n_valid_ratings,
        {%- for a in aspects %}
        {{ a }}_rating_is_invalid{{ " or" if not loop.last }}
        {%- endfor %} as has_invalid_rating
    from ratings_parsed

),

final as (

    select
        *,
        {{ mean_of_present(['helpfulness_rating', 'honesty_rating', 'instruction_following_rating', 'truthfulness_rating']) }} as average_rating
    from averaged

)

select * from final
