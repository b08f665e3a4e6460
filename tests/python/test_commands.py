"""`preftools <command>`: the console script that `make install` puts in the venv runs each tool,
as `python -m preftools.<command>` does."""

import argparse
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
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


def default_paths(command: str, monkeypatch) -> list[str]:
    """The paths the options of ``command`` default to: an option --out, --*-dir or --*-path with
    a default, or with none but its help's "(default: $VAR, else PATH)"."""
    class Parsed(Exception):
        pass

    def stop(parser, *args, **kwargs):
        raise Parsed(parser)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", stop)
    with pytest.raises(Parsed) as parsed:
        importlib.import_module(COMMANDS[command][0]).main([])
    paths = []
    for action in parsed.value.args[0]._actions:
        if not any(o == "--out" or o.endswith(("-dir", "-path")) for o in action.option_strings):
            continue
        documented = re.search(r"default: (?:\$\w+, else )?([\w./-]+)", action.help or "")
        if isinstance(action.default, str) or documented:
            paths.append(action.default if isinstance(action.default, str) else documented.group(1))
    return paths


def test_every_default_output_is_ignored_by_git(monkeypatch):
    """What the tools write where they write by default (diff/, exports/, reports/, data/raw, the
    warehouse) never shows in `git status`."""
    found = {command: default_paths(command, monkeypatch) for command in COMMANDS}
    assert [c for c, p in found.items() if not p] == ["generate"]  # its --out is required
    paths = {p for command_paths in found.values() for p in command_paths}
    shown = [p for p in sorted(paths) if subprocess.run(
        ["git", "check-ignore", "-q", str(Path(p) / "written")], cwd=REPO).returncode != 0]
    assert shown == [], f"not in .gitignore: {shown}"
