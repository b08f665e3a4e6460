"""dbt from any directory, make beside plain dbt, audits beside a notebook, and a failed input
check that leaves nothing behind: on a copy of the project built by `make build` with nothing
set (the bundled sample, the warehouse at its default place in the copy)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from conftest import DBT, REPO

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("make") is None or shutil.which("git") is None, reason="needs make and git"),
]

# settings a user's shell or `make test` may carry: the tests below set what they mean
UNSET = ("RAW_DATA_DIR", "DUCKDB_PATH", "EXPORT_DIR", "DUCKDB_THREADS", "DBT_THREADS", "MAKEFLAGS", "MFLAGS",
         "MAKELEVEL", "VENV", "PYTHON")

# a notebook: the warehouse open read-only until its stdin closes
READER = """
import duckdb, sys
con = duckdb.connect(sys.argv[1], read_only=sys.argv[2] == "ro")
print(con.execute("select count(*) from audits.cuf_model_win_rates").fetchone()[0], flush=True)
sys.stdin.read()
"""


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in UNSET and not k.startswith("DBT_")}
    env.update(DBT_SEND_ANONYMOUS_USAGE_STATS="false", **extra)
    return env


def run(args: list[str], cwd: Path, timeout: int = 900, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=clean_env(**env), capture_output=True, text=True, timeout=timeout)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A copy of the project (the files git lists, the sample included), built by `make build`."""
    root = tmp_path_factory.mktemp("copy") / "project"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, listed):
        src = REPO / os.fsdecode(name)
        if src.is_file():  # (a file deleted in the working tree is still listed)
            dst = root / os.fsdecode(name)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    # the venv running these tests, as installed (-o install: never re-installed from the copy)
    venv = Path(sys.executable).parent.parent
    made = run(["make", "-s", "--no-print-directory", "-o", "install", "build", f"VENV={venv}"], root, timeout=1800)
    assert made.returncode == 0, (made.stdout + made.stderr)[-6000:]
    assert (root / "warehouse.duckdb").is_file()
    return root


@pytest.fixture
def scratch(tmp_path) -> Path:
    """An empty directory to run from; each test checks it stays empty."""
    folder = tmp_path / "scratch"
    folder.mkdir()
    return folder


def elsewhere(project: Path) -> list[str]:
    return ["--project-dir", str(project), "--profiles-dir", str(project)]


def parsed_paths(target: Path) -> int:
    """How many files dbt's last parse read again (0: the saved parse was reused whole)."""
    return json.loads((target / "perf_info.json").read_text())["parsed_path_count"]


def test_make_and_plain_dbt_share_one_parse(project):
    """`make build`, then plain `dbt parse` in the project: dbt's saved parse is reused whole (the
    profile renders the same under make as without it)."""
    plain = run([DBT, "parse"], project)
    assert plain.returncode == 0, plain.stdout[-3000:]
    assert "Unable to do partial parsing" not in plain.stdout, plain.stdout
    assert parsed_paths(project / "target") == 0


def test_dbt_builds_from_another_directory(project, scratch):
    """`dbt build --project-dir --profiles-dir` from an empty directory, nothing set: RAW_DATA_DIR
    (sample_data) and DUCKDB_PATH (warehouse.duckdb) are the project's; nothing is written where
    dbt runs. (A relative DUCKDB_PATH: test_a_failed_input_check_creates_and_changes_nothing.)"""
    warehouse = project / "warehouse.duckdb"
    with duckdb.connect(str(warehouse), read_only=True) as con:
        before = con.execute("select invocation_id from meta.warehouse_build_info").fetchone()[0]
    built = run([DBT, "build", *elsewhere(project)], scratch)
    assert built.returncode == 0, built.stdout[-4000:]
    assert "Traceback" not in built.stdout + built.stderr
    with duckdb.connect(str(warehouse), read_only=True) as con:
        info = con.execute("select invocation_id, raw_data_dir from meta.warehouse_build_info").fetchone()
        assert con.execute("select count(*) from main.preference_pairs").fetchone()[0] > 0
    assert info[0] != before and info[1] == str(project / "sample_data"), info
    assert list(scratch.iterdir()) == []


def test_relative_project_and_profiles_dirs_from_a_subfolder(project, tmp_path):
    """From the project's models/, `dbt run --project-dir .. --profiles-dir ..`, nothing else set:
    RAW_DATA_DIR (the bundled sample_data) and DUCKDB_PATH (warehouse.duckdb) are the project's,
    recorded by their absolute paths; the same with DBT_PROJECT_DIR=.. DBT_PROFILES_DIR=.. (a
    `dbt show` of the build info as this run computes it)."""
    models = project / "models"
    listed = sorted(models.rglob("*"))
    target = str(tmp_path / "target")  # the project's own target/ stays as `make build` left it
    built = run([DBT, "run", "-s", "warehouse_build_info", "--project-dir", "..", "--profiles-dir", ".."], models,
                DBT_TARGET_PATH=target)
    assert built.returncode == 0, built.stdout[-3000:]
    invocation = json.loads((tmp_path / "target" / "run_results.json").read_text())["metadata"]["invocation_id"]
    with duckdb.connect(str(project / "warehouse.duckdb"), read_only=True) as con:
        info = con.execute("select invocation_id, raw_data_dir from meta.warehouse_build_info").fetchone()
    assert info == (invocation, str(project / "sample_data"))
    assert not (project.parent / "warehouse.duckdb").exists()

    shown = run([DBT, "--quiet", "show", "-s", "warehouse_build_info", "--output", "json"], models,
                DBT_PROJECT_DIR="..", DBT_PROFILES_DIR="..", DBT_TARGET_PATH=target)
    assert shown.returncode == 0, shown.stdout[-3000:] + shown.stderr[-3000:]
    (row,) = json.loads(shown.stdout)["show"]
    assert row["raw_data_dir"] == str(project / "sample_data"), row
    assert sorted(models.rglob("*")) == listed  # nothing written where dbt ran


def test_an_audit_runs_beside_a_read_only_reader(project, scratch):
    """A notebook holds the warehouse read-only: `dbt show -s <audit>` runs beside it (from another
    directory); `dbt build` stops with one line naming the reader, the file unchanged."""
    warehouse = project / "warehouse.duckdb"
    reader = subprocess.Popen([sys.executable, "-c", READER, str(warehouse), "ro"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        n_models = int(reader.stdout.readline())
        digest = sha256(warehouse)
        shown = run([DBT, "--quiet", "show", "-s", "cuf_model_win_rates", "--limit", "100", "--output", "json",
                     *elsewhere(project)], scratch)
        assert shown.returncode == 0, shown.stdout[-3000:] + shown.stderr[-3000:]
        assert len(json.loads(shown.stdout)["show"]) == n_models > 0

        built = run([DBT, "build", "-s", "warehouse_build_info", *elsewhere(project)], scratch)
        assert built.returncode != 0
        assert "Traceback" not in built.stdout + built.stderr
        (line,) = [x.strip() for x in built.stdout.splitlines() if "is locked by" in x]
        assert line.startswith(f"The warehouse file {warehouse} is locked by ") and f"(PID {reader.pid})" in line, line
        assert "nothing was built" in line
        assert sha256(warehouse) == digest
    finally:
        reader.stdin.close()
        reader.wait(timeout=60)
    assert list(scratch.iterdir()) == []


def test_dbt_show_says_when_a_writer_holds_the_warehouse(project, scratch):
    warehouse = project / "warehouse.duckdb"
    writer = subprocess.Popen([sys.executable, "-c", READER, str(warehouse), "rw"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        writer.stdout.readline()
        shown = run([DBT, "show", "-s", "cuf_model_win_rates", *elsewhere(project)], scratch)
    finally:
        writer.stdin.close()
        writer.wait(timeout=60)
    assert shown.returncode != 0
    assert "Traceback" not in shown.stdout + shown.stderr
    (line,) = [x.strip() for x in shown.stdout.splitlines() if "is locked by" in x]
    assert f"(PID {writer.pid})" in line and "which holds it for writing" in line, line
    assert "nothing was read or changed" in line


def test_a_failed_input_check_creates_and_changes_nothing(project, scratch, tmp_path):
    """A wrong RAW_DATA_DIR: the existing warehouse stays byte for byte as it was, and no new
    warehouse file appears (in the project or where dbt runs); `dbt show` without a warehouse
    creates none either. A relative DUCKDB_PATH is the project's, whatever the current directory."""
    empty = tmp_path / "empty"
    empty.mkdir()
    # a target/ of its own (the project's stays as `make build` left it), from the project's saved parse
    (tmp_path / "target").mkdir()
    shutil.copy2(project / "target" / "partial_parse.msgpack", tmp_path / "target")
    target = str(tmp_path / "target")
    warehouse = project / "warehouse.duckdb"
    digest = sha256(warehouse)
    existing = run([DBT, "build", *elsewhere(project)], scratch, RAW_DATA_DIR=str(empty), DBT_TARGET_PATH=target)
    assert existing.returncode != 0
    assert f"nothing found under RAW_DATA_DIR={empty}:" in existing.stdout, existing.stdout[-3000:]
    assert sha256(warehouse) == digest and not Path(f"{warehouse}.wal").exists()

    fresh = project / "fresh.duckdb"
    shown = run([DBT, "show", "-s", "cuf_model_win_rates", *elsewhere(project)], scratch, DUCKDB_PATH=fresh.name,
                DBT_TARGET_PATH=target)
    assert shown.returncode != 0 and "Traceback" not in shown.stdout + shown.stderr
    assert f"No warehouse at {fresh}: `dbt show` reads a built warehouse and creates none." in shown.stdout
    failed = run([DBT, "build", *elsewhere(project)], scratch, RAW_DATA_DIR=str(empty), DUCKDB_PATH=fresh.name,
                 DBT_TARGET_PATH=target)
    assert failed.returncode != 0 and "nothing found under" in failed.stdout, failed.stdout[-3000:]
    assert not list(project.glob("fresh.duckdb*"))
    assert list(scratch.iterdir()) == []

    built = run([DBT, "run", "-s", "warehouse_build_info", *elsewhere(project)], scratch, DUCKDB_PATH=fresh.name,
                DBT_TARGET_PATH=target)
    assert built.returncode == 0, built.stdout[-3000:]
    assert fresh.is_file() and list(scratch.iterdir()) == []


def test_the_tools_find_the_warehouse_from_any_directory(monkeypatch, tmp_path):
    """The export and the report read $DUCKDB_PATH (default warehouse.duckdb) relative to the
    project, as dbt's profile does, and the fetch $RAW_DATA_DIR; --duckdb-path and
    --raw-data-dir are relative to where they are typed."""
    from preftools import warehouse
    from preftools.inputs import fetch

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DUCKDB_PATH", raising=False)
    assert warehouse.duckdb_path(None) == REPO / "warehouse.duckdb"
    monkeypatch.setenv("DUCKDB_PATH", "builds/w.duckdb")
    assert warehouse.duckdb_path(None) == REPO / "builds" / "w.duckdb"
    monkeypatch.setenv("DUCKDB_PATH", str(tmp_path / "w.duckdb"))
    assert warehouse.duckdb_path(None) == tmp_path / "w.duckdb"
    assert warehouse.duckdb_path("mine.duckdb") == Path("mine.duckdb")

    monkeypatch.setenv("RAW_DATA_DIR", "data/mine")
    assert fetch.resolve_raw_data_dir(None) == REPO / "data" / "mine"
    assert fetch.resolve_raw_data_dir("raw") == tmp_path / "raw"
