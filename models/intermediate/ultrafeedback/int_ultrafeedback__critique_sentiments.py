"""VADER compound sentiment of each UltraFeedback completion's critique.

One row per raw row x completion: (prompt_id, completion_index, critique_sentiment).
Kept small on purpose (the Spark target replaces this one model): it reads the keys and
the critique text, scores each DISTINCT critique once with vaderSentiment's
SentimentIntensityAnalyzer (lexicon shipped with the package), and maps the scores back to
the rows with Arrow's dictionary encoding (no join on long texts, no per-row Python loop
beyond VADER's own per-text call, which runs in one worker process per DuckDB thread). A NULL
or blank critique has no sentiment (NULL), rather than VADER's 0.0 for empty text.
"""

import pyarrow as pa
import pyarrow.compute as pc

# Scores on every core (a pool of worker processes); see preftools/sentiment.py.
from preftools.sentiment import compound_scores as vader_compound_scores


def compound_scores(texts: pa.Array) -> pa.Array:
    """VADER compound score in [-1, 1] of each text; NULL for NULL or blank text."""
    return pa.array(vader_compound_scores(texts.to_pylist()), type=pa.float64())


def model(dbt, session):
    dbt.config(materialized="table")

    completions = dbt.ref("int_ultrafeedback__completions_parsed")
    rows = completions.select("prompt_id, completion_index, critique").to_arrow_table()

    # distinct critiques -> scores; indices map each row back to its critique's score
    encoded = rows.column("critique").combine_chunks().dictionary_encode()
    distinct_scores = compound_scores(encoded.dictionary)
    critique_sentiment = pc.take(distinct_scores, encoded.indices)

    return pa.table(
        {
            "prompt_id": rows.column("prompt_id"),
            "completion_index": rows.column("completion_index"),
            "critique_sentiment": critique_sentiment,
        }
    )
