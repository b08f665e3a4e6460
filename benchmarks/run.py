"""The full-scale benchmark (``make bench``): dbt build vs. its peer (one plain DuckDB SQL script
plus VADER on every core) and the writing peer (the peer plus writing the public tables) vs. the
Python scripts it replaces vs. the scan floor, on one generated dataset, with an honesty check that
the outputs are equal; and, with ``--build-only``, the default dbt build alone, run N times.

DuckDB's settings on every side (the builds, the floor, the peer's three parts, the exports):
``threads`` from ``--threads`` / DUCKDB_THREADS (default 2); ``memory_limit`` from
``--memory-limit`` / DUCKDB_MEMORY_LIMIT, and when neither is given none is passed at all, so
DuckDB's default applies (80% of the machine's memory), as in profiles.yml. The report records the
memory_limit in effect, as DuckDB reports it.

Steps, in one run:

1. the raw data: ``benchmarks/cache/seed<seed>-scale<scale>/``, generated once (cached);
2. the scan floor (``benchmarks.floor``): DuckDB reading every raw column the models use;
3. the paired runs, ``--repeat`` N of them (default 3), one after the other: ``dbt build`` end to
   end (parse, models, data and unit tests) into a fresh DuckDB file, then the peer
   (``benchmarks.peer``), two child processes whose times are added: the SQL script
   (``benchmarks/peer.sql``) and VADER over every distinct critique on a pool of one process per
   core; then the writing step (``benchmarks.peer write``): every public table of that build's
   warehouse (the marts) copied as it is into a fresh DuckDB file opened with profiles.yml's
   settings. The writing peer is the peer plus that step, their times added. Each pair gives the
   build's ratio to the peer and to the writing peer (wall and CPU); target 2 is the median ratio.
   The first run's steps are ``build``, ``peer_sql``, ``peer_vader``, ``peer``, ``peer_write``,
   ``writing_peer``, and its warehouse (``work/build``) is the one every later step reads; run
   k >= 2 has the same steps named ``<step>_run<k>``, and its two DuckDB files are deleted once
   measured;
4. the reference implementation (``benchmarks.reference``): plain Python over pyarrow rows,
   whole rows (as ``for example in load_dataset(...)`` decodes them, the seed scripts' way),
   and on request only the columns used (``--reference both``);
5. the honesty check, once, on the first run: the reference's and the peer's outputs compared
   with the marts (counts, picks, alternates, both CodeUltraFeedback pair sets, ReVeR scores and
   ``kept``; for the peer also the alternates drawn and the sentiment of every critique), by one
   set of checks;
6. ``dbt build`` again into the same warehouse, raw data unchanged (what a rebuild reuses);
7. the sentiment model alone, its table dropped from that warehouse;
8. ``dbt build`` without tests of only the marts the reference computes, with their parents and
   the seeds they read, into a fresh file (the same work as the peer);
9. ``dbt build`` again at ``--low-memory-limit``, only when one is given;
10. ``dbt build`` with the seven eval sets of ``examples/eval_sets.yml`` registered (their
    generated stand-ins, real sizes) into a fresh file: what decontamination adds to the build
    (``--skip-eval-sets`` leaves it out);
11. ``dbt build`` with ``near_duplicates: {enabled: false}`` into a fresh file: what the
    near-duplicate detection adds to the build, with the number of LSH candidates and of verified
    near pairs in the default build (``--skip-near-duplicates`` leaves it out);
12. ``dbt build`` with ``pii_scan: false`` into a fresh file: what the scan for secrets and
    personal data adds to the build, with what the default build found;
13. ``preftools export`` of the default build twice, redacting secrets (the default) and with
    ``--keep-secrets`` (nothing scanned or replaced): what the redaction adds to the export
    (``--skip-pii`` leaves 12 and 13 out);
14. ``make test`` on a clean clone of the repo's HEAD (``--skip-make-test`` leaves it out): its
    own venv and pinned install, then the whole suite.

``--build-only`` runs steps 1 and N fresh ``dbt build`` runs only (``build``, ``build_run2``, ...),
no peer and nothing else: what ``make bench`` runs at the larger scales (BENCH_SCALES).

Each step runs as a child process; its wall time, CPU time (user + system, from wait4) and
peak RSS of the whole process tree (/proc sampled every 50 ms) are recorded. Results are
printed as a table with the performance targets (1 the peer and the honesty check, 2 the build,
3 the same work, each over the peer and over the writing peer, 4 VADER, 5 the rebuild,
6 ``make test``, 7 peak RSS, 8 the build with the eval sets, 9 the near-duplicate detection, 10 the
scan for secrets and personal data in the build and the export, 11 every fresh build succeeded),
and written to ``benchmarks/results/scale<scale>.json``, replacing the last result of that scale.
At a scale other than 1.0 the summary also has the median fresh build's growth over the one in
``scale1.0.json`` (information, no limit).

Usage::

    python -m benchmarks.run                         # scale 1.0, seed 42, 3 paired runs
    python -m benchmarks.run --scale 4.0 --build-only  # 3 default dbt builds at scale 4.0
    python -m benchmarks.run --scale 0.01 --repeat 2 --skip-rebuild --skip-same-work --skip-make-test
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path

import duckdb
import yaml

from preftools.devtools.processes import tree_rss
from preftools.inputs.contract import DATASETS

REPO = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
DBT = str(Path(sys.executable).parent / "dbt")
SAMPLE_SECONDS = 0.05

# The performance targets (reported, not asserted; each ratio from steps of the same run).
# 1. the peer ran and its outputs, as the reference's, equal the marts: no check differs
TARGET_BUILD_OVER_PEER = 2.0  # 2. dbt build on an empty warehouse / writing peer (and / peer), wall and CPU, median of the paired runs
AIM_BUILD_OVER_PEER = 1.5
TARGET_SAME_WORK_OVER_PEER = 1.5  # 3. dbt run of the reference's marts + parents / writing peer (and / peer), wall
TARGET_SENTIMENT_OVER_PEER_VADER = 1.1  # 4. the VADER node, run alone / the peer's VADER part, wall
TARGET_REBUILD_SECONDS = 10.0  # 5. dbt build again on unchanged data, wall
TARGET_MAKE_TEST_SECONDS = 300.0  # 6. make test on a clean clone, wall, and green
TARGET_PEAK_RSS_BYTES = 4 * 1024**3  # 7. peak RSS (process tree) of the dbt steps at the run's settings
TARGET_EVAL_SETS_GROWTH = 1.15  # 8. dbt build with the example eval sets / without, wall (peak RSS as 7)
EVAL_SETS_VARS = REPO / "examples" / "eval_sets.yml"
TARGET_NEAR_DUPLICATES_GROWTH = 1.25  # 9. dbt build (near duplicates on, the default) / with them off, wall and CPU
TARGET_NEAR_DUPLICATES_PEAK_RSS_BYTES = 4 * 1024**3  # 9. peak RSS of the default build
NEAR_DUPLICATES_OFF = "{near_duplicates: {enabled: false}}"
TARGET_PII_BUILD_GROWTH = 1.10  # 10. dbt build (the scan on, the default) / with pii_scan false, wall and CPU
TARGET_PII_EXPORT_GROWTH = 1.20  # 10. preftools export (secrets redacted, the default) / with --keep-secrets, wall and CPU
PII_SCAN_OFF = "{pii_scan: false}"
TARGET_FAILED_BUILDS = 0  # 11. fresh dbt builds (the paired runs' or --build-only's) that failed
SENTIMENT_MODEL = "int_ultrafeedback__critique_sentiment_scores"
DEFAULT_REPEAT = 3  # paired runs (build, then writing peer), or builds with --build-only
# the marts the reference computes (benchmarks/reference.py), built with their parents by the
# same-work step: `dbt run --select +<mart> ...`
REFERENCE_MARTS = ("ultrafeedback_curated", "ultrafeedback_completion_scores", "code_ultrafeedback_responses",
                   "code_ultrafeedback_pairs_published_logic", "code_ultrafeedback_published_logic_quarantine",
                   "code_ultrafeedback_pairs", "rever_trajectories", "rever_pairs")


# ----------------------------------------------------------------------------- measuring

def tree_rss_bytes(root: int) -> int:
    """Resident set size of ``root`` and all its descendants, summed."""
    return tree_rss(root)


@dataclass
class Measurement:
    name: str
    command: list[str]
    returncode: int
    wall_seconds: float
    cpu_seconds: float  # user + system of the process and its waited-for descendants
    peak_rss_bytes: int  # the whole tree, sampled every 50 ms
    max_rss_single_bytes: int  # the biggest single process (wait4 ru_maxrss)
    load_average_before: list[float]
    log: str
    details: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def measure(name: str, command: list[str], env: dict, log_path: Path) -> Measurement:
    """Run ``command`` from the repo root, stdout+stderr to ``log_path``; time it and sample
    the RSS of its process tree until it exits."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    load_before = [round(x, 2) for x in os.getloadavg()]
    peak = 0
    with open(log_path, "w") as log:
        start = time.perf_counter()
        proc = subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
        done = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not done.is_set():
                peak = max(peak, tree_rss_bytes(proc.pid))
                done.wait(SAMPLE_SECONDS)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        done.set()
        sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
    return Measurement(
        name=name, command=command, returncode=proc.returncode, wall_seconds=round(wall, 3),
        cpu_seconds=round(usage.ru_utime + usage.ru_stime, 3), peak_rss_bytes=peak,
        max_rss_single_bytes=usage.ru_maxrss * 1024, load_average_before=load_before, log=str(log_path),
    )


def last_json_line(path: str) -> dict:
    """The JSON object a child printed last (benchmarks.floor / benchmarks.reference)."""
    for line in reversed(Path(path).read_text().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    return {}


# ----------------------------------------------------------------------------- steps

def ensure_raw(cache_dir: Path, seed: int, scale: float) -> Path:
    """The generated raw data for (seed, scale), generated only if missing (atomic rename)."""
    out = cache_dir / f"seed{seed}-scale{scale}"
    if (out / "_generator_manifest.json").exists():
        return out
    from preftools.generate import generate

    tmp = cache_dir / f".seed{seed}-scale{scale}.partial"
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"generating seed {seed} scale {scale} into {out} ...", flush=True)
    generate(tmp, seed=seed, scale=scale, progress=sys.stderr.isatty())
    tmp.rename(out)
    return out


# ----------------------------------------------------------------------------- DuckDB's settings

# the units DuckDB writes a memory_limit in ("18.8 GiB", "3.7 GiB", "512.0 MiB")
SIZE_UNITS = {"bytes": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4,
              "KB": 1000, "MB": 1000**2, "GB": 1000**3, "TB": 1000**4}


def size_bytes(text: str) -> int | None:
    """Bytes of a size as DuckDB writes it ("18.8 GiB": to a tenth of its unit); None when it is
    not of that form."""
    number, _, unit = text.strip().partition(" ")
    try:
        return int(float(number) * SIZE_UNITS[unit])
    except (ValueError, KeyError):
        return None


def memory_limit_in_effect(memory_limit: str | None) -> dict:
    """The memory_limit a DuckDB connection has on this machine when ``memory_limit`` is given,
    else DuckDB's default (80% of the machine's memory), as DuckDB reports it: the setting given
    (None for the default), DuckDB's figure, its bytes, and a line naming both."""
    config = {"memory_limit": memory_limit} if memory_limit else {}
    with duckdb.connect(":memory:", config=config) as con:
        value = con.execute("select current_setting('memory_limit')").fetchone()[0]
    given = memory_limit or "DuckDB's default, 80% of RAM"
    return {"memory_limit": memory_limit, "memory_limit_in_effect": value,
            "memory_limit_in_effect_bytes": size_bytes(value), "memory_limit_text": f"{value} ({given})"}


def duckdb_env(env: dict, threads: str, memory_limit: str | None) -> dict:
    """``env`` with DUCKDB_THREADS, and DUCKDB_MEMORY_LIMIT when a memory_limit is given; without
    one DUCKDB_MEMORY_LIMIT is removed, so the child's DuckDB runs at its default."""
    env = {k: v for k, v in env.items() if k != "DUCKDB_MEMORY_LIMIT"}
    env["DUCKDB_THREADS"] = str(threads)
    if memory_limit:
        env["DUCKDB_MEMORY_LIMIT"] = memory_limit
    return env


def duckdb_args(threads: str, memory_limit: str | None) -> list[str]:
    """The command-line options of benchmarks.floor and benchmarks.peer for the same settings."""
    return ["--threads", str(threads), *(["--memory-limit", memory_limit] if memory_limit else [])]


# ----------------------------------------------------------------------------- dbt steps

def dbt_env(raw_dir: Path, work: Path, threads: str, memory_limit: str | None) -> dict:
    env = dict(os.environ)
    env.update(
        DBT_PROFILES_DIR=str(REPO), DBT_TARGET_PATH=str(work / "target"), DBT_LOG_PATH=str(work / "logs"),
        DUCKDB_PATH=str(work / "warehouse.duckdb"), RAW_DATA_DIR=str(raw_dir), EXPORT_DIR=str(work / "exports"),
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
    )
    return duckdb_env(env, threads, memory_limit)


def dbt_build(name: str, raw_dir: Path, work: Path, threads: str, memory_limit: str | None,
              fresh: bool = True, args: tuple[str, ...] = ("build",)) -> Measurement:
    """``dbt build`` of the whole project into a fresh DuckDB file under ``work`` (``fresh=False``:
    again into the warehouse an earlier build left there, on the same raw data); ``args``: another
    dbt command line (the same-work step's ``run --select ...``)."""
    if fresh:
        shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    m = measure(name, [DBT, *args], dbt_env(raw_dir, work, threads, memory_limit), work / "dbt_build.log")
    db = work / "warehouse.duckdb"
    m.details = {"duckdb_threads": threads, "duckdb_memory_limit": memory_limit, "warehouse": str(db),
                 "warehouse_bytes": db.stat().st_size if db.exists() else None,
                 **run_results_summary(work / "target" / "run_results.json")}
    return m


def near_duplicate_counts(warehouse: Path) -> dict | None:
    """What the near-duplicate detection found in a built warehouse: LSH candidates (pairs of
    distinct prompt shingle sets) and those whose sizes allowed the exact comparison, the verified
    near prompt pairs, the related pairs of pairs (by relation), and the pairs each flag takes out."""
    if not warehouse.exists():
        return None
    with duckdb.connect(str(warehouse), read_only=True) as con:
        one = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
        return {
            "prompt_set_candidates": one("select count(*) from intermediate.int_near_duplicates__prompt_candidates"),
            "prompt_set_candidates_compared": one(
                "select count(*) from intermediate.int_near_duplicates__prompt_candidates where jaccard is not null"),
            "near_duplicate_prompts": one("select count(*) from main.near_duplicate_prompts"),
            "relations": dict(con.execute("select relation, count(*) from main.near_duplicate_pairs group by all order by 1").fetchall()),
            "flagged_pairs": dict(con.execute(
                "select flag, count(*) from (select unnest(integrity_flags) as flag from main.preference_pairs) "
                "where flag in ('near_duplicate_pair', 'label_conflict', 'near_identical_responses') group by all order by 1").fetchall()),
        }


def pii_counts(warehouse: Path) -> dict | None:
    """What the scan for secrets and personal data found in a built warehouse: findings (matches)
    and pairs per kind, and the pairs flagged contains_secret."""
    if not warehouse.exists():
        return None
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return {
            "findings": dict(con.execute(
                "select kind, sum(n_findings)::bigint from main.pii_summary group by all order by 1").fetchall()),
            "pairs": dict(con.execute(
                "select kind, sum(n_pairs)::bigint from main.pii_summary group by all order by 1").fetchall()),
            "flagged_contains_secret": con.execute(
                "select count(*) from main.preference_pairs where list_contains(integrity_flags, 'contains_secret')"
            ).fetchone()[0],
        }


def export(name: str, warehouse: Path, out: Path, threads: str, memory_limit: str | None,
           args: tuple[str, ...] = ()) -> Measurement:
    """``preftools export`` of every mart of ``warehouse`` into a fresh folder ``out``."""
    shutil.rmtree(out, ignore_errors=True)
    cmd = [PYTHON, "-m", "preftools", "export", "--duckdb-path", str(warehouse), "--export-dir", str(out),
           "--no-progress", *args]
    m = measure(name, cmd, duckdb_env(dict(os.environ), threads, memory_limit), out.with_suffix(".log"))
    manifest = out / "manifest.json"
    m.details = {"export_bytes": sum(f.stat().st_size for f in out.rglob("*") if f.is_file()) if out.exists() else None,
                 "redaction": json.loads(manifest.read_text()).get("redaction") if manifest.exists() else None}
    return m


def sentiment_alone(raw_dir: Path, work: Path, threads: str, memory_limit: str | None) -> Measurement:
    """The sentiment model on its own, as the peer's VADER pool runs: every critique scored (its
    table dropped from the warehouse an earlier build left in ``work``, so nothing is reused), no
    other model beside it. In a full build it shares the cores with the SQL models that run at the
    same time, so its time there is not the step's own."""
    with duckdb.connect(str(work / "warehouse.duckdb")) as con:
        for schema, table in con.execute(
                "select schema_name, table_name from duckdb_tables() where table_name = ?", [SENTIMENT_MODEL]).fetchall():
            con.execute(f'drop table "{schema}"."{table}"')
    return dbt_build("sentiment model alone", raw_dir, work, threads, memory_limit, fresh=False,
                     args=("run", "--select", SENTIMENT_MODEL))


# settings of the shell or of `make bench` itself that the clean clone's `make test` must not inherit
MAKE_TEST_ENV_DROPPED = ("PYTHON", "VENV", "VIRTUAL_ENV", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "RAW_DATA_DIR",
                         "EXPORT_DIR", "LINT_PATHS")


def make_test(work: Path) -> Measurement:
    """``make test`` on a clean clone of the repo's HEAD (target 6), as on a fresh machine: the
    clone's own venv and pinned install, then the whole suite; no DBT_*/DUCKDB_* setting of this
    shell. Uncommitted changes are not in the clone (the report's versions count them)."""
    clone = work / "make_test"
    shutil.rmtree(clone, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    commit = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    env = {k: v for k, v in os.environ.items()
           if k not in MAKE_TEST_ENV_DROPPED and not k.startswith(("DBT_", "DUCKDB_"))}
    step = measure("make test, clean clone", ["make", "-C", str(clone), "test"], env, work / "make_test.log")
    # pytest's last line: "==== 505 passed, 5 skipped in 431.87s (0:07:11) ===="
    lines = [line for line in Path(step.log).read_text(errors="replace").splitlines()
             if line.startswith("=") and any(word in line for word in (" passed", " failed", " error"))]
    step.details = {"commit": commit, "pytest": lines[-1].strip(" =") if lines else None}
    shutil.rmtree(clone, ignore_errors=True)
    return step


def run_results_summary(path: Path, top: int = 3) -> dict:
    """Node counts by status, dbt's own elapsed time, model vs test time, the slowest models."""
    if not path.exists():
        return {"run_results": None}
    results = json.loads(path.read_text())
    nodes = results.get("results", [])
    statuses: dict[str, int] = {}
    seconds_by_type: dict[str, float] = {}
    for node in nodes:
        statuses[node["status"]] = statuses.get(node["status"], 0) + 1
        kind = node["unique_id"].split(".", 1)[0]
        seconds_by_type[kind] = seconds_by_type.get(kind, 0.0) + (node.get("execution_time") or 0.0)
    models = sorted((n for n in nodes if n["unique_id"].startswith("model.")),
                    key=lambda n: n.get("execution_time") or 0.0, reverse=True)
    not_ok = [{"node": n["unique_id"], "status": n["status"], "message": (n.get("message") or "")[:300]}
              for n in nodes if n["status"] not in ("success", "pass")]
    return {
        "dbt_elapsed_seconds": round(results.get("elapsed_time") or 0.0, 3),
        "node_statuses": statuses,
        "execution_seconds_by_type": {k: round(v, 3) for k, v in sorted(seconds_by_type.items())},
        "slowest_models": [{"model": n["unique_id"].split(".")[-1], "seconds": round(n["execution_time"], 3)}
                           for n in models[:top]],
        "model_seconds": {n["unique_id"].split(".")[-1]: round(n.get("execution_time") or 0.0, 3) for n in models},
        "beside_sentiment_model": beside(nodes, f"model.preference_warehouse.{SENTIMENT_MODEL}"),
        "not_ok": not_ok[:20],
    }


def beside(nodes: list[dict], unique_id: str) -> dict | None:
    """What ran while ``unique_id`` executed: how many other nodes executed within its execute
    interval, and for how many seconds in all (their execute intervals clipped to its own)."""
    def interval(node: dict) -> tuple[float, float] | None:
        for t in node.get("timing") or []:
            if t.get("name") == "execute" and t.get("started_at") and t.get("completed_at"):
                return (dt.datetime.fromisoformat(t["started_at"].replace("Z", "+00:00")).timestamp(),
                        dt.datetime.fromisoformat(t["completed_at"].replace("Z", "+00:00")).timestamp())
        return None

    intervals = {n["unique_id"]: interval(n) for n in nodes}
    own = intervals.pop(unique_id, None)
    if own is None:
        return None
    overlaps = [min(own[1], b) - max(own[0], a) for a, b in filter(None, intervals.values())]
    overlaps = [o for o in overlaps if o > 0]
    return {"seconds": round(own[1] - own[0], 3), "nodes": len(overlaps), "node_seconds": round(sum(overlaps), 3)}


def reference(name: str, raw_dir: Path, out: Path, seed: int, whole_rows: bool) -> Measurement:
    shutil.rmtree(out, ignore_errors=True)
    cmd = [PYTHON, "-m", "benchmarks.reference", "--raw-dir", str(raw_dir), "--out", str(out), "--seed", str(seed)]
    if whole_rows:
        cmd.append("--whole-rows")
    m = measure(name, cmd, dict(os.environ), out.parent / f"{name}.log")
    m.details = {"output": str(out), "whole_rows": whole_rows, **last_json_line(m.log)}
    return m


def floor(raw_dir: Path, work: Path, threads: str, memory_limit: str | None, repeats: int = 2) -> Measurement:
    """The scan floor, run ``repeats`` times (the first also warms the page cache); the fastest
    run is kept. Its time is the query time inside the process (no interpreter start-up)."""
    runs = []
    for i in range(repeats):
        cmd = [PYTHON, "-m", "benchmarks.floor", "--raw-dir", str(raw_dir), *duckdb_args(threads, memory_limit)]
        m = measure("scan floor", cmd, dict(os.environ), work / f"floor_{i}.log")
        m.details = last_json_line(m.log)
        if m.ok:
            m.details["process_wall_seconds"] = m.wall_seconds
            m.wall_seconds = m.details["seconds"]
        runs.append(m)
    ok = [m for m in runs if m.ok]
    best = min(ok, key=lambda m: m.wall_seconds) if ok else runs[-1]
    best.details["all_runs_seconds"] = [m.wall_seconds for m in runs]
    return best


def dbt_random_seed() -> int:
    """The warehouse's var random_seed (dbt_project.yml): the seed of the alternates' draw."""
    return int(yaml.safe_load((REPO / "dbt_project.yml").read_text())["vars"]["random_seed"])


def peer(raw_dir: Path, work: Path, threads: str, memory_limit: str | None, run: int = 1) -> dict[str, Measurement]:
    """The peer's two parts, each a child process, and their sum: {"peer_sql", "peer_vader",
    "peer"} (each key and name ending as ``suffix(run)`` says), the outputs in ``work/peer<suffix>``.
    Wall and CPU seconds of "peer" are the sums of the parts, its peak RSS the larger."""
    end = suffix(run)
    out = work / f"peer{end}"
    shutil.rmtree(out, ignore_errors=True)
    common = ["--raw-dir", str(raw_dir), "--out", str(out), *duckdb_args(threads, memory_limit)]
    parts = {}
    for key, name, args in (("peer_sql", "peer: SQL script", ["sql", "--random-seed", str(dbt_random_seed())]),
                            ("peer_vader", "peer: VADER pool", ["vader"])):
        m = measure(name + run_label(run), [PYTHON, "-m", "benchmarks.peer", *args, *common], dict(os.environ),
                    work / f"{key}{end}.log")
        m.details = {"output": str(out), **last_json_line(m.log)}
        parts[key + end] = m
    total = one_after_the_other("peer, total (SQL + VADER)" + run_label(run), parts)
    total.details = {"output": str(out), "parts": list(parts), "duckdb_threads": threads,
                     "duckdb_memory_limit": memory_limit,
                     "vader_workers": parts["peer_vader" + end].details.get("workers")}
    return {**parts, "peer" + end: total}


def writing_peer(peer_total: Measurement, warehouse: Path, work: Path, threads: str,
                 memory_limit: str | None, run: int = 1) -> dict[str, Measurement]:
    """The writing step (``benchmarks.peer write``: every mart of the built ``warehouse`` copied as
    it is into a fresh DuckDB file, opened with the warehouse's settings) and the writing peer, the
    peer and that step added: {"peer_write", "writing_peer"} (keys ending as ``suffix(run)`` says)."""
    end = suffix(run)
    out = work / f"peer_write{end}" / "marts.duckdb"
    cmd = [PYTHON, "-m", "benchmarks.peer", "write", "--warehouse", str(warehouse), "--out", str(out),
           *duckdb_args(threads, memory_limit)]
    write = measure("peer: writing the public tables" + run_label(run), cmd, dict(os.environ),
                    work / f"peer_write{end}.log")
    write.details = last_json_line(write.log)
    total = one_after_the_other("writing peer (peer + writing)" + run_label(run),
                                {"peer": peer_total, "peer_write": write})
    total.details = {"parts": ["peer" + end, "peer_write" + end]}
    return {"peer_write" + end: write, "writing_peer" + end: total}


# ----------------------------------------------------------------------------- repeated runs

def suffix(run: int) -> str:
    """How the steps of run ``run`` end: the first run's have their plain names (build, peer,
    writing_peer, ...), those of run k >= 2 end in ``_run<k>``."""
    return "" if run == 1 else f"_run{run}"


def run_label(run: int) -> str:
    """How the names of run ``run``'s steps end in the table: nothing for the first run."""
    return "" if run == 1 else f", run {run}"


def build_runs(steps: dict) -> list[int]:
    """The runs whose fresh build is in ``steps`` (a dict of Measurements or of their JSON):
    1 for ``build``, then k for each ``build_run<k>`` in a row."""
    runs: list[int] = []
    while f"build{suffix(len(runs) + 1)}" in steps:
        runs.append(len(runs) + 1)
    return runs


def remove_duckdb_file(path: Path) -> None:
    """A DuckDB file and its WAL, gone (a measured run's files the later steps do not read)."""
    for f in (path, path.with_name(path.name + ".wal")):
        f.unlink(missing_ok=True)


def fresh_build(raw_dir: Path, work: Path, threads: str, memory_limit: str | None, run: int) -> Measurement:
    """Run ``run``'s ``dbt build`` into a fresh ``work/build<suffix>``."""
    return dbt_build("dbt build" + run_label(run), raw_dir, work / f"build{suffix(run)}", threads, memory_limit)


def paired_run(raw_dir: Path, work: Path, threads: str, memory_limit: str | None, run: int,
               with_peer: bool, say) -> dict[str, Measurement]:
    """One paired run: a fresh ``dbt build``, then (``with_peer``) the peer's SQL and VADER parts
    and the writing step over that build's warehouse. From run 2 on, the run's two DuckDB files
    are deleted once measured (their logs and run_results stay)."""
    end = suffix(run)
    steps = {"build" + end: fresh_build(raw_dir, work, threads, memory_limit, run)}
    build = steps["build" + end]
    say(f"  dbt build: {build.wall_seconds:.1f} s, ok={build.ok}")
    if with_peer:
        steps.update(peer(raw_dir, work, threads, memory_limit, run))
        say(f"  peer: {steps['peer_sql' + end].wall_seconds:.1f} s + {steps['peer_vader' + end].wall_seconds:.1f} s, "
            f"ok={steps['peer' + end].ok}")
        if build.ok:
            steps.update(writing_peer(steps["peer" + end], Path(build.details["warehouse"]), work, threads,
                                      memory_limit, run))
            say(f"  writing the public tables: {steps['peer_write' + end].wall_seconds:.1f} s, "
                f"ok={steps['peer_write' + end].ok}")
    if run > 1:
        remove_duckdb_file(Path(build.details["warehouse"]))
        remove_duckdb_file(work / f"peer_write{end}" / "marts.duckdb")
    return steps


def one_after_the_other(name: str, parts: dict[str, Measurement]) -> Measurement:
    """Steps run one after the other as one: wall and CPU seconds added, peak RSS the larger,
    failed when one failed."""
    steps = list(parts.values())
    return Measurement(
        name=name, command=[word for m in steps for word in (*m.command, "&&")][:-1],
        returncode=next((m.returncode for m in steps if m.returncode), 0),
        wall_seconds=round(sum(m.wall_seconds for m in steps), 3),
        cpu_seconds=round(sum(m.cpu_seconds for m in steps), 3),
        peak_rss_bytes=max(m.peak_rss_bytes for m in steps),
        max_rss_single_bytes=max(m.max_rss_single_bytes for m in steps),
        load_average_before=steps[0].load_average_before, log=" ".join(m.log for m in steps))


# ----------------------------------------------------------------------------- honesty check

FLOAT_DIGITS = 9  # scores are compared rounded to 9 decimals (the two sides divide the same integers)

# Every check is (name, query on the outputs checked, query on the warehouse): the two multisets
# of rows must be equal. The outputs checked (the reference's or the peer's Parquet files, one per
# output, same names and columns) are views in schema `ref`, the warehouse is attached as `wh`.
CHECKS: list[tuple[str, str, str]] = [
    # run on the reference's and on the peer's outputs
    ("ultrafeedback_curated: rows", "select count(*) from ref.uf_prompts",
     "select count(*) from wh.main.ultrafeedback_curated"),
    ("ultrafeedback_completion_scores: rows", "select count(*) from ref.uf_completions",
     "select count(*) from wh.main.ultrafeedback_completion_scores"),
    ("ultrafeedback_completion_scores: ratings and average_rating per completion",
     f"""select source_file, source_row, completion_index, model, helpfulness_rating, honesty_rating,
                instruction_following_rating, truthfulness_rating, round(average_rating, {FLOAT_DIGITS})
         from ref.uf_completions""",
     f"""select source_file, source_row, completion_index, model, helpfulness_rating, honesty_rating,
                instruction_following_rating, truthfulness_rating, round(average_rating, {FLOAT_DIGITS})
         from wh.main.ultrafeedback_completion_scores"""),
    ("ultrafeedback_curated: best-rated and best-overall picks per prompt",
     f"""select source_file, source_row, prompt_id, n_completions, best_rated_index, best_rated_model,
                round(score_best_rated, {FLOAT_DIGITS}), best_overall_index, best_overall_model,
                round(score_best_overall, {FLOAT_DIGITS}), best_rated_index <> best_overall_index
         from ref.uf_prompts""",
     f"""select source_file, source_row, prompt_id, n_completions, best_rated_index, best_rated_model,
                round(score_best_rated, {FLOAT_DIGITS}), best_overall_index, best_overall_model,
                round(score_best_overall, {FLOAT_DIGITS}), best_rated_is_different_from_best_overall
         from wh.main.ultrafeedback_curated"""),
    ("code_ultrafeedback_responses: rows", "select code_responses from ref.counts",
     "select count(*) from wh.main.code_ultrafeedback_responses"),
    ("code_ultrafeedback_pairs_published_logic: the script's pairs, in its order",
     """select pair_order, prompt_id, preference, chosen_model, rejected_model, chosen_score, rejected_score
        from ref.code_published""",
     """select pair_order, prompt_id, preference, chosen_model, rejected_model, chosen_score, rejected_score
        from wh.main.code_ultrafeedback_pairs_published_logic"""),
    ("code_ultrafeedback_published_logic_quarantine: rows the script cannot process",
     "select prompt_id from ref.code_quarantine",
     "select prompt_id from wh.main.code_ultrafeedback_published_logic_quarantine"),
    ("code_ultrafeedback_pairs: corrected pairs",
     """select prompt_id, preference, chosen_response_index, rejected_response_index, chosen_model,
               rejected_model, chosen_rating, rejected_rating, score_margin
        from ref.code_corrected""",
     """select prompt_id, preference, chosen_response_index, rejected_response_index, chosen_model,
               rejected_model, chosen_rating, rejected_rating, score_margin
        from wh.main.code_ultrafeedback_pairs"""),
    ("rever_trajectories: response score per judge row",
     f"""select source_file, source_row, id, candidate, round(response_score, {FLOAT_DIGITS})
         from ref.rever_trajectories""",
     f"""select source_file, source_row, id, candidate, round(response_score, {FLOAT_DIGITS})
         from wh.main.rever_trajectories"""),
    ("rever_pairs: chosen/rejected scores and kept per id",
     f"""select id, round(chosen_score, {FLOAT_DIGITS}), round(rejected_score, {FLOAT_DIGITS}), kept
         from ref.rever_pairs""",
     f"""select id, round(chosen_score, {FLOAT_DIGITS}), round(rejected_score, {FLOAT_DIGITS}), kept
         from wh.main.rever_pairs"""),
]


# the reference draws its own alternates: only their eligibility (strictly lower score, else any
# other completion) is checked
ALTERNATES_ELIGIBLE = (
    "ultrafeedback_curated: each random alternate is an eligible completion",
    """select source_file, source_row, true, true from ref.uf_prompts""",
    """select m.source_file, m.source_row,
               case when len(r.random_for_best_rated_candidates) = 0 then m.random_for_best_rated_index is null
                    else coalesce(list_contains(r.random_for_best_rated_candidates, m.random_for_best_rated_index)
                                  and m.random_response_for_best_rated_model is not distinct from
                                      c.model, false) end,
               case when len(r.random_for_best_overall_candidates) = 0 then m.random_for_best_overall_index is null
                    else coalesce(list_contains(r.random_for_best_overall_candidates,
                                                m.random_for_best_overall_index), false) end
        from wh.main.ultrafeedback_curated as m
        inner join ref.uf_prompts as r using (source_file, source_row)
        left join ref.uf_completions as c
            on c.source_file = m.source_file and c.source_row = m.source_row
            and c.completion_index = m.random_for_best_rated_index"""
)

# the peer computes what the warehouse computes: the same seeded draw and the critiques' sentiment
PEER_ONLY_CHECKS: list[tuple[str, str, str]] = [
    ("ultrafeedback_curated: the random alternates drawn (same seeded hash)",
     f"""select source_file, source_row, random_for_best_rated_index, random_response_for_best_rated_model,
                round(score_random_response_for_best_rated, {FLOAT_DIGITS}), random_for_best_overall_index,
                random_response_for_best_overall_model, round(score_random_response_for_best_overall, {FLOAT_DIGITS})
         from ref.uf_prompts""",
     f"""select source_file, source_row, random_for_best_rated_index, random_response_for_best_rated_model,
                round(score_random_response_for_best_rated, {FLOAT_DIGITS}), random_for_best_overall_index,
                random_response_for_best_overall_model, round(score_random_response_for_best_overall, {FLOAT_DIGITS})
         from wh.main.ultrafeedback_curated"""),
    ("int_ultrafeedback__critique_sentiment_scores: VADER compound per distinct critique",
     f"select critique_md5, round(critique_sentiment, {FLOAT_DIGITS}) from ref.uf_critique_sentiment",
     f"""select critique_md5, round(critique_sentiment, {FLOAT_DIGITS})
         from wh.intermediate.int_ultrafeedback__critique_sentiment_scores"""),
    ("ultrafeedback_completion_scores: critique_sentiment per completion",
     f"""select c.source_file, c.source_row, c.completion_index, round(s.critique_sentiment, {FLOAT_DIGITS})
         from ref.uf_completions as c
         left join ref.uf_critique_sentiment as s on s.critique_md5 = c.critique_md5""",
     f"""select source_file, source_row, completion_index, round(critique_sentiment, {FLOAT_DIGITS})
         from wh.main.ultrafeedback_completion_scores"""),
]

REFERENCE_CHECKS = [*CHECKS, ALTERNATES_ELIGIBLE]
PEER_CHECKS = [*CHECKS, *PEER_ONLY_CHECKS]


def compare(warehouse: Path, outputs_dir: Path, checks: list[tuple[str, str, str]] = REFERENCE_CHECKS,
            examples: int = 3) -> list[dict]:
    """Run ``checks`` on the outputs in ``outputs_dir`` (the reference's or the peer's): rows only
    in the outputs, rows only in the warehouse (multiset differences), a few examples of each. A
    check passes when both are empty; a query that fails (a table or column missing) fails it."""
    con = duckdb.connect(":memory:")
    con.execute("set enable_progress_bar = false")
    con.execute(f"attach '{warehouse}' as wh (read_only)")
    con.execute("create schema ref")
    for path in sorted(outputs_dir.glob("*.parquet")):
        con.execute(f"create view ref.{path.stem} as select * from read_parquet('{path}')")
    summary_file = outputs_dir / "summary.json"
    summary = json.loads(summary_file.read_text()) if summary_file.exists() else {}
    con.execute("create table ref.counts as select ? as code_responses",
                [summary.get("rows", {}).get("code_responses")])
    results = []
    for name, out_sql, wh_sql in checks:
        try:
            only_out = con.execute(f"select count(*) from (({out_sql}) except all ({wh_sql}))").fetchone()[0]
            only_wh = con.execute(f"select count(*) from (({wh_sql}) except all ({out_sql}))").fetchone()[0]
            n_out = con.execute(f"select count(*) from ({out_sql})").fetchone()[0]
            ex_out = [list(map(str, r)) for r in
                      con.execute(f"({out_sql}) except all ({wh_sql}) limit {examples}").fetchall()]
            ex_wh = [list(map(str, r)) for r in
                     con.execute(f"({wh_sql}) except all ({out_sql}) limit {examples}").fetchall()]
            results.append({"check": name, "ok": only_out == 0 and only_wh == 0, "output_rows": n_out,
                            "only_in_outputs": only_out, "only_in_warehouse": only_wh,
                            "examples_only_in_outputs": ex_out, "examples_only_in_warehouse": ex_wh})
        except duckdb.Error as error:  # a mart or column missing: the check fails, it does not crash
            results.append({"check": name, "ok": False, "error": str(error).splitlines()[0][:300]})
    con.close()
    return results


# ----------------------------------------------------------------------------- report

def machine_info() -> dict:
    meminfo = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines() if ":" in line)
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    return {
        "nproc": len(os.sched_getaffinity(0)), "cpu_count": os.cpu_count(), "cpu_model": cpu,
        "memory_total_bytes": int(meminfo["MemTotal"].split()[0]) * 1024,
        "platform": platform.platform(), "python": platform.python_version(),
    }


def versions() -> dict:
    out = {}
    for package in ("duckdb", "dbt-core", "dbt-duckdb", "pyarrow", "numpy", "vaderSentiment"):
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            out[package] = None
    git = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True)
    out["git_commit"] = git.stdout.strip() or None
    out["git_uncommitted_files"] = len(dirty.stdout.splitlines()) if dirty.returncode == 0 else None
    return out


def _gb(n: int | None) -> str:
    return "-" if n is None else f"{n / 1024**3:.2f} GiB"


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 4) if b else None


def _target(number: int, what: str, figure: float | None, limit: float, unit: str,
            aim: float | None = None) -> dict:
    """One performance target: met when its figure was measured (its steps ran and succeeded)
    and is within the limit."""
    return {"target": number, "what": what, "figure": figure, "limit": limit, "aim": aim, "unit": unit,
            "met": figure is not None and figure <= limit}


def paired_runs(steps: dict[str, Measurement]) -> list[dict]:
    """Each paired run's figures: wall and CPU seconds of its fresh build, its peer and its writing
    peer (None for a step that is missing or failed), and the build over the peer and over the
    writing peer, wall and CPU (None unless both steps succeeded)."""
    rows = []
    for run in build_runs(steps):
        row: dict = {"run": run}
        for key in ("build", "peer", "writing_peer"):
            m = steps.get(key + suffix(run))
            row[f"{key}_wall_seconds"] = m.wall_seconds if m is not None and m.ok else None
            row[f"{key}_cpu_seconds"] = m.cpu_seconds if m is not None and m.ok else None
        for key in ("peer", "writing_peer"):
            for attr, end in (("wall", ""), ("cpu", "_cpu")):
                build, other = row[f"build_{attr}_seconds"], row[f"{key}_{attr}_seconds"]
                row[f"build_over_{key}{end}"] = None if build is None or other is None else _ratio(build, other)
        rows.append(row)
    return rows


def median_ratio(rows: list[dict], name: str) -> float | None:
    """The median over the paired runs of their ratio ``name`` (for an even number of runs, the
    mean of the two middle ones); None when a run has none: every pair counts."""
    values = [row[name] for row in rows]
    if not values or None in values:
        return None
    return round(statistics.median(values), 4)


def build_list(steps: dict[str, Measurement]) -> list[dict]:
    """Each fresh build, in run order: ok, wall and CPU seconds, peak RSS (process tree)."""
    builds = []
    for run in build_runs(steps):
        m = steps["build" + suffix(run)]
        builds.append({"run": run, "ok": m.ok, "wall_seconds": m.wall_seconds, "cpu_seconds": m.cpu_seconds,
                       "peak_rss_bytes": m.peak_rss_bytes})
    return builds


def builds_target(builds: list[dict], memory_limit_text: str) -> dict:
    """Target 11: how many of the fresh builds failed (limit 0: every run succeeds)."""
    return _target(11, f"fresh dbt builds that failed, of {len(builds)} runs at memory_limit {memory_limit_text}",
                   sum(not b["ok"] for b in builds) if builds else None, TARGET_FAILED_BUILDS, "runs")


def summarize_builds(steps: dict[str, Measurement], memory_limit_text: str) -> dict:
    """The summary of a --build-only run: each build, whether all succeeded, target 11."""
    builds = build_list(steps)
    return {"builds": builds, "all_builds_ok": bool(builds) and all(b["ok"] for b in builds),
            "targets": [builds_target(builds, memory_limit_text)]}


def summarize(steps: dict[str, Measurement], raw_bytes: int | None = None, checks: list[dict] | None = None,
              peer_checks: list[dict] | None = None,
              memory_limit_text: str = "DuckDB's default, 80% of RAM") -> dict:
    """The performance targets, each figure from steps of this run (target 1 from its honesty
    checks, the reference's and the peer's; target 2 the median of the paired runs' ratios; the
    others from the first run's build), and other ratios kept for comparison with earlier results."""
    build = steps["build"]
    ok = {key: m for key, m in steps.items() if m.ok}
    summary: dict = {"builds": build_list(steps)}
    summary["all_builds_ok"] = all(b["ok"] for b in summary["builds"])
    pairs = paired_runs(steps)
    if "peer" in steps:
        summary["paired_runs"] = pairs
        for key in ("peer", "writing_peer"):
            summary[f"build_over_{key}"] = median_ratio(pairs, f"build_over_{key}")
            summary[f"build_over_{key}_cpu"] = median_ratio(pairs, f"build_over_{key}_cpu")
    for key in ("reference_whole_rows", "reference_projected", "floor"):
        if key in steps:
            summary[f"build_over_{key}"] = _ratio(build.wall_seconds, steps[key].wall_seconds)
            summary[f"build_over_{key}_cpu"] = _ratio(build.cpu_seconds, steps[key].cpu_seconds)
    summary["build_peak_rss_bytes"] = build.peak_rss_bytes
    warehouse_bytes = build.details.get("warehouse_bytes")
    if warehouse_bytes and raw_bytes:
        summary["warehouse_over_raw_bytes"] = _ratio(warehouse_bytes, raw_bytes)

    def ratio(a: str, b: str, attr: str = "wall_seconds") -> float | None:
        """Step a over step b when both ran and succeeded."""
        return _ratio(getattr(ok[a], attr), getattr(ok[b], attr)) if a in ok and b in ok else None

    sentiment = (build.details.get("model_seconds") or {}).get(SENTIMENT_MODEL) if build.ok else None
    summary["sentiment_model_seconds"] = sentiment
    alone = ok.get("sentiment_alone")
    alone = (alone.details.get("model_seconds") or {}).get(SENTIMENT_MODEL) if alone else None
    summary["sentiment_model_alone_seconds"] = alone
    # the dbt steps at the run's settings, every fresh build among them (the low-memory build has its own limit)
    dbt_keys = ["build" + suffix(run) for run in build_runs(steps)] + ["build_unchanged", "sentiment_alone", "same_work"]
    dbt_steps = [steps[key] for key in dbt_keys if key in steps]
    peak = max(m.peak_rss_bytes for m in dbt_steps) if all(m.ok for m in dbt_steps) else None
    compared = (checks or []) + (peer_checks or [])
    paired = f"dbt build on an empty warehouse (median of {len(pairs)} paired runs)"
    summary["targets"] = [
        _target(1, "checks of the peer's and the reference's outputs against the marts that differ",
                sum(not c["ok"] for c in compared) if "peer" in ok and peer_checks else None, 0, "checks"),
        _target(2, f"{paired} / peer, wall", median_ratio(pairs, "build_over_peer"),
                TARGET_BUILD_OVER_PEER, "x", AIM_BUILD_OVER_PEER),
        _target(2, f"{paired} / peer, CPU", median_ratio(pairs, "build_over_peer_cpu"),
                TARGET_BUILD_OVER_PEER, "x", AIM_BUILD_OVER_PEER),
        _target(2, f"{paired} / writing peer, wall", median_ratio(pairs, "build_over_writing_peer"),
                TARGET_BUILD_OVER_PEER, "x", AIM_BUILD_OVER_PEER),
        _target(2, f"{paired} / writing peer, CPU", median_ratio(pairs, "build_over_writing_peer_cpu"),
                TARGET_BUILD_OVER_PEER, "x", AIM_BUILD_OVER_PEER),
        _target(3, "dbt run of the reference's marts and their parents / peer, wall", ratio("same_work", "peer"),
                TARGET_SAME_WORK_OVER_PEER, "x"),
        _target(3, "dbt run of the reference's marts and their parents / writing peer, wall",
                ratio("same_work", "writing_peer"), TARGET_SAME_WORK_OVER_PEER, "x"),
        _target(4, f"{SENTIMENT_MODEL} alone (run_results) / the peer's VADER part, wall",
                _ratio(alone, ok["peer_vader"].wall_seconds) if alone is not None and "peer_vader" in ok
                else None, TARGET_SENTIMENT_OVER_PEER_VADER, "x"),
        _target(5, "dbt build again on unchanged data, wall",
                ok["build_unchanged"].wall_seconds if "build_unchanged" in ok else None, TARGET_REBUILD_SECONDS, "s"),
        _target(6, "make test on a clean clone, wall (and green)",
                ok["make_test"].wall_seconds if "make_test" in ok else None, TARGET_MAKE_TEST_SECONDS, "s"),
        _target(7, f"peak RSS (process tree) of the dbt steps at memory_limit {memory_limit_text}",
                None if peak is None else round(peak / 1024**3, 3), TARGET_PEAK_RSS_BYTES / 1024**3, "GiB"),
        _target(8, "dbt build with the example eval sets / without, wall", ratio("build_eval_sets", "build"),
                TARGET_EVAL_SETS_GROWTH, "x"),
        _target(8, "dbt build with the example eval sets / without, CPU",
                ratio("build_eval_sets", "build", "cpu_seconds"), TARGET_EVAL_SETS_GROWTH, "x"),
        _target(8, "peak RSS (process tree) of the build with the example eval sets",
                round(ok["build_eval_sets"].peak_rss_bytes / 1024**3, 3) if "build_eval_sets" in ok else None,
                TARGET_PEAK_RSS_BYTES / 1024**3, "GiB"),
        _target(9, "dbt build (near duplicates on) / with near_duplicates.enabled false, wall",
                ratio("build", "build_no_near_duplicates"), TARGET_NEAR_DUPLICATES_GROWTH, "x"),
        _target(9, "dbt build (near duplicates on) / with near_duplicates.enabled false, CPU",
                ratio("build", "build_no_near_duplicates", "cpu_seconds"), TARGET_NEAR_DUPLICATES_GROWTH, "x"),
        _target(9, "peak RSS (process tree) of the build with near duplicates on",
                round(build.peak_rss_bytes / 1024**3, 3) if build.ok else None,
                TARGET_NEAR_DUPLICATES_PEAK_RSS_BYTES / 1024**3, "GiB"),
        _target(10, "dbt build (the scan for secrets and personal data on) / with pii_scan false, wall",
                ratio("build", "build_no_pii_scan"), TARGET_PII_BUILD_GROWTH, "x"),
        _target(10, "dbt build (the scan for secrets and personal data on) / with pii_scan false, CPU",
                ratio("build", "build_no_pii_scan", "cpu_seconds"), TARGET_PII_BUILD_GROWTH, "x"),
        _target(10, "preftools export (secrets redacted) / with --keep-secrets, wall",
                ratio("export", "export_keep_secrets"), TARGET_PII_EXPORT_GROWTH, "x"),
        _target(10, "preftools export (secrets redacted) / with --keep-secrets, CPU",
                ratio("export", "export_keep_secrets", "cpu_seconds"), TARGET_PII_EXPORT_GROWTH, "x"),
        builds_target(summary["builds"], memory_limit_text),
    ]
    summary["near_duplicates"] = build.details.get("near_duplicates")
    summary["pii"] = build.details.get("pii")
    return summary


def format_target(t: dict) -> str:
    """'target 2: 1.85x (<= 2.00x, aim 1.50x) met  [<what>]'; 'not measured' when a step was
    skipped or failed."""
    def fmt(value: float) -> str:
        if t["unit"] == "x":
            return f"{value:.2f}x"
        return f"{value} {t['unit']}" if isinstance(value, int) else f"{value:.2f} {t['unit']}"

    bound = f"<= {fmt(t['limit'])}" + (f", aim {fmt(t['aim'])}" if t["aim"] else "")
    figure = "not measured" if t["figure"] is None else fmt(t["figure"])
    return f"target {t['target']}: {figure} ({bound}) {'met' if t['met'] else 'not met'}  [{t['what']}]"


def median_build(builds: list[dict]) -> dict:
    """The median wall seconds, CPU seconds and peak RSS of ``builds`` (step JSON), each its own median."""
    return {"wall_seconds": round(statistics.median(b["wall_seconds"] for b in builds), 3),
            "cpu_seconds": round(statistics.median(b["cpu_seconds"] for b in builds), 3),
            "peak_rss_bytes": int(statistics.median(b["peak_rss_bytes"] for b in builds))}


def scale1_baseline(results_dir: Path, seed: int) -> dict | None:
    """The growth baseline: the scale-1.0 result in ``results_dir`` (``scale1.0.json``), its file,
    the median of its fresh builds (wall and CPU seconds, peak RSS) and its commit; None when there
    is none, it is of another seed, or one of its fresh builds failed."""
    path = Path(results_dir) / "scale1.0.json"
    try:
        report = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    steps = report.get("steps", {})
    builds = [steps["build" + suffix(run)] for run in build_runs(steps)]
    if report.get("seed") != seed or report.get("scale") != 1.0 or not builds \
            or any(b.get("returncode") != 0 for b in builds):
        return None
    return {"file": str(path), "generated_at": report.get("generated_at", ""), "runs": len(builds),
            **median_build(builds), "git_commit": report.get("versions", {}).get("git_commit")}


def growth(summary: dict, steps: dict[str, dict], scale: float, baseline: dict | None) -> None:
    """Information, no limit: this run's median fresh build (``steps``: the report's step JSON)
    over the scale-1.0 baseline's, into ``summary["growth"]``; only at another scale, with a
    baseline, and when every fresh build of this run succeeded."""
    builds = [steps["build" + suffix(run)] for run in build_runs(steps)]
    if scale == 1.0 or baseline is None or not builds or any(b["returncode"] != 0 for b in builds):
        return
    here = median_build(builds)
    summary["growth"] = {
        "scale": scale, "baseline": baseline, "median_build": here,
        "wall_over_scale1": _ratio(here["wall_seconds"], baseline["wall_seconds"]),
        "cpu_over_scale1": _ratio(here["cpu_seconds"], baseline["cpu_seconds"]),
        "peak_rss_over_scale1": _ratio(here["peak_rss_bytes"], baseline["peak_rss_bytes"]),
    }


def print_report(report: dict) -> None:
    steps = report["steps"]
    build = steps["build"]
    print()
    print(f"benchmark: seed {report['seed']}, scale {report['scale']}, {report['machine']['nproc']} cores, "
          f"{_gb(report['machine']['memory_total_bytes'])} RAM, DuckDB threads {report['duckdb']['threads']}, "
          f"memory_limit {report['duckdb']['memory_limit_text']}")
    head = f"{'step':<38}{'ok':>4}{'wall s':>10}{'cpu s':>10}{'peak RSS':>11}{'build/step':>12}{'load':>7}"
    print(head)
    print("-" * len(head))
    for key, m in steps.items():
        # the first run's build over each other step of the first run
        ratio = "" if key.startswith("build") or "_run" in key or not m["wall_seconds"] else \
            f"{build['wall_seconds'] / m['wall_seconds']:.3f}"
        print(f"{m['name']:<38}{'yes' if m['returncode'] == 0 else 'NO':>4}{m['wall_seconds']:>10.1f}"
              f"{m['cpu_seconds']:>10.1f}{_gb(m['peak_rss_bytes']):>11}{ratio:>12}{m['load_average_before'][0]:>7.1f}")
    s = report["summary"]
    print_paired_runs(s.get("paired_runs") or [])
    print_builds(s["builds"])
    print()
    for t in s["targets"]:
        print("  " + format_target(t))
    g = s.get("growth")
    if g:
        print(f"  growth vs scale 1.0 (median builds; {g['baseline']['file']}): wall x{g['wall_over_scale1']}, "
              f"CPU x{g['cpu_over_scale1']}, peak RSS x{g['peak_rss_over_scale1']} (information, no limit)")
    if s.get("sentiment_model_seconds") is not None:
        near = build["details"].get("beside_sentiment_model") or {}
        print(f"  {SENTIMENT_MODEL} in the build: {s['sentiment_model_seconds']:.1f} s (run_results); beside it"
              f" {near.get('nodes')} other nodes ran, {near.get('node_seconds')} s of their time")
    if s.get("sentiment_model_alone_seconds") is not None:
        print(f"  {SENTIMENT_MODEL} alone: {s['sentiment_model_alone_seconds']:.1f} s (run_results)")
    slow = build["details"].get("slowest_models") or []
    if slow:
        print("  slowest models (first build): " + ", ".join(f"{x['model']} {x['seconds']:.1f}s" for x in slow))
    for side, key in (("reference", "checks"), ("peer", "peer_checks")):
        checks = report.get(key) or []
        if not checks:
            continue
        print()
        failed = [c for c in checks if not c["ok"]]
        print(f"honesty check, {side}: {len(checks) - len(failed)}/{len(checks)} equal")
        for c in checks:
            extra = c.get("error") or (f"{c['only_in_outputs']} only in the {side}'s outputs, "
                                       f"{c['only_in_warehouse']} only in the warehouse")
            print(f"  [{'ok' if c['ok'] else 'DIFF'}] {c['check']}" + ("" if c["ok"] else f": {extra}"))
    print(f"\nresults: {report['results_file']}")


def _seconds(wall: float | None, cpu: float | None) -> str:
    return "failed" if wall is None else f"{wall:.1f} s / {cpu:.1f} CPU-s"


def _times(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def print_paired_runs(rows: list[dict]) -> None:
    """Each paired run's build, peer and writing peer, and the build's ratios; then the medians."""
    if not rows:
        return
    print()
    print(f"paired runs (dbt build, then the writing peer), {len(rows)}:")
    for r in rows:
        print(f"  run {r['run']}: build {_seconds(r['build_wall_seconds'], r['build_cpu_seconds'])}, "
              f"peer {_seconds(r['peer_wall_seconds'], r['peer_cpu_seconds'])}, "
              f"writing peer {_seconds(r['writing_peer_wall_seconds'], r['writing_peer_cpu_seconds'])}; "
              f"build / writing peer {_times(r['build_over_writing_peer'])} wall, "
              f"{_times(r['build_over_writing_peer_cpu'])} CPU; build / peer {_times(r['build_over_peer'])} wall, "
              f"{_times(r['build_over_peer_cpu'])} CPU")
    print(f"  median: build / writing peer {_times(median_ratio(rows, 'build_over_writing_peer'))} wall, "
          f"{_times(median_ratio(rows, 'build_over_writing_peer_cpu'))} CPU; build / peer "
          f"{_times(median_ratio(rows, 'build_over_peer'))} wall, {_times(median_ratio(rows, 'build_over_peer_cpu'))} CPU")


def print_builds(builds: list[dict]) -> None:
    """Each fresh build: ok, wall, CPU, peak RSS."""
    print()
    print(f"fresh dbt builds, {len(builds)}:")
    for b in builds:
        print(f"  run {b['run']}: {'ok' if b['ok'] else 'FAILED'}, {b['wall_seconds']:.1f} s wall, "
              f"{b['cpu_seconds']:.1f} CPU-s, peak RSS {_gb(b['peak_rss_bytes'])}")


def check_outputs(steps: dict[str, Measurement], key: str, checks: list[tuple[str, str, str]]) -> list[dict]:
    """The honesty check of one side (a reference variant or the peer) against the build."""
    build, side = steps["build"], steps.get(key)
    if not (build.ok and side is not None and side.ok):
        return [{"check": f"build and {key} ran", "ok": False,
                 "error": f"build ok={build.ok}, {key} ok={side is not None and side.ok}"}]
    out = Path(side.details["output"])
    summary = steps["peer_sql"].details if key == "peer" else side.details
    (out / "summary.json").write_text(json.dumps(summary))
    return compare(Path(build.details["warehouse"]), out, checks)


def settings(threads: str | None, memory_limit: str | None) -> tuple[str, str | None]:
    """DuckDB's threads (``threads``, else $DUCKDB_THREADS, else 2) and memory_limit
    (``memory_limit``, else $DUCKDB_MEMORY_LIMIT, else None: DuckDB's default) for every side."""
    return (threads or os.environ.get("DUCKDB_THREADS") or "2",
            memory_limit or os.environ.get("DUCKDB_MEMORY_LIMIT") or None)


def report_head(seed: int, scale: float, raw: Path, threads: str, memory_limit: str | None, repeat: int,
                results_file: Path) -> dict:
    """What every report starts with: the run's parameters, the machine, the versions, DuckDB's
    settings (with the memory_limit in effect)."""
    # the data files the build reads (Parquet or JSON), by the Hub's rule
    raw_bytes = sum(f.stat().st_size for dataset in DATASETS for f in dataset.data_files(raw))
    return {
        "generated_at": dt.datetime.now().isoformat(timespec="seconds"), "seed": seed, "scale": scale,
        "repeat": repeat, "raw_dir": str(raw), "raw_bytes": raw_bytes,
        "machine": machine_info(), "versions": versions(),
        "duckdb": {"threads": threads, **memory_limit_in_effect(memory_limit)}, "results_file": str(results_file),
    }


def run_builds(seed: int = 42, scale: float = 1.0, cache_dir: Path = REPO / "benchmarks" / "cache",
               results_dir: Path = REPO / "benchmarks" / "results", work_dir: Path | None = None,
               threads: str | None = None, memory_limit: str | None = None, raw_dir: Path | None = None,
               verbose: bool = True, repeat: int = DEFAULT_REPEAT) -> dict:
    """``--build-only``: the raw data, then ``repeat`` fresh ``dbt build`` runs one after the other
    (``build``, ``build_run2``, ...), nothing else; the report (also written as JSON under
    ``results_dir``) lists each run and target 11."""
    threads, memory_limit = settings(threads, memory_limit)
    raw = Path(raw_dir) if raw_dir else ensure_raw(Path(cache_dir), seed, scale)
    work = Path(work_dir) if work_dir else Path(cache_dir) / f"work-seed{seed}-scale{scale}"
    work.mkdir(parents=True, exist_ok=True)
    say = (lambda msg: print(msg, flush=True)) if verbose else (lambda msg: None)
    results_dir = Path(results_dir)
    report = report_head(seed, scale, raw, threads, memory_limit, repeat, results_dir / f"scale{scale}.json")
    steps: dict[str, Measurement] = {}
    for run in range(1, repeat + 1):
        say(f"dbt build, run {run} of {repeat} ...")
        steps.update(paired_run(raw, work, threads, memory_limit, run, with_peer=False, say=say))
    report["build_only"] = True
    report["steps"] = {k: asdict(m) for k, m in steps.items()}
    report["summary"] = summarize_builds(steps, report["duckdb"]["memory_limit_text"])
    growth(report["summary"], report["steps"], scale, scale1_baseline(results_dir, seed))
    results_dir.mkdir(parents=True, exist_ok=True)
    Path(report["results_file"]).write_text(json.dumps(report, indent=1) + "\n")
    if verbose:
        print_report(report)
    return report


def run_bench(seed: int = 42, scale: float = 1.0, cache_dir: Path = REPO / "benchmarks" / "cache",
              results_dir: Path = REPO / "benchmarks" / "results", work_dir: Path | None = None,
              threads: str | None = None, memory_limit: str | None = None, low_memory_limit: str | None = None,
              low_memory_build: bool = True, reference_variants: tuple[str, ...] = ("whole_rows",),
              raw_dir: Path | None = None, verbose: bool = True, rebuild: bool = False,
              same_work: bool = False, with_peer: bool = True, with_make_test: bool = False,
              eval_sets: bool = False, near_duplicates: bool = False, pii: bool = False,
              repeat: int = DEFAULT_REPEAT) -> dict:
    """Run every step and return the report (also written as JSON under ``results_dir``)."""
    threads, memory_limit = settings(threads, memory_limit)
    raw = Path(raw_dir) if raw_dir else ensure_raw(Path(cache_dir), seed, scale)
    work = Path(work_dir) if work_dir else Path(cache_dir) / f"work-seed{seed}-scale{scale}"
    work.mkdir(parents=True, exist_ok=True)
    say = (lambda msg: print(msg, flush=True)) if verbose else (lambda msg: None)
    results_dir = Path(results_dir)
    report = report_head(seed, scale, raw, threads, memory_limit, repeat, results_dir / f"scale{scale}.json")

    steps: dict[str, Measurement] = {}
    say("scan floor ...")
    steps["floor"] = floor(raw, work, threads, memory_limit)
    say(f"  {steps['floor'].wall_seconds:.1f} s")
    for run in range(1, repeat + 1):
        say(f"paired run {run} of {repeat}: dbt build, then the peer and the writing step ...")
        steps.update(paired_run(raw, work, threads, memory_limit, run, with_peer, say))
    steps["build"].details["near_duplicates"] = near_duplicate_counts(work / "build" / "warehouse.duckdb")
    steps["build"].details["pii"] = pii_counts(work / "build" / "warehouse.duckdb")
    for variant in reference_variants:
        say(f"reference ({variant}) ...")
        steps[f"reference_{variant}"] = reference(
            f"reference, {variant.replace('_', ' ')}", raw, work / f"reference_{variant}", seed,
            whole_rows=variant == "whole_rows")
        say(f"  {steps[f'reference_{variant}'].wall_seconds:.1f} s")
    # the honesty check, once: the first run's peer and the reference against the first run's build
    checked = next((k for k in steps if k.startswith("reference_") and steps[k].ok), "reference_whole_rows")
    checks = check_outputs(steps, checked, REFERENCE_CHECKS)
    peer_checks = check_outputs(steps, "peer", PEER_CHECKS) if with_peer else []
    if rebuild and steps["build"].ok:
        # the same build again into its warehouse, raw data unchanged (after the honesty check)
        say("dbt build again, unchanged raw data ...")
        steps["build_unchanged"] = dbt_build("dbt build again, unchanged data", raw, work / "build",
                                             threads, memory_limit, fresh=False)
        say(f"  {steps['build_unchanged'].wall_seconds:.1f} s, ok={steps['build_unchanged'].ok}")
    if steps["build"].ok:
        say(f"{SENTIMENT_MODEL} alone, every critique scored ...")
        steps["sentiment_alone"] = sentiment_alone(raw, work / "build", threads, memory_limit)
        say(f"  {steps['sentiment_alone'].wall_seconds:.1f} s, ok={steps['sentiment_alone'].ok}")
    if same_work:
        say("dbt run of the reference's marts and their parents ...")
        select = " ".join(f"+{mart}" for mart in REFERENCE_MARTS)
        steps["same_work"] = dbt_build("dbt run, the reference's marts", raw, work / "same_work", threads,
                                       memory_limit, args=("build", "--select", select, "--exclude-resource-type", "test",
                                                                  "--exclude-resource-type", "unit_test"))
        say(f"  {steps['same_work'].wall_seconds:.1f} s, ok={steps['same_work'].ok}")
    if low_memory_build and low_memory_limit and low_memory_limit != memory_limit:
        say(f"dbt build at memory_limit {low_memory_limit} ...")
        steps["build_low_memory"] = dbt_build(f"dbt build, memory_limit {low_memory_limit}", raw,
                                              work / "build_low_memory", threads, low_memory_limit)
        say(f"  {steps['build_low_memory'].wall_seconds:.1f} s, ok={steps['build_low_memory'].ok}")
    # builds with other vars, each into a fresh file: what a feature adds to the default build
    for wanted, key, name, variables in (
            (eval_sets, "build_eval_sets", "dbt build, with the eval sets", EVAL_SETS_VARS.read_text()),
            (near_duplicates, "build_no_near_duplicates", "dbt build, near duplicates off", NEAR_DUPLICATES_OFF),
            (pii, "build_no_pii_scan", "dbt build, pii_scan false", PII_SCAN_OFF)):
        if wanted:
            say(f"{name} ...")
            steps[key] = dbt_build(name, raw, work / key, threads, memory_limit, args=("build", "--vars", variables))
            say(f"  {steps[key].wall_seconds:.1f} s, ok={steps[key].ok}")
    if pii and steps["build"].ok:
        for key, name, args in (("export", "preftools export", ()),
                                ("export_keep_secrets", "preftools export --keep-secrets", ("--keep-secrets",))):
            say(f"{name} ...")
            steps[key] = export(name, work / "build" / "warehouse.duckdb", work / key, threads, memory_limit, args)
            say(f"  {steps[key].wall_seconds:.1f} s, ok={steps[key].ok}")
    if with_make_test:
        say("make test on a clean clone of HEAD ...")
        steps["make_test"] = make_test(work)
        say(f"  {steps['make_test'].wall_seconds:.1f} s, ok={steps['make_test'].ok}: {steps['make_test'].details['pytest']}")

    report["duckdb"]["low_memory_limit"] = low_memory_limit
    report["steps"] = {k: asdict(m) for k, m in steps.items()}
    report["summary"] = summarize(steps, report["raw_bytes"], checks, peer_checks,
                                  report["duckdb"]["memory_limit_text"])
    report.update(checks=checks, peer_checks=peer_checks, checks_ok=all(c["ok"] for c in checks + peer_checks))
    growth(report["summary"], report["steps"], scale, scale1_baseline(results_dir, seed))
    results_dir.mkdir(parents=True, exist_ok=True)
    Path(report["results_file"]).write_text(json.dumps(report, indent=1) + "\n")
    if verbose:
        print_report(report)
    return report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--cache-dir", type=Path, default=REPO / "benchmarks" / "cache",
                    help="generated data and work files (gitignored)")
    ap.add_argument("--results-dir", type=Path, default=REPO / "benchmarks" / "results")
    ap.add_argument("--threads", default=None, help="DuckDB threads (default: $DUCKDB_THREADS or 2)")
    ap.add_argument("--memory-limit", default=None,
                    help="DuckDB memory_limit (default: $DUCKDB_MEMORY_LIMIT if set, else none is passed: "
                         "DuckDB's default, 80%% of RAM, as profiles.yml)")
    ap.add_argument("--repeat", type=int, default=DEFAULT_REPEAT,
                    help="paired runs (a fresh dbt build, then the writing peer) whose median ratio is target 2; "
                         "with --build-only, the fresh builds (default: %(default)s)")
    ap.add_argument("--build-only", action="store_true",
                    help="only the raw data and --repeat fresh dbt builds at the run's settings (target 11), "
                         "no peer and no other step")
    ap.add_argument("--low-memory-limit", default=None, help="a build at this lower memory_limit too (default: none)")
    ap.add_argument("--skip-peer", action="store_true",
                    help="leave out the peer (the SQL script, the VADER pool, the writing step) and its honesty check")
    ap.add_argument("--skip-same-work", action="store_true",
                    help="leave out the `dbt run` of only the reference's marts and their parents (target 3)")
    ap.add_argument("--skip-low-memory-build", action="store_true")
    ap.add_argument("--skip-rebuild", action="store_true",
                    help="skip the second build into the same warehouse on unchanged data (target 5)")
    ap.add_argument("--skip-make-test", action="store_true",
                    help="leave out `make test` on a clean clone of HEAD (target 6; 5 to 9 minutes on 2 cores)")
    ap.add_argument("--skip-eval-sets", action="store_true",
                    help="leave out the build with the example eval sets registered (target 8)")
    ap.add_argument("--skip-near-duplicates", action="store_true",
                    help="leave out the build with near_duplicates.enabled false (target 9)")
    ap.add_argument("--skip-pii", action="store_true",
                    help="leave out the build with pii_scan false and the two exports (target 10)")
    ap.add_argument("--reference", choices=["both", "whole_rows", "projected"], default="whole_rows",
                    help="which reference variants to run (default: whole rows)")
    a = ap.parse_args(argv)
    if a.repeat < 1:
        ap.error("--repeat must be at least 1")
    if a.build_only:
        report = run_builds(seed=a.seed, scale=a.scale, cache_dir=a.cache_dir, results_dir=a.results_dir,
                            threads=a.threads, memory_limit=a.memory_limit, repeat=a.repeat)
        return 0 if report["summary"]["all_builds_ok"] else 1
    variants = ("whole_rows", "projected") if a.reference == "both" else (a.reference,)
    report = run_bench(seed=a.seed, scale=a.scale, cache_dir=a.cache_dir, results_dir=a.results_dir,
                       threads=a.threads, memory_limit=a.memory_limit, low_memory_limit=a.low_memory_limit,
                       low_memory_build=not a.skip_low_memory_build, reference_variants=variants,
                       rebuild=not a.skip_rebuild, same_work=not a.skip_same_work, with_peer=not a.skip_peer,
                       with_make_test=not a.skip_make_test, eval_sets=not a.skip_eval_sets,
                       near_duplicates=not a.skip_near_duplicates, pii=not a.skip_pii, repeat=a.repeat)
    steps_ok = all(s["returncode"] == 0 for k, s in report["steps"].items()
                   if k.startswith(("build", "peer", "sentiment", "export", "make_test")))
    return 0 if report["checks_ok"] and steps_ok else 1


if __name__ == "__main__":
    sys.exit(main())
