"""preftools.outputs.publish against a local stand-in for the Hugging Face Hub.

The stand-in Hub (hub_standin.py) takes the uploads and stores the committed files per branch; the
tests compare them byte for byte with the export. The publisher runs as a subprocess
(huggingface_hub reads HF_ENDPOINT & co at import time) with HF_HOME in a temp dir, so nothing
leaves the machine. The export is made by preftools.outputs.export from a tiny hand-made DuckDB warehouse
(no dbt build: fast, and independent of the models) whose pairs hold secrets: the export redacts them,
and the publish refuses an export that kept them, or a file changed to hold one, before any request
(docs/pii.md). The secrets are looked for by this file's own reading of the seed pii_patterns.
"""

from __future__ import annotations

import csv
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from hub_standin import TOKEN, closed_port, hub_env
from preftools.outputs import export as ex

REPO_ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 90  # per subprocess; each takes ~2 s
REPO_ID = "pref-org/preference-pairs"
AWS = "AKIAIOSFODNN7EXAMPLE"
GITHUB = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
with open(REPO_ROOT / "seeds" / "pii_patterns.csv", newline="") as _fh:
    SECRET_PATTERNS = [re.compile(r["pattern"], re.ASCII) for r in csv.DictReader(_fh) if r["category"] == "secret"]


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from strings(v)


def secrets_in(files: dict[str, bytes]) -> list[str]:
    """Every secret match in a mart's files (a card's text; every string of a Parquet file)."""
    found = []
    for name, data in sorted(files.items()):
        if name.endswith(".parquet"):
            texts = list(strings(pq.read_table(pa.BufferReader(data)).to_pylist()))
        else:
            texts = [data.decode("utf-8")]
        found += [f"{name}: {m.group(0)}" for text in texts for p in SECRET_PATTERNS for m in p.finditer(text)]
    return found


# --------------------------------------------------------------------------------------------
# a small export


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory) -> Path:
    """preftools.outputs.export of a hand-made warehouse: preference_pairs with training and flagged splits
    (two pairs with a secret), a one-split mart, the real dataset registry seed, a build info row and
    catalog comments."""
    root = tmp_path_factory.mktemp("publish_export")
    db = root / "warehouse.duckdb"
    with duckdb.connect(str(db)) as c:
        c.execute("create schema seeds")
        c.execute("create schema meta")
        c.execute("create table seeds.dataset_registry as select * from read_csv(?, header = true)",
                  [str(REPO_ROOT / "seeds" / "dataset_registry.csv")])
        c.execute("""
            create table meta.warehouse_build_info as select
                'test-invocation' as invocation_id, '1.11.16' as dbt_version, 'duckdb' as target_name,
                42::bigint as random_seed, '/nonexistent/raw' as raw_data_dir,
                'ultrafeedback,rever' as datasets, timestamp '2026-01-01 00:00:00' as built_at
        """)
        c.execute(f"""
            create table main.preference_pairs as
            select dataset, split, pair_id,
                   [{{'role': 'user', 'content': 'q' || pair_id || secret}}] as prompt,
                   [{{'role': 'assistant', 'content': 'good ' || pair_id}}] as chosen,
                   [{{'role': 'assistant', 'content': 'bad ' || pair_id}}] as rejected,
                   flags::varchar[] as integrity_flags
            from (values
                ('ultrafeedback', 'ultrafeedback', 'p1', [], ''), ('ultrafeedback', 'ultrafeedback', 'p2', [], ''),
                ('ultrafeedback', 'ultrafeedback_flagged', 'p3', ['invalid_rating_chosen', 'contains_secret'],
                 ' my key is {AWS}'),
                ('rever', 'rever_flagged', 'p4', ['contains_secret'], ' token={GITHUB}')
            ) t(dataset, split, pair_id, flags, secret)
        """)
        c.execute("comment on table main.preference_pairs is 'One row per preference pair.'")
        c.execute("comment on column main.preference_pairs.pair_id is 'A stable id of the pair.'")
        c.execute("create table main.ultrafeedback_score_bug_summary as select 'all' as scope, 3 as n")
    out = root / "exports"
    ex.export(db, out, progress=False)
    return out


def mart_tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def run_publish(tmp_path: Path, endpoint: str, *args: str, **env_extra: str) -> subprocess.CompletedProcess:
    env = hub_env(endpoint, tmp_path / "hf_home", token=TOKEN, unset=("EXPORT_DIR",), **env_extra)
    return subprocess.run(
        [sys.executable, "-m", "preftools.publish", *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=TIMEOUT,
    )


def error_line(proc: subprocess.CompletedProcess) -> str:
    """The one error line of a clean failure."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("publish: error:")]
    assert len(lines) == 1, proc.stderr
    return lines[0]


# --------------------------------------------------------------------------------------------
# uploads


@pytest.mark.parametrize("xet", ["0", "1"], ids=["xet-pipeline", "no-xet"])
def test_publish_uploads_the_export_byte_for_byte(hub, export_dir, tmp_path, xet):
    """Both code paths of upload_folder (the hf_xet pipeline, and create_commit without hf_xet)."""
    proc = run_publish(tmp_path, hub.endpoint, "--export-dir", str(export_dir), "--repo", REPO_ID,
                       HF_HUB_DISABLE_XET=xet)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    (commit,) = hub.commits
    assert f"{hub.endpoint}/datasets/{REPO_ID}/commit/{commit['oid']}" in proc.stdout, proc.stdout

    expected = mart_tree(export_dir / "preference_pairs")
    assert sorted(expected) == [
        "README.md", "data/rever_flagged-00000-of-00001.parquet", "data/ultrafeedback-00000-of-00001.parquet",
        "data/ultrafeedback_flagged-00000-of-00001.parquet",
    ]
    assert hub.files(REPO_ID) == expected  # byte-identical: the card and every parquet
    assert secrets_in(hub.files(REPO_ID)) == []  # the warehouse's two secrets were redacted
    # The card's YAML was validated before the upload (twice on the path without hf_xet).
    assert hub.validated and set(hub.validated) == {expected["README.md"].decode()}
    assert REPO_ID not in hub.private

    # The card on the Hub names exactly the uploaded splits.
    front = yaml.safe_load(expected["README.md"].decode().split("---\n")[1])
    files = front["configs"][0]["data_files"]
    assert {f["split"] for f in files} == {"rever_flagged", "ultrafeedback", "ultrafeedback_flagged"}


def test_private_branch_and_other_mart(hub, export_dir, tmp_path):
    proc = run_publish(tmp_path, hub.endpoint, "--export-dir", str(export_dir), "--repo", REPO_ID,
                       "--mart", "ultrafeedback_score_bug_summary", "--private", "--revision", "dev")
    assert proc.returncode == 0, proc.stderr
    assert REPO_ID in hub.private
    assert hub.files(REPO_ID) == {}
    assert hub.files(REPO_ID, branch="dev") == mart_tree(export_dir / "ultrafeedback_score_bug_summary")
    assert [c["branch"] for c in hub.commits] == ["dev"]


def test_republish_deletes_stale_data_and_skips_unchanged_files(hub, export_dir, tmp_path):
    hub.add_repo(REPO_ID, {
        "data/ultrafeedback-00000-of-00002.parquet": b"an older shard",
        "data/code_ultrafeedback-00000-of-00001.parquet": b"a split this export no longer has",
        "README.md": b"---\nlicense: mit\n---\nold card\n",
        "notes.md": b"a file of the maintainers",
    })
    proc = run_publish(tmp_path, hub.endpoint, "--export-dir", str(export_dir), "--repo", REPO_ID)
    assert proc.returncode == 0, proc.stderr
    assert hub.files(REPO_ID) == {**mart_tree(export_dir / "preference_pairs"), "notes.md": b"a file of the maintainers"}
    assert len(hub.commits) == 1

    # The same export again: nothing changed, so no commit; the URL of the current one is printed.
    again = run_publish(tmp_path, hub.endpoint, "--export-dir", str(export_dir), "--repo", REPO_ID)
    assert again.returncode == 0, again.stderr
    assert len(hub.commits) == 1
    assert f"/commit/{hub.commits[0]['oid']}" in again.stdout, again.stdout


# --------------------------------------------------------------------------------------------
# refusals


def tampered_copy(export_dir: Path, tmp_path: Path, how: str) -> Path:
    out = tmp_path / "exports"
    shutil.copytree(export_dir, out)
    data = out / "preference_pairs" / "data"
    shard = data / "ultrafeedback-00000-of-00001.parquet"
    if how == "flipped_byte":
        raw = bytearray(shard.read_bytes())
        raw[len(raw) // 2] ^= 0xFF
        shard.write_bytes(bytes(raw))
    elif how == "truncated":
        shard.write_bytes(shard.read_bytes()[:-100])
    elif how == "edited_card":
        card = out / "preference_pairs" / "README.md"
        card.write_text(card.read_text().replace("license:", "licence:"))
    elif how == "extra_file":
        (data / "extra-00000-of-00001.parquet").write_bytes(shard.read_bytes())
    elif how == "missing_file":
        shard.unlink()
    elif how == "no_manifest":
        (out / "manifest.json").unlink()
    elif how == "no_mart":
        shutil.rmtree(out / "preference_pairs")
    elif how == "no_card_in_manifest":
        manifest = json.loads((out / "manifest.json").read_text())
        del manifest["marts"]["preference_pairs"]["card"]
        (out / "manifest.json").write_text(json.dumps(manifest))
    elif how in ("kept_in_manifest", "no_redaction_in_manifest"):
        manifest = json.loads((out / "manifest.json").read_text())
        if how == "kept_in_manifest":
            manifest["marts"]["preference_pairs"]["redaction"]["secrets"] = "kept"
        else:  # an export made before exports redacted secrets
            del manifest["marts"]["preference_pairs"]["redaction"]
            del manifest["redaction"]
        (out / "manifest.json").write_text(json.dumps(manifest))
    elif how.startswith("secret_in_shard"):
        table = pq.read_table(shard)
        chosen = table.column("chosen").to_pylist()
        chosen[0] = [{"role": "assistant", "content": f"leaked {AWS} here"}]
        table = table.set_column(table.column_names.index("chosen"), "chosen",
                                 pa.array(chosen, type=table.schema.field("chosen").type))
        pq.write_table(table, shard)
        if how.endswith("manifest_updated"):
            rewrite_manifest_entry(out, "preference_pairs/data/" + shard.name)
    elif how == "secret_in_card_manifest_updated":
        card = out / "preference_pairs" / "README.md"
        card.write_text(card.read_text() + f"\nAsk for the key {GITHUB}.\n")
        rewrite_manifest_entry(out, "preference_pairs/README.md")
    return out


def rewrite_manifest_entry(out: Path, path: str) -> None:
    """Make manifest.json agree with a changed file (its size and sha256), as one who edited both would."""
    manifest = json.loads((out / "manifest.json").read_text())
    data = (out / path).read_bytes()
    entry = manifest["marts"]["preference_pairs"]
    for item in [*entry["files"], entry["card"]]:
        if item["path"] == path:
            item.update(num_bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
    (out / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize("how, needles", [
    ("flipped_byte", ["ultrafeedback-00000-of-00001.parquet", "sha256", "run the export again"]),
    ("truncated", ["ultrafeedback-00000-of-00001.parquet", "bytes", "run the export again"]),
    ("edited_card", ["README.md", "sha256"]),
    ("extra_file", ["extra-00000-of-00001.parquet", "not part of the export"]),
    ("missing_file", ["ultrafeedback-00000-of-00001.parquet", "missing"]),
    ("no_manifest", ["manifest.json", "`preftools export --export-dir "]),
    ("no_mart", ["preference_pairs", "run the export again"]),
    ("no_card_in_manifest", ["no dataset card", "--marts preference_pairs"]),
    ("kept_in_manifest", ["kept its secrets", "--keep-secrets", "export again without --keep-secrets",
                          "--marts preference_pairs"]),
    ("no_redaction_in_manifest", ["records no redaction", "export again", "--marts preference_pairs"]),
    # The files are checked against the manifest first: a changed file fails that check ...
    ("secret_in_shard", ["ultrafeedback-00000-of-00001.parquet", "changed", "run the export again"]),
    # ... and, when the manifest was changed to match, the scan for secrets.
    ("secret_in_shard_manifest_updated", ["ultrafeedback-00000-of-00001.parquet: column chosen holds 1 secret match",
                                          "nothing was sent", "export again without --keep-secrets",
                                          "--marts preference_pairs"]),
    ("secret_in_card_manifest_updated", ["README.md: its text holds 1 secret match", "export again"]),
])
def test_a_tampered_or_incomplete_export_is_refused_before_any_request(hub, export_dir, tmp_path, how, needles):
    out = tampered_copy(export_dir, tmp_path, how)
    proc = run_publish(tmp_path, hub.endpoint, "--export-dir", str(out), "--repo", REPO_ID)
    line = error_line(proc)
    for needle in needles:
        assert needle in line, line
    assert hub.requests == []


def test_an_export_that_kept_its_secrets_is_refused(hub, export_dir, tmp_path):
    """`preftools export --keep-secrets` of the same warehouse: its files hold the two secrets;
    publish refuses it in one line, before any request."""
    out = tmp_path / "kept"
    ex.export(export_dir.parent / "warehouse.duckdb", out, progress=False, keep_secrets=True)
    assert len(secrets_in(mart_tree(out / "preference_pairs"))) == 2
    line = error_line(run_publish(tmp_path, hub.endpoint, "--export-dir", str(out), "--repo", REPO_ID))
    assert "kept its secrets" in line and "export again without --keep-secrets" in line and str(out) in line, line
    assert hub.requests == []


@pytest.mark.parametrize("repo", ["no-namespace", "org/name/extra", "org/na me", "org/..name", "-org/name", ""])
def test_malformed_repo_id_is_refused(hub, export_dir, tmp_path, repo):
    proc = run_publish(tmp_path, hub.endpoint, "--export-dir", str(export_dir), f"--repo={repo}")
    line = error_line(proc)
    assert "not a valid Hub repo id" in line and "ORG/NAME" in line, line
    assert hub.requests == []


def test_missing_export_dir_and_unknown_mart(hub, export_dir, tmp_path):
    line = error_line(run_publish(tmp_path, hub.endpoint, "--export-dir", str(tmp_path / "nope"), "--repo", REPO_ID))
    assert str(tmp_path / "nope") in line and "make export" in line, line
    line = error_line(run_publish(tmp_path, hub.endpoint, "--export-dir", str(export_dir), "--repo", REPO_ID,
                                  "--mart", "no_such_mart"))
    assert "no_such_mart" in line and "preference_pairs" in line, line
    assert hub.requests == []


def test_a_running_export_blocks_the_publish(hub, export_dir, tmp_path):
    out = tmp_path / "exports"
    shutil.copytree(export_dir, out)
    fd = os.open(out / ".export.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # what a running export holds
        line = error_line(run_publish(tmp_path, hub.endpoint, "--export-dir", str(out), "--repo", REPO_ID))
    finally:
        os.close(fd)
    assert "export into" in line and "is running" in line, line
    assert hub.requests == []


def test_bad_token_is_one_line_401(hub, export_dir, tmp_path):
    proc = run_publish(tmp_path, hub.endpoint, "--export-dir", str(export_dir), "--repo", REPO_ID,
                       HF_TOKEN="hf_wrong_token")
    line = error_line(proc)
    assert "401" in line and "hf auth login" in line and "HF_TOKEN" in line, line
    assert hub.requests and not hub.commits and REPO_ID not in hub.repos


def test_no_token_is_refused_before_any_request(hub, export_dir, tmp_path):
    proc = run_publish(tmp_path, hub.endpoint, "--export-dir", str(export_dir), "--repo", REPO_ID, HF_TOKEN=None)
    line = error_line(proc)
    assert "no Hugging Face token" in line and "hf auth login" in line and "HF_TOKEN" in line, line
    assert hub.requests == []
    # --token is used when given
    proc = run_publish(tmp_path, hub.endpoint, "--export-dir", str(export_dir), "--repo", REPO_ID,
                       "--token", TOKEN, HF_TOKEN=None)
    assert proc.returncode == 0, proc.stderr
    assert hub.files(REPO_ID) == mart_tree(export_dir / "preference_pairs")


def test_unreachable_endpoint(export_dir, tmp_path):
    endpoint = f"http://127.0.0.1:{closed_port()}"
    line = error_line(run_publish(tmp_path, endpoint, "--export-dir", str(export_dir), "--repo", REPO_ID))
    assert "cannot reach the Hugging Face Hub" in line and endpoint in line and "HF_ENDPOINT" in line, line


def test_offline_mode(hub, export_dir, tmp_path):
    line = error_line(run_publish(tmp_path, hub.endpoint, "--export-dir", str(export_dir), "--repo", REPO_ID,
                                  HF_HUB_OFFLINE="1"))
    assert "HF_HUB_OFFLINE" in line, line
    assert hub.requests == []


def test_help(tmp_path):
    proc = run_publish(tmp_path, "http://127.0.0.1:9", "--help")
    assert proc.returncode == 0
    for needle in ("--repo", "--mart", "--private", "--revision", "--token", "manifest.json", "HF_TOKEN", "--keep-secrets"):
        assert needle in proc.stdout, needle
