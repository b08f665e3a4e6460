{#- The margin every training table publishes (what RewardTrainer reads): the score difference
    divided by the width of the pair's score scale, so a training pair's margin lies in (0, 1].
    The scales: builtin_score_ranges() for the built-in datasets, each registry entry's
    `score_range` (the extra_datasets model) for the others. -#}
{% macro margin(score_difference, score_min, score_max) -%}
    cast({{ score_difference }} as double) / nullif(({{ score_max }}) - ({{ score_min }}), 0)
{%- endmacro %}

{#- The key of a pair in preference_pairs (its pair_id): the dataset and the pair's key within it.
    The training tables find their pair's flags in preference_pairs by it. -#}
{% macro preference_pair_id(dataset, key) -%}
    {{ stable_hash(["'" ~ dataset ~ "'", key]) }}
{%- endmacro %}
