"""The Makefile and the profile on a new machine: which Python `make build` uses and
what it says about an unsupported one, the settings make leaves to the profile, preftools
installed into the venv (`make lint`: test_lint.py)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from conftest import DBT, REPO, dbt_env, make_targets, run_dbt, run_make

SUPPORTED = {(3, 11), (3, 12), (3, 13)}

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def make_config(**env: str) -> dict[str, str]:
    proc = run_make("config", env=env)
    assert proc.returncode == 0, proc.stderr
    return dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def fake_python(tmp_path: Path, version: str) -> Path:
    """An executable that answers the Makefile's version probe like Python ``version``."""
    path = tmp_path / f"python{version}"
    path.write_text(f"#!/bin/sh\necho {version}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_default_python_is_a_supported_one():
    python = make_config()["PYTHON"]
    probe = subprocess.run([python, "-c", "import sys; print(*sys.version_info[:2])"], capture_output=True, text=True)
    assert probe.returncode == 0, (python, probe.stderr)
    assert tuple(map(int, probe.stdout.split())) in SUPPORTED, (python, probe.stdout)


@pytest.mark.parametrize("version", ["3.10", "3.14", "missing"])
def test_unsupported_python_is_refused_in_one_line(tmp_path, version):
    python = str(tmp_path / "no-such-python") if version == "missing" else str(fake_python(tmp_path, version))
    venv = tmp_path / "venv"
    proc = run_make("install", f"VENV={venv}", f"PYTHON={python}")
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "needs Python 3.11, 3.12 or 3.13" in lines[0] and "make build PYTHON=python3.12" in lines[0], lines
    assert (f"is Python {version}" if version != "missing" else "not a working Python") in lines[0], lines
    assert not venv.exists()  # refused before creating anything


def test_make_passes_on_no_setting_of_its_own(tmp_path):
    """make exports neither paths nor thread counts: dbt renders the same profile under make as
    without it (test_any_directory.py: the two share one parse). DuckDB's threads and memory_limit:
    DuckDB's defaults (every core, 80% of the memory); 2 models at once (profiles.yml's Jinja cannot
    count cores); insertion order not preserved."""
    config = make_config()
    assert config["DUCKDB_THREADS"].startswith("unset") and config["DBT_THREADS"] == "2", config
    assert config["DUCKDB_MEMORY_LIMIT"].startswith("unset"), config
    assert (config["RAW_DATA_DIR"], config["DUCKDB_PATH"], config["EXPORT_DIR"]) == (
        "sample_data", "warehouse.duckdb", "exports"), config
    assert make_config(DUCKDB_THREADS="3")["DUCKDB_THREADS"] == "3"

    warehouse = tmp_path / "w.duckdb"
    duckdb.connect(str(warehouse)).close()  # dbt show reads an existing warehouse
    env = dbt_env(REPO / "sample_data", warehouse, tmp_path)
    for name in ("DUCKDB_THREADS", "DUCKDB_MEMORY_LIMIT", "DBT_THREADS"):
        env.pop(name, None)
    proc = subprocess.run(
        [DBT, "--quiet", "show", "--output", "json", "--inline",
         "select current_setting('threads') as duckdb_threads, {{ target.threads }} as dbt_threads,"
         " current_setting('memory_limit') as memory_limit,"
         " current_setting('preserve_insertion_order') as preserve_insertion_order"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (row,) = json.loads(proc.stdout)["show"]
    with duckdb.connect() as con:
        duckdb_threads, duckdb_memory = con.execute(
            "select current_setting('threads'), current_setting('memory_limit')").fetchone()
    assert int(row["duckdb_threads"]) == duckdb_threads == cores(), (row, duckdb_threads)
    assert row["memory_limit"] == duckdb_memory, (row, duckdb_memory)
    assert int(row["dbt_threads"]) == 2, row
    # the profile's other settings reach DuckDB too (given when dbt opens the warehouse)
    assert row["preserve_insertion_order"] in (False, "false"), row


def test_a_model_out_of_memory_is_named_with_the_setting_to_raise(tmp_path):
    """After a run, one line per node that ran out of DuckDB's memory names it, the memory_limit it
    had and DUCKDB_MEMORY_LIMIT (DuckDB's own error names neither); other failures get no line.
    The on-run-end macro is given results of dbt's shape: whether a real model runs out at a given
    limit depends on the machine's load (DuckDB spills what it can)."""
    results = [
        {"status": "error", "message": "Out of Memory Error: failed to allocate data of size 256.0 KiB",
         "node": {"resource_type": "model", "name": "int_near_duplicates__pair_responses"}},
        {"status": "error", "message": "Binder Error: column not found",
         "node": {"resource_type": "model", "name": "preference_pairs"}},
        {"status": "success", "message": "OK", "node": {"resource_type": "model", "name": "eval_items"}},
    ]
    db = tmp_path / "w.duckdb"
    duckdb.connect(str(db)).close()
    result = run_dbt(["run-operation", "report_out_of_memory", "--args", json.dumps({"results": results})],
                     REPO / "sample_data", db, tmp_path / "work", DUCKDB_MEMORY_LIMIT="3GB")
    lines = [line for line in result.output.splitlines() if "ran out of memory" in line]
    assert len(lines) == 1, result.output[-3000:]
    assert ("model int_near_duplicates__pair_responses ran out of memory at DuckDB memory_limit 2.7 GiB: "
            "set DUCKDB_MEMORY_LIMIT higher") in lines[0], lines


def test_a_duckdb_setting_duckdb_refuses_is_named_in_one_line(raw_dir, tmp_path, monkeypatch):
    """DUCKDB_MEMORY_LIMIT and DUCKDB_THREADS go to DuckDB when dbt opens the warehouse. A value
    DuckDB refuses fails the run in one line that names the variable and what it takes, before
    any warehouse file is made."""
    db = tmp_path / "w.duckdb"
    result = run_dbt(["run", "-s", "warehouse_build_info"], raw_dir, db, tmp_path / "work", check=False,
                     share_parse=False, DUCKDB_MEMORY_LIMIT="lots")  # on db itself: no file made there
    assert result.returncode != 0
    assert "Traceback" not in result.output, result.output[-3000:]
    line = next((line for line in result.output.splitlines() if "DUCKDB_MEMORY_LIMIT='lots'" in line), None)
    assert line and "Set DUCKDB_MEMORY_LIMIT to a size such as 1GB" in line, result.output[-3000:]
    assert not list(tmp_path.glob("w.duckdb*"))

    # the same check for the other variable (the export gives the same message)
    from preftools.warehouse import invalid_resource_setting
    monkeypatch.delenv("DUCKDB_MEMORY_LIMIT", raising=False)
    monkeypatch.setenv("DUCKDB_THREADS", "many")
    assert "DUCKDB_THREADS='many' is not a valid DuckDB threads" in invalid_resource_setting()
    monkeypatch.setenv("DUCKDB_THREADS", "2")
    assert invalid_resource_setting() is None


def test_install_makes_preftools_importable_from_anywhere(tmp_path):
    """`make install` installs preftools editable: the venv's Python (and dbt's plugin) import this
    checkout's code from any directory."""
    assert "--editable ." in run_make("-n", "-W", "pyproject.toml", "install").stdout
    proc = subprocess.run([sys.executable, "-c", "import preftools.dbt_runtime.lock_check as m; print(m.__file__)"],
                          cwd=tmp_path, env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert Path(proc.stdout.strip()) == REPO / "preftools" / "dbt_runtime" / "lock_check.py"


def test_help_lists_every_target_one_line_each():
    """`make help` (and `make` alone) lists each target the Makefile declares .PHONY, once, on one line
    with what it does."""
    phony = make_targets()
    proc = run_make("help")
    assert proc.returncode == 0, proc.stderr
    listed = [line.split(None, 2) for line in proc.stdout.splitlines()]
    assert all(len(words) == 3 and words[0] == "make" for words in listed), proc.stdout
    names = [words[1] for words in listed]
    assert sorted(names) == sorted(phony), (sorted(set(names) ^ phony), proc.stdout)
    assert run_make().stdout == proc.stdout
