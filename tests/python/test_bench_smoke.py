"""Smoke version of the benchmark (``make bench``, issue 7) at a tiny scale: the same harness
(benchmarks.run) runs end to end, and its honesty check finds the reference implementation
(benchmarks.reference) equal to the marts. Times are recorded, never asserted.

Also: the check does fail when the reference and the marts differ, and the reference's own
rules behave as issues 3-5 state on hand-made rows.

Run: python -m pytest tests/python/test_bench_smoke.py -x -q
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchmarks import reference as ref
from benchmarks.run import compare, growth, run_bench, scale1_baseline, tree_rss_bytes

SMOKE_SCALE = 0.005


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> dict:
    """One run of the harness at SMOKE_SCALE (no 2 GB build: it is the same build)."""
    base = tmp_path_factory.mktemp("bench")
    return run_bench(seed=42, scale=SMOKE_SCALE, cache_dir=base / "cache", results_dir=base / "results",
                     low_memory_build=False, verbose=False, same_work=True)


@pytest.mark.slow
def test_reference_equals_marts(bench):
    failed = [c for c in bench["checks"] if not c["ok"]]
    assert not failed, json.dumps(failed, indent=1)
    names = {c["check"].split(":")[0] for c in bench["checks"]}
    assert {"ultrafeedback_curated", "ultrafeedback_completion_scores", "code_ultrafeedback_pairs",
            "code_ultrafeedback_pairs_published_logic", "rever_pairs", "rever_trajectories"} <= names
    # the checks compared something: the reference produced rows for every dataset
    assert all(c["reference_rows"] > 0 for c in bench["checks"]), bench["checks"]


@pytest.mark.slow
def test_report_is_complete(bench):
    saved = json.loads(Path(bench["results_file"]).read_text())
    assert Path(bench["results_file"]).name.endswith(f"-scale{SMOKE_SCALE}.json")
    assert saved["machine"]["nproc"] >= 1 and saved["machine"]["memory_total_bytes"] > 0
    assert saved["duckdb"]["threads"] and saved["duckdb"]["memory_limit"]
    assert saved["versions"]["duckdb"] and saved["versions"]["dbt-core"]
    assert set(saved["steps"]) == {"floor", "build", "reference_whole_rows", "reference_projected", "same_work"}
    for key, step in saved["steps"].items():
        assert step["returncode"] == 0, (key, step["log"])
        assert step["wall_seconds"] > 0 and step["cpu_seconds"] > 0, key
        assert step["peak_rss_bytes"] > 10 * 1024**2, key  # the /proc sampler saw the process
    details = saved["steps"]["build"]["details"]
    assert details["slowest_models"] and details["node_statuses"].get("success", 0) > 0
    assert saved["summary"]["build_over_floor"] > 0
    assert set(saved["summary"]["targets"]) >= {
        "1. build <= 1.0x reference (whole rows)", "2. same work as the reference <= 0.33x reference",
        "3. build peak RSS (tree) <= 2.0 GiB", "4. warehouse file <= raw Parquet bytes"}
    # the same-work step built the reference's marts and nothing downstream of them only
    assert saved["steps"]["same_work"]["details"]["node_statuses"] == {"success": saved["steps"]["same_work"]
                                                                      ["details"]["node_statuses"]["success"]}
    assert "preference_pairs" not in saved["steps"]["same_work"]["details"]["model_seconds"]
    assert "rever_pairs" in saved["steps"]["same_work"]["details"]["model_seconds"]


def _tamper(src: Path, dst: Path) -> None:
    """A copy of the reference outputs with one wrong pick, one lost corrected pair, one flipped
    `kept` and one shifted published-logic pair."""
    shutil.copytree(src, dst)

    def edit(name, fn):
        rows = pq.read_table(dst / f"{name}.parquet").to_pylist()
        fn(rows)
        pq.write_table(pa.Table.from_pylist(rows), dst / f"{name}.parquet")

    def wrong_pick(rows):
        row = next(r for r in rows if (r["n_completions"] or 0) >= 2)
        row["best_rated_index"] = 1 - row["best_rated_index"] if row["best_rated_index"] < 2 else 0

    def flip_kept(rows):
        row = next(r for r in rows if r["kept"] is not None)
        row["kept"] = not row["kept"]

    def swap_order(rows):
        rows[0]["pair_order"], rows[1]["pair_order"] = rows[1]["pair_order"], rows[0]["pair_order"]

    edit("uf_prompts", wrong_pick)
    edit("code_corrected", lambda rows: rows.pop())
    edit("rever_pairs", flip_kept)
    edit("code_published", swap_order)


@pytest.mark.slow
def test_check_detects_differences(bench, tmp_path):
    build = bench["steps"]["build"]["details"]["warehouse"]
    src = Path(bench["steps"]["reference_whole_rows"]["details"]["output"])
    _tamper(src, tmp_path / "ref")
    result = {c["check"]: c for c in compare(Path(build), tmp_path / "ref")}
    picks = result["ultrafeedback_curated: best-rated and best-overall picks per prompt"]
    assert (picks["only_in_reference"], picks["only_in_warehouse"]) == (1, 1)
    corrected = result["code_ultrafeedback_pairs: corrected pairs"]
    assert (corrected["only_in_reference"], corrected["only_in_warehouse"]) == (0, 1)
    assert not result["rever_pairs: chosen/rejected scores and kept per id"]["ok"]
    assert not result["code_ultrafeedback_pairs_published_logic: the script's pairs, in its order"]["ok"]
    untouched = [c for name, c in result.items() if name.startswith(("rever_trajectories", "ultrafeedback_completion"))]
    assert untouched and all(c["ok"] for c in untouched)


def test_growth_is_against_the_newest_scale1_result_of_the_seed(tmp_path):
    """Target 6 of issue 14: a SCALE=4 run is compared with the newest successful scale-1.0
    build of the same seed; other seeds, scales and failed builds are not baselines."""
    def result(name, seed, scale, at, wall, rc=0):
        build = {"wall_seconds": wall, "cpu_seconds": wall * 2, "peak_rss_bytes": 1000, "returncode": rc}
        (tmp_path / name).write_text(json.dumps({"seed": seed, "scale": scale, "generated_at": at,
                                                 "steps": {"build": build}, "versions": {"git_commit": "c"}}))
    result("2026-01-01-scale1.0.json", 42, 1.0, "2026-01-01T00:00:00", 100.0)
    result("2026-01-02-scale1.0.json", 42, 1.0, "2026-01-02T00:00:00", 50.0)
    result("2026-01-03-scale1.0.json", 42, 1.0, "2026-01-03T00:00:00", 10.0, rc=1)  # failed build
    result("2026-01-04-scale1.0-seed7.json", 7, 1.0, "2026-01-04T00:00:00", 20.0)  # other seed
    result("2026-01-05-scale0.1.json", 42, 0.1, "2026-01-05T00:00:00", 5.0)  # other scale
    baseline = scale1_baseline(tmp_path, 42)
    assert baseline["wall_seconds"] == 50.0 and baseline["file"].endswith("2026-01-02-scale1.0.json")

    summary = {"targets": {}}
    growth(summary, {"wall_seconds": 200.0, "cpu_seconds": 400.0, "peak_rss_bytes": 3000, "returncode": 0},
           4.0, baseline)
    assert summary["growth"]["wall_over_scale1"] == 4.0 and summary["growth"]["peak_rss_over_scale1"] == 3.0
    assert summary["targets"]["6. scale 4.0: wall <= 4.5x the scale-1.0 build"] is True
    slow = {"targets": {}}
    growth(slow, {"wall_seconds": 230.0, "cpu_seconds": 1.0, "peak_rss_bytes": 3 * 1024**3, "returncode": 0},
           4.0, baseline)
    assert slow["targets"]["6. scale 4.0: wall <= 4.5x the scale-1.0 build"] is False
    assert slow["targets"]["6. scale 4.0: peak RSS (tree) <= 2.5 GiB"] is False
    unscaled = {"targets": {}}
    growth(unscaled, {"wall_seconds": 1.0, "cpu_seconds": 1.0, "peak_rss_bytes": 1, "returncode": 0}, 1.0, baseline)
    assert unscaled == {"targets": {}}


def test_tree_rss_counts_descendants():
    """The RSS sampler sums a process and its descendants: a shell whose child holds 200 MB."""
    code = "x = b'x' * (200 * 1024**2); import time; time.sleep(10)"
    shell = subprocess.Popen(["sh", "-c", f'"{sys.executable}" -c "{code}"; true'])
    try:
        deadline, seen = time.time() + 8, 0
        while time.time() < deadline and seen < 200 * 1024**2:
            time.sleep(0.1)
            seen = tree_rss_bytes(shell.pid)
        assert seen >= 200 * 1024**2  # the shell alone is a few MB: the grandchild is counted
    finally:
        for pid in _descendants(shell.pid):
            os.kill(pid, signal.SIGKILL)
        shell.kill()
        shell.wait()


def _descendants(root: int) -> list[int]:
    from preftools.processes import proc_table

    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in proc_table().items():
        children.setdefault(ppid, []).append(pid)
    out, stack = [], [root]
    while stack:
        for pid in children.get(stack.pop(), ()):
            out.append(pid)
            stack.append(pid)
    return out


# ----------------------------------------------------------------------------- the reference's rules

def test_rating_parse():
    assert [ref.parse_rating(v) for v in ["1", "5", "N/A", "0", "10", "", None, "3.0", " 4", "five"]] == \
        [1, 5, None, None, None, None, None, None, None, None]


def test_best_index_null_lowest_first_on_ties():
    assert ref.best_index([None, 2.0, 4.5, 4.5]) == 2
    assert ref.best_index([None, None]) == 0
    assert ref.best_index([None, 1.0]) == 1
    assert ref.best_index([]) is None


def test_alternate_candidates():
    assert ref.alternate_candidates([4.0, 3.0, None, 4.0], 0) == [1, 2]  # strictly lower, None lowest
    assert ref.alternate_candidates([3.0, 3.0, 3.0], 0) == [1, 2]  # none lower: any other
    assert ref.alternate_candidates([None, None], 0) == [1]
    assert ref.alternate_candidates([5.0], 0) == []


def _example(ratings: dict[str, str], order: list[str]) -> dict:
    models = list(ratings)
    return {"instruction": "q", "preference": "style",
            "responses": [{"model": m, "response": f"r-{m}"} for m in models],
            "annotations": [{"model": m, "rating": ratings[m], "rationale": ""} for m in order]}


def test_published_script_stale_variable_and_string_order():
    # the last annotation is N/A: the whole prompt yields nothing (and raises nothing)
    pairs, rating, error = ref.published_script_row(_example({"a": "5", "b": "1", "c": "N/A"}, ["a", "b", "c"]), "p")
    assert (pairs, rating, error) == ([], "N/A", None)
    # an N/A elsewhere is kept, and wins as chosen ("N/A" > "5"); "10" < "2" as strings
    pairs, rating, error = ref.published_script_row(
        _example({"a": "N/A", "b": "5", "c": "10", "d": "2"}, ["a", "b", "c", "d"]), "p")
    got = [(p["chosen_model"], p["rejected_model"]) for p in pairs]
    assert got == [("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("d", "c")]
    assert (rating, error) == ("2", None)
    # a response model without annotation: KeyError, nothing appended
    assert ref.published_script_row(_example({"a": "5", "b": "1"}, ["a"]), "p")[0::2] == ([], "KeyError")


def test_published_script_stale_variable_spans_rows():
    no_annotations = {**_example({"a": "5", "b": "1"}, []), "annotations": []}
    # after a row ending in "N/A" the row is silently dropped; otherwise the script raises
    assert ref.published_script_row(no_annotations, "p", "N/A") == ([], "N/A", None)
    assert ref.published_script_row(no_annotations, "p", "3") == ([], "3", "KeyError")
    assert ref.published_script_row(no_annotations, "p")[2] == "NameError"  # first row of the file


def _trajectory(verdict_text: str, criteria: list[str]) -> list[dict]:
    task = {"instruction": "i", "response": "r",
            "rubrics": [{"rubric_id": f"r{k + 1}", "criterion": c} for k, c in enumerate(criteria)]}
    return [{"role": "system", "content": "judge"}, {"role": "user", "content": json.dumps(task)},
            {"role": "assistant", "content": "<think>x</think>"},
            {"role": "assistant", "content": verdict_text}]


CRITERIA = ["Says hello. [Hard Rule]", "Is short. [Hard Rule]", "Clear. [Principle]", "Kind. [Principle]"]


def test_response_score_list_and_map_shapes_and_last_block():
    as_list = {"scores": [{"rubric_id": "r1", "score": 1, "explanation": ""},
                          {"rubric_id": "r2", "score": 0, "explanation": ""},
                          {"rubric_id": "r3", "score": 80, "explanation": ""},
                          {"rubric_id": "r4", "score": 61, "explanation": ""}]}
    as_map = {e["rubric_id"]: {"score": e["score"], "explanation": ""} for e in as_list["scores"]}
    draft = {"r1": {"score": 0}, "r2": {"score": 0}, "r3": {"score": 0}, "r4": {"score": 0}}
    expected = 1 + (80 + 61) / 2 / 101
    for verdict in (as_list, as_map):
        text = f"<judge>{json.dumps(draft)}</judge> then <judge>\n{json.dumps(verdict)}\n</judge>"
        assert ref.response_score(_trajectory(text, CRITERIA))[0] == pytest.approx(expected)
    only_hard = {"r1": {"score": 1}, "r2": {"score": 1}}
    assert ref.response_score(_trajectory(f"<judge>{json.dumps(only_hard)}</judge>", CRITERIA[:2]))[0] == 2


def test_response_score_broken_verdicts_are_unscored():
    ok = {"r1": {"score": 1}, "r2": {"score": 0}, "r3": {"score": 50}, "r4": {"score": 50}}
    broken = [
        "no block at all",
        "<judge>{\"r1\": {\"score\": 1},}</judge>",  # malformed JSON
        f"<judge>{json.dumps({k: v for k, v in ok.items() if k != 'r2'})}</judge>",  # missing item
        f"<judge>{json.dumps({**ok, 'r1': {'score': 2}})}</judge>",  # hard rule out of range
        f"<judge>{json.dumps({**ok, 'r3': {'score': 140}})}</judge>",  # principle out of range
    ]
    for text in broken:
        assert ref.response_score(_trajectory(text, CRITERIA)) == (None, None, None), text
    unknown_kind = CRITERIA[:3] + ["Kind."]
    assert ref.response_score(_trajectory(f"<judge>{json.dumps(ok)}</judge>", unknown_kind))[0] is None
