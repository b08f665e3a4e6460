"""The raw-data contract: the five upstream Hugging Face datasets, their Hub ids,
their layout under ``$RAW_DATA_DIR`` and their exact Arrow schemas.

Everything that writes or checks raw files (the generator, the fetcher, the tests,
the schema checks) takes the schemas from here, so there is one definition.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

# --- UltraFeedback (argilla/ultrafeedback-binarized-curation) -----------------

_RATING_RATIONALE = pa.struct([("Rating", pa.string()), ("Rationale", pa.string())])
_RATING_RATIONALE_TYPED = pa.struct(
    [
        ("Rating", pa.string()),
        ("Rationale", pa.string()),
        ("Rationale For Rating", pa.string()),
        ("Type", pa.list_(pa.string())),
    ]
)
ULTRAFEEDBACK_ANNOTATIONS = pa.struct(
    [
        ("helpfulness", _RATING_RATIONALE_TYPED),
        ("honesty", _RATING_RATIONALE),
        ("instruction_following", _RATING_RATIONALE),
        ("truthfulness", _RATING_RATIONALE_TYPED),
    ]
)
ULTRAFEEDBACK_COMPLETION = pa.struct(
    [
        ("annotations", ULTRAFEEDBACK_ANNOTATIONS),
        ("average_rating", pa.float64()),
        ("critique", pa.string()),
        ("custom_system_prompt", pa.string()),
        ("model", pa.string()),
        ("overall_score", pa.float64()),
        ("principle", pa.string()),
        ("response", pa.string()),
    ]
)
# Column order as in the dataset card (../shared/seeds/000_*.txt).
ULTRAFEEDBACK_SCHEMA = pa.schema(
    [
        ("source", pa.string()),
        ("instruction", pa.string()),
        ("best_rated_is_different_from_best_overall", pa.bool_()),
        ("best_overall_model", pa.string()),
        ("score_best_overall", pa.float64()),
        ("best_rated_model", pa.string()),
        ("score_best_rated", pa.float64()),
        ("best_overall_score_response", ULTRAFEEDBACK_COMPLETION),
        ("random_response_for_best_overall", ULTRAFEEDBACK_COMPLETION),
        ("best_rated_response", ULTRAFEEDBACK_COMPLETION),
        ("random_response_for_best_rated", ULTRAFEEDBACK_COMPLETION),
        ("score_random_response_for_best_overall", pa.float64()),
        ("score_random_response_for_rated", pa.float64()),
        ("completions", pa.list_(ULTRAFEEDBACK_COMPLETION)),
        ("random_response_for_rated", pa.float64()),
        ("best_overall_score_response_critique_sentiment", pa.float64()),
    ]
)

# --- CodeUltraFeedback (coseal/CodeUltraFeedback) ------------------------------

CODE_ULTRAFEEDBACK_SCHEMA = pa.schema(
    [
        ("instruction", pa.string()),
        ("preference", pa.string()),
        ("models", pa.list_(pa.string())),
        ("responses", pa.list_(pa.struct([("model", pa.string()), ("response", pa.string())]))),
        (
            "annotations",
            pa.list_(
                pa.struct(
                    [("model", pa.string()), ("rating", pa.string()), ("rationale", pa.string())]
                )
            ),
        ),
    ]
)

# --- RLHFlow/CodeUltraFeedback-standard -----------------------------------------

_MESSAGES_CONTENT_ROLE = pa.list_(pa.struct([("content", pa.string()), ("role", pa.string())]))
CODE_ULTRAFEEDBACK_STANDARD_SCHEMA = pa.schema(
    [
        ("chosen", _MESSAGES_CONTENT_ROLE),
        ("rejected", _MESSAGES_CONTENT_ROLE),
        ("chosen_score", pa.string()),
        ("rejected_score", pa.string()),
    ]
)

# --- OpenRubrics ReVeR -----------------------------------------------------------

_MESSAGES_ROLE_CONTENT = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
REVER_JUDGE_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("source", pa.string()),
        ("candidate", pa.string()),
        ("messages", _MESSAGES_ROLE_CONTENT),
        ("tools", pa.string()),
    ]
)
REVER_RUBRIC_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("source", pa.string()),
        ("messages", _MESSAGES_ROLE_CONTENT),
    ]
)


@dataclass(frozen=True)
class RawDataset:
    """One upstream dataset: its Hub id, the dbt source table that reads it, its schema."""

    key: str  # short name used in file names, rejects models and row accounting
    hub_id: str  # <org>/<dataset> on the Hugging Face Hub
    source_name: str  # dbt source name
    table_name: str  # dbt source table name
    group: str  # the dbt var `datasets` enables/disables by group
    schema: pa.Schema
    upstream_rows: int  # rows in the upstream train split (scale 1.0)

    def data_dir(self, raw_data_dir: str | Path) -> Path:
        return Path(raw_data_dir) / self.hub_id / "data"

    def glob(self, raw_data_dir: str) -> str:
        return f"{str(raw_data_dir).rstrip('/')}/{self.hub_id}/data/*.parquet"


DATASETS: tuple[RawDataset, ...] = (
    RawDataset(
        "ultrafeedback", "argilla/ultrafeedback-binarized-curation",
        "ultrafeedback", "ultrafeedback_binarized_curation", "ultrafeedback",
        ULTRAFEEDBACK_SCHEMA, 63_967,
    ),
    RawDataset(
        "code_ultrafeedback", "coseal/CodeUltraFeedback",
        "code_ultrafeedback", "code_ultrafeedback", "code_ultrafeedback",
        CODE_ULTRAFEEDBACK_SCHEMA, 10_000,
    ),
    RawDataset(
        "code_ultrafeedback_standard", "RLHFlow/CodeUltraFeedback-standard",
        "code_ultrafeedback", "code_ultrafeedback_standard", "code_ultrafeedback",
        CODE_ULTRAFEEDBACK_STANDARD_SCHEMA, 50_156,
    ),
    RawDataset(
        "rever_judge", "OpenRubrics/ReVeR-Traces-Judge",
        "rever", "rever_traces_judge", "rever",
        REVER_JUDGE_SCHEMA, 60_620,
    ),
    RawDataset(
        "rever_rubric", "OpenRubrics/ReVeR-Traces-Rubric",
        "rever", "rever_traces_rubric", "rever",
        REVER_RUBRIC_SCHEMA, 30_310,
    ),
)

DATASETS_BY_KEY = {d.key: d for d in DATASETS}

# Upstream facts the generator reproduces at scale 1.0.
REVER_TOOL_CALL_RATE = 0.589
REVER_SOURCES = ("helpsteer3", "ultrafeedback", "skywork", "magpie", "ifeval")
CODE_ULTRAFEEDBACK_PREFERENCES = (
    "instruction-following", "readability", "complexity", "style", "explanation",
)
