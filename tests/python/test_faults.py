"""Fault injection: processes killed at chosen points, corrupt raw files, two programs
on one warehouse, full disks. After each fault the warehouse opens, nothing is half-written, the
message is one clear line, and a rerun recovers.

Builds share one "lane": a fixed RAW_DATA_DIR, DUCKDB_PATH and target/ for every dbt run of this
module, so dbt's partial parsing stays valid from run to run (the full-disk build mounts its
tmpfs over the lane's warehouse folder for the same reason). Every run starts by copying in the
warehouse it needs; no test depends on what another left in the lane.

Old and new versions. The marts of the session warehouse (a clean build of ``raw_dir``) are the
*new* version of every build here. The *old* version is ``aged``: a copy of the session
warehouse in which every table of ``main`` lost one row (and ``intermediate`` tables a quarter of
theirs, so that a VADER model that reuses its earlier scores still has critiques to score): every
non-empty mart of the old version differs from the new one, so "each mart equals its old or its
new version" says which.

Kill points (SIGKILL of the whole process group, dbt started with start_new_session). dbt runs
through a small wrapper (``fault_dbt``: the real dbt CLI in the same process) that can stop
itself (SIGSTOP) at a point no outside observer can hit reliably; the test kills it there:

1. during the Python model (the VADER step): after its START line, while VADER scores critiques:
   right after work went to the worker pool, with the workers running (the wrapper sets
   preftools.dbt_runtime.sentiment's MIN_TEXTS_PER_WORKER threshold to 1 so that the few critiques of the test
   data go to a pool), or at the 10th critique if the model scores them in the dbt process;
2. during parse: after "Registered adapter", as dbt's ManifestLoader starts loading the project,
   before "Found N models" (second, so that the first run has left dbt's partial-parse file and
   this one is killed while using it);
3. during a large SQL model: stopped on its START line (main.ultrafeedback_completion_scores, the
   largest mart, early in the DAG), and at the latest just before its COMMIT; while stopped, a
   second ``dbt build``, an export and the report are tried on the same file (the clear "locked
   by ... (PID n)" lines);
4. after the COMMIT of a mart (main.code_ultrafeedback_responses, the first one dbt builds) but
   before dbt drops ``code_ultrafeedback_responses__dbt_backup``: dbt-duckdb's table
   materialisation leaves that table in schema main (the export skips it, the next build drops it).

The kills form a chain (to keep the module fast: one rerun instead of four): each run starts from
the state the previous kill left, a later run is checked to get past each kill point, and the last
run builds to the end and must equal the clean session build in every table of main,
intermediate, staging and seeds, with no dbt temporary or backup table left anywhere.

Then: an export killed while it swaps its folders into place, publish killed mid-commit and fetch
killed mid-download against the stand-in Hub (hub_standin.py); raw files
truncated, damaged in a row group and replaced by garbage; a build while an export or the report
holds the warehouse; a full disk (a tmpfs; skipped where it cannot be mounted) during a build and
during an export.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import forked_dbt
from conftest import DBT, REPO, DbtResult, dbt_env, with_registry
from preftools.inputs.contract import DATASETS, DATASETS_BY_KEY
from preftools.outputs import export as ex

pytestmark = pytest.mark.slow

RUN_TIMEOUT = 300  # any dbt run; a build of the test data takes ~20 s
STEP_TIMEOUT = 120  # waiting for one fault point
TOOL_TIMEOUT = 120  # export, report, fetch, publish
ANSI = re.compile(r"\x1b\[[0-9;]*m")
LARGE_MODEL = "ultrafeedback_completion_scores"  # the largest mart (a row per completion, with texts)
EARLY_MART = "code_ultrafeedback_responses"  # the first mart dbt builds: where the post-COMMIT kill happens
DBT_WORK_TABLE = re.compile(r".+__dbt_(tmp|backup)")
# A Python model's new table is written by dbt-duckdb's own cursor, which commits it before the swap
# (a SQL model's is created in the transaction that swaps it): a kill in between leaves it
# committed, and the next build's on-run-start removes it like a backup.
PYTHON_MODEL_TMPS = {"intermediate.int_ultrafeedback__critique_sentiment_scores__dbt_tmp"}
COMPARED_SCHEMAS = ("main", "intermediate", "staging", "seeds")
MB = 1 << 20

FAULT_DBT = r'''
"""dbt with fault points for tests/python/test_faults.py: the real dbt CLI, in this process, with
hooks (chosen by environment variables) that print "FAULT-POINT <name>" and stop the process
(SIGSTOP) exactly there, so that the test can kill it at that point."""
import os
import signal
import sys
import threading

sys.path.insert(0, os.getcwd())  # the project (cwd), as for `python -m`: preftools


def fault_point(name):
    print(f"FAULT-POINT {name}", flush=True)
    # SIGSTOP to this thread, not to the process: a signal sent to the process may be taken by
    # another thread, and this one then runs on for a moment (past the fault point: seen in 13 of
    # 20 tries with three threads). Directed at this thread, it stops here; the rest of the process
    # stops with it.
    signal.pthread_kill(threading.get_ident(), signal.SIGSTOP)


if os.environ.get("FAULT_IN_VADER"):
    # Stop while the Python model scores critiques with VADER: right after work goes to a worker
    # pool (the workers are running), or, where the model scores in this process, at the 10th text.
    import concurrent.futures

    class Pool(concurrent.futures.ProcessPoolExecutor):
        def submit(self, *args, **kwargs):  # map() submits through here too
            future = super().submit(*args, **kwargs)
            fault_point("vader-pool")
            return future

    concurrent.futures.ProcessPoolExecutor = Pool  # before preftools.dbt_runtime.sentiment imports it

    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    polarity_scores = SentimentIntensityAnalyzer.polarity_scores
    calls = [0]

    def counted_polarity_scores(self, text):
        calls[0] += 1
        if calls[0] == 10:
            fault_point("vader-in-process")
        return polarity_scores(self, text)

    SentimentIntensityAnalyzer.polarity_scores = counted_polarity_scores

    import preftools.dbt_runtime.sentiment as sentiment

    # a pool even for the few critiques of the test data: the module's threshold, read when scoring
    # or bound as a default argument (chunk=MIN_TEXTS_PER_WORKER), becomes 1
    threshold = getattr(sentiment, "MIN_TEXTS_PER_WORKER", None)
    if threshold is not None:
        sentiment.MIN_TEXTS_PER_WORKER = 1
        for function in list(vars(sentiment).values()):
            if callable(function) and getattr(function, "__defaults__", None):
                function.__defaults__ = tuple(1 if type(d) is int and d == threshold else d
                                              for d in function.__defaults__)

if os.environ.get("FAULT_IN_PARSE"):
    from dbt.parser.manifest import ManifestLoader

    load = ManifestLoader.load

    def stopped_load(self, *args, **kwargs):  # dbt has read the project; parsing starts here
        fault_point("parse")
        return load(self, *args, **kwargs)

    ManifestLoader.load = stopped_load

before_commit = os.environ.get("FAULT_BEFORE_COMMIT")
before_drop = os.environ.get("FAULT_BEFORE_DROP")
if before_commit:
    from dbt.adapters.duckdb.connections import DuckDBConnectionManager

    commit = DuckDBConnectionManager.commit

    def guarded_commit(self):
        if self.get_thread_connection().name.rsplit(".", 1)[-1] == before_commit:
            fault_point(f"before-commit {before_commit}")
        return commit(self)

    DuckDBConnectionManager.commit = guarded_commit
if before_drop:
    from dbt.adapters.duckdb.impl import DuckDBAdapter

    drop = DuckDBAdapter.drop_relation

    def guarded_drop(self, relation):
        if relation.identifier == before_drop:
            fault_point(f"before-drop {before_drop}")
        return drop(self, relation)

    DuckDBAdapter.drop_relation = guarded_drop

from dbt.cli.main import cli

sys.argv[0] = "dbt"
sys.exit(cli())
'''


# --------------------------------------------------------------------------------------------
# processes


def group_members(pgid: int) -> list[tuple[int, str]]:
    """(pid, command line) of the live (not zombie) processes of process group ``pgid``."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
            fields = text[text.rindex(")") + 2:].split()
            if fields[0] == "Z" or int(fields[2]) != pgid:
                continue
            cmd = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, ValueError, IndexError):
            continue
        out.append((int(stat.parent.name), cmd))
    return out


_STARTED: list[Proc] = []


class Proc:
    """A subprocess in its own session (process group), its merged output read line by line."""

    def __init__(self, argv: list[str], env: dict, cwd: Path = REPO):
        self.popen = subprocess.Popen(
            argv, cwd=cwd, env={**env, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, errors="replace", start_new_session=True,
        )
        self.pid = self.popen.pid
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        _STARTED.append(self)

    def _read(self) -> None:
        for line in self.popen.stdout:
            self.lines.append(ANSI.sub("", line.rstrip("\n")))

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def wait_for(self, pattern: str, what: str, timeout: float = STEP_TIMEOUT) -> re.Match:
        """The first output line matching ``pattern``; fails if the process ends or time runs out first."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            lines = self.lines[:]
            for line in lines[seen:]:
                match = regex.search(line)
                if match:
                    return match
            seen = len(lines)
            if self.popen.poll() is not None:
                self._reader.join(timeout=5)
                if not any(regex.search(line) for line in self.lines[seen:]):
                    pytest.fail(f"the process ended (exit {self.popen.returncode}) before {what}; "
                                f"the fault point was never reached:\n{self.text[-4000:]}")
            if time.monotonic() > deadline:
                pytest.fail(f"no {what} within {timeout} s:\n{self.text[-4000:]}")
            time.sleep(0.01)

    def signal_group(self, sig: int) -> None:
        os.killpg(self.pid, sig)

    def wait_stopped(self, timeout: float = 30) -> None:
        """Until the main process is stopped (state T)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                state = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                break
            if state in ("T", "t"):
                return
            time.sleep(0.01)
        pytest.fail(f"process {self.pid} did not stop:\n{self.text[-3000:]}")

    def kill_group(self) -> None:
        """SIGKILL the whole group; returns when no process of it is left."""
        with _suppress_lookup():
            os.killpg(self.pid, signal.SIGKILL)
        self.popen.wait(timeout=60)
        self._reader.join(timeout=10)
        deadline = time.monotonic() + 20
        while group_members(self.pid):
            assert time.monotonic() < deadline, f"processes survived the kill: {group_members(self.pid)}"
            time.sleep(0.05)

    def finish(self, timeout: float = RUN_TIMEOUT) -> int:
        rc = self.popen.wait(timeout=timeout)
        self._reader.join(timeout=10)
        return rc


@contextmanager
def _suppress_lookup():
    try:
        yield
    except ProcessLookupError:
        pass


@pytest.fixture(scope="module", autouse=True)
def _no_process_left_behind():
    yield
    for proc in _STARTED:
        if group_members(proc.pid):
            with _suppress_lookup():
                os.killpg(proc.pid, signal.SIGKILL)
        if proc.popen.poll() is None:
            proc.popen.kill()
            proc.popen.wait(timeout=30)


def holds_file(pid: int, path: Path) -> bool:
    try:
        return any(os.readlink(fd) == str(path) for fd in Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False


def holds_lock(pid: int, path: Path) -> bool:
    """Whether the process holds a lock on the file (DuckDB locks a database file once it has
    opened it; an open descriptor alone can be a plain read of the file): /proc/locks lines read
    "1: POSIX  ADVISORY  READ 1234 fe:00:5678 0 EOF", "->" after the number for a waiter."""
    inode = path.stat().st_ino
    for line in Path("/proc/locks").read_text().splitlines():
        fields = [f for f in line.split() if f != "->"]
        if len(fields) > 5 and fields[4] == str(pid) and fields[5].rsplit(":", 1)[-1] == str(inode):
            return True
    return False


def wait_holding(proc: Proc, path: Path, timeout: float = TOOL_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not holds_file(proc.pid, path):
        if proc.popen.poll() is not None:
            pytest.fail(f"{proc.popen.args} ended before opening {path}:\n{proc.text[-3000:]}")
        assert time.monotonic() < deadline, f"{proc.popen.args} never opened {path}"
        time.sleep(0.01)


# --------------------------------------------------------------------------------------------
# files and warehouses


def sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def tree(root: Path) -> dict[str, str]:
    """relative path -> sha256 of every file under root (hidden ones too), but the export's lock
    file, which holds the PID of the last export."""
    return {str(p.relative_to(root)): sha256(p) for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != ex.LOCK_FILE}


def copy_db(src: Path, dst: Path) -> Path:
    """The warehouse file and its WAL, if any (never copy a file a process is writing)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, dst)
    wal_src, wal_dst = Path(f"{src}.wal"), Path(f"{dst}.wal")
    if wal_src.exists():
        shutil.copy(wal_src, wal_dst)
    elif wal_dst.exists():
        wal_dst.unlink()
    return dst


def tables_of(db: Path, schemas=COMPARED_SCHEMAS) -> list[tuple[str, str]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return [tuple(r) for r in con.execute(
            "select schema_name, table_name from duckdb_tables() where schema_name in "
            f"({', '.join('?' for _ in schemas)}) order by 1, 2", list(schemas)).fetchall()]


def dbt_work_tables(db: Path) -> list[str]:
    """dbt's temporary and backup relations (any schema): a build died between create and drop."""
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("select schema_name, table_name from duckdb_tables() union all "
                           "select schema_name, view_name from duckdb_views() where not internal").fetchall()
    return sorted(f"{s}.{t}" for s, t in rows if DBT_WORK_TABLE.fullmatch(t))


_FINGERPRINTS: dict[tuple, dict[str, tuple]] = {}


def fingerprints(db: Path, schemas=COMPARED_SCHEMAS) -> dict[str, tuple]:
    """schema.table -> (columns and types, row count, sum and xor of the row hashes): equal
    multisets of rows always give equal fingerprints, so different fingerprints prove a difference.
    Cached per file version (the references are fingerprinted once)."""
    stat = db.stat()
    key = (str(db), stat.st_size, stat.st_mtime_ns, tuple(schemas))
    if key not in _FINGERPRINTS:
        out = {}
        with duckdb.connect(str(db), read_only=True) as con:
            tables = con.execute(
                "select schema_name, table_name from duckdb_tables() where schema_name in "
                f"({', '.join('?' for _ in schemas)}) order by 1, 2", list(schemas)).fetchall()
            for schema, table in tables:
                relation = f'"{schema}"."{table}"'
                columns = tuple(con.execute(
                    "select column_name, data_type from duckdb_columns() where schema_name = ? and table_name = ? "
                    "order by column_index", [schema, table]).fetchall())
                count, total, xor = con.execute(
                    f"select count(*), sum(hash(t)::hugeint), bit_xor(hash(t)) from {relation} as t").fetchone()
                out[f"{schema}.{table}"] = (columns, count, total, xor)
        _FINGERPRINTS[key] = out
    return _FINGERPRINTS[key]


def versions(db: Path, refs: dict[str, Path], schemas=("main",)) -> dict[str, list[str]]:
    """For each table of ``db`` in ``schemas``: the names of the references whose same table holds
    exactly the same rows: candidates by fingerprint, each confirmed with EXCEPT ALL both ways (a
    multiset comparison with exact floats)."""
    mine = fingerprints(db, schemas)
    theirs = {name: fingerprints(path, schemas) for name, path in refs.items()}
    out = {}
    con = duckdb.connect()
    try:
        con.execute(f"attach '{db}' as db (read_only)")
        attached = set()
        for table, print_ in mine.items():
            same = []
            for name in refs:
                if theirs[name].get(table) != print_:
                    continue
                if name not in attached:
                    con.execute(f"attach '{refs[name]}' as {name} (read_only)")
                    attached.add(name)
                schema, bare = table.split(".", 1)
                a, b = f'db."{schema}"."{bare}"', f'{name}."{schema}"."{bare}"'
                differing = con.execute(
                    f"select (select count(*) from (select * from {a} except all select * from {b}))"
                    f" + (select count(*) from (select * from {b} except all select * from {a}))").fetchone()[0]
                if differing == 0:
                    same.append(name)
            out[table] = same
        return out
    finally:
        con.close()


def opens(db: Path) -> None:
    """The warehouse opens read-write (DuckDB replays the WAL a killed writer left), then read-only."""
    with duckdb.connect(str(db)) as con:
        con.execute("select count(*) from duckdb_tables()").fetchall()
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("select count(*) from duckdb_tables() where schema_name = 'main'").fetchone()[0] > 0


def assert_each_mart_old_or_new(db: Path, old: Path, new: Path) -> dict[str, list[str]]:
    """Every table of main (dbt's leftovers aside) equals its old or its new version, and none is missing."""
    found = versions(db, {"old": old, "new": new})
    marts = {t: v for t, v in found.items() if not DBT_WORK_TABLE.fullmatch(t.split(".", 1)[1])}
    half = sorted(t for t, v in marts.items() if not v)
    assert not half, f"marts equal to neither their old nor their new version (half-written?): {half}"
    expected = {f"{s}.{t}" for s, t in tables_of(new, ("main",))}
    assert set(marts) == expected, (
        f"missing marts: {sorted(expected - set(marts))}, unexpected: {sorted(set(marts) - expected)}")
    return marts


def one_line_with(text: str, *needles: str) -> str:
    lines = [line for line in text.splitlines() if all(n in line for n in needles)]
    assert lines, f"no line with {needles}:\n{text[-4000:]}"
    return lines[0]


# --------------------------------------------------------------------------------------------
# the lane: every dbt run of this module, one RAW_DATA_DIR / DUCKDB_PATH / target


@dataclass
class Lane:
    root: Path
    fault_dbt: Path
    raw_source: Path | None = None
    raw: Path = field(init=False)
    db_dir: Path = field(init=False)
    db: Path = field(init=False)
    work: Path = field(init=False)

    def __post_init__(self):
        self.raw = self.root / "raw"
        self.db_dir = self.root / "db"
        self.db = self.db_dir / "warehouse.duckdb"
        self.work = self.root / "work"
        self.db_dir.mkdir(parents=True, exist_ok=True)

    def env(self, work: Path | None = None, **extra: str) -> dict:
        return dbt_env(self.raw, self.db, work or self.work, **extra)

    def put_raw(self, source: Path) -> None:
        """RAW_DATA_DIR holds a copy of ``source`` (kept when it already does)."""
        if self.raw_source == source and self.raw.exists():
            return
        shutil.rmtree(self.raw, ignore_errors=True)
        shutil.copytree(source, self.raw)
        self.raw_source = source

    def damage_raw(self) -> None:
        self.raw_source = None  # the next put_raw copies afresh

    def put_warehouse(self, source: Path) -> None:
        for stale in self.db_dir.glob("warehouse.duckdb*"):
            if stale.is_dir():
                shutil.rmtree(stale)
            else:
                stale.unlink()
        copy_db(source, self.db)

    def run(self, args=("build",), work: Path | None = None, timeout: float = RUN_TIMEOUT) -> DbtResult:
        proc = forked_dbt.run(with_registry(list(args), self.raw), self.env(work), REPO, timeout=timeout)
        return DbtResult(proc.returncode, ANSI.sub("", proc.stdout), ANSI.sub("", proc.stderr))

    def start(self, args=("build",), **faults: str) -> Proc:
        return Proc([sys.executable, str(self.fault_dbt), *with_registry(list(args), self.raw)], self.env(**faults))


@pytest.fixture(scope="module")
def lane(tmp_path_factory) -> Lane:
    root = tmp_path_factory.mktemp("fault_lane")
    wrapper = root / "bin" / "dbt"  # named dbt: a lock holder shows as `dbt build`
    wrapper.parent.mkdir()
    wrapper.write_text(FAULT_DBT)
    return Lane(root, wrapper)


@pytest.fixture(scope="module")
def new(warehouse) -> Path:
    """The new version of every mart: the clean session build of raw_dir."""
    return warehouse.path


@pytest.fixture(scope="module")
def aged(warehouse, tmp_path_factory) -> Path:
    """The old version: the session build with one row less in every table of main (and a
    quarter less in intermediate), so that every non-empty mart differs from the new version."""
    db = copy_db(warehouse.path, tmp_path_factory.mktemp("aged") / "aged.duckdb")
    with duckdb.connect(str(db)) as con:
        for schema, table in con.execute("select schema_name, table_name from duckdb_tables() "
                                         "where schema_name in ('main', 'intermediate')").fetchall():
            target = f'"{schema}"."{table}"'
            if schema == "main":
                con.execute(f"delete from {target} where rowid = (select min(rowid) from {target})")
            else:
                con.execute(f"delete from {target} where rowid % 4 = 0")
        con.execute("checkpoint")
    differing = [t for t, v in versions(db, {"new": warehouse.path}).items() if not v]
    assert len(differing) > 10, "the old version must differ from the new one"
    return db


def snapshot(lane: Lane, dst: Path) -> tuple[Path, Path]:
    """Two copies of the lane's warehouse as a kill left it: one to continue the chain from, one to inspect."""
    return (copy_db(lane.db, dst / "as_killed" / "warehouse.duckdb"),
            copy_db(lane.db, dst / "inspect" / "warehouse.duckdb"))


# --------------------------------------------------------------------------------------------
# 1. SIGKILL of dbt build at several points (a chain; see the module docstring)


@dataclass
class Killed:
    chain: Path  # the warehouse as the kill left it (db + WAL), to continue from
    inspect: Path  # a copy to open and compare
    output: str
    before_sha: str | None = None
    notes: dict = field(default_factory=dict)


@pytest.fixture(scope="module")
def killed_in_parse(lane, killed_in_python_model, raw_dir, tmp_path_factory) -> Killed:
    lane.put_raw(raw_dir)
    lane.put_warehouse(killed_in_python_model.chain)
    before = sha256(lane.db)
    proc = lane.start(FAULT_IN_PARSE="1")
    proc.wait_for(r"Registered adapter", "dbt starting")
    proc.wait_for(r"FAULT-POINT parse", "dbt parsing the project")
    proc.wait_stopped()
    proc.kill_group()
    assert not re.search(r"Found \d+ models", proc.text), f"parsing had finished before the kill:\n{proc.text}"
    chain, inspect = snapshot(lane, tmp_path_factory.mktemp("killed_in_parse"))
    return Killed(chain, inspect, proc.text, before_sha=before)


@pytest.fixture(scope="module")
def killed_in_python_model(lane, aged, raw_dir, tmp_path_factory) -> Killed:
    lane.put_raw(raw_dir)
    lane.put_warehouse(aged)
    proc = lane.start(FAULT_IN_VADER="1")
    started = proc.wait_for(r"START python \w+ model (\S+)", "the START of the Python model")
    point = proc.wait_for(r"FAULT-POINT (vader-pool|vader-in-process)", "VADER scoring in the Python model")
    proc.wait_stopped()
    workers = [cmd for pid, cmd in group_members(proc.pid) if pid != proc.pid and "spawn_main" in cmd]
    if point[1] == "vader-pool":
        assert workers, f"no VADER worker process in the group: {group_members(proc.pid)}"
    proc.kill_group()  # and no process of the group (dbt, the workers, the resource tracker) survives
    assert not re.search(rf"OK created python \w+ model {re.escape(started[1])}", proc.text)
    chain, inspect = snapshot(lane, tmp_path_factory.mktemp("killed_in_python_model"))
    return Killed(chain, inspect, proc.text, notes={"model": started[1], "point": point[1], "workers": len(workers)})


@dataclass
class Attempt:
    rc: int
    output: str


@pytest.fixture(scope="module")
def killed_in_sql_model(lane, killed_in_parse, raw_dir, tmp_path_factory) -> Killed:
    """Stopped on the START line of a large SQL model (at the latest before its COMMIT); while it is
    stopped, holding the warehouse, a second build, an export and the report are tried."""
    lane.put_raw(raw_dir)
    lane.put_warehouse(killed_in_parse.chain)
    root = tmp_path_factory.mktemp("killed_in_sql_model")
    proc = lane.start(FAULT_BEFORE_COMMIT=LARGE_MODEL)
    proc.wait_for(rf"START sql \w+ model main\.{LARGE_MODEL}\b", f"the START of main.{LARGE_MODEL}")
    proc.signal_group(signal.SIGSTOP)
    proc.wait_stopped()
    time.sleep(0.2)  # let the reader drain what was written before the stop
    assert not re.search(rf"OK created sql \w+ model main\.{LARGE_MODEL}\b", proc.text), (
        f"main.{LARGE_MODEL} was committed before the stop:\n{proc.text[-3000:]}")

    second = root / "second_build"
    shutil.copytree(lane.work / "target", second / "target")  # its own target/, parsed already
    tools = {"export": ["--export-dir", str(root / "exports"), "--no-progress"],
             "report": ["--out", str(root / "report.html")]}
    tries = {"build": subprocess.Popen([DBT, *with_registry(["build"], lane.raw)], cwd=REPO, env=lane.env(second), stdout=subprocess.PIPE,
                                       stderr=subprocess.STDOUT, text=True)}
    for tool, args in tools.items():  # all three at once: they only start, find the lock and stop
        tries[tool] = subprocess.Popen(
            [sys.executable, "-m", f"preftools.{tool}", "--duckdb-path", str(lane.db), *args], cwd=REPO,
            env={**os.environ, "DUCKDB_PATH": str(lane.db)}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True)
    attempts = {}
    for name, attempt in tries.items():
        try:
            output = attempt.communicate(timeout=RUN_TIMEOUT)[0]
        except subprocess.TimeoutExpired:
            attempt.kill()
            output = attempt.communicate()[0] + "\n(timed out)"
        attempts[name] = Attempt(attempt.returncode, ANSI.sub("", output))
    assert group_members(proc.pid), "the stopped build died while the others tried the warehouse"

    proc.kill_group()
    chain, inspect = snapshot(lane, root)
    return Killed(chain, inspect, proc.text, notes={"attempts": attempts, "pid": proc.pid, "root": root})


@pytest.fixture(scope="module")
def killed_after_commit(lane, killed_in_sql_model, raw_dir, tmp_path_factory) -> Killed:
    lane.put_raw(raw_dir)
    lane.put_warehouse(killed_in_sql_model.chain)
    proc = lane.start(FAULT_BEFORE_DROP=f"{EARLY_MART}__dbt_backup")
    proc.wait_for(rf"FAULT-POINT before-drop {EARLY_MART}__dbt_backup", "the drop of the backup table")
    proc.wait_stopped()
    proc.kill_group()
    chain, inspect = snapshot(lane, tmp_path_factory.mktemp("killed_after_commit"))
    return Killed(chain, inspect, proc.text)


@pytest.fixture(scope="module")
def rerun_after_kills(lane, killed_after_commit, raw_dir, tmp_path_factory) -> tuple[DbtResult, Path]:
    lane.put_raw(raw_dir)
    lane.put_warehouse(killed_after_commit.chain)
    result = lane.run()
    out = copy_db(lane.db, tmp_path_factory.mktemp("rerun") / "warehouse.duckdb")
    return result, out


def test_kill_during_parse_leaves_the_warehouse_untouched(killed_in_parse, killed_in_sql_model, aged, new):
    """dbt does not open the warehouse before it has parsed: the file is byte for byte what it was."""
    k = killed_in_parse
    assert sha256(k.inspect) == k.before_sha, "dbt wrote to the warehouse while parsing"
    opens(k.inspect)
    assert_each_mart_old_or_new(k.inspect, aged, new)
    # the rerun (the next run of the chain) parsed and built past that point
    assert re.search(r"Found \d+ models", killed_in_sql_model.output)


def test_kill_during_the_python_model_leaves_whole_marts(killed_in_python_model, killed_in_sql_model, aged, new):
    """Killed with VADER scoring: the warehouse (and its WAL) opens, every mart is its old or new
    version, no process of the group survives. Another model running beside it may have been
    killed between its commit and the drop of its `__dbt_backup`: the next build removes every
    such relation before it starts, and says so."""
    k = killed_in_python_model
    # killed while VADER scored: with the worker pool running (and no worker survived, see kill_group),
    # or in the dbt process itself where the model scores few texts there
    assert k.notes["point"] == "vader-in-process" or k.notes["workers"] >= 1
    opens(k.inspect)
    assert_each_mart_old_or_new(k.inspect, aged, new)
    for leftover in dbt_work_tables(k.inspect):
        assert f"removed {leftover}, left by an interrupted build" in killed_in_sql_model.output, leftover
    # the rerun went past the Python model
    assert re.search(rf"OK created python \w+ model {re.escape(k.notes['model'])}", killed_in_sql_model.output)


def test_kill_during_a_large_sql_model_leaves_whole_marts(killed_in_sql_model, rerun_after_kills, aged, new):
    """Killed inside the model's transaction (its table built under a temporary name, not committed):
    the mart keeps its old version, the marts committed before it have their new one, and no
    uncommitted `__dbt_tmp` table is visible."""
    k = killed_in_sql_model
    opens(k.inspect)
    marts = assert_each_mart_old_or_new(k.inspect, aged, new)
    assert "old" in marts[f"main.{LARGE_MODEL}"], f"main.{LARGE_MODEL} changed although never committed"
    rebuilt = [t for t, v in marts.items() if v == ["new"]]
    assert rebuilt, "no mart was rebuilt before the kill: the kill point came too early to mean anything"
    # a model running beside it may have been killed between its commit and its backup's drop:
    # committed backups only (the next build removes them), never an uncommitted __dbt_tmp
    assert all(t.endswith("__dbt_backup") for t in dbt_work_tables(k.inspect)), "an uncommitted __dbt_tmp is visible"
    # the rerun built it (the next run of the chain stops earlier, at EARLY_MART)
    assert re.search(rf"OK created sql \w+ model main\.{LARGE_MODEL}\b", rerun_after_kills[0].output)


def test_second_build_while_a_build_runs_names_the_holder(killed_in_sql_model, lane):
    attempt = killed_in_sql_model.notes["attempts"]["build"]
    pid = killed_in_sql_model.notes["pid"]
    assert attempt.rc != 0
    assert "Traceback" not in attempt.output
    line = one_line_with(attempt.output, f"The warehouse file {lane.db} is locked by", f"(PID {pid})")
    assert "running `dbt build" in line, line  # `dbt build` and its arguments (the registry vars)
    assert "nothing was built" in line, line


@pytest.mark.parametrize("tool", ["export", "report"])
def test_export_and_report_while_a_build_runs_name_the_holder(killed_in_sql_model, lane, tool):
    attempt = killed_in_sql_model.notes["attempts"][tool]
    pid = killed_in_sql_model.notes["pid"]
    assert attempt.rc == 2, attempt.output
    lines = [line for line in attempt.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in attempt.output, attempt.output
    assert lines[0].startswith(f"{tool}: error: the warehouse {lane.db} is locked by")
    assert f"(PID {pid})" in lines[0], lines[0]
    if tool == "export":
        assert not (killed_in_sql_model.notes["root"] / "exports").exists()
    else:
        assert not (killed_in_sql_model.notes["root"] / "report.html").exists()


def test_kill_after_commit_leaves_backup_tables_the_export_skips(killed_after_commit, killed_in_sql_model, aged, new,
                                                              tmp_path, capsys):
    """dbt-duckdb drops `<model>__dbt_backup` in a statement after the COMMIT: a kill in between
    leaves it in schema main (with several dbt threads, also the backup of any other model, of any
    schema, that was at the same step, or the Python model's committed new table before its swap).
    The marts are whole; each backup holds its table's previous version; the export does not take
    them for marts."""
    k = killed_after_commit
    opens(k.inspect)
    marts = assert_each_mart_old_or_new(k.inspect, aged, new)
    assert marts[f"main.{EARLY_MART}"] == ["new"]
    leftovers = dbt_work_tables(k.inspect)
    assert f"main.{EARLY_MART}__dbt_backup" in leftovers, leftovers
    backups = [t for t in leftovers if t not in PYTHON_MODEL_TMPS]
    assert all(t.endswith("__dbt_backup") for t in backups), f"an uncommitted __dbt_tmp is visible: {leftovers}"
    opens(killed_in_sql_model.inspect)  # the state this run started from
    with duckdb.connect() as con:
        con.execute(f"attach '{k.inspect}' as k (read_only)")
        con.execute(f"attach '{killed_in_sql_model.inspect}' as before (read_only)")
        for leftover in backups:
            schema, backup = leftover.split(".", 1)
            table = backup.removesuffix("__dbt_backup")
            assert con.execute(f"""select count(*) from (
                (select * from k."{schema}"."{backup}" except all select * from before."{schema}"."{table}")
                union all (select * from before."{schema}"."{table}" except all select * from k."{schema}"."{backup}"))
            """).fetchone()[0] == 0, f"{leftover} is not the previous version of {schema}.{table}"
    with duckdb.connect(str(k.inspect), read_only=True) as con:
        assert not set(ex.list_marts(con)) & {t.split(".", 1)[1] for t in leftovers}
    manifest = ex.export(k.inspect, tmp_path / "exports", [EARLY_MART], progress=False)
    assert list(manifest["marts"]) == [EARLY_MART]
    warning = one_line_with(capsys.readouterr().err, "export: warning:", f"main.{EARLY_MART}__dbt_backup")
    assert "interrupted dbt build" in warning
    assert not [p for p in (tmp_path / "exports").iterdir() if p.name.endswith("__dbt_backup")]


def test_rerun_after_the_kills_finishes_and_equals_a_clean_build(rerun_after_kills, new):
    """A plain `dbt build` on what the four kills left finishes (tests included) and gives the same
    tables as the clean session build, and drops the backup tables the last kill left, naming each."""
    result, db = rerun_after_kills
    assert result.returncode == 0, result.output[-6000:]
    assert "Completed successfully" in result.output
    assert f"removed main.{EARLY_MART}__dbt_backup, left by an interrupted build" in result.output
    assert dbt_work_tables(db) == []
    found = versions(db, {"clean": new}, COMPARED_SCHEMAS)
    assert set(found) == {f"{s}.{t}" for s, t in tables_of(new)}
    differing = sorted(t for t, v in found.items() if not v)
    assert not differing, f"tables that differ from a clean build after the rerun: {differing}"
    assert dbt_work_tables(db) == [], "the rerun left (or kept) a dbt temporary/backup table"


# --------------------------------------------------------------------------------------------
# 2. export, publish and fetch killed


@pytest.fixture(scope="module")
def exports(warehouse, aged, tmp_path_factory) -> dict[str, Path]:
    """Exports of the session warehouse and of the aged one."""
    root = tmp_path_factory.mktemp("fault_exports")
    out = {}
    for name, db in (("session", warehouse.path), ("aged", aged)):
        ex.export(db, root / name, progress=False)
        out[name] = root / name
    return out


def export_trees(root: Path) -> dict[str, dict[str, str]]:
    """mart folder -> its files (relative path -> sha256)."""
    return {p.name: tree(p) for p in sorted(root.iterdir()) if p.is_dir() and not p.name.startswith(".")}


KILL_DURING_SWAP = r'''
import os, signal, sys
from preftools.outputs import export as ex

steps = {"n": 0, "publishing": False}

def step():
    if steps["publishing"]:
        steps["n"] += 1
        if steps["n"] > int(os.environ["KILL_AFTER_STEPS"]):
            os.kill(os.getpid(), signal.SIGKILL)

rename = os.rename
def counting_rename(*args, **kwargs):
    step()
    return rename(*args, **kwargs)
os.rename = counting_rename
if hasattr(ex, "_exchange"):
    exchange = ex._exchange
    def counting_exchange(*args):
        step()
        return exchange(*args)
    ex._exchange = counting_exchange

publish = ex.publish
def marked_publish(*args, **kwargs):
    steps["publishing"] = True
    return publish(*args, **kwargs)
ex.publish = marked_publish
sys.exit(ex.main(sys.argv[1:]))
'''


def test_export_killed_while_swapping_leaves_every_mart_folder_whole(exports, aged, tmp_path):
    """test_export.py kills an export while it writes its files; this one kills it while it swaps
    the finished mart folders into place (after 3 rename/exchange steps): every mart folder is there
    and whole, each the previous or the new version; the manifest is the previous one, so publish
    refuses the folders that changed; the next export completes."""
    out = tmp_path / "exports"
    shutil.copytree(exports["session"], out)  # the previous export; the new one is of the aged warehouse
    old_manifest = (out / "manifest.json").read_bytes()
    proc = subprocess.run(
        [sys.executable, "-c", KILL_DURING_SWAP, "--duckdb-path", str(aged), "--export-dir", str(out), "--no-progress"],
        cwd=REPO, env={**os.environ, "KILL_AFTER_STEPS": "3"}, capture_output=True, text=True, timeout=TOOL_TIMEOUT)
    assert proc.returncode == -signal.SIGKILL, (proc.returncode, proc.stderr)

    previous, following = export_trees(exports["session"]), export_trees(exports["aged"])
    now = export_trees(out)
    assert sorted(now) == sorted(previous), f"mart folders missing after the kill: {sorted(set(previous) - set(now))}"
    swapped = [m for m in now if now[m] == following[m] and now[m] != previous[m]]
    half = [m for m in now if now[m] not in (previous[m], following[m])]
    assert not half, f"mart folders that are neither the previous nor the new export: {half}"
    assert swapped, "the kill came before any folder was swapped"
    assert (out / "manifest.json").read_bytes() == old_manifest

    from preftools.outputs import publish as pub

    rows = {m: int(e.get("num_rows") or 0) for m, e in json.loads(old_manifest)["marts"].items()}
    for mart in now:
        if mart in swapped:
            with pytest.raises(pub.PublishError, match="run the export again"):
                pub.verify_export(out, mart)
        elif rows[mart] == 0:  # whole, but publish refuses an empty mart
            with pytest.raises(pub.PublishError, match="has no rows"):
                pub.verify_export(out, mart)
        else:
            pub.verify_export(out, mart)

    ex.export(aged, out, progress=False)
    assert export_trees(out) == following
    assert not [p for p in out.iterdir() if p.name.startswith(".export-tmp-")]


def publish_env(tmp_path: Path, endpoint: str) -> dict:
    from hub_standin import TOKEN, hub_env

    return hub_env(endpoint, tmp_path / "hf_home", token=TOKEN, unset=("EXPORT_DIR",))


def test_publish_killed_mid_commit_leaves_the_export_untouched(exports, tmp_path):
    """The stand-in Hub (hub_standin.py) holds the commit request until the publisher is killed:
    the export folder is byte for byte what it was (publish only reads it), nothing was committed,
    and publishing again uploads the mart."""
    import test_publish as tp
    from hub_standin import FakeHub, make_handler, serving

    out = tmp_path / "exports"
    shutil.copytree(exports["session"], out)
    mart = "rever_summary" if (out / "rever_summary").is_dir() else sorted(export_trees(out))[0]
    before = tree(out)
    hub = FakeHub()
    stall, committing, release = threading.Event(), threading.Event(), threading.Event()
    stall.set()

    class StallingCommit(make_handler(hub)):
        def _commit(self, repo_id, repo, branch, body):
            if not stall.is_set():
                return super()._commit(repo_id, repo, branch, body)
            committing.set()
            release.wait(TOOL_TIMEOUT)  # the publisher is killed meanwhile: nothing is committed
            return self._error(503, "stand-in Hub: the client went away")

    with serving(hub, StallingCommit):
        endpoint = hub.endpoint
        proc = Proc([sys.executable, "-m", "preftools.publish", "--export-dir", str(out), "--repo", tp.REPO_ID,
                     "--mart", mart], publish_env(tmp_path, endpoint), cwd=tmp_path)
        try:
            deadline = time.monotonic() + TOOL_TIMEOUT
            while not committing.wait(0.05):
                if proc.popen.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"publish never reached the commit:\n{proc.text}")
            proc.kill_group()
        finally:
            release.set()
        assert tree(out) == before, "publish changed the local export"
        assert hub.commits == [] and hub.files(tp.REPO_ID) == {}

        stall.clear()
        again = subprocess.run([sys.executable, "-m", "preftools.publish", "--export-dir", str(out), "--repo",
                                tp.REPO_ID, "--mart", mart], cwd=tmp_path, env=publish_env(tmp_path, endpoint),
                               capture_output=True, text=True, timeout=TOOL_TIMEOUT)
    assert again.returncode == 0, again.stderr
    assert tree(out) == before
    assert hub.files(tp.REPO_ID) == {p.relative_to(out / mart).as_posix(): p.read_bytes()
                           for p in sorted((out / mart).rglob("*")) if p.is_file()}


def size_of(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def fetch_env(tmp_path: Path, endpoint: str) -> dict:
    from hub_standin import hub_env

    return hub_env(endpoint, tmp_path / "hf_home", unset=("RAW_DATA_DIR", "TRANSFORMERS_OFFLINE"))


def test_fetch_killed_mid_download_is_never_taken_for_complete(raw_dir, tmp_path):
    """Two datasets from the stand-in Hub (hub_standin.py); it sends half of the second one's file and
    stalls; the fetcher is killed. huggingface_hub writes to a process-unique `.incomplete` file under
    `<dataset>/.cache/` and renames it only when complete: no file at the final name, nothing the dbt
    sources (`<dataset>/data/*.parquet`) would read, no lock entry; a rerun fetches only what is missing."""
    from hub_standin import FakeHub, make_handler, serving

    first, second = DATASETS[0], DATASETS[1]
    hub = FakeHub()
    for ds in (first, second):
        files = sorted(ds.data_dir(raw_dir).glob("*.parquet"))
        hub.repos[ds.hub_id] = {f"data/{f.name}": f.read_bytes() for f in files}
    stalled_name = sorted(hub.repos[second.hub_id])[0]
    # huggingface_hub writes what it receives in chunks of 10 MiB: the stalled file is a valid
    # Parquet file of ~24 MB (the dataset's rows plus an extra, incompressible column), so that
    # the half sent before the stall reaches the disk
    table = pq.read_table(io.BytesIO(hub.repos[second.hub_id][stalled_name]))
    rnd = random.Random(3)
    pad = pa.array([rnd.randbytes(24 * MB // table.num_rows) for _ in range(table.num_rows)], pa.binary())
    buffer = io.BytesIO()
    pq.write_table(table.append_column("padding", pad), buffer, compression="none")
    hub.repos[second.hub_id][stalled_name] = buffer.getvalue()
    stall, sending, release = threading.Event(), threading.Event(), threading.Event()
    stall.set()

    class Stalling(make_handler(hub)):
        def _write_body(self, body: bytes):
            path = unquote(urlsplit(self.path).path)
            if not (self.command == "GET" and stall.is_set() and path.endswith(f"/{stalled_name}")
                    and path.startswith(f"/datasets/{second.hub_id}/resolve/")):
                return super()._write_body(body)
            try:
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                sending.set()
                release.wait(TOOL_TIMEOUT)
                self.wfile.write(body[len(body) // 2:])
            except OSError:
                pass

    raw = tmp_path / "raw"
    args = [sys.executable, "-m", "preftools.fetch", "--raw-data-dir", str(raw),
            "--datasets", f"{first.key},{second.key}"]
    with serving(hub, Stalling):
        endpoint = hub.endpoint
        proc = Proc(args, fetch_env(tmp_path, endpoint), cwd=tmp_path)
        try:
            deadline = time.monotonic() + TOOL_TIMEOUT
            partial = []
            while not partial:
                partial = [p for p in (raw / second.hub_id).rglob("*.incomplete") if size_of(p) > 0] \
                    if sending.is_set() else []
                if proc.popen.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the fetch never started the stalled download:\n{proc.text}")
                time.sleep(0.02)
            proc.kill_group()
        finally:
            release.set()

        assert not list(second.data_dir(raw).glob("*.parquet")), "a partial download sits at a final name"
        assert all(p.relative_to(raw / second.hub_id).parts[0] == ".cache" for p in partial), partial
        first_files = sorted(first.data_dir(raw).glob("*.parquet"))
        assert {f"data/{p.name}": p.read_bytes() for p in first_files} == hub.repos[first.hub_id]
        lock = raw / "fetch.lock.json"
        assert not lock.exists() or second.key not in json.loads(lock.read_text()).get("datasets", {})

        stall.clear()
        hub.requests.clear()
        again = subprocess.run(args, cwd=tmp_path, env=fetch_env(tmp_path, endpoint), capture_output=True,
                               text=True, timeout=TOOL_TIMEOUT)
    assert again.returncode == 0, again.stderr
    for ds in (first, second):
        got = {f"data/{p.name}": p.read_bytes() for p in sorted(ds.data_dir(raw).glob("*.parquet"))}
        assert got == hub.repos[ds.hub_id], ds.key
    downloads = [p for m, p in hub.requests if m == "GET" and "/resolve/" in p]
    assert downloads and all(second.hub_id in p for p in downloads), (
        f"the complete dataset was fetched again: {downloads}")


# --------------------------------------------------------------------------------------------
# 3. corrupt raw files


def damage(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    if how in ("truncated", "truncated_json"):
        data = data[: len(data) // 2]
    elif how == "garbage":
        data = bytearray(random.Random(17).randbytes(len(data)))
    elif how == "corrupt_row_group":
        # the page header of the largest column chunk overwritten; the footer stays valid
        meta = pq.ParquetFile(path).metadata.row_group(0)
        chunk = max((meta.column(i) for i in range(meta.num_columns)), key=lambda c: c.total_compressed_size)
        data[chunk.data_page_offset: chunk.data_page_offset + 32] = b"\xff" * 32
    path.write_bytes(bytes(data))
    if how == "corrupt_row_group":
        assert pq.read_metadata(path).num_rows > 0  # the footer still reads
        with pytest.raises(Exception), duckdb.connect() as con:  # noqa: B017 - any reader error
            con.execute("select * from read_parquet(?)", [str(path)]).fetchall()


def test_a_failure_that_is_not_a_raw_file_names_no_raw_file(raw_dir, monkeypatch):
    """A statement that reads the raw files through the staging views names no file; on a failure
    every raw file is checked, and healthy files must not be reported (an Out of Memory in a mart
    is not a damaged download)."""
    from preftools.dbt_runtime.lock_check import raw_file_message, unreadable_file

    files = [f for d in DATASETS_BY_KEY.values() for f in d.data_files(raw_dir)]
    assert any(f.suffix == ".jsonl" for f in files)  # the generator writes ReVeR's rubrics as JSON Lines
    assert files and all(unreadable_file(str(f)) is None for f in files)
    monkeypatch.setenv("RAW_DATA_DIR", str(raw_dir))
    sql = 'create table "main"."ultrafeedback_curated__dbt_tmp" as (select * from "staging"."stg_ultrafeedback__prompts")'
    assert raw_file_message("Out of Memory Error: failed to pin block", sql) is None


@pytest.mark.parametrize("how", ["truncated", "corrupt_row_group", "garbage", "truncated_json"])
def test_corrupt_raw_file_fails_naming_it_and_keeps_the_marts(lane, raw_dir, new, how):
    """A copy of the session warehouse, an UltraFeedback file (or ReVeR's JSON Lines rubrics)
    damaged: the build fails with one line naming the file (the plugin reads the files of the failed
    statement again to find it; DuckDB's own message for a damaged page names no file), no
    traceback, and the marts equal what they were."""
    lane.put_raw(raw_dir)
    lane.put_warehouse(new)
    lane.damage_raw()
    key = "rever_rubric" if how == "truncated_json" else "ultrafeedback"
    bad = DATASETS_BY_KEY[key].data_files(lane.raw)[0]
    damage(bad, how)
    before = sha256(lane.db)
    result = lane.run()
    assert result.returncode != 0, f"the build succeeded on a {how} file"
    assert "Traceback" not in result.output
    line = one_line_with(result.output, f"Raw file {bad} cannot be read")
    assert "nothing built from it was changed" in line and f"`preftools fetch --raw-data-dir {lane.raw}`" in line, line
    if how != "corrupt_row_group":  # stopped by the input check before anything was built
        assert sha256(lane.db) == before, "the failed input check changed the warehouse"
        return
    opens(lane.db)
    found = versions(lane.db, {"before": new})
    assert {t for t, v in found.items() if v != ["before"]} == set(), "a mart changed"
    assert set(found) == {f"main.{t}" for _, t in tables_of(new, ("main",))}


# --------------------------------------------------------------------------------------------
# 4. a build while an export or the report reads the warehouse


@pytest.mark.parametrize("tool", ["export", "report"])
def test_build_while_export_or_report_reads_names_the_holder(lane, raw_dir, new, tool, tmp_path):
    """DuckDB's read-only readers and a writer in another process exclude each other: a build while an
    export or the report holds the file fails at once, naming the holder and its command; the reader
    then finishes normally and the warehouse is byte for byte unchanged."""
    lane.put_raw(raw_dir)
    lane.put_warehouse(new)
    before = sha256(lane.db)
    args = {"export": ["--export-dir", str(tmp_path / "exports"), "--no-progress"],
            "report": ["--out", str(tmp_path / "report.html")]}[tool]
    for _ in range(5):  # the report holds its connection for about a second: stop it inside that window
        reader = Proc([sys.executable, "-m", f"preftools.{tool}", "--duckdb-path", str(lane.db), *args],
                      dict(os.environ))
        wait_holding(reader, lane.db)
        reader.signal_group(signal.SIGSTOP)  # holds its read-only connection while the build tries
        reader.wait_stopped()
        if holds_lock(reader.pid, lane.db):
            break
        reader.signal_group(signal.SIGCONT)
        assert reader.finish(TOOL_TIMEOUT) == 0, reader.text
    else:
        pytest.fail(f"could not stop {tool} while it held the warehouse")
    try:
        result = lane.run()
    finally:
        reader.signal_group(signal.SIGCONT)
    assert result.returncode != 0 and "Traceback" not in result.output
    line = one_line_with(result.output, f"The warehouse file {lane.db} is locked by", f"(PID {reader.pid})")
    assert f"preftools.{tool}" in line, line
    assert reader.finish(TOOL_TIMEOUT) == 0, reader.text
    assert sha256(lane.db) == before, "the refused build changed the warehouse"
    if tool == "export":
        manifest = json.loads((tmp_path / "exports" / "manifest.json").read_text())
        with duckdb.connect(str(lane.db), read_only=True) as con:
            for mart, entry in manifest["marts"].items():
                assert entry["num_rows"] == con.execute(f'select count(*) from main."{mart}"').fetchone()[0]
                for f in entry["files"]:
                    assert sha256(tmp_path / "exports" / f["path"]) == f["sha256"]
    else:
        assert (tmp_path / "report.html").stat().st_size > 0


# --------------------------------------------------------------------------------------------
# 5. a full disk (a tmpfs; needs root and mount)


@contextmanager
def tmpfs(mount_point: Path, size_bytes: int):
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("a full disk needs a tmpfs: run as root with mount(8) available")
    mount_point.mkdir(parents=True, exist_ok=True)
    size_kb = -(-size_bytes // 1024)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(mount_point)],
                          capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({(done.stderr or done.stdout).strip()}): full-disk tests skipped")
    try:
        yield mount_point
    finally:
        if subprocess.run(["umount", str(mount_point)], capture_output=True, timeout=60).returncode != 0:
            subprocess.run(["umount", "-l", str(mount_point)], capture_output=True, timeout=60)


def fill(mount_point: Path, leave_bytes: int) -> Path:
    """A file that leaves about ``leave_bytes`` free on the file system of ``mount_point``."""
    st = os.statvfs(mount_point)
    size = st.f_bavail * st.f_frsize - leave_bytes
    filler = mount_point / "filler"
    with open(filler, "wb") as fh:
        chunk = b"\0" * (1 << 20)
        while size > 0:
            fh.write(chunk[: min(size, len(chunk))])
            size -= len(chunk)
    return filler


def test_full_disk_during_a_build_says_which_disk_and_keeps_whole_marts(lane, raw_dir, aged, new):
    """The old warehouse on a tmpfs with 6 MB free: the build fails; each failure is one line naming
    the file and the disk (the plugin's translation of DuckDB's error); once space is freed the
    warehouse opens and every mart is whole, its old or its new version."""
    lane.put_raw(raw_dir)
    size = aged.stat().st_size
    with tmpfs(lane.db_dir, size + 24 * MB) as mount:  # mounted over the lane's warehouse folder
        copy_db(aged, lane.db)
        filler = fill(mount, 6 * MB)  # a rebuild writes far more than 6 MB
        result = lane.run()
        assert result.returncode != 0, "the build succeeded on a full disk"
        out = result.output
        assert "Traceback" not in out
        assert "TransactionContext Error" not in out and "Could not write file" not in out, out[-4000:]
        line = one_line_with(out, "No space left on device: DuckDB could not write", str(mount))
        assert f"(the disk mounted at {mount}," in line, line
        assert "keeps its previous version" in line and "none is half-written" in line, line
        filler.unlink()  # space again
        opens(lane.db)
        marts = assert_each_mart_old_or_new(lane.db, aged, new)
        assert any("new" not in v for v in marts.values()), "every mart was rebuilt despite the full disk"
        assert dbt_work_tables(lane.db) == []


def test_full_disk_during_an_export_keeps_the_previous_export(exports, warehouse, tmp_path):
    """An export over the previous one on a tmpfs with room for a third of it: one line naming the
    path and the disk and saying the previous export is intact, which it is, with no partial file."""
    previous = exports["session"]
    size = sum(p.stat().st_size for p in previous.rglob("*") if p.is_file())
    with tmpfs(tmp_path / "disk", size + 4 * MB) as mount:
        out = mount / "exports"
        shutil.copytree(previous, out)
        before = tree(out)
        fill(mount, size // 3)  # room for a third of a new export
        proc = subprocess.run([sys.executable, "-m", "preftools.export", "--duckdb-path", str(warehouse.path),
                               "--export-dir", str(out), "--no-progress"], cwd=REPO, capture_output=True,
                              text=True, timeout=TOOL_TIMEOUT)
        assert proc.returncode == 2, proc.stderr
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert "no space left on device" in lines[0] and f"(the disk mounted at {mount}," in lines[0], lines[0]
        assert "the previous export is intact" in lines[0], lines[0]
        assert tree(out) == before
        assert not [p for p in out.iterdir() if p.name.startswith(".export-tmp-")]
