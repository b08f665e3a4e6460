"""Bad raw inputs fail early, with one clear line per problem (missing inputs,
schema drift, quoting); extra columns and column order don't matter. Other representations of
the same values, and the generated contract macro: test_raw_contract.py."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import REGISTRY_VARS, REPO, generate_raw, run_dbt
from preftools.inputs.contract import DATASETS_BY_KEY

# The cheapest build that still runs the on-run-start input checks.
CHECK_ONLY = ["run", "-s", "warehouse_build_info"]


@pytest.fixture(scope="module")
def tiny_raw(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tiny_raw")
    generate_raw(out, scale=0.002)
    return out


def copy_raw(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def first_file(raw: Path, key: str) -> Path:
    return sorted(DATASETS_BY_KEY[key].data_dir(raw).glob("*.parquet"))[0]


def rewrite(path: Path, transform) -> None:
    table = pq.read_table(path)
    pq.write_table(transform(table), path)


def replace_column(table: pa.Table, name: str, array) -> pa.Table:
    return table.set_column(table.schema.get_field_index(name), name, array)


def problem_lines(output: str, marker: str) -> list[str]:
    return [line.strip()[2:] for line in output.splitlines() if line.strip().startswith(f"- {marker}")]


def pasted(command: str, cwd: Path, work: Path, timeout: int = 900, **env: str) -> subprocess.CompletedProcess:
    """``command`` as a user pastes it into a shell with the venv activated, in ``cwd`` (not the
    project: dbt finds it through DBT_PROJECT_DIR); dbt's files and the warehouse go to ``work``."""
    base = {k: v for k, v in os.environ.items() if k not in ("RAW_DATA_DIR", "DUCKDB_PATH", "DBT_PROJECT_DIR")}
    base.update(PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
                DBT_PROJECT_DIR=str(REPO), DBT_PROFILES_DIR=str(REPO), DUCKDB_PATH=str(work / "pasted.duckdb"),
                DBT_TARGET_PATH=str(work / "target"), DBT_LOG_PATH=str(work / "logs"),
                DBT_SEND_ANONYMOUS_USAGE_STATS="false", **env)
    cwd.mkdir(parents=True, exist_ok=True)
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=base, capture_output=True, text=True, timeout=timeout)


def test_missing_dataset_fails_with_one_line_each(tiny_raw, tmp_path):
    raw = copy_raw(tiny_raw, tmp_path / "raw")
    shutil.rmtree(raw / "coseal")
    shutil.rmtree(raw / "OpenRubrics" / "ReVeR-Traces-Rubric")
    result = run_dbt(CHECK_ONLY, raw, tmp_path / "wh.duckdb", tmp_path, check=False)
    assert result.returncode != 0
    out = result.output
    lines = problem_lines(out, "missing dataset")
    assert len(lines) == 2, out
    assert any(line.startswith("missing dataset coseal/CodeUltraFeedback (group code_ultrafeedback): no data file")
               and f"under {raw}/coseal/CodeUltraFeedback --" in line for line in lines), lines
    assert any(line.startswith("missing dataset OpenRubrics/ReVeR-Traces-Rubric (group rever)") for line in lines)
    for line in lines:  # the same commands on every line: what is missing, and the one complete group
        assert line.endswith(
            f"-- fetch the missing data with `preftools fetch --raw-data-dir {raw} "
            "--datasets code_ultrafeedback,rever_rubric`, or build only the groups that are complete there: "
            f"`RAW_DATA_DIR={raw} dbt build --vars '{{datasets: [ultrafeedback]}}'`"), line
    assert "2 problem(s)" in out
    assert "Traceback" not in out
    assert not (tmp_path / "wh.duckdb").exists()  # the failed check created no warehouse file
    assert not (tmp_path / "wh.duckdb.wal").exists()


@pytest.mark.slow
def test_each_hint_works_when_pasted(tiny_raw, tmp_path):
    """Only UltraFeedback and ReVeR's judge under a RAW_DATA_DIR whose path a shell must quote: the
    hints are pasted as printed, from another directory; the build one gets past the check and
    builds the complete group, the fetch one is accepted (offline here: it stops at the Hub)."""
    raw = tmp_path / "my raw's data"
    raw.mkdir()
    for key in ("ultrafeedback", "rever_judge"):
        shutil.copytree(DATASETS_BY_KEY[key].repo_dir(tiny_raw), DATASETS_BY_KEY[key].repo_dir(raw))
    result = run_dbt(CHECK_ONLY, raw, tmp_path / "wh.duckdb", tmp_path / "check", check=False)
    lines = problem_lines(result.output, "missing dataset")
    assert len(lines) == 3, result.output  # CodeUltraFeedback, its RLHFlow pairs, ReVeR's rubrics
    hints = {tuple(re.findall(r"`([^`]+)`", line)) for line in lines}
    assert len(hints) == 1, hints  # every line suggests the same commands
    (fetch, build), = hints
    assert build == f"RAW_DATA_DIR={shlex.quote(str(raw))} dbt build --vars '{{datasets: [ultrafeedback]}}'", build

    elsewhere = tmp_path / "elsewhere"
    built = pasted(build, elsewhere, tmp_path)
    assert built.returncode == 0, (built.stdout + built.stderr)[-4000:]
    assert "cannot be built" not in built.stdout and "ERROR=0" in built.stdout
    with duckdb.connect(str(tmp_path / "pasted.duckdb"), read_only=True) as con:
        assert con.execute("select count(*) from main.ultrafeedback_curated").fetchone()[0] > 0
        assert con.execute("select datasets from meta.warehouse_build_info").fetchone()[0] == "ultrafeedback"

    fetched = pasted(fetch, elsewhere, tmp_path, timeout=300, HF_HUB_OFFLINE="1")
    assert "usage:" not in fetched.stderr and "Traceback" not in fetched.stderr, fetched.stderr
    assert "HF_HUB_OFFLINE is set" in fetched.stderr, fetched.stderr  # it went as far as the Hub
    assert list(elsewhere.iterdir()) == []  # nothing written where the commands ran


def test_a_raw_data_dir_that_does_not_exist_says_so(tmp_path):
    """A mistyped, relative RAW_DATA_DIR: one line saying it does not exist, the path resolved
    against the project, with the commands that put data there as the README names them; an
    existing folder without the datasets is "nothing found" instead."""
    result = run_dbt(CHECK_ONLY, "no_such_raw_dir", tmp_path / "wh.duckdb", tmp_path, check=False)
    assert result.returncode != 0
    out = result.output
    assert "Traceback" not in out and "missing dataset" not in out and "nothing found" not in out
    resolved = shlex.quote(str(REPO / "no_such_raw_dir"))
    (line,) = [x.strip() for x in out.splitlines() if "does not exist" in x]
    assert line.startswith(f"RAW_DATA_DIR={resolved} does not exist: "), line
    assert re.findall(r"`([^`]+)`", line) == [f"preftools generate --out {resolved}",
                                              f"preftools fetch --raw-data-dir {resolved}"], line
    assert not (tmp_path / "wh.duckdb").exists()

    # an existing empty folder, with a registry entry: its line names the fetch as the README does
    empty = tmp_path / "empty"
    empty.mkdir()
    entry = REGISTRY_VARS["extra_datasets"][0]
    result = run_dbt([*CHECK_ONLY, "--vars", json.dumps({"extra_datasets": [entry]})], empty, tmp_path / "wh.duckdb",
                     tmp_path, check=False)
    assert result.returncode != 0 and "does not exist" not in result.output
    (line,) = problem_lines(result.output, "nothing found")
    assert line.startswith(f"nothing found under RAW_DATA_DIR={empty}: none of the datasets ("
                           "argilla/ultrafeedback-binarized-curation, coseal/CodeUltraFeedback, "), line
    assert "is the path right?" in line and "2 problem(s)" in result.output
    (line,) = problem_lines(result.output, f"extra_datasets entry {entry['name']}")
    assert f"-- fetch it with `preftools fetch --raw-data-dir {empty} --vars <the file with your extra_datasets>`" \
        in line, line


@pytest.mark.slow
def test_the_generate_hint_fills_an_empty_raw_data_dir(tmp_path):
    """An empty RAW_DATA_DIR and a subset of groups: the generate hint, pasted, makes the check pass."""
    raw = tmp_path / "empty raw"
    raw.mkdir()
    rever = ["--vars", "{datasets: [rever]}"]
    result = run_dbt([*CHECK_ONLY, *rever], raw, tmp_path / "wh.duckdb", tmp_path / "check", check=False)
    (line,) = problem_lines(result.output, "nothing found")
    commands = re.findall(r"`([^`]+)`", line)
    assert commands == [
        f"preftools generate --out {shlex.quote(str(raw))} --datasets rever_judge,rever_rubric",
        f"preftools fetch --raw-data-dir {shlex.quote(str(raw))} --datasets rever_judge,rever_rubric",
    ], line
    generated = pasted(commands[0], tmp_path / "elsewhere", tmp_path, timeout=300)
    assert generated.returncode == 0, generated.stderr[-3000:]
    run_dbt([*CHECK_ONLY, *rever], raw, tmp_path / "wh.duckdb", tmp_path / "check")  # passes now


def test_schema_drift_names_dataset_file_column_and_types(tiny_raw, tmp_path):
    raw = copy_raw(tiny_raw, tmp_path / "raw")
    # overall_score as a string (top-level column of another type)
    uf = first_file(raw, "ultrafeedback")
    rewrite(uf, lambda t: replace_column(t, "score_best_overall", t["score_best_overall"].cast(pa.string())))
    # rating as an integer (nested field of another type)
    cuf = first_file(raw, "code_ultrafeedback")
    ann_type = pa.list_(pa.struct([("model", pa.string()), ("rating", pa.int64()), ("rationale", pa.string())]))
    rewrite(cuf, lambda t: replace_column(t, "annotations", pa.nulls(len(t), ann_type)))
    # messages as a JSON string
    judge = first_file(raw, "rever_judge")
    rewrite(judge, lambda t: replace_column(t, "messages", pa.array(["[]"] * len(t), pa.string())))
    # a required column missing
    std = first_file(raw, "code_ultrafeedback_standard")
    rewrite(std, lambda t: t.drop_columns(["rejected_score"]))

    result = run_dbt(CHECK_ONLY, raw, tmp_path / "wh.duckdb", tmp_path, check=False)
    assert result.returncode != 0
    out = result.output
    assert "Traceback" not in out
    mismatch = [line.strip() for line in out.splitlines() if "schema mismatch" in line]
    assert len(mismatch) == 4, out

    def line_for(hub_id: str) -> str:
        found = [line for line in mismatch if f"dataset {hub_id}," in line]
        assert len(found) == 1, (hub_id, mismatch)
        return found[0]

    line = line_for("argilla/ultrafeedback-binarized-curation")
    assert str(uf) in line and "`score_best_overall`" in line and "expected DOUBLE, found VARCHAR -- write it as float64" in line
    line = line_for("coseal/CodeUltraFeedback")
    assert "`annotations`" in line and "`annotations[].rating` expected VARCHAR, found BIGINT" in line
    line = line_for("OpenRubrics/ReVeR-Traces-Judge")
    assert "`messages`" in line and "found VARCHAR" in line
    line = line_for("RLHFlow/CodeUltraFeedback-standard")
    assert "`rejected_score` is missing" in line


def test_extra_columns_and_mixed_files_are_accepted(tiny_raw, tmp_path):
    """Extra columns are ignored; files of one dataset may differ in column order and extras."""
    raw = copy_raw(tiny_raw, tmp_path / "raw")
    path = first_file(raw, "rever_judge")
    for other in set(DATASETS_BY_KEY["rever_judge"].data_files(raw)) - {path}:
        other.unlink()  # one file, split in two below
    table = pq.read_table(path)
    half = len(table) // 2
    pq.write_table(table.slice(0, half).append_column("notes", pa.array(["x"] * half)),
                   path.with_name("train-00000-of-00002.parquet"))
    reordered = table.slice(half).select(list(reversed(table.column_names)))
    pq.write_table(reordered, path.with_name("train-00001-of-00002.parquet"))
    if path.name not in ("train-00000-of-00002.parquet", "train-00001-of-00002.parquet"):
        path.unlink()
    run_dbt(["run", "-s", "stg_rever__trajectories"], raw, tmp_path / "wh.duckdb", tmp_path)
    con = duckdb.connect(str(tmp_path / "wh.duckdb"), read_only=True)
    assert con.execute("select count(*) from staging.stg_rever__trajectories").fetchone()[0] == len(table)
    assert con.execute("select count(distinct source_file) from staging.stg_rever__trajectories").fetchone()[0] == 2


def test_quote_in_raw_data_dir_cannot_change_the_sql(tiny_raw, tmp_path):
    raw = copy_raw(tiny_raw, tmp_path / "it's raw'); drop table x; --")
    result = run_dbt(["run", "-s", "path:models/staging"], raw, tmp_path / "wh.duckdb", tmp_path)
    assert "Completed successfully" in result.output
    con = duckdb.connect(str(tmp_path / "wh.duckdb"), read_only=True)
    expected = sum(pq.read_metadata(f).num_rows for f in DATASETS_BY_KEY["ultrafeedback"].data_files(raw))
    assert con.execute("select count(*) from staging.stg_ultrafeedback__prompts").fetchone()[0] == expected


def test_locked_warehouse_says_locked_and_by_whom(tiny_raw, tmp_path):
    db = tmp_path / "wh.duckdb"
    holder = duckdb.connect(str(db))  # a notebook holding the file for writing
    try:
        result = run_dbt(CHECK_ONLY, tiny_raw, db, tmp_path, check=False, share_parse=False)  # the message names db
    finally:
        holder.close()
    assert result.returncode != 0
    out = result.output
    assert "Traceback" not in out
    line = [line for line in out.splitlines() if "is locked by" in line]
    assert len(line) == 1, out[-3000:]
    assert f"The warehouse file {db} is locked by" in line[0]
    assert f"(PID {os.getpid()})" in line[0]  # the holder is this test process
