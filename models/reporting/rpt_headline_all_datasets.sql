-- The report's headline numbers over all datasets: the pairs of preference_pairs (flagged ones
-- included), how many are in the training splits and how many are flagged, by dataset: the
-- built-in datasets one by one, the `extra_datasets` entries together (the report has a section
-- per entry); and the pairs of training_mixture. One row.
{%- set builtin = builtin_dataset_names() %}

with

preference_pairs as (

    select * from {{ ref('preference_pairs').include(database=False) }}

),

training_mixture as (

    select * from {{ ref('training_mixture').include(database=False) }}

),

final as (

    select
        count(*) as n_pairs,
        count(case when split = dataset then 1 end) as n_training_split,
        count(case when is_flagged then 1 end) as n_flagged,
        {%- for name in builtin %}
        count(case when dataset = '{{ name }}' then 1 end) as n_{{ name }},
        {%- endfor %}
        count(case when dataset not in ({% for name in builtin %}'{{ name }}'{{ ', ' if not loop.last }}{% endfor %}) then 1 end)
            as n_extra_datasets,
        (select count(*) from training_mixture) as n_training_mixture
    from preference_pairs

)

select * from final
