"""`preftools <command>`: the console script that `make install` puts in the venv runs each tool,
as `python -m preftools.<command>` does."""

import subprocess
import sys
from pathlib import Path

import pytest

from preftools.__main__ import COMMANDS

SCRIPT = Path(sys.executable).parent / "preftools"


def preftools(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, timeout=120)


def test_lists_the_commands():
    proc = preftools("--help")
    assert proc.returncode == 0, proc.stderr
    listed = [line.split()[0] for line in proc.stdout.splitlines() if line.startswith("  ")]
    assert listed == ["fetch", "generate", "export", "publish", "report", "diff"]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_each_command_runs_its_module(command):
    """The command's own parser answers (its `python -m` form runs in the tests of each tool)."""
    proc = preftools(command, "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"usage: preftools {command} ")


def test_unknown_command_is_one_line():
    proc = preftools("exprot")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "preftools: error: unknown command 'exprot'; the commands are: fetch, generate, export, publish, report, diff"]
    assert preftools().returncode == 2  # no command: the usage, on stderr


def test_a_commands_own_errors_stay_one_line(tmp_path):
    """A bad option value reaches the command's own message, not a traceback."""
    proc = preftools("report", "--duckdb-path", str(tmp_path / "missing.duckdb"), "--out", str(tmp_path / "r.html"))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stderr.startswith("report: error: "), proc.stderr
