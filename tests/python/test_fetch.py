"""preftools.inputs.fetch against a local stand-in for the Hugging Face Hub.

The stand-in Hub (hub_standin.py) serves the repos; the fetcher runs as a subprocess
(huggingface_hub reads HF_ENDPOINT & co at import time) with HF_ENDPOINT pointing at it and HF_HOME
in a temp dir, so nothing leaves the machine.
"""

from __future__ import annotations

import errno
import gzip
import hashlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from hub_standin import FakeHub, closed_port, hub_env
from preftools.inputs.contract import DATASETS, DATASETS_BY_KEY
from preftools.inputs.fetch import CONVERT_REF, schema_problems

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARD = "data/train-00000-of-00001.parquet"
TIMEOUT = 60  # per subprocess; each takes ~1-2 s


def parquet_bytes(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def contract_files(schema: pa.Schema) -> dict[str, bytes]:
    # An empty table of the contract schema, a card without `configs:` (downloaded beside the data)
    # and a .gitattributes (not a data file: never downloaded).
    return {SHARD: parquet_bytes(schema.empty_table()), "README.md": b"# card\n", ".gitattributes": b"*.parquet filter=lfs\n"}


def _sample(t: pa.DataType):
    if pa.types.is_struct(t):
        return {t.field(i).name: _sample(t.field(i).type) for i in range(t.num_fields)}
    if pa.types.is_list(t):
        return [_sample(t.value_type)]
    if pa.types.is_boolean(t):
        return True
    if pa.types.is_floating(t):
        return 1.5
    return "x"


def json_lines(schema: pa.Schema, drop: tuple[str, ...] = (), rows: int = 2) -> bytes:
    """JSON Lines with every column of ``schema`` but ``drop`` (DuckDB needs rows to infer columns)."""
    row = {f.name: _sample(f.type) for f in schema if f.name not in drop}
    return "".join(json.dumps(row) + "\n" for _ in range(rows)).encode()


def run_fetch(tmp_path: Path, endpoint: str, *args: str, **env_extra: str) -> subprocess.CompletedProcess:
    env = hub_env(endpoint, tmp_path / "hf_home", unset=("RAW_DATA_DIR", "TRANSFORMERS_OFFLINE"), **env_extra)
    return subprocess.run(
        [sys.executable, "-m", "preftools.fetch", *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=TIMEOUT,
    )


def error_lines(proc: subprocess.CompletedProcess) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.startswith("fetch: error:")]


def assert_clean_failure(proc: subprocess.CompletedProcess) -> list[str]:
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = error_lines(proc)
    assert lines, proc.stderr
    return lines


def test_fetch_all_five_into_hub_layout(hub, tmp_path):
    for ds in DATASETS:
        hub.repos[ds.hub_id] = contract_files(ds.schema)
    raw = tmp_path / "raw"

    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(raw))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    for ds in DATASETS:
        shard = raw / ds.hub_id / SHARD
        assert shard.is_file(), shard
        assert shard.read_bytes() == hub.repos[ds.hub_id][SHARD]
        assert pq.read_schema(shard).equals(ds.schema)
        # The data files and the card (the build resolves the local copy by it); nothing else.
        assert (raw / ds.hub_id / "README.md").read_bytes() == hub.repos[ds.hub_id]["README.md"]
        assert not (raw / ds.hub_id / ".gitattributes").exists()
        assert ds.data_files(raw) == [shard]
    assert f"RAW_DATA_DIR={raw} make build" in proc.stdout
    assert f"RAW_DATA_DIR={raw} dbt build" in proc.stdout
    assert "refs/convert/parquet" not in proc.stdout + proc.stderr  # every repo has its own data files
    downloads = [p for m, p in hub.requests if m == "GET" and "/resolve/" in p]
    assert sorted(downloads) == sorted(f"/datasets/{ds.hub_id}/resolve/{hub.sha(ds.hub_id)}/{name}"
                                       for ds in DATASETS for name in (SHARD, "README.md"))

    # The lock file beside the data: each dataset's commit and files (name, size, sha256).
    lock = json.loads((raw / "fetch.lock.json").read_text())
    assert list(lock["datasets"]) == [ds.key for ds in DATASETS]
    for ds in DATASETS:
        entry = lock["datasets"][ds.key]
        body = hub.repos[ds.hub_id][SHARD]
        card = hub.repos[ds.hub_id]["README.md"]
        assert entry == {
            "hub_id": ds.hub_id,
            "requested_revision": "main",
            "requested_commit": hub.sha(ds.hub_id),
            "source": "repo",
            "revision": hub.sha(ds.hub_id),
            "endpoint": hub.endpoint,
            "card": {"path": "README.md", "size": len(card), "sha256": hashlib.sha256(card).hexdigest()},
            "files": [{"path": SHARD, "size": len(body), "sha256": hashlib.sha256(body).hexdigest()}],
        }
    assert lock["lock_version"] == 2
    assert f"--lock {raw / 'fetch.lock.json'}" in proc.stdout

    # A second run finds the files up to date (same commit) and downloads nothing.
    hub.requests.clear()
    again = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(raw))
    assert again.returncode == 0, again.stderr
    assert not [p for m, p in hub.requests if m == "GET" and "/resolve/" in p]


def test_raw_data_dir_from_env_and_subset(hub, tmp_path):
    for ds in DATASETS:
        hub.repos[ds.hub_id] = contract_files(ds.schema)
    raw = tmp_path / "from_env"

    proc = run_fetch(tmp_path, hub.endpoint, "--datasets", "rever_rubric,ultrafeedback", RAW_DATA_DIR=str(raw))
    assert proc.returncode == 0, proc.stderr
    assert (raw / "OpenRubrics/ReVeR-Traces-Rubric" / SHARD).is_file()
    assert (raw / "argilla/ultrafeedback-binarized-curation" / SHARD).is_file()
    assert not (raw / "OpenRubrics" / "ReVeR-Traces-Judge").exists()
    # Only the ultrafeedback group is complete: the hint restricts the build to it.
    assert f"RAW_DATA_DIR={raw} dbt build --vars '{{datasets: [ultrafeedback]}}'" in proc.stdout, proc.stdout
    assert "rever needs rever_judge + rever_rubric" in proc.stdout


def test_unreachable_hub(tmp_path):
    proc = run_fetch(tmp_path, f"http://127.0.0.1:{closed_port()}", "--raw-data-dir", str(tmp_path / "raw"))
    lines = assert_clean_failure(proc)
    first = DATASETS[0]
    assert first.hub_id in lines[0] and "cannot reach" in lines[0], lines
    assert len(lines) <= 2, lines  # the problem, then "stopped; not attempted: ..."


def test_offline_mode(hub, tmp_path):
    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(tmp_path / "raw"), HF_HUB_OFFLINE="1")
    lines = assert_clean_failure(proc)
    assert "HF_HUB_OFFLINE" in lines[0], lines
    assert not hub.requests


def test_missing_repo_404(hub, tmp_path):
    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(tmp_path / "raw"), "--datasets", "code_ultrafeedback")
    (line,) = assert_clean_failure(proc)
    assert "coseal/CodeUltraFeedback" in line and "not found" in line, line
    assert "hf auth login" in line and "huggingface-cli login" in line, line


def test_gated_repo(hub, tmp_path):
    ds = DATASETS_BY_KEY["ultrafeedback"]
    hub.gated.add(ds.hub_id)
    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(tmp_path / "raw"), "--datasets", "ultrafeedback")
    (line,) = assert_clean_failure(proc)
    assert ds.hub_id in line and "gated" in line and "login" in line, line


def test_schema_mismatch_names_the_column(hub, tmp_path):
    ds = DATASETS_BY_KEY["code_ultrafeedback_standard"]
    bad = ds.schema.set(ds.schema.get_field_index("chosen_score"), pa.field("chosen_score", pa.float64()))
    bad = bad.remove(bad.get_field_index("rejected"))
    hub.repos[ds.hub_id] = {SHARD: parquet_bytes(bad.empty_table())}
    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(tmp_path / "raw"), "--datasets", ds.key)
    lines = assert_clean_failure(proc)
    assert len(lines) == 2, lines
    assert any("chosen_score" in l and "double" in l and "string" in l for l in lines), lines
    assert any("rejected is missing" in l for l in lines), lines
    assert (tmp_path / "raw" / ds.hub_id / SHARD).is_file()  # downloaded, then rejected


def test_leftover_shard_is_reported(hub, tmp_path):
    ds = DATASETS_BY_KEY["rever_judge"]
    hub.repos[ds.hub_id] = contract_files(ds.schema)
    stale = tmp_path / "raw" / ds.hub_id / "data" / "train-00000-of-00002.parquet"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(hub.repos[ds.hub_id][SHARD])
    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(tmp_path / "raw"), "--datasets", ds.key)
    (line,) = assert_clean_failure(proc)
    assert str(stale) in line and "left over" in line, line


def test_unwritable_raw_data_dir(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    target = blocker / "raw"
    proc = run_fetch(tmp_path, f"http://127.0.0.1:{closed_port()}", "--raw-data-dir", str(target))
    (line,) = assert_clean_failure(proc)
    assert str(target) in line or str(blocker) in line, line


def test_help_mentions_direct_hub_reads(tmp_path):
    proc = run_fetch(tmp_path, "http://127.0.0.1:9", "--help")
    assert proc.returncode == 0
    assert "RAW_DATA_DIR=hf://datasets" in proc.stdout and "httpfs" in proc.stdout
    assert "refs/convert/parquet" in proc.stdout and "README.md" in proc.stdout


def test_schema_comparison_is_lenient_where_duckdb_is():
    expected = pa.schema([("a", pa.list_(pa.struct([("x", pa.string()), ("y", pa.float64())]))), ("b", pa.string())])
    same_ish = pa.schema([
        ("b", pa.large_string()),
        ("a", pa.large_list(pa.struct([("y", pa.float64()), ("x", pa.dictionary(pa.int32(), pa.string())), ("z", pa.int8())]))),
        ("extra", pa.int64()),
    ])
    assert schema_problems(expected, same_ish) == []
    wrong = pa.schema([("a", pa.list_(pa.struct([("x", pa.int64())]))), ("b", pa.string())])
    assert schema_problems(expected, wrong) == [
        "column a[].x has type int64, expected string",
        "column a[].y is missing (expected double)",
    ]


@pytest.mark.parametrize(
    "make_exc, expected",
    [
        (lambda: PermissionError(errno.EACCES, "Permission denied", "/raw/org/ds/data/x.parquet"),
         ["cannot write /raw/org/ds/data/x.parquet", "Permission denied"]),
        (lambda: OSError(errno.ENOSPC, "No space left on device"), ["no space left", "/raw/org/ds"]),
        (lambda: OSError(errno.EROFS, "Read-only file system", "/raw/org"), ["cannot write /raw/org"]),
        (lambda: _wrapped_connect_error(), ["cannot reach the Hugging Face Hub"]),
        (lambda: _http_error(403), ["HTTP 403", "login"]),
        (lambda: _http_error(401), ["HTTP 401", "HF_TOKEN"]),
        (lambda: _http_error(503), ["HTTP 503", "try again later"]),
    ],
)
def test_error_messages_are_one_line(make_exc, expected):
    from preftools.inputs.fetch import describe_error

    ds = DATASETS_BY_KEY["rever_judge"]
    err = describe_error(make_exc(), ds, "main", Path("/raw/org/ds"))
    message = str(err)
    assert "\n" not in message and ds.hub_id in message, message
    for needle in expected:
        assert needle in message, message


def _http_error(status: int):
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError

    url = "https://huggingface.co/api/datasets/OpenRubrics/ReVeR-Traces-Judge/revision/main"
    response = httpx2.Response(status, request=httpx2.Request("GET", url))
    return HfHubHTTPError(f"{status} Client Error.\n\nsome\nmultiline text", response=response)


def _wrapped_connect_error():
    # What snapshot_download raises when listing the repo fails and nothing usable is on disk.
    import httpx2
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        try:
            raise httpx2.ConnectError("[Errno 111] Connection refused")
        except httpx2.ConnectError as cause:
            raise LocalEntryNotFoundError("An error happened...\nPlease check your internet connection") from cause
    except LocalEntryNotFoundError as exc:
        return exc


# --------------------------------------------------------------------------------------------
# provenance: fetch.lock.json, --revision DATASET=REV, --lock FILE


def _read_lock(raw: Path) -> dict:
    return json.loads((raw / "fetch.lock.json").read_text())


def _second_version(schema: pa.Schema) -> dict[str, bytes]:
    # Same contract, other bytes: what a new upstream commit looks like to the fetcher.
    return {SHARD: parquet_bytes(schema.empty_table().replace_schema_metadata({"version": "2"}))}


def test_pin_a_dataset_and_reproduce_a_lock(hub, tmp_path):
    uf, rub = DATASETS_BY_KEY["ultrafeedback"], DATASETS_BY_KEY["rever_rubric"]
    for ds in (uf, rub):
        hub.repos[ds.hub_id] = contract_files(ds.schema)
    old_uf, old_rub = hub.sha(uf.hub_id), hub.sha(rub.hub_id)
    v1_uf = hub.repos[uf.hub_id][SHARD]
    raw = tmp_path / "raw"
    keys = ("--datasets", "ultrafeedback,rever_rubric")

    first = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(raw), *keys)
    assert first.returncode == 0, first.stderr
    saved_lock = tmp_path / "saved.lock.json"
    saved_lock.write_text((raw / "fetch.lock.json").read_text())

    # Upstream moves on: main now has other bytes for both.
    new_uf, new_rub = hub.push(uf.hub_id, _second_version(uf.schema)), hub.push(rub.hub_id, _second_version(rub.schema))
    latest = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(raw), *keys)
    assert latest.returncode == 0, latest.stderr
    assert (raw / uf.hub_id / SHARD).read_bytes() == hub.repos[uf.hub_id][SHARD]
    lock = _read_lock(raw)["datasets"]
    assert (lock["ultrafeedback"]["revision"], lock["rever_rubric"]["revision"]) == (new_uf, new_rub)

    # --revision KEY=SHA pins one dataset; the other follows main.
    pinned = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(raw), *keys, "--revision", f"ultrafeedback={old_uf}")
    assert pinned.returncode == 0, pinned.stderr
    assert (raw / uf.hub_id / SHARD).read_bytes() == v1_uf
    lock = _read_lock(raw)["datasets"]
    assert lock["ultrafeedback"]["revision"] == old_uf and lock["ultrafeedback"]["requested_revision"] == old_uf
    assert lock["rever_rubric"]["revision"] == new_rub

    # --lock reproduces the first fetch exactly (every sha256 checked), into another folder too.
    again = tmp_path / "again"
    reproduced = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(again), "--lock", str(saved_lock))
    assert reproduced.returncode == 0, reproduced.stderr
    assert {k: e["revision"] for k, e in _read_lock(again)["datasets"].items()} == \
        {"ultrafeedback": old_uf, "rever_rubric": old_rub}
    assert _read_lock(again)["datasets"]["ultrafeedback"]["files"] == \
        json.loads(saved_lock.read_text())["datasets"]["ultrafeedback"]["files"]
    assert not (again / "OpenRubrics" / "ReVeR-Traces-Judge").exists()  # only what the lock lists


def test_lock_mismatch_and_corrupt_download_are_reported(hub, tmp_path):
    ds = DATASETS_BY_KEY["rever_judge"]
    hub.repos[ds.hub_id] = contract_files(ds.schema)
    raw = tmp_path / "raw"
    assert run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(raw), "--datasets", ds.key).returncode == 0
    tampered = _read_lock(raw)
    tampered["datasets"][ds.key]["files"][0]["sha256"] = "0" * 64
    lock_file = tmp_path / "tampered.json"
    lock_file.write_text(json.dumps(tampered))
    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(tmp_path / "other"), "--lock", str(lock_file))
    (line,) = assert_clean_failure(proc)
    assert ds.hub_id in line and SHARD in line and "the lock file says" in line, line

    hub.bad_lfs.add(ds.hub_id)  # the Hub's LFS sha256 disagrees with the bytes served
    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(tmp_path / "third"), "--datasets", ds.key)
    (line,) = assert_clean_failure(proc)
    assert "does not match the Hub's size/sha256" in line, line


def test_unknown_revision(hub, tmp_path):
    ds = DATASETS_BY_KEY["ultrafeedback"]
    hub.repos[ds.hub_id] = contract_files(ds.schema)
    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(tmp_path / "raw"), "--datasets", ds.key,
                     "--revision", f"ultrafeedback={'f' * 40}")
    (line,) = assert_clean_failure(proc)
    assert ds.hub_id in line and f"revision {'f' * 40!r} not found" in line, line
    assert not (tmp_path / "raw" / "fetch.lock.json").exists()  # nothing fetched, nothing recorded


@pytest.mark.parametrize("args, needle", [
    (["--revision", "nope=abc"], "unknown dataset key 'nope'"),
    (["--revision", "ultrafeedback="], "must not be empty"),
    (["--datasets", "rever_judge", "--revision", "ultrafeedback=abc"], "--datasets does not select"),
    (["--lock", "missing.json"], "does not exist"),
    (["--lock", "x.json", "--revision", "main"], "cannot be combined"),
])
def test_revision_and_lock_arguments(tmp_path, args, needle):
    proc = run_fetch(tmp_path, "http://127.0.0.1:9", "--raw-data-dir", str(tmp_path / "raw"), *args)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert needle in proc.stderr, proc.stderr


# --------------------------------------------------------------------------------------------
# any layout: the data files the Hub reads (card configs or default patterns, Parquet, JSON or
# CSV), else the Hub's Parquet conversion (refs/convert/parquet)

CARD_WITH_CONFIGS = b"""---
configs:
- config_name: helpful-base
  data_files:
  - split: train
    path: helpful-base/train.jsonl.gz
---
# A dataset whose card names its data files
"""


def _record(body: bytes, path: str) -> dict:
    return {"path": path, "size": len(body), "sha256": hashlib.sha256(body).hexdigest()}


def _fetched_paths(hub: FakeHub, repo_id: str) -> set[str]:
    """Repo paths the fetcher asked the Hub for (HEAD or GET), at any revision."""
    prefix = f"/datasets/{repo_id}/resolve/"
    return {unquote(p[len(prefix):].split("/", 1)[1]) for _, p in hub.requests if p.startswith(prefix)}


def test_json_only_dataset(hub, tmp_path):
    ds = DATASETS_BY_KEY["rever_rubric"]
    rows = json_lines(ds.schema)
    hub.repos[ds.hub_id] = {"train.jsonl": rows, ".gitattributes": b"*.gz filter=lfs\n"}  # no card
    raw = tmp_path / "raw"

    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(raw), "--datasets", ds.key)
    assert proc.returncode == 0, proc.stderr
    assert (raw / ds.hub_id / "train.jsonl").read_bytes() == rows
    assert ds.data_files(raw) == [raw / ds.hub_id / "train.jsonl"]
    assert not (raw / ds.hub_id / "README.md").exists() and not (raw / ds.hub_id / ".gitattributes").exists()
    entry = _read_lock(raw)["datasets"][ds.key]
    assert entry["files"] == [_record(rows, "train.jsonl")] and entry["card"] is None
    assert entry["source"] == "repo" and entry["revision"] == entry["requested_commit"] == hub.sha(ds.hub_id)
    assert not any("refs%2Fconvert" in p for _, p in hub.requests)  # main has data: no fallback


def test_json_schema_mismatch_names_the_column(hub, tmp_path):
    ds = DATASETS_BY_KEY["rever_judge"]
    hub.repos[ds.hub_id] = {"train.jsonl": json_lines(ds.schema, drop=("candidate",))}
    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(tmp_path / "raw"), "--datasets", ds.key)
    (line,) = assert_clean_failure(proc)
    assert ds.hub_id in line and "column candidate is missing" in line and "train.jsonl" in line, line


def test_card_configs_decide_the_files(hub, tmp_path):
    ds = DATASETS_BY_KEY["code_ultrafeedback_standard"]
    data = gzip.compress(json_lines(ds.schema), mtime=0)
    decoys = {"decoy/train.jsonl": json_lines(ds.schema), SHARD: parquet_bytes(ds.schema.empty_table())}
    hub.repos[ds.hub_id] = {"README.md": CARD_WITH_CONFIGS, "helpful-base/train.jsonl.gz": data, **decoys}
    raw = tmp_path / "raw"

    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(raw), "--datasets", ds.key)
    assert proc.returncode == 0, proc.stderr
    repo = raw / ds.hub_id
    assert (repo / "helpful-base/train.jsonl.gz").read_bytes() == data
    assert (repo / "README.md").read_bytes() == CARD_WITH_CONFIGS
    for decoy in decoys:  # outside the card's config: neither downloaded nor asked for
        assert not (repo / decoy).exists(), decoy
    assert _fetched_paths(hub, ds.hub_id) == {"README.md", "helpful-base/train.jsonl.gz"}
    assert ds.data_files(raw) == [repo / "helpful-base/train.jsonl.gz"]  # the local copy resolves the same way
    entry = _read_lock(raw)["datasets"][ds.key]
    assert entry["files"] == [_record(data, "helpful-base/train.jsonl.gz")]
    assert entry["card"] == _record(CARD_WITH_CONFIGS, "README.md")


def _conversion(ds, version: str = "1") -> dict[str, bytes]:
    """What the Hub's conversion branch holds: <config>/<split>/NNNN.parquet per config."""
    table = ds.schema.empty_table().replace_schema_metadata({"version": version})
    return {
        ".gitattributes": b"*.parquet filter=lfs\n",
        "default/train/0000.parquet": parquet_bytes(table),
        "default/train/0001.parquet": parquet_bytes(table.replace_schema_metadata({"shard": "1"})),
        "other/train/0000.parquet": parquet_bytes(table),  # not the default config: not fetched
    }


def test_conversion_branch_when_the_repo_has_no_readable_data(hub, tmp_path):
    ds = DATASETS_BY_KEY["rever_rubric"]
    hub.repos[ds.hub_id] = {"README.md": b"---\nlicense: mit\n---\n# ReVeR\n", "train.txt": b"id source\na b\n"}
    conversion = _conversion(ds)
    conv_sha = hub.set_ref(ds.hub_id, CONVERT_REF, conversion)
    main_sha = hub.sha(ds.hub_id)
    raw = tmp_path / "raw"
    expected_files = ["default/train/0000.parquet", "default/train/0001.parquet"]

    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(raw), "--datasets", ds.key)
    assert proc.returncode == 0, proc.stderr
    note = (f"{ds.hub_id}: no Parquet, JSON or CSV data files at main ({main_sha[:12]}); "
            f"using the Hub's Parquet conversion refs/convert/parquet ({conv_sha[:12]})")
    assert note in proc.stdout.splitlines(), proc.stdout
    # huggingface_hub names the ref as one URL-encoded path segment.
    assert ("GET", f"/api/datasets/{ds.hub_id}/revision/refs%2Fconvert%2Fparquet") in hub.requests
    repo = raw / ds.hub_id
    for path in expected_files:
        assert (repo / path).read_bytes() == conversion[path], path
    assert not (repo / "other").exists() and not (repo / "train.txt").exists()
    assert not (repo / "README.md").exists()  # main's card does not describe the converted files
    assert ds.data_files(raw) == [repo / p for p in expected_files]
    entry = _read_lock(raw)["datasets"][ds.key]
    assert (entry["requested_revision"], entry["requested_commit"], entry["source"], entry["revision"]) == \
        ("main", main_sha, "refs/convert/parquet", conv_sha)
    assert entry["card"] is None and entry["files"] == [_record(conversion[p], p) for p in expected_files]
    saved_lock = tmp_path / "saved.lock.json"
    saved_lock.write_text((raw / "fetch.lock.json").read_text())

    # Upstream moves on (main and its conversion); --lock still downloads the recorded conversion commit.
    hub.push(ds.hub_id, {"train.txt": b"id source\nc d\n"})
    hub.set_ref(ds.hub_id, CONVERT_REF, _conversion(ds, version="2"))
    again = tmp_path / "again"
    reproduced = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(again), "--lock", str(saved_lock))
    assert reproduced.returncode == 0, reproduced.stderr
    assert (f"{ds.hub_id}: the lock file records files of the Hub's Parquet conversion refs/convert/parquet "
            f"({conv_sha[:12]}); fetching them at that commit") in reproduced.stdout.splitlines(), reproduced.stdout
    for path in expected_files:
        assert (again / ds.hub_id / path).read_bytes() == conversion[path], path
    assert _read_lock(again)["datasets"][ds.key] == entry


def test_no_data_and_no_conversion(hub, tmp_path):
    ds = DATASETS_BY_KEY["rever_judge"]
    hub.repos[ds.hub_id] = {"traces.tar": b"not readable by the build"}
    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(tmp_path / "raw"), "--datasets", ds.key)
    (line,) = assert_clean_failure(proc)
    assert f"no Parquet, JSON or CSV data files at main ({hub.sha(ds.hub_id)[:12]})" in line, line
    assert "traces.tar" in line and "refs/convert/parquet does not exist" in line, line


def test_refetch_after_a_layout_switch_removes_stale_files(hub, tmp_path):
    ds = DATASETS_BY_KEY["rever_judge"]
    hub.repos[ds.hub_id] = contract_files(ds.schema)
    raw, repo = tmp_path / "raw", tmp_path / "raw" / ds.hub_id
    assert run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(raw), "--datasets", ds.key).returncode == 0
    assert (repo / SHARD).is_file() and (repo / "README.md").is_file()

    # Upstream switches to JSON Lines at the root, without a card: the shard and the card go.
    rows = json_lines(ds.schema)
    sha = hub.push(ds.hub_id, {"train.jsonl": rows})
    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(raw), "--datasets", ds.key)
    assert proc.returncode == 0, proc.stderr
    assert (f"{ds.hub_id}: removed 2 file(s) of the earlier fetch that this one (main at {sha[:12]}) does not "
            f"include: {SHARD}, README.md") in proc.stdout.splitlines(), proc.stdout
    assert not (repo / "data").exists() and not (repo / "README.md").exists()
    assert ds.data_files(raw) == [repo / "train.jsonl"]
    assert [f["path"] for f in _read_lock(raw)["datasets"][ds.key]["files"]] == ["train.jsonl"]

    # Then to plain text only, which the build does not read: the conversion branch; train.jsonl goes.
    hub.push(ds.hub_id, {"train.txt": b"id\n1\n"})
    conv_sha = hub.set_ref(ds.hub_id, CONVERT_REF, _conversion(ds))
    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(raw), "--datasets", ds.key)
    assert proc.returncode == 0, proc.stderr
    assert (f"{ds.hub_id}: removed 1 file(s) of the earlier fetch that this one (refs/convert/parquet at "
            f"{conv_sha[:12]}) does not include: train.jsonl") in proc.stdout.splitlines(), proc.stdout
    assert ds.data_files(raw) == [repo / "default/train/0000.parquet", repo / "default/train/0001.parquet"]
    assert "via refs/convert/parquet" in proc.stdout


def test_a_version_1_lock_is_still_read(hub, tmp_path):
    ds = DATASETS_BY_KEY["ultrafeedback"]
    hub.repos[ds.hub_id] = contract_files(ds.schema)
    body = hub.repos[ds.hub_id][SHARD]
    v1 = {"lock_version": 1, "datasets": {ds.key: {
        "hub_id": ds.hub_id, "requested_revision": "main", "revision": hub.sha(ds.hub_id),
        "endpoint": hub.endpoint, "files": [_record(body, SHARD)],
    }}}
    lock_file = tmp_path / "v1.lock.json"
    lock_file.write_text(json.dumps(v1))
    raw = tmp_path / "raw"
    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(raw), "--lock", str(lock_file))
    assert proc.returncode == 0, proc.stderr
    assert (raw / ds.hub_id / SHARD).read_bytes() == body
    assert not (raw / ds.hub_id / "README.md").exists()  # a version-1 lock records no card
    lock = _read_lock(raw)
    assert lock["lock_version"] == 2
    assert lock["datasets"][ds.key] == {**v1["datasets"][ds.key], "requested_commit": hub.sha(ds.hub_id),
                                         "source": "repo", "card": None}


@pytest.mark.parametrize("change, needle", [
    (lambda lock: lock.update(lock_version=99), "lock_version 99"),
    (lambda lock: lock["datasets"]["ultrafeedback"]["files"][0].update(path="../../escape.parquet"), "not a relative path"),
    (lambda lock: lock["datasets"]["ultrafeedback"].update(source="refs/pr/1"), "\"source\" 'refs/pr/1'"),
])
def test_bad_lock_files(tmp_path, change, needle):
    lock = {"lock_version": 2, "datasets": {"ultrafeedback": {
        "hub_id": DATASETS_BY_KEY["ultrafeedback"].hub_id, "requested_revision": "main", "revision": "a" * 40,
        "files": [{"path": SHARD, "size": 1, "sha256": "0" * 64}],
    }}}
    change(lock)
    lock_file = tmp_path / "bad.json"
    lock_file.write_text(json.dumps(lock))
    proc = run_fetch(tmp_path, "http://127.0.0.1:9", "--raw-data-dir", str(tmp_path / "raw"), "--lock", str(lock_file))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert needle in proc.stderr and str(lock_file) in proc.stderr, proc.stderr


# --------------------------------------------------------------------------------------------
# extra datasets (the dbt var extra_datasets): the entries of examples/extra_datasets.yml, one of
# each shape and layout, on the generator's stand-ins of their Hub repos

EXAMPLES = REPO_ROOT / "examples" / "extra_datasets.yml"
EXTRA_NAMES = ("h4_ultrafeedback", "argilla_ultrafeedback_cleaned", "rlhflow_ultrafeedback", "openbmb_ultrafeedback",
               "hh_helpful")


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory) -> Path:
    """The generator's stand-ins of the five extra datasets (every file of each repo, cards too), small."""
    from preftools.generate import generate

    out = tmp_path_factory.mktemp("stand_ins")
    generate(out, seed=7, scale=0.0001, progress=False, text_length=0.25, datasets=list(EXTRA_NAMES))
    return out


def _entries(vars_arg: str | Path = EXAMPLES) -> dict:
    from preftools.inputs import registry

    return {e.name: e for e in registry.extra_datasets(registry.load_vars(str(vars_arg)))}


def host_repo(hub: FakeHub, hub_id: str, repo: Path) -> None:
    """Every file of the local copy ``repo`` as the Hub repo ``hub_id`` (Parquet stored in LFS)."""
    hub.repos[hub_id] = {p.relative_to(repo).as_posix(): p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    hub.repos[hub_id][".gitattributes"] = b"*.parquet filter=lfs\n"


def _host_stand_ins(hub: FakeHub, stand_ins: Path) -> None:
    for entry in _entries().values():
        host_repo(hub, entry.hub_id, entry.repo_dir(stand_ins))


def _expected_paths(entry, stand_ins: Path) -> list[str]:
    """The entry's files in the full repo, by the registry's rule (its config and splits)."""
    from preftools.inputs import registry

    return [p.relative_to(entry.repo_dir(stand_ins)).as_posix() for p in registry.data_files(entry, stand_ins)]


def _error_lines(proc: subprocess.CompletedProcess) -> list[str]:
    """The error lines of a failed run: the fetcher's, or argparse's for a bad argument."""
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    return [line for line in proc.stderr.splitlines() if "error:" in line]


def test_fetch_extra_datasets_of_each_shape(hub, stand_ins, tmp_path):
    for ds in DATASETS:
        hub.repos[ds.hub_id] = contract_files(ds.schema)
    _host_stand_ins(hub, stand_ins)
    entries = _entries()
    raw = tmp_path / "raw"

    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(raw), "--vars", str(EXAMPLES))
    assert proc.returncode == 0, proc.stderr
    from preftools.inputs import registry

    expected = {name: _expected_paths(entry, stand_ins) for name, entry in entries.items()}
    # the entry's config and splits only: H4's train_prefs (not train_sft, test_prefs), hh's helpful-base
    assert expected["h4_ultrafeedback"] == ["data/train_prefs-00000-of-00001.parquet"]
    assert expected["hh_helpful"] == ["helpful-base/train.jsonl.gz", "helpful-base/test.jsonl.gz"]
    assert len(expected["openbmb_ultrafeedback"]) == 6
    for name, entry in entries.items():
        repo = entry.repo_dir(raw)
        assert _fetched_paths(hub, entry.hub_id) == {*expected[name], "README.md"}, name
        assert registry.data_files(entry, raw) == [repo / p for p in expected[name]], name
        for path in expected[name] + ["README.md"]:
            assert (repo / path).read_bytes() == hub.repos[entry.hub_id][path], (name, path)
    assert not (raw / "Anthropic/hh-rlhf/harmless-base").exists()
    assert not (raw / "HuggingFaceH4/ultrafeedback_binarized/data/train_sft-00000-of-00001.parquet").exists()
    lock = _read_lock(raw)["datasets"]
    assert list(lock) == [ds.key for ds in DATASETS] + list(EXTRA_NAMES)
    assert (lock["hh_helpful"]["config"], lock["hh_helpful"]["splits"]) == ("helpful-base", None)
    assert (lock["h4_ultrafeedback"]["config"], lock["h4_ultrafeedback"]["splits"]) == (None, ["train_prefs"])
    assert [f["path"] for f in lock["openbmb_ultrafeedback"]["files"]] == expected["openbmb_ultrafeedback"]
    assert f'dbt build --vars "$(cat {EXAMPLES})"' in proc.stdout, proc.stdout

    # A later fetch without the vars keeps the extra datasets' lock entries while their files are unchanged.
    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(raw), "--datasets", "rever_judge")
    assert proc.returncode == 0, proc.stderr
    assert _read_lock(raw)["datasets"] == lock

    # --lock reproduces them (with the vars that register them) ...
    again = tmp_path / "again"
    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(again), "--lock", str(raw / "fetch.lock.json"),
                     "--vars", str(EXAMPLES))
    assert proc.returncode == 0, proc.stderr
    assert _read_lock(again)["datasets"] == lock
    # ... and says which vars are missing without them
    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(tmp_path / "third"), "--lock",
                     str(raw / "fetch.lock.json"))
    (line,) = _error_lines(proc)
    assert "h4_ultrafeedback" in line and "not in extra_datasets" in line and "--vars" in line, line


def _one_entry(**change) -> str:
    """--vars YAML with examples/extra_datasets.yml's H4 entry (or hh's for name=hh_helpful) changed."""
    import yaml

    entries = {e["name"]: e for e in yaml.safe_load(EXAMPLES.read_text())["extra_datasets"]}
    entry = dict(entries[change.pop("entry", "h4_ultrafeedback")])
    for key, value in change.items():
        if value is None:
            entry.pop(key, None)
        else:
            entry[key] = value
    return yaml.safe_dump({"extra_datasets": [entry]}, default_flow_style=True, width=10_000).strip()


@pytest.mark.parametrize("vars_yaml, needles", [
    (_one_entry(shape="pairs"), ["extra_datasets entry 1 (h4_ultrafeedback)", "`shape`", "preference, rated_completions"]),
    (_one_entry(hub_id="ultrafeedback_binarized"), ["`hub_id`", "org/name"]),
    (_one_entry(name="ultrafeedback"), ["`name`", "built-in"]),
    (_one_entry(columns={"chosen": "chosen"}), ["`columns` has no rejected"]),
    ("[1, 2]", ["--vars", "YAML mapping"]),
    ("{eval_sets: [{name: bench, hub_id: bench, fields: [question]}]}", ["eval_sets entry 1 (bench)", "`hub_id`"]),
])
def test_a_wrong_entry_is_one_line(tmp_path, vars_yaml, needles):
    proc = run_fetch(tmp_path, "http://127.0.0.1:9", "--raw-data-dir", str(tmp_path / "raw"), "--vars", vars_yaml)
    (line,) = _error_lines(proc)
    assert all(n in line for n in needles), line


@pytest.mark.parametrize("change, needles", [
    ({"columns": {"prompt": "prompt", "chosen": "chosen", "rejected": "rejected", "chosen_score": "score_of_chosen",
                  "rejected_score": "score_rejected"}},
     ["HuggingFaceH4/ultrafeedback_binarized (h4_ultrafeedback)", "column score_of_chosen is missing",
      "maps chosen_score to it", "train_prefs-00000-of-00001.parquet"]),
    ({"splits": ["train_prefs", "train_gen"]}, ["has no split train_gen", "its splits: test_prefs, train_prefs, train_sft",
                                                "fix `splits`"]),
    ({"entry": "hh_helpful", "config": "helpful-online"}, ["Anthropic/hh-rlhf (hh_helpful)", "folder helpful-online/",
                                                           "fix `config`"]),
    ({"config": "sft"}, ["config 'sft' is not in the card's configs (default)", "fix `config`"]),
    ({"entry": "openbmb_ultrafeedback", "columns": {"prompt": "prompt", "completions": "completions",
                                                    "response": "response", "rating": ["annotations.honesty.Rating"]}},
     ["column prompt is missing", "6 of 6 files"]),
])
def test_an_entry_that_does_not_fit_its_dataset_is_one_line(hub, stand_ins, tmp_path, change, needles):
    _host_stand_ins(hub, stand_ins)
    vars_yaml = _one_entry(**change)
    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(tmp_path / "raw"), "--vars", vars_yaml,
                     "--datasets", yaml_name(vars_yaml))
    (line,) = _error_lines(proc)
    assert all(n in line for n in needles), line


def yaml_name(vars_yaml: str) -> str:
    import yaml

    return yaml.safe_load(vars_yaml)["extra_datasets"][0]["name"]


def test_extra_dataset_refetch_removes_stale_files_and_uses_the_conversion(hub, stand_ins, tmp_path):
    _host_stand_ins(hub, stand_ins)
    h4 = _entries()["h4_ultrafeedback"]
    raw, repo = tmp_path / "raw", h4.repo_dir(tmp_path / "raw")
    train, test = "data/train_prefs-00000-of-00001.parquet", "data/test_prefs-00000-of-00001.parquet"
    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(raw), "--vars", _one_entry(), "--datasets", h4.name)
    assert proc.returncode == 0, proc.stderr
    assert (repo / train).is_file() and not (repo / test).exists()

    # Other splits in the entry: the earlier fetch's file goes.
    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(raw), "--vars", _one_entry(splits=["test_prefs"]),
                     "--datasets", h4.name)
    assert proc.returncode == 0, proc.stderr
    assert f"{h4.hub_id}: removed 1 file(s) of the earlier fetch" in proc.stdout and train in proc.stdout, proc.stdout
    assert not (repo / train).exists() and (repo / test).is_file()

    # A repo without Parquet, JSON or CSV data: the Hub's Parquet conversion, as for the built-in datasets.
    hh = _entries()["hh_helpful"]
    rows = pa.table({"chosen": ["\n\nHuman: hi\n\nAssistant: hello"], "rejected": ["\n\nHuman: hi\n\nAssistant: no"]})
    hub.repos[hh.hub_id] = {"README.md": b"---\nlicense: mit\n---\n", "helpful-base/train.txt": b"chosen rejected\n"}
    conv_sha = hub.set_ref(hh.hub_id, CONVERT_REF, {"default/train/0000.parquet": parquet_bytes(rows)})
    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(raw), "--datasets", hh.name,
                     "--vars", _one_entry(entry="hh_helpful", config=None))
    assert proc.returncode == 0, proc.stderr
    assert f"using the Hub's Parquet conversion refs/convert/parquet ({conv_sha[:12]})" in proc.stdout, proc.stdout
    from preftools.inputs import registry

    hh = _entries(_one_entry(entry="hh_helpful", config=None))["hh_helpful"]
    assert registry.data_files(hh, raw) == [hh.repo_dir(raw) / "default/train/0000.parquet"]
    assert _read_lock(raw)["datasets"]["hh_helpful"]["source"] == CONVERT_REF


def test_registry_vars_and_files(tmp_path):
    """The registry reads the vars as dbt does (dbt_project.yml, overridden key by key by --vars, YAML
    text or a file) and picks an entry's files by the Hub's rule with its config (a folder when the
    card declares no configs, as hh-rlhf's) and splits."""
    from preftools.inputs import registry

    project = tmp_path / "project"
    project.mkdir()
    (project / "dbt_project.yml").write_text("name: x\nvars:\n  random_seed: 7\n  extra_datasets: []\n")
    assert registry.load_vars(None, project) == {"random_seed": 7, "extra_datasets": []}
    assert registry.load_vars("{random_seed: 8}", project) == {"random_seed": 8, "extra_datasets": []}
    assert registry.load_vars(str(EXAMPLES), project)["random_seed"] == 7
    assert [e.name for e in registry.extra_datasets(registry.load_vars(str(EXAMPLES), project))] == list(EXTRA_NAMES)
    assert registry.load_vars(None, tmp_path / "no_project") == {}
    with pytest.raises(ValueError, match="used twice"):
        registry.extra_datasets({"extra_datasets": [{"name": "a", "hub_id": "o/a", "shape": "transcript",
                                                     "columns": {"chosen": "c", "rejected": "r"}}] * 2})

    hh = ["README.md", "helpful-base/train.jsonl.gz", "helpful-base/test.jsonl.gz", "harmless-base/train.jsonl.gz"]
    card = "---\nlicense: mit\n---\n"
    assert [f.path for f in registry.resolve_files(hh, card, "helpful-base")] == \
        ["helpful-base/train.jsonl.gz", "helpful-base/test.jsonl.gz"]
    assert [f.path for f in registry.resolve_files(hh, card, "helpful-base", ["test"])] == ["helpful-base/test.jsonl.gz"]
    assert len(registry.resolve_files(hh, card, "default")) == len(registry.resolve_files(hh, card)) == 3
    assert registry.resolve_files(hh, card, "helpful-online") == []
    with_configs = CARD_WITH_CONFIGS.decode()
    assert [f.path for f in registry.resolve_files(hh, with_configs, "helpful-base")] == ["helpful-base/train.jsonl.gz"]


# --------------------------------------------------------------------------------------------
# eval sets (the dbt var eval_sets, docs/decontamination.md): the seven of examples/eval_sets.yml on
# the generator's stand-ins of their Hub repos, one in CSV, and the entry rules the build shares

EVAL_EXAMPLES = REPO_ROOT / "examples" / "eval_sets.yml"


@pytest.fixture(scope="module")
def eval_stand_ins(tmp_path_factory) -> Path:
    """The generator's stand-ins of the seven eval sets (every file of each repo, cards too), small."""
    from preftools.generate import EVAL_SETS, generate

    out = tmp_path_factory.mktemp("eval_stand_ins")
    generate(out, seed=7, scale=0.0001, progress=False, datasets=list(EVAL_SETS))
    return out


def _eval_sets(vars_arg: str | Path = EVAL_EXAMPLES) -> dict:
    from preftools.inputs import registry

    return {e.name: e for e in registry.eval_sets(registry.load_vars(str(vars_arg)))}


def test_fetch_the_eval_sets_of_the_example(hub, eval_stand_ins, tmp_path):
    """`make fetch FETCH_ARGS="--vars examples/eval_sets.yml"`: the five datasets and the seven eval
    sets, each eval set only the files of its config and splits, recorded in the lock under its name."""
    from preftools.inputs import registry

    for ds in DATASETS:
        hub.repos[ds.hub_id] = contract_files(ds.schema)
    evals = _eval_sets()
    for e in evals.values():
        host_repo(hub, e.hub_id, e.repo_dir(eval_stand_ins))
    raw = tmp_path / "raw"

    proc = run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(raw), "--vars", str(EVAL_EXAMPLES))
    assert proc.returncode == 0, proc.stderr
    expected = {name: [f.path for f in registry.local_files(e.repo_dir(eval_stand_ins), e.config, e.splits)]
                for name, e in evals.items()}
    # the entry's config and splits only: TruthfulQA's generation config, GSM8K's main test split
    assert expected["truthfulqa"] == ["generation/validation-00000-of-00001.parquet"]
    assert expected["gsm8k"] == ["main/test-00000-of-00001.parquet"]
    assert expected["ifeval"] == ["ifeval_input_data.jsonl"] and expected["alpaca_eval"] == ["alpaca_eval.json"]
    lock = _read_lock(raw)["datasets"]
    assert list(lock) == [ds.key for ds in DATASETS] + list(evals)
    for name, e in evals.items():
        repo = e.repo_dir(raw)
        assert _fetched_paths(hub, e.hub_id) == {*expected[name], "README.md"}, name
        assert registry.data_files(e, raw) == [repo / p for p in expected[name]], name
        for path in expected[name] + ["README.md"]:
            assert (repo / path).read_bytes() == hub.repos[e.hub_id][path], (name, path)
        entry = lock[name]
        assert (entry["hub_id"], entry["revision"], entry["source"]) == (e.hub_id, hub.sha(e.hub_id), "repo"), name
        assert (entry["config"], entry["splits"]) == (e.config, list(e.splits) if e.splits else None), name
        assert [f["path"] for f in entry["files"]] == expected[name], name
    assert not (raw / "openai/gsm8k/socratic").exists() and not (raw / "truthfulqa/truthful_qa/multiple_choice").exists()
    assert f'dbt build --vars "$(cat {EVAL_EXAMPLES})"' in proc.stdout, proc.stdout


# a header row, a quoted field over two lines, a quote inside a quoted field ("" as in RFC 4180)
CSV_TEST = b'id,question,answer\r\n1,"What is 2+2?\nShow your work.",4\r\n2,"Say ""hi"".",hi\r\n'


def test_an_eval_set_in_csv(hub, tmp_path):
    """A repo whose data files are CSV is fetched as it is (not from the Parquet conversion), only
    the entry's split, and its files are held to the entry's fields."""
    from preftools.inputs.hub_layout import read_table

    test_gz = gzip.compress(CSV_TEST, mtime=0)
    hub.repos["org/csv-bench"] = {"README.md": b"---\nlicense: mit\n---\n", "test.csv.gz": test_gz,
                                  "train.csv": b"id,question,answer\n3,Why?,because\n"}
    raw = tmp_path / "raw"

    def fetch(**entry):
        bench = {"name": "csv_bench", "hub_id": "org/csv-bench", "splits": ["test"], "fields": ["question"], **entry}
        return run_fetch(tmp_path, hub.endpoint, "--raw-data-dir", str(raw), "--datasets", "csv_bench",
                         "--vars", json.dumps({"eval_sets": [bench]}))

    proc = fetch()
    assert proc.returncode == 0, proc.stderr
    repo = raw / "org/csv-bench"
    assert (repo / "test.csv.gz").read_bytes() == test_gz and not (repo / "train.csv").exists()
    assert not any("refs%2Fconvert" in p for _, p in hub.requests)
    entry = _read_lock(raw)["datasets"]["csv_bench"]
    assert entry["files"] == [_record(test_gz, "test.csv.gz")] and entry["source"] == "repo"
    assert (entry["config"], entry["splits"]) == (None, ["test"])
    # read as the build reads it: the header names the columns, every value is text
    assert read_table(repo).to_pylist() == [
        {"id": "1", "question": "What is 2+2?\nShow your work.", "answer": "4"},
        {"id": "2", "question": 'Say "hi".', "answer": "hi"},
    ]

    (line,) = assert_clean_failure(fetch(fields=["prompt"]))
    assert "org/csv-bench (csv_bench)" in line and "column prompt is missing" in line, line
    assert "the eval_sets entry names it in `fields`" in line and "has id, question, answer" in line, line
    assert str(repo / "test.csv.gz") in line and "fix `fields` of the entry" in line, line

    (line,) = assert_clean_failure(fetch(splits=["validation"]))
    assert "has no split validation (its splits: test, train)" in line and "fix `splits` of the eval_sets entry" in line, line


# Entries, each with the key its problem names (None: valid). The build (macros/eval_sets.sql) and
# the fetcher (preftools/inputs/registry.py) check entries each on its own (the fetcher runs before any
# dbt); both must give the same verdict, in the same words.
def _bench(**change):
    entry = {"name": "bench", "hub_id": "org/bench", "config": "main", "splits": ["test"], "fields": ["question"]}
    return {k: v for k, v in {**entry, **change}.items() if v is not None}


EVAL_SET_CASES = [
    *[([e], None) for e in yaml.safe_load(EVAL_EXAMPLES.read_text())["eval_sets"]],
    ([_bench(config=None, splits=None)], None),
    ([_bench(), _bench(name="bench_2", fields=["question", "question"])], None),
    ([_bench(name="Bench")], "name"),
    ([_bench(name="ultrafeedback")], "name"),  # a dataset group
    ([_bench(name="rever_judge")], "name"),  # a dataset of the contract
    ([_bench(), _bench()], "name"),
    ([_bench(hub_id="bench")], "hub_id"),
    ([_bench(fields=None)], "fields"),
    ([_bench(fields=[])], "fields"),
    ([_bench(fields="question")], "fields"),
    ([_bench(fields=["question", ""])], "fields"),
    ([_bench(fields=[3])], "fields"),
    ([_bench(splits="test")], "splits"),
    ([_bench(splits=[])], "splits"),
    ([_bench(config="")], "config"),
    ([_bench(config=3)], "config"),
    ([_bench(shape="preference")], "shape"),
    ([_bench(fields=None, feilds=["question"])], "unknown key feilds: did you mean fields?"),
    (["bench"], "mapping"),
    ({"name": "bench"}, "must be a list"),
]


def test_the_build_and_the_fetcher_judge_eval_sets_alike(tmp_path):
    from conftest import operation_cases
    from preftools.inputs import registry

    build = operation_cases("eval_sets_cases", [c for c, _ in EVAL_SET_CASES], "registry case", tmp_path)
    for i, (case, key) in enumerate(EVAL_SET_CASES):
        try:
            registry.eval_sets({"eval_sets": case})
            fetcher = "ok"
        except ValueError as exc:
            fetcher = str(exc)
        assert fetcher.strip() == build[i], (case, fetcher, build[i])  # (the log line is stripped)
        if key is None:
            assert fetcher == "ok", (case, fetcher)
        else:
            assert key in fetcher and "eval_sets" in fetcher, (case, fetcher)
