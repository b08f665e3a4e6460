"""Every id and every seeded draw comes from a row's content, never from its position: in a
second revision of the raw data (revision.py: rows removed, added and reordered, ratings
changed) every other prompt keeps its id, its picks, its random alternates and its pairs; a
changed rating keeps the prompt's id and moves its pick; swapped ratings flip a pair under its id.
Each raw row's key is the documented formula (benchmarks/reference.py): UltraFeedback's and
CodeUltraFeedback's `prompt_id` in test_bench_smoke, the registered shapes' in
test_extra_datasets, the other built-in datasets' here."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest

from benchmarks import reference as ref
from revision import ADDED_ENTRY, REORDERED_EXTRA

pytestmark = pytest.mark.slow

PROVENANCE = {"source_file", "source_row", "published_source_file", "published_source_row"}


def rows(warehouse, table: str, where: str = "true") -> list[dict]:
    return warehouse.rows(f"select * from main.{table} where {where}")


def multiset(found: list[dict], leave_out: set[str]) -> Counter:
    """The rows as a multiset, without provenance columns and without the prompts ``leave_out``."""
    return Counter(json.dumps({k: v for k, v in r.items() if k not in PROVENANCE}, sort_keys=True, default=str)
                   for r in found if r.get("prompt_id") not in leave_out)


def prompt_ids(warehouse, table: str) -> set[str]:
    return {r["prompt_id"] for r in warehouse.rows(f"select prompt_id from main.{table}")}


def test_ultrafeedback_prompts_keep_their_ids_picks_and_alternates(warehouse, revised):
    new, planted = revised
    old_ids, new_ids = prompt_ids(warehouse, "ultrafeedback_curated"), prompt_ids(new, "ultrafeedback_curated")
    assert old_ids - new_ids == {planted.uf_removed}
    [added] = new_ids - old_ids
    assert new.scalar("select instruction from main.ultrafeedback_curated where prompt_id = ?", [added]) \
        == planted.uf_added_instruction
    changed = {planted.uf_removed, planted.uf_rerated, added, *planted.uf_fixed}
    assert planted.uf_fixed  # the fix changed something
    for table in ("ultrafeedback_curated", "ultrafeedback_completion_scores"):
        old_rows, new_rows = multiset(rows(warehouse, table), changed), multiset(rows(new, table), changed)
        assert old_rows == new_rows, table
        assert len(old_rows) > 100


def test_a_changed_rating_keeps_the_prompt_id_and_moves_the_pick(warehouse, revised):
    new, planted = revised
    query = "select best_rated_index, score_best_rated from main.ultrafeedback_curated where prompt_id = ?"
    [old_pick] = warehouse.rows(query, [planted.uf_rerated])
    [new_pick] = new.rows(query, [planted.uf_rerated])
    assert old_pick["best_rated_index"] != planted.uf_rerated_index
    assert new_pick == {"best_rated_index": planted.uf_rerated_index, "score_best_rated": 5.0}


def test_pairs_of_unchanged_prompts_are_unchanged(warehouse, revised):
    new, planted = revised
    added = prompt_ids(new, "ultrafeedback_curated") - prompt_ids(warehouse, "ultrafeedback_curated")
    changed = {planted.uf_removed, planted.uf_rerated, planted.cuf_removed, planted.cuf_swapped, *added, *planted.uf_fixed}
    built_in = "dataset in ('ultrafeedback', 'code_ultrafeedback', 'rever')"
    for table, where in (("preference_pairs", built_in), ("code_ultrafeedback_pairs", "true")):
        old_rows = multiset(rows(warehouse, table, where), changed)
        assert old_rows == multiset(rows(new, table, where), changed), table
        assert len(old_rows) > 50
    # (code_ultrafeedback_prompts' published-logic columns follow the script's row order: compared by id only)
    assert prompt_ids(warehouse, "code_ultrafeedback_prompts") ^ prompt_ids(new, "code_ultrafeedback_prompts") \
        == {planted.cuf_removed}


def test_swapped_ratings_flip_the_pair_under_its_id(warehouse, revised):
    new, planted = revised
    query = ("select pair_id, chosen_response_index, rejected_response_index from main.code_ultrafeedback_pairs"
             " where prompt_id = ?")
    old = {r["pair_id"]: (r["chosen_response_index"], r["rejected_response_index"])
           for r in warehouse.rows(query, [planted.cuf_swapped])}
    now = {r["pair_id"]: (r["chosen_response_index"], r["rejected_response_index"])
           for r in new.rows(query, [planted.cuf_swapped])}
    chosen, rejected = planted.cuf_swapped_indexes
    [pair_id] = [p for p, sides in old.items() if sides == (chosen, rejected)]
    assert now[pair_id] == (rejected, chosen)


def test_an_added_registry_entry_adds_its_pairs_only(warehouse, revised):
    new, _ = revised
    counts = "select dataset, count(*) as n from main.preference_pairs group by dataset"
    old_counts = {r["dataset"]: r["n"] for r in warehouse.rows(counts)}
    new_counts = {r["dataset"]: r["n"] for r in new.rows(counts)}
    assert ADDED_ENTRY["name"] not in old_counts and new_counts.pop(ADDED_ENTRY["name"]) > 10
    assert new_counts.keys() == old_counts.keys()
    # every other registered dataset's pairs (flags and splits included) are unchanged
    registered = "dataset not in ('ultrafeedback', 'code_ultrafeedback', 'rever', '{}')".format(ADDED_ENTRY["name"])
    old_rows = multiset(rows(warehouse, "preference_pairs", registered), set())
    assert old_rows == multiset(rows(new, "preference_pairs", registered), set())
    assert len({json.loads(r)["dataset"] for r in old_rows}) >= 3


def test_a_reordered_registered_dataset_keeps_its_ids(warehouse, revised):
    new, _ = revised
    name, path = REORDERED_EXTRA

    def first_line(raw_dir):
        with gzip.open(raw_dir / path, "rt", encoding="utf-8") as f:
            return f.readline()

    assert first_line(warehouse.raw_dir) != first_line(new.raw_dir)  # the file was reordered
    for table in ("preference_pairs", "training_mixture"):
        where = f"dataset = '{name}'"
        old_rows = multiset(rows(warehouse, table, where), set())
        assert old_rows == multiset(rows(new, table, where), set()), table
        assert len(old_rows) > 10


# the built-in datasets whose keys no other test computes: raw dataset -> (staging view, key column,
# what a row is about)
OTHER_KEYS = {
    "code_ultrafeedback_standard": ("stg_code_ultrafeedback__published_pairs", "published_pair_id",
                                    ref.code_ultrafeedback_standard_content_key),
    "rever_rubric": ("stg_rever__rubrics", "rubric_row_id", ref.rever_rubric_content_key),
    "rever_judge": ("stg_rever__trajectories", "trajectory_id", ref.rever_judge_content_key),
}


@pytest.mark.parametrize("key", sorted(OTHER_KEYS))
def test_raw_row_keys_are_the_documented_formula(warehouse, key):
    view, column, content_key = OTHER_KEYS[key]
    raw = [(str(path), i, content_key(row)) for path, i, row in ref.iter_rows(warehouse.raw_dir, key, None)]
    expected = Counter((Path(path).name, i, k) for (path, i, _), k in zip(raw, ref.row_keys(key, raw)))
    found = Counter((r["source_file"], r["source_row"], r[column])
                    for r in warehouse.rows(f"select source_file, source_row, {column} from staging.{view}"))
    assert found == expected
    if key == "rever_judge":  # its planted duplicate trajectories exercise the occurrence part
        assert len({c for _, _, c in raw}) < len(raw)
