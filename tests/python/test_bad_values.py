"""Bad values, partial inputs and failed builds: the build never loses or invents a row.

Each test plants its faults in a small generated raw dir, builds, and checks the outcome: the
build succeeds and the fault is counted and visible (rejects, flags, integrity rows), with the
row accounting balanced (the dbt test row_accounting_balances runs inside `dbt build`).

The raw data is the generator's default, as on the Hub: UltraFeedback in 4 Parquet shards,
ReVeR-Traces-Rubric one JSON Lines file; the faults go into each dataset's first file, written
back in its own format."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from conftest import SCENARIO_BUILD, generate_raw, run_dbt
from preftools.generate.writer import count_rows, read_file, write_file
from preftools.inputs.contract import DATASETS_BY_KEY


def first_file(raw: Path, key: str) -> Path:
    """The first of a dataset's data files (by the Hub's rule, in order)."""
    return DATASETS_BY_KEY[key].data_files(raw)[0]


def file_rows(raw: Path, key: str) -> list[dict]:
    return read_file(first_file(raw, key), DATASETS_BY_KEY[key].schema).to_pylist()


def edit_rows(raw: Path, key: str, edit) -> None:
    """Rewrite a dataset's first file, in its format, after `edit(rows)` changed its rows
    (list of dicts) in place."""
    rows = file_rows(raw, key)
    edit(rows)
    write_file(pa.Table.from_pylist(rows, schema=DATASETS_BY_KEY[key].schema), first_file(raw, key), key)


@pytest.fixture(scope="module")
def tiny_raw(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tiny_raw")
    generate_raw(out, scale=0.003)
    return out


@pytest.fixture(scope="module")
def faulty(tiny_raw, tmp_path_factory):
    """A raw dir with bad values planted in every dataset, built once."""
    work = tmp_path_factory.mktemp("faulty")
    raw = work / "raw"
    shutil.copytree(tiny_raw, raw)
    big = "x" * (1 << 20)

    def ultrafeedback(rows):
        c = rows[0]["completions"][0]
        c["annotations"]["helpfulness"]["Rating"] = "7"           # out of range
        c["annotations"]["truthfulness"]["Rating"] = "abc"        # not a number
        rows[1]["instruction"] = None                              # NULL instruction
        rows[1]["completions"][0]["response"] = "before\x00after"  # NUL byte
        rows[2]["completions"][0]["response"] = big                # 1 MB response
        rows[3]["completions"][1]["critique"] = "bad \ufffd\ufffd bytes"  # replacement chars
        rows[4]["completions"] = []                                # empty list
        rows[5]["completions"] = None                              # NULL list

    def code(rows):
        rows[0]["annotations"][0]["rating"] = "10"
        rows[1]["annotations"] = None
        rows[2]["responses"] = []

    def judge(rows):
        rows[0]["candidate"] = "maybe"                              # neither chosen nor rejected
        rows.append(dict(rows[1]))                                  # duplicate trajectory (same id, candidate)
        msgs = [dict(m) for m in rows[2]["messages"]]
        msgs[-1]["content"] = msgs[-1]["content"].split("<judge>")[0] + "<judge>{not json</judge>"
        rows[2]["messages"] = msgs
        rows[3]["messages"] = []                                    # empty messages

    def rubric(rows):
        rows.append(dict(rows[0]))                                  # duplicate rubric id
        rows[1]["messages"] = [m for m in rows[1]["messages"] if m["role"] == "user"]  # no rubric at all

    edit_rows(raw, "ultrafeedback", ultrafeedback)
    edit_rows(raw, "code_ultrafeedback", code)
    edit_rows(raw, "rever_judge", judge)
    edit_rows(raw, "rever_rubric", rubric)
    db = work / "wh.duckdb"
    result = run_dbt(SCENARIO_BUILD, raw, db, work, check=False)
    return raw, db, result


def rows(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_bad_values_do_not_fail_the_build(faulty):
    _, _, result = faulty
    assert result.returncode == 0, result.output[-6000:]
    assert "row_accounting_balances" in result.output  # the balance test ran and passed


def test_every_raw_row_is_accounted_for(faulty):
    raw, db, _ = faulty
    accounted = dict(rows(db, "select dataset, sum(n_rows) from row_accounting group by 1"))
    for key in ("ultrafeedback", "code_ultrafeedback", "code_ultrafeedback_standard", "rever_judge", "rever_rubric"):
        assert accounted[key] == sum(count_rows(p) for p in DATASETS_BY_KEY[key].data_files(raw)), key
    assert rows(db, "select count(*) from row_accounting where destination = 'unexplained'") == [(0,)]


def test_bad_ultrafeedback_values_are_visible(faulty):
    raw, db, _ = faulty
    first = first_file(raw, "ultrafeedback").name
    flagged = rows(db, f"""
        select helpfulness_rating, truthfulness_rating, has_invalid_rating
        from ultrafeedback_completion_scores
        where source_file = '{first}' and source_row = 0 and completion_index = 0""")
    assert flagged == [(None, None, True)]
    # texts survive byte for byte
    assert rows(db, f"""select response from ultrafeedback_completion_scores
        where source_file = '{first}' and source_row = 1 and completion_index = 0""") == [("before\x00after",)]
    assert rows(db, f"""select length(response) from ultrafeedback_completion_scores
        where source_file = '{first}' and source_row = 2 and completion_index = 0""") == [(1 << 20,)]
    assert rows(db, f"""select instruction is null from ultrafeedback_curated
        where source_file = '{first}' and source_row = 1""") == [(True,)]
    reasons = dict(rows(db, f"""select source_row, reason from rejects_ultrafeedback
        where source_file = '{first}' and source_row in (4, 5)"""))
    assert reasons == {4: "no_completions", 5: "no_completions"}


def test_bad_code_ultrafeedback_values_are_visible(faulty):
    raw, db, _ = faulty
    first = first_file(raw, "code_ultrafeedback").name
    model = file_rows(raw, "code_ultrafeedback")[0]["annotations"][0]["model"]
    assert rows(db, f"""select r.rating_raw, r.rating from code_ultrafeedback_responses as r
        inner join code_ultrafeedback_prompts as p on r.prompt_id = p.prompt_id
        where p.source_file = '{first}' and p.source_row = 0 and r.model = '{model}'""") == [("10", None)]
    reasons = dict(rows(db, f"""select source_row, reason from rejects_code_ultrafeedback
        where source_file = '{first}' and source_row in (1, 2)"""))
    assert reasons == {1: "empty_annotations", 2: "no_responses"}


def test_bad_rever_values_are_visible(faulty):
    raw, db, _ = faulty
    judge = file_rows(raw, "rever_judge")
    assert len(DATASETS_BY_KEY["rever_judge"].data_files(raw)) == 1
    reasons = dict(rows(db, "select source_row, reason from rejects_rever_judge"))
    assert reasons[0] == "invalid_candidate"
    assert reasons[3].startswith("verdict_")
    assert rows(db, "select verdict_status from rever_trajectories where source_row = 2") == [("malformed_json",)]
    # the appended copy of row 1 (same id and candidate): exactly what row 1 has, plus duplicate_candidate
    def kinds(level: str, source_row: int) -> Counter:
        return Counter(k for (k,) in rows(db, f"""select kind from rever_integrity
            where level = '{level}' and source_row = {source_row}"""))

    copy = len(judge) - 1
    assert judge[copy] == judge[1]
    assert kinds("trajectory", copy) == kinds("trajectory", 1) + Counter(["duplicate_candidate"])
    assert rows(db, f"""select id, candidate from rever_integrity
        where kind = 'duplicate_candidate' and source_row = {copy}""") == [(judge[1]["id"], judge[1]["candidate"])]
    assert [p.name for p in DATASETS_BY_KEY["rever_rubric"].data_files(raw)] == ["train.jsonl"]
    rubric = file_rows(raw, "rever_rubric")
    rubric_reasons = dict(rows(db, "select source_row, reason from rejects_rever_rubric"))
    assert rubric_reasons == {1: "no_rubric_items"}
    # the appended copy of rubric row 0: a duplicate_rubric, on top of what row 0 has
    copy = len(rubric) - 1
    assert kinds("rubric", copy) == kinds("rubric", 0) + Counter(["duplicate_rubric"])
    assert rows(db, f"""select id from rever_integrity
        where kind = 'duplicate_rubric' and source_row = {copy}""") == [(rubric[0]["id"],)]


def test_build_only_the_datasets_you_have(tmp_path):
    raw = tmp_path / "raw"
    generate_raw(raw, scale=0.002)
    shutil.rmtree(raw / "coseal")
    shutil.rmtree(raw / "RLHFlow")
    shutil.rmtree(raw / "OpenRubrics")
    db = tmp_path / "wh.duckdb"
    run_dbt(["build", "--vars", "{datasets: [ultrafeedback]}"], raw, db, tmp_path)  # as a user types it: unit tests too
    assert rows(db, "select distinct dataset from preference_pairs") == [("ultrafeedback",)]
    assert {k for (k,) in rows(db, "select distinct dataset from row_accounting")} == {"ultrafeedback"}
    tables = {t for (t,) in rows(db, "select table_name from information_schema.tables where table_schema = 'main'")}
    assert not any(t.startswith(("code_", "rever_", "judge_")) for t in tables), tables


def test_failed_build_keeps_the_previous_marts(warehouse, tmp_path):
    """A copy of the session's good build; one raw file truncated (an interrupted download);
    the rebuild fails naming the file, and the previous marts are still there, unchanged."""
    raw = tmp_path / "raw"
    shutil.copytree(warehouse.raw_dir, raw)
    db = tmp_path / "wh.duckdb"
    shutil.copy(warehouse.path, db)
    query = "select dataset, count(*), sum(chosen_score) from preference_pairs group by 1 order by 1"
    before = rows(db, query)
    assert before
    bad = first_file(raw, "code_ultrafeedback")
    bad.write_bytes(bad.read_bytes()[: 200])
    result = run_dbt(["build"], raw, db, tmp_path, check=False)
    assert result.returncode != 0
    assert str(bad) in result.output and "Traceback" not in result.output
    assert rows(db, query) == before
