-- One row per preference pair, the same columns for every dataset, ready for TRL's DPO and
-- reward trainers: chosen/rejected are [{role, content}] lists (user prompt, then the
-- assistant response). Only the dataset groups enabled by the `datasets` var are included.
{%- set parts = [] %}

with

{% if dataset_enabled('ultrafeedback') -%}
{%- do parts.append('ultrafeedback_pairs') %}
ultrafeedback_curated as (

    select * from {{ ref('ultrafeedback_curated') }}

),

-- best rated vs its random alternate; ties and unrated alternates are not preferences
ultrafeedback_pairs as (

    select
        'ultrafeedback' as dataset,
        {{ stable_hash(["'ultrafeedback'", 'prompt_id']) }} as pair_id,
        source,
        prompt_id,
        instruction as prompt,
        best_rated_response as chosen_response,
        random_response_for_best_rated as rejected_response,
        best_rated_model as chosen_model,
        random_response_for_best_rated_model as rejected_model,
        score_best_rated as chosen_score,
        score_random_response_for_best_rated as rejected_score,
        'average_rating_1_5' as score_kind
    from ultrafeedback_curated
    where score_best_rated > score_random_response_for_best_rated

),

{% endif -%}
{% if dataset_enabled('code_ultrafeedback') -%}
{%- do parts.append('code_ultrafeedback_pairs') %}
code_ultrafeedback_corrected as (

    select * from {{ ref('code_ultrafeedback_pairs') }}

),

code_ultrafeedback_responses as (

    select * from {{ ref('code_ultrafeedback_responses') }}

),

-- the corrected pairs (valid integer ratings, chosen strictly higher), with their texts
code_ultrafeedback_pairs as (

    select
        'code_ultrafeedback' as dataset,
        {{ stable_hash(["'code_ultrafeedback'", 'pairs.pair_id']) }} as pair_id,
        pairs.preference as source,
        pairs.prompt_id,
        chosen_side.instruction as prompt,
        chosen_side.response as chosen_response,
        rejected_side.response as rejected_response,
        pairs.chosen_model,
        pairs.rejected_model,
        cast(pairs.chosen_rating as double) as chosen_score,
        cast(pairs.rejected_rating as double) as rejected_score,
        'rating_1_5' as score_kind
    from code_ultrafeedback_corrected as pairs
    inner join code_ultrafeedback_responses as chosen_side
        on pairs.prompt_id = chosen_side.prompt_id
        and pairs.chosen_response_index = chosen_side.response_index
    inner join code_ultrafeedback_responses as rejected_side
        on pairs.prompt_id = rejected_side.prompt_id
        and pairs.rejected_response_index = rejected_side.response_index

),

{% endif -%}
{% if dataset_enabled('rever') -%}
{%- do parts.append('rever_kept_pairs') %}
rever_pairs as (

    select * from {{ ref('rever_pairs') }}

),

-- pairs the upstream retention rule keeps: the chosen response scores strictly higher
rever_kept_pairs as (

    select
        'rever' as dataset,
        {{ stable_hash(["'rever'", 'id']) }} as pair_id,
        source,
        id as prompt_id,
        instruction as prompt,
        chosen_response,
        rejected_response,
        cast(null as {{ dbt.type_string() }}) as chosen_model,
        cast(null as {{ dbt.type_string() }}) as rejected_model,
        chosen_score,
        rejected_score,
        'rubric_score' as score_kind
    from rever_pairs
    where kept

),

{% endif -%}
unioned as (

    {% for part in parts %}
    select * from {{ part }}
    {% if not loop.last %}union all{% endif %}
    {% endfor %}
    {% if not parts %}
    -- no dataset group enabled: an empty table with the same columns
    select
        cast(null as {{ dbt.type_string() }}) as dataset, cast(null as {{ dbt.type_string() }}) as pair_id,
        cast(null as {{ dbt.type_string() }}) as source, cast(null as {{ dbt.type_string() }}) as prompt_id,
        cast(null as {{ dbt.type_string() }}) as prompt, cast(null as {{ dbt.type_string() }}) as chosen_response,
        cast(null as {{ dbt.type_string() }}) as rejected_response, cast(null as {{ dbt.type_string() }}) as chosen_model,
        cast(null as {{ dbt.type_string() }}) as rejected_model, cast(null as double) as chosen_score,
        cast(null as double) as rejected_score, cast(null as {{ dbt.type_string() }}) as score_kind
    where false
    {% endif %}

),

final as (

    select
        dataset,
        pair_id,
        source,
        prompt_id,
        prompt,
        {{ chat_pair('prompt', 'chosen_response') }} as chosen,
        {{ chat_pair('prompt', 'rejected_response') }} as rejected,
        chosen_response,
        rejected_response,
        chosen_model,
        rejected_model,
        chosen_score,
        rejected_score,
        chosen_score - rejected_score as score_margin,
        score_kind
    from unioned

)

select * from final
