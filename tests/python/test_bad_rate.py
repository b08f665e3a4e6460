"""The generator's bad values (`python -m preftools.generate --bad-rate`, preftools/generate/bad_values.py)
are where its manifest says the warehouse puts them.

Generates raw data with every kind of bad value of preftools/generate/bad_values.py planted, runs
`dbt build` on it, and checks that the build succeeds, that row_accounting balances, and that
every planted row is where the manifest's ``expect`` promises: in its rejects model with its
reason, in rever_integrity with its kind, flagged, or passed through unchanged. On the smallest
data that holds every kind: scale 0.002, where the rate plants one row of each.
"""

from __future__ import annotations

from collections import Counter

import duckdb
import pyarrow as pa
import pytest

from conftest import SCENARIO_BUILD, TEST_SEED, run_dbt
from preftools.generate import generate
from preftools.generate.bad_values import KINDS
from preftools.inputs import contract as C

# The smallest data with every kind: below scale 0.002 the ReVeR datasets have fewer clean pairs
# than ReVeR kinds (each takes a pair of its own); 0.01 of a dataset's rows (at most 128 here)
# rounds to one planted row of each kind.
SCALE = 0.002
RATE = 0.01

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def planted_build(tmp_path_factory):
    work = tmp_path_factory.mktemp("bad_rate")
    raw, db = work / "raw", work / "warehouse.duckdb"
    manifest = generate(raw, seed=TEST_SEED, scale=SCALE, progress=False, bad_rate=RATE)
    result = run_dbt(SCENARIO_BUILD, raw, db, work, check=False)
    return raw, db, manifest, result


def test_every_kind_is_planted(planted_build):
    _, _, manifest, _ = planted_build
    assert set(Counter(b["kind"] for b in manifest["bad_values"])) == set(KINDS)


def test_build_succeeds_and_accounting_balances(planted_build):
    raw, db, manifest, result = planted_build
    assert result.returncode == 0, result.output[-6000:]
    assert "row_accounting_balances" in result.output
    with duckdb.connect(str(db), read_only=True) as con:
        accounted = dict(con.execute("""select dataset, sum(n_rows) from row_accounting
            where outcome != 'raw' group by 1""").fetchall())
        assert con.execute("select count(*) from row_accounting where destination = 'unexplained'").fetchone()[0] == 0
    for key, n in manifest["rows"].items():
        assert accounted[key] == n, key


def _planted_table(manifest) -> pa.Table:
    return pa.Table.from_pylist([{
        "kind": b["kind"], "dataset": b["dataset"], "file": b["file"], "row": b["row"],
        "reason": b["expect"].get("rejects"), "integrity": b["expect"].get("integrity"),
        "flagged": b["expect"].get("flagged"), "kept": b["expect"].get("kept"),
    } for b in manifest["bad_values"]])


def _misplaced(con, sql: str) -> list:
    return con.execute(sql).fetchall()


def test_every_planted_row_is_where_promised(planted_build):
    raw, db, manifest, _ = planted_build
    planted = _planted_table(manifest)  # noqa: F841 - read by the queries below
    glob = {d.key: "[" + ", ".join(f"'{f}'" for f in d.data_files(raw)) + "]" for d in C.DATASETS}
    con = duckdb.connect(str(db), read_only=True)
    con.register("planted", planted)
    bad = {}
    # rejects model and reason
    for key in C.DATASETS_BY_KEY:
        bad[f"rejects_{key}"] = _misplaced(con, f"""
            select p.kind, p.file, p.row, p.reason, r.reason
            from planted as p
            left join rejects_{key} as r on r.source_file = p.file and r.source_row = p.row
            where p.dataset = '{key}' and p.reason is not null and r.reason is distinct from p.reason""")
    # integrity kind on the planted raw row
    bad["integrity"] = _misplaced(con, """
        select p.kind, p.file, p.row, p.integrity
        from planted as p
        where p.integrity is not null and not exists (
            select 1 from rever_integrity as i
            where i.kind = p.integrity and i.source_file = p.file and i.source_row = p.row
                and i.level in ('trajectory', 'rubric'))""")
    # an invalid rating: NULL and flagged on the first completion
    bad["flagged"] = _misplaced(con, """
        select p.kind, p.file, p.row
        from planted as p
        left join ultrafeedback_completion_scores as s
            on s.source_file = p.file and s.source_row = p.row and s.completion_index = 0
        where p.flagged = 'has_invalid_rating' and s.has_invalid_rating is distinct from true""")
    # texts pass through unchanged: the mart's value equals the raw file's, byte for byte
    bad["kept_text"] = _misplaced(con, f"""
        with raw as (
            select parse_filename(filename) as file, file_row_number as row, instruction,
                   completions[1].response as response, completions[1].critique as critique
            from read_parquet({glob['ultrafeedback']}, filename = true, file_row_number = true)
        )
        select p.kind, p.file, p.row
        from planted as p
        inner join raw on raw.file = p.file and raw.row = p.row
        left join ultrafeedback_completion_scores as s
            on s.source_file = p.file and s.source_row = p.row and s.completion_index = 0
        left join ultrafeedback_curated as c on c.source_file = p.file and c.source_row = p.row
        where (p.kept = 'response' and md5(s.response) is distinct from md5(raw.response))
            or (p.kept = 'critique' and md5(s.critique) is distinct from md5(raw.critique))
            or (p.kept = 'instruction' and (raw.instruction is not null or c.source_row is null
                                            or c.instruction is not null))""")
    # an invalid CodeUltraFeedback rating: kept as the raw string, NULL as a number
    bad["kept_rating"] = _misplaced(con, f"""
        with raw as (
            select parse_filename(filename) as file, file_row_number as row,
                   annotations[len(annotations)].model as model
            from read_parquet({glob['code_ultrafeedback']}, filename = true, file_row_number = true)
        )
        select p.kind, p.file, p.row
        from planted as p
        inner join raw on raw.file = p.file and raw.row = p.row
        where p.kept = 'rating_raw' and not exists (
            select 1 from code_ultrafeedback_responses as r
            inner join code_ultrafeedback_prompts as pr on r.prompt_id = pr.prompt_id
            where pr.source_file = p.file and pr.source_row = p.row and r.model = raw.model
                and r.rating_raw = '10' and r.rating is null)""")
    checked = con.execute("""select count(*) from planted where reason is not null or integrity is not null
        or flagged is not null or kept is not null""").fetchone()[0]
    assert checked == len(manifest["bad_values"])
    misplaced = {k: v[:5] for k, v in bad.items() if v}
    assert not misplaced, misplaced
