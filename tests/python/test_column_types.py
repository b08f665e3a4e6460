"""Column types of what users query (the marts in `main`, the `audits` and `reporting` views,
`meta`): counts are BIGINT. DuckDB's sum() of integers is HUGEINT (INT128), which pandas reads as
a float (`39.0`) and other engines do not have; a count (a column named `n_...`) of any other
integer type is a different type for the same kind of number.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow

SCHEMAS = ("main", "audits", "reporting", "meta")
# DuckDB spells INT128 (and its unsigned twin) as these in duckdb_columns()
HUGE_TYPES = ("HUGEINT", "UHUGEINT", "INT128", "UINT128")


@pytest.fixture(scope="module")
def columns(warehouse) -> list[dict]:
    rows = warehouse.rows(
        "select schema_name, table_name, column_name, data_type from duckdb_columns() "
        f"where not internal and schema_name in ({', '.join('?' for _ in SCHEMAS)}) "
        "order by schema_name, table_name, column_index",
        list(SCHEMAS),
    )
    assert {r["schema_name"] for r in rows} == set(SCHEMAS), "a schema the test reads was not built"
    return rows


def _name(row: dict) -> str:
    return f"{row['schema_name']}.{row['table_name']}.{row['column_name']} {row['data_type']}"


def test_no_hugeint_column(columns):
    offenders = [_name(r) for r in columns if any(t in r["data_type"].upper() for t in HUGE_TYPES)]
    assert not offenders, "HUGEINT columns (cast(sum(...) as bigint)):\n  " + "\n  ".join(offenders)


def test_counts_are_bigint(columns):
    counts = [r for r in columns if r["column_name"].startswith("n_")]
    assert len(counts) > 100
    offenders = [_name(r) for r in counts if r["data_type"] != "BIGINT"]
    assert not offenders, "counts that are not BIGINT:\n  " + "\n  ".join(offenders)
