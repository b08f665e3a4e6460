-- What training_mixture took from where: per dataset of the `mixture` var, in its order, the
-- fraction asked, the dataset's clean pairs in preference_pairs (no integrity flag) and the pairs
-- taken. No row when `mixture` is not set. Read by the report and by the training_mixture
-- dataset card (the fractions are only in the var). With length_balanced (the var
-- mixture_length_balanced), the taken pairs' chosen-longer and rejected-longer counts are equal.
{%- set mixture = mixture_fractions() %}
{%- set length_balanced = var('mixture_length_balanced', false) | string | lower in ['true', '1', 'yes'] %}

with

preference_pairs as (

    select * from {{ ref('preference_pairs').include(database=False) }}

),

training_mixture as (

    select * from {{ ref('training_mixture').include(database=False) }}

),

lengths as (

    select
        pair_id,
        chosen_len,
        rejected_len
    from {{ ref('pair_bias_features').include(database=False) }}

),

asked as (

    {%- for name, fraction in mixture.items() %}
    select
        {{ loop.index0 }} as mixture_order,
        {{ sql_string(name) }} as dataset,
        cast({{ fraction }} as double) as fraction
    {% if not loop.last %}union all{% endif %}
    {%- endfor %}
    {%- if not mixture %}
    select
        cast(null as integer) as mixture_order,
        cast(null as {{ dbt.type_string() }}) as dataset,
        cast(null as double) as fraction
    where false
    {%- endif %}

),

clean_pairs as (

    select
        dataset,
        count(*) as n_clean_pairs
    from preference_pairs
    where not is_flagged
    group by dataset

),

taken as (

    select
        training_mixture.dataset,
        count(*) as n_taken,
        cast(sum(case when lengths.chosen_len > lengths.rejected_len then 1 else 0 end) as bigint) as n_taken_chosen_longer,
        cast(sum(case when lengths.chosen_len < lengths.rejected_len then 1 else 0 end) as bigint) as n_taken_rejected_longer
    from training_mixture
    left join lengths
        on training_mixture.pair_id = lengths.pair_id
    group by training_mixture.dataset

),

final as (

    select
        cast(asked.mixture_order as integer) as mixture_order,
        asked.dataset,
        asked.fraction,
        coalesce(clean_pairs.n_clean_pairs, 0) as n_clean_pairs,
        coalesce(taken.n_taken, 0) as n_taken,
        coalesce(taken.n_taken_chosen_longer, 0) as n_taken_chosen_longer,
        coalesce(taken.n_taken_rejected_longer, 0) as n_taken_rejected_longer,
        {{ 'true' if length_balanced else 'false' }} as length_balanced
    from asked
    left join clean_pairs
        on asked.dataset = clean_pairs.dataset
    left join taken
        on asked.dataset = taken.dataset

)

select * from final
