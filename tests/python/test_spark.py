"""The same dbt project on Apache Spark (dbt-spark, session method) gives the same marts as
on DuckDB.

Builds the bundled sample (``sample_data``, or ``SPARK_TEST_RAW_DATA_DIR``) twice with
``dbt build``: once on DuckDB, once with ``--target spark`` (a local Spark in this process
tree, its own warehouse, target and log folders under pytest's tmp dir). Then every table of
the ``main`` schema (the marts) is read back with pyarrow (DuckDB through its Arrow export,
Spark from the Parquet files of its warehouse) and compared row for row: same tables, same
columns and types, same rows once both sides are sorted by all columns; floats equal within
1e-9, lists and structs compared element by element and field by field.

Run with ``make test-spark`` (installs the Spark extras first). Skipped when pyspark (or a
Java runtime) is not installed.
"""

from __future__ import annotations

import math
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from conftest import REPO, DbtResult, run_dbt

pytest.importorskip("pyspark", reason="pyspark is not installed: `make install-spark` (pip install -r requirements-spark.txt)")
pytest.importorskip("dbt.adapters.spark", reason="dbt-spark is not installed: `make install-spark`")
if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
    pytest.skip("no Java runtime (Spark needs Java 17): install a JRE or set JAVA_HOME", allow_module_level=True)

pytestmark = [pytest.mark.spark, pytest.mark.slow]

RAW_DIR = Path(os.environ.get("SPARK_TEST_RAW_DATA_DIR", REPO / "sample_data")).resolve()
MART_SCHEMA = "main"
FLOAT_TOLERANCE = 1e-9


@dataclass
class Builds:
    duckdb_path: Path
    spark_warehouse: Path
    duckdb_result: DbtResult
    spark_result: DbtResult
    spark_seconds: float


@pytest.fixture(scope="module")
def builds(request, tmp_path_factory) -> Builds:
    # Two full builds (minutes): only when asked for, `make test-spark` (pytest -m spark); CI
    # runs it after `make test`, so the plain suite does not build on Spark a second time.
    if "spark" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("the DuckDB-vs-Spark builds run with `make test-spark` (pytest -m spark)")
    if not (RAW_DIR / "argilla").is_dir():
        pytest.skip(f"no raw data at {RAW_DIR} (the bundled sample_data, or SPARK_TEST_RAW_DATA_DIR)")
    work = tmp_path_factory.mktemp("spark_vs_duckdb")
    duckdb_path = work / "duckdb" / "warehouse.duckdb"
    warehouse = work / "spark" / "warehouse"
    # the registry's example entries too (the sample has stand-ins of all five, and of the seven
    # eval sets): their shapes' SQL (message lists, transcripts, rated picks) and the
    # decontamination rule run on both engines
    extra = ["--vars", (REPO / "examples" / "extra_datasets.yml").read_text() + "\n"
             + (REPO / "examples" / "eval_sets.yml").read_text()]
    duckdb_result = run_dbt(["build", *extra], RAW_DIR, duckdb_path, work / "duckdb", check=False)
    started = time.monotonic()
    spark_result = run_dbt(
        # Unit tests are left out on Spark: their `format: sql` fixtures are DuckDB SQL (list and
        # struct literals, `::` casts); they test engine-neutral model logic, built on DuckDB.
        ["build", *extra, "--target", "spark", "--exclude-resource-type", "unit_test"],
        RAW_DIR, duckdb_path, work / "spark", check=False,
        SPARK_WAREHOUSE_DIR=str(warehouse),
        # the interpreter Spark's script transformation runs (VADER, models/spark/)
        PYSPARK_PYTHON=os.environ.get("PYSPARK_PYTHON", sys.executable),
    )
    spark_seconds = time.monotonic() - started
    print(f"\nSpark build: {spark_seconds:.0f} s (exit {spark_result.returncode})")
    return Builds(duckdb_path, warehouse, duckdb_result, spark_result, spark_seconds)


# ---------- reading both sides

def duckdb_marts(path: Path) -> dict[str, pa.Table]:
    with duckdb.connect(str(path), read_only=True) as con:
        names = [r[0] for r in con.execute(
            "select table_name from information_schema.tables "
            "where table_schema = ? and table_type = 'BASE TABLE' order by 1", [MART_SCHEMA]).fetchall()]
        return {n: con.sql(f'select * from {MART_SCHEMA}."{n}"').to_arrow_table() for n in names}


def spark_marts(warehouse: Path) -> dict[str, pa.Table]:
    """Spark's managed tables of schema `main`: Parquet folders under <warehouse>/main.db/."""
    schema_dir = warehouse / f"{MART_SCHEMA}.db"
    if not schema_dir.is_dir():
        return {}
    return {d.name: ds.dataset(d, format="parquet").to_table() for d in sorted(schema_dir.iterdir()) if d.is_dir()}


# ---------- comparing

def type_shape(t: pa.DataType) -> str:
    """An engine-neutral spelling of an Arrow type: string flavours are one, list item names
    ('item' on DuckDB, 'element' from Spark) are dropped, struct fields keep names and order."""
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "string"
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t):
        return f"list<{type_shape(t.value_type)}>"
    if pa.types.is_struct(t):
        return "struct<" + ", ".join(f"{t.field(i).name}: {type_shape(t.field(i).type)}" for i in range(t.num_fields)) + ">"
    return str(t)


def sort_key(value) -> str:
    """A total order on nested values; floats rounded so noise in the last bits cannot reorder rows."""
    def canon(v):
        if v is None:
            return "~"  # NULLs last
        if isinstance(v, float):
            return f"f{v:.6e}" if math.isfinite(v) else f"f{v}"
        if isinstance(v, dict):
            return "{" + ",".join(f"{k}:{canon(x)}" for k, x in v.items()) + "}"
        if isinstance(v, (list, tuple)):
            return "[" + ",".join(canon(x) for x in v) + "]"
        return f"{type(v).__name__}:{v!r}"
    return canon(value)


def same_value(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
            return False
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or abs(a - b) <= FLOAT_TOLERANCE
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def table_differences(name: str, duck: pa.Table, spark: pa.Table, limit: int = 3) -> list[str]:
    problems = []
    duck_columns = {f.name: type_shape(f.type) for f in duck.schema}
    spark_columns = {f.name: type_shape(f.type) for f in spark.schema}
    if set(duck_columns) != set(spark_columns):
        return [f"{name}: columns differ; only on DuckDB: {sorted(set(duck_columns) - set(spark_columns))}, "
                f"only on Spark: {sorted(set(spark_columns) - set(duck_columns))}"]
    for column, shape in duck_columns.items():
        if spark_columns[column] != shape:
            problems.append(f"{name}.{column}: type {shape} on DuckDB, {spark_columns[column]} on Spark")
    if duck.num_rows != spark.num_rows:
        problems.append(f"{name}: {duck.num_rows} rows on DuckDB, {spark.num_rows} on Spark")
        return problems
    columns = list(duck_columns)
    duck_rows = sorted(duck.select(columns).to_pylist(), key=lambda r: sort_key(list(r.values())))
    spark_rows = sorted(spark.select(columns).to_pylist(), key=lambda r: sort_key(list(r.values())))
    differing = [(d, s) for d, s in zip(duck_rows, spark_rows) if not same_value(d, s)]
    for d, s in differing[:limit]:
        columns_differing = [c for c in columns if not same_value(d[c], s[c])]
        shown = {c: (d[c], s[c]) for c in columns_differing}
        problems.append(f"{name}: row differs in {columns_differing} (DuckDB, Spark): {str(shown)[:600]}")
    if len(differing) > limit:
        problems.append(f"{name}: ... {len(differing) - limit} more differing rows (of {duck.num_rows})")
    return problems


# ---------- tests

def failed_nodes(result: DbtResult) -> list[str]:
    return [line.strip() for line in result.output.splitlines()
            if " ERROR " in line or " FAIL " in line or "Error in " in line][:40]


def test_duckdb_build_succeeds(builds):
    assert builds.duckdb_result.returncode == 0, "\n".join(failed_nodes(builds.duckdb_result)) or builds.duckdb_result.output[-4000:]


def test_spark_build_succeeds(builds):
    """`dbt build --target spark`: every seed, model and data test passes on Spark."""
    assert builds.spark_result.returncode == 0, "\n".join(failed_nodes(builds.spark_result)) or builds.spark_result.output[-4000:]


def test_spark_builds_every_mart(builds):
    duck = set(duckdb_marts(builds.duckdb_path))
    spark = set(spark_marts(builds.spark_warehouse))
    assert duck, "the DuckDB build produced no table in schema main"
    assert duck == spark, f"only on DuckDB: {sorted(duck - spark)}; only on Spark: {sorted(spark - duck)}"


def test_the_registry_entries_are_built(builds):
    import yaml

    entries = yaml.safe_load((REPO / "examples" / "extra_datasets.yml").read_text())["extra_datasets"]
    pairs = duckdb_marts(builds.duckdb_path)["preference_pairs"]
    assert {e["name"] for e in entries} <= set(pairs.column("dataset").to_pylist())


def test_every_mart_equal_on_both_engines(builds):
    duck = duckdb_marts(builds.duckdb_path)
    spark = spark_marts(builds.spark_warehouse)
    compared = sorted(set(duck) & set(spark))
    assert compared, "no mart built on both engines"
    problems = [p for name in compared for p in table_differences(name, duck[name], spark[name])]
    assert not problems, f"{len(problems)} difference(s) over {len(compared)} marts:\n" + "\n".join(problems)


# ---------- the comparison itself can fail

def test_comparison_catches_differences():
    """Guards the comparator: a float beyond the tolerance, a reordered struct, a list of
    another length and a NULL vs a value all count as differences; row order does not."""
    base = pa.table({"k": ["a", "b"], "x": [1.0, 2.0],
                     "s": [{"p": 1, "q": "u"}, {"p": 2, "q": "v"}], "l": [[1, 2], []]})
    shuffled = base.take([1, 0])
    assert table_differences("t", base, shuffled) == []
    near = base.set_column(1, "x", pa.array([1.0 + 1e-12, 2.0]))
    assert table_differences("t", base, near) == []
    far = base.set_column(1, "x", pa.array([1.0 + 1e-6, 2.0]))
    assert table_differences("t", base, far)
    reordered = base.set_column(2, "s", pa.array([{"q": "u", "p": 1}, {"q": "v", "p": 2}],
                                                  type=pa.struct([("q", pa.string()), ("p", pa.int64())])))
    assert table_differences("t", base, reordered)
    longer = base.set_column(3, "l", pa.array([[1, 2], [3]]))
    assert table_differences("t", base, longer)
    nulled = base.set_column(0, "k", pa.array(["a", None]))
    assert table_differences("t", base, nulled)


# ---------- exports from a Spark build

def test_exports_from_spark_equal_the_duckdb_exports(builds, tmp_path):
    """`python -m preftools.export --spark-warehouse` gives the same Hub-layout files as the DuckDB
    build: same marts, splits and file names, and the same rows (floats within the tolerance)."""
    from preftools.outputs.export import export

    duck = export(builds.duckdb_path, tmp_path / "duckdb", progress=False)
    spark = export(builds.duckdb_path, tmp_path / "spark", progress=False, spark_warehouse=builds.spark_warehouse)
    assert set(spark["marts"]) == set(duck["marts"]) and duck["marts"]
    problems = []
    for name, entry in duck["marts"].items():
        duck_files = sorted(f["path"] for f in entry["files"])
        assert sorted(f["path"] for f in spark["marts"][name]["files"]) == duck_files, name
        for rel in duck_files:
            problems += table_differences(
                f"{name}:{rel}", pq.read_table(tmp_path / "duckdb" / rel), pq.read_table(tmp_path / "spark" / rel))
    assert not problems, "\n".join(problems)
    assert spark["marts"]["preference_pairs"]["build"]["target_name"] == "spark"
