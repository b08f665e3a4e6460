-- One row per unordered pair of near-duplicate prompts (docs/near-duplicates.md): distinct
-- (dataset, prompt_id) of preference_pairs whose texts (user turns) have a shingle Jaccard at or
-- above the threshold, a before b in dataset order, then prompt_id: the verified candidates of
-- int_near_duplicates__prompt_candidates, every prompt of one set with every prompt of the other,
-- and the prompts with the same shingle set (Jaccard 1).
{%- set settings = near_duplicate_settings() %}

with

prompts as (

    select * from {{ ref('int_near_duplicates__prompt_shingles') }}

),

near_sets as (

    select
        set_key_a,
        set_key_b,
        jaccard,
        n_shared_shingles
    from {{ ref('int_near_duplicates__prompt_candidates') }}
    where jaccard >= cast({{ settings.threshold }} as double)

    union all

    select distinct
        set_key as set_key_a,
        set_key as set_key_b,
        cast(1 as double) as jaccard,
        n_shingles as n_shared_shingles
    from prompts
    where n_shingles > 0

),

prompt_pairs as (

    select
        prompts_a.dataset as dataset_x,
        prompts_a.prompt_id as prompt_id_x,
        prompts_a.registry_order as order_x,
        prompts_b.dataset as dataset_y,
        prompts_b.prompt_id as prompt_id_y,
        prompts_b.registry_order as order_y,
        near_sets.jaccard,
        near_sets.n_shared_shingles
    from near_sets
    inner join prompts as prompts_a
        on near_sets.set_key_a = prompts_a.set_key
    inner join prompts as prompts_b
        on near_sets.set_key_b = prompts_b.set_key
    where near_sets.set_key_a != near_sets.set_key_b
        or prompts_a.registry_order < prompts_b.registry_order
        or (prompts_a.registry_order = prompts_b.registry_order and prompts_a.prompt_id < prompts_b.prompt_id)

),

ordered as (

    select
        case when x_first then dataset_x else dataset_y end as dataset_a,
        case when x_first then prompt_id_x else prompt_id_y end as prompt_id_a,
        case when x_first then dataset_y else dataset_x end as dataset_b,
        case when x_first then prompt_id_y else prompt_id_x end as prompt_id_b,
        case when x_first then order_x else order_y end as registry_order_a,
        case when x_first then order_y else order_x end as registry_order_b,
        jaccard,
        n_shared_shingles
    from (
        select
            *,
            order_x < order_y or (order_x = order_y and prompt_id_x < prompt_id_y) as x_first
        from prompt_pairs
    ) as compared

)

select * from ordered
