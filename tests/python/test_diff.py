"""preftools diff: its rules on small hand-made DuckDB files (each expectation written from the
definitions in preftools/outputs/diff.py's doc), then one build of changed raw data diffed against the
session build."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from conftest import REPO, raw_file_rows, run_dbt
from preftools.outputs import diff as diff_tool

BUILD_INFO = "create schema meta; create table meta.warehouse_build_info as select 'generated, seed 1' as raw_revisions;"


def make_warehouse(path: Path, sql: str, keys: dict[str, list[str]] | None = None) -> Path:
    """A tiny warehouse file: meta.warehouse_build_info, meta.relation_keys from ``keys``, then ``sql``."""
    con = duckdb.connect(str(path))
    con.execute(BUILD_INFO + "create schema audits;")
    con.execute("create table meta.relation_keys (relation varchar, key_columns varchar)")
    for relation, key in (keys or {}).items():
        con.execute("insert into meta.relation_keys values (?, ?)", [relation, json.dumps(key)])
    con.execute(sql)
    con.close()
    return path


def run_diff(tmp_path: Path, old_sql: str, new_sql: str, keys=None) -> duckdb.DuckDBPyConnection:
    old = make_warehouse(tmp_path / "old.duckdb", old_sql, keys)
    new = make_warehouse(tmp_path / "new.duckdb", new_sql, keys)
    diff_tool.diff(old, new, tmp_path / "out")
    con = duckdb.connect(str(tmp_path / "out" / "diff.duckdb"), read_only=True)
    check_identities(con)
    return con


def check_identities(con) -> None:
    broken = con.execute("""
        select relation from relations
        where n_identical + n_removed + n_modified != n_old or n_identical + n_added + n_modified != n_new
           or n_moved > n_identical or least(n_identical, n_moved, n_added, n_removed, n_modified) < 0
    """).fetchall()
    assert broken == []


def relation(con, name: str) -> dict:
    cur = con.execute("select * from relations where relation = ?", [name])
    return dict(zip([d[0] for d in cur.description], cur.fetchone()))


def counts(row: dict) -> tuple:
    return tuple(row[c] for c in ("n_old", "n_new", "n_identical", "n_moved", "n_added", "n_removed", "n_modified"))


def test_each_status_and_provenance_only_changes(tmp_path):
    # ids 1 and 4 equal (4 moved to another source row), 2 modified, 3 removed, 5 added
    con = run_diff(
        tmp_path,
        "create table t as from (values (1, 'a', 'f0', 0), (2, 'b', 'f0', 1), (3, 'c', 'f0', 2), (4, 'd', 'f0', 3))"
        " v(id, v, source_file, source_row)",
        "create table t as from (values (1, 'a', 'f0', 0), (2, 'B', 'f0', 1), (4, 'd', 'f1', 0), (5, 'e', 'f1', 1))"
        " v(id, v, source_file, source_row)",
        {"main.t": ["id"]},
    )
    row = relation(con, "main.t")
    assert counts(row) == (4, 4, 2, 1, 1, 1, 1)
    assert row["key_columns"] == ["id"] and row["in_old"] and row["in_new"]
    assert sorted(con.execute("select key, status, changed_columns from row_changes").fetchall()) == [
        ('{"id":"2"}', "modified", ["v"]), ('{"id":"3"}', "removed", None), ('{"id":"5"}', "added", None)]
    assert con.execute("select relation, column_name, n_changed from column_changes").fetchall() == [("main.t", "v", 1)]


def test_columns_added_and_dropped_compare_the_shared_ones(tmp_path):
    con = run_diff(
        tmp_path,
        "create table t as from (values (1, 'a', 10), (2, 'b', 20)) v(id, a, gone)",
        "create table t as from (values (1, 'a', true), (2, 'x', false)) v(id, a, fresh)",
        {"main.t": ["id"]},
    )
    row = relation(con, "main.t")
    assert (row["columns_added"], row["columns_dropped"]) == (["fresh"], ["gone"])
    assert counts(row) == (2, 2, 1, 0, 0, 0, 1)


def test_a_key_column_of_another_type_matches_by_value(tmp_path):
    con = run_diff(tmp_path, "create table t as from (values ('1', 'a'), ('2', 'b')) v(id, v)",
                   "create table t as from (values (1, 'a'), (2, 'c')) v(id, v)", {"main.t": ["id"]})
    assert counts(relation(con, "main.t")) == (2, 2, 1, 0, 0, 0, 1)
    assert con.execute("select key, status, changed_columns from row_changes").fetchall() == [('{"id":"2"}', "modified", ["v"])]


def test_no_column_in_common_removes_and_adds_every_row(tmp_path):
    con = run_diff(tmp_path, "create table t as select range as a from range(3)",
                   "create table t as select range as b from range(2)", {"main.t": ["a"]})
    row = relation(con, "main.t")
    assert (row["columns_added"], row["columns_dropped"], counts(row)) == (["b"], ["a"], (3, 2, 0, 0, 2, 3, 0))


def test_a_relation_in_one_file_only(tmp_path):
    con = run_diff(tmp_path, "create table gone as select range as id from range(3)",
                   "create table audits.fresh as select range as id from range(2)", {"main.gone": ["id"]})
    gone, fresh = relation(con, "main.gone"), relation(con, "audits.fresh")
    assert (gone["in_old"], gone["in_new"], counts(gone)) == (True, False, (3, 0, 0, 0, 0, 3, 0))
    assert (fresh["in_old"], fresh["in_new"], counts(fresh)) == (False, True, (0, 2, 0, 0, 2, 0, 0))
    assert fresh["key_columns"] is None
    assert con.execute("select count(*) from row_changes where relation = 'main.gone' and status = 'removed'").fetchone()[0] == 3


def test_a_view_without_key_has_no_modified_rows(tmp_path):
    con = run_diff(
        tmp_path,
        "create table t as from (values (1, 'a'), (2, 'b'), (2, 'b')) v(id, v); create view audits.w as select * from main.t",
        "create table t as from (values (1, 'a'), (2, 'c'), (2, 'b')) v(id, v); create view audits.w as select * from main.t",
    )
    assert counts(relation(con, "audits.w")) == (3, 3, 2, 0, 1, 1, 0)
    assert con.execute("select count(*) from row_changes").fetchone()[0] == 0  # rows of keyed relations only


def test_rows_of_a_duplicated_key_are_added_and_removed_not_modified(tmp_path):
    # key 1 twice in each file: (1, x) identical, (1, y) removed, (1, w) added; key 2 unique: modified
    con = run_diff(
        tmp_path,
        "create table t as from (values (1, 'x'), (1, 'y'), (2, 'z')) v(id, v)",
        "create table t as from (values (1, 'x'), (1, 'w'), (2, 'Z')) v(id, v)",
        {"main.t": ["id"]},
    )
    assert counts(relation(con, "main.t")) == (3, 3, 1, 0, 1, 1, 1)
    assert sorted(con.execute("select key, status from row_changes").fetchall()) == [
        ('{"id":"1"}', "added"), ('{"id":"1"}', "removed"), ('{"id":"2"}', "modified")]


def test_columns_compare_null_safe(tmp_path):
    con = run_diff(
        tmp_path,
        "create table t as from (values (1, null, 1.5), (2, null, null), (3, 'x', 2.0), (4, 'NULL', 1.0)) v(id, s, d)",
        "create table t as from (values (1, 'NULL', 1.5), (2, null, null), (3, null, 2.0), (4, 'NULL', null)) v(id, s, d)",
        {"main.t": ["id"]},
    )
    assert counts(relation(con, "main.t")) == (4, 4, 1, 0, 0, 0, 3)
    assert sorted(con.execute("select column_name, n_changed from column_changes").fetchall()) == [("d", 1), ("s", 2)]


def test_a_one_row_relation_is_keyed_by_the_empty_key(tmp_path):
    con = run_diff(tmp_path, "create table total as select 3 as n, 'a' as top", "create table total as select 4 as n, 'a' as top",
                   {"main.total": []})
    assert counts(relation(con, "main.total")) == (1, 1, 0, 0, 0, 0, 1)
    assert con.execute("select key, changed_columns from row_changes").fetchall() == [("{}", ["n"])]


PAIRS = """
create table preference_pairs (dataset varchar, split varchar, pair_id varchar, prompt varchar[], chosen varchar[],
                               rejected varchar[], margin double, integrity_flags varchar[]);
insert into preference_pairs values {rows};
"""


def pairs_sql(*rows: tuple) -> str:
    def value(v):
        return "null" if v is None else repr(v) if not isinstance(v, list) else "[" + ", ".join(map(repr, v)) + "]::varchar[]"

    return PAIRS.format(rows=", ".join("(" + ", ".join(value(v) for v in r) + ")" for r in rows))


def test_pair_changes(tmp_path):
    old = pairs_sql(
        ("uf", "uf", "p1", ["q1"], ["a"], ["b"], 0.5, []),              # unchanged (a new pair_id in NEW)
        ("uf", "uf", "p2", ["q2"], ["a"], ["b"], 0.5, []),              # flipped
        ("uf", "uf", "p3", ["q3"], ["a"], ["b"], 0.5, []),              # to the flagged split
        ("cuf", "cuf", "p4", ["q4"], ["a"], ["b"], 0.25, []),           # margin changed
        ("cuf", "cuf", "p5", ["q5"], ["a"], ["b"], 0.25, []),           # removed
        ("cuf", "cuf", "p6", ["q6"], ["a"], ["b"], 0.25, []),           # flipped with a new margin
    )
    new = pairs_sql(
        ("uf", "uf", "p1-new-id", ["q1"], ["a"], ["b"], 0.5, []),
        ("uf", "uf", "p2", ["q2"], ["b"], ["a"], 0.5, []),
        ("uf", "uf_flagged", "p3", ["q3"], ["a"], ["b"], 0.5, ["duplicate_pair"]),
        ("cuf", "cuf", "p4", ["q4"], ["a"], ["b"], 0.75, []),
        ("cuf", "cuf", "p6", ["q6"], ["b"], ["a"], 0.5, []),
        ("cuf", "cuf", "p7", ["q4"], ["a"], ["c"], 0.5, []),            # added (same prompt, another response)
    )
    con = run_diff(tmp_path, old, new, {"main.preference_pairs": ["pair_id"]})
    got = con.execute("""
        select dataset, change, prompt[1], chosen[1], rejected[1], old_split, new_split, old_margin, new_margin,
               old_flags, new_flags
        from pair_changes""").fetchall()
    assert sorted(got, key=str) == sorted([
        ("uf", "flipped", "q2", "b", "a", "uf", "uf", 0.5, 0.5, [], []),
        ("uf", "split_changed", "q3", "a", "b", "uf", "uf_flagged", 0.5, 0.5, [], ["duplicate_pair"]),
        ("cuf", "margin_changed", "q4", "a", "b", "cuf", "cuf", 0.25, 0.75, [], []),
        ("cuf", "removed", "q5", "a", "b", "cuf", None, 0.25, None, [], None),
        ("cuf", "flipped", "q6", "b", "a", "cuf", "cuf", 0.25, 0.5, [], []),
        ("cuf", "margin_changed", "q6", "b", "a", "cuf", "cuf", 0.25, 0.5, [], []),
        ("cuf", "added", "q4", "a", "c", None, "cuf", None, 0.5, None, []),
    ], key=str)
    summary = (tmp_path / "out" / "diff.md").read_text()
    assert "| cuf | 1 | 1 | 1 | 0 | 2 |" in summary and "| uf | 0 | 0 | 1 | 1 | 0 |" in summary


def test_a_repeated_pair_is_matched_occurrence_by_occurrence(tmp_path):
    pair = ("uf", "uf", "p", ["q"], ["a"], ["b"], 0.5, [])
    con = run_diff(tmp_path, pairs_sql(pair, pair[:2] + ("p2",) + pair[3:]), pairs_sql(pair))
    assert con.execute("select change, old_pair_id from pair_changes").fetchall() == [("removed", "p2")]


def test_a_file_against_itself_reports_nothing_while_another_reader_holds_it(tmp_path):
    path = make_warehouse(tmp_path / "w.duckdb", pairs_sql(("uf", "uf", "p", ["q"], ["a"], ["b"], 0.5, []))
                          + "create view audits.v as select dataset from main.preference_pairs",
                          {"main.preference_pairs": ["pair_id"]})
    with duckdb.connect(str(path), read_only=True):  # a notebook
        text = diff_tool.diff(path, path, tmp_path / "out")
    con = duckdb.connect(str(tmp_path / "out" / "diff.duckdb"), read_only=True)
    assert con.execute("select sum(n_added + n_removed + n_modified + n_moved), sum(n_identical) from relations").fetchone() == (0, 2)
    assert [con.execute(f"select count(*) from {t}").fetchone()[0] for t in ("row_changes", "column_changes", "pair_changes")] == [0, 0, 0]
    assert "None: the 2 tables and views of main and audits are identical." in text


def test_clear_one_line_errors(tmp_path, capsys):
    good = make_warehouse(tmp_path / "good.duckdb", "create table t as select 1 as id")
    not_duckdb = tmp_path / "notes.duckdb"
    not_duckdb.write_text("hello")
    plain = tmp_path / "plain.duckdb"
    duckdb.connect(str(plain)).close()
    cases = {
        str(tmp_path / "missing.duckdb"): "no warehouse at",
        str(not_duckdb): "is not a DuckDB database file",
        str(plain): "is not a warehouse (no meta.warehouse_build_info)",
    }
    for new, message in cases.items():
        assert diff_tool.main([str(good), new, "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err
        assert err.startswith("diff: error: NEW: ") and message in err and new in err and err.count("\n") == 1


def test_progress_counts_relations_and_rows(tmp_path, capsys):
    # two relations of main (meta is not compared): t with 5 then 7 rows, u with 1 and 1
    old = make_warehouse(tmp_path / "old.duckdb", "create table t as from range(5); create table u as select 1 as id")
    new = make_warehouse(tmp_path / "new.duckdb", "create table t as from range(7); create table u as select 1 as id")
    assert diff_tool.main([str(old), str(new), "--out", str(tmp_path / "out")]) == 0
    updates = [u.strip() for u in capsys.readouterr().err.replace("\r", "\n").splitlines() if u.strip()]
    assert any("0/2" in u and "main.t" in u for u in updates), updates  # names the relation it is reading
    assert "2/2" in updates[-1] and "14 rows compared" in updates[-1], updates
    assert diff_tool.main([str(old), str(new), "--out", str(tmp_path / "out"), "--no-progress"]) == 0
    assert capsys.readouterr().err == ""


def test_a_writer_lock_is_one_line(tmp_path):
    path = make_warehouse(tmp_path / "w.duckdb", "create table t as select 1 as id")
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys; c = duckdb.connect(sys.argv[1]); "
                               "print('open', flush=True); sys.stdin.read()", str(path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        proc = subprocess.run([sys.executable, "-m", "preftools", "diff", str(path), str(path), "--out", str(tmp_path / "o")],
                              capture_output=True, text=True, cwd=REPO)
    finally:
        holder.communicate("")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "is locked by" in proc.stderr and f"PID {holder.pid}" in proc.stderr


# ----------------------------------------------------------------------------- two builds

@pytest.fixture(scope="module")
def revision_diff(warehouse, revised, tmp_path_factory):
    """The session build (OLD) diffed against the build of its revision (NEW, revision.py)."""
    new, planted = revised
    out = tmp_path_factory.mktemp("revision_diff")
    summary = diff_tool.diff(warehouse.path, new.path, out)
    return duckdb.connect(str(out / "diff.duckdb"), read_only=True), new, planted, summary, out


def rows(con, sql: str, params=None) -> list[dict]:
    cur = con.execute(sql, params or [])
    return [dict(zip([d[0] for d in cur.description], r)) for r in cur.fetchall()]


def expected_pair_changes(old: list[dict], new: list[dict]):
    """The documented rule, in Python: pairs matched by (dataset, prompt, the two responses in either
    order), repeats occurrence by occurrence; a key only in OLD is removed, only in NEW added; a
    matched pair is flipped when its chosen side changed, split_changed, margin_changed (NULL-safe)."""
    def key(p):
        sides = sorted(json.dumps(s, sort_keys=True) for s in (p["chosen"], p["rejected"]))
        return p["dataset"], json.dumps(p["prompt"], sort_keys=True), *sides

    by_key: dict[tuple, tuple[list, list]] = {}
    for side, pairs in ((0, old), (1, new)):
        for p in pairs:
            by_key.setdefault(key(p), ([], []))[side].append(p)
    def like_first(p):  # repeats of a pair: the copies alike are matched first
        return json.dumps(p["chosen"], sort_keys=True), p["split"], str(p["margin"])

    changes = Counter()
    for (dataset, *_), (was, now) in by_key.items():
        for a, b in zip(sorted(was, key=like_first), sorted(now, key=like_first)):
            changes[(dataset, "flipped")] += a["chosen"] != b["chosen"]
            changes[(dataset, "split_changed")] += a["split"] != b["split"]
            changes[(dataset, "margin_changed")] += a["margin"] != b["margin"]
        changes[(dataset, "removed")] += max(len(was) - len(now), 0)
        changes[(dataset, "added")] += max(len(now) - len(was), 0)
    return +changes


def test_two_revisions_pair_changes(warehouse, revision_diff):
    con, new, planted, *_ = revision_diff
    query = "select dataset, split, pair_id, prompt, chosen, rejected, margin from main.preference_pairs"
    want = expected_pair_changes(warehouse.rows(query), new.rows(query))
    got = Counter((r["dataset"], r["change"]) for r in rows(con, "select dataset, change from pair_changes"))
    assert got == want
    # the planted changes, each where it belongs
    n_added_entry = new.scalar("select count(*) from main.preference_pairs where dataset = 'hh_harmless'")
    assert got[("hh_harmless", "added")] == n_added_entry > 0
    assert got[("code_ultrafeedback", "flipped")] >= 1 and got[("ultrafeedback", "removed")] >= 1
    assert {d for d, _ in got} <= {"ultrafeedback", "code_ultrafeedback", "hh_harmless", "rever"}
    swapped = {r["pair_id"] for r in warehouse.rows(
        "select pair_id from main.preference_pairs where dataset = 'code_ultrafeedback' and prompt_id = ?",
        [planted.cuf_swapped])}
    flipped = rows(con, "select old_pair_id, new_pair_id from pair_changes where change = 'flipped'")
    assert any(f["old_pair_id"] == f["new_pair_id"] and f["old_pair_id"] in swapped for f in flipped)


def test_two_revisions_relations(warehouse, revised, revision_diff):
    con, new, planted, summary, _ = revision_diff
    check_identities(con)
    listed = {r["relation"] for r in rows(con, "select relation from relations")}
    with warehouse.connect() as w:
        in_old = {f"{s}.{t}" for s, t in w.execute(
            "select table_schema, table_name from information_schema.tables where table_schema in ('main', 'audits')").fetchall()}
    assert in_old <= listed and "main.preference_pairs" in listed

    curated = relation(con, "main.ultrafeedback_curated")
    assert curated["key_columns"] == ["prompt_id"]
    assert (curated["n_removed"], curated["n_added"]) == (1, 1)
    # the removed prompt's shard was reversed: every other row of it moved, unless it kept its row number
    [gone] = warehouse.rows("select source_file, source_row from main.ultrafeedback_curated where prompt_id = ?",
                            [planted.uf_removed])
    n = warehouse.scalar("select count(*) from main.ultrafeedback_curated where source_file = ?", [gone["source_file"]])
    r = gone["source_row"]
    assert curated["n_moved"] == sum((n - 2) - (i if i < r else i - 1) != i for i in range(n) if i != r)
    modified = {json.loads(k["key"])["prompt_id"] for k in rows(
        con, "select key from row_changes where relation = 'main.ultrafeedback_curated' and status = 'modified'")}
    assert planted.uf_rerated in modified and modified <= {planted.uf_rerated, *planted.uf_fixed}
    assert curated["n_modified"] == len(modified)
    changed = {r["column_name"] for r in rows(con, "select column_name from column_changes where relation = 'main.ultrafeedback_curated'")}
    assert {"best_rated_index", "best_rated_model"} <= changed
    scores = {json.loads(k["key"])["completion_id"] for k in rows(
        con, "select key from row_changes where relation = 'main.ultrafeedback_completion_scores' and status = 'modified'")}
    fixed_completions = {r["completion_id"] for r in warehouse.rows(
        "select completion_id from main.ultrafeedback_completion_scores where prompt_id in (select unnest(?::varchar[]))"
        " and overall_score = 10 and average_rating <= 2", [planted.uf_fixed])}
    assert fixed_completions and fixed_completions <= scores
    assert "hh_harmless" in summary


def test_a_build_against_itself_reports_nothing(warehouse, tmp_path):
    text = diff_tool.diff(warehouse.path, warehouse.path, tmp_path)
    con = duckdb.connect(str(tmp_path / "diff.duckdb"), read_only=True)
    assert con.execute("select sum(n_added + n_removed + n_modified + n_moved), min(n_identical = n_old) from relations"
                       ).fetchone() == (0, True)
    assert [con.execute(f"select count(*) from {t}").fetchone()[0] for t in ("row_changes", "column_changes", "pair_changes")] == [0, 0, 0]
    assert "identical" in text


def test_the_summary_ends_the_cards_of_an_export_of_new(revised, revision_diff, tmp_path):
    from preftools.outputs.export import export

    _, new, *_, out = revision_diff
    export(new.path, tmp_path / "exports", ["rever_summary"], progress=False, card_note=out / "diff.md")
    card = (tmp_path / "exports" / "rever_summary" / "README.md").read_text()
    note = (out / "diff.md").read_text().strip().splitlines()
    heading = next(line for line in note if line.startswith("#"))
    assert "#" + heading in card.splitlines()  # one level down
    assert card.rstrip().endswith(note[-1])
