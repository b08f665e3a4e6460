"""`make lint` (sqlfluff with the dbt templater) passes on the whole project, as `make test` asks,
and never opens the user's warehouse: another process holds its write lock for the whole lint.

One sqlfluff process: the suite keeps both cores busy already, and a second process would cost
more CPU than it saves wall time here."""

from __future__ import annotations

import shutil

import duckdb
import pytest

from conftest import run_make

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def test_make_lint_passes_and_never_opens_the_warehouse(tmp_path):
    warehouse = tmp_path / "warehouse.duckdb"
    with duckdb.connect(str(warehouse)) as holder:  # the write lock, held for the whole lint
        holder.execute("create table t as select 1 as x")
        proc = run_make("lint", "NPROC=1", env={"DUCKDB_PATH": str(warehouse)}, timeout=600)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert "locked" not in proc.stdout + proc.stderr
    assert "All Finished" in proc.stdout + proc.stderr
