"""Smoke version of the benchmark (``make bench``) at a tiny scale: the same harness
(benchmarks.run) runs end to end, and its honesty check finds the reference implementation
(benchmarks.reference) and the peer (benchmarks.peer: one DuckDB SQL script plus a VADER pool)
equal to the marts, and the writing step copies every mart as it is. Times are recorded, never
asserted.

Also: the check does fail when the reference's or the peer's outputs and the marts differ, the
targets are computed from the run's own steps (target 2 as the median of the paired runs' ratios,
target 11 from every fresh build, as in a --build-only run), DuckDB's memory_limit is passed only
when one is set, the reference's rules behave as the marts' docs
state on hand-made rows, and the peer's SQL agrees with the reference on hand-made CodeUltraFeedback and
ReVeR rows (the stale variable, string order, quarantine; verdict shapes and broken verdicts).

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

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchmarks import peer
from benchmarks import reference as ref
from benchmarks.run import (PEER_CHECKS, Measurement, beside, compare, duckdb_args, duckdb_env, format_target, growth,
                            memory_limit_in_effect, run_bench, scale1_baseline, summarize, summarize_builds,
                            tree_rss_bytes)
from preftools.inputs.contract import DATASETS_BY_KEY

SMOKE_SCALE = 0.005


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> dict:
    """One run of the harness at SMOKE_SCALE, one paired run (the pairing and its median are
    tested on hand-made steps below; no low-memory build, no rebuild)."""
    base = tmp_path_factory.mktemp("bench")
    return run_bench(seed=42, scale=SMOKE_SCALE, cache_dir=base / "cache", results_dir=base / "results",
                     low_memory_build=False, verbose=False, same_work=True, repeat=1)


@pytest.mark.slow
def test_reference_equals_marts(bench):
    failed = [c for c in bench["checks"] if not c["ok"]]
    assert not failed, json.dumps(failed, indent=1)
    names = {c["check"].split(":")[0] for c in bench["checks"]}
    assert {"ultrafeedback_curated", "ultrafeedback_completion_scores", "code_ultrafeedback_pairs",
            "code_ultrafeedback_pairs_published_logic", "rever_pairs", "rever_trajectories"} <= names
    # the checks compared something: the reference produced rows for every dataset
    assert all(c["output_rows"] > 0 for c in bench["checks"]), bench["checks"]


@pytest.mark.slow
def test_peer_equals_marts(bench):
    """The peer's outputs pass the reference's checks, its alternates are the warehouse's draws and
    its VADER scores are the warehouse's, critique by critique and completion by completion."""
    failed = [c for c in bench["peer_checks"] if not c["ok"]]
    assert not failed, json.dumps(failed, indent=1)
    assert [c["check"] for c in bench["peer_checks"]] == [name for name, _, _ in PEER_CHECKS]
    assert all(c["output_rows"] > 0 for c in bench["peer_checks"]), bench["peer_checks"]
    by_name = {c["check"]: c for c in bench["peer_checks"]}
    completions = by_name["ultrafeedback_completion_scores: ratings and average_rating per completion"]
    assert by_name["ultrafeedback_completion_scores: critique_sentiment per completion"]["output_rows"] == \
        completions["output_rows"]
    assert bench["checks_ok"]


@pytest.mark.slow
def test_report_is_complete(bench):
    saved = json.loads(Path(bench["results_file"]).read_text())
    assert Path(bench["results_file"]).name == f"scale{SMOKE_SCALE}.json"
    assert saved["machine"]["nproc"] >= 1 and saved["machine"]["memory_total_bytes"] > 0
    assert saved["duckdb"]["threads"] and saved["repeat"] == 1
    # no memory_limit is passed unless DUCKDB_MEMORY_LIMIT is set; the one in effect is recorded
    assert saved["duckdb"]["memory_limit"] == (os.environ.get("DUCKDB_MEMORY_LIMIT") or None)
    assert saved["duckdb"]["memory_limit_in_effect_bytes"] > 0
    assert saved["duckdb"]["memory_limit_in_effect"] in saved["duckdb"]["memory_limit_text"]
    assert saved["versions"]["duckdb"] and saved["versions"]["dbt-core"]
    assert saved["raw_bytes"] > 0
    assert set(saved["steps"]) == {"floor", "build", "reference_whole_rows", "peer_sql", "peer_vader", "peer",
                                   "peer_write", "writing_peer", "sentiment_alone", "same_work"}
    for key, step in saved["steps"].items():
        assert step["returncode"] == 0, (key, step["log"])
        assert step["wall_seconds"] > 0 and step["cpu_seconds"] > 0, key
        assert step["peak_rss_bytes"] > 10 * 1024**2, key  # the /proc sampler saw the process
    details = saved["steps"]["build"]["details"]
    assert details["slowest_models"] and details["node_statuses"].get("success", 0) > 0
    # the peer: two processes, times added; every output written
    steps = saved["steps"]
    assert steps["peer"]["wall_seconds"] == pytest.approx(
        steps["peer_sql"]["wall_seconds"] + steps["peer_vader"]["wall_seconds"], abs=0.01)
    assert steps["peer"]["cpu_seconds"] == pytest.approx(
        steps["peer_sql"]["cpu_seconds"] + steps["peer_vader"]["cpu_seconds"], abs=0.01)
    assert set(steps["peer_sql"]["details"]["rows"]) >= set(peer.OUTPUTS)
    assert all(n > 0 for n in steps["peer_sql"]["details"]["rows"].values())
    assert steps["peer_vader"]["details"]["workers"] == os.cpu_count()
    assert steps["peer_vader"]["details"]["rows"][peer.SENTIMENT_OUTPUT] > 0
    # the writing peer: the peer, then the writing step, times added
    for attr in ("wall_seconds", "cpu_seconds"):
        assert steps["writing_peer"][attr] == pytest.approx(
            steps["peer_sql"][attr] + steps["peer_vader"][attr] + steps["peer_write"][attr], abs=0.01)
    # the targets: 1-4, 7 and 11 measured in this run, 5, 6 and 8 not (no rebuild, no make test, no
    # build with the eval sets here), 9 only its peak RSS (no build with near duplicates off), 10 not
    # (no build with pii_scan false, no exports)
    targets = saved["summary"]["targets"]
    assert sorted({t["target"] for t in targets}) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
    assert all(t["figure"] is None for t in targets if t["target"] in (8, 10))
    assert [t["figure"] is None for t in targets if t["target"] == 9] == [True, True, False]
    # what the near-duplicate detection found, counted from the build's warehouse
    found = saved["summary"]["near_duplicates"]
    assert found["prompt_set_candidates"] >= found["prompt_set_candidates_compared"] >= 0
    assert found["near_duplicate_prompts"] > 0

    def figure(number: int, end: str = "") -> float | None:
        (target,) = [t for t in targets if t["target"] == number and t["what"].endswith(end)]
        return target["figure"]

    def writing_peer(attr: str) -> float:
        return steps["peer_sql"][attr] + steps["peer_vader"][attr] + steps["peer_write"][attr]

    assert figure(1) == 0  # no check of the peer's or the reference's outputs differs
    assert figure(2, "/ peer, wall") == pytest.approx(
        steps["build"]["wall_seconds"] / steps["peer"]["wall_seconds"], rel=1e-3)
    assert figure(2, "/ peer, CPU") == pytest.approx(
        steps["build"]["cpu_seconds"] / steps["peer"]["cpu_seconds"], rel=1e-3)
    assert figure(3, "/ peer, wall") == pytest.approx(
        steps["same_work"]["wall_seconds"] / steps["peer"]["wall_seconds"], rel=1e-3)
    assert figure(2, "/ writing peer, wall") == pytest.approx(
        steps["build"]["wall_seconds"] / writing_peer("wall_seconds"), rel=1e-3)
    assert figure(2, "/ writing peer, CPU") == pytest.approx(
        steps["build"]["cpu_seconds"] / writing_peer("cpu_seconds"), rel=1e-3)
    assert figure(3, "/ writing peer, wall") == pytest.approx(
        steps["same_work"]["wall_seconds"] / writing_peer("wall_seconds"), rel=1e-3)
    # target 4: the sentiment model run alone, after its table was dropped (every critique scored)
    alone = steps["sentiment_alone"]["details"]
    assert set(alone["node_statuses"]) == {"success"}
    assert set(alone["model_seconds"]) == {"int_ultrafeedback__critique_sentiment_scores"}
    sentiment = alone["model_seconds"]["int_ultrafeedback__critique_sentiment_scores"]
    assert figure(4) == pytest.approx(sentiment / steps["peer_vader"]["wall_seconds"], rel=1e-3)
    assert figure(5) is None and figure(6) is None
    assert figure(11) == 0 and saved["summary"]["all_builds_ok"]
    assert [b["run"] for b in saved["summary"]["builds"]] == [1]
    assert [r["run"] for r in saved["summary"]["paired_runs"]] == [1]
    assert saved["summary"]["build_over_writing_peer"] == figure(2, "/ writing peer, wall")
    assert figure(7) == pytest.approx(max(steps[k]["peak_rss_bytes"] for k in ("build", "sentiment_alone", "same_work"))
                                      / 1024**3,
                                      abs=1e-3)
    # the same-work step built the reference's marts and nothing downstream of them only
    assert saved["steps"]["same_work"]["details"]["node_statuses"] == {"success": saved["steps"]["same_work"]
                                                                      ["details"]["node_statuses"]["success"]}
    # (preference_pairs is a parent: it computes the integrity flags the training tables carry)
    built = saved["steps"]["same_work"]["details"]["model_seconds"]
    assert "rever_pairs" in built and "preference_pairs" in built and "training_mixture" not in built


@pytest.mark.slow
def test_writing_step_copies_every_mart(bench):
    """The writing step's file holds the warehouse's marts (the tables of schema main), each with
    the mart's columns and rows, stored as the warehouse stores them (its storage version, text
    columns in ZSTD)."""
    write = bench["steps"]["peer_write"]["details"]
    warehouse = bench["steps"]["build"]["details"]["warehouse"]

    def storage_version(path: str) -> str:
        with duckdb.connect(path, read_only=True) as con:
            return con.execute("select tags['storage_version'] from duckdb_databases()"
                               " where database_name = current_database()").fetchone()[0]

    def tables(path: str) -> dict[str, tuple[int, list]]:
        with duckdb.connect(path, read_only=True) as con:
            names = [r[0] for r in con.execute("select table_name from duckdb_tables()"
                                               " where schema_name = 'main' order by table_name").fetchall()]
            return {name: (con.execute(f'select count(*) from main."{name}"').fetchone()[0],
                           con.execute(f'select column_name, data_type from duckdb_columns()'
                                       f" where schema_name = 'main' and table_name = '{name}'"
                                       f" order by column_index").fetchall())
                    for name in names}

    marts = tables(warehouse)
    written = tables(write["output"])
    assert len(marts) >= 10 and "ultrafeedback_curated" in marts
    assert written == marts
    assert write["tables"] == {name: rows for name, (rows, _) in marts.items()}
    assert write["bytes"] == Path(write["output"]).stat().st_size > 0
    with duckdb.connect(write["output"], read_only=True) as con:
        used = dict(con.execute(
            "select segment_type, list(distinct compression) from pragma_storage_info('main.ultrafeedback_curated')"
            " group by segment_type").fetchall())
    assert used["VARCHAR"] == ["ZSTD"], used
    assert storage_version(write["output"]) == storage_version(warehouse) is not None


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
    assert (picks["only_in_outputs"], picks["only_in_warehouse"]) == (1, 1)
    corrected = result["code_ultrafeedback_pairs: corrected pairs"]
    assert (corrected["only_in_outputs"], corrected["only_in_warehouse"]) == (0, 1)
    assert not result["rever_pairs: chosen/rejected scores and kept per id"]["ok"]
    assert not result["code_ultrafeedback_pairs_published_logic: the script's pairs, in its order"]["ok"]
    untouched = [c for name, c in result.items() if name.startswith(("rever_trajectories", "ultrafeedback_completion"))]
    assert untouched and all(c["ok"] for c in untouched)


def _tamper_peer(src: Path, dst: Path) -> tuple[str, int]:
    """A copy of the peer's outputs with one prompt's best-rated alternate moved to another
    completion and one critique's sentiment changed; returns that critique's md5 and how many
    completions carry it."""
    shutil.copytree(src, dst)
    prompts = pq.read_table(dst / "uf_prompts.parquet").to_pylist()
    row = next(r for r in prompts if r["random_for_best_rated_index"] is not None)
    row["random_for_best_rated_index"] = row["random_for_best_rated_index"] + 1  # the same prompt, another index
    pq.write_table(pa.Table.from_pylist(prompts), dst / "uf_prompts.parquet")
    scores = pq.read_table(dst / "uf_critique_sentiment.parquet").to_pylist()
    row = next(r for r in scores if r["critique_sentiment"] is not None)
    row["critique_sentiment"] = -row["critique_sentiment"] if row["critique_sentiment"] else 0.5
    pq.write_table(pa.Table.from_pylist(scores), dst / "uf_critique_sentiment.parquet")
    completions = pq.read_table(dst / "uf_completions.parquet", columns=["critique_md5"]).column(0).to_pylist()
    return row["critique_md5"], completions.count(row["critique_md5"])


@pytest.mark.slow
def test_peer_check_detects_differences(bench, tmp_path):
    """The peer's check fails on one wrong alternate and one wrong sentiment, and only there."""
    build = Path(bench["steps"]["build"]["details"]["warehouse"])
    src = Path(bench["steps"]["peer"]["details"]["output"])
    md5, n_completions = _tamper_peer(src, tmp_path / "peer")
    result = {c["check"]: c for c in compare(build, tmp_path / "peer", PEER_CHECKS)}
    alternates = result["ultrafeedback_curated: the random alternates drawn (same seeded hash)"]
    assert (alternates["only_in_outputs"], alternates["only_in_warehouse"]) == (1, 1)
    per_critique = result["int_ultrafeedback__critique_sentiment_scores: VADER compound per distinct critique"]
    assert (per_critique["only_in_outputs"], per_critique["only_in_warehouse"]) == (1, 1)
    assert per_critique["examples_only_in_outputs"][0][0] == md5
    per_completion = result["ultrafeedback_completion_scores: critique_sentiment per completion"]
    assert n_completions >= 1
    assert (per_completion["only_in_outputs"], per_completion["only_in_warehouse"]) == (n_completions, n_completions)
    failed = {name for name, c in result.items() if not c["ok"]}
    assert failed == {alternates["check"], per_critique["check"], per_completion["check"]}


def test_growth_is_against_the_scale1_result_of_the_seed(tmp_path):
    """Information at another scale, no limit: the median fresh build of the run over the median
    fresh build of the scale-1.0 result (scale1.0.json) when it is of the same seed and all its
    fresh builds succeeded; no other file is a baseline."""
    def build(wall, rc=0, peak=1000):
        return {"wall_seconds": wall, "cpu_seconds": wall * 2, "peak_rss_bytes": peak, "returncode": rc}

    def result(name, seed, scale, *walls, rc=0):
        steps = {"build": build(walls[0], rc), **{f"build_run{k}": build(w) for k, w in enumerate(walls[1:], 2)}}
        (tmp_path / name).write_text(json.dumps({"seed": seed, "scale": scale, "generated_at": "2026-01-01T00:00:00",
                                                 "steps": steps, "versions": {"git_commit": "c"}}))
    assert scale1_baseline(tmp_path, 42) is None  # no scale-1.0 result yet
    result("scale0.1.json", 42, 0.1, 5.0)  # another scale
    result("2026-01-01-scale1.0.json", 42, 1.0, 20.0)  # not the scale's results file
    assert scale1_baseline(tmp_path, 42) is None
    result("scale1.0.json", 7, 1.0, 50.0)
    assert scale1_baseline(tmp_path, 42) is None  # another seed
    result("scale1.0.json", 42, 1.0, 10.0, 50.0, 60.0, rc=1)
    assert scale1_baseline(tmp_path, 42) is None  # one of its builds failed
    result("scale1.0.json", 42, 1.0, 40.0, 60.0, 50.0)  # three runs: the median build takes 50 s
    baseline = scale1_baseline(tmp_path, 42)
    assert baseline["file"] == str(tmp_path / "scale1.0.json") and baseline["runs"] == 3
    assert (baseline["wall_seconds"], baseline["cpu_seconds"]) == (50.0, 100.0)
    result("scale1.0.json", 42, 1.0, 50.0)  # a result of one run: its build
    assert scale1_baseline(tmp_path, 42)["wall_seconds"] == 50.0

    summary = {"targets": []}
    growth(summary, {"build": build(220.0, peak=3000), "build_run2": build(180.0, peak=2000),
                     "build_run3": build(200.0, peak=4000), "floor": build(1.0)}, 4.0, baseline)
    assert summary["growth"]["median_build"] == {"wall_seconds": 200.0, "cpu_seconds": 400.0, "peak_rss_bytes": 3000}
    assert summary["growth"]["wall_over_scale1"] == 4.0 and summary["growth"]["peak_rss_over_scale1"] == 3.0
    assert "met" not in summary["growth"]  # information: nothing is limited
    failed = {"targets": []}
    growth(failed, {"build": build(200.0), "build_run2": build(10.0, rc=1)}, 4.0, baseline)
    assert failed == {"targets": []}  # a failed build's time is not a figure
    unscaled = {"targets": []}
    growth(unscaled, {"build": build(1.0)}, 1.0, baseline)
    assert unscaled == {"targets": []}


def _step(name: str, wall: float, cpu: float, rc: int = 0, peak: int = 1024**3, **details) -> Measurement:
    return Measurement(name=name, command=[name], returncode=rc, wall_seconds=wall, cpu_seconds=cpu,
                       peak_rss_bytes=peak, max_rss_single_bytes=peak, load_average_before=[0.0], log="",
                       details=details)


def test_targets_from_the_steps_of_one_run():
    """Each target's figure is the ratio (or the figure) of this run's steps; a step that was
    skipped or failed leaves its target not measured, hence not met."""
    steps = {
        "floor": _step("floor", 1.0, 2.0),
        "build": _step("build", 30.0, 60.0, peak=int(1.5 * 1024**3), duckdb_memory_limit="1GB",
                       model_seconds={"int_ultrafeedback__critique_sentiment_scores": 16.0}),
        "peer_sql": _step("peer sql", 5.0, 8.0),
        "peer_vader": _step("peer vader", 10.0, 20.0),
        "peer": _step("peer", 15.0, 28.0),
        "peer_write": _step("peer write", 5.0, 4.0),
        "writing_peer": _step("writing peer", 20.0, 32.0),
        "build_unchanged": _step("rebuild", 12.0, 10.0),
        # target 4 takes the model's time alone, not its time in the build beside other models
        "sentiment_alone": _step("sentiment alone", 13.0, 20.0,
                                 model_seconds={"int_ultrafeedback__critique_sentiment_scores": 11.0}),
        "same_work": _step("same work", 21.0, 30.0, peak=int(4.5 * 1024**3)),
        "make_test": _step("make test", 290.0, 500.0),
        "build_eval_sets": _step("build with the eval sets", 33.0, 72.0, peak=int(1.8 * 1024**3)),
        "build_no_near_duplicates": _step("build, near duplicates off", 25.0, 50.0),
        "build_no_pii_scan": _step("build, pii_scan false", 28.0, 52.0),
        "export": _step("export", 11.0, 12.0),
        "export_keep_secrets": _step("export --keep-secrets", 10.0, 10.0),
    }
    checks = [{"check": "a", "ok": True}, {"check": "b", "ok": True}]
    peer_checks = [{"check": "a", "ok": True}, {"check": "c", "ok": False}]
    targets = summarize(steps, checks=checks, peer_checks=peer_checks)["targets"]
    by = {(t["target"], t["what"].split(" / ")[-1]): t for t in targets}
    assert len(by) == len(targets)  # the key names each entry once
    (checked,) = [t for t in targets if t["target"] == 1]
    assert checked["figure"] == 1 and not checked["met"]  # one check differs, limit 0
    assert format_target(checked).startswith("target 1: 1 checks (<= 0 checks) not met")
    assert [t for t in summarize(steps, checks=checks, peer_checks=peer_checks[:1])["targets"]
            if t["target"] == 1][0]["met"]
    assert by[(2, "peer, wall")]["figure"] == 2.0 and by[(2, "peer, wall")]["met"]  # 30 / 15, limit 2.0
    assert by[(2, "peer, CPU")]["figure"] == pytest.approx(60 / 28, abs=1e-4) and not by[(2, "peer, CPU")]["met"]
    assert by[(3, "peer, wall")]["figure"] == 1.4 and by[(3, "peer, wall")]["met"]  # 21 / 15, limit 1.5
    # against the writing peer (the peer + writing the public tables: 20 s wall, 32 s CPU)
    assert by[(2, "writing peer, wall")]["figure"] == 1.5 and by[(2, "writing peer, wall")]["met"]  # 30 / 20
    assert by[(2, "writing peer, CPU")]["figure"] == 1.875 and by[(2, "writing peer, CPU")]["met"]  # 60 / 32
    assert by[(3, "writing peer, wall")]["figure"] == 1.05 and by[(3, "writing peer, wall")]["met"]  # 21 / 20
    assert by[(4, "the peer's VADER part, wall")]["figure"] == 1.1 and by[(4, "the peer's VADER part, wall")]["met"]
    (rebuild,) = [t for t in targets if t["target"] == 5]
    assert rebuild["figure"] == 12.0 and not rebuild["met"]  # 12 s, limit 10 s
    (suite,) = [t for t in targets if t["target"] == 6]
    assert suite["figure"] == 290.0 and suite["met"]  # 290 s, limit 300 s
    (rss,) = [t for t in targets if t["target"] == 7]
    assert rss["figure"] == 4.5 and not rss["met"]  # the largest dbt step, same_work; limit 4 GiB
    assert format_target(by[(2, "peer, wall")]).startswith("target 2: 2.00x (<= 2.00x, aim 1.50x) met")
    assert format_target(by[(2, "writing peer, wall")]).startswith("target 2: 1.50x (<= 2.00x, aim 1.50x) met")
    assert format_target(rebuild).startswith("target 5: 12.00 s (<= 10.00 s) not met")
    # target 8: the build with the example eval sets over the build without them, and its peak RSS
    assert by[(8, "without, wall")]["figure"] == 1.1 and by[(8, "without, wall")]["met"]  # 33 / 30, limit 1.15
    assert by[(8, "without, CPU")]["figure"] == 1.2 and not by[(8, "without, CPU")]["met"]  # 72 / 60
    (eval_rss,) = [t for t in targets if t["target"] == 8 and t["unit"] == "GiB"]
    assert eval_rss["figure"] == 1.8 and eval_rss["met"]  # limit 4 GiB
    # target 9: the default build over the build with near duplicates off, and the default build's peak RSS
    assert by[(9, "with near_duplicates.enabled false, wall")]["figure"] == 1.2  # 30 / 25, limit 1.25
    assert by[(9, "with near_duplicates.enabled false, wall")]["met"]
    assert by[(9, "with near_duplicates.enabled false, CPU")]["figure"] == 1.2  # 60 / 50
    (near_rss,) = [t for t in targets if t["target"] == 9 and t["unit"] == "GiB"]
    assert near_rss["figure"] == 1.5 and near_rss["met"]  # limit 4 GiB
    # target 10: the default build over the build with pii_scan false, the export over --keep-secrets
    assert by[(10, "with pii_scan false, wall")]["figure"] == pytest.approx(30 / 28, abs=1e-4)  # limit 1.10
    assert by[(10, "with pii_scan false, wall")]["met"]
    assert by[(10, "with pii_scan false, CPU")]["figure"] == pytest.approx(60 / 52, abs=1e-4)
    assert not by[(10, "with pii_scan false, CPU")]["met"]
    assert by[(10, "with --keep-secrets, wall")]["figure"] == 1.1 and by[(10, "with --keep-secrets, wall")]["met"]
    assert by[(10, "with --keep-secrets, CPU")]["figure"] == 1.2 and by[(10, "with --keep-secrets, CPU")]["met"]

    # the writing step failed: the figures over the writing peer are not measured, the others are
    failed_write = {**steps, "peer_write": _step("peer write", 5.0, 4.0, rc=1),
                    "writing_peer": _step("writing peer", 20.0, 32.0, rc=1)}
    unmeasured = {t["what"] for t in summarize(failed_write, checks=checks, peer_checks=peer_checks)["targets"]
                  if t["figure"] is None}
    assert unmeasured == {t["what"] for t in targets if t["what"].endswith(("writing peer, wall", "writing peer, CPU"))}
    assert len(unmeasured) == 3

    steps["peer_vader"] = _step("peer vader", 10.0, 20.0, rc=1)
    steps["peer"] = _step("peer", 15.0, 28.0, rc=1)
    steps["writing_peer"] = _step("writing peer", 20.0, 32.0, rc=1)  # a failed peer fails the writing peer
    del steps["build_unchanged"]
    steps["sentiment_alone"] = _step("sentiment alone", 13.0, 20.0, rc=1)
    steps["make_test"] = _step("make test", 290.0, 500.0, rc=2)  # fast, but not green
    targets = summarize(steps, checks=checks, peer_checks=peer_checks[:1])["targets"]
    unmeasured = [t for t in targets if t["figure"] is None]
    # 1: the peer failed, so its checks say nothing; 7 too: a dbt step (the sentiment model
    # alone) failed, so its peak RSS is not a figure
    assert {t["target"] for t in unmeasured} == {1, 2, 3, 4, 5, 6, 7} and not any(t["met"] for t in unmeasured)
    assert "not measured" in format_target(unmeasured[0])


def _paired_steps(runs: list[tuple[float, float, float, float, float, float]]) -> dict[str, Measurement]:
    """Steps of paired runs, one per (build wall, build CPU, peer wall, peer CPU, writing step wall,
    writing step CPU): the first run's steps by their plain names, run k's ending in _run<k>."""
    steps = {}
    for run, (bw, bc, pw, pc, ww, wc) in enumerate(runs, 1):
        end = "" if run == 1 else f"_run{run}"
        steps["build" + end] = _step("build", bw, bc)
        steps["peer" + end] = _step("peer", pw, pc)
        steps["peer_write" + end] = _step("peer write", ww, wc)
        steps["writing_peer" + end] = _step("writing peer", pw + ww, pc + wc)
    return steps


def test_target_2_is_the_median_of_the_paired_runs_ratios():
    """Target 2: each paired run's build over its own peer and writing peer, then the median of
    those ratios (not the ratio of the median times); every pair must have run."""
    steps = _paired_steps([
        # build, peer, writing step (wall, CPU): build / peer 2.0 wall, 2.0 CPU; / writing peer 1.5, 1.5
        (30.0, 60.0, 15.0, 30.0, 5.0, 10.0),
        # build / peer 4.0, 2.2; / writing peer 1.6, 1.5
        (40.0, 66.0, 10.0, 30.0, 15.0, 14.0),
        # build / peer 1.2, 1.8; / writing peer 1.1, 1.4
        (33.0, 63.0, 27.5, 35.0, 2.5, 10.0),
    ])
    summary = summarize(steps)
    by = {t["what"].split(" / ")[-1]: t for t in summary["targets"] if t["target"] == 2}
    assert by["peer, wall"]["figure"] == 2.0  # median of 2.0, 4.0, 1.2 (the median times give 33 / 15 = 2.2)
    assert by["peer, CPU"]["figure"] == 2.0  # median of 2.0, 2.2, 1.8
    assert by["writing peer, wall"]["figure"] == 1.5  # median of 1.5, 1.6, 1.1 (33 / 25 = 1.32 of the medians)
    assert by["writing peer, CPU"]["figure"] == 1.5  # median of 1.5, 1.5, 1.4
    assert all("median of 3 paired runs" in t["what"] for t in by.values())
    assert summary["build_over_peer"] == 2.0 and summary["build_over_writing_peer_cpu"] == 1.5
    # each run's own figures are in the summary
    rows = summary["paired_runs"]
    assert [r["run"] for r in rows] == [1, 2, 3]
    assert (rows[1]["build_wall_seconds"], rows[1]["peer_wall_seconds"], rows[1]["writing_peer_wall_seconds"]) == \
        (40.0, 10.0, 25.0)
    assert (rows[1]["build_over_peer"], rows[1]["build_over_peer_cpu"]) == (4.0, 2.2)
    assert (rows[2]["build_over_writing_peer"], rows[2]["build_over_writing_peer_cpu"]) == (1.1, 1.4)
    # an even number of runs: the mean of the two middle ratios
    two = summarize({k: m for k, m in steps.items() if not k.endswith("_run3")})
    assert [t["figure"] for t in two["targets"] if t["target"] == 2] == [3.0, 2.1, 1.55, 1.5]
    # one run's writing step failed: the ratios over the writing peer are not measured, over the peer they are
    steps["writing_peer_run2"] = _step("writing peer", 25.0, 44.0, rc=1)
    failed = {t["what"].split(" / ")[-1]: t["figure"] for t in summarize(steps)["targets"] if t["target"] == 2}
    assert failed == {"peer, wall": 2.0, "peer, CPU": 2.0, "writing peer, wall": None, "writing peer, CPU": None}


def test_every_fresh_build_counts_in_targets_7_and_11():
    """Target 11 counts the fresh builds that failed (limit 0); target 7's peak RSS is the largest
    of every dbt step, each paired run's build among them."""
    steps = _paired_steps([(30.0, 60.0, 15.0, 30.0, 5.0, 10.0), (40.0, 66.0, 10.0, 30.0, 15.0, 14.0)])
    steps["build_run2"] = _step("build", 40.0, 66.0, peak=int(4.5 * 1024**3))
    targets = {t["target"]: t for t in summarize(steps)["targets"] if t["target"] in (7, 11)}
    assert targets[7]["figure"] == 4.5 and not targets[7]["met"]
    assert targets[11]["figure"] == 0 and targets[11]["met"] and "of 2 runs" in targets[11]["what"]
    steps["build_run2"] = _step("build", 40.0, 66.0, rc=1)
    summary = summarize(steps)
    (eleven,) = [t for t in summary["targets"] if t["target"] == 11]
    assert eleven["figure"] == 1 and not eleven["met"] and not summary["all_builds_ok"]


def test_build_only_summary_lists_each_run():
    """--build-only: each fresh build (ok, wall, CPU, peak RSS), whether all succeeded, and
    target 11 (how many failed, limit 0) naming the memory_limit in effect."""
    steps = {"build": _step("dbt build", 200.0, 390.0, peak=int(3.5 * 1024**3)),
             "build_run2": _step("dbt build, run 2", 210.0, 400.0, peak=int(3.75 * 1024**3)),
             "build_run3": _step("dbt build, run 3", 190.0, 380.0, peak=int(3.25 * 1024**3))}
    summary = summarize_builds(steps, "18.8 GiB (DuckDB's default, 80% of RAM)")
    assert summary["builds"] == [
        {"run": 1, "ok": True, "wall_seconds": 200.0, "cpu_seconds": 390.0, "peak_rss_bytes": int(3.5 * 1024**3)},
        {"run": 2, "ok": True, "wall_seconds": 210.0, "cpu_seconds": 400.0, "peak_rss_bytes": int(3.75 * 1024**3)},
        {"run": 3, "ok": True, "wall_seconds": 190.0, "cpu_seconds": 380.0, "peak_rss_bytes": int(3.25 * 1024**3)}]
    assert summary["all_builds_ok"]
    (target,) = summary["targets"]
    assert (target["target"], target["figure"], target["met"]) == (11, 0, True)
    assert format_target(target).startswith("target 11: 0 runs (<= 0 runs) met")
    assert "of 3 runs" in target["what"] and "18.8 GiB (DuckDB's default, 80% of RAM)" in target["what"]
    steps["build_run3"] = _step("dbt build, run 3", 30.0, 20.0, rc=2)
    failed = summarize_builds(steps, "4GB")
    assert not failed["all_builds_ok"] and [b["ok"] for b in failed["builds"]] == [True, True, False]
    assert (failed["targets"][0]["figure"], failed["targets"][0]["met"]) == (1, False)


def test_memory_limit_is_passed_only_when_set():
    """No memory_limit given: none reaches the children (DUCKDB_MEMORY_LIMIT removed, no
    --memory-limit, no memory_limit in the peer's DuckDB config), so DuckDB's default applies; the
    report names the limit in effect as DuckDB reports it."""
    env = duckdb_env({"DUCKDB_MEMORY_LIMIT": "1GB", "HOME": "/h"}, "2", None)
    assert env == {"HOME": "/h", "DUCKDB_THREADS": "2"}
    assert duckdb_env({"HOME": "/h"}, "2", "3GB") == {"HOME": "/h", "DUCKDB_THREADS": "2", "DUCKDB_MEMORY_LIMIT": "3GB"}
    assert duckdb_args("2", None) == ["--threads", "2"]
    assert duckdb_args("2", "3GB") == ["--threads", "2", "--memory-limit", "3GB"]
    assert peer.duckdb_config(2, None) == {"threads": 2}
    assert peer.duckdb_config(2, "3GB") == {"threads": 2, "memory_limit": "3GB"}
    with duckdb.connect() as con:
        default = con.execute("select current_setting('memory_limit')").fetchone()[0]
    assert memory_limit_in_effect(None)["memory_limit_in_effect"] == default
    assert memory_limit_in_effect(None)["memory_limit_text"] == f"{default} (DuckDB's default, 80% of RAM)"
    given = memory_limit_in_effect("2GB")
    assert given["memory_limit"] == "2GB" and given["memory_limit_text"].endswith("(2GB)")
    # DuckDB writes 2GB as "1.8 GiB": the bytes are as exact as that figure
    assert given["memory_limit_in_effect_bytes"] == pytest.approx(2 * 1000**3, rel=0.05)


def test_beside_counts_the_nodes_that_ran_during_a_node():
    """Target 4's evidence that the sentiment step is not idle beside the SQL models: the other
    nodes' execute intervals clipped to its own."""
    def node(uid: str, start: float, end: float) -> dict:
        def at(s: float) -> str:
            return f"2026-12-02T08:00:{s:06.3f}Z"
        return {"unique_id": uid, "timing": [{"name": "compile", "started_at": at(0), "completed_at": at(0)},
                                             {"name": "execute", "started_at": at(start), "completed_at": at(end)}]}

    nodes = [node("model.p.vader", 10, 30), node("model.p.a", 5, 12), node("model.p.b", 12, 20),
             node("test.p.c", 20, 40), node("model.p.d", 31, 35), node("model.p.e", 0, 4)]
    assert beside(nodes, "model.p.vader") == {"seconds": 20.0, "nodes": 3, "node_seconds": 20.0}  # 2 + 8 + 10
    assert beside(nodes, "model.p.absent") is None


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
    from preftools.devtools.processes import proc_table

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


# ----------------------------------------------------------------------------- the peer's SQL on hand-made rows

def _write_raw(raw_dir: Path, key: str, rows: list[dict]) -> None:
    dataset = DATASETS_BY_KEY[key]
    path = dataset.data_dir(raw_dir) / "train-00000-of-00001.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=dataset.schema), path)


def _peer_script(raw_dir: Path) -> duckdb.DuckDBPyConnection:
    """peer.sql over the datasets written under ``raw_dir``, the others empty."""
    con = duckdb.connect()
    for view, key in peer.RAW_VIEWS.items():
        dataset = DATASETS_BY_KEY[key]
        if dataset.data_files(raw_dir):
            con.execute(f"create view {view} as {peer.raw_relation(raw_dir, key)}")
        else:
            con.register(f"{view}_empty", dataset.schema.empty_table())
            con.execute(f"create view {view} as select *, '' as source_path, '' as source_file, 0::bigint as source_row from {view}_empty")
    peer.execute_script(con, 42)
    return con


def _coseal(ratings: list[tuple[str, str | None] | None] | None, models: list[str | None] | None,
            preference: str | None = "style") -> dict:
    """A coseal row: responses by `models` (None: the list is NULL; a None model: a NULL entry),
    annotations (model, rating) in the given order (None: NULL list; a None item: a NULL entry)."""
    responses = None if models is None else [None if m is None else {"model": m, "response": f"r-{m}"} for m in models]
    annotations = None if ratings is None else [
        None if a is None else {"model": a[0], "rating": a[1], "rationale": ""} for a in ratings]
    return {"instruction": "q", "preference": preference, "models": None, "responses": responses,
            "annotations": annotations}


def test_peer_sql_code_ultrafeedback_equals_the_reference_on_hand_made_rows(tmp_path):
    """The script's stale `rating` across rows, its string order, the rows it raises on, and the
    corrected pairs: the peer's SQL gives what the reference's line-for-line Python gives."""
    rows = [
        _coseal([], ["a", "b"]),  # NameError: `rating` never assigned
        _coseal([("a", "5"), ("b", "1"), ("c", "N/A")], ["a", "b", "c"]),  # last rating N/A: dropped
        _coseal([], ["a", "b"]),  # stale N/A: silently dropped
        _coseal([("a", "N/A"), ("b", "5"), ("c", "10"), ("d", "2")], ["a", "b", "c", "d"]),  # string order
        _coseal([], ["a", "b"]),  # stale "2": KeyError
        _coseal([("a", "5")], ["a", "b"]),  # b has no annotation: KeyError
        _coseal([("a", "5"), ("b", "4")], ["a", "b"], preference=None),  # TypeError, `rating` still "4"
        _coseal([("a", "3"), ("b", "4"), ("a", "1")], ["a", "b", "a"]),  # repeated model: first position, last rating
        _coseal([("a", "2"), None, ("b", "3")], ["a", "b"]),  # NULL annotation entry: TypeError after "2"
        _coseal([("a", None), ("b", "3")], ["a", "b"]),  # None against "3": TypeError
        _coseal([("a", None), ("b", None)], ["a", "b"]),  # None == None: a tie, skipped
        _coseal([("a", "4")], None),  # NULL responses: TypeError
        _coseal([("a", "4"), ("b", "2")], ["a", None, "b"]),  # NULL response entry: TypeError
        _coseal([("a", "1"), ("b", "5")], ["a", "b"]),  # a plain row
    ]
    _write_raw(tmp_path, "code_ultrafeedback", rows)
    published, quarantine, corrected, n_responses = ref.code_ultrafeedback(tmp_path)
    con = _peer_script(tmp_path)

    def peer_rows(sql: str) -> list[tuple]:
        return con.execute(sql).fetchall()

    assert peer_rows("select prompt_id, chosen_model, rejected_model, chosen_score, rejected_score"
                     " from code_published order by pair_order") == \
        [(p["prompt_id"], p["chosen_model"], p["rejected_model"], p["chosen_score"], p["rejected_score"])
         for p in published]
    assert sorted(r[0] for r in peer_rows("select prompt_id from code_quarantine")) == \
        sorted(q["prompt_id"] for q in quarantine)
    assert len(quarantine) == 8 and len(published) == 8  # the cases above did what they say
    assert sorted(peer_rows("select prompt_id, chosen_response_index, rejected_response_index, chosen_rating,"
                            " rejected_rating, score_margin from code_corrected")) == \
        sorted((c["prompt_id"], c["chosen_response_index"], c["rejected_response_index"], c["chosen_rating"],
                c["rejected_rating"], c["score_margin"]) for c in corrected)
    assert peer_rows("select count(*) from cuf_responses")[0][0] == n_responses


def test_peer_sql_rever_scores_equal_the_reference_on_hand_made_rows(tmp_path):
    """Verdict shapes, the last <judge> block, broken verdicts, and the pairs' `kept`."""
    as_list = {"scores": [{"rubric_id": f"r{k + 1}", "score": s, "explanation": ""}
                          for k, s in enumerate([1, 0, 80, 61])]}
    as_map = {e["rubric_id"]: {"score": e["score"], "explanation": ""} for e in as_list["scores"]}
    draft = {"r1": {"score": 0}, "r2": {"score": 0}, "r3": {"score": 0}, "r4": {"score": 0}}
    ok = {"r1": {"score": 1}, "r2": {"score": 0}, "r3": {"score": 50}, "r4": {"score": 50}}
    verdicts = [
        ("p1", "chosen", f"<judge>{json.dumps(draft)}</judge> then <judge>\n{json.dumps(as_list)}\n</judge>", CRITERIA),
        ("p1", "rejected", f"<judge>{json.dumps(ok)}</judge>", CRITERIA),
        ("p2", "chosen", f"<judge>{json.dumps(as_map)}</judge>", CRITERIA),
        ("p2", "rejected", f"<judge>{json.dumps(as_map)}</judge>", CRITERIA),  # a tie: not kept
        ("p3", "chosen", f"<judge>{json.dumps({'r1': {'score': 1}, 'r2': {'score': 1}})}</judge>", CRITERIA[:2]),
        ("p3", "rejected", "no block at all", CRITERIA),
        ("p4", "chosen", "<judge>{\"r1\": {\"score\": 1},}</judge>", CRITERIA),  # trailing comma
        ("p4", "rejected", f"<judge>{json.dumps({k: v for k, v in ok.items() if k != 'r2'})}</judge>", CRITERIA),
        ("p5", "chosen", f"<judge>{json.dumps({**ok, 'r1': {'score': 2}})}</judge>", CRITERIA),
        ("p5", "rejected", f"<judge>{json.dumps({**ok, 'r3': {'score': 140}})}</judge>", CRITERIA),
        ("p6", "chosen", f"<judge>{json.dumps(ok)}</judge>", CRITERIA[:3] + ["Kind."]),  # unknown kind
        ("p6", "rejected", f"<judge>{json.dumps({**ok, 'r4': {'score': '50'}})}</judge>", CRITERIA),  # a string
        ("p7", "chosen", f"<judge>{json.dumps(ok)}</judge>", CRITERIA),
        ("p7", "chosen", "no block: the first (p7, chosen) row counts", CRITERIA),
        ("p7", "rejected", f"<judge>{json.dumps({**ok, 'r1': {'score': 0}})}</judge>", CRITERIA),
    ]
    judge = [{"id": pid, "source": "s", "candidate": side, "tools": None,
              "messages": _trajectory(text, criteria)} for pid, side, text, criteria in verdicts]
    _write_raw(tmp_path, "rever_judge", judge)
    _write_raw(tmp_path, "rever_rubric", [{"id": pid, "source": "s", "messages": []} for pid in ("p1", "p8")])
    trajectories, pairs = ref.rever(tmp_path)
    con = _peer_script(tmp_path)
    assert con.execute("select source_row, round(response_score, 9) from rever_trajectories order by source_row"
                       ).fetchall() == \
        [(t["source_row"], None if t["response_score"] is None else round(t["response_score"], 9))
         for t in trajectories]
    assert sum(t["response_score"] is not None for t in trajectories) == 7
    assert sorted(con.execute("select id, round(chosen_score, 9), round(rejected_score, 9), kept from rever_pairs"
                              ).fetchall()) == \
        sorted((p["id"], None if p["chosen_score"] is None else round(p["chosen_score"], 9),
                None if p["rejected_score"] is None else round(p["rejected_score"], 9), p["kept"]) for p in pairs)
    assert {p["id"]: p["kept"] for p in pairs} == {"p1": True, "p2": False, "p3": None, "p4": None, "p5": None,
                                                   "p6": None, "p7": True, "p8": None}
