"""Provenance from the Hub to the export.

`make fetch` (preftools.fetch) writes ``$RAW_DATA_DIR/fetch.lock.json`` with each dataset's commit;
``dbt build`` copies the commits into ``meta.warehouse_build_info.raw_revisions``
(macros/raw_provenance.sql); the export copies every build-info column into manifest.json.
Checked end to end on the stand-in Hub (hub_standin.py; contract-shaped empty files are enough:
only the build-info model is built), plus what the column says for generated data, for files
changed since the fetch, without any record, and for a remote RAW_DATA_DIR.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from conftest import REPO, TEST_SCALE, TEST_SEED, run_dbt
from hub_standin import FakeHub, serving
from preftools.contract import DATASETS, DATASETS_BY_KEY
from test_fetch import SHARD, contract_files, run_fetch

BUILD_INFO = ["build", "--select", "warehouse_build_info"]


@pytest.fixture(scope="module")
def fetched(tmp_path_factory):
    """All five datasets fetched from the stand-in Hub: (hub, raw dir)."""
    hub = FakeHub()
    for ds in DATASETS:
        hub.repos[ds.hub_id] = contract_files(ds.schema)
    with serving(hub):
        work = tmp_path_factory.mktemp("fetch")
        raw = work / "raw"
        proc = run_fetch(work, hub.endpoint, "--raw-data-dir", str(raw))
        assert proc.returncode == 0, proc.stderr
        yield hub, raw


def build_info(db: Path) -> dict:
    with duckdb.connect(str(db), read_only=True) as con:
        cur = con.execute("select * from meta.warehouse_build_info")
        (row,) = cur.fetchall()
        return dict(zip([d[0] for d in cur.description], row))


def raw_revisions_of(calls: list[str], work: Path) -> list[str]:
    """What the raw_revisions() macro says for each argument list in ``calls``, in one `dbt compile
    --inline` (no build, no raw-input check), for the built-in datasets (entries=[]: run_dbt
    registers the example entries; test_extra_exports checks what it says of them)."""
    inline = "{{ tojson([" + ", ".join(f"raw_revisions({c}, entries=[])" for c in calls) + "]) }}"
    result = run_dbt(["--quiet", "compile", "--output", "json", "--inline", inline],
                     REPO / "sample_data", work / "w.duckdb", work)
    return json.loads(json.loads(result.stdout)["compiled"])


def test_fetch_lock_reaches_build_info_and_export_manifest(fetched, tmp_path):
    hub, raw = fetched
    expected = {ds.hub_id: hub.sha(ds.hub_id) for ds in DATASETS}
    lock = json.loads((raw / "fetch.lock.json").read_text())
    assert {e["hub_id"]: e["revision"] for e in lock["datasets"].values()} == expected

    db = tmp_path / "warehouse.duckdb"
    run_dbt(BUILD_INFO, raw, db, tmp_path / "build")
    info = build_info(db)
    assert json.loads(info["raw_revisions"]) == expected, info

    # The export copies the build-info row into manifest.json (a one-row stand-in mart to export).
    with duckdb.connect(str(db)) as con:
        con.execute("create table main.provenance_probe as select 1 as x")
    export_dir = tmp_path / "exports"
    proc = subprocess.run(
        [sys.executable, "-m", "preftools.export", "--duckdb-path", str(db), "--export-dir", str(export_dir),
         "--marts", "provenance_probe", "--no-progress"],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((export_dir / "manifest.json").read_text())
    recorded = manifest["marts"]["provenance_probe"]["build"]["raw_revisions"]
    assert json.loads(recorded) == expected, manifest["marts"]["provenance_probe"]["build"]


def test_raw_revisions_says_only_what_it_knows(fetched, tmp_path):
    hub, fetched_raw = fetched
    changed_raw, bare_raw = tmp_path / "changed", tmp_path / "bare"
    shutil.copytree(fetched_raw, changed_raw, ignore=shutil.ignore_patterns(".cache"))
    shutil.copytree(fetched_raw, bare_raw, ignore=shutil.ignore_patterns(".cache", "fetch.lock.json"))
    changed = DATASETS_BY_KEY["rever_judge"]
    with open(changed_raw / changed.hub_id / SHARD, "ab") as fh:
        fh.write(b"edited after the fetch")
    uf = DATASETS_BY_KEY["ultrafeedback"].hub_id

    fixed_raw = tmp_path / "fixed"  # generated as UltraFeedback's fixed revision: only the manifest is read
    fixed_raw.mkdir()
    manifest = json.loads((REPO / "sample_data" / "_generator_manifest.json").read_text())
    manifest["ultrafeedback_planted"]["revision"] = "fixed"
    (fixed_raw / "_generator_manifest.json").write_text(json.dumps(manifest))

    q = json.dumps  # a JSON string is a Jinja string literal
    file_changed, subset, no_record, remote, fixed = raw_revisions_of([
        q(str(changed_raw)),
        f"{q(str(changed_raw))}, groups=['ultrafeedback']",
        q(str(bare_raw)),
        q("hf://datasets"),
        q(str(fixed_raw)),
    ], tmp_path)
    # A file changed since the fetch: that dataset is no longer attributed to its commit.
    assert json.loads(file_changed) == {d.hub_id: "unknown" if d is changed else hub.sha(d.hub_id) for d in DATASETS}
    # Only the enabled dataset groups are described.
    assert json.loads(subset) == {uf: hub.sha(uf)}
    assert no_record == "unknown"
    assert remote.startswith("unknown (hf://datasets is read at build time"), remote
    generated = f"generated, seed {manifest['seed']}, scale {manifest['scale']}, text length {manifest['text_length']}"
    assert json.loads(fixed) == {d.hub_id: generated + (", overall_score fixed" if d.key == "ultrafeedback" else "")
                                 for d in DATASETS}


def test_generated_data_says_seed_and_scale(warehouse):
    # The session warehouse is built on preftools.generate output (its _generator_manifest.json).
    assert warehouse.scalar("select raw_revisions from meta.warehouse_build_info") == \
        f"generated, seed {TEST_SEED}, scale {TEST_SCALE}"
