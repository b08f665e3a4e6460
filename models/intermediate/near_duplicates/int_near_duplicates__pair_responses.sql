-- One row per pair of preference_pairs: its keys, its responses' keys (a hash of the messages:
-- equal messages, equal key) and the near-duplicate rule's comparison of its chosen with its rejected
-- (docs/near-duplicates.md): their shingle counts and, when the counts allow a Jaccard at the
-- threshold (Jaccard <= smaller / larger), the shingles they share and their Jaccard. A
-- response's text is its messages' contents joined by a newline. Each pair is compared within its row (no text goes
-- through a join); a table, so that no later filter makes the engine shingle a text twice, and
-- the narrow table the other near-duplicate models read pairs from. Empty with
-- near_duplicates.enabled false.
{%- set settings = near_duplicate_settings() %}
{%- set n = settings.ngram %}

with

pairs as (

    select
        pair_id,
        dataset,
        registry_order,
        prompt_id,
        chosen,
        rejected
    from {{ ref('int_preference_pairs__unioned') }}
    {%- if not settings.enabled %}
    where false
    {%- endif %}

),

-- its own step, so that the shingling below runs on every thread (macro computed_once)
tokenized as {{ computed_once() }} (

    select
        *,
        {{ hash_values(['chosen']) }} as chosen_key,
        {{ hash_values(['rejected']) }} as rejected_key,
        {{ token_hashes(text_tokens(messages_content_text('chosen'))) }} as chosen_hashes,
        {{ token_hashes(text_tokens(messages_content_text('rejected'))) }} as rejected_hashes
    from pairs

),

shingled as (

    select
        *,
        {{ shingle_hashes('chosen_hashes', n) }} as chosen_shingles,
        {{ shingle_hashes('rejected_hashes', n) }} as rejected_shingles
    from tokenized

),

counted as (

    select
        *,
        {{ distinct_count('chosen_shingles') }} as n_chosen_shingles,
        {{ distinct_count('rejected_shingles') }} as n_rejected_shingles
    from shingled

),

compared as (

    select
        *,
        case
            when {{ size_ratio('n_chosen_shingles', 'n_rejected_shingles') }} >= cast({{ settings.threshold }} as double)
                then {{ shared_count('chosen_shingles', 'rejected_shingles', 'n_chosen_shingles', 'n_rejected_shingles') }}
        end as n_shared_shingles
    from counted

),

final as (

    select
        pair_id,
        dataset,
        registry_order,
        prompt_id,
        chosen_key,
        rejected_key,
        n_chosen_shingles,
        n_rejected_shingles,
        n_shared_shingles,
        {{ jaccard('n_shared_shingles', 'n_chosen_shingles', 'n_rejected_shingles') }} as responses_jaccard
    from compared

)

select * from final
