"""The tests' dbt runs (tests/python/forked_dbt.py) end as the `dbt` command does: the warehouse
closed (no WAL left beside it), and on a failure the command's exit code and message."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import forked_dbt
from conftest import DBT, REPO, dbt_env, run_dbt

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def message_lines(output: str, needle: str) -> list[str]:
    """The lines holding ``needle``, without colours and dbt's time stamps."""
    return [re.sub(r"^\d\d:\d\d:\d\d\s+", "", ANSI.sub("", line)).strip()
            for line in output.splitlines() if needle in line]


def test_a_forked_run_ends_as_the_command_does(warehouse, tmp_path):
    db = tmp_path / "warehouse.duckdb"
    shutil.copy(warehouse.path, db)
    run_dbt(["run", "-s", "warehouse_build_info"], warehouse.raw_dir, db, tmp_path / "built")  # forked_dbt.run
    assert not Path(f"{db}.wal").exists()  # dbt-duckdb closed (checkpointed) the file at exit

    empty = tmp_path / "empty"
    empty.mkdir()
    env = dbt_env(empty, db, tmp_path / "failed")
    forked = forked_dbt.run(["run", "-s", "warehouse_build_info"], env, REPO)
    command = subprocess.run([DBT, "run", "-s", "warehouse_build_info"], cwd=REPO, env=env, capture_output=True,
                             text=True)
    assert forked.returncode == command.returncode != 0
    needle = f"nothing found under RAW_DATA_DIR={empty}"
    assert message_lines(forked.stdout, needle) == message_lines(command.stdout, needle) != []
