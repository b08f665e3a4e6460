"""The `checks` generic test (tests/generic/checks.sql): a model's rules in one test node.

Faults are planted in a copy of the session build, one per kind of rule, and every `checks`
test of the project runs on it. The planted models' tests fail with exactly one row per broken
rule, (rule, how many rows or keys break it), as planted; every other `checks` test passes
(except those of views over a planted table). A
NULL where only accepted values are checked passes, as in dbt's accepted_values. As
docs/development.md shows, `--store-failures` keeps those rows in the warehouse, where the DuckDB
CLI reads them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from conftest import run_dbt

PLANTED = {
    # a NULL key on one row, and `kept` that contradicts the margin on another
    "rever_pairs": [("NULL in primary key (id)", 1), ("not true: margin_and_kept", 1)],
    # a kind outside the accepted values; a NULL kind on another row passes
    "rever_rubric_items": [("kind not in accepted values", 1)],
    # a number outside the accepted numbers, and one row twice
    "code_ultrafeedback_responses": [("duplicate (prompt_id, response_index)", 1), ("rating not in accepted values", 1)],
    # a one-row model with two rows
    "judge_agreement_summary": [("not exactly one row", 2)],
    # one row fewer than the staging model it keeps every row of
    "code_ultrafeedback_prompts": [("row count differs from stg_code_ultrafeedback__prompts", 1)],
}


@pytest.mark.slow
def test_each_rule_fails_on_its_planted_fault_and_nothing_else(warehouse, tmp_path):
    db = tmp_path / "warehouse.duckdb"  # the database name the compiled tests below name
    shutil.copy(warehouse.path, db)
    with duckdb.connect(str(db)) as con:
        con.execute("update main.rever_pairs set id = null where id = (select min(id) from main.rever_pairs)")
        con.execute("update main.rever_pairs set kept = not kept where id = (select max(id) from main.rever_pairs"
                    " where decided_by in ('hard_rules', 'principles'))")
        con.execute("update main.rever_rubric_items set kind = 'other'"
                    " where rubric_item_id = (select min(rubric_item_id) from main.rever_rubric_items)")
        con.execute("update main.rever_rubric_items set kind = null"
                    " where rubric_item_id = (select max(rubric_item_id) from main.rever_rubric_items)")
        con.execute("update main.code_ultrafeedback_responses set rating = 7 where (prompt_id, response_index) ="
                    " (select (prompt_id, response_index) from main.code_ultrafeedback_responses"
                    "  where rating is not null order by prompt_id, response_index limit 1)")
        con.execute("insert into main.code_ultrafeedback_responses select * from main.code_ultrafeedback_responses"
                    " order by prompt_id desc, response_index limit 1")
        con.execute("insert into main.judge_agreement_summary select * from main.judge_agreement_summary")
        con.execute("delete from main.code_ultrafeedback_prompts"
                    " where prompt_id = (select min(prompt_id) from main.code_ultrafeedback_prompts)")
    result = run_dbt(["test", "-s", "test_name:checks", "--vars", "{reuse_unchanged: false}"],
                     warehouse.raw_dir, db, tmp_path / "work", check=False, artifacts=True)
    assert result.returncode != 0
    run = json.loads((tmp_path / "work" / "target" / "run_results.json").read_text())["results"]
    by_model = {r["unique_id"].split(".")[2].removeprefix("checks_"): r for r in run
                if r["unique_id"].startswith("test.preference_warehouse.checks_")}
    assert len(by_model) > 50 and set(PLANTED) <= set(by_model)
    with duckdb.connect(str(db), read_only=True) as con:
        for model, expected in PLANTED.items():
            assert by_model[model]["status"] == "fail", model
            assert sorted(con.execute(by_model[model]["compiled_code"]).fetchall()) == expected, model
    # and the report's views of judge_agreement_summary, which now have two rows too
    readers = {"rpt_judge_agreement_coverage", "rpt_judge_agreement_rates", "rpt_judge_agreement_sides"}
    assert {m for m, r in by_model.items() if r["status"] != "pass"} == set(PLANTED) | readers, result.output[-3000:]

    # docs/development.md: the failures kept in the warehouse, read with the DuckDB CLI
    run_dbt(["test", "-s", "checks_rever_pairs", "--store-failures"], warehouse.raw_dir, db, tmp_path / "work2", check=False)
    cli = Path(sys.executable).parent / "duckdb"
    proc = subprocess.run([str(cli), "-readonly", "-csv", "-noheader", str(db), "-c",
                           "select failed_check, failing_rows from dbt_test__audit.checks_rever_pairs order by 1"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [f"{rule},{n}" for rule, n in sorted(PLANTED["rever_pairs"])]
