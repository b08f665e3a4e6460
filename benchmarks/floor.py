"""The scan floor: DuckDB reading, once, every raw column the models use, into one aggregate.

No build can beat this: it decodes the same raw columns the staging models project
(models/staging/*/stg_*.sql; keep the two in step) and does nothing else with them but sum
their lengths. It runs with the same DuckDB ``threads`` as the build, and ``memory_limit`` only
when ``--memory-limit`` is given (else DuckDB's default, 80% of the machine's memory).

Usage::

    python -m benchmarks.floor --raw-dir benchmarks/cache/seed42-scale1.0 --threads 2
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import duckdb

from benchmarks.peer import duckdb_config
from benchmarks.reference import HUB_IDS
from preftools.inputs.contract import DATASETS_BY_KEY



def _len(expr: str) -> str:
    return f"coalesce(strlen({expr}), 0)"


def _messages(column: str) -> str:
    return f"coalesce(list_sum(list_transform({column}, lambda m: {_len('m.role')} + {_len('m.content')})), 0)"


# One aggregate per dataset: the columns (and struct fields) its staging model reads.
_RATINGS = " + ".join(_len(f'c.annotations.{a}."Rating"')
                      for a in ("helpfulness", "honesty", "instruction_following", "truthfulness"))
FLOOR_SQL = {
    "ultrafeedback": f"""
        select sum(
            {_len('source')} + {_len('instruction')} + {_len('filename')} + file_row_number
            + coalesce(list_sum(list_transform(completions, lambda c:
                {_len('c.model')} + {_len('c.response')} + {_len('c.critique')}
                + coalesce(c.overall_score, 0) + coalesce(c.average_rating, 0) + {_RATINGS})), 0)
            + {_len('best_rated_model')} + coalesce(score_best_rated, 0)
            + {_len('best_overall_model')} + coalesce(score_best_overall, 0)
            + coalesce(best_rated_is_different_from_best_overall::int, 0)
            + {_len('best_rated_response.response')} + {_len('best_overall_score_response.response')}
            + {_len('random_response_for_best_rated.model')} + {_len('random_response_for_best_rated.response')}
            + {_len('random_response_for_best_overall.model')} + {_len('random_response_for_best_overall.response')}
            + coalesce(score_random_response_for_rated, 0) + coalesce(score_random_response_for_best_overall, 0)
            + coalesce(best_overall_score_response_critique_sentiment, 0))
        from read_parquet(?, filename = true, file_row_number = true)""",
    "code_ultrafeedback": f"""
        select sum(
            {_len('instruction')} + {_len('preference')} + {_len('filename')} + file_row_number
            + coalesce(list_sum(list_transform(models, lambda m: {_len('m')})), 0)
            + coalesce(list_sum(list_transform(responses, lambda r: {_len('r.model')} + {_len('r.response')})), 0)
            + coalesce(list_sum(list_transform(annotations, lambda a:
                {_len('a.model')} + {_len('a.rating')} + {_len('a.rationale')})), 0))
        from read_parquet(?, filename = true, file_row_number = true)""",
    "code_ultrafeedback_standard": f"""
        select sum(
            {_messages('chosen')} + {_messages('rejected')} + {_len('chosen_score')} + {_len('rejected_score')}
            + {_len('filename')} + file_row_number)
        from read_parquet(?, filename = true, file_row_number = true)""",
    "rever_judge": f"""
        select sum(
            {_len('id')} + {_len('source')} + {_len('candidate')} + {_messages('messages')} + {_len('tools')}
            + {_len('filename')} + file_row_number)
        from read_parquet(?, filename = true, file_row_number = true)""",
    "rever_rubric": f"""
        select sum(
            {_len('id')} + {_len('source')} + {_messages('messages')} + {_len('filename')} + file_row_number)
        from read_parquet(?, filename = true, file_row_number = true)""",
}


def scan_floor(raw_dir: Path, threads: int, memory_limit: str | None = None) -> dict:
    """Run the five aggregates one after the other in one connection; seconds per dataset and total."""
    con = duckdb.connect(":memory:", config=duckdb_config(threads, memory_limit))
    seconds: dict[str, float] = {}
    checksums: dict[str, float] = {}
    total = time.perf_counter()
    for key, sql in FLOOR_SQL.items():
        files = [str(f) for f in DATASETS_BY_KEY[key].data_files(raw_dir)]
        if not all(f.endswith(".parquet") for f in files):
            # the JSON reader numbers no rows; WITH ORDINALITY does (the build reads JSON so too)
            sql = sql.replace("read_parquet(?, filename = true, file_row_number = true)",
                              "(select *, ordinality - 1 as file_row_number from read_json(?, filename = true) with ordinality)")
        t = time.perf_counter()
        checksums[key] = float(con.execute(sql, [files]).fetchone()[0] or 0)
        seconds[key] = round(time.perf_counter() - t, 3)
    return {"seconds": round(time.perf_counter() - total, 3), "per_dataset": seconds, "checksums": checksums}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.floor", description=__doc__.split("\n\n")[0])
    ap.add_argument("--raw-dir", required=True, type=Path)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--memory-limit", default=None, help="DuckDB memory_limit (default: DuckDB's, 80%% of RAM)")
    a = ap.parse_args(argv)
    print(json.dumps(scan_floor(a.raw_dir, a.threads, a.memory_limit)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
