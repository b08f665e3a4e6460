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
import sys
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack, contextmanager

_ANALYZER = None

# Texts per task of the pool; below two of them a pool costs more than it saves.
MIN_TEXTS_PER_WORKER = 20_000


def _analyzer():
    """VADER's analyzer (vaderSentiment 3.3.2, pinned), with one shortcut that leaves its scores
    unchanged. `polarity_scores` first rewrites each emoji of the text as its description, one
    character at a time in Python: a quarter of its time on UltraFeedback's critiques, which
    almost never hold an emoji. That pass returns a text without emoji stripped and otherwise as
    it was, so such a text goes straight to the steps after it, which are VADER's own, in its
    order; a text with an emoji takes VADER's whole method. The tests check the scores equal
    VADER's own on texts with and without emoji and on every generated critique."""
    from vaderSentiment.vaderSentiment import BOOSTER_DICT, SentiText, SentimentIntensityAnalyzer

    class Analyzer(SentimentIntensityAnalyzer):
        def polarity_scores(self, text):
            if not self.emojis.keys().isdisjoint(text):
                return super().polarity_scores(text)
            # the rest of SentimentIntensityAnalyzer.polarity_scores, after its emoji pass
            text = text.strip()
            sentitext = SentiText(text)
            sentiments = []
            words_and_emoticons = sentitext.words_and_emoticons
            for i, item in enumerate(words_and_emoticons):
                valence = 0
                if item.lower() in BOOSTER_DICT:
                    sentiments.append(valence)
                    continue
                if (i < len(words_and_emoticons) - 1 and item.lower() == "kind"
                        and words_and_emoticons[i + 1].lower() == "of"):
                    sentiments.append(valence)
                    continue
                sentiments = self.sentiment_valence(valence, sentitext, item, i, sentiments)
            sentiments = self._but_check(words_and_emoticons, sentiments)
            return self.score_valence(sentiments, text)

    return Analyzer()


def _score_chunk(texts: list[str | None]) -> list[float | None]:
    """Compound score in [-1, 1] of each text; None for a None or blank text (VADER would say 0.0)."""
    global _ANALYZER
    if _ANALYZER is None:
        _ANALYZER = _analyzer()
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


@contextmanager
def _scoring_pool(workers: int):
    """A pool of ``workers`` spawned processes.

    A spawned worker first runs the parent's ``__main__`` script again when the parent was
    started as one (multiprocessing's rule): under dbt that is the ``dbt`` command, whose imports
    take about 2 s per worker before its first text, and the scorer needs nothing from it. So the
    script's path is hidden from multiprocessing while the pool lives (its workers start on
    demand). Measured on the scale-1.0 critiques: the sentiment model 0.93x the wall time and
    0.90x the CPU (farm-bench, 5 pairs).
    """
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
    main = sys.modules["__main__"]
    script = main.__dict__.pop("__file__", None) if getattr(main, "__spec__", None) is None else None
    try:
        yield pool
    finally:
        pool.shutdown(cancel_futures=True)
        if script is not None:
            main.__file__ = script


def compound_scores_stream(batches, workers: int | None = None, chunk: int = MIN_TEXTS_PER_WORKER,
                           in_flight: int = 2) -> list[float | None]:
    """VADER compound scores of the texts of an iterable of lists (e.g. the record batches of a
    warehouse query), in order, as one list: the same scores as _score_chunk on the
    concatenation. The texts go to the pool in chunks of ``chunk`` as they are read, with at most
    ``in_flight`` chunks per worker pending, so the memory held outside DuckDB is a few chunks of
    text (plus the scores), not the whole column; fewer than two chunks are scored in this process.
    """
    workers = default_workers() if workers is None else max(1, workers)
    scores: list[float | None] = []
    pending: deque = deque()
    pool = None
    buffer: list[str | None] = []
    stack = ExitStack()

    def dispatch(texts: list[str | None]) -> None:
        nonlocal pool
        if workers == 1:
            scores.extend(_score_chunk(texts))
            return
        if pool is None:
            pool = stack.enter_context(_scoring_pool(workers))
        pending.append(pool.submit(_score_chunk, texts))
        while len(pending) > in_flight * workers:
            scores.extend(pending.popleft().result())

    with stack:
        for texts in batches:
            buffer.extend(texts)
            # keep one chunk back: a total under two chunks is scored here, without a pool
            while len(buffer) >= 2 * chunk:
                dispatch(buffer[:chunk])
                del buffer[:chunk]
        if pool is None:
            scores.extend(_score_chunk(buffer))
        else:
            for i in range(0, len(buffer), chunk):
                dispatch(buffer[i : i + chunk])
            while pending:
                scores.extend(pending.popleft().result())
    return scores
