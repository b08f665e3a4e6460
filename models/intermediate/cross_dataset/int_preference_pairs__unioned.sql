-- Every dataset's pairs before the checks every dataset gets, the same columns for each: the
-- rows of preference_pairs. The built-in datasets whose groups the `datasets` var enables
-- come first, then the `extra_datasets` entries in order. A view: preference_pairs reads it
-- whole, contamination_matches reads only the prompts. Its refs name no database, so the view
-- keeps working (and is reused) in a copied or renamed warehouse file.
{{ config(materialized='view') }}
{%- set parts = [] %}

with

{% if dataset_enabled('ultrafeedback') -%}
{%- do parts.append('ultrafeedback_pairs') %}
-- best rated vs its random alternate, when the alternate scores strictly lower
ultrafeedback_pairs as (

    select
        'ultrafeedback' as dataset,
        {{ preference_pair_id('ultrafeedback', 'prompt_id') }} as pair_id,
        source,
        prompt_id,
        prompt,
        chosen,
        rejected,
        chosen_model,
        rejected_model,
        chosen_score,
        rejected_score,
        score_kind,
        score_margin,
        margin,
        dataset_flags as integrity_flags,
        0 as registry_order
    from {{ ref('int_ultrafeedback__pairs').include(database=False) }}

),

{% endif -%}
{% if dataset_enabled('code_ultrafeedback') -%}
{%- do parts.append('code_ultrafeedback_pairs') %}
-- the corrected pairs (valid integer ratings, chosen strictly higher)
code_ultrafeedback_pairs as (

    select
        'code_ultrafeedback' as dataset,
        {{ preference_pair_id('code_ultrafeedback', 'pair_id') }} as pair_id,
        preference as source,
        prompt_id,
        prompt,
        chosen,
        rejected,
        chosen_model,
        rejected_model,
        cast(chosen_rating as double) as chosen_score,
        cast(rejected_rating as double) as rejected_score,
        '{{ builtin_score_ranges()['code_ultrafeedback'].score_kind }}' as score_kind,
        cast(score_margin as double) as score_margin,
        margin,
        dataset_flags as integrity_flags,
        1 as registry_order
    from {{ ref('int_code_ultrafeedback__pairs').include(database=False) }}

),

{% endif -%}
{% if dataset_enabled('rever') -%}
{%- do parts.append('rever_kept_pairs') %}
rever_pairs as (

    select * from {{ ref('int_rever__pairs').include(database=False) }}

),

-- pairs the upstream retention rule keeps: the chosen response scores strictly higher. No flag
-- here: a pair's own flags are the breaks rever_integrity (a mart) records for its id, which
-- preference_pairs adds
rever_kept_pairs as (

    select
        'rever' as dataset,
        {{ preference_pair_id('rever', 'rever_pairs.id') }} as pair_id,
        rever_pairs.source,
        rever_pairs.id as prompt_id,
        {{ chat_messages([('user', 'rever_pairs.instruction')]) }} as prompt,
        {{ chat_messages([('assistant', 'rever_pairs.chosen_response')]) }} as chosen,
        {{ chat_messages([('assistant', 'rever_pairs.rejected_response')]) }} as rejected,
        cast(null as {{ dbt.type_string() }}) as chosen_model,
        cast(null as {{ dbt.type_string() }}) as rejected_model,
        rever_pairs.chosen_score,
        rever_pairs.rejected_score,
        '{{ builtin_score_ranges()['rever'].score_kind }}' as score_kind,
        rever_pairs.score_margin,
        rever_pairs.margin,
        {{ empty_string_list() }} as integrity_flags,
        2 as registry_order
    from rever_pairs
    where rever_pairs.kept

),

{% endif -%}
{%- do parts.append('extra_pairs') %}
-- the registry's entries (models/intermediate/extra/), after the built-in datasets
extra_pairs as (

    select
        dataset,
        pair_id,
        source,
        prompt_id,
        prompt,
        chosen,
        rejected,
        chosen_model,
        rejected_model,
        chosen_score,
        rejected_score,
        score_kind,
        score_margin,
        margin,
        dataset_flags as integrity_flags,
        3 + registry_order as registry_order,
        source_file,
        source_row,
        chosen_index,
        rejected_index
    from {{ ref('int_extra__pairs').include(database=False) }}

),

unioned as (

    {% for part in parts %}
    select
        *
        {%- if part != 'extra_pairs' %},
        cast(null as {{ dbt.type_string() }}) as source_file,
        cast(null as bigint) as source_row,
        cast(null as bigint) as chosen_index,
        cast(null as bigint) as rejected_index
        {%- endif %}
    from {{ part }}
    {% if not loop.last %}union all{% endif %}
    {% endfor %}

)

select * from unioned
