"""Upload one exported mart to the Hugging Face Hub as a dataset repo.

    python -m preftools.publish --export-dir EXPORT_DIR --repo ORG/NAME [--mart preference_pairs]
                                [--private] [--revision BRANCH] [--token TOKEN]
    make publish REPO=org/name [MART=ultrafeedback_curated]

What is uploaded: the folder ``EXPORT_DIR/<mart>/`` that ``python -m preftools.export`` wrote, i.e.
its dataset card ``README.md`` (whose ``configs`` name the splits: for ``preference_pairs`` one per
dataset, the ``extra_datasets`` entries included, and each ``<dataset>_flagged``; for
``training_mixture`` the split ``training_mixture``) and ``data/*.parquet``, with
``huggingface_hub`` (``HfApi.create_repo(repo_type="dataset", exist_ok=True)``, then
``upload_folder``). Remote ``data/*`` files that the export no longer has (a split or shard of an
earlier publish) are deleted by the same commit, so ``load_dataset("ORG/NAME")`` never mixes two
exports. ``--revision`` uploads to that branch, created from ``main`` if it does not exist.

Before any request the export is checked against ``EXPORT_DIR/manifest.json``: every file of the
mart (card included) must be there with the size and sha256 the manifest records, and nothing
else may be in the folder; a half-written, tampered or hand-edited export is refused. So is a mart
with no rows (``datasets`` cannot load an empty split; e.g. ``training_mixture`` of a build
without the ``mixture`` var).

Secrets (docs/pii.md): a mart whose manifest entry says its secrets were kept (``redaction.secrets``
"kept": exported with ``--keep-secrets``), or records no redaction (exported before exports redacted
secrets), is refused before its files are read. Then, the files having passed the checks above, every
one about to be uploaded is scanned again (preftools.outputs.pii: the secret patterns of the seed
``pii_patterns``; each Parquet file's every string, nested lists and structs included, and the card's
text): a match stops the publish, naming the file, the column and the count. While the
upload runs it holds the export directory's lock (shared), so a concurrent export cannot swap the
folder underneath it.

The Hub is reached through huggingface_hub, which reads HF_ENDPOINT, HF_TOKEN (or the token saved
by ``hf auth login``), HF_HUB_OFFLINE, HF_HUB_DISABLE_XET and the usual proxy variables.

Errors are one line on stderr and exit code 2; no tracebacks (set ``PREFTOOLS_DEBUG=1`` to get
one for an unexpected error).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from preftools import __version__
from preftools.cli import EXIT_ERROR, EXIT_INTERRUPTED, HF_LOGIN_HINT, error, one_line, run, project_path
from preftools.files import CARD_NAME, DEFAULT_EXPORT_DIR, LOCK_FILE, MANIFEST

DEFAULT_MART = "preference_pairs"
REPO_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*")
# Remote files this publish owns: data files the export no longer has are deleted.
DELETE_PATTERNS = ["data/*"]
CONNECT_TIMEOUT = 30.0  # seconds to open a connection (huggingface_hub sets none)
LOGIN_HINT = HF_LOGIN_HINT
WRITE_LOGIN_HINT = f"{LOGIN_HINT} with a token that has write access"

EPILOG = """\
The export is checked against EXPORT_DIR/manifest.json (size and sha256 of every file) before
anything is sent; an export made with --keep-secrets is refused, and every file is scanned for
secrets (keys, tokens, private keys: the seed pii_patterns) again. The repo is created if missing (--private applies only then); remote data/*
files the export does not have are deleted in the same commit.

huggingface_hub reads HF_ENDPOINT (another Hub), HF_TOKEN (or the token saved by
`hf auth login`), HF_HUB_OFFLINE and the proxy variables. Prefer HF_TOKEN to --token: a token
on the command line shows in the process list.

Then: datasets.load_dataset("ORG/NAME") gives the splits the card lists.
"""


class PublishError(Exception):
    """A problem to report as one line."""


# --------------------------------------------------------------------------------------------
# command line


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="preftools publish",
        description=(
            "Upload one exported mart (EXPORT_DIR/<mart>/: its dataset card README.md and\n"
            "data/*.parquet, as written by `preftools export`) to the Hugging Face Hub\n"
            "as a dataset repo."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--export-dir",
        default=None,
        help=f"the export to publish from (default: $EXPORT_DIR, else {DEFAULT_EXPORT_DIR}/)",
    )
    parser.add_argument("--repo", required=True, help="the Hub dataset repo, ORG/NAME (created if missing)")
    parser.add_argument(
        "--mart", default=DEFAULT_MART,
        help=f"the mart folder to upload, e.g. training_mixture (default: {DEFAULT_MART}, every dataset's splits)",
    )
    parser.add_argument(
        "--private", action="store_true", help="create the repo private (no effect on a repo that already exists)"
    )
    parser.add_argument(
        "--revision",
        default=None,
        help="branch to commit to (default: main); created from main if it does not exist",
    )
    parser.add_argument(
        "--token",
        default=None,
        help="Hugging Face token with write access (default: HF_TOKEN, else the token saved by `hf auth login`)",
    )
    args = parser.parse_args(argv)
    if args.revision is not None and not args.revision.strip():
        parser.error("--revision must not be empty")
    return args


def check_repo_id(repo: str) -> str:
    """``ORG/NAME`` as the Hub accepts it, or a one-line refusal."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    repo = repo.strip()
    problem = None
    if not REPO_ID.fullmatch(repo):
        problem = "it must be ORG/NAME (letters, digits, '-', '_', '.'; one '/')"
    else:
        try:
            validate_repo_id(repo)
        except HFValidationError as exc:
            problem = one_line(exc)
    if problem:
        raise PublishError(f"--repo {repo!r} is not a valid Hub repo id: {problem}; e.g. --repo my-org/preference-pairs")
    return repo


# --------------------------------------------------------------------------------------------
# the export on disk


@dataclass
class VerifiedMart:
    name: str
    folder: Path
    files: list[str]  # paths relative to the mart folder, sorted ("README.md", "data/...parquet")
    num_rows: int
    num_bytes: int
    splits: dict[str, int]


def _load_manifest(export_dir: Path) -> dict:
    path = export_dir / MANIFEST
    if not export_dir.is_dir():
        raise PublishError(
            f"no export at {export_dir}: run `make export` (or `preftools export --export-dir {export_dir}`) first"
        )
    if not path.is_file():
        raise PublishError(
            f"{export_dir} has no {MANIFEST} (not an export, or one that did not finish): "
            f"run `preftools export --export-dir {export_dir}` again"
        )
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PublishError(f"cannot read {path}: {one_line(exc)}; run the export again") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("marts"), dict):
        raise PublishError(f"{path} is not an export manifest (no \"marts\"); run the export again")
    return manifest


def _expected_files(entry: dict, mart: str, manifest_path: Path) -> dict[str, tuple[int, str]]:
    """relative path -> (bytes, sha256) of every file of the mart, card included."""
    card = entry.get("card")
    if not isinstance(card, dict) or not card.get("sha256"):
        raise PublishError(
            f"the export of {mart} in {manifest_path.parent} has no dataset card (made before cards existed); "
            f"re-export it: preftools export --export-dir {manifest_path.parent} --marts {mart}"
        )
    expected: dict[str, tuple[int, str]] = {}
    for item in [*entry.get("files", []), card]:
        try:
            path, size, digest = str(item["path"]), int(item["num_bytes"]), str(item["sha256"])
        except (KeyError, TypeError, ValueError):
            raise PublishError(f"{manifest_path} has a malformed file entry for {mart}; run the export again") from None
        rel = PurePosixPath(path)
        if rel.is_absolute() or ".." in rel.parts or rel.parts[:1] != (mart,) or len(rel.parts) < 2:
            raise PublishError(f"{manifest_path} lists {path!r}, outside the folder of {mart}; run the export again")
        expected[str(PurePosixPath(*rel.parts[1:]))] = (size, digest)
    return expected


def _files_on_disk(folder: Path) -> list[str]:
    out = []
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for name in names:
            out.append((Path(root) / name).relative_to(folder).as_posix())
    return sorted(out)


def verify_export(export_dir: Path, mart: str) -> VerifiedMart:
    """Check ``export_dir/<mart>/`` against the manifest: the same files, sizes and sha256, nothing more."""
    manifest = _load_manifest(export_dir)
    manifest_path = export_dir / MANIFEST
    marts = manifest["marts"]
    if mart not in marts:
        have = ", ".join(sorted(marts)) or "none"
        raise PublishError(f"mart {mart!r} is not in the export at {export_dir} (it has: {have}); choose another --mart")
    entry = marts[mart]
    check_redaction(entry, export_dir, mart)
    folder = export_dir / mart
    if folder.is_symlink() or not folder.is_dir():
        raise PublishError(f"{folder} is missing or not a folder, but {manifest_path} lists it; run the export again")
    expected = _expected_files(entry, mart, manifest_path)
    try:
        on_disk = _files_on_disk(folder)
    except OSError as exc:
        raise PublishError(f"cannot list {folder}: {one_line(exc)}") from None

    missing = sorted(set(expected) - set(on_disk))
    extra = sorted(set(on_disk) - set(expected))
    if missing:
        raise PublishError(
            f"{folder / missing[0]} is missing ({len(missing)} file(s) of {manifest_path} absent: a half-written or "
            "changed export); run the export again"
        )
    if extra:
        raise PublishError(
            f"{folder / extra[0]} is not part of the export ({len(extra)} file(s) not in {manifest_path}); "
            "remove them or run the export again"
        )
    for rel in sorted(expected):
        size, digest = expected[rel]
        path = folder / rel
        try:
            if path.is_symlink() or not path.is_file():
                raise PublishError(f"{path} is not a regular file; run the export again")
            if path.stat().st_size != size:
                raise PublishError(
                    f"{path} has {path.stat().st_size} bytes, {manifest_path} says {size} "
                    "(a half-written or changed export); run the export again"
                )
            with open(path, "rb") as fh:
                actual = hashlib.file_digest(fh, "sha256").hexdigest()
        except OSError as exc:
            raise PublishError(f"cannot read {path}: {one_line(exc.strerror or exc)}") from None
        if actual != digest:
            raise PublishError(
                f"{path} does not match {manifest_path} (sha256 differs: the export was changed or only partly "
                "written); run the export again"
            )
    splits = entry.get("splits") if isinstance(entry.get("splits"), dict) else {}
    if not int(entry.get("num_rows") or 0):
        hint = (
            "the build set no `mixture` var: build with it (dbt build --vars '{mixture: {ultrafeedback: 0.5}}'), "
            "export again, then publish"
            if mart == "training_mixture" else "choose a mart with rows"
        )
        raise PublishError(
            f"mart {mart} has no rows in the export at {export_dir} (`datasets` cannot load an empty split, so the "
            f"Hub dataset would not load); {hint}"
        )
    return VerifiedMart(
        name=mart,
        folder=folder,
        files=sorted(expected),
        num_rows=int(entry.get("num_rows") or 0),
        num_bytes=sum(size for size, _ in expected.values()),
        splits={str(k): int(v) for k, v in splits.items()},
    )


def _export_again(export_dir: Path, mart: str, how: str = "") -> str:
    return f"export again{how}: preftools export --export-dir {export_dir} --marts {mart}"


def check_redaction(entry: dict, export_dir: Path, mart: str) -> None:
    """Refuse a mart whose manifest entry says its secrets were kept, or records no redaction."""
    redaction = entry.get("redaction")
    secrets = redaction.get("secrets") if isinstance(redaction, dict) else None
    if secrets == "kept":
        raise PublishError(
            f"the export of {mart} in {export_dir} kept its secrets (exported with --keep-secrets: {MANIFEST} says "
            f"redaction.secrets \"kept\"), so it is not published; {_export_again(export_dir, mart, ' without --keep-secrets')}"
        )
    if secrets != "redacted":
        raise PublishError(
            f"the export of {mart} in {export_dir} records no redaction of secrets in {MANIFEST} (made before exports "
            f"redacted them), so it may hold some; {_export_again(export_dir, mart)}"
        )


def check_no_secrets(verified: VerifiedMart) -> None:
    """Scan every file about to be uploaded for secrets (every string of a Parquet file, nested
    ones included; the card's text) and refuse on the first file with a match."""
    import pyarrow as pa

    from preftools.outputs import pii

    try:
        rule = pii.load_rule()
    except pii.RuleError as exc:
        raise PublishError(str(exc)) from None
    for rel in verified.files:
        path = verified.folder / rel
        try:
            if rel.endswith(".parquet"):
                found = pii.scan_parquet(path, rule)
            else:
                found = {None: pii.scan_text(path.read_text(encoding="utf-8"), rule)} if rel == CARD_NAME else {}
        except (OSError, UnicodeDecodeError, pa.ArrowException) as exc:
            raise PublishError(f"cannot read {path}: {one_line(exc)}; run the export again") from None
        found = {column: n for column, n in found.items() if n}
        if not found:
            continue
        column, n = next(iter(found.items()))
        where = "its text" if column is None else f"column {column}"
        more = f" (and {len(found) - 1} other column(s))" if len(found) > 1 else ""
        raise PublishError(
            f"{path}: {where} holds {n:,} secret match(es){more} (keys, tokens or private keys: the seed pii_patterns), "
            f"so nothing was sent; {_export_again(verified.folder.parent, verified.name, ' without --keep-secrets')} "
            "(it replaces them with [REDACTED_SECRET])"
        )


@contextlib.contextmanager
def shared_export_lock(export_dir: Path) -> Iterator[None]:
    """Hold ``.export.lock`` shared: an export (which takes it exclusively) cannot swap folders meanwhile."""
    try:
        fd = os.open(export_dir / LOCK_FILE, os.O_RDONLY)
    except FileNotFoundError:
        yield  # never exported into with locking; nothing to exclude
        return
    except OSError as exc:
        raise PublishError(f"cannot open {export_dir / LOCK_FILE}: {one_line(exc.strerror or exc)}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise PublishError(f"an export into {export_dir} is running; wait for it to finish, then publish") from None
        yield
    finally:
        os.close(fd)


# --------------------------------------------------------------------------------------------
# the Hub


def _endpoint() -> str:
    from huggingface_hub import constants

    return constants.ENDPOINT.rstrip("/")


def _status(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None)


def _detail(exc: BaseException) -> str:
    response = getattr(exc, "response", None)
    message = None
    if response is not None:
        message = response.headers.get("X-Error-Message")
        if not message:
            with contextlib.suppress(Exception):
                body = response.json()
                message = body.get("error") if isinstance(body, dict) else None
    return f": {one_line(message, 200)}" if message else ""


def describe_error(exc: BaseException, repo: str, revision: str) -> PublishError:
    """One line for anything huggingface_hub, httpx2, hf_xet or the OS raises while publishing."""
    import httpx2
    from huggingface_hub import errors as hf_errors

    endpoint = _endpoint()
    url = f"{endpoint}/datasets/{repo}"

    if isinstance(exc, hf_errors.OfflineModeIsEnabled):
        return PublishError("HF_HUB_OFFLINE is set, so the Hub is not contacted; unset it to publish")
    if isinstance(exc, httpx2.ProxyError):
        return PublishError(f"proxy error reaching {endpoint}: {one_line(exc)}; check HTTPS_PROXY/HTTP_PROXY")
    if isinstance(exc, httpx2.TimeoutException):
        return PublishError(
            f"timed out talking to the Hub at {endpoint} ({type(exc).__name__}); check the network or HF_ENDPOINT, "
            "then publish again (files already uploaded are not sent twice)"
        )
    if isinstance(exc, (httpx2.NetworkError, httpx2.UnsupportedProtocol, ConnectionError)):
        return PublishError(
            f"cannot reach the Hugging Face Hub at {endpoint} ({one_line(exc) or type(exc).__name__}); "
            "check your internet connection/proxy, or HF_ENDPOINT"
        )
    if isinstance(exc, httpx2.TransportError):
        return PublishError(f"network error talking to {endpoint}: {type(exc).__name__}: {one_line(exc)}")

    if isinstance(exc, hf_errors.HfHubHTTPError):
        status = _status(exc)
        detail = _detail(exc)
        if status == 401:
            return PublishError(
                f"HTTP 401 unauthorized at {endpoint}{detail}; the token is missing, invalid or expired: {WRITE_LOGIN_HINT}"
            )
        if status == 403:
            return PublishError(
                f"HTTP 403 forbidden for {url}{detail}; your token may not write to the {repo.split('/')[0]} "
                f"namespace (read-only or fine-grained token?): {WRITE_LOGIN_HINT}"
            )
        if isinstance(exc, hf_errors.RevisionNotFoundError):
            return PublishError(f"revision {revision!r} not found in {url}{detail}; check --revision")
        if status == 404 or isinstance(exc, hf_errors.RepositoryNotFoundError):
            return PublishError(
                f"dataset repo {repo} not found or not writable at {url} (HTTP {status}){detail}; check the ORG part "
                f"of --repo and your membership of it, and {WRITE_LOGIN_HINT}"
            )
        if status == 409:
            return PublishError(f"HTTP 409 conflict committing to {url}@{revision}{detail}; publish again")
        if status == 429:
            return PublishError(f"HTTP 429 rate limited by the Hub{detail}; wait and publish again")
        if status == 413:
            return PublishError(f"HTTP 413 the Hub refused a request as too large{detail}")
        if status is not None and status >= 500:
            return PublishError(f"the Hub at {endpoint} answered HTTP {status}{detail}; try again later")
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return PublishError(f"HTTP {status} from the Hub at {url}{detail}: {one_line(first)}")

    if isinstance(exc, ValueError) and str(exc).startswith("Invalid metadata in README.md"):
        return PublishError(f"the Hub refused the dataset card README.md: {one_line(exc)}")
    if isinstance(exc, OSError):
        where = f" {exc.filename}" if getattr(exc, "filename", None) else ""
        return PublishError(f"cannot read{where}: {one_line(exc.strerror or exc)}")
    if isinstance(exc, (ValueError, KeyError)):  # a non-JSON or odd answer from a wrong HF_ENDPOINT
        return PublishError(
            f"unexpected answer from {endpoint} ({type(exc).__name__}: {one_line(exc)}); is HF_ENDPOINT a Hugging Face Hub?"
        )
    return PublishError(f"{type(exc).__name__}: {one_line(exc)}")


def _with_connect_timeout() -> None:
    """huggingface_hub's HTTP client, with a connect timeout so an unroutable endpoint fails in
    CONNECT_TIMEOUT seconds rather than hanging (reads and writes keep no timeout: big commits)."""
    import httpx2
    from huggingface_hub import set_client_factory
    from huggingface_hub.utils import _http

    base = getattr(_http, "default_client_factory", None)
    if base is None:
        return

    def factory():
        client = base()
        client.timeout = httpx2.Timeout(None, connect=CONNECT_TIMEOUT)
        return client

    set_client_factory(factory)


def hub_client(token: str | None):
    """An HfApi for the upload, or a refusal (offline, no token at all) before any request."""
    from huggingface_hub import HfApi, constants, get_token

    if constants.HF_HUB_OFFLINE:
        raise PublishError("HF_HUB_OFFLINE is set, so the Hub is not contacted; unset it to publish")
    if not token and not get_token():
        raise PublishError(f"no Hugging Face token: {WRITE_LOGIN_HINT} (or pass --token)")
    _with_connect_timeout()
    return HfApi(token=token)


def upload(api, verified: VerifiedMart, repo: str, *, private: bool, revision: str | None):
    """create_repo + (create_branch) + upload_folder; returns huggingface_hub's CommitInfo."""
    from huggingface_hub import constants

    branch = revision or constants.DEFAULT_REVISION
    rows = f"{verified.num_rows:,} rows in {', '.join(verified.splits) or 'no split'}"
    try:
        api.create_repo(repo, repo_type="dataset", private=True if private else None, exist_ok=True)
        if branch != constants.DEFAULT_REVISION:
            api.create_branch(repo, branch=branch, repo_type="dataset", exist_ok=True)
        return api.upload_folder(
            repo_id=repo,
            repo_type="dataset",
            folder_path=verified.folder,
            revision=branch,
            allow_patterns=verified.files,  # exactly the verified files
            delete_patterns=DELETE_PATTERNS,
            commit_message=f"Publish {verified.name} ({rows})",
            commit_description=(
                f"Exported mart {verified.name} of the preference-data warehouse, uploaded by preftools {__version__} "
                "after checking every file against the export's manifest.json. Provenance: see README.md."
            ),
        )
    except PublishError:
        raise
    except Exception as exc:  # noqa: BLE001 - classified into one line
        raise describe_error(exc, repo, branch) from None


def publish(export_dir: Path, repo: str, mart: str = DEFAULT_MART, *, private: bool = False,
            revision: str | None = None, token: str | None = None) -> tuple[str, VerifiedMart]:
    """Verify ``export_dir/<mart>`` against the manifest and scan it for secrets, upload it; returns
    (commit URL, what was uploaded)."""
    repo = check_repo_id(repo)
    export_dir = Path(export_dir).expanduser().absolute()
    with shared_export_lock(export_dir) if export_dir.is_dir() else contextlib.nullcontext():
        verified = verify_export(export_dir, mart)
        check_no_secrets(verified)
        api = hub_client(token)
        print(
            f"Publishing {mart} ({verified.num_rows:,} rows, {len(verified.files)} files, "
            f"{verified.num_bytes / 1e6:,.1f} MB, checked against {MANIFEST}, no secret found) to {_endpoint()}/datasets/{repo}"
            + (f" (revision {revision})" if revision else ""),
            file=sys.stderr,
            flush=True,
        )
        info = upload(api, verified, repo, private=private, revision=revision)
    return str(info.commit_url), verified


# --------------------------------------------------------------------------------------------
# main


def _error(message: str) -> None:
    error("publish", message)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    export_dir = Path(args.export_dir) if args.export_dir else project_path(os.environ.get("EXPORT_DIR") or DEFAULT_EXPORT_DIR)
    try:
        url, verified = publish(
            export_dir, args.repo, args.mart, private=args.private, revision=args.revision, token=args.token
        )
    except PublishError as exc:
        _error(str(exc))
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("publish: interrupted; publish again to finish (files the Hub already has are not sent twice)",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    print(f"published {verified.name} ({verified.num_rows:,} rows, {len(verified.files)} files) to {args.repo.strip()}: {url}")
    return 0


if __name__ == "__main__":
    sys.exit(run("publish", main))
