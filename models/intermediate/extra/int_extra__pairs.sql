-- Every pair of the registry's entries in preference_pairs' columns: the pairs of the preference
-- and transcript entries (one per raw row) and of the rated_completions entries, with
--   margin        (chosen_score - rejected_score) / the width of the entry's score_range;
--                 score_margin the difference itself; both NULL for an unscored entry or a NULL score;
--   dataset_flags the score checks of a scored entry: unparseable_score (a score that is not a
--                 number, nor a string holding one) and score_out_of_range. preference_pairs adds
--                 the checks every dataset gets.
with

registry as (

    select * from {{ ref('extra_datasets') }}

),

pairs as (

    select
        row_key,
        dataset,
        source_file,
        source_row,
        cast(null as bigint) as chosen_index,
        cast(null as bigint) as rejected_index,
        source,
        prompt,
        chosen,
        rejected,
        chosen_model,
        rejected_model,
        chosen_score,
        rejected_score
    from {{ ref('int_extra__preference_pairs') }}
    union all
    select
        row_key,
        dataset,
        source_file,
        source_row,
        chosen_index,
        rejected_index,
        source,
        prompt,
        chosen,
        rejected,
        chosen_model,
        rejected_model,
        chosen_score,
        rejected_score
    from {{ ref('int_extra__rated_pairs') }}

),

scored as (

    select
        pairs.*,
        registry.registry_order,
        registry.score_min is not null as is_scored,
        registry.score_kind,
        registry.pairing,
        chosen_score - rejected_score as score_difference,
        registry.score_min,
        registry.score_max
    from pairs
    inner join registry
        on pairs.dataset = registry.dataset

),

final as (

    select
        ---------- keys
        dataset,
        -- one pair per raw row, except all_pairs: one per two completions
        case
            when pairing = 'all_pairs' then {{ stable_hash(['dataset', 'row_key', 'chosen_index', 'rejected_index']) }}
            else {{ stable_hash(['dataset', 'row_key']) }}
        end as pair_id,
        source,
        row_key as prompt_id,
        source_file,
        source_row,
        chosen_index,
        rejected_index,
        registry_order,

        ---------- pair
        prompt,
        chosen,
        rejected,
        chosen_model,
        rejected_model,
        chosen_score,
        rejected_score,
        score_kind,
        case when is_scored then score_difference end as score_margin,
        case when is_scored then {{ margin('score_difference', 'score_min', 'score_max') }} end as margin,

        ---------- score checks
        case when is_scored then {{ flag_list([
            ('chosen_score is null or rejected_score is null', 'unparseable_score'),
            ('chosen_score not between score_min and score_max or rejected_score not between score_min and score_max', 'score_out_of_range'),
        ]) }} else {{ empty_string_list() }} end as dataset_flags
    from scored

)

select * from final
