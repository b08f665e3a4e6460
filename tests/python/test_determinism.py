"""Deterministic numbers: the same raw data and random_seed, built with different
DuckDB thread counts, give bit-identical marts (and intermediate tables) and bit-identical
exported files. One side is the session build (DuckDB's default: a thread per core), the other
a build of the same raw data with one thread (four on a one-core machine).

Thread count changes the order in which rows reach an aggregate (and, with
preserve_insertion_order off, the physical order of every table), so a float mean summed in
row order differs in its last digits between the two builds; this test caught that in
rever_summary before the marts' means went through the exact_mean macro.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import duckdb
import pytest

from conftest import REPO, run_dbt

pytestmark = pytest.mark.slow

# what may differ between two builds by design: when and by which invocation they ran, and
# where the warehouse file is
PER_BUILD_KEYS = {"invocation_id", "built_at", "exported_at", "command", "warehouse"}


def export(db, out):
    subprocess.run([sys.executable, "-m", "preftools.export", "--duckdb-path", str(db),
                    "--export-dir", str(out), "--no-progress"], cwd=REPO, check=True, capture_output=True)
    return out


@pytest.fixture(scope="module")
def builds(warehouse, tmp_path_factory) -> dict[int, tuple]:
    """DuckDB threads -> (warehouse path, export dir): the session build, and a build of its raw
    data with another thread count (models and seeds: the data tests ran in the session build)."""
    with duckdb.connect() as con:
        default = con.execute("select current_setting('threads')").fetchone()[0]
    session_threads = int(os.environ.get("DUCKDB_THREADS") or default)  # as the profile sets it
    threads = 1 if session_threads > 1 else 4
    work = tmp_path_factory.mktemp(f"threads{threads}")
    db = work / "warehouse.duckdb"
    run_dbt(["build", "--resource-type", "model", "--resource-type", "seed"], warehouse.raw_dir, db, work,
            DUCKDB_THREADS=str(threads))
    return {session_threads: (warehouse.path, export(warehouse.path, work / "session_exports")),
            threads: (db, export(db, work / "exports"))}


def test_every_mart_is_bit_identical(builds):
    """The marts and the intermediate tables (the random draws of int_ultrafeedback__prompts_picked among them)."""
    (db_a, _), (db_b, _) = builds.values()
    con = duckdb.connect()
    con.execute(f"attach '{db_a}' as a (read_only); attach '{db_b}' as b (read_only)")
    tables = [f"{r[0]}.{r[1]}" for r in con.execute(
        "select schema_name, table_name from duckdb_tables()"
        " where database_name = 'a' and schema_name in ('main', 'intermediate') order by all"
    ).fetchall()]
    assert len(tables) > 30 and "intermediate.int_ultrafeedback__prompts_picked" in tables
    different = {}
    for t in tables:
        # EXCEPT ALL compares doubles exactly, and rows as a multiset (physical order may differ)
        n = con.execute(f"""
            select (select count(*) from (select * from a.{t} except all select * from b.{t}))
                 + (select count(*) from (select * from b.{t} except all select * from a.{t}))
        """).fetchone()[0]
        if n:
            different[t] = n
    assert not different, f"marts that differ between {' and '.join(map(str, builds))} threads: {different}"


def _strip(value):
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in PER_BUILD_KEYS}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def test_every_exported_file_is_bit_identical(builds):
    (_, ex_a), (_, ex_b) = builds.values()
    # every file but the export's lock file (it holds the exporting process's id)
    files_a = sorted(p.relative_to(ex_a) for p in ex_a.rglob("*") if p.is_file() and p.name != ".export.lock")
    files_b = sorted(p.relative_to(ex_b) for p in ex_b.rglob("*") if p.is_file() and p.name != ".export.lock")
    assert files_a == files_b
    assert any(p.suffix == ".parquet" for p in files_a)
    different = []
    for rel in files_a:
        if rel.name == "manifest.json":
            continue
        if hashlib.sha256((ex_a / rel).read_bytes()).digest() != hashlib.sha256((ex_b / rel).read_bytes()).digest():
            different.append(str(rel))
    assert not different, f"exported files that differ between {' and '.join(map(str, builds))} threads: {different}"
    # the manifest differs only in what names the build (invocation id, times)
    manifest_a = json.loads((ex_a / "manifest.json").read_text())
    manifest_b = json.loads((ex_b / "manifest.json").read_text())
    assert _strip(manifest_a) == _strip(manifest_b)
