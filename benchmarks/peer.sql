-- The peer of the warehouse: the computations `benchmarks/reference.py` checks against the marts,
-- written as one plain DuckDB SQL script, the way a data engineer would write them without dbt.
-- Run by `python -m benchmarks.peer sql`, which first creates four views over the raw files
-- (Parquet or JSON, the files the Hub's rule picks), each with `source_file` (file name) and
-- `source_row` (0-based row in the file):
--
--   uf_raw            argilla/ultrafeedback-binarized-curation
--   cuf_raw           coseal/CodeUltraFeedback
--   rever_judge_raw   OpenRubrics/ReVeR-Traces-Judge
--   rever_rubric_raw  OpenRubrics/ReVeR-Traces-Rubric
--
-- and sets the variable `random_seed` (the warehouse's var random_seed). The output tables
-- (uf_completions, uf_prompts, code_published, code_quarantine, code_corrected,
-- rever_trajectories, rever_pairs) are then written to Parquet. The rules are those the marts
-- document (docs/marts.md, the doc blocks in models/docs/); the VADER sentiment is the other half
-- of the peer (`python -m benchmarks.peer vader`).

-- A raw row's key, as the warehouse documents it: md5 of '<dataset>:<content key>:<occurrence>',
-- the content key an exact key (md5 of its parts' md5s joined with ':', NULL as 'null') over what
-- the row is about, occurrence the row's rank among the rows of equal content (by path, then row).
create or replace temp macro part_key(t) as coalesce(md5(t), 'null');
create or replace temp macro list_key(element_keys) as
    case when element_keys is not null then md5(array_to_string(element_keys, ':')) end;
create or replace temp macro row_key(dataset, content, source_path, source_row) as
    md5(dataset || ':' || content || ':'
        || (row_number() over (partition by content order by source_path, source_row) - 1));

-- Strict JSON (RFC 8259): DuckDB's json_valid also accepts trailing commas and NaN/Infinity.
create or replace temp macro is_strict_json(t) as
    json_valid(t) and not (
        regexp_matches(t, ',\s*[\]}]|\bNaN\b|\bInfinity\b')
        and regexp_matches(regexp_replace(t, '"(?:[^"\\]|\\.)*"', '""', 'g'), ',\s*[\]}]|\bNaN\b|\bInfinity\b'));

-- An UltraFeedback aspect Rating: "1".."5" as a number, anything else ("N/A", "0", "10", ...) NULL.
create or replace temp macro uf_rating(r) as
    case when r in ('1', '2', '3', '4', '5') then cast(r as integer) end;


-- ============================================================================= UltraFeedback

-- one row per raw row, the completions narrowed to what is used (no texts)
create or replace temp table uf_rows as
select
    source_file,
    source_row,
    row_key('ultrafeedback', md5(concat_ws(':', part_key(source), part_key(instruction), part_key(list_key(
        list_transform(completions, lambda c: md5(part_key(c.model) || ':' || part_key(c.response))))))),
        source_path, source_row) as prompt_id,
    len(completions) as n_completions,
    list_transform(completions, lambda c: {
        'model': c.model,
        'overall_score': cast(c.overall_score as double),
        'helpfulness': c.annotations.helpfulness."Rating",
        'honesty': c.annotations.honesty."Rating",
        'instruction_following': c.annotations.instruction_following."Rating",
        'truthfulness': c.annotations.truthfulness."Rating",
        'critique_md5': md5(c.critique)
    }) as completions
from uf_raw;

-- one row per completion: the four ratings and their mean (NULL when none is valid)
create or replace table uf_completions as
with unnested as (
    select
        source_file,
        source_row,
        prompt_id,
        unnest(completions) as c,
        cast(generate_subscripts(completions, 1) - 1 as integer) as completion_index
    from uf_rows
),
rated as (
    select
        source_file,
        source_row,
        prompt_id,
        completion_index,
        c.model as model,
        uf_rating(c.helpfulness) as helpfulness_rating,
        uf_rating(c.honesty) as honesty_rating,
        uf_rating(c.instruction_following) as instruction_following_rating,
        uf_rating(c.truthfulness) as truthfulness_rating,
        c.overall_score as overall_score,
        c.critique_md5 as critique_md5
    from unnested
)
select
    *,
    cast(coalesce(helpfulness_rating, 0) + coalesce(honesty_rating, 0)
         + coalesce(instruction_following_rating, 0) + coalesce(truthfulness_rating, 0) as double)
    / nullif((helpfulness_rating is not null)::int + (honesty_rating is not null)::int
             + (instruction_following_rating is not null)::int + (truthfulness_rating is not null)::int, 0)
        as average_rating
from rated;

-- The picks: highest score first, NULL lowest, the first in list order on ties. A pick's random
-- alternate is drawn among the other completions scored strictly lower (NULL is lower than any
-- number), or among all the others when none is lower: the candidate with the smallest
-- md5('<seed>:<pick>:<prompt_id>:<completion_index>').
create or replace temp table uf_ranked as
with ranked as (
    select
        *,
        row_number() over (partition by prompt_id order by average_rating desc nulls last, completion_index)
            as rated_rank,
        row_number() over (partition by prompt_id order by overall_score desc nulls last, completion_index)
            as overall_rank,
        max(average_rating) over (partition by prompt_id) as top_rating,
        max(overall_score) over (partition by prompt_id) as top_overall
    from uf_completions
),
below as (
    select
        *,
        case when top_rating is null then false when average_rating is null then true
             else average_rating < top_rating end as below_rated,
        case when top_overall is null then false when overall_score is null then true
             else overall_score < top_overall end as below_overall
    from ranked
),
candidates as (
    select
        *,
        rated_rank > 1 and (below_rated or count(*) filter (where below_rated) over (partition by prompt_id) = 0)
            as rated_candidate,
        overall_rank > 1 and (below_overall or count(*) filter (where below_overall) over (partition by prompt_id) = 0)
            as overall_candidate
    from below
)
select
    *,
    rated_candidate and row_number() over (
        partition by prompt_id
        order by rated_candidate desc,
                 md5(concat_ws(':', getvariable('random_seed'), 'best_rated', prompt_id, completion_index)),
                 completion_index) = 1 as rated_alternate,
    overall_candidate and row_number() over (
        partition by prompt_id
        order by overall_candidate desc,
                 md5(concat_ws(':', getvariable('random_seed'), 'best_overall', prompt_id, completion_index)),
                 completion_index) = 1 as overall_alternate
from candidates;

-- one row per raw row (also those without completions)
create or replace table uf_prompts as
with picks as (
    select
        prompt_id,
        any_value(completion_index) filter (where rated_rank = 1) as best_rated_index,
        any_value(model) filter (where rated_rank = 1) as best_rated_model,
        any_value(average_rating) filter (where rated_rank = 1) as score_best_rated,
        any_value(completion_index) filter (where overall_rank = 1) as best_overall_index,
        any_value(model) filter (where overall_rank = 1) as best_overall_model,
        any_value(overall_score) filter (where overall_rank = 1) as score_best_overall,
        any_value(completion_index) filter (where rated_alternate) as random_for_best_rated_index,
        any_value(model) filter (where rated_alternate) as random_response_for_best_rated_model,
        any_value(average_rating) filter (where rated_alternate) as score_random_response_for_best_rated,
        any_value(completion_index) filter (where overall_alternate) as random_for_best_overall_index,
        any_value(model) filter (where overall_alternate) as random_response_for_best_overall_model,
        any_value(overall_score) filter (where overall_alternate) as score_random_response_for_best_overall
    from uf_ranked
    group by prompt_id
)
select
    uf_rows.source_file,
    uf_rows.source_row,
    uf_rows.prompt_id,
    uf_rows.n_completions,
    picks.* exclude (prompt_id),
    picks.best_rated_index <> picks.best_overall_index as best_rated_is_different_from_best_overall
from uf_rows
left join picks using (prompt_id);


-- ============================================================================= CodeUltraFeedback

-- one row per raw row in the order the script reads them (files by name, then row number);
-- response and annotation entries narrowed to what is used, a NULL entry kept NULL
create or replace temp table cuf_rows as
select
    row_key('code_ultrafeedback', md5(concat_ws(':', part_key(preference), part_key(instruction),
        part_key(list_key(list_transform(models, lambda m: md5(part_key(m))))),
        part_key(list_key(list_transform(responses, lambda r: md5(part_key(r.model) || ':' || part_key(r.response))))))),
        source_path, source_row) as prompt_id,
    row_number() over (order by source_file, source_row) - 1 as prompt_order,
    preference,
    list_transform(responses, lambda r: case when r is not null then {'model': r.model} end) as responses,
    list_transform(annotations, lambda a: case when a is not null then {'model': a.model, 'rating': a.rating} end)
        as annotations
from cuf_raw;

create or replace temp table cuf_responses as
select
    prompt_id,
    unnest(responses) as entry,
    generate_subscripts(responses, 1) - 1 as response_index
from cuf_rows;

-- the script's `annotations[model] = rating`: a model's last annotation wins
create or replace temp table cuf_last_annotations as
with unnested as (
    select prompt_id, unnest(annotations) as entry, generate_subscripts(annotations, 1) as position
    from cuf_rows
)
select prompt_id, entry.model as model, entry.rating as rating
from unnested
where entry is not null
qualify row_number() over (partition by prompt_id, entry.model order by position desc) = 1;

-- The script's module-level `rating` when `if rating == 'N/A'` runs: the rating of the last
-- annotation its loop assigned in this row, else in the last earlier row whose loop assigned
-- one. The loop assigns nothing when the row fails before it (NULL responses list or entry,
-- NULL annotations list) and stops at a NULL annotation entry. A row raises TypeError on a
-- NULL list, entry or preference, and NameError when `rating` was never assigned.
create or replace temp table cuf_script_rows as
with examined as (
    select
        *,
        len(responses) as n_responses,
        responses is null or list_contains(list_transform(responses, lambda r: r is null), true)
            or annotations is null as fails_before_annotations,
        list_position(list_transform(annotations, lambda a: a is null), true) as first_null_annotation
    from cuf_rows
),
assigned as (
    select
        *,
        case
            when fails_before_annotations then 0
            when first_null_annotation > 0 then first_null_annotation - 1
            else len(annotations)
        end as n_assigned
    from examined
),
carried as (
    select
        *,
        last_value(case when n_assigned > 0 then {'rating': annotations[n_assigned].rating} end ignore nulls)
            over (order by prompt_order rows between unbounded preceding and current row) as rating_state
    from assigned
)
select
    prompt_id,
    prompt_order,
    n_responses,
    case
        when fails_before_annotations or first_null_annotation > 0 or preference is null then 'TypeError'
        when n_responses > 0 and rating_state is null then 'NameError'
    end as row_error,
    coalesce(rating_state.rating = 'N/A', false) as is_dropped_by_na
from carried;

-- `itertools.combinations` of the response models (dict keys: a model at its first position),
-- each looked up in the annotations (KeyError when missing) and compared as strings (TypeError
-- for None against a string); one raising combination loses the row's pairs
create or replace temp table cuf_combinations as
with models as (
    select prompt_id, entry.model as model, min(response_index) as position
    from cuf_responses
    where entry is not null
    group by prompt_id, entry.model
),
combinations as (
    select
        rows.prompt_id,
        rows.prompt_order,
        a.position as position_a,
        b.position as position_b,
        a.model as model_a,
        b.model as model_b,
        ann_a.prompt_id is not null and ann_b.prompt_id is not null as both_annotated,
        ann_a.rating as rating_a,
        ann_b.rating as rating_b
    from cuf_script_rows as rows
    join models as a on a.prompt_id = rows.prompt_id
    join models as b on b.prompt_id = rows.prompt_id and a.position < b.position
    left join cuf_last_annotations as ann_a
        on ann_a.prompt_id = a.prompt_id and ann_a.model is not distinct from a.model
    left join cuf_last_annotations as ann_b
        on ann_b.prompt_id = b.prompt_id and ann_b.model is not distinct from b.model
    where rows.row_error is null and not rows.is_dropped_by_na
)
select
    *,
    not both_annotated or ((rating_a is null) <> (rating_b is null)) as raises,
    coalesce(rating_a = rating_b, rating_a is null and rating_b is null) as is_tie
from combinations;

-- the script's output, in its order; `rating1 > rating2` compares strings ('N/A' > '5', '10' < '2')
create or replace table code_published as
with rows_failed as (
    select *, bool_or(raises) over (partition by prompt_id) as row_raises
    from cuf_combinations
),
emitted as (
    select * from rows_failed where not row_raises and not is_tie
)
select
    row_number() over (order by emitted.prompt_order, position_a, position_b) - 1 as pair_order,
    emitted.prompt_id,
    cuf_rows.preference,
    case when rating_a > rating_b then model_a else model_b end as chosen_model,
    case when rating_a > rating_b then model_b else model_a end as rejected_model,
    case when rating_a > rating_b then rating_a else rating_b end as chosen_score,
    case when rating_a > rating_b then rating_b else rating_a end as rejected_score
from emitted
join cuf_rows using (prompt_id);

-- the rows on which the script raises
create or replace table code_quarantine as
select prompt_id from cuf_script_rows where row_error is not null
union all
select distinct prompt_id from cuf_combinations where raises;

-- the corrected rule: every two responses whose models' last ratings are valid ("1".."5")
-- and different, chosen = the higher
create or replace table code_corrected as
with rated as (
    select
        r.prompt_id,
        r.response_index,
        r.entry.model as model,
        case when a.rating in ('1', '2', '3', '4', '5') then cast(a.rating as integer) end as rating
    from cuf_responses as r
    left join cuf_last_annotations as a on a.prompt_id = r.prompt_id and a.model is not distinct from r.entry.model
    where r.entry is not null
),
pairs as (
    select
        a.prompt_id,
        case when a.rating > b.rating then a else b end as hi,
        case when a.rating > b.rating then b else a end as lo
    from rated as a
    join rated as b on a.prompt_id = b.prompt_id and a.response_index < b.response_index
    where a.rating is not null and b.rating is not null and a.rating <> b.rating
)
select
    pairs.prompt_id,
    cuf_rows.preference,
    hi.response_index as chosen_response_index,
    lo.response_index as rejected_response_index,
    hi.model as chosen_model,
    lo.model as rejected_model,
    hi.rating as chosen_rating,
    lo.rating as rejected_rating,
    hi.rating - lo.rating as score_margin
from pairs
join cuf_rows using (prompt_id);


-- ============================================================================= ReVeR

-- The verdict is the JSON of the LAST complete <judge>...</judge> block of the last assistant
-- message; the task (its rubric items) is the JSON of the first user message.
create or replace temp table rever_parsed as
with picked as (
    select
        source_file,
        source_row,
        id,
        candidate,
        list_filter(messages, lambda m: m.role = 'user')[1].content as user_content,
        list_filter(messages, lambda m: m.role = 'assistant')[-1].content as assistant_content
    from rever_judge_raw
),
blocks as (
    select
        *,
        trim(split_part(
            list_filter(string_split(assistant_content, '<judge>')[2:], lambda piece: contains(piece, '</judge>'))[-1],
            '</judge>', 1)) as verdict_text
    from picked
),
guarded as (
    select
        *,
        case when is_strict_json(user_content) then user_content end as task_json,
        case when is_strict_json(verdict_text) then verdict_text end as verdict_json
    from blocks
),
members as (
    select
        *,
        case when json_type(verdict_json) = 'OBJECT' then json_keys(verdict_json) end as member_keys,
        case when json_type(verdict_json) = 'OBJECT' then cast(json_extract(verdict_json, '$.*') as varchar[]) end
            as member_values
    from guarded
)
select
    source_file,
    source_row,
    id,
    candidate,
    task_json,
    -- list shape: an array of entries, bare or as the value of an object's only member (any key)
    case
        when json_type(verdict_json) = 'ARRAY' then cast(json_extract(verdict_json, '$[*]') as varchar[])
        when len(member_keys) = 1 and json_type(member_values[1]) = 'ARRAY'
            then cast(json_extract(member_values[1], '$[*]') as varchar[])
    end as entry_list,
    -- map shape: any other object, keyed by rubric_id
    case
        when not (len(member_keys) = 1 and json_type(member_values[1]) = 'ARRAY')
            then list_zip(member_keys, member_values)
    end as entry_map
from members;

-- one row per rubric item of the task, with its kind from the tag that ends the criterion
create or replace temp table rever_items as
with unnested as (
    select source_file, source_row, unnest(cast(json_extract(task_json, '$.rubrics[*]') as varchar[])) as item
    from rever_parsed
    where json_type(task_json, '$.rubrics') = 'ARRAY'
)
select
    source_file,
    source_row,
    json_extract_string(item, '$.rubric_id') as rubric_id,
    case regexp_extract(json_extract_string(item, '$.criterion'), '\[([^\[\]]*)\]\s*$', 1)
        when 'Hard Rule' then 'hard_rule'
        when 'Principle' then 'principle'
    end as kind
from unnested;

-- one row per verdict entry, either shape; a score counts only as a JSON number
create or replace temp table rever_entries as
with unnested as (
    select source_file, source_row, json_extract_string(e, '$.rubric_id') as rubric_id, e as entry
    from (select source_file, source_row, unnest(entry_list) as e from rever_parsed)
    union all
    select source_file, source_row, kv[1] as rubric_id, kv[2] as entry
    from (select source_file, source_row, unnest(entry_map) as kv from rever_parsed)
)
select
    source_file,
    source_row,
    rubric_id,
    case when json_type(entry, '$.score') in ('BIGINT', 'UBIGINT', 'HUGEINT', 'DOUBLE')
        then cast(json_extract_string(entry, '$.score') as double) end as score
from unnested;

-- A trajectory is scored only when its verdict scores every item of its task exactly once (no
-- unknown or repeated rubric_id, every criterion tagged, every score a number in range:
-- Hard Rule 0/1, Principle an integer 0..100). Score: Hard Rules satisfied + Principle mean / 101.
create or replace table rever_trajectories as
with entry_counts as (
    select source_file, source_row, count(*) as n_entries, count(distinct rubric_id) as n_entry_ids
    from rever_entries
    group by all
),
item_scores as (
    select
        i.source_file,
        i.source_row,
        count(*) as n_items,
        count(distinct i.rubric_id) as n_item_ids,
        count(e.rubric_id) as n_matched,
        bool_and(coalesce(case i.kind
            when 'hard_rule' then e.score in (0, 1)
            when 'principle' then e.score between 0 and 100 and e.score = floor(e.score)
        end, false)) as all_valid,
        count(*) filter (where i.kind = 'hard_rule' and e.score = 1) as hard_rules_satisfied,
        avg(e.score) filter (where i.kind = 'principle') as principle_mean
    from rever_items as i
    left join rever_entries as e
        on e.source_file = i.source_file and e.source_row = i.source_row and e.rubric_id = i.rubric_id
    group by all
),
checked as (
    select
        p.source_file,
        p.source_row,
        p.id,
        p.candidate,
        coalesce(
            s.n_items > 0 and s.n_item_ids = s.n_items and s.n_matched = s.n_items
            and c.n_entries = s.n_items and c.n_entry_ids = s.n_items and s.all_valid,
            false) as is_scored,
        s.hard_rules_satisfied,
        s.principle_mean
    from rever_parsed as p
    left join item_scores as s using (source_file, source_row)
    left join entry_counts as c using (source_file, source_row)
)
select
    source_file,
    source_row,
    id,
    candidate,
    case when is_scored then hard_rules_satisfied end as hard_rules_satisfied,
    case when is_scored then principle_mean end as principle_mean,
    case when is_scored then hard_rules_satisfied + coalesce(principle_mean / 101.0, 0) end as response_score
from checked;

-- one row per pair id (from either dataset): the first (file, row) trajectory of each side;
-- kept when the chosen side scores strictly higher (Hard Rules first, then the Principle mean),
-- NULL when a side has no score
create or replace table rever_pairs as
with sides as (
    select *
    from rever_trajectories
    where id is not null
    qualify row_number() over (partition by id, candidate order by source_file, source_row) = 1
),
ids as (
    select id from rever_trajectories where id is not null
    union
    select id from rever_rubric_raw where id is not null
),
joined as (
    select
        ids.id,
        c.response_score as chosen_score,
        r.response_score as rejected_score,
        c.hard_rules_satisfied as chosen_hard,
        r.hard_rules_satisfied as rejected_hard,
        coalesce(c.principle_mean, 0) as chosen_principle,
        coalesce(r.principle_mean, 0) as rejected_principle
    from ids
    left join sides as c on c.id = ids.id and c.candidate = 'chosen'
    left join sides as r on r.id = ids.id and r.candidate = 'rejected'
)
select
    id,
    chosen_score,
    rejected_score,
    case
        when chosen_score is null or rejected_score is null then null
        when chosen_hard <> rejected_hard then chosen_hard > rejected_hard
        else chosen_principle > rejected_principle
    end as kept
from joined;
