"""Docs coverage: `dbt docs generate` runs on the session warehouse, and
every model, seed, snapshot and source in target/manifest.json has a description, and every column
that the models really have (target/catalog.json, read from the built tables) has a non-empty
description in the manifest. The assertion lists every offender.

The descriptions as the warehouse's own catalog holds them (persist_docs' COMMENTs, what SQL
clients and the dataset cards show): plain text, without Markdown markers (macros/
plain_text_comments.sql), and one on every seed column.
"""

from __future__ import annotations

import csv
import json

import pytest

from conftest import REPO, run_dbt

pytestmark = pytest.mark.slow

DOCUMENTED_RESOURCES = ("model", "seed", "snapshot")


def _blank(text) -> bool:
    return not (text or "").strip()


@pytest.fixture(scope="module")
def docs(warehouse) -> tuple[dict, dict]:
    # The build's own target folder: dbt parses partially from its partial_parse.msgpack (a fresh
    # folder would mean a full parse, ~45 s more).
    run_dbt(["docs", "generate"], warehouse.raw_dir, warehouse.path, warehouse.work_dir, artifacts=True)
    target = warehouse.work_dir / "target"
    manifest = json.loads((target / "manifest.json").read_text(encoding="utf-8"))
    catalog = json.loads((target / "catalog.json").read_text(encoding="utf-8"))
    return manifest, catalog


def _project_nodes(manifest: dict) -> list[dict]:
    project = manifest["metadata"].get("project_name")
    return [
        node for node in manifest["nodes"].values()
        if node["resource_type"] in DOCUMENTED_RESOURCES and node.get("package_name", project) == project
    ]


def test_docs_generate_covers_every_model(docs):
    manifest, catalog = docs
    models = [n for n in _project_nodes(manifest) if n["resource_type"] == "model"]
    assert models, "the manifest has no models"
    missing = sorted(n["name"] for n in models if n["unique_id"] not in catalog["nodes"])
    assert not missing, f"models not in catalog.json (not built?): {missing}"


def test_every_resource_has_a_description(docs):
    manifest, _ = docs
    offenders = [
        f"{node['resource_type']} {node['name']} ({node['original_file_path']})"
        for node in _project_nodes(manifest)
        if _blank(node.get("description"))
    ]
    for source in manifest["sources"].values():
        if _blank(source.get("description")):
            offenders.append(f"source {source['source_name']}.{source['name']} ({source['original_file_path']})")
        if _blank(source.get("source_description")):
            offenders.append(f"source {source['source_name']} (the source block itself, {source['original_file_path']})")
    offenders = sorted(set(offenders))
    assert not offenders, f"{len(offenders)} undocumented:\n  " + "\n  ".join(offenders)


def test_every_model_column_has_a_description(docs):
    """Every column of every built model and seed (from catalog.json) is described in its yml."""
    manifest, catalog = docs
    offenders = []
    for node in _project_nodes(manifest):
        built = catalog["nodes"].get(node["unique_id"])
        if built is None:
            continue
        documented = {name.lower(): col for name, col in node.get("columns", {}).items()}
        for column in built["columns"].values():
            described = documented.get(column["name"].lower())
            if described is None or _blank(described.get("description")):
                where = "not in the yml" if described is None else "empty description"
                yml = (node.get("patch_path") or node["original_file_path"]).split("://", 1)[-1]
                offenders.append(f"{node['resource_type']} {node['name']}.{column['name']} ({where}; {yml})")
    offenders.sort()
    assert not offenders, f"{len(offenders)} undocumented columns:\n  " + "\n  ".join(offenders)


# --------------------------------------------------------------------------------------------
# the catalog's comments

MARKDOWN_MARKERS = ("**", "`", "](")


def _comments(warehouse) -> list[tuple[str, str]]:
    """(object, comment) of every table, view and column comment in the warehouse's catalog."""
    rows = warehouse.rows(
        "select schema_name || '.' || table_name as name, comment from duckdb_tables() where comment is not null "
        "union all select schema_name || '.' || view_name, comment from duckdb_views() "
        "where comment is not null and not internal "
        "union all select schema_name || '.' || table_name || '.' || column_name, comment from duckdb_columns() "
        "where comment is not null and not internal"
    )
    return [(r["name"], r["comment"]) for r in rows]


def test_catalog_comments_are_plain_text(warehouse):
    comments = _comments(warehouse)
    assert len(comments) > 500, "persist_docs wrote (almost) no comments"
    offenders = sorted(
        f"{name}: {marker!r} in {comment[:80]!r}"
        for name, comment in comments for marker in MARKDOWN_MARKERS if marker in comment
    )
    assert not offenders, f"{len(offenders)} comments with Markdown:\n  " + "\n  ".join(offenders)


def _comment(warehouse, schema: str, table: str, column: str | None = None) -> str:
    if column is None:
        sql = ("select comment from duckdb_tables() where schema_name = ? and table_name = ? "
               "union all select comment from duckdb_views() where schema_name = ? and view_name = ?")
        params = [schema, table, schema, table]
    else:
        sql = "select comment from duckdb_columns() where schema_name = ? and table_name = ? and column_name = ?"
        params = [schema, table, column]
    (row,) = warehouse.rows(sql, params)
    return " ".join((row["comment"] or "").split())


@pytest.mark.parametrize(("where", "expected"), [
    # seeds/_seeds.yml: code ticks and a link
    (("seeds", "dataset_registry", "hub_url"),
     "Dataset page on the Hub, https://huggingface.co/datasets/ followed by hub_id, e.g. "
     "coseal/CodeUltraFeedback (https://huggingface.co/datasets/coseal/CodeUltraFeedback)."),
    # models/docs/cross_dataset.md preference_side (ticks) + the column's own sentence
    (("main", "judge_agreement", "average_rating_prefers"),
     "Which response a pair of scores prefers: chosen or rejected (strictly higher score), tie (equal), "
     "unknown (a score is NULL). By the recomputed average rating."),
    # models/docs/cross_dataset.md text_normalisation (ticks) inside a table description
    (("main", "prompt_overlap", None),
     "One row per prompt (normalised for matching across datasets: lower case, every run of white space "
     "collapsed to one space, leading and trailing spaces removed, as the normalize_text macro does) "
     "that occurs in more than one of UltraFeedback, CodeUltraFeedback, ReVeR and the extra_datasets "
     "entries (an entry's prompt: the text of its pairs' user turns, joined by a blank line), for "
     "contamination and train/test leakage checks. RLHFlow/CodeUltraFeedback-standard is derived from "
     "CodeUltraFeedback and not counted apart."),
    # a view's column: the globs' asterisks are not emphasis and stay
    (("audits", "uf_published_disagreements", "what_disagrees"),
     "Comma-separated names of the failing checks (the audit's *_agrees / *_obeys_rule / "
     "*_is_other_completion columns that are false)."),
])
def test_known_descriptions_as_plain_text(warehouse, where, expected):
    assert _comment(warehouse, *where) == expected


def test_every_seed_column_has_a_comment(warehouse):
    """Each column of each seeds/*.csv (its header row) has a non-empty comment on the seed's table."""
    seeds = sorted((REPO / "seeds").glob("*.csv"))
    assert seeds
    missing = []
    for path in seeds:
        with path.open(newline="", encoding="utf-8") as f:
            header = next(csv.reader(f))
        comments = {
            r["column_name"]: r["comment"]
            for r in warehouse.rows(
                "select column_name, comment from duckdb_columns() where schema_name = 'seeds' and table_name = ?",
                [path.stem],
            )
        }
        missing += [f"seeds.{path.stem}.{c}" for c in header if _blank(comments.get(c))]
    assert not missing, f"{len(missing)} seed columns without a comment: {missing}"
