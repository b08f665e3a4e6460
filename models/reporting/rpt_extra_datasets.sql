-- The report's per-entry numbers for the `extra_datasets` entries: one row per entry of
-- meta.extra_datasets (registry order), with its raw rows and rejected raw rows (its block of
-- row_accounting), its pairs in preference_pairs (in its training split, flagged) and, for a
-- scored entry, a summary of its pairs' score margins.

with

entries as (

    select * from {{ ref('extra_datasets').include(database=False) }}

),

preference_pairs as (

    select * from {{ ref('preference_pairs').include(database=False) }}

),

row_accounting as (

    select * from {{ ref('row_accounting').include(database=False) }}

),

pair_counts as (

    select
        dataset,
        count(*) as n_pairs,
        count(case when split = dataset then 1 end) as n_training_split,
        count(case when is_flagged then 1 end) as n_flagged,
        count(score_margin) as n_scored,
        {{ exact_mean('score_margin') }} as mean_score_margin,
        min(score_margin) as min_score_margin,
        max(score_margin) as max_score_margin,
        {{ exact_mean('case when not is_flagged then margin end') }} as mean_training_margin
    from preference_pairs
    group by dataset

),

-- the entry's block: its raw rows (on every row of the block) and the rows rejected, by reason
raw_rows as (

    select
        dataset,
        max(raw_rows) as n_raw_rows,
        cast(sum(case when outcome = 'rejected' then n_rows else 0 end) as bigint) as n_rejected
    from row_accounting
    group by dataset

),

final as (

    select
        entries.registry_order,
        entries.dataset,
        entries.hub_id,
        entries.shape,
        entries.config,
        entries.splits,
        entries.license,
        entries.score_min,
        entries.score_max,
        entries.pairing,
        coalesce(raw_rows.n_raw_rows, 0) as n_raw_rows,
        coalesce(pair_counts.n_pairs, 0) as n_pairs,
        coalesce(pair_counts.n_training_split, 0) as n_training_split,
        coalesce(pair_counts.n_flagged, 0) as n_flagged,
        coalesce(raw_rows.n_rejected, 0) as n_rejected,
        coalesce(pair_counts.n_scored, 0) as n_scored,
        pair_counts.mean_score_margin,
        pair_counts.min_score_margin,
        pair_counts.max_score_margin,
        pair_counts.mean_training_margin
    from entries
    left join pair_counts
        on entries.dataset = pair_counts.dataset
    left join raw_rows
        on entries.dataset = raw_rows.dataset

)

select * from final
