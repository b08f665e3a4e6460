"""The VADER scores are reused between builds without changing any result.

int_ultrafeedback__critique_sentiment_scores reads the scores of its previous build and scores
only the critiques it has not seen. A build into a warehouse built on other raw data (the
UltraFeedback file rewritten: half of its rows kept, half replaced by rows of another seed, so
critiques are kept, removed and added) must give exactly the tables a fresh build on the new
data gives. Only the models up to the sentiments are rebuilt: every other model is a plain
table rebuilt from the raw files anyway.

Run: python -m pytest tests/python/test_sentiment_reuse.py -x -q
"""

from __future__ import annotations

import shutil

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import generate_raw, run_dbt

UF_FILE = "argilla/ultrafeedback-binarized-curation/data/train-00000-of-00004.parquet"  # the first of its 4 shards
TABLES = ["int_ultrafeedback__critique_sentiment_scores", "int_ultrafeedback__critique_sentiments"]
SELECT = ["run", "--select", "+int_ultrafeedback__critique_sentiments"]


@pytest.mark.slow
def test_rebuild_on_changed_raw_equals_fresh_build(warehouse, tmp_path):
    other = tmp_path / "other_seed"
    generate_raw(other, seed=7)
    changed = tmp_path / "raw_changed"
    shutil.copytree(warehouse.raw_dir, changed)
    # half of the rows kept, half replaced by rows of the other seed (same column layout)
    old, new = pq.read_table(warehouse.raw_dir / UF_FILE), pq.read_table(other / UF_FILE)
    mixed = pa.concat_tables([old.slice(0, old.num_rows // 2), new.slice(new.num_rows // 2)])
    pq.write_table(mixed, changed / UF_FILE)

    reused = tmp_path / "reused.duckdb"
    shutil.copy(warehouse.path, reused)
    with duckdb.connect(str(reused), read_only=True) as con:
        before = {r[0] for r in con.execute(f"select critique_md5 from intermediate.{TABLES[0]}").fetchall()}
    run_dbt(SELECT, changed, reused, tmp_path / "work_reused")
    fresh = tmp_path / "fresh.duckdb"
    run_dbt(SELECT, changed, fresh, tmp_path / "work_fresh")

    with duckdb.connect() as con:
        con.execute(f"attach '{reused}' as r (read_only)")
        con.execute(f"attach '{fresh}' as f (read_only)")
        after = {r[0] for r in con.execute(f"select critique_md5 from f.intermediate.{TABLES[0]}").fetchall()}
        # the change kept, removed and added critiques
        assert before & after and before - after and after - before
        for table in TABLES:
            for a, b in (("r", "f"), ("f", "r")):
                diff = con.execute(
                    f"select count(*) from (select * from {a}.intermediate.{table}"
                    f" except all select * from {b}.intermediate.{table})"
                ).fetchone()[0]
                assert diff == 0, (table, a, b, diff)
            assert con.execute(f"select count(*) from f.intermediate.{table}").fetchone()[0] > 0


def test_streamed_scores_equal_one_process():
    """compound_scores_stream (the model feeds it record batches) gives the one-process values
    (_score_chunk), in order, whatever the batch sizes, the chunking and the number of workers."""
    from preftools.dbt_runtime import sentiment

    words = "good bad terrible great not very excellent awful fine :) !! meh but".split()
    texts = [None if i % 53 == 0 else "  " if i % 61 == 0 else
             " ".join(words[(i * k) % len(words)] for k in range(1 + i % 17)) for i in range(9000)]
    expected = sentiment._score_chunk(texts)
    for workers in (1, 2):
        for batch in (7, 2048, 9000):
            batches = (texts[i : i + batch] for i in range(0, len(texts), batch))
            assert sentiment.compound_scores_stream(batches, workers=workers, chunk=1000) == expected
    assert sentiment.compound_scores_stream([texts[:50]], workers=2) == expected[:50]
    assert sentiment.compound_scores_stream([], workers=2) == []
