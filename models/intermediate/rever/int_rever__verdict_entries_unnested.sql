-- One row per trajectory x entry of its verdict (the last <judge> block), in either shape:
-- a list entry {rubric_id, score, explanation} or a map member "rubric_id": {score,
-- explanation}. Trajectories without a parsable verdict, or with an empty one, produce no
-- row here: int_rever__trajectories_scored gives them their verdict_status (no_judge_block,
-- malformed_json, missing_items, ...).
with

trajectories as (

    select * from {{ ref('int_rever__trajectories_parsed') }}

),

entries_unnested as (

    select
        trajectory_id,
        {{ explode_with_index('verdict_entries', 'entry_index', 'entry') }}

    from trajectories

),

entries_parsed as (

    select
        ---------- keys
        {{ stable_hash(['trajectory_id', 'entry_index']) }} as verdict_entry_id,
        trajectory_id,
        cast(entry_index as bigint) as entry_index,

        ---------- attributes
        entry.rubric_id as rubric_id,
        {{ json_kind('entry.entry_json', '$.score') }} as score_json_kind,
        {{ json_text('entry.entry_json', '$.score') }} as score_text,
        {{ json_text('entry.entry_json', '$.explanation') }} as explanation

    from entries_unnested

),

scores_cast as (

    select
        *,
        -- only a JSON number is a score: "1" (a string) or true stay NULL (invalid_score)
        case
            when score_json_kind = 'number' then {{ dbt.safe_cast('score_text', 'double') }}
        end as score,
        row_number() over (
            partition by trajectory_id, rubric_id
            order by entry_index
        ) = 1 as is_first_for_rubric_id,
        count(*) over (partition by trajectory_id, rubric_id) as n_entries_for_rubric_id

    from entries_parsed

)

select * from scores_cast
