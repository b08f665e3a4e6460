-- A training mixture across datasets, from the var `mixture` ({dataset: fraction}): of each
-- named dataset's clean pairs (no integrity flag, so one copy of a cross-dataset duplicate: the
-- one of the dataset registered first), the first round(fraction x n) in an order drawn from
-- random_seed (stable_hash(random_seed, 'mixture', pair_id)). preference_pairs' columns, split
-- `training_mixture`, and mixture_rank (1-based position in the dataset's draw).
{%- set mixture = mixture_fractions() %}

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
    from drawn
    where mixture_rank <= floor(fraction * n_clean_pairs + 0.5)

)

select * from final
