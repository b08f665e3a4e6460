"""Row accounting: every raw row is kept or rejected, once, and the check of that
can fail.

- The raw side of the balance is the raw files' own row counts (read here with pyarrow's footer
  reader and Python's json module, independently of DuckDB and of the staging models).
- The rules of each dataset's marts: UltraFeedback's pair rule and reject reasons recomputed in
  Python from the raw rows and the picks (written from the spec: a pair when the best-rated
  completion's average rating is strictly above its random alternate's; else the first reason
  of: no completions, one completion, no rated completion, unrated alternate, tie).
- The balance test fails on a row lost, or counted both kept and rejected: tampered copies of
  the built warehouse, with row_accounting rebuilt and its test rerun.
"""

from __future__ import annotations

import gzip
import json
import shutil
from collections import Counter

import pyarrow.parquet as pq
import pytest

from conftest import REGISTRY_VARS, Warehouse, run_dbt
from preftools.inputs import registry
from preftools.inputs.contract import DATASETS
from test_ultrafeedback import load_raw, same_number

pytestmark = pytest.mark.slow


def file_rows(path) -> int:
    """Rows of one raw data file, read without DuckDB: a Parquet footer, the records of JSON Lines
    (gzip included), the elements of a JSON array."""
    name = path.name
    if name.endswith(".parquet"):
        return pq.ParquetFile(path).metadata.num_rows
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        if ".jsonl" in name:
            return sum(1 for line in f if line.strip())
        return len(json.load(f))


def test_raw_rows_are_the_files_row_counts(warehouse: Warehouse):
    want = {}
    for d in DATASETS:
        files = d.data_files(warehouse.raw_dir)
        assert files, d.key
        want[d.key] = sum(file_rows(f) for f in files)
    # the registry's entries the session build registers (examples/extra_datasets.yml)
    for e in registry.extra_datasets(REGISTRY_VARS):
        files = registry.data_files(e, warehouse.raw_dir)
        assert files, e.name
        want[e.name] = sum(file_rows(f) for f in files)
    got = {r["dataset"]: r["raw_rows"] for r in warehouse.rows(
        "select distinct dataset, raw_rows from row_accounting")}
    assert got == want
    # ... and each dataset's outcomes add up to them (what row_accounting_balances checks)
    sums = {r["dataset"]: r["n"] for r in warehouse.rows(
        "select dataset, sum(n_rows) as n from row_accounting group by dataset")}
    assert sums == want


def test_every_table_names_the_dataset_dataset(warehouse: Warehouse):
    """A query copied from one table to another keeps working: the column holding the dataset
    is `dataset` in row_accounting as in preference_pairs, and no table of main says dataset_key."""
    assert warehouse.rows("select table_name from information_schema.columns "
                          "where table_schema = 'main' and column_name = 'dataset_key'") == []
    query = "select count(*) from main.{} where dataset = 'ultrafeedback'"
    assert warehouse.scalar(query.format("preference_pairs")) > 0
    assert warehouse.scalar(query.format("row_accounting")) > 0


def test_ultrafeedback_pair_rule_and_reasons(warehouse: Warehouse):
    raw = load_raw(warehouse.raw_dir)  # test_ultrafeedback's independent reading of the raw rows
    curated = {(r["source_file"], r["source_row"]): r for r in warehouse.rows(
        "select source_file, source_row, random_for_best_rated_index, has_pair, no_pair_reason"
        " from ultrafeedback_curated")}
    assert curated.keys() == raw.keys()
    outcomes = Counter()
    for key, rec in raw.items():
        row, completions = curated[key], rec["completions"]
        best = completions[rec["best_rated"]]["average_rating"] if completions else None
        alt_index = row["random_for_best_rated_index"]
        if alt_index is not None:
            assert alt_index in rec["alt_rated"], key  # the draw itself: test_ultrafeedback
        alt = completions[alt_index]["average_rating"] if alt_index is not None else None
        if not completions:
            reason = "no_completions"
        elif len(completions) == 1:
            reason = "single_completion"
        elif best is None:
            reason = "no_rated_completion"
        elif alt is None:
            reason = "alternate_unrated"
        elif same_number(alt, best):
            reason = "all_rated_equal"
        else:
            assert alt < best, key
            reason = None
        assert (row["has_pair"], row["no_pair_reason"]) == (reason is None, reason), key
        outcomes[reason] += 1
    # the generated data exercises the pair and the common reasons
    assert outcomes[None] > 0 and outcomes["single_completion"] > 0 and outcomes["no_completions"] > 0, outcomes
    rejected = Counter(r["reason"] for r in warehouse.rows("select reason from rejects_ultrafeedback"))
    assert rejected == Counter({k: v for k, v in outcomes.items() if k is not None})


@pytest.fixture
def tampered_copy(warehouse: Warehouse, tmp_path):
    """A copy of the built warehouse; `tamper(sql)` changes a mart in it, rebuilds the rejects
    and row_accounting from it and returns the result of the balance test."""
    db = tmp_path / "warehouse.duckdb"
    shutil.copy(warehouse.path, db)

    def tamper(sql: str):
        import duckdb

        with duckdb.connect(str(db)) as con:
            con.execute(sql)
        # one dbt call: the two models, then their tests (row_accounting_balances among them)
        return run_dbt(["build", "-s", "rejects_ultrafeedback", "row_accounting"], warehouse.raw_dir, db,
                       tmp_path / "dbt", check=False)

    return tamper


def test_balance_passes_on_the_untouched_copy(tampered_copy):
    result = tampered_copy("select 1")
    assert result.returncode == 0, result.output[-3000:]
    assert "PASS row_accounting_balances" in result.output, result.output[-3000:]


def test_balance_fails_on_a_lost_row(tampered_copy):
    result = tampered_copy("""
        delete from main.ultrafeedback_curated
        where prompt_id = (select min(prompt_id) from main.ultrafeedback_curated where has_pair)""")
    assert result.returncode != 0
    assert "FAIL 1 row_accounting_balances" in result.output, result.output[-3000:]


def test_balance_fails_on_a_row_counted_twice(tampered_copy):
    # a rejected row that the pair rule also claims
    result = tampered_copy("""
        update main.ultrafeedback_curated set has_pair = true
        where prompt_id = (select min(prompt_id) from main.ultrafeedback_curated where no_pair_reason is not null)""")
    assert result.returncode != 0
    assert "FAIL 1 row_accounting_balances" in result.output, result.output[-3000:]
