-- The report's largest prompt clusters: the 10 prompt clusters of prompt_clusters with the most
-- prompts (ties: by cluster_id), clusters of one prompt left out, each with its datasets (in
-- dataset order), its pairs in preference_pairs, and the start of its first prompt's text (the
-- prompt its cluster_id names: its user turns' contents joined with a line break, as the
-- near-duplicate rule reads it, from its first pair by pair_id).
{%- set preview_chars = 120 %}

with

prompt_clusters as (

    select * from {{ ref('prompt_clusters').include(database=False) }}

),

preference_pairs as (

    select * from {{ ref('preference_pairs').include(database=False) }}

),

near_duplicate_summary as (

    select * from {{ ref('near_duplicate_summary').include(database=False) }}

),

-- a dataset's 0-based position in dataset order: its rows as dataset_b less one (rpt_near_duplicate_matrix)
dataset_orders as (

    select
        dataset_b as dataset,
        count(*) - 1 as dataset_order
    from near_duplicate_summary
    group by dataset_b

),

clusters as (

    select distinct
        cluster_id,
        cluster_size,
        n_datasets
    from prompt_clusters
    where cluster_size > 1

),

ranked as (

    select
        *,
        row_number() over (order by cluster_size desc, cluster_id asc) as cluster_rank
    from clusters

),

largest as (

    select * from ranked
    where cluster_rank <= 10

),

cluster_datasets as (

    select
        largest.cluster_id,
        prompt_clusters.dataset,
        min(dataset_orders.dataset_order) as dataset_order
    from largest
    inner join prompt_clusters
        on largest.cluster_id = prompt_clusters.cluster_id
    left join dataset_orders
        on prompt_clusters.dataset = dataset_orders.dataset
    group by largest.cluster_id, prompt_clusters.dataset

),

dataset_lists as (

    select
        cluster_id,
        {{ dbt.listagg('dataset', "', '", 'order by dataset_order, dataset') }} as datasets
    from cluster_datasets
    group by cluster_id

),

cluster_pairs as (

    select
        largest.cluster_id,
        count(*) as n_pairs
    from largest
    inner join prompt_clusters
        on largest.cluster_id = prompt_clusters.cluster_id
    inner join preference_pairs
        on prompt_clusters.dataset = preference_pairs.dataset and prompt_clusters.prompt_id = preference_pairs.prompt_id
    group by largest.cluster_id

),

first_prompts as (

    select
        cluster_id,
        prompt_text
    from (
        select
            largest.cluster_id,
            {{ messages_content_text(list_filter('preference_pairs.prompt', 'm', "m.role = 'user'")) }} as prompt_text,
            row_number() over (partition by largest.cluster_id order by preference_pairs.pair_id) as pair_rank
        from largest
        inner join prompt_clusters
            on largest.cluster_id = prompt_clusters.cluster_id
        inner join preference_pairs
            on prompt_clusters.dataset = preference_pairs.dataset and prompt_clusters.prompt_id = preference_pairs.prompt_id
        where prompt_clusters.dataset || ':' || prompt_clusters.prompt_id = largest.cluster_id
    ) as first_pairs
    where pair_rank = 1

),

final as (

    select
        largest.cluster_rank,
        largest.cluster_id,
        largest.cluster_size,
        largest.n_datasets,
        dataset_lists.datasets,
        coalesce(cluster_pairs.n_pairs, 0) as n_pairs,
        substring(first_prompts.prompt_text, 1, {{ preview_chars }}) as prompt_start,
        length(first_prompts.prompt_text) as prompt_chars
    from largest
    left join dataset_lists
        on largest.cluster_id = dataset_lists.cluster_id
    left join cluster_pairs
        on largest.cluster_id = cluster_pairs.cluster_id
    left join first_prompts
        on largest.cluster_id = first_prompts.cluster_id

)

select * from final
