-- Every prompt of preference_pairs with its cluster: the connected component of the near-duplicate
-- relation (near_duplicate_prompts), named by its first prompt in dataset order, then prompt_id
-- (a prompt without a near duplicate is a cluster of its own).

with

prompts as (

    select
        dataset,
        prompt_id,
        registry_order
    from {{ ref('int_near_duplicates__prompt_shingles') }}

),

prompt_matches as (

    select * from {{ ref('int_near_duplicates__prompt_matches') }}

),

-- the prompts with a near duplicate, numbered in dataset order, then prompt_id
members as (

    select
        dataset,
        prompt_id,
        row_number() over (order by registry_order, prompt_id) as node
    from (
        select dataset_a as dataset, prompt_id_a as prompt_id, registry_order_a as registry_order from prompt_matches
        union
        select dataset_b as dataset, prompt_id_b as prompt_id, registry_order_b as registry_order from prompt_matches
    ) as matched

),

links as (

    select
        members_a.node as node_a,
        members_b.node as node_b
    from prompt_matches
    inner join members as members_a
        on prompt_matches.dataset_a = members_a.dataset and prompt_matches.prompt_id_a = members_a.prompt_id
    inner join members as members_b
        on prompt_matches.dataset_b = members_b.dataset and prompt_matches.prompt_id_b = members_b.prompt_id

),

components as (

    select * from {{ connected_components('links') }} as components

),

clustered as (

    select
        prompts.dataset,
        prompts.prompt_id,
        coalesce(firsts.dataset, prompts.dataset) || ':' || coalesce(firsts.prompt_id, prompts.prompt_id) as cluster_id
    from prompts
    left join members
        on prompts.dataset = members.dataset and prompts.prompt_id = members.prompt_id
    left join components
        on members.node = components.node
    left join members as firsts
        on components.component = firsts.node

),

cluster_sizes as (

    select
        cluster_id,
        count(*) as cluster_size,
        count(distinct dataset) as n_datasets
    from clustered
    group by cluster_id

),

final as (

    select
        clustered.dataset,
        clustered.prompt_id,
        clustered.cluster_id,
        cluster_sizes.cluster_size,
        cluster_sizes.n_datasets
    from clustered
    inner join cluster_sizes
        on clustered.cluster_id = cluster_sizes.cluster_id

)

select * from final
