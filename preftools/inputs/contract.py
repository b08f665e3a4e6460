"""The raw-data contract: the five upstream Hugging Face datasets, their Hub ids,
their layout under ``$RAW_DATA_DIR``, their exact Arrow schemas, and the rule of which
other representations of the same values a raw file may use (:data:`ACCEPTED_LEAF_TYPES`).

Everything that writes or checks raw files (the generator, the fetcher, the tests,
the schema checks) takes the schemas from here, so there is one definition. The build's
input check reads it from ``macros/raw_contract.sql``, which is generated from this module::

    python -m preftools.inputs.contract --write-macro     # after changing a schema or the rule
    python -m preftools.inputs.contract --check-macro     # exit 1 when the committed macro is stale
"""

from __future__ import annotations

import argparse
import sys
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
# Column order as in the dataset card (../shared/seeds/002_*.txt) and the Hub's file.
CODE_ULTRAFEEDBACK_STANDARD_SCHEMA = pa.schema(
    [
        ("rejected", _MESSAGES_CONTENT_ROLE),
        ("chosen", _MESSAGES_CONTENT_ROLE),
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

    def repo_dir(self, raw_data_dir: str | Path) -> Path:
        """The local copy of the Hub repo: ``$RAW_DATA_DIR/<org>/<dataset>``."""
        return Path(raw_data_dir) / self.hub_id

    def data_dir(self, raw_data_dir: str | Path) -> Path:
        """``<repo>/data``: where the generator writes Parquet shards (one of the Hub's layouts)."""
        return self.repo_dir(raw_data_dir) / "data"

    def data_files(self, raw_data_dir: str | Path) -> list[Path]:
        """The repo's data files (Parquet, JSON or CSV, any Hub layout; :mod:`preftools.inputs.hub_layout`)."""
        from preftools.inputs.hub_layout import local_data_files

        repo = self.repo_dir(raw_data_dir)
        return [repo / f.path for f in local_data_files(repo)]

    def read(self, raw_data_dir: str | Path) -> pa.Table:
        """All rows of the repo's data files, in file order, as the build reads them."""
        from preftools.inputs.hub_layout import read_table

        return read_table(self.repo_dir(raw_data_dir))


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


# --- The representation rule ------------------------------------------------------------
#
# Files written by different tools store the same values in different Arrow types. The build
# reads them with DuckDB, so the rule is stated on the types DuckDB reads (as
# `describe select * from read_parquet(file)` prints them): Arrow's string, large_string,
# string_view and dictionary<string> are all VARCHAR there, list and large_list are all `T[]`.
# macros/raw_inputs.sql applies the rule to every raw file before anything is built, and every
# staging model casts each raw column to its contract type (DuckDB casts structs by field name).
#
# A raw column is accepted when its type carries the values of the contract type unchanged:
#   * where the contract has a scalar T: a scalar of a type in ACCEPTED_LEAF_TYPES[T] (T itself,
#     or a type whose every value T holds exactly: int32 for int64, float32 or int32 for float64);
#   * at any depth: the null type (an all-null column or field, e.g. pa.nulls(n), or list<null>
#     for lists that are all empty), read as NULL of the contract type;
#   * where the contract has a list: a list whose element is accepted;
#   * where the contract has a struct: a struct with every field of the contract (by name,
#     spelled exactly), each accepted; fields in another order and extra fields are fine
#     (staging selects the contract's fields by name and drops the others).
# Anything else is rejected before the build: a type with values the contract type cannot hold
# exactly (int64 or decimal where float64 is expected, float64 where an integer is, int64 where
# int32 is), text or bytes where a number is, a list where a scalar is or the reverse, a struct
# without one of the contract's fields.

# The DuckDB type of an all-null column of Arrow's null type.
NULL_TYPE = '"NULL"'

ACCEPTED_LEAF_TYPES: dict[str, tuple[str, ...]] = {
    "VARCHAR": ("VARCHAR",),
    "BOOLEAN": ("BOOLEAN",),
    "DOUBLE": ("DOUBLE", "FLOAT", "INTEGER", "SMALLINT", "TINYINT", "UINTEGER", "USMALLINT", "UTINYINT"),
    "FLOAT": ("FLOAT", "SMALLINT", "TINYINT", "USMALLINT", "UTINYINT"),
    "BIGINT": ("BIGINT", "INTEGER", "SMALLINT", "TINYINT", "UINTEGER", "USMALLINT", "UTINYINT"),
    "INTEGER": ("INTEGER", "SMALLINT", "TINYINT", "USMALLINT", "UTINYINT"),
    "SMALLINT": ("SMALLINT", "TINYINT", "UTINYINT"),
}

# What to write instead, in pyarrow's words (the fix of a rejected scalar).
PYARROW_NAMES: dict[str, str] = {
    "VARCHAR": "string", "BOOLEAN": "bool", "DOUBLE": "float64", "FLOAT": "float32",
    "BIGINT": "int64", "INTEGER": "int32", "SMALLINT": "int16",
}


def duckdb_types(schema: pa.Schema) -> dict[str, str]:
    """The contract's column types as DuckDB reads them from a file of ``schema``."""
    import duckdb

    empty = schema.empty_table()  # noqa: F841 - read by the query below
    with duckdb.connect() as con:
        return {name: typ for name, typ, *_ in con.execute("describe select * from empty").fetchall()}


MACRO_PATH = Path(__file__).resolve().parents[2] / "macros" / "raw_contract.sql"


def _jinja_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def render_macro() -> str:
    """macros/raw_contract.sql: the contract and the rule in the types DuckDB prints."""
    out = [
        "{#- GENERATED by `python -m preftools.inputs.contract --write-macro` from preftools/inputs/contract.py: do not",
        "    edit by hand (tests/python/test_raw_contract.py fails when this file is stale).",
        "    raw_contract(): the upstream column types as DuckDB reads them; raw_type_rule(): which",
        "    other types carry the same values (ACCEPTED_LEAF_TYPES). Used by macros/raw_inputs.sql. -#}",
        "{% macro raw_contract() %}",
        "{{ return({",
    ]
    for d in DATASETS:
        out += [
            f"    {_jinja_string(d.key)}: {{",
            f"        'hub_id': {_jinja_string(d.hub_id)},",
            f"        'group': {_jinja_string(d.group)},",
            f"        'source_name': {_jinja_string(d.source_name)},",
            f"        'table_name': {_jinja_string(d.table_name)},",
            "        'columns': {",
        ]
        out += [f"            {_jinja_string(name)}: {_jinja_string(typ)}," for name, typ in duckdb_types(d.schema).items()]
        out += ["        },", "    },"]
    out += ["}) }}", "{% endmacro %}", "", "{% macro raw_type_rule() %}", "{{ return({"]
    out.append(f"    'null_type': {_jinja_string(NULL_TYPE)},")
    out.append("    'accepted': {")
    for typ, accepted in ACCEPTED_LEAF_TYPES.items():
        out.append(f"        {_jinja_string(typ)}: [{', '.join(_jinja_string(a) for a in accepted)}],")
    out.append("    },")
    out.append("    'pyarrow': {")
    for typ, name in PYARROW_NAMES.items():
        out.append(f"        {_jinja_string(typ)}: {_jinja_string(name)},")
    out += ["    },", "}) }}", "{% endmacro %}", ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m preftools.inputs.contract",
                                 description="Write or check macros/raw_contract.sql (generated from this module).")
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--write-macro", action="store_true", help=f"write {MACRO_PATH}")
    group.add_argument("--check-macro", action="store_true", help="exit 1 when the committed macro is stale")
    args = ap.parse_args(argv)
    text = render_macro()
    if args.write_macro:
        MACRO_PATH.write_text(text)
        print(f"wrote {MACRO_PATH}")
        return 0
    if MACRO_PATH.read_text() != text:
        print(f"{MACRO_PATH} is stale: run `python -m preftools.inputs.contract --write-macro`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
