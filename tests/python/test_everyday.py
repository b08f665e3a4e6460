"""Everyday use: audits are views any SQL client can select from, descriptions are in
the DuckDB catalog, and `dbt build --select +<mart>` works from an empty warehouse."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest
import yaml

from conftest import REPO, run_dbt

pytestmark = pytest.mark.slow


def audit_ymls() -> dict[str, dict]:
    """audit view name (the model's alias where its yml gives one) -> its yml entry
    (models/audits/<group>/_<group>__audits.yml)."""
    out = {}
    for path in sorted((REPO / "models" / "audits").glob("*/_*__audits.yml")):
        for model in yaml.safe_load(path.read_text())["models"]:
            out[(model.get("config") or {}).get("alias", model["name"])] = model
    return out


def test_every_audit_is_a_view_that_runs(warehouse):
    ymls = audit_ymls()
    assert len(ymls) >= 11
    with warehouse.connect() as con:
        views = {r[0] for r in con.execute(
            "select view_name from duckdb_views() where schema_name = 'audits'").fetchall()}
        assert views == set(ymls)
        for name, entry in ymls.items():
            cur = con.execute(f"select * from audits.{name}")
            cur.fetchall()
            assert [d[0] for d in cur.description] == [c["name"] for c in entry["columns"]], name


def test_audits_survive_a_renamed_warehouse_file(warehouse, tmp_path):
    """The views name the marts without the catalog, so a copy under another name still works."""
    copy = tmp_path / "someone_elses_copy.duckdb"
    shutil.copy(warehouse.path, copy)
    with duckdb.connect(str(copy), read_only=True) as con:
        n = con.execute("select count(*) from audits.uf_overall_score_10_low_rating").fetchone()[0]
        want = con.execute(
            "select count(*) from main.ultrafeedback_completion_scores where overall_score = 10 and average_rating <= 2"
        ).fetchone()[0]
    assert n == want > 0


def test_descriptions_are_in_the_catalog(warehouse):
    """persist_docs: what `dbt docs` shows, a SQL client sees (duckdb_tables/duckdb_columns comments)."""
    yml = yaml.safe_load((REPO / "models/marts/cross_dataset/_cross_dataset__models.yml").read_text())
    pairs = next(m for m in yml["models"] if m["name"] == "preference_pairs")
    with warehouse.connect() as con:
        table_comment = con.execute(
            "select comment from duckdb_tables() where schema_name = 'main' and table_name = 'preference_pairs'"
        ).fetchone()[0]
        comments = dict(con.execute(
            "select column_name, comment from duckdb_columns() "
            "where schema_name = 'main' and table_name = 'preference_pairs'").fetchall())
        audit_comment = con.execute(
            "select comment from duckdb_views() where schema_name = 'audits' and view_name = 'cuf_model_win_rates'"
        ).fetchone()[0]
        undocumented = con.execute(
            "select table_name, column_name from duckdb_columns() "
            "where schema_name = 'main' and internal = false and comment is null").fetchall()
    assert table_comment and table_comment.startswith("One row per preference pair")
    markdown = ("{{", "**", "`", "](", "*", "#")
    plain = [c for c in pairs["columns"] if not any(m in c["description"] for m in markdown)]
    assert plain
    for column in plain:  # descriptions without Markdown appear verbatim
        assert comments[column["name"]].strip() == column["description"].strip(), column["name"]
    assert comments["margin"] and "{{" not in comments["margin"] and "**" not in comments["margin"]  # a doc block, rendered as plain text
    assert audit_comment and "win rate" in audit_comment
    assert undocumented == []


@pytest.mark.parametrize("mart", ["ultrafeedback_curated", "code_ultrafeedback_pairs", "rever_pairs"])
def test_subset_build_from_an_empty_warehouse(raw_dir, tmp_path, mart):
    """`dbt build --select +<mart>` builds the mart, its parents and only the tests it can run."""
    db = tmp_path / "empty.duckdb"
    result = run_dbt(["build", "--select", f"+{mart}"], raw_dir, db, tmp_path, check=False)
    assert result.returncode == 0, result.output[-4000:]
    assert "ERROR=0" in result.output and "SKIP=0" in result.output
    with duckdb.connect(str(db), read_only=True) as con:
        marts = {r[0] for r in con.execute(
            "select table_name from duckdb_tables() where schema_name = 'main'").fetchall()}
        # preference_pairs is a parent (it computes the integrity flags), training_mixture a child
        assert mart in marts and "preference_pairs" in marts and "training_mixture" not in marts
        assert con.execute(f"select count(*) from main.{mart}").fetchone()[0] > 0


def test_the_query_examples_of_the_readme(warehouse):
    """README "Query the warehouse": Python to pandas and Arrow, and dbt show --inline."""
    with duckdb.connect(str(warehouse.path), read_only=True) as con:
        df = con.sql("select * from audits.cuf_model_win_rates").df()
        table = con.sql("select * from audits.cuf_model_win_rates").to_arrow_table()
        n_models = con.execute("select count(*) from audits.cuf_model_win_rates").fetchone()[0]
    assert len(df) == table.num_rows == n_models > 0
    result = run_dbt(["show", "--limit", "20", "--inline",
                      "select dataset, split, count(*) as n from {{ ref('preference_pairs') }} group by all order by all"],
                     warehouse.raw_dir, warehouse.path, warehouse.work_dir / "show")
    with warehouse.connect() as con:
        splits = [r[0] for r in con.execute("select distinct split from preference_pairs").fetchall()]
    assert len(splits) > 5  # every dataset, clean and flagged: more rows than dbt show's default limit of 5
    rows = [line for line in result.output.splitlines() if line.startswith("| ") and "| split " not in line and not line.startswith("| -")]
    assert len(rows) == len(splits), result.output  # one row per split: none cut by a limit
    for split in splits:  # (dbt show cuts cells longer than 20 characters)
        assert f"| {split[:17]}" in result.output, split


# every response text of ultrafeedback_curated, in one digest
TEXTS_DIGEST = ("select md5(string_agg(concat_ws('|', prompt_id, best_rated_response, best_overall_score_response,"
                " random_response_for_best_rated, random_response_for_best_overall), '#' order by prompt_id))"
                " from main.ultrafeedback_curated")


def test_the_duckdb_cli_reads_the_warehouse(warehouse):
    """README: the DuckDB CLI (PyPI's duckdb-cli, a 1.5 release) opens the warehouse read-only:
    profiles.yml writes DuckDB 1.5's storage format."""
    import subprocess
    import sys

    cli = Path(sys.executable).parent / "duckdb"
    assert cli.exists(), "duckdb-cli is in requirements.txt: make install"
    proc = subprocess.run(
        [str(cli), "-readonly", "-csv", "-noheader", str(warehouse.path), "-c",
         "select count(*) from audits.cuf_model_win_rates; "
         f"{TEXTS_DIGEST}; "
         "select comment from duckdb_tables() where schema_name = 'main' and table_name = 'preference_pairs';"],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    with warehouse.connect() as con:
        n = con.execute("select count(*) from audits.cuf_model_win_rates").fetchone()[0]
        digest = con.execute(TEXTS_DIGEST).fetchone()[0]
    assert lines[0] == str(n) and "preference pair" in proc.stdout
    assert lines[1] == digest  # the text columns (stored with ZSTD, next test) read alike


def test_text_columns_are_stored_with_zstd(warehouse):
    """profiles.yml sets DuckDB's force_compression to zstd: text columns are stored with ZSTD
    (faster to write than the default dictionary+FSST, and smaller); other types keep theirs."""
    with warehouse.connect() as con:
        used = dict(con.execute(
            "select segment_type, list(distinct compression) from pragma_storage_info('main.ultrafeedback_curated')"
            " group by segment_type").fetchall())
    assert used["VARCHAR"] == ["ZSTD"], used
    assert "ZSTD" not in used["INTEGER"] + used["DOUBLE"], used


def test_row_groups_are_the_warehouse_size(tmp_path):
    """The dbt plugin attaches the warehouse with row groups of preftools.warehouse.ROW_GROUP_SIZE
    rows (DuckDB's own is 122,880), on the connection dbt-duckdb opens (its own steps, the
    profile's plugin), which every cursor uses: a table of 40,000 rows is stored in three."""
    from dbt.adapters.duckdb.credentials import DuckDBCredentials
    from dbt.adapters.duckdb.environments import Environment

    creds = DuckDBCredentials.from_dict({"path": str(tmp_path / "w.duckdb"),
                                         "plugins": [{"module": "preftools.dbt_runtime.lock_check"}]})
    plugins = Environment.initialize_plugins(creds)
    con = Environment.initialize_db(creds, plugins)
    cursor = Environment.initialize_cursor(creds, con.cursor(), plugins)
    cursor.execute("create table t as select range as i, repeat('x', 50) as s from range(40000)")
    found = cursor.execute("select current_database(), count(distinct row_group_id), max(count)"
                           " from pragma_storage_info('t')").fetchone()
    con.close()
    assert found == ("w", 3, 16384), found
    # opened again with the same credentials (dbt-duckdb reopens after closing its connections):
    # the same file, attached the same way, spilling beside it
    con = Environment.initialize_db(creds, plugins)
    cursor = Environment.initialize_cursor(creds, con.cursor(), plugins)
    again = cursor.execute("select current_database(), count(*), current_setting('temp_directory')"
                           " from t").fetchone()
    cursor.execute("create table t2 as select * from t")
    groups = cursor.execute("select count(distinct row_group_id) from pragma_storage_info('t2')").fetchone()[0]
    con.close()
    assert again == ("w", 40000, str(tmp_path / "w.duckdb") + ".tmp") and groups == 3, (again, groups)
