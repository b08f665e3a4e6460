-- The report's near-duplicate settings and totals, one row: the settings this build used (the var
-- near_duplicates with its defaults filled in, macros/near_duplicates.sql, and the var
-- mixture_max_pairs_per_prompt_cluster; compiled in from the vars, as meta.warehouse_build_info
-- records them, which is rebuilt by every build and so is not read here: this view is reused
-- while its vars and marts are unchanged) and how many prompts prompt_clusters holds, in how many
-- clusters of more than one.
{%- set settings = near_duplicate_settings() %}
{%- set max_per_cluster = mixture_max_pairs_per_prompt_cluster() %}

with

prompt_clusters as (

    select * from {{ ref('prompt_clusters').include(database=False) }}

),

cluster_totals as (

    select
        count(*) as n_prompts,
        count(distinct case when cluster_size > 1 then cluster_id end) as n_clusters_with_duplicates,
        cast(sum(case when cluster_size > 1 then 1 else 0 end) as bigint) as n_prompts_with_duplicates
    from prompt_clusters

),

final as (

    select
        {{ 'true' if settings.enabled else 'false' }} as enabled,
        cast({{ settings.ngram }} as integer) as ngram,
        cast({{ settings.threshold }} as double) as threshold,
        {{ sql_string(settings.keep) }} as keep,
        cast({{ settings.bands }} as integer) as bands,
        cast({{ settings.rows }} as integer) as rows,
        cast({{ max_per_cluster if max_per_cluster is not none else 'null' }} as integer) as mixture_max_pairs_per_prompt_cluster,
        n_prompts,
        n_clusters_with_duplicates,
        coalesce(n_prompts_with_duplicates, 0) as n_prompts_with_duplicates
    from cluster_totals

)

select * from final
