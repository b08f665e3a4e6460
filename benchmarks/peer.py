"""The peer of the warehouse in ``make bench``: the strongest alternative a user has to this dbt
project, in two parts, each run as its own process by ``benchmarks.run``:

* ``sql``: one plain DuckDB SQL script (``benchmarks/peer.sql``) over the raw files, computing
  what ``benchmarks/reference.py`` computes and the bench checks against the marts:
  UltraFeedback ratings, average_rating, picks and their random alternates (the warehouse's
  seeded-hash draw, so they can be compared one for one), the RLHFlow script's pairs and
  quarantine, the corrected pairs, ReVeR response scores and ``kept``. The output tables are
  written as Parquet files under ``--out``, named and shaped as the reference's.
* ``vader``: the VADER compound score of every distinct UltraFeedback critique, the critiques
  streamed from DuckDB in record batches to ``multiprocessing.Pool(os.cpu_count())``; written as
  ``uf_critique_sentiment.parquet`` (critique_md5, critique_sentiment). Same rule as the
  warehouse: vaderSentiment's ``polarity_scores(text)["compound"]``, NULL for a blank critique.

The peer writes keys, scores and picks, not the texts the marts publish. ``benchmarks.run`` also
runs a third part, after the build:

* ``write``: every public table of the built warehouse (the marts: the tables of schema ``main``)
  written as it is into a fresh DuckDB file opened with ``profiles.yml``'s settings, one
  ``create table <mart> as select * from src.main.<mart>`` per table with the warehouse attached
  read-only. What any script giving users the same tables must at least pay to write them; the
  peer plus this part is "the writing peer".

The raw files are the ones the Hub's rule picks (``RawDataset.data_files``: Parquet or JSON, any
layout), read with the same DuckDB ``threads`` as the build; ``memory_limit`` is set only when
``--memory-limit`` is given (as the build's only when DUCKDB_MEMORY_LIMIT is set), else DuckDB's
default applies (80% of the machine's memory).

Usage::

    python -m benchmarks.peer sql   --raw-dir benchmarks/cache/seed42-scale1.0 --out /tmp/peer
    python -m benchmarks.peer vader --raw-dir benchmarks/cache/seed42-scale1.0 --out /tmp/peer
    python -m benchmarks.peer write --warehouse warehouse.duckdb --out /tmp/peer/marts.duckdb
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import time
from collections import deque
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from preftools.inputs.contract import DATASETS_BY_KEY, duckdb_types
from preftools.outputs.export import list_marts
from preftools.warehouse import ROW_GROUP_SIZE

SQL_FILE = Path(__file__).with_name("peer.sql")
# the tables peer.sql leaves, written to <out>/<name>.parquet (the reference's names)
OUTPUTS = ("uf_completions", "uf_prompts", "code_published", "code_quarantine", "code_corrected",
           "rever_trajectories", "rever_pairs")
SENTIMENT_OUTPUT = "uf_critique_sentiment"
# the views peer.sql reads: view name -> dataset key (preftools.inputs.contract)
RAW_VIEWS = {"uf_raw": "ultrafeedback", "cuf_raw": "code_ultrafeedback",
             "rever_judge_raw": "rever_judge", "rever_rubric_raw": "rever_rubric"}
BATCH_ROWS = 10_000  # critiques per record batch, and per task of the VADER pool
# the DuckDB settings profiles.yml gives the warehouse (threads and memory_limit as the bench passes
# them); the writing step also attaches its file with the warehouse's ROW_GROUP_SIZE
WAREHOUSE_SETTINGS = {"storage_compatibility_version": "v1.5.0", "preserve_insertion_order": False,
                      "force_compression": "zstd"}

CRITIQUES_SQL = """
    select md5(critique) as critique_md5, critique
    from (select distinct critique
          from (select unnest(list_transform(completions, lambda c: c.critique)) as critique from uf_raw))
    where critique is not null
"""


def sql_string(value: object) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def raw_relation(raw_dir: Path, key: str) -> str:
    """SQL for every row of raw dataset ``key``, with ``source_path`` (the file's path),
    ``source_file`` (its name) and ``source_row`` (0-based row in the file): the Parquet files in one read, each JSON file read
    with the contract's column types (rows numbered in file order)."""
    dataset = DATASETS_BY_KEY[key]
    files = dataset.data_files(raw_dir)
    if not files:
        raise FileNotFoundError(f"no data file for {dataset.hub_id} under {raw_dir}")
    selects = []
    parquet = [f for f in files if f.name.endswith(".parquet")]
    if parquet:
        paths = ", ".join(sql_string(f) for f in parquet)
        selects.append(
            "select * exclude (filename, file_row_number), filename as source_path, parse_filename(filename) as source_file,"
            f" file_row_number as source_row from read_parquet([{paths}], filename = true, file_row_number = true)")
    types = duckdb_types(dataset.schema)
    columns = "{" + ", ".join(f"{sql_string(c)}: {sql_string(t)}" for c, t in types.items()) + "}"
    for f in files:
        if f not in parquet:
            selects.append(
                f"select * exclude (ordinality), {sql_string(f)} as source_path, {sql_string(f.name)} as source_file,"
                f" ordinality - 1 as source_row"
                f" from read_json({sql_string(f)}, columns = {columns}) with ordinality")
    return "\nunion all by name\n".join(selects)


def duckdb_config(threads: int, memory_limit: str | None) -> dict:
    """DuckDB's threads, and its memory_limit only when one is given (else DuckDB's default)."""
    return {"threads": threads, **({"memory_limit": memory_limit} if memory_limit else {})}


def connect(raw_dir: Path, views: dict[str, str], threads: int, memory_limit: str | None, temp_dir: Path):
    con = duckdb.connect(":memory:", config={**duckdb_config(threads, memory_limit), "temp_directory": str(temp_dir)})
    for view, key in views.items():
        con.execute(f"create view {view} as {raw_relation(raw_dir, key)}")
    return con


# ----------------------------------------------------------------------------- the SQL script

def execute_script(con, random_seed: int) -> None:
    """peer.sql on a connection that has the RAW_VIEWS: its output tables are left in ``con``."""
    con.execute(f"set variable random_seed = {sql_string(random_seed)}")
    con.execute(SQL_FILE.read_text())


def run_sql(raw_dir: Path, out: Path, threads: int = 2, memory_limit: str | None = None,
            random_seed: int = 42) -> dict:
    """Run peer.sql and write its output tables to ``out``; timings and row counts."""
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    con = connect(raw_dir, RAW_VIEWS, threads, memory_limit, out / ".tmp-sql")
    execute_script(con, random_seed)
    computed = time.perf_counter()
    rows = {}
    for name in OUTPUTS:
        con.execute(f"copy {name} to {sql_string(out / f'{name}.parquet')} (format parquet)")
        rows[name] = con.execute(f"select count(*) from {name}").fetchone()[0]
    rows["code_responses"] = con.execute("select count(*) from cuf_responses").fetchone()[0]
    con.close()
    end = time.perf_counter()
    return {"seconds": {"script": round(computed - start, 3), "write": round(end - computed, 3),
                        "total": round(end - start, 3)}, "rows": rows}


# ----------------------------------------------------------------------------- VADER

_ANALYZER = None


def score_texts(texts: list[str]) -> list[float | None]:
    """VADER compound score of each text; None for a blank text (the warehouse's rule)."""
    global _ANALYZER
    if _ANALYZER is None:
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

        _ANALYZER = SentimentIntensityAnalyzer()
    return [_ANALYZER.polarity_scores(text)["compound"] if text.strip() else None for text in texts]


def run_vader(raw_dir: Path, out: Path, threads: int = 2, memory_limit: str | None = None, workers: int | None = None,
              batch_rows: int = BATCH_ROWS) -> dict:
    """Score every distinct critique on ``workers`` processes (default: one per core); the
    critiques come from DuckDB batch by batch, with at most two batches per worker in flight."""
    out.mkdir(parents=True, exist_ok=True)
    workers = workers or os.cpu_count() or 1
    start = time.perf_counter()
    keys: list[pa.Array] = []
    scores: list[float | None] = []
    # the pool first: its processes fork before DuckDB starts any thread
    with multiprocessing.Pool(workers) as pool:
        con = connect(raw_dir, {"uf_raw": "ultrafeedback"}, threads, memory_limit, out / ".tmp-vader")
        reader = con.sql(CRITIQUES_SQL).to_arrow_reader(batch_rows)
        pending: deque = deque()

        def collect() -> None:
            batch_keys, result = pending.popleft()
            keys.append(batch_keys)
            scores.extend(result.get())

        for batch in reader:
            texts = batch.column("critique").to_pylist()
            pending.append((batch.column("critique_md5"), pool.apply_async(score_texts, (texts,))))
            while len(pending) > 2 * workers:
                collect()
        while pending:
            collect()
        con.close()
    md5s = pa.chunked_array(keys, type=keys[0].type).cast(pa.string()) if keys else pa.chunked_array([], pa.string())
    pq.write_table(pa.table({"critique_md5": md5s, "critique_sentiment": pa.array(scores, type=pa.float64())}),
                   out / f"{SENTIMENT_OUTPUT}.parquet")
    return {"seconds": {"total": round(time.perf_counter() - start, 3)}, "workers": workers,
            "rows": {SENTIMENT_OUTPUT: len(scores)}}


# ----------------------------------------------------------------------------- writing the public tables

def run_write(warehouse: Path, out: Path, threads: int = 2, memory_limit: str | None = None) -> dict:
    """Every mart of ``warehouse`` copied as it is into the fresh DuckDB file ``out``, opened with
    the warehouse's settings: one ``create table ... as select *`` per mart, the warehouse
    attached read-only. Rows per table and the file's size."""
    with duckdb.connect(str(warehouse), read_only=True) as src:
        marts = list_marts(src)
    out.parent.mkdir(parents=True, exist_ok=True)
    for old in (out, out.with_name(out.name + ".wal")):
        old.unlink(missing_ok=True)
    start = time.perf_counter()
    # attached with the warehouse's row group size, as the dbt plugin attaches the warehouse
    con = duckdb.connect(":memory:", config={**WAREHOUSE_SETTINGS, **duckdb_config(threads, memory_limit),
                                             "temp_directory": str(out) + ".tmp"})
    con.execute(f"attach {sql_string(out)} as written (row_group_size {ROW_GROUP_SIZE})")
    con.execute(f"attach {sql_string(warehouse)} as src (read_only)")
    rows = {name: con.execute(f'create table written.main."{name}" as select * from src.main."{name}"').fetchone()[0]
            for name in marts}
    con.close()
    return {"seconds": {"total": round(time.perf_counter() - start, 3)}, "output": str(out),
            "bytes": out.stat().st_size, "tables": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.peer", description=__doc__.split("\n\n")[0])
    ap.add_argument("part", choices=["sql", "vader", "write"])
    ap.add_argument("--raw-dir", type=Path, help="RAW_DATA_DIR in the Hub layout (sql, vader)")
    ap.add_argument("--warehouse", type=Path, help="the built warehouse whose marts are written (write)")
    ap.add_argument("--out", required=True, type=Path,
                    help="folder for the output Parquet files (sql, vader); the DuckDB file to write (write)")
    ap.add_argument("--threads", type=int, default=2, help="DuckDB threads")
    ap.add_argument("--memory-limit", default=None,
                    help="DuckDB memory_limit (default: none given, DuckDB's default of 80%% of RAM)")
    ap.add_argument("--random-seed", type=int, default=42,
                    help="seed of the alternates' draw (the warehouse's var random_seed)")
    ap.add_argument("--workers", type=int, default=None, help="VADER processes (default: os.cpu_count())")
    a = ap.parse_args(argv)
    if (a.warehouse if a.part == "write" else a.raw_dir) is None:
        ap.error(f"{a.part} needs {'--warehouse' if a.part == 'write' else '--raw-dir'}")
    if a.part == "sql":
        result = run_sql(a.raw_dir, a.out, a.threads, a.memory_limit, a.random_seed)
    elif a.part == "vader":
        result = run_vader(a.raw_dir, a.out, a.threads, a.memory_limit, a.workers)
    else:
        result = run_write(a.warehouse, a.out, a.threads, a.memory_limit)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
