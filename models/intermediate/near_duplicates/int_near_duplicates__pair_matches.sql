-- One row per related pair of pairs and relation (docs/near-duplicates.md): of two distinct pairs
-- whose prompts are the same (dataset, prompt_id) or near (int_near_duplicates__prompt_matches), the same comparison
-- (chosen near chosen and rejected near rejected) and the label conflict (chosen near rejected and
-- rejected near chosen; a pair of pairs can be both), with the two response Jaccards the relation
-- used: chosen_a's and rejected_a's with the response of b they are matched with.
-- The responses are compared crosswise, each response of a candidate shingled once and keyed as
-- in int_near_duplicates__pair_responses (a response with tokens is near itself, Jaccard 1); a
-- response's text is its messages' contents joined by a newline, and two shingle sets are
-- intersected only when their sizes allow a Jaccard at the threshold (Jaccard <= smaller / larger).
{%- set settings = near_duplicate_settings() %}
{%- set n = settings.ngram %}
{%- set t = 'cast(' ~ settings.threshold ~ ' as double)' %}

with

pairs as (

    select
        unioned.chosen,
        unioned.rejected,
        pair_responses.chosen_key,
        pair_responses.rejected_key
    from {{ ref('int_preference_pairs__unioned') }} as unioned
    inner join {{ ref('int_near_duplicates__pair_responses') }} as pair_responses
        on unioned.pair_id = pair_responses.pair_id

),

-- the pairs of pairs whose prompts are the same or near, a before b: dataset order, then pair_id
pair_keys as (

    select
        pair_id,
        dataset,
        registry_order,
        prompt_id,
        chosen_key,
        rejected_key
    from {{ ref('int_near_duplicates__pair_responses') }}

),

prompt_matches as (

    select * from {{ ref('int_near_duplicates__prompt_matches') }}

),

same_prompt as (

    select
        pairs_x.pair_id as pair_id_x,
        pairs_y.pair_id as pair_id_y,
        cast(1 as double) as prompt_jaccard
    from pair_keys as pairs_x
    inner join pair_keys as pairs_y
        on pairs_x.dataset = pairs_y.dataset
        and pairs_x.prompt_id = pairs_y.prompt_id
        and pairs_x.pair_id < pairs_y.pair_id

),

near_prompts as (

    select
        pairs_x.pair_id as pair_id_x,
        pairs_y.pair_id as pair_id_y,
        prompt_matches.jaccard as prompt_jaccard
    from prompt_matches
    inner join pair_keys as pairs_x
        on prompt_matches.dataset_a = pairs_x.dataset
        and prompt_matches.prompt_id_a = pairs_x.prompt_id
    inner join pair_keys as pairs_y
        on prompt_matches.dataset_b = pairs_y.dataset
        and prompt_matches.prompt_id_b = pairs_y.prompt_id

),

related as (

    select * from same_prompt
    union all
    select * from near_prompts

),

-- a before b: dataset order, then pair_id
sided as (

    select
        related.prompt_jaccard,
        pairs_x.registry_order < pairs_y.registry_order
            or (pairs_x.registry_order = pairs_y.registry_order and pairs_x.pair_id < pairs_y.pair_id) as x_first,
        pairs_x.pair_id as pair_id_x,
        pairs_x.dataset as dataset_x,
        pairs_x.chosen_key as chosen_key_x,
        pairs_x.rejected_key as rejected_key_x,
        pairs_y.pair_id as pair_id_y,
        pairs_y.dataset as dataset_y,
        pairs_y.chosen_key as chosen_key_y,
        pairs_y.rejected_key as rejected_key_y
    from related
    inner join pair_keys as pairs_x
        on related.pair_id_x = pairs_x.pair_id
    inner join pair_keys as pairs_y
        on related.pair_id_y = pairs_y.pair_id

),

candidates as (

    select
        {%- for column in ['pair_id', 'dataset', 'chosen_key', 'rejected_key'] %}
        case when x_first then {{ column }}_x else {{ column }}_y end as {{ column }}_a,
        case when x_first then {{ column }}_y else {{ column }}_x end as {{ column }}_b,
        {%- endfor %}
        prompt_jaccard
    from sided

),

-- the responses of the candidate pairs of pairs, each once
compared_keys as (

    select chosen_key_a as response_key from candidates
    union
    select chosen_key_b as response_key from candidates
    union
    select rejected_key_a as response_key from candidates
    union
    select rejected_key_b as response_key from candidates

),

responses as (

    select
        response_key,
        any_value(messages) as messages
    from (
        select pairs.chosen_key as response_key, pairs.chosen as messages
        from pairs
        inner join compared_keys
            on pairs.chosen_key = compared_keys.response_key
        union all
        select pairs.rejected_key as response_key, pairs.rejected as messages
        from pairs
        inner join compared_keys
            on pairs.rejected_key = compared_keys.response_key
    ) as sides
    group by response_key

),

-- read by three joins below: shingled once
response_shingles as {{ computed_once() }} (

    select
        response_key,
        shingles,
        {{ distinct_count('shingles') }} as n_shingles
    from (
        select
            response_key,
            {{ shingle_hashes('token_hashes', n) }} as shingles
        from (
            select
                response_key,
                {{ token_hashes(text_tokens(messages_content_text('messages'))) }} as token_hashes
            from responses
        ) as tokenized
    ) as hashed

),

-- the two responses of each crosswise comparison, each unordered pair of keys once
crosswise as (

    select distinct
        least(key_x, key_y) as response_key_a,
        greatest(key_x, key_y) as response_key_b
    from (
        select chosen_key_a as key_x, chosen_key_b as key_y from candidates
        union all
        select rejected_key_a as key_x, rejected_key_b as key_y from candidates
        union all
        select chosen_key_a as key_x, rejected_key_b as key_y from candidates
        union all
        select rejected_key_a as key_x, chosen_key_b as key_y from candidates
    ) as comparisons
    where key_x != key_y

),

across_pairs as (

    select
        response_key_a,
        response_key_b,
        {{ jaccard('n_shared', 'n_shingles_a', 'n_shingles_b') }} as jaccard
    from (
        select
            crosswise.response_key_a,
            crosswise.response_key_b,
            shingles_a.n_shingles as n_shingles_a,
            shingles_b.n_shingles as n_shingles_b,
            {{ shared_count('shingles_a.shingles', 'shingles_b.shingles', 'shingles_a.n_shingles', 'shingles_b.n_shingles') }} as n_shared
        from crosswise
        inner join response_shingles as shingles_a
            on crosswise.response_key_a = shingles_a.response_key
        inner join response_shingles as shingles_b
            on crosswise.response_key_b = shingles_b.response_key
        where {{ size_ratio('shingles_a.n_shingles', 'shingles_b.n_shingles') }} >= {{ t }}
    ) as counted

),

-- the near ones, each unordered pair of keys once (response_key_a <= response_key_b)
response_matches as (

    select distinct
        response_key_a,
        response_key_b,
        jaccard
    from (
        select * from across_pairs
        union all
        select
            response_key as response_key_a,
            response_key as response_key_b,
            cast(1 as double) as jaccard
        from response_shingles
        where n_shingles > 0
    ) as compared
    where jaccard >= {{ t }}

),

-- a's chosen and rejected matched with b's responses: the same (same_comparison) or swapped (label_conflict)
final as (
    {%- for relation, chosen_b, rejected_b in [('same_comparison', 'chosen', 'rejected'), ('label_conflict', 'rejected', 'chosen')] %}

    select
        candidates.pair_id_a,
        candidates.pair_id_b,
        candidates.dataset_a,
        candidates.dataset_b,
        '{{ relation }}' as relation,
        candidates.prompt_jaccard,
        chosen_match.jaccard as chosen_a_jaccard,
        rejected_match.jaccard as rejected_a_jaccard
    from candidates
    inner join response_matches as chosen_match
        on least(candidates.chosen_key_a, candidates.{{ chosen_b }}_key_b) = chosen_match.response_key_a
        and greatest(candidates.chosen_key_a, candidates.{{ chosen_b }}_key_b) = chosen_match.response_key_b
    inner join response_matches as rejected_match
        on least(candidates.rejected_key_a, candidates.{{ rejected_b }}_key_b) = rejected_match.response_key_a
        and greatest(candidates.rejected_key_a, candidates.{{ rejected_b }}_key_b) = rejected_match.response_key_b
    {{ 'union all' if not loop.last }}
    {%- endfor %}

)

select * from final
