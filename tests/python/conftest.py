"""Shared fixtures: generate a fresh small raw dataset, build the warehouse on it with dbt,
and query the result read-only.

The build runs once per test session (``warehouse``); tests that need another seed or
broken inputs call :func:`run_dbt` themselves with their own ``RAW_DATA_DIR`` and
``DUCKDB_PATH``.

Under pytest-xdist (``make test`` runs one worker per core, ``--dist loadfile``) the generated data and the
session build are made once for all workers, in a folder beside the workers' own temporary
folders, under a file lock; each worker then queries its own copy of the built file (a test's
``dbt show`` or ``dbt docs generate`` opens it for writing, which would lock the other worker out).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

import forked_dbt

REPO = Path(__file__).resolve().parents[2]
DBT = forked_dbt.DBT

# Small enough for a quick build, large enough that every planted quirk occurs.
TEST_SCALE = float(os.environ.get("TEST_SCALE", "0.01"))
TEST_SEED = 42


@dataclass
class DbtResult:
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def dbt_env(raw_dir: Path | str, duckdb_path: Path | str, work_dir: Path, **extra: str) -> dict:
    """Environment for a dbt run isolated in ``work_dir`` (its own target/ and logs/)."""
    env = dict(os.environ)
    env.update(
        RAW_DATA_DIR=str(raw_dir),
        DUCKDB_PATH=str(duckdb_path),
        DBT_PROFILES_DIR=str(REPO),
        DBT_TARGET_PATH=str(work_dir / "target"),
        DBT_LOG_PATH=str(work_dir / "logs"),
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
        # no debug log file (about 7% of a test build's CPU): DBT_LOG_LEVEL_FILE=debug keeps it
        DBT_LOG_LEVEL_FILE=os.environ.get("DBT_LOG_LEVEL_FILE", "none"),
    )
    env.update(extra)
    return env


# The registry entries the generated data has stand-ins for (examples/extra_datasets.yml, with its
# mixture): the session build registers them, so every mart includes the five extra datasets.
REGISTRY_VARS: dict = __import__("yaml").safe_load((REPO / "examples" / "extra_datasets.yml").read_text())

# `dbt build` of a test's own raw data (rows planted, files converted): the models and their data
# tests. The unit tests check the models' SQL on their own fixed rows, whatever the raw data: the
# session build (the `warehouse` fixture) runs them; each scenario build would run them again.
SCENARIO_BUILD = ["build", "--exclude-resource-type", "unit_test"]
# The integrity checks preference_pairs gives every dataset's pairs (test_cross_dataset recomputes
# them, the near-duplicate ones from near_duplicates_reference, the PII ones from pii_reference);
# the training tables carry them beside their dataset's own checks.
NEAR_DUPLICATE_FLAGS = frozenset({"near_duplicate_pair", "label_conflict", "near_identical_responses"})
PII_FLAGS = frozenset({"contains_secret", "contains_personal_data"})  # the second with pii_flag_personal: true
SHARED_FLAGS = frozenset({"identical_responses", "empty_response", "score_not_higher", "duplicate_pair",
                          "cross_dataset_duplicate"}) | NEAR_DUPLICATE_FLAGS | PII_FLAGS


def make_targets() -> set[str]:
    """The targets the Makefile declares .PHONY: the ones a user runs (`make help` lists them)."""
    return {name for line in (REPO / "Makefile").read_text().splitlines() if line.startswith(".PHONY:")
            for name in line.split(":", 1)[1].split()}


def run_make(*args: str, env: dict | None = None, timeout: int = 120) -> subprocess.CompletedProcess:
    """``make -s <args>`` in the repo, without the settings a user's shell or `make test` may carry
    (the Makefile's own defaults apply), plus ``env``."""
    base = {k: v for k, v in os.environ.items()
            if k not in ("PYTHON", "VENV", "MAKEFLAGS", "MFLAGS", "DUCKDB_THREADS", "DBT_THREADS", "RAW_DATA_DIR",
                         "DUCKDB_PATH", "EXPORT_DIR", "LINT_PATHS")}
    return subprocess.run(["make", "-s", "--no-print-directory", *args], cwd=REPO, env={**base, **(env or {})},
                          capture_output=True, text=True, timeout=timeout)


def with_registry(args: list[str], raw_dir) -> list[str]:
    """``args`` with the example registry (REGISTRY_VARS) merged into its ``--vars`` when
    ``raw_dir`` holds every entry's dataset (generated data does), so that a test's build of the
    generated data builds what the session build built. Vars the test gives win."""
    import yaml

    entries = REGISTRY_VARS["extra_datasets"]
    if not args or args[0] == "parse" or not all((Path(raw_dir) / e["hub_id"]).is_dir() for e in entries):
        return args
    args = list(args)
    given = {}
    if "--vars" in args:
        i = args.index("--vars")
        given = yaml.safe_load(args[i + 1]) or {}
        del args[i:i + 2]
    merged = {**REGISTRY_VARS, **given}
    if "datasets" in given and "mixture" not in given:  # a built-in group left out leaves the mixture too
        builtin = {"ultrafeedback", "code_ultrafeedback", "rever"}
        merged["mixture"] = {k: v for k, v in REGISTRY_VARS["mixture"].items() if k not in builtin or k in given["datasets"]}
    return [*args, "--vars", json.dumps(merged)]


def run_dbt(args: list[str], raw_dir, duckdb_path, work_dir: Path, check: bool = True,
            share_parse: bool = True, artifacts: bool = False, **extra_env: str) -> DbtResult:
    """Run the dbt CLI from the repo root against ``raw_dir`` into ``duckdb_path`` (with the
    example registry when ``raw_dir`` has its datasets: :func:`with_registry`).

    ``share_parse``: the run reuses this worker's last parse made with the same vars and
    settings (:func:`_shared_parse`); False runs dbt on ``duckdb_path`` itself (for a test about
    the file's name or path). ``artifacts``: dbt writes its JSON artifacts (target/manifest.json,
    run_results.json, ...), about 0.3 s of CPU a run: only for a test that reads them."""
    work_dir.mkdir(parents=True, exist_ok=True)
    args = with_registry(args, raw_dir)
    with _shared_parse(args, Path(duckdb_path), work_dir, extra_env, share_parse) as db:
        env = dbt_env(raw_dir, db, work_dir, **extra_env)
        if not artifacts:
            env["DBT_WRITE_JSON"] = "false"
        proc = forked_dbt.run(args, env, REPO)
    result = DbtResult(proc.returncode, proc.stdout, proc.stderr)
    if check and proc.returncode != 0:
        raise AssertionError(f"dbt {' '.join(args)} failed:\n{result.output[-8000:]}")
    return result


# dbt parses the whole project on every run (about 5 s of each test's dbt run) unless it finds its
# last parse in the target folder made with the same profile, vars and project (partial parsing,
# which then re-reads only the files that changed or use an env var whose value changed). The
# profile holds the DuckDB path, and each test has its own file: so a test's run works on a path
# fixed per worker and per vars (the test's file moved there for the run and back after) and
# starts from the last parse made there. Set by the session fixture below; None: every run parses.
_PARSES: Path | None = None


@pytest.fixture(scope="session", autouse=True)
def _parse_cache(tmp_path_factory):
    global _PARSES
    _PARSES = tmp_path_factory.mktemp("dbt_parse")  # per worker: a worker runs one dbt at a time
    yield
    _PARSES = None


@contextlib.contextmanager
def _shared_parse(args: list[str], db: Path, work_dir: Path, extra_env: dict, share: bool):
    """The DuckDB path to give dbt: ``db`` itself, or (sharing) the fixed path for these vars and
    settings, with ``db`` (its WAL and temp folder too) moved there for the run and back after it."""
    if not (share and _PARSES is not None and db.is_absolute() and db.suffix == ".duckdb" and db.parent.is_dir()):
        yield db
        return
    vars_given = args[args.index("--vars") + 1] if "--vars" in args else ""
    key = hashlib.sha256(json.dumps([vars_given, sorted(extra_env.items())]).encode()).hexdigest()[:12]
    fixed_dir = _PARSES / key
    shutil.rmtree(fixed_dir / "db", ignore_errors=True)
    (fixed_dir / "db").mkdir(parents=True)
    fixed = fixed_dir / "db" / "warehouse.duckdb"
    pairs = [(db.with_name(db.name + suffix), fixed.with_name(fixed.name + suffix)) for suffix in ("", ".wal", ".tmp")]
    saved, target = fixed_dir / "partial_parse.msgpack", work_dir / "target" / "partial_parse.msgpack"
    if saved.exists() and not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(saved, target)
    for own, there in pairs:
        if own.exists():
            own.rename(there)
    try:
        yield fixed
    finally:
        for own, there in pairs:
            if there.exists():
                there.rename(own)
        if target.exists():
            shutil.copy2(target, saved)


@dataclass
class Warehouse:
    """A built warehouse file, opened read-only for each query."""

    path: Path
    raw_dir: Path
    work_dir: Path

    def connect(self) -> duckdb.DuckDBPyConnection:
        return duckdb.connect(str(self.path), read_only=True)

    def rows(self, sql: str, params: list | None = None) -> list[dict]:
        with self.connect() as con:
            cur = con.execute(sql, params or [])
            names = [d[0] for d in cur.description]
            return [dict(zip(names, r)) for r in cur.fetchall()]

    def scalar(self, sql: str, params: list | None = None):
        with self.connect() as con:
            return con.execute(sql, params or []).fetchone()[0]

    def arrow(self, sql: str):
        with self.connect() as con:
            return con.execute(sql).to_arrow_table()


def raw_file_rows(path: Path) -> list[dict]:
    """The rows of one raw data file, read without DuckDB: pyarrow for Parquet, Python's json for
    JSON Lines (gzip included) and JSON arrays, Python's csv for CSV (its header row names the
    columns; an empty field is None, as the build reads it)."""
    import csv
    import gzip

    import pyarrow.parquet as pq

    name = path.name
    if name.endswith(".parquet"):
        return pq.read_table(path).to_pylist()
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", newline="") as f:
        if ".csv" in name:
            return [{k: v if v != "" else None for k, v in row.items()} for row in csv.DictReader(f)]
        if ".jsonl" in name:
            return [json.loads(line) for line in f if line.strip()]
        return json.load(f)


def operation_cases(macro: str, cases: list, label: str, tmp_path: Path) -> list[str]:
    """What `dbt run-operation <macro> --args '{cases: [...]}'` logs for each case: its lines
    `<label> <i>: <verdict>`, the verdicts in case order."""
    import re

    out = run_dbt(["run-operation", macro, "--args", json.dumps({"cases": cases})], tmp_path / "raw", ":memory:", tmp_path).output
    found = {int(m.group(1)): m.group(2).strip() for m in re.finditer(rf"{re.escape(label)} (\d+): (.*)", out)}
    assert sorted(found) == list(range(len(cases))), out[-3000:]
    return [found[i] for i in range(len(cases))]


def raw_rows(raw_dir: Path, key: str):
    """(file name, 0-based row number in the file, row) for every raw row of dataset ``key``, its
    files as the Hub picks them (preftools.inputs.hub_layout), each read by :func:`raw_file_rows`."""
    from preftools.inputs.contract import DATASETS_BY_KEY

    for path in DATASETS_BY_KEY[key].data_files(raw_dir):
        for i, row in enumerate(raw_file_rows(path)):
            yield path.name, i, row


def generate_raw(out_dir: Path, seed: int = TEST_SEED, scale: float = TEST_SCALE) -> dict:
    from preftools.generate import generate

    return generate(out_dir, seed=seed, scale=scale, progress=False)


def shared_once(tmp_path_factory, name: str, make) -> Path | None:
    """Under pytest-xdist: the folder ``name`` shared by every worker of this run, made by
    ``make(folder)`` in the first worker that asks (the others wait on its lock). ``None`` when
    not under xdist."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return None
    from filelock import FileLock

    folder = tmp_path_factory.getbasetemp().parent / name
    with FileLock(str(folder) + ".lock"):
        done = folder / ".done"
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            make(folder)
            done.touch()
    return folder


@pytest.fixture(scope="session")
def raw_dir(tmp_path_factory) -> Path:
    """A fresh generated raw dataset in the Hub layout (never the bundled sample); read-only."""
    shared = shared_once(tmp_path_factory, "shared_raw", generate_raw)
    if shared is not None:
        return shared
    out = tmp_path_factory.mktemp("raw")
    generate_raw(out)
    return out


@pytest.fixture(scope="session")
def warehouse(raw_dir, tmp_path_factory) -> Warehouse:
    """`dbt build` (models, seeds, data tests, unit tests) on the generated raw data."""
    work = tmp_path_factory.mktemp("build")
    db = work / "warehouse.duckdb"
    shared = shared_once(tmp_path_factory, "shared_build",
                         lambda folder: run_dbt(["build"], raw_dir, folder / db.name, folder))
    if shared is None:
        run_dbt(["build"], raw_dir, db, work)
        return Warehouse(db, raw_dir, work)
    # this worker's copy: the file (and a WAL if the build left one) and the build's target/
    for built in shared.glob(db.name + "*"):
        shutil.copy2(built, work / built.name)
    shutil.copytree(shared / "target", work / "target")
    return Warehouse(db, raw_dir, work)


@pytest.fixture(scope="session")
def revised(raw_dir, warehouse, tmp_path_factory):
    """(warehouse, what was planted): the session's raw data revised in known ways
    (revision.py: rows removed, added, reordered, ratings changed, a registry entry added), built
    (models and seeds)."""
    from revision import ADDED_ENTRY, Planted, revise

    def make(folder: Path) -> None:
        revise(raw_dir, folder / "raw", warehouse).save(folder / "planted.json")
        registry = {"extra_datasets": [*REGISTRY_VARS["extra_datasets"], ADDED_ENTRY]}
        run_dbt(["build", "--resource-type", "model", "--resource-type", "seed", "--vars", json.dumps(registry)],
                folder / "raw", folder / "warehouse.duckdb", folder)

    folder = shared_once(tmp_path_factory, "shared_revision", make)
    if folder is None:
        folder = tmp_path_factory.mktemp("revision")
        make(folder)
    return Warehouse(folder / "warehouse.duckdb", folder / "raw", folder), Planted.load(folder / "planted.json")


# The near-duplicate models, the marts that read them, the build record and the report's settings
# again on a copy of the session build, with the check off and a cap on training_mixture.
SWITCHED_OFF_VARS = {"near_duplicates": {"enabled": False}, "mixture_max_pairs_per_prompt_cluster": 2}
SWITCHED_OFF_MODELS = ("path:models/intermediate/near_duplicates", "path:models/marts/near_duplicates",
                       "preference_pairs", "training_mixture", "warehouse_build_info", "rpt_near_duplicate_settings")


def copy_warehouse(warehouse: Warehouse, dst: Path) -> Path:
    """A copy of a built warehouse file (and its WAL, if any) as ``dst``, to run models again on."""
    shutil.copy(warehouse.path, dst)
    wal = Path(str(warehouse.path) + ".wal")
    if wal.exists():
        shutil.copy(wal, str(dst) + ".wal")
    return dst


def _switch_off(warehouse, folder: Path) -> None:
    copy_warehouse(warehouse, folder / "warehouse.duckdb")
    run_dbt(["run", "-s", *SWITCHED_OFF_MODELS, "--vars", json.dumps(SWITCHED_OFF_VARS)],
            warehouse.raw_dir, folder / "warehouse.duckdb", folder / "work")


@pytest.fixture(scope="session")
def switched_off(warehouse, tmp_path_factory) -> Warehouse:
    """The session build with near_duplicates.enabled false and mixture_max_pairs_per_prompt_cluster
    2 (SWITCHED_OFF_MODELS run again on a copy), shared by the xdist workers; each reads its own copy
    (test_near_duplicates, test_report and test_export read it)."""
    work = tmp_path_factory.mktemp("near_duplicates_off")
    shared = shared_once(tmp_path_factory, "shared_near_duplicates_off", lambda folder: _switch_off(warehouse, folder))
    if shared is None:
        _switch_off(warehouse, work)
    else:
        for f in shared.glob("warehouse.duckdb*"):
            shutil.copy2(f, work / f.name)
    return Warehouse(work / "warehouse.duckdb", warehouse.raw_dir, work)


@pytest.fixture(scope="module")
def hf_env(tmp_path_factory):
    """`datasets` in this process never touches the network or the user's cache."""
    cache = tmp_path_factory.mktemp("hf_cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_DATASETS_CACHE", str(cache / "datasets"))
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("HF_HOME", str(cache / "home"))
        yield cache


@pytest.fixture
def hub():
    """The stand-in Hugging Face Hub (hub_standin.py), served on a local port for one test."""
    from hub_standin import FakeHub, serving

    with serving(FakeHub()) as fake:
        yield fake


# The costliest modules first (pytest-xdist's --dist loadfile --no-loadscope-reorder hands out
# whole modules in collection order: the long ones start early instead of last). The first
# module starts the session build; the second needs none (it builds the bundled sample in a copy
# of the project), so the other worker is busy meanwhile instead of waiting for it. Serial runs
# keep pytest's order.
FIRST_MODULES = [
    "test_faults.py", "test_any_directory.py", "test_build_reuse.py", "test_bad_values.py", "test_raw_inputs.py",
    "test_raw_contract.py", "test_training_contract.py", "test_raw_formats.py", "test_lint.py", "test_bench_smoke.py", "test_determinism.py", "test_everyday.py",
    "test_make.py", "test_code_ultrafeedback.py", "test_provenance.py", "test_ultrafeedback.py",
    "test_rever.py", "test_accounting.py", "test_export.py", "test_sentiment_reuse.py", "test_docs.py",
]


def pytest_collection_modifyitems(config, items):
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    rank = {name: i for i, name in enumerate(FIRST_MODULES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: order within a module kept
