-- One row per normalised prompt that occurs in more than one dataset (UltraFeedback,
-- CodeUltraFeedback, ReVeR and the `extra_datasets` entries), for contamination and train/test
-- leakage checks. RLHFlow/CodeUltraFeedback-standard is derived from CodeUltraFeedback and not
-- counted apart. An entry's prompt is the text of its pairs' user turns (joined by a blank line).
{%- set parts = ['extra_prompts'] %}
{%- set entries = extra_datasets() %}

with

{% if dataset_enabled('ultrafeedback') -%}
{%- do parts.append('ultrafeedback_prompts') %}
ultrafeedback_prompts as (

    select 'ultrafeedback' as dataset, prompt_id, instruction as prompt
    from {{ ref('ultrafeedback_curated') }}

),

{% endif -%}
{% if dataset_enabled('code_ultrafeedback') -%}
{%- do parts.append('code_ultrafeedback_prompts') %}
code_ultrafeedback_prompts as (

    select 'code_ultrafeedback' as dataset, prompt_id, instruction as prompt
    from {{ ref('stg_code_ultrafeedback__prompts') }}

),

{% endif -%}
{% if dataset_enabled('rever') -%}
{%- do parts.append('rever_prompts') %}
rever_prompts as (

    select 'rever' as dataset, id as prompt_id, instruction as prompt
    from {{ ref('rever_pairs') }}

),

{% endif -%}
extra_prompts as (

    select distinct
        dataset,
        prompt_id,
        {{ user_turns_text('prompt') }} as prompt
    from {{ ref('int_extra__pairs') }}

),

all_prompts as (

    {% for part in parts %}
    select * from {{ part }}
    {% if not loop.last %}union all{% endif %}
    {% endfor %}

),

keyed as (

    select
        dataset,
        prompt_id,
        prompt,
        {{ normalize_text('prompt') }} as prompt_key
    from all_prompts
    where prompt is not null

),

by_prompt as (

    select
        prompt_key,
        min(prompt) as example_prompt,
        cast(count(distinct dataset) as bigint) as n_datasets,
        cast(sum(case when dataset = 'ultrafeedback' then 1 else 0 end) as bigint) as n_ultrafeedback,
        cast(sum(case when dataset = 'code_ultrafeedback' then 1 else 0 end) as bigint) as n_code_ultrafeedback,
        cast(sum(case when dataset = 'rever' then 1 else 0 end) as bigint) as n_rever,
        cast(sum(case when dataset not in ('ultrafeedback', 'code_ultrafeedback', 'rever') then 1 else 0 end) as bigint)
            as n_extra_datasets,
        {%- for e in entries %}
        max(case when dataset = '{{ e.name }}' then 1 else 0 end) as has_{{ e.name }},
        {%- endfor %}
        min(case when dataset = 'ultrafeedback' then prompt_id end) as example_ultrafeedback_prompt_id,
        min(case when dataset = 'code_ultrafeedback' then prompt_id end) as example_code_ultrafeedback_prompt_id,
        min(case when dataset = 'rever' then prompt_id end) as example_rever_id
    from keyed
    group by prompt_key
    having count(distinct dataset) > 1

),

final as (

    select
        md5(prompt_key) as prompt_key_hash,
        example_prompt,
        n_datasets,
        concat_ws(
            ',',
            case when n_ultrafeedback > 0 then 'ultrafeedback' end,
            case when n_code_ultrafeedback > 0 then 'code_ultrafeedback' end,
            case when n_rever > 0 then 'rever' end
            {%- for e in entries %},
            case when has_{{ e.name }} = 1 then '{{ e.name }}' end
            {%- endfor %}
        ) as datasets,
        n_ultrafeedback,
        n_code_ultrafeedback,
        n_rever,
        n_extra_datasets,
        example_ultrafeedback_prompt_id,
        example_code_ultrafeedback_prompt_id,
        example_rever_id
    from by_prompt

)

select * from final
