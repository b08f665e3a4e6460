"""Download the five upstream preference datasets from the Hugging Face Hub.

    python -m preftools.fetch [--raw-data-dir DIR] [--datasets key1,key2]
                              [--revision REV] [--revision DATASET=REV ...] [--lock FILE]
                              [--vars YAML_OR_FILE]

Each dataset lands as a copy of its Hub repo, keeping the repo's own paths, under
``$RAW_DATA_DIR/<org>/<dataset>/``. Which files are downloaded is decided the way the Hub decides
which files hold a dataset's data (:mod:`preftools.inputs.hub_layout`): the revision is resolved to a
commit, the repo is listed at that commit, its card (README.md) is read, and the data files are
the Parquet, JSON and CSV files the card's ``configs:``/``data_files`` name, else those the Hub's
default patterns find (``data/train-*.parquet``, ``train.jsonl``, ...). Exactly those files and the
card are downloaded at that commit, so the build, applying the same rule to the local folder,
reads the same files. Where the repo has no data file the build can read (none, or only text, TSV
and other formats), the Hub's own Parquet conversion is used instead: revision
``refs/convert/parquet``, resolved to its commit, files ``<config>/<split>/NNNN.parquet`` of the
default config (``default/`` or the only config folder); one line on stdout says so. Files of an earlier fetch of the same
dataset (as its lock entry lists them) that the new fetch does not include are removed, also said
in one line. Re-running skips files already there at that commit.

Checks after the download: every Parquet footer against the schema in :mod:`preftools.inputs.contract`
(types compared leniently, as DuckDB reads them); every JSON or CSV file's columns, as DuckDB's
reader gives them (:func:`preftools.inputs.hub_layout.duckdb_reader`), must include the contract's columns
by name (their types are left to the build's raw contract check, macros/raw_inputs.sql); the sizes
and LFS sha256 the Hub lists; and that the local folder resolves to exactly the files downloaded (a
left-over file the build would read too is reported).

Provenance: ``$RAW_DATA_DIR/fetch.lock.json`` records, per dataset, the revision asked for, the
commit it resolved to, where the files came from (``source``: ``repo`` or ``refs/convert/parquet``)
and the commit they were downloaded at (``revision``), the card and each data file by repo path
with size and sha256 (computed from the downloaded bytes); see :func:`lock_entry`. ``dbt build``
copies the commits into ``meta.warehouse_build_info.raw_revisions`` (and from there into the export
manifest) while the files still match the lock. ``--lock FILE`` downloads exactly the files of a
lock file at its commits (the conversion branch's too) and checks every sha256 against it;
``--revision DATASET=COMMIT`` pins one dataset.

Extra datasets: every entry of the dbt var ``extra_datasets`` (:mod:`preftools.inputs.registry`; from
dbt_project.yml, overridden by ``--vars`` as dbt's ``--vars`` takes it, YAML text or a file) is
fetched too, the same way, keyed by its name: the Hub's rule with the entry's ``config``, only the
files of its ``splits``. Instead of the contract's schema, the columns the entry maps (for
rated_completions its prompt and completions columns) must be in every file. The entries of the
var ``eval_sets`` (the benchmarks of docs/decontamination.md) are fetched the same way, keyed by
their names, their ``fields`` being the columns every file must have.

Errors are reported as one line per problem on stderr and exit code 2; no tracebacks
(set ``PREFTOOLS_DEBUG=1`` to get one for an unexpected error).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import logging
import os
import re
import shlex
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit, urlunsplit

from preftools.cli import EXIT_ERROR, HF_LOGIN_HINT, error, one_line, os_error_message, project_path, run
from preftools.inputs import registry
from preftools.inputs.contract import ACCEPTED_LEAF_TYPES, DATASETS, DATASETS_BY_KEY, RawDataset, duckdb_types
from preftools.inputs.hub_layout import (CARD_NAME, LayoutError, card_configs, choose_config, duckdb_reader,
                                         file_format, local_data_files, resolve)
from preftools.inputs.registry import Entry, Registered

DEFAULT_RAW_DATA_DIR = "data/raw"
CONVERT_REF = "refs/convert/parquet"  # the Hub's automatic Parquet conversion of a dataset
SOURCES = ("repo", CONVERT_REF)  # a lock entry's "source": where its files came from
REPO_INFO_TIMEOUT = 30.0  # seconds; raised by HF_HUB_ETAG_TIMEOUT if that is larger
LOGIN_HINT = HF_LOGIN_HINT
LOCK_NAME = "fetch.lock.json"  # beside the raw data: $RAW_DATA_DIR/fetch.lock.json (macros/raw_provenance.sql reads it)
LOCK_VERSION = 2  # 2: files by repo path (any layout), "source", "requested_commit", "card"; 1 is still read
COMMIT_RE = re.compile(r"[0-9a-f]{40}")

EPILOG = f"""\
datasets (key: Hub id):
{chr(10).join(f"  {d.key:<28} {d.hub_id}" for d in DATASETS)}

What is downloaded: the data files of each repo, decided as the Hub decides (the card's
`configs:`/data_files, else the Hub's default patterns; Parquet, JSON or CSV), plus its card
(README.md), at the commit the revision resolves to, into <dir>/<org>/<dataset>/ under the
repo's own paths. A repo without Parquet, JSON or CSV data files is fetched from the Hub's Parquet
conversion instead ({CONVERT_REF}, <config>/<split>/NNNN.parquet of the default config), and
the output says so. Files of an earlier fetch that the new one does not include are removed.

The Hub is reached through huggingface_hub, which honours HF_ENDPOINT (mirror), HF_TOKEN
(or the token stored by `hf auth login`) for gated/private datasets, HF_HUB_OFFLINE,
HF_HOME and the usual proxy variables. Progress bars can be turned off with
HF_HUB_DISABLE_PROGRESS_BARS=1.

Then build on the files with:  RAW_DATA_DIR=<dir> make build   (or RAW_DATA_DIR=<dir> dbt build)

Every run writes <dir>/fetch.lock.json: each dataset's commit, where its files came from (the repo
or the conversion branch, and that branch's commit) and its files (repo path, size, sha256).
The build records those commits in meta.warehouse_build_info.raw_revisions and the export copies
them into manifest.json. Reproduce a fetch elsewhere with:  --lock <that fetch.lock.json>
Pin one dataset with:  --revision ultrafeedback=<commit sha>  (repeatable; REV alone applies to all)

Extra datasets: the entries of the dbt var extra_datasets (dbt_project.yml, or --vars) are fetched
too, each restricted to its config and splits, and must have the columns the entry maps. The five
examples of examples/extra_datasets.yml:
  make fetch FETCH_ARGS="--vars examples/extra_datasets.yml"
  (preftools fetch --vars examples/extra_datasets.yml --datasets h4_ultrafeedback,hh_helpful)
then build with the same vars:  dbt build --vars "$(cat examples/extra_datasets.yml)"

Eval sets: the entries of the dbt var eval_sets (docs/decontamination.md) are fetched the same way,
keyed by their names, and must have the columns their `fields` name. The seven benchmarks of
examples/eval_sets.yml:
  make fetch FETCH_ARGS="--vars examples/eval_sets.yml"

No fetch needed on a machine with internet and DuckDB's httpfs extension:
RAW_DATA_DIR=hf://datasets makes dbt read the data files straight from the Hub
(e.g. RAW_DATA_DIR=hf://datasets dbt build).
"""


class FetchError(Exception):
    """A problem to report as one line; ``global_`` means the Hub itself is unusable (stop)."""

    def __init__(self, message: str, *, global_: bool = False):
        super().__init__(message)
        self.global_ = global_


Dataset = RawDataset | Registered  # a built-in dataset of the contract, or an entry of extra_datasets or eval_sets


@dataclass
class Fetched:
    dataset: Dataset
    revision: str = "main"  # what was asked for
    commit: str | None = None  # the commit the files were downloaded at
    source: str = "repo"  # or CONVERT_REF: the files came from the Hub's Parquet conversion
    files: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    lock_entry: dict | None = None  # what fetch.lock.json records for the dataset (after a download)


# --------------------------------------------------------------------------------------------
# command line


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="preftools fetch",
        description=(
            "Download the upstream preference datasets from the Hugging Face Hub into "
            "RAW_DATA_DIR/<org>/<dataset>/ (the data files the Hub reads, Parquet, JSON or CSV, in the repo's "
            "own layout) and check their schemas against preftools/inputs/contract.py."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--raw-data-dir",
        default=None,
        help=f"where to put the files (default: $RAW_DATA_DIR, else {DEFAULT_RAW_DATA_DIR}; either relative to the project)",
    )
    parser.add_argument(
        "--datasets",
        default=None,
        help="comma-separated datasets to fetch: keys listed below, or names of extra_datasets or eval_sets "
        "entries (default: all five and every entry)",
    )
    parser.add_argument(
        "--revision",
        action="append",
        default=None,
        metavar="REV|DATASET=REV",
        help="branch, tag or commit to download: REV for every dataset (default: main), DATASET=REV "
        "for one (repeatable), e.g. --revision ultrafeedback=<commit sha>",
    )
    parser.add_argument(
        "--lock",
        default=None,
        metavar="FILE",
        help=f"reproduce a fetch: download the commits recorded in FILE (a {LOCK_NAME}) and check every "
        "file's sha256 against it (default datasets: those in FILE)",
    )
    parser.add_argument(
        "--vars",
        default=None,
        metavar="YAML_OR_FILE",
        help="dbt vars as `dbt --vars` takes them, YAML text or a YAML file, over dbt_project.yml's: its "
        "extra_datasets and eval_sets entries are fetched too (e.g. --vars examples/eval_sets.yml)",
    )
    args = parser.parse_args(argv)

    try:
        dbt_vars = registry.load_vars(args.vars)
        args.entries = [*registry.extra_datasets(dbt_vars), *registry.eval_sets(dbt_vars)]
    except (OSError, ValueError) as exc:
        parser.error(_one_line(exc))
    known = {**DATASETS_BY_KEY, **{e.name: e for e in args.entries}}
    keys = None
    if args.datasets is not None:
        keys = [k.strip() for k in args.datasets.split(",") if k.strip()]
        unknown = [k for k in keys if k not in known]
        if unknown or not keys:
            parser.error(
                f"unknown dataset key(s): {', '.join(unknown) or '(none given)'}; "
                f"valid keys: {', '.join(known)}"
            )

    args.default_revision = "main"
    args.pinned = {}  # dataset key -> revision given with --revision KEY=REV
    for item in args.revision or []:
        key, sep, rev = item.partition("=")
        if not sep:
            if not item.strip():
                parser.error("--revision must not be empty")
            if args.default_revision != "main" and args.default_revision != item.strip():
                parser.error(f"--revision given twice for every dataset ({args.default_revision}, {item.strip()})")
            args.default_revision = item.strip()
            continue
        key, rev = key.strip(), rev.strip()
        if key not in known:
            parser.error(f"--revision {item}: unknown dataset key {key!r}; valid keys: {', '.join(known)}")
        if not rev:
            parser.error(f"--revision {item}: the revision must not be empty")
        if key in args.pinned and args.pinned[key] != rev:
            parser.error(f"--revision given twice for {key} ({args.pinned[key]}, {rev})")
        args.pinned[key] = rev
    if args.lock is not None and args.revision:
        parser.error("--lock fetches the commits of the lock file; it cannot be combined with --revision")

    args.lock_data = None
    if args.lock is not None:
        try:
            args.lock_data = read_lock(Path(args.lock).expanduser())
        except FetchError as exc:
            parser.error(str(exc))
        in_lock = [k for k in known if k in args.lock_data["datasets"]]
        unregistered = [k for k in args.lock_data["datasets"] if k not in known]
        if keys is None:
            if unregistered:
                parser.error(f"--lock {args.lock} has entries for {', '.join(unregistered)}, which are not in "
                             "extra_datasets or eval_sets; pass the --vars that register them, or --datasets to leave them out")
            keys = in_lock
        for key in in_lock:
            locked_hub_id = args.lock_data["datasets"][key].get("hub_id")
            if key in keys and isinstance(known[key], Registered) and locked_hub_id != known[key].hub_id:
                parser.error(f"--lock {args.lock}: {key} is {locked_hub_id}, but its {known[key].var} entry says "
                             f"{known[key].hub_id}")
        missing = [k for k in keys if k not in in_lock]
        if missing:
            parser.error(f"--lock {args.lock} has no entry for {', '.join(missing)} (it has: {', '.join(in_lock) or 'none'})")
    if keys is not None:
        not_selected = [k for k in args.pinned if k not in keys]
        if not_selected:
            parser.error(f"--revision names {', '.join(not_selected)}, which --datasets does not select")
    everything = [*DATASETS, *args.entries]  # contract order, then the registries' (extra datasets, eval sets)
    args.selected = everything if keys is None else [d for d in everything if d.key in keys]
    return args


def revision_for(args: argparse.Namespace, ds: Dataset) -> str:
    if args.lock_data is not None:
        return args.lock_data["datasets"][ds.key]["revision"]
    return args.pinned.get(ds.key, args.default_revision)


def resolve_raw_data_dir(arg: str | None) -> Path:
    """--raw-data-dir (relative to where it is typed), else $RAW_DATA_DIR or data/raw as dbt reads
    them (relative to the project), absolute."""
    raw = arg or os.environ.get("RAW_DATA_DIR") or DEFAULT_RAW_DATA_DIR
    if "://" in raw:
        raise FetchError(
            f"RAW_DATA_DIR={raw} is a remote location: nothing to fetch, dbt reads it directly "
            f"(RAW_DATA_DIR={raw} make build); to download, pass --raw-data-dir <local dir>",
        )
    return Path(raw).expanduser().absolute() if arg else project_path(raw)


def ensure_writable_dir(path: Path) -> None:
    """Create ``path`` and prove we can write into it; name the path on failure."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".fetch-write-test-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise FetchError(_os_error_message(exc, path)) from None


# --------------------------------------------------------------------------------------------
# fetch.lock.json


def _safe_repo_path(path: object) -> bool:
    """A relative posix path inside the repo (no "..", not absolute): safe to write or delete."""
    if not isinstance(path, str) or not path or "\\" in path:
        return False
    pure = PurePosixPath(path)
    return not pure.is_absolute() and ".." not in pure.parts and "." not in pure.parts


def read_lock(path: Path) -> dict:
    """A lock file written by this module (version 1 or 2), validated enough to pin from, its entries
    completed to version 2 (a version-1 entry is a "repo" fetch without a card); FetchError otherwise."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise FetchError(f"lock file {path} does not exist") from None
    except OSError as exc:
        raise FetchError(f"cannot read lock file {path}: {_one_line(exc.strerror or exc)}") from None
    except ValueError as exc:
        raise FetchError(f"lock file {path} is not valid JSON: {_one_line(exc)}") from None
    datasets = data.get("datasets") if isinstance(data, dict) else None
    if not isinstance(datasets, dict):
        raise FetchError(f"lock file {path} has no \"datasets\" object; is it a {LOCK_NAME} written by `preftools fetch`?")
    version = data.get("lock_version", 1)
    if version not in (1, LOCK_VERSION):
        raise FetchError(
            f"lock file {path} has lock_version {version!r}; this preftools reads versions 1 and {LOCK_VERSION} "
            "(update preftools, or fetch again without --lock)"
        )
    for key, entry in datasets.items():
        ds = DATASETS_BY_KEY.get(key)
        if ds is None and not (registry.NAME_RE.fullmatch(str(key)) and isinstance(entry, dict)
                               and registry.HUB_ID_RE.fullmatch(str(entry.get("hub_id", "")))):
            raise FetchError(f"lock file {path}: unknown dataset key {key!r} (not a built-in key, and no hub_id of an "
                             f"extra dataset or eval set); valid keys: {', '.join(DATASETS_BY_KEY)} or names of "
                             "extra_datasets or eval_sets entries")
        if not isinstance(entry, dict) or not COMMIT_RE.fullmatch(str(entry.get("revision", ""))):
            raise FetchError(f"lock file {path}: {key} has no 40-hex commit in \"revision\"")
        if ds is not None and entry.get("hub_id", ds.hub_id) != ds.hub_id:
            raise FetchError(f"lock file {path}: {key} is {entry.get('hub_id')}, but the contract says {ds.hub_id}")
        files = entry.get("files")
        if not isinstance(files, list) or not all(isinstance(f, dict) and "path" in f for f in files):
            raise FetchError(f"lock file {path}: {key} has no \"files\" list")
        entry.setdefault("requested_commit", entry["revision"])
        entry.setdefault("source", "repo")
        entry.setdefault("card", None)
        if not COMMIT_RE.fullmatch(str(entry["requested_commit"])):
            raise FetchError(f"lock file {path}: {key} has no 40-hex commit in \"requested_commit\"")
        if entry["source"] not in SOURCES:
            raise FetchError(f"lock file {path}: {key} has \"source\" {entry['source']!r}; expected one of {', '.join(SOURCES)}")
        card = entry["card"]
        if card is not None and not (isinstance(card, dict) and card.get("path") == CARD_NAME):
            raise FetchError(f"lock file {path}: {key} has a \"card\" that is not {{\"path\": \"{CARD_NAME}\", ...}} or null")
        bad = [str(f["path"]) for f in files if not _safe_repo_path(f["path"])]
        if bad:
            raise FetchError(f"lock file {path}: {key} lists {bad[0]!r}, not a relative path inside the repo")
    return data


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _public_endpoint() -> str:
    """HF_ENDPOINT without any user:password@ part."""
    parts = urlsplit(_endpoint())
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, netloc, parts.path, "", "")).rstrip("/")


def _file_record(repo_dir: Path, path: str) -> dict:
    full = repo_dir / path
    return {"path": path, "size": full.stat().st_size, "sha256": sha256_of(full)}


def lock_entry(ds: Dataset, raw_data_dir: Path, plan: "Plan") -> dict:
    """What fetch.lock.json records for a dataset just downloaded:

    hub_id              the dataset's Hub id
    requested_revision  the revision asked for (branch, tag or commit; "main" by default)
    requested_commit    the commit requested_revision resolved to (main's commit for `make fetch`)
    source              "repo" (the files of requested_commit) or "refs/convert/parquet" (the Hub's
                        Parquet conversion, used when the repo has no Parquet, JSON or CSV data files)
    revision            the commit the files were downloaded at: requested_commit for "repo", the
                        conversion branch's commit for "refs/convert/parquet"
    endpoint            the Hub's address (HF_ENDPOINT without credentials)
    card                {path: "README.md", size, sha256} of the card downloaded beside the data, or null
    files               the data files, {path (repo path), size, sha256}, in the Hub's order
    config, splits      (extra datasets and eval sets only) the entry's config and splits (null: the
                        default, all)
    """
    repo_dir = ds.repo_dir(raw_data_dir)
    extra = {"config": ds.config, "splits": list(ds.splits) if ds.splits else None} if isinstance(ds, Registered) else {}
    return {
        "hub_id": ds.hub_id,
        "requested_revision": plan.requested_revision,
        "requested_commit": plan.requested_commit,
        "source": plan.source,
        "revision": plan.commit,
        "endpoint": _public_endpoint(),
        "card": _file_record(repo_dir, CARD_NAME) if plan.card is not None else None,
        "files": [_file_record(repo_dir, path) for path in plan.files],
        **extra,
    }


def files_on_disk_match(key: str, raw_data_dir: Path, entry: dict) -> bool:
    """Does the local copy of dataset ``key`` still resolve to the data files its lock ``entry``
    records, with the same sizes? (An extra dataset's or eval set's by the config and splits the entry
    records.)"""
    ds = DATASETS_BY_KEY.get(key)
    repo_dir = raw_data_dir / (ds.hub_id if ds is not None else str(entry.get("hub_id")))
    try:
        files = local_data_files(repo_dir) if ds is not None else \
            registry.local_files(repo_dir, entry.get("config"), entry.get("splits"))
        on_disk = {f.path: (repo_dir / f.path).stat().st_size for f in files}
    except (OSError, ValueError):  # LayoutError is a ValueError
        return False
    return on_disk == {f.get("path"): f.get("size") for f in entry.get("files", [])}


def lock_differences(entry: dict, pinned: dict) -> list[str]:
    """How the files just fetched (card included) differ from the lock file's record of them."""
    def by_path(e: dict) -> dict:
        return {f["path"]: f for f in e.get("files", []) + ([e["card"]] if e.get("card") else [])}

    problems = []
    got, want = by_path(entry), by_path(pinned)
    for path in sorted(want.keys() - got.keys()):
        problems.append(f"{path} is in the lock file but was not fetched")
    for path in sorted(got.keys() - want.keys()):
        problems.append(f"{path} was fetched but is not in the lock file")
    for path in sorted(got.keys() & want.keys()):
        for attr in ("size", "sha256"):
            if want[path].get(attr) is not None and want[path][attr] != got[path][attr]:
                problems.append(f"{path} has {attr} {got[path][attr]}, the lock file says {want[path][attr]}")
                break
    return problems


def read_previous_lock(raw_data_dir: Path) -> dict:
    """The entries of ``raw_data_dir/fetch.lock.json`` by dataset key ({} when absent or unreadable)."""
    path = raw_data_dir / LOCK_NAME
    try:
        return read_lock(path)["datasets"] if path.exists() else {}
    except FetchError:
        return {}  # unreadable: rewritten from what is known now


def write_lock(raw_data_dir: Path, fetched: list[Fetched]) -> Path | None:
    """Update ``raw_data_dir/fetch.lock.json``: a new entry for each dataset downloaded now; an earlier
    entry is kept only while the files on disk still match it (otherwise the build says "unknown").
    None when there is nothing to record and no lock file yet."""
    path = raw_data_dir / LOCK_NAME
    previous = read_previous_lock(raw_data_dir)
    entries = {r.dataset.key: r.lock_entry for r in fetched if r.lock_entry is not None}
    for key, entry in previous.items():
        if key not in entries and files_on_disk_match(key, raw_data_dir, entry):
            entries[key] = entry
    if not entries and not path.exists():
        return None
    lock = {
        "lock_version": LOCK_VERSION,
        "written_by": "python -m preftools.fetch",
        "reproduce": f"preftools fetch --lock {LOCK_NAME} --raw-data-dir <dir>",
        # the built-in datasets in contract order, then the extra datasets
        "datasets": {**{d.key: entries[d.key] for d in DATASETS if d.key in entries},
                     **{k: e for k, e in entries.items() if k not in DATASETS_BY_KEY}},
    }
    fd, tmp = tempfile.mkstemp(prefix=f".{LOCK_NAME}.", suffix=".tmp", dir=raw_data_dir)
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(lock, fh, indent=2, sort_keys=False)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


# --------------------------------------------------------------------------------------------
# error messages


def _one_line(text: object, limit: int = 300) -> str:
    return one_line(text, limit)


def _os_error_message(exc: OSError, fallback: Path | str) -> str:
    return os_error_message(exc, fallback, option="--raw-data-dir")


def _endpoint() -> str:
    from huggingface_hub import constants

    return constants.ENDPOINT


def _hub_id_source(ds: Dataset) -> str:
    """Where the dataset's Hub id is written (to check it)."""
    return f"hub_id of the {ds.var} entry {ds.key}" if isinstance(ds, Registered) else "the Hub id in preftools/inputs/contract.py"


def describe_error(exc: BaseException, ds: Dataset, revision: str, local_dir: Path) -> FetchError:
    """Turn anything huggingface_hub/httpx2/the OS raises into one line naming the dataset."""
    import httpx2
    from huggingface_hub import errors as hf_errors

    name = f"{ds.hub_id} ({ds.key})"
    endpoint = _endpoint()
    url = f"{endpoint}/datasets/{ds.hub_id}"

    if isinstance(exc, hf_errors.OfflineModeIsEnabled):
        return FetchError(
            f"{name}: HF_HUB_OFFLINE is set, so the Hub is not contacted; unset HF_HUB_OFFLINE to download",
            global_=True,
        )
    if isinstance(exc, httpx2.ProxyError):
        return FetchError(f"{name}: proxy error reaching {endpoint}: {_one_line(exc)}; check HTTPS_PROXY/HTTP_PROXY", global_=True)
    if isinstance(exc, httpx2.TimeoutException):
        return FetchError(
            f"{name}: timed out talking to the Hub at {endpoint} ({type(exc).__name__}); check the network, "
            "or raise HF_HUB_ETAG_TIMEOUT / HF_HUB_DOWNLOAD_TIMEOUT",
            global_=True,
        )
    if isinstance(exc, (httpx2.NetworkError, httpx2.UnsupportedProtocol, ConnectionError)):
        return FetchError(
            f"{name}: cannot reach the Hugging Face Hub at {endpoint} ({_one_line(exc) or type(exc).__name__}); "
            "check your internet connection/proxy, or HF_ENDPOINT",
            global_=True,
        )
    if isinstance(exc, httpx2.TransportError):
        return FetchError(f"{name}: network error talking to {endpoint}: {type(exc).__name__}: {_one_line(exc)}", global_=True)

    # Order matters: the Hub errors are OSError subclasses too.
    if isinstance(exc, hf_errors.GatedRepoError):
        return FetchError(
            f"{name}: gated dataset, access refused (HTTP {_status(exc)}); accept its conditions at {url} "
            f"while logged in, then {LOGIN_HINT}"
        )
    if isinstance(exc, hf_errors.RevisionNotFoundError):
        return FetchError(f"{name}: revision {revision!r} not found at {url}; check --revision")
    if isinstance(exc, hf_errors.DisabledRepoError):
        return FetchError(f"{name}: the dataset is disabled on the Hub ({url})")
    if isinstance(exc, hf_errors.RepositoryNotFoundError):
        return FetchError(
            f"{name}: dataset not found or not accessible (HTTP {_status(exc)}) at {url}; check "
            f"{_hub_id_source(ds)}, and if it is private or gated {LOGIN_HINT}"
        )
    if isinstance(exc, hf_errors.RemoteEntryNotFoundError):
        return FetchError(f"{name}: a listed file is missing on the Hub (HTTP 404 {exc.response.url}); retry later")
    if isinstance(exc, hf_errors.HfHubHTTPError):
        status = _status(exc)
        detail = exc.response.headers.get("X-Error-Message") if exc.response is not None else None
        detail = f": {_one_line(detail)}" if detail else ""
        if status == 401:
            return FetchError(f"{name}: HTTP 401 unauthorized at {endpoint}{detail}; the token is missing or invalid: {LOGIN_HINT}")
        if status == 403:
            return FetchError(
                f"{name}: HTTP 403 forbidden at {url}{detail}; your token lacks access (gated dataset? accept its "
                f"conditions on the Hub), {LOGIN_HINT} with a read token"
            )
        if status == 404:
            return FetchError(f"{name}: HTTP 404 not found at {url}{detail}; check {_hub_id_source(ds)} and --revision")
        if status == 429:
            return FetchError(f"{name}: HTTP 429 rate limited by the Hub{detail}; wait and retry, or log in ({LOGIN_HINT})", global_=True)
        if status is not None and status >= 500:
            return FetchError(f"{name}: the Hub at {endpoint} answered HTTP {status}{detail}; try again later", global_=True)
        return FetchError(f"{name}: HTTP {status} from the Hub{detail}: {_one_line(str(exc).splitlines()[0] if str(exc) else exc)}")
    if isinstance(exc, hf_errors.FileMetadataError):
        return FetchError(f"{name}: {endpoint} does not answer like a Hugging Face Hub ({_one_line(exc)}); check HF_ENDPOINT", global_=True)
    if isinstance(exc, hf_errors.LocalEntryNotFoundError):
        # snapshot_download wraps "could not list the repo and nothing usable on disk" in this.
        cause = exc.__cause__ or exc.__context__
        if cause is not None and cause is not exc:
            return describe_error(cause, ds, revision, local_dir)
        return FetchError(f"{name}: could not list the files on the Hub: {_one_line(exc)}")
    if isinstance(exc, OSError):
        return FetchError(f"{name}: {_os_error_message(exc, local_dir)}")
    if isinstance(exc, ValueError):  # e.g. a non-JSON answer from a wrong HF_ENDPOINT
        return FetchError(
            f"{name}: unexpected answer from {endpoint} ({type(exc).__name__}: {_one_line(exc)}); check HF_ENDPOINT",
            global_=True,
        )
    return FetchError(f"{name}: {type(exc).__name__}: {_one_line(exc)}")


def _status(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None)


# --------------------------------------------------------------------------------------------
# schema check


def _unwrap(t):
    import pyarrow as pa

    while pa.types.is_dictionary(t):
        t = t.value_type
    return t


def _is_stringish(t) -> bool:
    import pyarrow as pa

    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def _is_listish(t) -> bool:
    """A list DuckDB reads as `T[]` (a fixed-size list is `T[n]`, another type)."""
    import pyarrow as pa

    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t) or pa.types.is_large_list_view(t)


@functools.lru_cache(maxsize=None)
def _duckdb_name(t) -> str:
    import pyarrow as pa

    return duckdb_types(pa.schema([("c", t)]))["c"]


def _short(t, limit: int = 120) -> str:
    return _one_line(t, limit)


def type_problems(path: str, expected, actual) -> list[str]:
    """Differences between an expected and an actual Arrow type, by column path: the build's rule
    (preftools/inputs/contract.py, "A raw column is accepted when ..."; macros/raw_inputs.sql applies it
    to DuckDB's types). String and list flavours, dictionary encoding, nullability, struct field
    order, extra struct fields, an all-null (null-typed) column or field and a narrower number
    that the contract type holds exactly (ACCEPTED_LEAF_TYPES) are accepted.
    """
    import pyarrow as pa

    expected, actual = _unwrap(expected), _unwrap(actual)
    if pa.types.is_null(actual):
        return []
    if _is_stringish(expected) and _is_stringish(actual):
        return []
    if _is_listish(expected) and _is_listish(actual):
        return type_problems(f"{path}[]", expected.value_type, actual.value_type)
    if pa.types.is_struct(expected) and pa.types.is_struct(actual):
        problems: list[str] = []
        actual_fields = {actual.field(i).name: actual.field(i) for i in range(actual.num_fields)}
        for i in range(expected.num_fields):
            child = expected.field(i)
            if child.name not in actual_fields:
                problems.append(f"column {path}.{child.name} is missing (expected {_short(child.type)})")
            else:
                problems += type_problems(f"{path}.{child.name}", child.type, actual_fields[child.name].type)
        return problems
    if expected.equals(actual):
        return []
    if not (pa.types.is_nested(expected) or pa.types.is_nested(actual)) \
            and _duckdb_name(actual) in ACCEPTED_LEAF_TYPES.get(_duckdb_name(expected), ()):
        return []
    return [f"column {path} has type {_short(actual)}, expected {_short(expected)}"]


def schema_problems(expected, actual) -> list[str]:
    """Problems of a file schema ``actual`` against the contract schema ``expected`` (extra columns are fine)."""
    problems: list[str] = []
    for column in expected:
        index = actual.get_field_index(column.name)
        if index == -1:
            if column.name in actual.names:
                problems.append(f"column {column.name} appears more than once")
            else:
                problems.append(f"column {column.name} is missing (expected {_short(column.type)})")
            continue
        problems += type_problems(column.name, column.type, actual.field(index).type)
    return problems


def _file_columns(path: Path, fmt: str) -> list[str]:
    """The columns of a data file: a Parquet file's footer, else as DuckDB's reader (the build's:
    :func:`duckdb_reader`) gives them for a JSON / JSON Lines or CSV file (compressed or not)."""
    import duckdb
    import pyarrow.parquet as pq

    if fmt == "parquet":
        return pq.read_schema(path).names
    with duckdb.connect() as con:
        return [row[0] for row in con.execute(f"describe select * from {duckdb_reader(str(path), fmt)}").fetchall()]


def verify_dataset(ds: Dataset, repo_dir: Path, files: list[str]) -> list[str]:
    """Check the data files just downloaded (repo paths under ``repo_dir``) against the contract:
    a Parquet footer's columns and types (leniently, as DuckDB reads them); a JSON or CSV file's
    columns as DuckDB reads them, by name only (their types are checked by the build,
    macros/raw_inputs.sql). One message per problem (without the dataset prefix). An extra
    dataset's or eval set's files must have the columns its entry names (:func:`entry_column_problems`)."""
    import pyarrow.parquet as pq

    if isinstance(ds, Registered):
        return entry_column_problems(ds, repo_dir, files)
    problems: list[str] = []
    by_problem: dict[str, list[Path]] = defaultdict(list)
    for rel in files:
        path = repo_dir / rel
        if file_format(rel) == "parquet":
            try:
                schema = pq.read_schema(path)
            except Exception as exc:  # noqa: BLE001 - corrupt/truncated file, permission...
                problems.append(f"cannot read the parquet footer of {path}: {_one_line(exc)}")
                continue
            for problem in schema_problems(ds.schema, schema):
                by_problem[problem].append(path)
        else:
            try:
                columns = _file_columns(path, file_format(rel))
            except Exception as exc:  # noqa: BLE001 - malformed JSON or CSV, bad compression...
                problems.append(f"DuckDB cannot read the {file_format(rel).upper()} file {path}: {_one_line(exc)}")
                continue
            for column in ds.schema:
                if column.name not in columns:
                    by_problem[f"column {column.name} is missing (expected {_short(column.type)})"].append(path)
    for problem, paths in by_problem.items():
        where = str(paths[0]) if len(paths) == 1 else f"{len(paths)} of {len(files)} files, e.g. {paths[0]}"
        problems.append(f"schema mismatch: {problem} (in {where})")
    return problems


def entry_column_problems(entry: Registered, repo_dir: Path, files: list[str]) -> list[str]:
    """The columns an entry names (an extra dataset's mapped columns, :meth:`Entry.top_level_columns`;
    an eval set's fields) that a data file lacks (:func:`_file_columns`); one line per missing column."""
    problems: list[str] = []
    missing: dict[str, list[Path]] = defaultdict(list)
    names: dict[str, list[str]] = {}
    for rel in files:
        path = repo_dir / rel
        try:
            columns = _file_columns(path, file_format(rel))
        except Exception as exc:  # noqa: BLE001 - corrupt file, malformed JSON...
            problems.append(f"cannot read the columns of {path}: {_one_line(exc)}")
            continue
        for column in entry.top_level_columns():
            if column not in columns:
                missing[column].append(path)
                names.setdefault(column, columns)
    for column, paths in missing.items():
        where = str(paths[0]) if len(paths) == 1 else f"{len(paths)} of {len(files)} files, e.g. {paths[0]}"
        if isinstance(entry, Entry):
            mapped_as = {c: k for k, c in entry.columns.items() if isinstance(c, str)}
            named, key = f"the extra_datasets entry maps {mapped_as.get(column, column)} to it", "columns"
        else:
            named, key = "the eval_sets entry names it in `fields`", "fields"
        problems.append(
            f"column {column} is missing ({named}; the file has {', '.join(names[column][:12])}) in {where}; "
            f"fix `{key}` of the entry"
        )
    return problems


def _local_files(ds: Dataset, repo_dir: Path) -> list[str]:
    """The data files the build reads in a local copy (an entry's: of its config and splits)."""
    if isinstance(ds, Registered):
        return [f.path for f in registry.local_files(repo_dir, ds.config, ds.splits)]
    return [f.path for f in local_data_files(repo_dir)]


def local_layout_problems(ds: Dataset, repo_dir: Path, plan: "Plan") -> list[str]:
    """Does the local copy resolve, by the build's rule, to exactly the files downloaded?"""
    problems = []
    if plan.card is None and (repo_dir / CARD_NAME).is_file():
        problems.append(
            f"{repo_dir / CARD_NAME} is not part of this fetch ({plan.where()}) but the build reads it as the "
            "dataset card; delete it"
        )
    try:
        local = _local_files(ds, repo_dir)
    except LayoutError as exc:
        return problems + [f"the local copy {repo_dir} does not resolve to data files: {exc}"]
    for path in sorted(set(local) - set(plan.files)):
        problems.append(
            f"{repo_dir / path} is not part of the Hub dataset at this revision (left over from an earlier fetch?); "
            "delete it, or the build reads it too"
        )
    for path in sorted(set(plan.files) - set(local)):
        problems.append(f"{repo_dir / path} was downloaded, but the local copy does not resolve to it as the Hub's listing did")
    return problems


# --------------------------------------------------------------------------------------------
# download


@dataclass
class Plan:
    """What to download for one dataset, decided from the Hub's listing (or from a lock entry)."""

    requested_revision: str  # what was asked for
    requested_commit: str  # the commit it resolved to
    source: str  # "repo" or CONVERT_REF
    commit: str  # the commit the files are downloaded at
    files: list[str]  # data files, repo paths, in the Hub's order
    card: bytes | None  # the card (README.md) downloaded beside them, or None
    siblings: dict  # repo path -> the Hub's listing entry at ``commit`` (size, LFS sha256)

    def where(self) -> str:
        return f"{self.requested_revision if self.source == 'repo' else CONVERT_REF} at {self.commit[:12]}"


def _name(ds: Dataset) -> str:
    return f"{ds.hub_id} ({ds.key})"


def _listing(api, ds: Dataset, revision: str, local_dir: Path, missing_ok: bool = False):
    """(commit, {repo path: sibling}) of ``revision`` on the Hub; None for a revision that does not
    exist when ``missing_ok``."""
    from huggingface_hub import constants
    from huggingface_hub.errors import RevisionNotFoundError

    try:
        # huggingface_hub sets no timeout on this call (a black-holed network would hang for minutes).
        timeout = max(REPO_INFO_TIMEOUT, float(constants.HF_HUB_ETAG_TIMEOUT))
        info = api.dataset_info(ds.hub_id, revision=revision, timeout=timeout, files_metadata=True)
    except Exception as exc:  # noqa: BLE001 - classified into one line
        if missing_ok and isinstance(exc, RevisionNotFoundError):
            return None
        raise describe_error(exc, ds, revision, local_dir) from None
    if not info.sha or info.siblings is None:
        raise FetchError(f"{_name(ds)}: the Hub did not give the commit and file list of revision {revision!r}; retry later")
    return info.sha, {s.rfilename: s for s in info.siblings}


def _download_card(ds: Dataset, commit: str, local_dir: Path) -> bytes:
    """The card's bytes at ``commit`` (through huggingface_hub's cache: read before anything is
    written into the local copy, and not downloaded again for the same commit)."""
    from huggingface_hub import hf_hub_download

    try:
        cached = hf_hub_download(ds.hub_id, CARD_NAME, repo_type="dataset", revision=commit)
        return Path(cached).read_bytes()
    except Exception as exc:  # noqa: BLE001 - classified into one line
        raise describe_error(exc, ds, commit, local_dir) from None


def _card_text(card: bytes | None) -> str | None:
    return None if card is None else card.decode("utf-8", errors="replace")


def _conversion_files(ds: Dataset, commit: str, siblings: dict) -> list[str]:
    """The Parquet files of the default config on the conversion branch: ``<config>/<split>/NNNN.parquet``
    under ``default/``, else under the only config folder (an entry's: of its config, and of its
    splits as the build resolves them)."""
    parquet = [p for p in siblings if file_format(p) == "parquet" and p.count("/") >= 2]
    configs = sorted({p.split("/", 1)[0] for p in parquet})
    where = f"{CONVERT_REF} ({commit[:12]})"
    if not configs:
        raise FetchError(f"{_name(ds)}: the Hub's Parquet conversion {where} has no <config>/<split>/*.parquet files; retry later")
    if isinstance(ds, Registered) and ds.config is not None:
        if ds.config not in configs:
            raise FetchError(f"{_name(ds)}: the Hub's Parquet conversion {where} has no config {ds.config} (it has: "
                             f"{', '.join(configs)}); fix `config` of the {ds.var} entry")
        # (the local copy has no card: the build reads the config's folder)
        inside = [p for p in parquet if p.startswith(ds.config + "/")]
        return _split_files(ds, registry.resolve_files(inside, None, ds.config), f"the Hub's Parquet conversion {where}")
    if "default" not in configs and len(configs) > 1:
        raise FetchError(
            f"{_name(ds)}: the Hub's Parquet conversion {where} has several configs ({', '.join(configs)}) "
            "and none is named default; this fetcher cannot choose one"
        )
    config = "default" if "default" in configs else configs[0]
    files = resolve([p for p in parquet if p.startswith(config + "/")])
    if isinstance(ds, Registered):
        return _split_files(ds, files, f"the Hub's Parquet conversion {where}")
    return [f.path for f in files]


def _split_files(ds: Registered, files: list, where: str) -> list[str]:
    """The paths of ``files`` (resolved DataFiles) of the entry's splits; FetchError naming the
    splits there are when one of the entry's has none."""
    if ds.splits is not None:
        found = {f.split for f in files}
        absent = [s for s in ds.splits if s not in found]
        if absent and files:
            raise FetchError(f"{_name(ds)}: {where} has no split {', '.join(absent)} (its splits: "
                             f"{', '.join(sorted(found))}); fix `splits` of the {ds.var} entry")
        files = [f for f in files if f.split in ds.splits]
    return [f.path for f in files]


def _repo_files(ds: Dataset, paths: list[str], card: str | None, where: str) -> list[str]:
    """The data files among a repo's ``paths`` by the Hub's rule (an entry's: of its config and
    splits); [] when the Hub's default patterns match nothing."""
    try:
        if isinstance(ds, Registered):
            return _split_files(ds, registry.resolve_files(paths, card, ds.config), where)
        return [f.path for f in resolve(paths, card)]
    except LayoutError:  # the Hub's default patterns match nothing
        return []


def plan_from_hub(api, ds: Dataset, revision: str, local_dir: Path) -> Plan:
    """Resolve ``revision``, list the repo there, read its card, and pick its data files by the Hub's
    rule; without Parquet, JSON or CSV data files, pick those of the Hub's Parquet conversion."""
    commit, siblings = _listing(api, ds, revision, local_dir)
    if revision == CONVERT_REF:  # asked for the conversion itself
        return Plan(revision, commit, CONVERT_REF, commit, _conversion_files(ds, commit, siblings), None, siblings)

    card = _download_card(ds, commit, local_dir) if CARD_NAME in siblings else None
    where = f"{revision} ({commit[:12]})"
    try:
        configs = card_configs(_card_text(card))
        if configs or not isinstance(ds, Registered):  # (an entry's config without card configs: a folder)
            choose_config(configs, ds.config if isinstance(ds, Registered) else None)
    except LayoutError as exc:
        fix = f"; fix `config` of the {ds.var} entry" if isinstance(ds, Registered) else ""
        raise FetchError(f"{_name(ds)}: {CARD_NAME} at {revision} ({commit[:12]}): {exc}{fix}") from None
    files = _repo_files(ds, sorted(siblings), _card_text(card), where)
    if files:
        return Plan(revision, commit, "repo", commit, files, card, siblings)
    if isinstance(ds, Registered) and ds.config not in (None, "default") and not configs:
        raise FetchError(f"{_name(ds)}: no Parquet, JSON or CSV data files in the folder {ds.config}/ at {where} (the card "
                         f"declares no configs, so `config` names a folder); fix `config` of the {ds.var} entry")

    conversion = _listing(api, ds, CONVERT_REF, local_dir, missing_ok=True)
    if conversion is None:
        others = ", ".join(sorted(siblings)[:5]) or "no files"
        raise FetchError(
            f"{_name(ds)}: no Parquet, JSON or CSV data files at {where} (it has: {others}), and the Hub has no Parquet "
            f"conversion of it ({CONVERT_REF} does not exist); check --revision"
        )
    conv_commit, conv_siblings = conversion
    note = f"{ds.hub_id}: no Parquet, JSON or CSV data files at {where}; using the Hub's Parquet conversion {CONVERT_REF} ({conv_commit[:12]})"
    if revision != "main":
        note += f", a conversion of the Hub's main branch, not necessarily of {revision}"
    print(note, flush=True)
    files = _conversion_files(ds, conv_commit, conv_siblings)
    return Plan(revision, commit, CONVERT_REF, conv_commit, files, None, conv_siblings)


def plan_from_lock(api, ds: Dataset, pinned: dict, local_dir: Path) -> Plan:
    """The files of a lock entry, at its commit (the conversion branch's commit for a conversion)."""
    commit = pinned["revision"]
    _, siblings = _listing(api, ds, commit, local_dir)
    files = [f["path"] for f in pinned["files"]]
    missing = [p for p in files + ([CARD_NAME] if pinned["card"] else []) if p not in siblings]
    if missing:
        raise FetchError(
            f"{_name(ds)}: the lock file lists {', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}, "
            f"which the Hub dataset at {commit[:12]} does not have"
        )
    if pinned["source"] == CONVERT_REF:
        print(f"{ds.hub_id}: the lock file records files of the Hub's Parquet conversion {CONVERT_REF} ({commit[:12]}); "
              "fetching them at that commit", flush=True)
    card = _download_card(ds, commit, local_dir) if pinned["card"] else None
    requested = pinned.get("requested_revision") or pinned["requested_commit"]
    return Plan(requested, pinned["requested_commit"], pinned["source"], commit, files, card, siblings)


def remove_stale(ds: Dataset, repo_dir: Path, plan: Plan, previous: dict | None) -> list[str]:
    """Delete the files an earlier fetch of the dataset recorded (its lock entry's data files and card)
    that this fetch does not include, so the build does not read them; the repo paths removed."""
    if not previous:
        return []
    keep = set(plan.files) | ({CARD_NAME} if plan.card is not None else set())
    recorded = [f["path"] for f in previous.get("files", [])] + ([CARD_NAME] if previous.get("card") else [])
    removed = []
    for rel in recorded:
        path = repo_dir / rel
        if rel in keep or not _safe_repo_path(rel) or not path.is_file():
            continue
        path.unlink()
        removed.append(rel)
        parent = path.parent
        while parent != repo_dir and not any(parent.iterdir()):  # drop folders left empty
            parent.rmdir()
            parent = parent.parent
    return removed


def fetch_dataset(api, ds: Dataset, raw_data_dir: Path, revision: str, pinned: dict | None = None,
                  previous: dict | None = None) -> Fetched:
    """Decide the files (:func:`plan_from_hub`, or :func:`plan_from_lock` for ``pinned``, a lock entry),
    download them and the card at the commit, remove the files of the ``previous`` fetch (its lock
    entry) not included now, and verify (contract schemas, the Hub's sizes and LFS sha256, the local
    layout, and ``pinned``)."""
    from huggingface_hub import hf_hub_download

    result = Fetched(ds, revision=revision)
    local_dir = ds.repo_dir(raw_data_dir)
    plan = plan_from_lock(api, ds, pinned, local_dir) if pinned is not None else plan_from_hub(api, ds, revision, local_dir)
    result.commit, result.source = plan.commit, plan.source

    try:
        ensure_writable_dir(local_dir)
    except FetchError as exc:
        raise FetchError(f"{_name(ds)}: {exc}") from None

    print(f"Fetching {ds.hub_id} @ {plan.where()} -> {local_dir}", file=sys.stderr, flush=True)
    for rel in plan.files:
        try:
            hf_hub_download(ds.hub_id, rel, repo_type="dataset", revision=plan.commit, local_dir=local_dir)
        except Exception as exc:  # noqa: BLE001 - classified into one line
            raise describe_error(exc, ds, revision, local_dir) from None
    try:
        if plan.card is not None:
            card_path = local_dir / CARD_NAME
            if not card_path.is_file() or card_path.read_bytes() != plan.card:
                card_path.write_bytes(plan.card)
        removed = remove_stale(ds, local_dir, plan, previous)
    except OSError as exc:
        raise FetchError(f"{_name(ds)}: {_os_error_message(exc, local_dir)}") from None
    if removed:
        shown = ", ".join(removed[:5]) + (f" and {len(removed) - 5} more" if len(removed) > 5 else "")
        print(f"{ds.hub_id}: removed {len(removed)} file(s) of the earlier fetch that this one ({plan.where()}) "
              f"does not include: {shown}", flush=True)

    result.files = [local_dir / rel for rel in plan.files]
    result.problems = verify_dataset(ds, local_dir, plan.files) + local_layout_problems(ds, local_dir, plan)
    try:
        result.lock_entry = lock_entry(ds, raw_data_dir, plan)
    except OSError as exc:
        raise FetchError(f"{_name(ds)}: {_os_error_message(exc, local_dir)}") from None
    for f in result.lock_entry["files"] + ([result.lock_entry["card"]] if result.lock_entry["card"] else []):
        sibling = plan.siblings.get(f["path"])
        lfs_sha = getattr(getattr(sibling, "lfs", None), "sha256", None)
        if (lfs_sha and lfs_sha != f["sha256"]) or (sibling is not None and sibling.size not in (None, f["size"])):
            result.problems.append(
                f"{local_dir / f['path']} does not match the Hub's size/sha256 for it (incomplete or corrupt "
                "download?); delete it and fetch again"
            )
    if pinned is not None:
        result.problems += lock_differences(result.lock_entry, pinned)
    return result


# --------------------------------------------------------------------------------------------
# main


def _error(message: str) -> None:
    error("fetch", message)


def _size(files: list[Path]) -> str:
    total = sum(p.stat().st_size for p in files)
    for unit in ("B", "KB", "MB", "GB"):
        if total < 1024 or unit == "GB":
            return f"{total:.0f} {unit}" if unit == "B" else f"{total:.1f} {unit}"
        total /= 1024
    return ""  # unreachable


def _has_data_files(ds: RawDataset, raw_data_dir: Path) -> bool:
    try:
        return bool(ds.data_files(raw_data_dir))
    except (OSError, ValueError):  # an unreadable card (LayoutError) counts as no data
        return False


def build_hint(raw_data_dir: Path) -> list[str]:
    """The command to build on ``raw_data_dir``, restricted to the dataset groups it has complete."""
    quoted = shlex.quote(str(raw_data_dir))
    members: dict[str, list[RawDataset]] = defaultdict(list)
    for d in DATASETS:
        members[d.group].append(d)
    complete = [g for g, ds in members.items() if all(_has_data_files(d, raw_data_dir) for d in ds)]
    if len(complete) == len(members):
        return [f"  RAW_DATA_DIR={quoted} make build", f"  (or: RAW_DATA_DIR={quoted} dbt build)"]
    incomplete = "; ".join(
        f"{g} needs {' + '.join(d.key for d in ds)}" for g, ds in members.items() if g not in complete
    )
    if not complete:
        return [f"  (nothing yet: no dataset group is complete in {raw_data_dir}: {incomplete})"]
    vars_arg = shlex.quote("{datasets: [" + ", ".join(complete) + "]}")
    return [
        f"  RAW_DATA_DIR={quoted} dbt build --vars {vars_arg}",
        f"  (incomplete there: {incomplete}; fetch them too to use `make build`)",
    ]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        raw_data_dir = resolve_raw_data_dir(args.raw_data_dir)
        ensure_writable_dir(raw_data_dir)
    except FetchError as exc:
        _error(str(exc))
        return EXIT_ERROR

    try:
        from huggingface_hub import HfApi
    except ImportError as exc:
        _error(f"huggingface_hub is not installed ({exc}); pip install -r requirements.txt")
        return EXIT_ERROR

    # A card without front matter is normal (no configs: the Hub's default patterns apply); huggingface_hub
    # would warn about it each time preftools.inputs.hub_layout reads the card.
    logging.getLogger("huggingface_hub.repocard").setLevel(logging.ERROR)
    api = HfApi()
    previous = read_previous_lock(raw_data_dir)  # what an earlier fetch downloaded (its stale files are removed)
    fetched: list[Fetched] = []
    failed = False
    for index, ds in enumerate(args.selected):
        pinned = args.lock_data["datasets"][ds.key] if args.lock_data is not None else None
        try:
            result = fetch_dataset(api, ds, raw_data_dir, revision_for(args, ds), pinned, previous.get(ds.key))
        except FetchError as exc:
            _error(str(exc))
            failed = True
            if exc.global_:
                rest = [d.key for d in args.selected[index + 1:]]
                if rest:
                    _error(f"stopped; not attempted: {', '.join(rest)}")
                break
            continue
        for problem in result.problems:
            _error(f"{ds.hub_id} ({ds.key}): {problem}")
            failed = True
        fetched.append(result)

    if fetched:
        print(f"\nFiles in {raw_data_dir}:")
        for r in fetched:
            status = "ok" if not r.problems else f"{len(r.problems)} problem(s)"
            asked = "" if r.revision == r.commit else f" ({r.revision})"
            via = f" via {CONVERT_REF}" if r.source == CONVERT_REF else ""
            print(
                f"  {r.dataset.key:<28} {r.dataset.hub_id}@{(r.commit or '?')[:12]}{asked}{via}  "
                f"{len(r.files)} file(s), {_size(r.files)}  {status}  -> {r.dataset.repo_dir(raw_data_dir)}"
            )
    try:
        lock_path = write_lock(raw_data_dir, fetched)
    except OSError as exc:
        _error(f"cannot write the lock file: {_os_error_message(exc, raw_data_dir / LOCK_NAME)}")
        return EXIT_ERROR
    if fetched and lock_path is not None:
        print(f"Commits and file hashes recorded in {lock_path} (reproduce with --lock {shlex.quote(str(lock_path))})")
    if failed:
        return EXIT_ERROR
    hint = build_hint(raw_data_dir)
    if not hint[0].lstrip().startswith("("):
        print("Build the warehouse on them with:")
    print("\n".join(hint))
    entries = [r.dataset.key for r in fetched if isinstance(r.dataset, Registered)]
    if entries:
        print(f"  the extra datasets and eval sets ({', '.join(entries)}) are built with the vars that register them: "
              + extra_build_hint(raw_data_dir, args.vars))
    return 0


def extra_build_hint(raw_data_dir: Path, vars_arg: str | None) -> str:
    """The dbt command that builds with the entries of ``--vars`` (or of dbt_project.yml)."""
    if vars_arg is None:
        return "those of dbt_project.yml, so the command above"
    is_file = Path(vars_arg).expanduser().is_file()
    quoted = f'"$(cat {shlex.quote(vars_arg)})"' if is_file else shlex.quote(vars_arg)
    return f"RAW_DATA_DIR={shlex.quote(str(raw_data_dir))} dbt build --vars {quoted}"


if __name__ == "__main__":
    sys.exit(run("fetch", main))
