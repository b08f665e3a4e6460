"""VADER compound sentiment of many texts, on every core.

vaderSentiment scores one text at a time in pure Python (about 0.25 ms a critique), so a
single process is the slowest step of a full-scale build. The texts are cut into contiguous
chunks scored by a pool of worker processes (started with `spawn`: they share nothing with the
DuckDB threads of the calling process) and put back in order; each score depends only on its
text, so the result is the same whatever the number of workers.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

_ANALYZER = None

# Below this many texts a pool costs more than it saves.
MIN_TEXTS_PER_WORKER = 20_000


def _score_chunk(texts: list[str | None]) -> list[float | None]:
    """Compound score in [-1, 1] of each text; None for a None or blank text (VADER would say 0.0)."""
    global _ANALYZER
    if _ANALYZER is None:
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

        _ANALYZER = SentimentIntensityAnalyzer()
    return [
        _ANALYZER.polarity_scores(text)["compound"] if text is not None and text.strip() else None
        for text in texts
    ]


def default_workers() -> int:
    """The DuckDB thread budget of the build (DUCKDB_THREADS, as in profiles.yml), else the cores."""
    try:
        return max(1, int(os.environ.get("DUCKDB_THREADS", "") or os.cpu_count() or 1))
    except ValueError:
        return max(1, os.cpu_count() or 1)


def compound_scores(texts: list[str | None], workers: int | None = None) -> list[float | None]:
    """VADER compound score of each text, in order, computed by up to ``workers`` processes."""
    workers = default_workers() if workers is None else max(1, workers)
    workers = min(workers, max(1, len(texts) // MIN_TEXTS_PER_WORKER))
    if workers == 1:
        return _score_chunk(texts)
    size = -(-len(texts) // workers)
    chunks = [texts[i : i + size] for i in range(0, len(texts), size)]
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        return [score for chunk in pool.map(_score_chunk, chunks) for score in chunk]
