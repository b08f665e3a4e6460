-- One row per rubric x item of ReVeR-Traces-Rubric: the criteria of the numbered list that
-- ends the rubric's assistant message, in order, with the kind read from the closing tag.
-- Rubrics without a numbered list have no row here (rever_integrity: rubric_unparsed).
with

rubrics as (

    select * from {{ ref('int_rever__rubrics_parsed') }}

),

items_unnested as (

    select
        rubric_row_id,
        id,
        source,
        is_primary,
        {{ explode_with_index('criteria', 'item_index', 'criterion') }}

    from rubrics

),

final as (

    select
        ---------- keys
        {{ stable_hash(['rubric_row_id', 'item_index']) }} as rubric_item_id,
        rubric_row_id,
        id,
        cast(item_index as bigint) as item_index,

        ---------- attributes
        source,
        criterion,
        {{ rever_criterion_kind('criterion') }} as kind,
        is_primary as is_primary_rubric

    from items_unnested

)

select * from final
