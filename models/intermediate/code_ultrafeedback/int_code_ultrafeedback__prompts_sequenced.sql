-- One row per raw coseal row, in the order the published script reads them (files by name,
-- then row number), with the value its module-level `rating` variable holds when the
-- `if rating == 'N/A'` test runs, and the errors the script hits before its pair loop.
-- Rules: doc block cuf_script_rating_state (models/docs/code_ultrafeedback.md).
with

prompts as (

    select
        prompt_id,
        source_file,
        source_row,
        preference,
        responses,
        annotations,
        n_responses,
        n_annotations
    from {{ ref('stg_code_ultrafeedback__prompts') }}

),

-- annotations with their position; NULL/empty lists produce no rows (handled below by n_annotations)
annotations_unnested as (

    select
        prompt_id,
        {{ explode_with_index('annotations', 'annotation_index', 'annotation') }}
    from prompts

),

-- `for row in example['annotations']: row['model']` raises TypeError on a NULL entry:
-- the loop assigns `rating` for the entries before it only
first_null_annotations as (

    select
        prompt_id,
        min(case when annotation is null then annotation_index end) as first_null_annotation_index
    from annotations_unnested
    group by prompt_id

),

examined as (

    select
        prompts.prompt_id,
        prompts.source_file,
        prompts.source_row,
        prompts.preference,
        prompts.annotations,
        prompts.n_responses,
        prompts.n_annotations,
        prompts.responses is null as is_responses_null,
        coalesce({{ list_size(list_filter('prompts.responses', 'r', 'r is null')) }}, 0) > 0
            as has_null_response_entry,
        prompts.annotations is null as is_annotations_null,
        first_null_annotations.first_null_annotation_index
    from prompts
    left join first_null_annotations
        on prompts.prompt_id = first_null_annotations.prompt_id

),

assignments as (

    select
        *,
        -- how many annotations the loop `model_name, rating = row['model'], row['rating']` runs
        -- over: none when the script fails earlier (a NULL responses list or entry, a NULL
        -- annotations list), up to the first NULL entry otherwise
        case
            when is_responses_null or has_null_response_entry or is_annotations_null then 0
            else coalesce(first_null_annotation_index, n_annotations)
        end as n_annotations_assigned
    from examined

),

own_ratings as (

    select
        *,
        n_annotations_assigned > 0 as assigns_rating,
        case
            when n_annotations_assigned > 0
                then {{ list_at('annotations', 'n_annotations_assigned - 1') }}.rating
        end as own_last_rating,
        row_number() over (order by source_file, source_row) - 1 as prompt_order
    from assignments

),

-- the last EARLIER row (in read order) whose annotations loop assigned `rating`
previous_assigners as (

    select
        *,
        max(case when assigns_rating then prompt_order end) over (
            order by prompt_order
            rows between unbounded preceding and 1 preceding
        ) as previous_assigner_order
    from own_ratings

),

stale_ratings as (

    select
        previous_assigners.*,
        assigner.own_last_rating as previous_rating
    from previous_assigners
    left join own_ratings as assigner
        on previous_assigners.previous_assigner_order = assigner.prompt_order

),

script_state as (

    select
        *,
        case when assigns_rating then own_last_rating else previous_rating end as script_rating,
        assigns_rating or previous_assigner_order is not null as is_script_rating_defined,
        not assigns_rating and previous_assigner_order is not null as is_script_rating_stale
    from stale_ratings

),

row_errors as (

    select
        *,
        -- the first error of the script's per-row code before its pair loop, in statement order
        case
            when is_responses_null then 'null_responses'
            when has_null_response_entry then 'null_response_entry'
            when is_annotations_null then 'null_annotations'
            when first_null_annotation_index is not null then 'null_annotation_entry'
            when preference is null then 'null_preference'
            when n_responses > 0 and not is_script_rating_defined then 'rating_never_assigned'
        end as row_error_reason
    from script_state

),

final as (

    select
        ---------- keys
        prompt_id,
        source_file,
        source_row,
        prompt_order,
        preference,

        ---------- sizes
        n_responses,
        n_annotations,

        ---------- the script's `rating` variable
        own_last_rating,
        script_rating,
        is_script_rating_defined,
        is_script_rating_stale,

        ---------- what the script does before pairing
        row_error_reason,
        case
            when row_error_reason in ('null_responses', 'null_response_entry', 'null_annotations',
                                      'null_annotation_entry', 'null_preference') then 'TypeError'
            when row_error_reason = 'rating_never_assigned' then 'NameError'
        end as row_error_type,
        -- `if rating == 'N/A': continue` skips every model (None == 'N/A' is False)
        row_error_reason is null
            and n_responses > 0
            and coalesce({{ binary_string('script_rating') }} = {{ binary_string("'N/A'") }}, false)
            as is_dropped_by_na_rating

    from row_errors

)

select * from final
