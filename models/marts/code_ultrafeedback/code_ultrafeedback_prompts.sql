-- One row per raw coseal row: what the published script does with it (pairs, dropped by the
-- stale/last 'N/A' rating, or quarantined because it would crash) and how many pairs it
-- yields under the published logic and under the corrected rule, and whether it yields a
-- corrected pair (has_pair) or why not (no_pair_reason): preference_pairs takes the first,
-- rejects_code_ultrafeedback the second. Every raw row is here, including rows with no responses.
with

prompts as (

    select * from {{ ref('int_code_ultrafeedback__prompts_sequenced') }}

),

quarantine as (

    select
        prompt_id,
        reason
    from {{ ref('int_code_ultrafeedback__prompts_quarantined') }}

),

published_logic_pairs as (

    select
        prompt_id,
        count(*) as n_pairs
    from {{ ref('code_ultrafeedback_pairs_published_logic') }}
    group by prompt_id

),

corrected_pairs as (

    select
        prompt_id,
        count(*) as n_pairs,
        count(case when is_flagged then 1 end) as n_flagged_pairs,
        min({{ list_at('integrity_flags', 0) }}) as first_integrity_flag
    from {{ ref('code_ultrafeedback_pairs') }}
    group by prompt_id

),

-- the valid integer ratings (1..5) of the row's responses
ratings as (

    select
        prompt_id,
        count(rating) as n_rated_responses,
        count(distinct rating) as n_distinct_ratings
    from {{ ref('int_code_ultrafeedback__responses_rated') }}
    group by prompt_id

),

outcomes as (

    select
        ---------- keys
        prompts.prompt_id,
        prompts.source_file,
        prompts.source_row,
        prompts.prompt_order,
        prompts.preference,

        ---------- sizes
        prompts.n_responses,
        prompts.n_annotations,

        ---------- the script's `rating` variable
        prompts.own_last_rating,
        prompts.script_rating,
        prompts.is_script_rating_stale,

        ---------- outcome
        case
            when quarantine.prompt_id is not null then 'quarantined'
            when prompts.is_dropped_by_na_rating then 'dropped_by_na_rating'
            else 'processed'
        end as script_outcome,
        quarantine.reason as quarantine_reason,
        coalesce(published_logic_pairs.n_pairs, 0) as n_published_logic_pairs,
        coalesce(corrected_pairs.n_pairs, 0) as n_corrected_pairs,
        coalesce(corrected_pairs.n_flagged_pairs, 0) as n_flagged_corrected_pairs,
        corrected_pairs.first_integrity_flag,

        ---------- corrected pair or not, and why (two rules, independent of each other: the
        ---------- balance of row_accounting fails on a row both or neither of them claim)
        coalesce(corrected_pairs.n_pairs, 0) > 0 as has_pair,
        case
            when coalesce(prompts.n_responses, 0) = 0 then 'no_responses'
            when coalesce(prompts.n_annotations, 0) = 0 then 'empty_annotations'
            when coalesce(ratings.n_rated_responses, 0) < 2 then 'fewer_than_two_rated_responses'
            when ratings.n_distinct_ratings = 1 then 'all_ratings_equal'
        end as no_pair_reason

    from prompts
    left join quarantine
        on prompts.prompt_id = quarantine.prompt_id
    left join published_logic_pairs
        on prompts.prompt_id = published_logic_pairs.prompt_id
    left join corrected_pairs
        on prompts.prompt_id = corrected_pairs.prompt_id
    left join ratings
        on prompts.prompt_id = ratings.prompt_id

)

select * from outcomes
