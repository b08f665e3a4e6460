"""The Spark build on a Spark standalone cluster (executors in other processes) gives the same
marts as DuckDB.

Starts a standalone master and two workers on 127.0.0.1 (pyspark's own ``spark-class``, free
ports, printed), sized for this 2-core machine: each worker offers 1 core and
``SPARK_WORKER_MEMORY`` (6g), each executor gets 1 core and ``SPARK_EXECUTOR_MEMORY`` (5g), the
driver ``SPARK_DRIVER_MEMORY`` (4g). Then ``dbt build --target spark_cluster`` runs from an empty
working directory (``--project-dir`` names the repo), with the raw data and the warehouse as
``file://`` URIs, the Derby catalog in its own folder, and the VADER step's interpreter a Python
without vaderSentiment (``SPARK_CLUSTER_PYTHON``, default ``/usr/bin/python3``): the package reaches
the executors only as the zip the job ships (``spark.archives``), and the daemons get no virtualenv,
PYTHONPATH or working directory of this process. The cluster is stopped whatever happens (every
process of its sessions, checked). The same raw data is built on DuckDB, and every mart is compared
with ``tests/python/test_spark.py``'s comparison (same tables, columns, types and rows).

Wall time and peak RSS (process trees, /proc sampled every 0.25 s) of the DuckDB build, the
driver (dbt + the Spark driver JVM) and each worker (daemon + executor JVM + VADER processes) are
printed, and written as JSON to ``SPARK_CLUSTER_REPORT`` when set.

``make test-spark-cluster`` on the bundled sample; the scale-4 comparison of the README:
``make test-spark-cluster SPARK_TEST_RAW_DATA_DIR=/tmp/scale4 SPARK_CLUSTER_REPORT=scale4.json``
(``SPARK_CLUSTER_DUCKDB_WAREHOUSE=<file>`` compares with a DuckDB warehouse already built on the
same data and code instead of building one).
Skipped when pyspark, dbt-spark or Java is missing, or not on Linux (/proc).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from zlib import crc32

import duckdb
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.dataset as ds
import pytest

from conftest import REPO, DbtResult, dbt_env

if not sys.platform.startswith("linux"):
    pytest.skip("the cluster test reads /proc (Linux)", allow_module_level=True)

# Skips the module when pyspark, dbt-spark or Java is missing (test_spark's own checks).
from test_spark import MART_SCHEMA, failed_nodes, table_differences  # noqa: E402

from preftools.devtools.spark_cluster import (  # noqa: E402
    PeakRss, StandaloneCluster, free_ports, gib, session_processes, start_in_session, stop_session,
    vader_archive,
)

pytestmark = [pytest.mark.spark, pytest.mark.slow]

RAW_DIR = Path(os.environ.get("SPARK_TEST_RAW_DATA_DIR", REPO / "sample_data")).resolve()
DBT = str(Path(sys.executable).parent / "dbt")
WORKERS = 2
# A Python without vaderSentiment runs the VADER step on the executors: it can only import the
# shipped archive (test_executor_python_lacks_vader checks that it has no copy of its own).
EXECUTOR_PYTHON = os.environ.get("SPARK_CLUSTER_PYTHON") or shutil.which("python3", path="/usr/bin:/bin") or sys.executable
# A DuckDB warehouse already built on the same raw data with the same code: compared against
# instead of a new DuckDB build (at scale 4 that build takes a quarter of an hour).
REUSE_DUCKDB = os.environ.get("SPARK_CLUSTER_DUCKDB_WAREHOUSE", "")


@dataclass
class Run:
    result: DbtResult
    wall_seconds: float
    peak_rss: dict[str, int]


@dataclass
class ClusterBuilds:
    duckdb_path: Path
    warehouse: Path
    duckdb: Run
    spark: Run
    ports: dict = field(default_factory=dict)
    archive_unpacked: dict[str, list[str]] = field(default_factory=dict)
    leftover: list[int] = field(default_factory=list)
    cluster_error: str = ""


def run_dbt_measured(args: list[str], env: dict, cwd: Path, rss: PeakRss, name: str, log: Path) -> Run:
    """dbt in its own process session, its tree's RSS sampled as ``name``; whatever it leaves
    (a Spark driver JVM) is stopped afterwards."""
    started = time.monotonic()
    with open(log, "w") as out:
        proc = start_in_session([DBT, *args], cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        rss.watch(name, proc.pid)
        try:
            code = proc.wait()
        finally:
            stop_session(proc.pid)
    wall = time.monotonic() - started
    rss.sample()
    return Run(DbtResult(code, log.read_text(errors="replace"), ""), wall, {name: rss.peaks[name]})


@pytest.fixture(scope="module")
def builds(request, tmp_path_factory) -> ClusterBuilds:
    if "spark" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("the cluster build runs with `make test-spark-cluster` (pytest -m spark)")
    if not (RAW_DIR / "argilla").is_dir():
        pytest.skip(f"no raw data at {RAW_DIR} (the bundled sample_data, or SPARK_TEST_RAW_DATA_DIR)")
    work = tmp_path_factory.mktemp("spark_cluster")
    duckdb_path = work / "duckdb" / "warehouse.duckdb"
    warehouse = work / "spark" / "warehouse"
    metastore = work / "spark" / "metastore"
    driver_cwd = work / "driver-cwd"  # empty: nothing may be found relative to it
    for d in (duckdb_path.parent, warehouse.parent, metastore, driver_cwd):
        d.mkdir(parents=True, exist_ok=True)
    archive = vader_archive(work / "ship" / "vader.zip")

    with PeakRss() as rss:
        if REUSE_DUCKDB:
            duckdb_path = Path(REUSE_DUCKDB).resolve()
            assert duckdb_path.is_file(), f"SPARK_CLUSTER_DUCKDB_WAREHOUSE={REUSE_DUCKDB}: no such file"
            duck = Run(DbtResult(0, "", ""), 0.0, {"duckdb": 0})
            print(f"\nDuckDB warehouse reused, not built: {duckdb_path}")
        else:
            # The reference build runs as `make test-spark`'s does, from the repo; only the
            # cluster's driver below runs from an empty folder.
            duck = run_dbt_measured(
                ["build"], dbt_env(RAW_DIR, duckdb_path, work / "duckdb"),
                REPO, rss, "duckdb", work / "duckdb" / "dbt.log")
            print(f"\nDuckDB build: {duck.wall_seconds:.0f} s, peak RSS {gib(duck.peak_rss['duckdb'])} (exit {duck.result.returncode})")

        cluster = StandaloneCluster(
            work / "cluster", workers=WORKERS, worker_cores=int(os.environ.get("SPARK_WORKER_CORES", "1")),
            worker_memory=os.environ.get("SPARK_WORKER_MEMORY", "6g"))
        driver_port, block_manager_port = free_ports(2)
        builds = ClusterBuilds(duckdb_path, warehouse, duck, Run(DbtResult(1, "", ""), 0.0, {}))
        try:
            with cluster:
                builds.ports = {**cluster.ports(), "driver": {"port": driver_port, "blockManager": block_manager_port}}
                print(f"Spark standalone cluster {cluster.master_url}; ports: {json.dumps(builds.ports)}")
                for d in cluster.daemons:
                    rss.watch(d.name, d.process.pid)
                env = dbt_env(
                    RAW_DIR.as_uri(), duckdb_path, work / "spark",
                    DBT_PROJECT_DIR=str(REPO),
                    SPARK_MASTER=cluster.master_url,
                    SPARK_DRIVER_PORT=str(driver_port),
                    SPARK_DRIVER_BLOCK_MANAGER_PORT=str(block_manager_port),
                    SPARK_WAREHOUSE_DIR=warehouse.as_uri(),
                    SPARK_METASTORE_DIR=str(metastore),
                    SPARK_VADER_ARCHIVE=archive.as_uri(),
                    PYSPARK_PYTHON=EXECUTOR_PYTHON,
                )
                spark = run_dbt_measured(
                    # Unit tests stay on DuckDB, as in test_spark.py (their fixtures are DuckDB SQL).
                    ["build", "--project-dir", str(REPO), "--target", "spark_cluster", "--exclude-resource-type", "unit_test"],
                    env, driver_cwd, rss, "driver", work / "spark" / "dbt.log")
                rss.sample()
                spark.peak_rss.update({d.name: rss.peaks[d.name] for d in cluster.daemons})
                builds.spark = spark
                # What each executor's working directory received: the unpacked archive.
                for d in cluster.worker_daemons:
                    builds.archive_unpacked[d.name] = sorted(
                        str(p.relative_to(d.work_dir)) for p in d.work_dir.glob("app-*/*/vader/vaderSentiment/vader_lexicon.txt"))
        except Exception as exc:  # a cluster that did not start: reported by the tests below
            builds.cluster_error = f"{type(exc).__name__}: {exc}"
        builds.leftover = cluster.leftover + session_processes([d.process.pid for d in cluster.daemons])

    peaks = builds.spark.peak_rss
    print(f"Spark cluster build: {builds.spark.wall_seconds:.0f} s (exit {builds.spark.result.returncode}); peak RSS "
          + ", ".join(f"{k} {gib(v)}" for k, v in peaks.items()))
    print(f"cluster stopped; processes left: {builds.leftover or 'none'}")
    report_path = os.environ.get("SPARK_CLUSTER_REPORT")
    if report_path:
        Path(report_path).write_text(json.dumps({
            "raw_data_dir": str(RAW_DIR), "ports": builds.ports, "executor_python": EXECUTOR_PYTHON,
            "duckdb": {"exit": duck.result.returncode, "wall_seconds": round(duck.wall_seconds, 1),
                       "peak_rss_bytes": duck.peak_rss["duckdb"], "reused": str(duckdb_path) if REUSE_DUCKDB else None},
            "spark_cluster": {"exit": builds.spark.result.returncode, "wall_seconds": round(builds.spark.wall_seconds, 1),
                              "peak_rss_bytes": peaks},
            "archive_unpacked": builds.archive_unpacked, "leftover": builds.leftover, "cluster_error": builds.cluster_error,
            "settings": {k: os.environ.get(k) for k in ("SPARK_WORKER_MEMORY", "SPARK_EXECUTOR_MEMORY", "SPARK_DRIVER_MEMORY",
                                                        "SPARK_SHUFFLE_PARTITIONS", "DBT_THREADS", "DUCKDB_THREADS",
                                                        "DUCKDB_MEMORY_LIMIT")},
        }, indent=2) + "\n")
    return builds


# ---------- the cluster itself

def test_cluster_started(builds):
    assert not builds.cluster_error, builds.cluster_error


def test_cluster_left_no_process(builds):
    """Master, workers, executors, VADER scripts and the driver JVM: all gone after the run."""
    assert builds.leftover == [], f"processes of the Spark cluster still running: {builds.leftover}"


def test_executor_python_lacks_vader(tmp_path):
    """The executors' interpreter, in the daemons' environment (StandaloneCluster.env) and an
    empty working directory, cannot import vaderSentiment: else the build's VADER step on the
    cluster and the test below prove nothing about shipping it in the archive."""
    probe = subprocess.run([EXECUTOR_PYTHON, "-c", "import vaderSentiment"], capture_output=True, text=True,
                           env=StandaloneCluster(tmp_path).env(), cwd=tmp_path)
    assert probe.returncode != 0 and "No module named 'vaderSentiment'" in probe.stderr, (
        f"{EXECUTOR_PYTHON} imports vaderSentiment without the shipped archive (exit {probe.returncode}, "
        f"{probe.stderr.strip()[-500:]!r}): set SPARK_CLUSTER_PYTHON to a Python without it")


def test_vader_archive_reached_every_executor(builds):
    """Each worker's executor got the zip unpacked in its working directory (spark.archives)."""
    assert builds.archive_unpacked, builds.cluster_error or "no worker ran"
    assert all(builds.archive_unpacked.values()), f"an executor without the archive: {builds.archive_unpacked}"


# ---------- the builds

def test_duckdb_build_succeeds(builds):
    assert builds.duckdb.result.returncode == 0, "\n".join(failed_nodes(builds.duckdb.result)) or builds.duckdb.result.output[-4000:]


def test_cluster_build_succeeds(builds):
    """`dbt build --target spark_cluster`: every seed, model and data test passes on the cluster."""
    result = builds.spark.result
    assert result.returncode == 0, builds.cluster_error or "\n".join(failed_nodes(result)) or result.output[-4000:]


def test_cluster_builds_every_mart(builds):
    duck = set(duckdb_mart_names(builds.duckdb_path))
    spark = set(spark_mart_names(builds.warehouse))
    assert duck, f"the DuckDB build produced no table in schema {MART_SCHEMA}"
    assert duck == spark, f"only on DuckDB: {sorted(duck - spark)}; only on the cluster: {sorted(spark - duck)}"


def test_every_mart_equal_on_cluster_and_duckdb(builds):
    compared = sorted(set(duckdb_mart_names(builds.duckdb_path)) & set(spark_mart_names(builds.warehouse)))
    assert compared, "no mart built on both engines"
    problems = []
    for name in compared:
        problems += mart_differences(name, duckdb_mart(builds.duckdb_path, name), spark_mart(builds.warehouse, name))
    assert not problems, f"{len(problems)} difference(s) over {len(compared)} marts:\n" + "\n".join(problems)
    print(f"\n{len(compared)} marts equal on DuckDB and the Spark cluster: {', '.join(compared)}")


# ---------- reading one mart at a time (scale 4: the marts hold ~10 GB of text in all)

def duckdb_mart_names(path: Path) -> list[str]:
    with duckdb.connect(str(path), read_only=True) as con:
        return [r[0] for r in con.execute(
            "select table_name from information_schema.tables "
            "where table_schema = ? and table_type = 'BASE TABLE' order by 1", [MART_SCHEMA]).fetchall()]


def duckdb_mart(path: Path, name: str) -> pa.Table:
    with duckdb.connect(str(path), read_only=True) as con:
        return con.sql(f'select * from {MART_SCHEMA}."{name}"').to_arrow_table()


def spark_mart_names(warehouse: Path) -> list[str]:
    schema_dir = warehouse / f"{MART_SCHEMA}.db"
    return sorted(d.name for d in schema_dir.iterdir() if d.is_dir()) if schema_dir.is_dir() else []


def spark_mart(warehouse: Path, name: str) -> pa.Table:
    return ds.dataset(warehouse / f"{MART_SCHEMA}.db" / name, format="parquet").to_table()


BUCKET_BYTES = 256 * 1024**2


def mart_differences(name: str, duck: pa.Table, spark: pa.Table) -> list[str]:
    """test_spark's table_differences, on buckets of rows when a mart is big: a row's bucket is
    crc32 of the text of its first string or integer column (the same on both engines for equal
    rows), so each call sorts and compares a part. A row that differs there may land in another
    bucket: it still shows, as a row count that differs in both buckets. Small marts: one call."""
    buckets = max(1, math.ceil(max(duck.nbytes, spark.nbytes) / BUCKET_BYTES))
    key = next((f.name for f in duck.schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
                or pa.types.is_integer(f.type)), None)
    if buckets == 1 or key is None or key not in spark.column_names:
        return table_differences(name, duck, spark)

    def bucket_of(table: pa.Table) -> pa.Array:
        return pa.array([crc32(str(v).encode()) % buckets for v in table.column(key).to_pylist()], pa.int64())

    duck_bucket, spark_bucket = bucket_of(duck), bucket_of(spark)
    problems = []
    for i in range(buckets):
        problems += table_differences(f"{name} [rows with crc32({key}) % {buckets} = {i}]",
                                      duck.filter(pa.compute.equal(duck_bucket, i)),
                                      spark.filter(pa.compute.equal(spark_bucket, i)))
        if len(problems) > 20:
            break
    return problems


def test_bucketed_comparison_catches_differences(monkeypatch):
    """mart_differences in buckets finds what table_differences finds, and nothing more."""
    monkeypatch.setattr(sys.modules[__name__], "BUCKET_BYTES", 64)
    base = pa.table({"k": [f"p{i}" for i in range(50)], "x": [float(i) for i in range(50)]})
    assert mart_differences("t", base, base.take(list(reversed(range(50))))) == []
    changed = base.set_column(1, "x", pa.array([float(i) + (1.0 if i == 7 else 0.0) for i in range(50)]))
    assert mart_differences("t", base, changed)
    assert mart_differences("t", base, base.slice(1))
