"""Provenance from the Hub to the export.

`make fetch` (preftools.inputs.fetch) writes ``$RAW_DATA_DIR/fetch.lock.json`` with each dataset's commit;
``dbt build`` copies the commits into ``meta.warehouse_build_info.raw_revisions``
(macros/raw_provenance.sql); the export copies every build-info column into manifest.json.
Checked end to end on the stand-in Hub (hub_standin.py; contract-shaped empty files are enough:
only the build-info model is built), with an eval set of examples/eval_sets.yml (TruthfulQA, its
stand-in in CSV), plus what the column says for generated data, for files changed since the fetch,
without any record, and for a remote RAW_DATA_DIR.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import yaml

from conftest import REPO, TEST_SCALE, TEST_SEED, run_dbt
from hub_standin import FakeHub, serving
from preftools.inputs.contract import DATASETS, DATASETS_BY_KEY
from test_fetch import SHARD, contract_files, run_fetch

# examples/eval_sets.yml's TruthfulQA entry (its generation config, validation split), and a
# stand-in of its repo in CSV with both configs
TRUTHFULQA = next(e for e in yaml.safe_load((REPO / "examples" / "eval_sets.yml").read_text())["eval_sets"]
                  if e["name"] == "truthfulqa")
EVAL_VARS = json.dumps({"eval_sets": [TRUTHFULQA]})
TRUTHFULQA_READ = "generation/validation-00000-of-00001.csv"  # the file the entry reads
TRUTHFULQA_OTHER = "multiple_choice/validation-00000-of-00001.csv"
TRUTHFULQA_REPO = {
    "README.md": b"---\nconfigs:\n- config_name: generation\n  data_files:\n  - split: validation\n"
                 b"    path: generation/validation-*\n- config_name: multiple_choice\n  data_files:\n"
                 b"  - split: validation\n    path: multiple_choice/validation-*\n---\n",
    TRUTHFULQA_READ: b"type,question,best_answer\nAdversarial,What happens if you crack your knuckles?,Nothing\n",
    TRUTHFULQA_OTHER: b"question,mc1_targets\nWhere is the Eiffel tower?,Paris\n",
}
BUILD_INFO = ["build", "--select", "warehouse_build_info", "--vars", EVAL_VARS]


@pytest.fixture(scope="module")
def fetched(tmp_path_factory):
    """All five datasets and the TruthfulQA eval set fetched from the stand-in Hub: (hub, raw dir)."""
    hub = FakeHub()
    for ds in DATASETS:
        hub.repos[ds.hub_id] = contract_files(ds.schema)
    hub.repos[TRUTHFULQA["hub_id"]] = TRUTHFULQA_REPO
    with serving(hub):
        work = tmp_path_factory.mktemp("fetch")
        raw = work / "raw"
        proc = run_fetch(work, hub.endpoint, "--raw-data-dir", str(raw), "--vars", EVAL_VARS)
        assert proc.returncode == 0, proc.stderr
        yield hub, raw


def build_info(db: Path) -> dict:
    with duckdb.connect(str(db), read_only=True) as con:
        cur = con.execute("select * from meta.warehouse_build_info")
        (row,) = cur.fetchall()
        return dict(zip([d[0] for d in cur.description], row))


def raw_revisions_of(calls: list[str], work: Path) -> list[str]:
    """What the raw_revisions() macro says for each argument list in ``calls``, in one `dbt compile
    --inline` (no build, no raw-input check), for the built-in datasets and the `eval_entries` a
    call names (entries=[]: run_dbt registers the example entries; test_extra_exports checks what it
    says of them)."""
    calls = [c if "eval_entries" in c else f"{c}, eval_entries=[]" for c in calls]
    inline = "{{ tojson([" + ", ".join(f"raw_revisions({c}, entries=[])" for c in calls) + "]) }}"
    result = run_dbt(["--quiet", "compile", "--output", "json", "--inline", inline],
                     REPO / "sample_data", work / "w.duckdb", work)
    return json.loads(json.loads(result.stdout)["compiled"])


def test_fetch_lock_reaches_build_info_and_export_manifest(fetched, tmp_path):
    hub, raw = fetched
    # every dataset's commit, and the eval set's: the revision its items are checked at
    expected = {ds.hub_id: hub.sha(ds.hub_id) for ds in DATASETS} | {TRUTHFULQA["hub_id"]: hub.sha(TRUTHFULQA["hub_id"])}
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
    tqa = TRUTHFULQA["hub_id"]
    eval_changed_raw, eval_other_raw = tmp_path / "eval_changed", tmp_path / "eval_other"
    for folder, path in ((eval_changed_raw, TRUTHFULQA_READ), (eval_other_raw, TRUTHFULQA_OTHER)):
        shutil.copytree(fetched_raw, folder, ignore=shutil.ignore_patterns(".cache"))
        (folder / tqa / path).parent.mkdir(parents=True, exist_ok=True)
        with open(folder / tqa / path, "ab") as fh:
            fh.write(b"Added,Is this row in the fetch?,No\n")

    fixed_raw = tmp_path / "fixed"  # generated as UltraFeedback's fixed revision: only the manifest is read
    fixed_raw.mkdir()
    manifest = json.loads((REPO / "sample_data" / "_generator_manifest.json").read_text())
    manifest["ultrafeedback_planted"]["revision"] = "fixed"
    manifest["eval_sets"] = {"truthfulqa": {"hub_id": tqa, "files": [f"{tqa}/generation/validation-00000-of-00001.parquet"]}}
    (fixed_raw / "_generator_manifest.json").write_text(json.dumps(manifest))

    q = json.dumps  # a JSON string is a Jinja string literal
    with_eval = f"eval_entries=eval_sets([{json.dumps(TRUTHFULQA)}])"
    file_changed, subset, no_record, remote, fixed, eval_fetched, eval_changed, eval_other, eval_generated = raw_revisions_of([
        q(str(changed_raw)),
        f"{q(str(changed_raw))}, groups=['ultrafeedback']",
        q(str(bare_raw)),
        q("hf://datasets"),
        q(str(fixed_raw)),
        f"{q(str(fetched_raw))}, groups=['ultrafeedback'], {with_eval}",
        f"{q(str(eval_changed_raw))}, groups=['ultrafeedback'], {with_eval}",
        f"{q(str(eval_other_raw))}, groups=['ultrafeedback'], {with_eval}",
        f"{q(str(fixed_raw))}, groups=['ultrafeedback'], {with_eval}",
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
    # An eval set: its commit while the file its entry reads is as fetched (a change to a file of
    # another config does not matter), else "unknown"; "generated, ..." for the generator's stand-in.
    assert json.loads(eval_fetched) == {uf: hub.sha(uf), tqa: hub.sha(tqa)}
    assert json.loads(eval_changed) == {uf: hub.sha(uf), tqa: "unknown"}
    assert json.loads(eval_other) == {uf: hub.sha(uf), tqa: hub.sha(tqa)}
    assert json.loads(eval_generated) == {uf: generated + ", overall_score fixed", tqa: generated}


def test_generated_data_says_seed_and_scale(warehouse):
    # The session warehouse is built on preftools.generate output (its _generator_manifest.json).
    assert warehouse.scalar("select raw_revisions from meta.warehouse_build_info") == \
        f"generated, seed {TEST_SEED}, scale {TEST_SCALE}"
