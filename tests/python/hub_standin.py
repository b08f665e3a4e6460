"""A stand-in for the Hugging Face Hub: the one local HTTP server the fetcher's and the publisher's
tests talk to (huggingface_hub 2.x, run as a subprocess with HF_ENDPOINT pointing here and HF_HOME
in a temp dir, so nothing leaves the machine).

Reading (``HfApi.dataset_info`` + ``hf_hub_download``, preftools.inputs.fetch):

    GET  /api/datasets/<org>/<name>[/revision/<rev>]    repo info: sha, private, siblings (size, LFS sha256)
    GET  /api/datasets/<org>/<name>/tree/<rev>[/...]    recursive file listing (git blob ids)
    HEAD /datasets/<org>/<name>/resolve/<rev>/<path>    X-Repo-Commit, ETag, Content-Length
    GET  /datasets/<org>/<name>/resolve/<rev>/<path>    the bytes

Writing (``create_repo(exist_ok=True)`` + ``create_branch`` + ``upload_folder(delete_patterns=...)``
of small files, preftools.outputs.publish):

    POST /api/repos/create                              200, or 409 (with its URL) when the repo exists
    POST /api/validate-yaml                             the card's front matter must be YAML
    POST /api/datasets/<org>/<name>/branch/<branch>     a branch from main (409 if it exists)
    POST /api/datasets/<org>/<name>/preupload/<rev>     uploadMode "regular" for every file, so the
                                                        contents travel base64 in the commit (no LFS
                                                        or Xet transfer: huggingface_hub takes the
                                                        mode from the server)
    POST /api/datasets/<org>/<name>/commit/<rev>        NDJSON: header, file, deletedFile; an lfsFile
                                                        line is refused

<rev> is a branch, a commit or another ref such as ``refs/convert/parquet`` (the Hub's Parquet
conversion), which huggingface_hub sends URL-encoded as one path segment (``refs%2Fconvert%2Fparquet``;
an unencoded ref matches no route, as on the Hub). A request whose Authorization is not
``Bearer <token>``, or a POST without one, gets the Hub's 401; reads need no token.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import re
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

import yaml

TOKEN = "hf_test_write_token"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def hub_env(endpoint: str, hf_home, *, token: str | None = None, unset: tuple[str, ...] = (), **extra: str) -> dict:
    """The environment of a preftools subprocess that talks to the Hub at ``endpoint``: the caller's
    without its HF_*/HUGGINGFACE_* settings, proxies and the names in ``unset``; HF_HOME in
    ``hf_home`` (never the user's cache), ``token`` as HF_TOKEN, short timeouts, no Xet transfer,
    telemetry or progress bars; ``extra`` last."""
    drop = {"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", *unset}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_")) and k.upper() not in drop}
    env.update(HF_ENDPOINT=endpoint, HF_HOME=str(hf_home), HF_HUB_DISABLE_XET="1", HF_HUB_DISABLE_TELEMETRY="1",
               HF_HUB_DISABLE_PROGRESS_BARS="1", HF_HUB_ETAG_TIMEOUT="5", HF_HUB_DOWNLOAD_TIMEOUT="5",
               NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost",
               PYTHONPATH=REPO + os.pathsep + env.get("PYTHONPATH", ""))
    if token:
        env["HF_TOKEN"] = token
    env.update(extra)
    return {k: v for k, v in env.items() if v is not None}


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class FakeHub:
    """repos: repo_id -> {path: bytes} at main. push() moves main to a new commit and set_ref()
    points another branch or ref at one; earlier commits stay reachable by their sha.
    gated: repo ids answered with 401 GatedRepo; bad_lfs: repo ids whose listing advertises a wrong
    LFS sha256 (a corrupt download); private: repo ids created private.
    commits (what publish committed), validated (cards sent to validate-yaml) and requests
    (method, path as sent) record what clients did."""

    def __init__(self) -> None:
        self.repos: dict[str, dict[str, bytes]] = {}
        self.gated: set[str] = set()
        self.bad_lfs: set[str] = set()
        self.private: set[str] = set()
        self.heads: dict[str, str] = {}
        self.refs: dict[str, dict[str, str]] = {}  # repo_id -> ref name -> commit (besides main)
        self.history: dict[str, dict[str, dict[str, bytes]]] = {}
        self.commits: list[dict] = []
        self.validated: list[str] = []
        self.requests: list[tuple[str, str]] = []
        self.token = TOKEN
        self.endpoint = ""
        self.lock = threading.Lock()

    def add_repo(self, repo_id: str, files: dict[str, bytes] | None = None, private: bool = False) -> None:
        self.repos[repo_id] = dict(files or {})
        if private:
            self.private.add(repo_id)

    def sha(self, repo_id: str) -> str:
        """The commit main points to."""
        return self.heads.get(repo_id) or hashlib.sha1(repo_id.encode()).hexdigest()

    def push(self, repo_id: str, files: dict[str, bytes]) -> str:
        old = self.sha(repo_id)
        self.history.setdefault(repo_id, {})[old] = self.repos[repo_id]
        self.repos[repo_id] = files
        self.heads[repo_id] = hashlib.sha1(f"{repo_id}@{old}".encode()).hexdigest()
        return self.heads[repo_id]

    def set_ref(self, repo_id: str, ref: str, files: dict[str, bytes]) -> str:
        """Point ``ref`` at a new commit holding ``files`` (the earlier commit stays reachable)."""
        history = self.history.setdefault(repo_id, {})
        commit = hashlib.sha1(f"{repo_id}@{ref}#{len(history)}".encode()).hexdigest()
        history[commit] = files
        self.refs.setdefault(repo_id, {})[ref] = commit
        return commit

    def files_at(self, repo_id: str, rev: str) -> tuple[str, dict[str, bytes]] | None:
        """(commit, files) of a branch name, ref or commit sha; None for an unknown revision."""
        if rev == "main" or rev == self.sha(repo_id):
            return self.sha(repo_id), self.repos[repo_id]
        if rev in self.refs.get(repo_id, {}):
            rev = self.refs[repo_id][rev]
        if rev in self.history.get(repo_id, {}):
            return rev, self.history[repo_id][rev]
        return None

    def files(self, repo_id: str, branch: str = "main") -> dict[str, bytes]:
        found = self.files_at(repo_id, branch)
        assert found is not None, f"{repo_id} has no {branch}"
        return found[1]


def make_handler(hub: FakeHub):
    repo_re = re.compile(r"^/api/datasets/([^/]+/[^/]+)(?:/(revision|tree|branch|preupload|commit)/([^/]+)(?:/.*)?)?$")
    resolve_re = re.compile(r"^/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)$")

    class Handler(BaseHTTPRequestHandler):
        timeout = 20  # never hang on a stuck client

        def log_message(self, *args):  # keep pytest output clean
            pass

        def _send(self, status: int, body: bytes = b"", headers: dict | None = None, content_type="application/json"):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                self._write_body(body)

        def _write_body(self, body: bytes):
            self.wfile.write(body)

        def _json(self, status: int, body: object, headers: dict | None = None):
            return self._send(status, json.dumps(body).encode(), headers)

        def _error(self, status: int, message: str, code: str | None = None):
            headers = {"X-Error-Message": message, **({"X-Error-Code": code} if code else {})}
            return self._json(status, {"error": message}, headers)

        def _body(self) -> bytes:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                chunks = []
                while size := int(self.rfile.readline().strip() or b"0", 16):
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
                self.rfile.readline()
                return b"".join(chunks)
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _at(self, repo_id: str, rev: str):
            """(commit, files) at ``rev``, or None after answering the error."""
            if repo_id in hub.gated:
                self._error(401, "Access to this dataset is restricted", "GatedRepo")
                return None
            if repo_id not in hub.repos:
                self._error(404, "Repository not found", "RepoNotFound")
                return None
            found = hub.files_at(repo_id, rev)
            if found is None:
                self._error(404, f"Invalid rev id: {rev}", "RevisionNotFound")
            return found

        def _sibling(self, repo_id: str, path: str, body: bytes) -> dict:
            sibling = {"rfilename": path, "size": len(body), "blobId": git_blob_sha1(body)}
            if path.endswith((".parquet", ".gz", ".zst")):  # stored with LFS on the Hub
                sha256 = hashlib.sha256(body + (b"x" if repo_id in hub.bad_lfs else b"")).hexdigest()
                sibling["lfs"] = {"sha256": sha256, "size": len(body), "pointerSize": 134}
            return sibling

        def _handle(self):
            path = urlsplit(self.path).path  # matched encoded: a ref's "/" is %2F inside one segment
            body = self._body() if self.command == "POST" else b""
            with hub.lock:
                hub.requests.append((self.command, path))
            auth = self.headers.get("Authorization")
            if (auth is not None or self.command == "POST") and auth != f"Bearer {hub.token}":
                return self._error(401, "Invalid credentials in Authorization header")
            if self.command == "POST":
                with hub.lock:
                    return self._write(path, body)
            return self._read(path)

        def _read(self, path: str):
            if m := repo_re.match(path):
                repo_id, action, rev = unquote(m.group(1)), m.group(2), unquote(m.group(3) or "main")
                if action not in (None, "revision", "tree"):
                    return self._error(404, "unknown route")
                if (found := self._at(repo_id, rev)) is None:
                    return None
                commit, files = found
                if action == "tree":
                    folders = sorted({p.rsplit("/", 1)[0] for p in files if "/" in p})
                    entries = [{"type": "directory", "oid": "0" * 40, "path": d} for d in folders]
                    entries += [{"type": "file", "oid": git_blob_sha1(b), "size": len(b), "path": p}
                                for p, b in sorted(files.items())]
                    return self._json(200, entries)
                return self._json(200, {"id": repo_id, "sha": commit, "private": repo_id in hub.private,
                                        "siblings": [self._sibling(repo_id, p, b) for p, b in sorted(files.items())]})
            if m := resolve_re.match(path):
                repo_id, rev, filename = map(unquote, m.groups())
                if (found := self._at(repo_id, rev)) is None:
                    return None
                commit, files = found
                if filename not in files:
                    return self._send(404, b"{}", {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": commit})
                data = files[filename]
                headers = {"X-Repo-Commit": commit, "ETag": f'"{git_blob_sha1(data)}"'}
                return self._send(200, data, headers, "application/octet-stream")
            return self._error(404, "unknown route")

        def _write(self, path: str, body: bytes):
            if path == "/api/repos/create":
                payload = json.loads(body)
                repo_id = f"{payload['organization']}/{payload['name']}"
                if payload.get("type") != "dataset":
                    return self._error(400, "only dataset repos here")
                if repo_id in hub.repos:  # the Hub's 409 carries the repo URL, which create_repo reads
                    message = "You already created this dataset repo"
                    return self._json(409, {"error": message, "url": f"{hub.endpoint}/datasets/{repo_id}"},
                                      {"X-Error-Message": message})
                hub.add_repo(repo_id, private=payload.get("visibility") == "private")
                return self._json(200, {"url": f"{hub.endpoint}/datasets/{repo_id}", "name": repo_id})
            if path == "/api/validate-yaml":
                content = json.loads(body)["content"]
                hub.validated.append(content)
                match = re.match(r"---\n(.*?)\n---\n", content, re.S)
                try:
                    ok = match is not None and isinstance(yaml.safe_load(match.group(1)), dict)
                except yaml.YAMLError:
                    ok = False
                if not ok:
                    return self._json(400, {"errors": [{"message": "front matter is not a YAML mapping"}]})
                return self._json(200, {"errors": [], "warnings": []})
            m = repo_re.match(path)
            if not m or m.group(2) not in ("branch", "preupload", "commit"):
                return self._error(404, "unknown route")
            repo_id, action, rev = unquote(m.group(1)), m.group(2), unquote(m.group(3))
            if action == "branch":
                if repo_id not in hub.repos:
                    return self._error(404, "Repository not found", "RepoNotFound")
                if hub.files_at(repo_id, rev) is not None:
                    return self._error(409, "Reference already exists")
                hub.set_ref(repo_id, rev, dict(hub.repos[repo_id]))
                return self._json(200, {})
            if (found := self._at(repo_id, rev)) is None:
                return None
            commit, files = found
            if action == "preupload":
                out = [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False,
                        "oid": git_blob_sha1(files[f["path"]]) if f["path"] in files else None}
                       for f in json.loads(body)["files"]]
                return self._json(200, {"files": out, "commitOid": commit})
            return self._commit(repo_id, files, rev, body)

        def _commit(self, repo_id: str, files: dict[str, bytes], branch: str, body: bytes):
            new = dict(files)
            summary = []
            for line in (json.loads(line) for line in body.splitlines() if line.strip()):
                key, value = line["key"], line["value"]
                if key == "header":
                    summary.append(("header", value["summary"]))
                elif key == "file":
                    assert value.get("encoding") == "base64"
                    new[value["path"]] = base64.b64decode(value["content"])
                    summary.append(("file", value["path"]))
                elif key == "deletedFile":
                    if value["path"] not in new:
                        return self._error(404, "A file with this name doesn't exist", "EntryNotFound")
                    del new[value["path"]]
                    summary.append(("deletedFile", value["path"]))
                else:  # lfsFile, deletedFolder, ...: not expected from a regular upload
                    return self._error(400, f"unexpected commit operation {key}")
            oid = hub.push(repo_id, new) if branch == "main" else hub.set_ref(repo_id, branch, new)
            hub.commits.append({"repo": repo_id, "branch": branch, "oid": oid, "ops": summary})
            return self._json(200, {"success": True, "commitOid": oid, "hookOutput": "",
                                    "commitUrl": f"{hub.endpoint}/datasets/{repo_id}/commit/{oid}"})

        do_GET = _handle
        do_HEAD = _handle
        do_POST = _handle

    return Handler


@contextlib.contextmanager
def serving(hub: FakeHub, handler_class=None):
    """``hub`` served on a local port (its ``endpoint`` set) until the block ends; ``handler_class``
    is a subclass of ``make_handler(hub)`` that changes what some requests get."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_class or make_handler(hub))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    hub.endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield hub
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def closed_port() -> int:
    """A local port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
