"""Reuse of unchanged nodes in `dbt build` (macros/build_reuse/).

A build into a warehouse that already holds a build skips every table model, view model, seed
and passing data or unit test whose inputs did not change (their run result says REUSED) and
must still give exactly the relations a fresh build gives. Checked here:

1. unchanged raw data: everything is reused (unit tests included) except warehouse_build_info
   and its tests, and every relation equals the first build's;
2. a raw file rewritten, a file added and a file removed (one of each, in three datasets, two
   datasets unchanged): the build into the old warehouse equals a fresh build on the new files,
   the models of the changed datasets were built and the others reused;
3. a model's SQL changed (the random_seed var is compiled into one intermediate model): that
   model, its unit tests and its descendants are built, its parent, siblings and the other unit
   tests reused; then another engine version (the state's `engine` row): nothing is reused;
4. a table changed outside dbt (a planted duplicate key) is seen, its tests run and one
   fails; the next run runs the failing test again (it still fails) and reuses the passing ones;
5. a view replaced outside dbt by one with other columns is seen and created again.

Every comparison covers all schemas (tables: EXCEPT ALL both ways, column names and types,
the comments persist_docs writes; views: their rows), except the state table itself and the
build-time columns of meta.warehouse_build_info.

The changed files of 2 change in place: RAW_DATA_DIR is compiled into the staging models' SQL,
so a build on another folder rebuilds them whatever the files hold. Every test here runs dbt
(marked slow); about 3 minutes in all on a quiet 2-core machine, on top of the session build.

Run: python -m pytest tests/python/test_build_reuse.py -x -q
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from conftest import run_dbt

STATE_TABLE = ("meta", "dbt_build_reuse")
BUILD_INFO = ("meta", "warehouse_build_info")
# differ between two builds of the same data by design
BUILD_INFO_VOLATILE = {"invocation_id", "built_at"}
ALWAYS_BUILT = {"model.preference_warehouse.warehouse_build_info"}

UF = "argilla/ultrafeedback-binarized-curation/data"
CUF = "coseal/CodeUltraFeedback/data"
JUDGE = "OpenRubrics/ReVeR-Traces-Judge/data"
SRC = "source.preference_warehouse."
# a registry entry's file (examples/extra_datasets.yml's hh_helpful: conftest.run_dbt registers
# the entries) and the staging view that reads the preference and transcript entries' files
HH_TRAIN = "Anthropic/hh-rlhf/helpful-base/train.jsonl.gz"
EXTRA_STAGING = "model.preference_warehouse.stg_extra__preference_rows"
CHANGED_SOURCES = {
    SRC + "ultrafeedback.ultrafeedback_binarized_curation",  # file rewritten
    SRC + "code_ultrafeedback.code_ultrafeedback",  # file added
    SRC + "rever.rever_traces_judge",  # file removed
}


# ------------------------------------------------------------------------------------------
# helpers


def results(work: Path) -> dict[str, dict]:
    """unique_id -> {status, reused} from the run's run_results.json."""
    data = json.loads((work / "target" / "run_results.json").read_text())
    return {
        r["unique_id"]: {"status": r["status"], "reused": (r.get("adapter_response") or {}).get("code") == "REUSED"}
        for r in data["results"]
    }


def manifest(work: Path) -> dict:
    return json.loads((work / "target" / "manifest.json").read_text())


def models_materialized(man: dict, kinds=("table",)) -> set[str]:
    return {uid for uid, n in man["nodes"].items()
            if n["resource_type"] == "model" and n["config"]["materialized"] in kinds}


def descendants(man: dict, roots: set[str]) -> set[str]:
    seen, todo = set(), list(roots)
    while todo:
        for child in man["child_map"].get(todo.pop(), []):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen


def relations(con, db: str) -> dict[tuple[str, str], str]:
    rows = con.execute(
        "select schema_name, table_name, 'table' from duckdb_tables() where database_name = ?"
        " union all select schema_name, view_name, 'view' from duckdb_views()"
        " where database_name = ? and not internal", [db, db]).fetchall()
    return {(s, t): kind for s, t, kind in rows if (s, t) != STATE_TABLE}


def differences(a: Path, b: Path) -> list[str]:
    """Every way the relations of two warehouse files differ (empty: indistinguishable)."""
    out = []
    with duckdb.connect() as con:
        con.execute(f"attach '{a}' as a (read_only)")
        con.execute(f"attach '{b}' as b (read_only)")
        ra, rb = relations(con, "a"), relations(con, "b")
        if ra != rb:
            out.append(f"relations differ: only in a {sorted(set(ra.items()) - set(rb.items()))},"
                       f" only in b {sorted(set(rb.items()) - set(ra.items()))}")
        comments = ("select schema_name, table_name, comment from duckdb_tables() where database_name = ?"
                    " union all select schema_name, view_name, comment from duckdb_views() where database_name = ?")
        ca = sorted(r for r in con.execute(comments, ["a", "a"]).fetchall() if tuple(r[:2]) != STATE_TABLE)
        cb = sorted(r for r in con.execute(comments, ["b", "b"]).fetchall() if tuple(r[:2]) != STATE_TABLE)
        if ca != cb:
            out.append("relation comments differ")
        for (schema, name) in sorted(set(ra) & set(rb)):
            cols = ("select column_name, data_type, comment from duckdb_columns()"
                    " where database_name = ? and schema_name = ? and table_name = ? order by column_index")
            cols_a = con.execute(cols, ["a", schema, name]).fetchall()
            cols_b = con.execute(cols, ["b", schema, name]).fetchall()
            if cols_a != cols_b:
                out.append(f"{schema}.{name}: columns or their comments differ")
                continue
            names = [c[0] for c in cols_a if not ((schema, name) == BUILD_INFO and c[0] in BUILD_INFO_VOLATILE)]
            select = ", ".join(f'"{c}"' for c in names)
            for x, y in (("a", "b"), ("b", "a")):
                n = con.execute(
                    f'select count(*) from (select {select} from {x}."{schema}"."{name}"'
                    f' except all select {select} from {y}."{schema}"."{name}")').fetchone()[0]
                if n:
                    out.append(f"{schema}.{name}: {n} rows of {x} not in {y}")
    return out


def copy_db(src: Path, dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, dst)
    if Path(f"{src}.wal").exists():
        shutil.copy(f"{src}.wal", f"{dst}.wal")
    return dst


def reused_ids(res: dict[str, dict]) -> set[str]:
    return {uid for uid, r in res.items() if r["reused"]}


def split_file(path: Path, keep: str, rest: str | None) -> None:
    """Rewrite `path` with its first half (`keep`: file name), the second half in `rest`."""
    table = pq.read_table(path)
    half = table.num_rows // 2
    path.unlink()
    pq.write_table(table.slice(0, half), path.parent / keep)
    if rest:
        pq.write_table(table.slice(half), path.parent / rest)


def only_file(folder: Path) -> Path:
    (path,) = sorted(folder.glob("*.parquet"))
    return path


# ------------------------------------------------------------------------------------------
# 1. unchanged data


@pytest.mark.slow
def test_unchanged_data_reuses_everything_and_equals_the_first_build(warehouse, tmp_path):
    db = copy_db(warehouse.path, tmp_path / "again.duckdb")  # another file name: a copied warehouse
    run_dbt(["build"], warehouse.raw_dir, db, tmp_path / "work", share_parse=False, artifacts=True)  # dbt sees the name
    res = results(tmp_path / "work")
    man = manifest(tmp_path / "work")
    views = models_materialized(man, ("view",))
    assert len(views) > 30
    expected = (models_materialized(man, ("table", "view")) - ALWAYS_BUILT) | {u for u in man["nodes"] if u.startswith("seed.")}
    expected |= {u for u, n in man["nodes"].items() if n["resource_type"] == "test"
                 and not set(n["depends_on"]["nodes"]) & ALWAYS_BUILT}
    expected |= set(man["unit_tests"])
    assert len(man["unit_tests"]) > 5
    reused = reused_ids(res)
    assert expected - reused == set(), sorted(expected - reused)[:20]
    # what still ran: warehouse_build_info and its tests
    assert {u.split(".")[0] for u in set(res) - reused} <= {"model", "test", "operation", "exposure"}
    assert {u for u in set(res) - reused if u.startswith("model.")} == ALWAYS_BUILT
    assert all(r["status"] in ("success", "pass") for u, r in res.items() if not u.startswith("exposure."))
    assert differences(warehouse.path, db) == []


# ------------------------------------------------------------------------------------------
# 2. a file rewritten, a file added, a file removed


@pytest.mark.slow
def test_changed_files_give_the_fresh_build_and_reuse_the_rest(warehouse, tmp_path):
    # old raw data: CodeUltraFeedback holds only its first half, the ReVeR judge is two files.
    # The files change in place below: RAW_DATA_DIR is part of the compiled SQL of the staging
    # models, so a build on another folder rebuilds them whatever the files hold.
    raw = tmp_path / "raw"
    shutil.copytree(warehouse.raw_dir, raw)
    cuf = only_file(raw / CUF)
    cuf_rows = pq.read_table(cuf)
    split_file(cuf, "train-00000-of-00002.parquet", None)
    split_file(only_file(raw / JUDGE), "train-00000-of-00002.parquet", "train-00001-of-00002.parquet")
    old_db = tmp_path / "old.duckdb"
    run_dbt(["build"], raw, old_db, tmp_path / "work_old")

    # new raw data: UltraFeedback's first shard rewritten in place (its last tenth of rows dropped),
    # CodeUltraFeedback's second half added as a second file, the judge's second file removed,
    # the hh-rlhf entry's train file rewritten in place without its last tenth of rows
    uf = sorted((raw / UF).glob("*.parquet"))[0]
    uf_rows = pq.read_table(uf)
    pq.write_table(uf_rows.slice(0, uf_rows.num_rows * 9 // 10), uf)
    pq.write_table(cuf_rows.slice(cuf_rows.num_rows // 2), raw / CUF / "train-00001-of-00002.parquet")
    (raw / JUDGE / "train-00001-of-00002.parquet").unlink()
    hh_lines = gzip.decompress((raw / HH_TRAIN).read_bytes()).splitlines(keepends=True)
    (raw / HH_TRAIN).write_bytes(gzip.compress(b"".join(hh_lines[: len(hh_lines) * 9 // 10])))
    new_raw = raw

    reused_db = copy_db(old_db, tmp_path / "reused.duckdb")
    run_dbt(["build"], new_raw, reused_db, tmp_path / "work_reused", artifacts=True)
    fresh_db = tmp_path / "fresh.duckdb"  # for its relations: no tests (they make none)
    run_dbt(["build", "--exclude-resource-type", "test", "unit_test"], new_raw, fresh_db, tmp_path / "work_fresh")
    assert differences(fresh_db, reused_db) == []

    # selective: what reads a changed dataset was built, everything else reused
    man = manifest(tmp_path / "work_reused")
    res = results(tmp_path / "work_reused")
    raw_files = "model.preference_warehouse.stg_raw__files"  # reads every dataset's footers, no source()
    affected = descendants(man, CHANGED_SOURCES | {raw_files, EXTRA_STAGING}) | {raw_files}
    tables = models_materialized(man) - ALWAYS_BUILT
    built = {u for u in tables if not res[u]["reused"]}
    assert built == tables & affected, (sorted(built - affected), sorted((tables & affected) - built))
    unaffected = tables - affected
    # the tables of the unchanged ReVeR rubric dataset were reused (RLHFlow's published pairs,
    # also unchanged, feed only tables that read CodeUltraFeedback as well)
    assert descendants(man, {SRC + "rever.rever_traces_rubric"}) & unaffected
    # and those of the unchanged rated_completions entry (openbmb)
    assert "model.preference_warehouse.int_extra__rated_pairs" in unaffected
    assert "model.preference_warehouse.int_extra__preference_pairs" in built
    # the tests of unaffected models were reused too
    unaffected_tests = {u for u, n in man["nodes"].items() if n["resource_type"] == "test"
                        and set(n["depends_on"]["nodes"]) and set(n["depends_on"]["nodes"]) <= unaffected}
    assert unaffected_tests and unaffected_tests <= reused_ids(res)


# ------------------------------------------------------------------------------------------
# 3. a model's SQL changed


@pytest.mark.slow
def test_changed_sql_rebuilds_the_model_and_its_descendants_only(warehouse, tmp_path):
    db = copy_db(warehouse.path, tmp_path / "seeded.duckdb")
    # random_seed is compiled into the models that draw random alternates (macros/ranked_picks.sql:
    # int_ultrafeedback__completions_ranked, and int_extra__rated_completions for the registry's
    # rated entries) and into warehouse_build_info
    # models and unit tests (their compiled code is the model's SQL over fixtures), no data tests
    run_dbt(["build", "--exclude", "resource_type:test", "--vars", "{random_seed: 4242}"],
            warehouse.raw_dir, db, tmp_path / "work", artifacts=True)
    man = manifest(tmp_path / "work")
    res = results(tmp_path / "work")
    tables = models_materialized(man) - ALWAYS_BUILT
    changed = {u for u in tables if "4242" in (man["nodes"][u].get("compiled_code") or "")}
    assert "model.preference_warehouse.int_ultrafeedback__completions_ranked" in changed
    expected = (changed | descendants(man, changed)) & tables
    built = {u for u in tables if not res[u]["reused"]}
    assert built == expected, (sorted(built - expected), sorted(expected - built))
    # its parent and a sibling (same parent) were reused
    assert res["model.preference_warehouse.int_ultrafeedback__completions_parsed"]["reused"]
    assert res["model.preference_warehouse.int_ultrafeedback__critique_sentiment_scores"]["reused"]
    # the unit tests of the changed models ran and passed, the others were reused
    unit_tests = {u: set(t["depends_on"]["nodes"]) for u, t in man["unit_tests"].items()}
    assert len(unit_tests) > 5 and all(res[u]["status"] == "pass" for u in unit_tests)
    ran = {u for u in unit_tests if not res[u]["reused"]}
    assert ran == {u for u, parents in unit_tests.items() if parents & changed}, sorted(ran)
    assert any("completions_ranked" in u for u in ran) and ran != set(unit_tests)

    # another engine version (a DuckDB or dbt upgrade) than the one that recorded the state:
    # nothing is reused, the model and its unit test (unchanged, reused above) included
    with duckdb.connect(str(db)) as con:
        con.execute("update meta.dbt_build_reuse set fingerprint = 'duckdb v0.0.0, dbt 0.0.0' where unique_id = 'engine'")
    parsed = "model.preference_warehouse.int_ultrafeedback__completions_parsed"
    upgraded = run_dbt(["build", "--select", "int_ultrafeedback__completions_parsed", "--exclude", "resource_type:test"],
                       warehouse.raw_dir, db, tmp_path / "work_engine", artifacts=True)
    assert "build_reuse: the warehouse was built with duckdb v0.0.0, dbt 0.0.0, this is duckdb v" in upgraded.output
    res = results(tmp_path / "work_engine")
    assert {u.split(".")[0] for u in res if not u.startswith("operation.")} == {"model", "unit_test"}
    assert parsed in res and not any(r["reused"] for r in res.values()), res


# ------------------------------------------------------------------------------------------
# 4. a failing test runs again


@pytest.mark.slow
def test_a_failing_test_is_not_skipped_next_time(warehouse, tmp_path):
    db = copy_db(warehouse.path, tmp_path / "warehouse.duckdb")  # the database name its compiled test names
    # a planted duplicate key: an update outside dbt, which the next run sees in the table's
    # storage signature (so the tests on it cannot be skipped as passing)
    with duckdb.connect(str(db)) as con:
        con.execute("update main.rever_pairs set id = (select min(id) from main.rever_pairs)"
                    " where id = (select max(id) from main.rever_pairs)")
        # and a NULL in a column that must not be NULL: the model's one `checks` test finds both
        con.execute("update main.rever_pairs set source = null where id = (select min(id) from main.rever_pairs)")
    # reuse off: the test runs on the planted row, fails, and its failure is recorded
    # (rever_summary: a table nothing changed, whose tests pass)
    first = run_dbt(["test", "-s", "rever_pairs", "rever_summary", "--vars", "{reuse_unchanged: false}"],
                    warehouse.raw_dir, db, tmp_path / "work1", check=False, artifacts=True)
    assert first.returncode != 0
    assert '"main"."rever_pairs" was changed outside dbt' in first.output, first.output[-3000:]
    res1 = results(tmp_path / "work1")
    (checks_test,) = [u for u in res1 if u.startswith("test.preference_warehouse.checks_rever_pairs.")]
    assert res1[checks_test] == {"status": "fail", "reused": False}
    # one row per broken rule: (rule, rows), here the two rows of the planted id
    run = json.loads((tmp_path / "work1" / "target" / "run_results.json").read_text())["results"]
    (compiled,) = [r["compiled_code"] for r in run if r["unique_id"] == checks_test]
    with duckdb.connect(str(db), read_only=True) as con:
        assert sorted(con.execute(compiled).fetchall()) == [("NULL in source", 2), ("duplicate (id)", 1)]
    # reuse on: the failed test runs again and still fails; the passing ones are reused
    second = run_dbt(["test", "-s", "rever_pairs", "rever_summary"], warehouse.raw_dir, db, tmp_path / "work2", check=False,
                     artifacts=True)
    assert second.returncode != 0
    res2 = results(tmp_path / "work2")
    assert res2[checks_test] == {"status": "fail", "reused": False}
    passing = {u for u, r in res1.items() if u.startswith("test.") and r["status"] == "pass"}
    assert passing and all(res2[u] == {"status": "pass", "reused": True} for u in passing)


# ------------------------------------------------------------------------------------------
# 5. a view replaced outside dbt


@pytest.mark.slow
def test_a_view_replaced_outside_dbt_is_created_again(warehouse, tmp_path):
    db = copy_db(warehouse.path, tmp_path / "replaced.duckdb")
    schema, view = "audits", "uf_overall_score_10_low_rating"
    columns = ("select column_name, data_type from duckdb_columns()"
               " where schema_name = ? and table_name = ? order by column_index")
    with duckdb.connect(str(db)) as con:
        built = con.execute(columns, [schema, view]).fetchall()
        con.execute(f"create or replace view {schema}.{view} as select 1 as replaced")
    result = run_dbt(["run", "-s", view], warehouse.raw_dir, db, tmp_path / "work", artifacts=True)
    assert f'"{schema}"."{view}" was changed outside dbt' in result.output, result.output[-3000:]
    assert results(tmp_path / "work")[f"model.preference_warehouse.{view}"] == {"status": "success", "reused": False}
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute(columns, [schema, view]).fetchall() == built
