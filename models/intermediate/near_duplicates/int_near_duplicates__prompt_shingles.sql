-- One row per prompt of preference_pairs (distinct dataset, prompt_id): its text's shingles
-- (docs/near-duplicates.md: the user turns' contents, their tokens' word n-grams as 64-bit hashes,
-- one per position; none with near_duplicates.enabled false), how many distinct ones it has, and a
-- key of its shingle set (equal sets, equal key). prompt_clusters lists every prompt from here.
{%- set settings = near_duplicate_settings() %}

with

prompts as (

    select distinct
        dataset,
        prompt_id,
        registry_order,
        prompt
    from {{ ref('int_preference_pairs__unioned') }}

),

tokenized as (

    select
        dataset,
        prompt_id,
        registry_order,
        {%- if settings.enabled %}
        {{ token_hashes(text_tokens(messages_content_text(list_filter('prompt', 'm', "m.role = 'user'")))) }} as token_hashes
        {%- else %}
        {{ token_hashes(text_tokens("''")) }} as token_hashes
        {%- endif %}
    from prompts

),

shingled as (

    select
        dataset,
        prompt_id,
        registry_order,
        {{ shingle_hashes('token_hashes', settings.ngram) }} as shingles
    from tokenized

),

final as (

    select
        dataset,
        prompt_id,
        registry_order,
        shingles,
        {{ distinct_count('shingles') }} as n_shingles,
        {{ set_hash('shingles') }} as set_key
    from shingled

)

select * from final
