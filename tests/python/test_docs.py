"""Docs coverage (issue 9 "Documentation"): `dbt docs generate` runs on the session warehouse, and
every model, seed, snapshot and source in target/manifest.json has a description, and every column
that the models really have (target/catalog.json, read from the built tables) has a non-empty
description in the manifest. The assertion lists every offender.
"""

from __future__ import annotations

import json

import pytest

from conftest import run_dbt

pytestmark = pytest.mark.slow

DOCUMENTED_RESOURCES = ("model", "seed", "snapshot")


def _blank(text) -> bool:
    return not (text or "").strip()


@pytest.fixture(scope="module")
def docs(warehouse) -> tuple[dict, dict]:
    # The build's own target folder: dbt parses partially from its partial_parse.msgpack (a fresh
    # folder would mean a full parse, ~45 s more).
    run_dbt(["docs", "generate"], warehouse.raw_dir, warehouse.path, warehouse.work_dir)
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
