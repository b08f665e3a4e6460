-- Per dataset and token budget (the var truncation_budgets): how many clean training pairs
-- collapse when prompt + response are truncated to the budget, i.e. chosen and rejected become the
-- same sequence because they differ only after it (pair_bias_features: 4
-- characters per token).
{%- set budgets = truncation_budgets() %}

with

features as (

    select
        dataset,
        max_collapsed_budget
    from {{ ref('pair_bias_features') }}

),

budgets as (

    {%- for budget in budgets %}
    select cast({{ budget }} as bigint) as budget_tokens
    {% if not loop.last %}union all{% endif %}
    {%- endfor %}

),

counted as (

    select
        features.dataset,
        budgets.budget_tokens,
        count(*) as n_pairs,
        sum(case when features.max_collapsed_budget >= budgets.budget_tokens then 1 else 0 end) as n_collapsed
    from features
    cross join budgets
    group by features.dataset, budgets.budget_tokens

),

final as (

    select
        dataset,
        budget_tokens,
        cast(n_pairs as bigint) as n_pairs,
        cast(n_collapsed as bigint) as n_collapsed,
        cast(100 * n_collapsed as double) / n_pairs as pct_collapsed,
        '{{ truncation_counted_with() }}' as counted_with
    from counted

)

select * from final
