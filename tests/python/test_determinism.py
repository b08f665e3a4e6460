"""Deterministic numbers (issue 17): the same raw data and random_seed, built with 1 and with 4
DuckDB threads, give bit-identical marts and bit-identical exported files.

Thread count changes the order in which rows reach an aggregate (and, with
preserve_insertion_order off, the physical order of every table), so a float mean summed in
row order differs in its last digits between the two builds; this test caught that in
rever_summary before the marts' means went through the exact_mean macro.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import duckdb
import pytest

from conftest import REPO, run_dbt

pytestmark = pytest.mark.slow

THREADS = (1, 4)
# what may differ between two builds by design: when and by which invocation they ran, and
# where the warehouse file is (this test builds two)
PER_BUILD_KEYS = {"invocation_id", "built_at", "exported_at", "command", "warehouse"}


@pytest.fixture(scope="module")
def builds(raw_dir, tmp_path_factory) -> dict[int, tuple]:
    """threads -> (warehouse path, export dir): models and seeds (the data tests run in the session build)."""
    out = {}
    for threads in THREADS:
        work = tmp_path_factory.mktemp(f"threads{threads}")
        db = work / "warehouse.duckdb"
        run_dbt(["build", "--resource-type", "model", "--resource-type", "seed"], raw_dir, db, work,
                DUCKDB_THREADS=str(threads))
        exports = work / "exports"
        subprocess.run([sys.executable, "-m", "preftools.export", "--duckdb-path", str(db),
                        "--export-dir", str(exports), "--no-progress"], cwd=REPO, check=True,
                       capture_output=True)
        out[threads] = (db, exports)
    return out


def test_every_mart_is_bit_identical(builds):
    (db_a, _), (db_b, _) = builds[THREADS[0]], builds[THREADS[1]]
    con = duckdb.connect()
    con.execute(f"attach '{db_a}' as a (read_only); attach '{db_b}' as b (read_only)")
    tables = [r[0] for r in con.execute(
        "select table_name from duckdb_tables() where database_name = 'a' and schema_name = 'main' order by 1"
    ).fetchall()]
    assert len(tables) > 20
    different = {}
    for t in tables:
        # EXCEPT ALL compares doubles exactly, and rows as a multiset (physical order may differ)
        n = con.execute(f"""
            select (select count(*) from (select * from a.main.{t} except all select * from b.main.{t}))
                 + (select count(*) from (select * from b.main.{t} except all select * from a.main.{t}))
        """).fetchone()[0]
        if n:
            different[t] = n
    assert not different, f"marts that differ between {THREADS[0]} and {THREADS[1]} threads: {different}"


def _strip(value):
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in PER_BUILD_KEYS}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def test_every_exported_file_is_bit_identical(builds):
    (_, ex_a), (_, ex_b) = builds[THREADS[0]], builds[THREADS[1]]
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
    assert not different, f"exported files that differ between {THREADS[0]} and {THREADS[1]} threads: {different}"
    # the manifest differs only in what names the build (invocation id, times)
    manifest_a = json.loads((ex_a / "manifest.json").read_text())
    manifest_b = json.loads((ex_b / "manifest.json").read_text())
    assert _strip(manifest_a) == _strip(manifest_b)
