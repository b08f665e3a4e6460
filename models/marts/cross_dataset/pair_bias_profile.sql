-- How biased each dataset's clean training pairs are, per dataset and per slice (source,
-- chosen_model): how often the chosen response is the longer one, how length follows the margin,
-- and how often each format pattern a judge favours appears on each side
-- (pair_bias_features defines lengths and patterns).
{%- set patterns = format_patterns() %}
{%- set slice_kinds = ['dataset', 'source', 'chosen_model'] %}

with

features as (

    select
        *,
        chosen_len - rejected_len as length_difference
    from {{ ref('pair_bias_features') }}

),

sliced as (

    {%- for kind in slice_kinds %}
    select
        dataset,
        '{{ kind }}' as slice_kind,
        cast({{ kind }} as {{ dbt.type_string() }}) as slice,
        chosen_len,
        rejected_len,
        length_difference,
        margin,
        {%- for name in patterns %}
        chosen_has_{{ name }},
        rejected_has_{{ name }}{{ ',' if not loop.last }}
        {%- endfor %}
    from features
    where {{ kind }} is not null
    {% if not loop.last %}union all{% endif %}
    {%- endfor %}

),

counted as (

    select
        dataset,
        slice_kind,
        slice,
        count(*) as n_pairs,
        sum(case when chosen_len > rejected_len then 1 else 0 end) as n_chosen_longer,
        sum(case when chosen_len < rejected_len then 1 else 0 end) as n_rejected_longer,
        sum(case when chosen_len = rejected_len then 1 else 0 end) as n_equal_length,
        -- sums of integers and exact decimals (exact_mean): the same figures whatever the row order
        cast(sum(chosen_len) as double) / count(*) as mean_chosen_len,
        cast(sum(rejected_len) as double) / count(*) as mean_rejected_len,
        count(margin) as n_scored_pairs,
        min(case when margin is not null then length_difference end) < max(case when margin is not null then length_difference end)
            and min(margin) < max(margin) as both_vary,
        {{ exact_mean('case when margin is not null then length_difference end') }} as mean_x,
        {{ exact_mean('margin') }} as mean_y,
        {{ exact_mean('length_difference * margin') }} as mean_xy,
        {{ exact_mean('case when margin is not null then length_difference * length_difference end') }} as mean_xx,
        {{ exact_mean('margin * margin') }} as mean_yy,
        {%- for name in patterns %}
        sum(case when chosen_has_{{ name }} then 1 else 0 end) as n_chosen_{{ name }},
        sum(case when rejected_has_{{ name }} then 1 else 0 end) as n_rejected_{{ name }}{{ ',' if not loop.last }}
        {%- endfor %}
    from sliced
    group by dataset, slice_kind, slice

),

final as (

    select
        ---------- keys
        dataset,
        slice_kind,
        slice,

        ---------- length
        cast(n_pairs as bigint) as n_pairs,
        cast(n_chosen_longer as bigint) as n_chosen_longer,
        cast(n_rejected_longer as bigint) as n_rejected_longer,
        cast(n_equal_length as bigint) as n_equal_length,
        case
            when n_chosen_longer + n_rejected_longer > 0
                then cast(100 * n_chosen_longer as double) / (n_chosen_longer + n_rejected_longer)
        end as pct_chosen_longer,
        mean_chosen_len,
        mean_rejected_len,
        -- Pearson's r from the means: cov(x, y) / sqrt(var(x) var(y))
        case
            when n_scored_pairs >= 3 and both_vary and (mean_xx - mean_x * mean_x) * (mean_yy - mean_y * mean_y) > 0
                then (mean_xy - mean_x * mean_y) / sqrt((mean_xx - mean_x * mean_x) * (mean_yy - mean_y * mean_y))
        end as length_margin_corr,

        ---------- format patterns (share of pairs, 0-100)
        {%- for name in patterns %}
        cast(100 * n_chosen_{{ name }} as double) / n_pairs as pct_chosen_{{ name }},
        cast(100 * n_rejected_{{ name }} as double) / n_pairs as pct_rejected_{{ name }}{{ ',' if not loop.last }}
        {%- endfor %}
    from counted

)

select * from final
