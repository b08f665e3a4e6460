-- One row per break of the datasets' promises, with its kind (documented in
-- _rever__models.yml). Pair-level breaks carry the id (candidate set when the break concerns
-- one side); trajectory- and rubric-level breaks also carry the raw row's key. A clean
-- dataset gives an empty table.
with

pairs as (

    select * from {{ ref('int_rever__pairs') }}

),

trajectories as (

    select * from {{ ref('rever_trajectories') }}

),

rubrics as (

    select * from {{ ref('int_rever__rubrics_parsed') }}

),

rubric_items as (

    select * from {{ ref('rever_rubric_items') }}

),

verdicts as (

    select * from {{ ref('rever_verdicts') }}

),

item_problems as (

    -- which items of a broken verdict fail, e.g. "r2: missing_item"
    select
        trajectory_id,
        {{ dbt.listagg(
            "coalesce(rubric_id, 'NULL') || ': ' || item_status",
            "', '",
            "order by coalesce(item_index, 1000000), entry_index"
        ) }} as problems

    from verdicts
    where item_status not in ('ok', 'no_verdict')
    group by trajectory_id

),

---------- pair level: each rubric used by exactly two trajectories, one chosen, one rejected;
---------- every trajectory has a rubric; the chosen response scores strictly higher
pair_breaks as (

    select
        case
            when rubric_found and n_trajectories = 0 then 'rubric_unused'
            when rubric_found and n_trajectories = 1 then 'rubric_single_trajectory'
            when not rubric_found then 'trajectory_without_rubric'
        end as kind,
        'pair' as level,
        id,
        source,
        cast(null as {{ dbt.type_string() }}) as candidate,
        cast(null as {{ dbt.type_string() }}) as trajectory_id,
        rubric_row_id,
        'n_trajectories=' || cast(n_trajectories as {{ dbt.type_string() }})
            || ', n_chosen=' || cast(n_chosen as {{ dbt.type_string() }})
            || ', n_rejected=' || cast(n_rejected as {{ dbt.type_string() }}) as detail

    from pairs
    where (rubric_found and n_trajectories < 2) or not rubric_found

    union all

    select
        'missing_candidate' as kind,
        'pair' as level,
        id,
        source,
        missing.candidate,
        cast(null as {{ dbt.type_string() }}) as trajectory_id,
        rubric_row_id,
        'n_trajectories=' || cast(n_trajectories as {{ dbt.type_string() }})
            || ', n_chosen=' || cast(n_chosen as {{ dbt.type_string() }})
            || ', n_rejected=' || cast(n_rejected as {{ dbt.type_string() }}) as detail

    from pairs
    cross join (
        select 'chosen' as candidate
        union all
        select 'rejected' as candidate
    ) as missing
    where pairs.n_trajectories >= 2
        and ((missing.candidate = 'chosen' and pairs.n_chosen = 0)
            or (missing.candidate = 'rejected' and pairs.n_rejected = 0))

    union all

    select
        'not_kept' as kind,
        'pair' as level,
        id,
        source,
        cast(null as {{ dbt.type_string() }}) as candidate,
        cast(null as {{ dbt.type_string() }}) as trajectory_id,
        rubric_row_id,
        'decided_by=' || decided_by
            || ', chosen_score=' || cast(chosen_score as {{ dbt.type_string() }})
            || ', rejected_score=' || cast(rejected_score as {{ dbt.type_string() }}) as detail

    from pairs
    where not kept

),

---------- trajectory level: one trajectory per (id, candidate), a known candidate, the
---------- rubric's criteria word for word, a verdict that parses and scores every item
trajectory_breaks as (

    select
        'duplicate_candidate' as kind,
        'trajectory' as level,
        id,
        source,
        candidate,
        trajectory_id,
        cast(null as {{ dbt.type_string() }}) as rubric_row_id,
        'a later row of the same (id, candidate); the first row stands for the pair' as detail

    from trajectories
    where not is_pair_member and id is not null

    union all

    select
        'invalid_candidate' as kind,
        'trajectory' as level,
        id,
        source,
        candidate,
        trajectory_id,
        cast(null as {{ dbt.type_string() }}) as rubric_row_id,
        'candidate is neither chosen nor rejected' as detail

    from trajectories
    where candidate is null or candidate not in ('chosen', 'rejected')

    union all

    select
        'trajectory_missing_id' as kind,
        'trajectory' as level,
        id,
        source,
        candidate,
        trajectory_id,
        cast(null as {{ dbt.type_string() }}) as rubric_row_id,
        'id is NULL: the trajectory cannot be joined' as detail

    from trajectories
    where id is null

    union all

    select
        'criteria_mismatch' as kind,
        'trajectory' as level,
        id,
        source,
        candidate,
        trajectory_id,
        cast(null as {{ dbt.type_string() }}) as rubric_row_id,
        'the criteria of the task differ from those of the rubric' as detail

    from trajectories
    where rubric_found
        and not criteria_match_rubric
        and verdict_status != 'malformed_user_message'

    union all

    select
        'verdict_' || trajectories.verdict_status as kind,
        'trajectory' as level,
        trajectories.id,
        trajectories.source,
        trajectories.candidate,
        trajectories.trajectory_id,
        cast(null as {{ dbt.type_string() }}) as rubric_row_id,
        'n_judge_blocks=' || cast(trajectories.n_judge_blocks as {{ dbt.type_string() }})
            || ', verdict_shape=' || coalesce(trajectories.verdict_shape, 'none')
            || coalesce('; ' || item_problems.problems, '') as detail

    from trajectories
    left join item_problems
        on trajectories.trajectory_id = item_problems.trajectory_id
    where trajectories.verdict_status != 'ok'

),

---------- rubric level: one parsable rubric per id, every item tagged
rubric_breaks as (

    select
        'duplicate_rubric' as kind,
        'rubric' as level,
        id,
        source,
        cast(null as {{ dbt.type_string() }}) as candidate,
        cast(null as {{ dbt.type_string() }}) as trajectory_id,
        rubric_row_id,
        'a later rubric row for the same id; the first row is the rubric of the pair' as detail

    from rubrics
    where not is_primary and id is not null

    union all

    select
        'rubric_missing_id' as kind,
        'rubric' as level,
        id,
        source,
        cast(null as {{ dbt.type_string() }}) as candidate,
        cast(null as {{ dbt.type_string() }}) as trajectory_id,
        rubric_row_id,
        'id is NULL: the rubric cannot be joined' as detail

    from rubrics
    where id is null

    union all

    select
        'rubric_unparsed' as kind,
        'rubric' as level,
        id,
        source,
        cast(null as {{ dbt.type_string() }}) as candidate,
        cast(null as {{ dbt.type_string() }}) as trajectory_id,
        rubric_row_id,
        'the assistant message does not end with a numbered list' as detail

    from rubrics
    where n_items = 0

    union all

    select
        'rubric_unknown_kind' as kind,
        'rubric' as level,
        id,
        source,
        cast(null as {{ dbt.type_string() }}) as candidate,
        cast(null as {{ dbt.type_string() }}) as trajectory_id,
        rubric_row_id,
        'item_index=' || cast(item_index as {{ dbt.type_string() }}) || ': no [Hard Rule] or [Principle] tag' as detail

    from rubric_items
    where kind = 'unknown'

),

all_breaks as (

    select * from pair_breaks
    union all
    select * from trajectory_breaks
    union all
    select * from rubric_breaks

),

raw_keys_added as (

    -- the raw row behind the break: the trajectory, else the rubric (pair-level rows with a
    -- rubric point at it)
    select
        all_breaks.*,
        coalesce(trajectories.source_file, rubrics.source_file) as source_file,
        coalesce(trajectories.source_row, rubrics.source_row) as source_row

    from all_breaks
    left join trajectories
        on all_breaks.trajectory_id = trajectories.trajectory_id
    left join rubrics
        on all_breaks.rubric_row_id = rubrics.rubric_row_id

),

final as (

    select
        ---------- keys
        {{ stable_hash(['kind', 'id', 'candidate', 'trajectory_id', 'rubric_row_id', 'detail']) }} as integrity_id,
        kind,
        level,
        id,
        candidate,
        trajectory_id,
        rubric_row_id,
        source_file,
        source_row,

        ---------- attributes
        source,
        detail

    from raw_keys_added

)

select * from final
