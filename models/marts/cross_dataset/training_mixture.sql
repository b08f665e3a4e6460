-- A training mixture across datasets, from the var `mixture` ({dataset: fraction}): of each
-- named dataset's clean pairs (no integrity flag, so one copy of a cross-dataset duplicate: the
-- one of the dataset registered first), the first round(fraction x n) in an order drawn from
-- random_seed (stable_hash(random_seed, 'mixture', pair_id)). preference_pairs' columns, split
-- `training_mixture`, and mixture_rank (1-based position in the dataset's draw).
-- With the var mixture_length_balanced, of each dataset's draw only as many chosen-longer pairs
-- as rejected-longer ones are kept (the first ones by mixture_rank; pairs of equal length all
-- kept), so "the longer response wins" is at chance in what is trained on.
-- With the var mixture_max_pairs_per_prompt_cluster: K, of what the draws take, at most K pairs of
-- one prompt cluster (prompt_clusters: near-duplicate prompts, across datasets), the first ones in
-- the seeded order (stable_hash(random_seed, 'mixture', pair_id)), before the length balance.
{%- set mixture = mixture_fractions() %}
{%- set max_per_cluster = mixture_max_pairs_per_prompt_cluster() %}
{%- set length_balanced = var('mixture_length_balanced', false) | string | lower in ['true', '1', 'yes'] %}

with

pairs as (

    select * from {{ ref('preference_pairs') }}
    where not is_flagged
    {%- if mixture %}
        and dataset in ({% for name in mixture %}'{{ name }}'{{ ', ' if not loop.last }}{% endfor %})
    {%- else %}
        and false
    {%- endif %}

),

drawn as (

    select
        *,
        row_number() over (
            partition by dataset
            order by {{ stable_hash(["'" ~ var('random_seed') ~ "'", "'mixture'", 'pair_id']) }}, pair_id
        ) as mixture_rank,
        count(*) over (partition by dataset) as n_clean_pairs,
        {%- if mixture %}
        case dataset
            {%- for name, fraction in mixture.items() %}
            when '{{ name }}' then cast({{ fraction }} as double)
            {%- endfor %}
        end as fraction
        {%- else %}
        cast(0 as double) as fraction
        {%- endif %}
    from pairs

),

drawn_taken as (

    select * from drawn
    where mixture_rank <= floor(fraction * n_clean_pairs + 0.5)

),
{%- if max_per_cluster is not none %}

taken as (

    select * from (
        select
            drawn_taken.*,
            row_number() over (
                partition by clusters.cluster_id
                order by {{ stable_hash(["'" ~ var('random_seed') ~ "'", "'mixture'", 'drawn_taken.pair_id']) }}, drawn_taken.pair_id
            ) as cluster_rank
        from drawn_taken
        inner join {{ ref('prompt_clusters') }} as clusters
            on drawn_taken.dataset = clusters.dataset and drawn_taken.prompt_id = clusters.prompt_id
    ) as ranked
    where cluster_rank <= {{ max_per_cluster }}

),
{%- else %}

taken as (

    select * from drawn_taken

),
{%- endif %}
{%- if length_balanced %}

lengths as (

    select
        pair_id,
        case
            when chosen_len > rejected_len then 'chosen'
            when chosen_len < rejected_len then 'rejected'
            else 'equal'
        end as longer_side
    from {{ ref('pair_bias_features') }}

),

sided as (

    select
        taken.*,
        lengths.longer_side,
        row_number() over (partition by taken.dataset, lengths.longer_side order by taken.mixture_rank) as side_rank,
        sum(case when lengths.longer_side = 'chosen' then 1 else 0 end) over (partition by taken.dataset)
            as n_chosen_longer,
        sum(case when lengths.longer_side = 'rejected' then 1 else 0 end) over (partition by taken.dataset)
            as n_rejected_longer
    from taken
    inner join lengths
        on taken.pair_id = lengths.pair_id

),

kept as (

    select * from sided
    where longer_side = 'equal' or side_rank <= least(n_chosen_longer, n_rejected_longer)

),
{%- else %}

kept as (

    select * from taken

),
{%- endif %}

final as (

    select
        ---------- keys
        dataset,
        'training_mixture' as split,
        pair_id,
        source,
        prompt_id,

        ---------- training columns
        prompt,
        chosen,
        rejected,
        margin,

        ---------- scores
        chosen_model,
        rejected_model,
        chosen_score,
        rejected_score,
        score_kind,
        score_margin,

        ---------- integrity
        integrity_flags,
        is_flagged,

        ---------- mixture
        cast(mixture_rank as bigint) as mixture_rank
    from kept

)

select * from final
