-- Per model: pairs played, won and win rate under the published logic and under the
-- corrected rule, and the change. A model often rated 'N/A' wins more under the published logic.
--   dbt show -s cuf_model_win_rates --limit 50
with

published_logic as (

    select chosen_model, rejected_model
    from {{ ref('code_ultrafeedback_pairs_published_logic').include(database=False) }}

),

corrected as (

    select chosen_model, rejected_model
    from {{ ref('code_ultrafeedback_pairs').include(database=False) }}

),

published_results as (

    select chosen_model as model, 1 as is_win from published_logic
    union all
    select rejected_model as model, 0 as is_win from published_logic

),

corrected_results as (

    select chosen_model as model, 1 as is_win from corrected
    union all
    select rejected_model as model, 0 as is_win from corrected

),

published_rates as (

    select
        model,
        count(*) as n_published_pairs,
        cast(sum(is_win) as bigint) as n_published_wins
    from published_results
    group by model

),

corrected_rates as (

    select
        model,
        count(*) as n_corrected_pairs,
        cast(sum(is_win) as bigint) as n_corrected_wins
    from corrected_results
    group by model

),

compared as (

    select
        coalesce(published_rates.model, corrected_rates.model) as model,
        coalesce(published_rates.n_published_pairs, 0) as n_published_pairs,
        coalesce(published_rates.n_published_wins, 0) as n_published_wins,
        round(1.0 * published_rates.n_published_wins / published_rates.n_published_pairs, 4) as published_win_rate,
        coalesce(corrected_rates.n_corrected_pairs, 0) as n_corrected_pairs,
        coalesce(corrected_rates.n_corrected_wins, 0) as n_corrected_wins,
        round(1.0 * corrected_rates.n_corrected_wins / corrected_rates.n_corrected_pairs, 4) as corrected_win_rate
    from published_rates
    full outer join corrected_rates
        on published_rates.model = corrected_rates.model

),

with_change as (

    select
        *,
        published_win_rate - corrected_win_rate as win_rate_change
    from compared

)

select * from with_change
order by abs(win_rate_change) desc nulls last, model
