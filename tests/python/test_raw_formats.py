"""The same raw data in other formats and layouts gives the same warehouse.

The session's generated data is rewritten with every dataset in another format and layout of the
Hub (JSON Lines, gzip and zstd, a JSON array, Parquet where the default is JSON; data/, the root,
default/<split>/; the example registry's Parquet entries as JSON, hh-rlhf's JSON Lines as gzipped
CSV), by Python's json and csv modules here, not by the build's reader; the build on the copy
must hold the same rows in every table and view of staging, intermediate, main, audits and
reporting as the session build (EXCEPT ALL both ways), the file-name columns aside (`source_file`,
`published_source_file`: compared without the format suffix; the row-key tables' `filename`, the repo
path, left out). A raw row's key comes from its content, so it does not change with the format."""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import shutil
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from conftest import SCENARIO_BUILD, run_dbt
from preftools.inputs import contract as C
from preftools.inputs.hub_layout import DataFile, file_format, local_data_files, read_table
from preftools.outputs.diff import diff

pytestmark = pytest.mark.slow

SUFFIX_RE = r"(\.parquet|\.(jsonl?|csv)(\.gz|\.zst)?)$"
SUFFIX = re.compile(SUFFIX_RE)
# dataset key -> (folder inside the repo, how the files are written)
LAYOUTS = {
    "ultrafeedback": ("data", "jsonl.gz"),
    "code_ultrafeedback": ("", "jsonl"),
    "code_ultrafeedback_standard": ("default/train", "json-array"),
    "rever_judge": ("data", "jsonl.zst"),
    "rever_rubric": ("data", "parquet"),
}
# the example registry's entries (conftest.REGISTRY_VARS), each data file rewritten in its folder
# (their cards' patterns name no extension): the Parquet ones as JSON, hh-rlhf's transcripts (two
# text columns) as CSV; openbmb's JSON Lines copied as they are
EXTRA_LAYOUTS = {
    "HuggingFaceH4/ultrafeedback_binarized": "jsonl",
    "argilla/ultrafeedback-binarized-preferences-cleaned": "jsonl.gz",
    "RLHFlow/UltraFeedback-preference-standard": "json-array",
    "openbmb/UltraFeedback": None,
    "Anthropic/hh-rlhf": "csv.gz",
}
SCHEMAS = ["staging", "intermediate", "main", "audits", "reporting"]


def _json_default(value):
    raise TypeError(f"not JSON: {type(value)}")


def write_as(table, path: Path, how: str) -> None:
    rows = table.to_pylist()
    lines = "".join(json.dumps(r, ensure_ascii=False, default=_json_default) + "\n" for r in rows)
    if how == "parquet":
        pq.write_table(table, path)
    elif how == "jsonl":
        path.write_text(lines, encoding="utf-8")
    elif how == "jsonl.gz":
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(lines)
    elif how == "json-array":
        path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    elif how == "csv.gz":  # a header row, then one row per record; every value a string
        assert all(isinstance(v, str) and v for r in rows for v in r.values()), "CSV holds non-empty strings only"
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=table.column_names)
        writer.writeheader()
        writer.writerows(rows)
        with gzip.open(path, "wt", encoding="utf-8", newline="") as f:
            f.write(text.getvalue())
    elif how == "jsonl.zst":  # no zstd in Python's standard library before 3.14: DuckDB compresses
        plain = path.with_name(path.stem)  # x.jsonl
        plain.write_text(lines, encoding="utf-8")
        with duckdb.connect() as con:
            con.execute("copy (select * from read_json(?)) to '" + str(path).replace("'", "''") + "' (format json, compression zstd)",
                        [str(plain)])
        plain.unlink()
    else:
        raise ValueError(how)


def converted_copy(raw: Path, out: Path) -> dict[str, list[str]]:
    """``raw`` with each dataset rewritten per LAYOUTS (same file stems); the files written."""
    written = {}
    for key, (folder, how) in LAYOUTS.items():
        ds = C.DATASETS_BY_KEY[key]
        repo = ds.repo_dir(out)
        repo.mkdir(parents=True)
        written[key] = []
        for f in local_data_files(ds.repo_dir(raw)):
            src = ds.repo_dir(raw) / f.path
            table = read_table(ds.repo_dir(raw), [f])
            stem = SUFFIX.sub("", src.name)
            suffix = {"json-array": "json"}.get(how, how)
            target = repo / folder / f"{stem}.{suffix}"
            target.parent.mkdir(parents=True, exist_ok=True)
            write_as(table, target, how)
            written[key].append(str(target.relative_to(repo)))
    for hub_id, how in EXTRA_LAYOUTS.items():
        data = None if how is None else (lambda _folder, names: [n for n in names if SUFFIX.search(n)])
        shutil.copytree(raw / hub_id, out / hub_id, ignore=data)
        for src in sorted(p for p in (raw / hub_id).rglob("*") if SUFFIX.search(p.name)) if how else []:
            rel = src.relative_to(raw / hub_id).as_posix()
            table = read_table(raw / hub_id, [DataFile(rel, "train", file_format(rel))])
            suffix = {"json-array": "json"}.get(how, how)
            write_as(table, out / hub_id / SUFFIX.sub(f".{suffix}", rel), how)
    for extra in ("_generator_manifest.json",):
        if (raw / extra).exists():
            shutil.copy2(raw / extra, out / extra)
    return written


def relations(con, db: str) -> list[tuple[str, str]]:
    return con.execute(
        f"""select schema_name, table_name from duckdb_tables() where database_name = '{db}'
            union all select schema_name, view_name from duckdb_views() where database_name = '{db}' and not internal
            order by 1, 2"""
    ).fetchall()


def test_json_and_other_layouts_build_the_same_warehouse(warehouse, tmp_path):
    copy = tmp_path / "raw"
    written = converted_copy(warehouse.raw_dir, copy)
    # the build sees exactly the files written, in their new formats and folders
    for key, files in written.items():
        assert [f.path for f in local_data_files(C.DATASETS_BY_KEY[key].repo_dir(copy))] == files
    db = tmp_path / "warehouse.duckdb"
    run_dbt(SCENARIO_BUILD, copy, db, tmp_path / "work")

    con = duckdb.connect()
    con.execute(f"attach '{warehouse.path}' as parquet_build (read_only)")
    con.execute(f"attach '{db}' as json_build (read_only)")
    left = [r for r in relations(con, "parquet_build") if r[0] in SCHEMAS]
    right = [r for r in relations(con, "json_build") if r[0] in SCHEMAS]
    assert left == right and len(left) > 50
    differences = {}
    for schema, name in left:
        cols = [r[0] for r in con.execute(f'describe parquet_build."{schema}"."{name}"').fetchall()]
        file_columns = [c for c in cols if c.endswith("source_file")]  # source_file, published_source_file
        # the row keys' `filename` is the file's repo path, which the layouts change on purpose
        select = "*" + (" exclude (filename)" if "filename" in cols else "")
        select += "" if not file_columns else " replace (" + ", ".join(
            f"regexp_replace({c}, '{SUFFIX_RE}', '') as {c}" for c in file_columns) + ")"
        a = f'select {select} from parquet_build."{schema}"."{name}"'
        b = f'select {select} from json_build."{schema}"."{name}"'
        n_a = con.execute(f"select count(*) from ({a} except all {b})").fetchone()[0]
        n_b = con.execute(f"select count(*) from ({b} except all {a})").fetchone()[0]
        if n_a or n_b:
            differences[f"{schema}.{name}"] = (n_a, n_b)
    assert not differences, differences
    # and the copy really is in other formats: no dataset kept a file of the session's format and name
    assert con.execute("select count(*) from json_build.staging.stg_raw__files where source_file like '%.jsonl.gz'").fetchone()[0] > 0
    # hh-rlhf's rows read from CSV: every row counted from the files, all of them in its pairs' accounting
    assert con.execute("select sum(n_rows) from json_build.staging.stg_raw__files where dataset_key = 'hh_helpful' "
                       "and source_file like '%.csv.gz'").fetchone()[0] == \
        con.execute("select sum(n_rows) from parquet_build.staging.stg_raw__files where dataset_key = 'hh_helpful'").fetchone()[0] > 0
    con.close()

    # `preftools diff` of the two builds: rows moved to other files, nothing added, removed or modified
    diff(warehouse.path, db, tmp_path / "diff")
    out = duckdb.connect(str(tmp_path / "diff" / "diff.duckdb"), read_only=True)
    changed = out.execute("select relation from relations where n_added + n_removed + n_modified > 0"
                          " or not (in_old and in_new)").fetchall()
    assert changed == []
    assert out.execute("select count(*) from pair_changes").fetchone()[0] == 0
    assert out.execute("select count(*) from relations where n_moved > 0").fetchone()[0] > 10


def test_a_json_file_is_held_to_the_same_contract(raw_dir, tmp_path):
    """A JSON Lines file whose column has a representation the contract rejects (ReVeR's `messages`
    as one string instead of a list of messages) stops the build before anything is built, in one
    line naming the file, the column and the fix, as for Parquet."""
    copy = tmp_path / "raw"
    shutil.copytree(raw_dir, copy)
    (rubrics,) = C.DATASETS_BY_KEY["rever_rubric"].data_files(copy)
    assert rubrics.name.endswith(".jsonl")
    rows = [json.loads(line) for line in rubrics.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:
        row["messages"] = json.dumps(row["messages"])
    rubrics.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    db = tmp_path / "warehouse.duckdb"
    result = run_dbt(["build"], copy, db, tmp_path / "work", check=False)
    assert result.returncode != 0 and "Traceback" not in result.output
    (line,) = [l for l in result.output.splitlines() if "schema mismatch" in l]
    assert f"file {rubrics}, column `messages`: expected STRUCT(" in line and "found VARCHAR" in line, line
    assert " -- " in line  # the fix
