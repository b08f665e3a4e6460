"""Bad raw inputs fail early, with one clear line per problem (issue 8: missing inputs,
schema drift, quoting); extra columns and column order don't matter. Other representations of
the same values, and the generated contract macro: test_raw_contract.py (issue 17)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import generate_raw, run_dbt
from preftools.contract import DATASETS_BY_KEY

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


def test_missing_dataset_fails_with_one_line_each(tiny_raw, tmp_path):
    raw = copy_raw(tiny_raw, tmp_path / "raw")
    shutil.rmtree(raw / "coseal")
    shutil.rmtree(raw / "OpenRubrics" / "ReVeR-Traces-Rubric")
    result = run_dbt(CHECK_ONLY, raw, tmp_path / "wh.duckdb", tmp_path, check=False)
    assert result.returncode != 0
    out = result.output
    lines = [line.strip() for line in out.splitlines() if "missing dataset" in line]
    assert len(lines) == 2, out
    assert any("coseal/CodeUltraFeedback" in line and f"{raw}/coseal/CodeUltraFeedback/data/*.parquet" in line
               for line in lines)
    assert any("OpenRubrics/ReVeR-Traces-Rubric" in line for line in lines)
    for line in lines:
        assert "preftools.generate" in line and "make fetch" in line and "datasets:" in line
    assert "2 problem(s)" in out
    assert "Traceback" not in out
    assert not (tmp_path / "wh.duckdb").exists() or "stg_" not in out


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
    path = first_file(raw, "rever_rubric")
    table = pq.read_table(path)
    half = len(table) // 2
    pq.write_table(table.slice(0, half).append_column("notes", pa.array(["x"] * half)), path)
    reordered = table.slice(half).select(list(reversed(table.column_names)))
    pq.write_table(reordered, path.with_name("train-00001-of-00002.parquet"))
    run_dbt(["run", "-s", "stg_rever__rubrics"], raw, tmp_path / "wh.duckdb", tmp_path)
    con = duckdb.connect(str(tmp_path / "wh.duckdb"), read_only=True)
    assert con.execute("select count(*) from staging.stg_rever__rubrics").fetchone()[0] == len(table)
    assert con.execute("select count(distinct source_file) from staging.stg_rever__rubrics").fetchone()[0] == 2


def test_quote_in_raw_data_dir_cannot_change_the_sql(tiny_raw, tmp_path):
    raw = copy_raw(tiny_raw, tmp_path / "it's raw'); drop table x; --")
    result = run_dbt(["run", "-s", "path:models/staging"], raw, tmp_path / "wh.duckdb", tmp_path)
    assert "Completed successfully" in result.output
    con = duckdb.connect(str(tmp_path / "wh.duckdb"), read_only=True)
    expected = pq.read_metadata(first_file(raw, "ultrafeedback")).num_rows
    assert con.execute("select count(*) from staging.stg_ultrafeedback__prompts").fetchone()[0] == expected


def test_locked_warehouse_says_locked_and_by_whom(tiny_raw, tmp_path):
    db = tmp_path / "wh.duckdb"
    holder = duckdb.connect(str(db))  # a notebook holding the file for writing
    try:
        result = run_dbt(CHECK_ONLY, tiny_raw, db, tmp_path, check=False)
    finally:
        holder.close()
    assert result.returncode != 0
    out = result.output
    assert "Traceback" not in out
    line = [line for line in out.splitlines() if "is locked by" in line]
    assert len(line) == 1, out[-3000:]
    assert f"The warehouse file {db} is locked by" in line[0]
    assert f"(PID {os.getpid()})" in line[0]  # the holder is this test process
