-- One row per combination the published script iterates over: `itertools.combinations` of
-- the models it kept (the responses dict keys, in first-position order), for each raw row
-- whose per-row code ran without error and whose `rating` variable was not 'N/A'. Each
-- combination is evaluated as the script does: the two dict lookups (KeyError when a model
-- has no annotation), then `==` and `>` on the rating strings (TypeError on None vs str).
with

pairs as (

    select * from {{ ref('int_code_ultrafeedback__response_pairs_enumerated') }}
    where is_script_combination

),

prompts as (

    select * from {{ ref('int_code_ultrafeedback__prompts_sequenced') }}
    where row_error_reason is null
        and not is_dropped_by_na_rating

),

combinations as (

    select
        pairs.*,
        prompts.prompt_order,
        prompts.n_annotations,
        -- index in `list(itertools.combinations(all_models, 2))`
        row_number() over (
            partition by pairs.prompt_id
            order by pairs.response_index_a, pairs.response_index_b
        ) - 1 as combination_index
    from pairs
    inner join prompts
        on pairs.prompt_id = prompts.prompt_id

),

evaluated as (

    select
        *,
        -- `annotations[combination[0]]` is looked up before `annotations[combination[1]]`
        case
            when not has_annotation_a then model_a
            when not has_annotation_b then model_b
        end as missing_model,
        case
            when not (has_annotation_a and has_annotation_b) and n_annotations = 0
                then 'empty_annotations'
            when not (has_annotation_a and has_annotation_b)
                then 'model_without_annotation'
            when (rating_raw_a is null) != (rating_raw_b is null)
                then 'null_rating_compared'
        end as combination_error_reason,
        -- `rating1 == rating2`: exact string equality (None == None is True)
        coalesce(
            {{ binary_string('rating_raw_a') }} = {{ binary_string('rating_raw_b') }},
            rating_raw_a is null and rating_raw_b is null
        ) as is_tie,
        -- `rating1 > rating2`: codepoint order
        coalesce({{ binary_string('rating_raw_a') }} > {{ binary_string('rating_raw_b') }}, false)
            as is_a_chosen
    from combinations

),

prompt_failures as (

    select
        *,
        case
            when combination_error_reason in ('empty_annotations', 'model_without_annotation') then 'KeyError'
            when combination_error_reason = 'null_rating_compared' then 'TypeError'
        end as combination_error_type,
        -- one failing combination stops the script on the whole row
        max(case when combination_error_reason is not null then 1 else 0 end)
            over (partition by prompt_id) = 1 as is_prompt_failed
    from evaluated

)

select * from prompt_failures
