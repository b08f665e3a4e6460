-- The raw rows of the registry's entries that become no pair, one row each with the reason.
-- Only a rated_completions row can end here (a preference or transcript row is always a pair,
-- flagged when it is broken):
--   no_completions             its completions list is empty or NULL;
--   no_lower_rated_completion  (best_vs_lower) no completion is rated below the best-rated one;
--   no_rated_pair              (all_pairs) no two completions have different ratings.
with

raw_rows as (

    select * from {{ ref('stg_extra__rated_rows') }}

),

paired as (

    select distinct row_key from {{ ref('int_extra__rated_pairs') }}

),

registry as (

    select dataset, pairing from {{ ref('extra_datasets') }}

),

final as (

    select
        raw_rows.dataset,
        raw_rows.row_key,
        raw_rows.source_file,
        raw_rows.source_row,
        case
            when coalesce(raw_rows.n_completions, 0) = 0 then 'no_completions'
            when registry.pairing = 'best_vs_lower' then 'no_lower_rated_completion'
            else 'no_rated_pair'
        end as reason
    from raw_rows
    inner join registry
        on raw_rows.dataset = registry.dataset
    left join paired
        on raw_rows.row_key = paired.row_key
    where paired.row_key is null

)

select * from final
