"""A dbt-duckdb plugin that turns the faults a build can meet into one clear line each.

- **A locked warehouse.** DuckDB lets one process open a database file for writing, and no
  other process open it at all meanwhile (readers with ``read_only=True`` share it among
  themselves, not with a writer). When a second ``dbt build`` runs, or an export, the report or a
  notebook holds ``warehouse.duckdb``, dbt-duckdb's connect fails deep inside dbt's error
  handling and prints a Python traceback. This plugin tries the lock first, just before
  dbt-duckdb connects, and raises a dbt error that dbt prints as a message: which file, which
  process holds it (and the command it runs), what to do.
- **dbt show only reads.** ``dbt show`` opens the warehouse read-only (DuckDB's ``access_mode``,
  set here, where dbt-duckdb takes the connection's config), so it runs beside a notebook or an
  export that reads the file, and never creates a warehouse file.
- **Nothing left behind.** A warehouse file this process created and left without a table or view
  (a build whose input check failed: dbt creates the schemas before the on-run-start check runs)
  is removed when the process exits, so a failed check leaves no file behind.
- **A full disk.** DuckDB's ``TransactionContext Error: Failed to commit: Could not write file
  ".../warehouse.duckdb.wal": No space left on device`` becomes one line naming the file, the
  disk and its free space, and saying what state the marts are in (the failed model was rolled
  back; every mart holds its previous version or the one this build finished).
- **A corrupt raw file.** DuckDB's Parquet reader reports some damage without naming the file
  (``don't know what type``, ``dictionary offset out of range``...), and the rest with a SQL
  excerpt. When a statement that reads raw data files fails, each file it reads is read in full
  once more, and the first one that cannot be read is named in one line with what to do. A
  statement that reads them through the staging views names no file: then every raw dataset's
  files under ``RAW_DATA_DIR`` are checked (once per file in the process).

- **Row groups sized for a build.** The warehouse file is ATTACHed (with ``ROW_GROUP_SIZE``) to an
  in-memory database, which every cursor then ``USE``s, instead of being opened as the main
  database: DuckDB takes a row group size only in ATTACH.

- **Paths from any directory.** dbt keeps a relative --project-dir / --profiles-dir as typed, and
  its Jinja cannot see the current directory they are relative to. This plugin sets DuckDB's
  ``file_search_path`` to the project directory, absolute (the macro ``project_dir`` reads it
  back), names the warehouse file by its absolute path, and gives SQL ``preftools_is_dir(path)``
  (DuckDB's glob finds files only), with which the input check tells a RAW_DATA_DIR that does not
  exist from an empty one.

The last two faults are translated where dbt-duckdb turns a DuckDB error into a dbt error
(``DuckDBConnectionManager.exception_handler``), which this plugin wraps when it is loaded
(enabled in profiles.yml); anything else passes through unchanged.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import os
import re
import shlex
from pathlib import Path
from typing import Any

import duckdb
from dbt.adapters.duckdb.credentials import Attachment
from dbt.adapters.duckdb.plugins import BasePlugin
from dbt_common.exceptions import DbtRuntimeError

from preftools.cli import disk_note, mount_point, one_line, project_path
from preftools.inputs.hub_layout import duckdb_reader, file_format
from preftools.warehouse import ROW_GROUP_SIZE, invalid_resource_setting, is_lock_error, lock_holder

_NO_SPACE = "No space left on device"
_WRITTEN_FILE = re.compile(r"""["'](?P<path>[^"']+)["']\s*:?\s*No space left on device""")
# the files of a raw reader call: read_parquet('<file>' ...), read_json('<file>' ...), read_csv('<file>' ...) or
# read_parquet(['<file>', ...] ...)
_READ_RAW = re.compile(r"read_(?:parquet|json|csv)\(\s*(?P<args>\[[^\]]*\]|'(?:[^']|'')*')", re.IGNORECASE)
_QUOTED = re.compile(r"'((?:[^']|'')*)'")


def holder_command(pid: int | str) -> str | None:
    """The command line of process ``pid`` (from /proc), shortened; None where it cannot be read."""
    try:
        raw = Path(f"/proc/{int(pid)}/cmdline").read_bytes()
    except (OSError, ValueError):
        return None
    args = [a.decode(errors="replace") for a in raw.split(b"\0") if a]
    if not args:
        return None
    args[0] = os.path.basename(args[0])
    if len(args) > 1 and os.path.basename(args[1]) == "dbt":  # python .../bin/dbt build
        args = args[1:]
        args[0] = "dbt"
    return one_line(shlex.join(args), 160)


def lock_message(path: str, error: str, read_only: bool = False) -> str | None:
    """The one-line message for a DuckDB lock error, or None when ``error`` is something else.
    ``read_only``: this process only wanted to read (dbt show), so the holder is a writer."""
    if not is_lock_error(error):
        return None
    holder = lock_holder(error)
    by = f"{holder.executable} (PID {holder.pid})" if holder else "another process"
    command = holder_command(holder.pid) if holder else None
    running = f", running `{command}`" if command else ""
    if read_only:
        return (
            f"The warehouse file {path} is locked by {by}{running}, which holds it for writing (a dbt build, or a "
            "connection opened without read_only=True), and DuckDB lets no reader in meanwhile; nothing was read or "
            "changed. Wait for it to finish or close that connection, then run again."
        )
    return (
        f"The warehouse file {path} is locked by {by}{running}: another dbt build, an export or the report "
        "(which read it), or a notebook has it open, and DuckDB lets no other process open it meanwhile; "
        "nothing was built. Wait for that process to finish or close that connection, then run again."
    )


# --------------------------------------------------------------------------------------------
# a full disk


def disk_full_message(error: str, warehouse: str | None = None) -> str | None:
    """One line for DuckDB's "No space left on device" (WAL, database file or temp files)."""
    if _NO_SPACE not in error:
        return None
    match = _WRITTEN_FILE.search(error)
    written = match["path"] if match else (warehouse or "the warehouse file")
    where = Path(written) if match or warehouse else None
    disk = ""
    if where is not None:
        mount = mount_point(where if where.is_dir() else where.parent)
        disk = disk_note(mount) or f" ({mount})"
    return (
        f"No space left on device: DuckDB could not write {written}{disk}. This model was rolled back and "
        "keeps its previous version; every mart holds either its previous version or the one this build "
        "completed, none is half-written. Free space there (or point DUCKDB_PATH at a larger disk: DuckDB's "
        "temp files go next to it), then run dbt build again."
    )


# --------------------------------------------------------------------------------------------
# a corrupt raw file


def unreadable_file(path: str) -> str | None:
    """Why DuckDB cannot read every row and column of the raw data file ``path`` (Parquet, JSON or
    CSV, read as the build reads it), or None if it can."""
    try:
        with duckdb.connect() as con:
            relation = con.sql(f"select * from {duckdb_reader(path, file_format(path) or 'json')}")
            for _ in relation.to_arrow_reader(65536):
                pass
    except duckdb.Error as exc:  # any failure of DuckDB to read is the answer (not a bug of ours)
        first = str(exc).strip().split("\n")[0]  # not DuckDB's "LINE 1: select ..." excerpt
        return one_line(first, 200).rstrip(": ") or type(exc).__name__
    return None


def raw_globs(sql: str) -> list[str]:
    """The raw files a failed ``sql`` may have read: its own ``read_parquet(...)``/``read_json(...)``/
    ``read_csv(...)`` calls; when it has none, it read the raw files through the staging views (their
    SQL names the files, not the failed statement), so every raw dataset's data files under
    ``RAW_DATA_DIR``."""
    globs = [q.replace("''", "'") for m in _READ_RAW.finditer(sql or "") for q in _QUOTED.findall(m["args"])]
    raw = raw_data_dir()
    if globs or "://" in raw:
        return globs
    from preftools.inputs.contract import DATASETS

    return [str(path) for dataset in DATASETS for path in dataset.data_files(Path(raw))]


_READ_CHECKS: dict[tuple[str, int, int], str | None] = {}


def _unreadable_cached(path: str) -> str | None:
    """:func:`unreadable_file`, once per file version in this process (several statements of one
    build can fail on the same file; each would read it whole again)."""
    stat = os.stat(path)
    key = (path, stat.st_size, stat.st_mtime_ns)
    if key not in _READ_CHECKS:
        _READ_CHECKS[key] = unreadable_file(path)
    return _READ_CHECKS[key]


def raw_file_message(error: str, sql: str) -> str | None:
    """When ``sql`` reads raw data files and failed, the first of its files that cannot be read, in one line."""
    globs = raw_globs(sql)
    checked: set[str] = set()
    for pattern in globs:
        if "://" in pattern:
            continue  # remote files (hf://): not probed again
        for path in sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]:
            if path in checked or not os.path.isfile(path):
                continue
            checked.add(path)
            reason = _unreadable_cached(path)
            if reason is not None:
                raw = shlex.quote(raw_data_dir())
                return (
                    f"Raw file {path} cannot be read: {reason} -- it is truncated or damaged (an interrupted "
                    f"download, a bad copy or disk?). Fetch it again (`preftools fetch --raw-data-dir {raw}`) "
                    f"or regenerate it (`preftools generate --out {raw}`); nothing built from it was "
                    "changed, the marts keep their previous version."
                )
    return None


def translate(error: str, sql: str, warehouse: str | None = None) -> str | None:
    """The one-line message for a fault met while running ``sql``, or None to keep dbt's own."""
    return disk_full_message(error, warehouse) or raw_file_message(error, sql)


def install_error_translation(warehouse: str | None = None) -> None:
    """Wrap dbt-duckdb's exception handler and its Python-model runner (once per process) so that
    :func:`translate` applies (a Python model's errors otherwise come with a traceback)."""
    from dbt.adapters.duckdb.connections import DuckDBConnectionManager
    from dbt.adapters.duckdb.environments import Environment

    original = DuckDBConnectionManager.exception_handler
    if getattr(original, "_preftools_translates", False):
        return

    run_python_job = Environment.run_python_job.__func__

    def translated_run_python_job(cls, *args, **kwargs):
        try:
            return run_python_job(cls, *args, **kwargs)
        except DbtRuntimeError as exc:
            message = disk_full_message(str(exc), warehouse)
            if message is None:
                raise
            raise DbtRuntimeError(message) from None

    Environment.run_python_job = classmethod(translated_run_python_job)

    @contextlib.contextmanager
    def exception_handler(self, sql: str, connection_name: str = "master"):
        try:
            with original(self, sql, connection_name):
                yield
        except DbtRuntimeError as exc:
            message = translate(str(exc), sql, warehouse)
            if message is None:
                raise
            raise DbtRuntimeError(message) from None

    exception_handler._preftools_translates = True  # type: ignore[attr-defined]
    DuckDBConnectionManager.exception_handler = exception_handler


# --------------------------------------------------------------------------------------------
# the connection: read-only for dbt show, no file left behind by a run that built nothing

# dbt commands that only read the warehouse: opened read-only, beside other readers
READ_ONLY_COMMANDS = {"show"}


def dbt_command() -> str | None:
    """The dbt command this process runs (``build``, ``show``...), None outside the dbt CLI."""
    from dbt.flags import get_flags

    return getattr(get_flags(), "WHICH", None)


def project_dir() -> Path:
    """dbt's project directory, absolute: --project-dir / DBT_PROJECT_DIR (dbt keeps either as
    typed, relative to the current directory, which dbt never changes), else the folder of
    dbt_project.yml that dbt found from the current directory."""
    from dbt.flags import get_flags

    return Path(os.path.abspath(getattr(get_flags(), "PROJECT_DIR", None) or "."))


def raw_data_dir() -> str:
    """RAW_DATA_DIR as the macro raw_data_dir (macros/raw_inputs.sql) reads it: a URI as given, a
    path absolute (a relative one is the project's, default sample_data)."""
    raw = os.environ.get("RAW_DATA_DIR") or "sample_data"
    return raw.rstrip("/") if "://" in raw else str(project_path(raw, project_dir()))


def warehouse_file(path: str | None) -> str | None:
    """The profile's DuckDB ``path`` as the absolute file DuckDB opens (relative to the current
    directory, as dbt renders it from --profiles-dir; normalised as DuckDB does, a/../b is b);
    None for no file (in memory, MotherDuck, a URI)."""
    if not path or path == ":memory:" or "://" in path or path.startswith("md:"):
        return None
    return os.path.abspath(os.path.expanduser(path))


def is_dir(path: str) -> bool:
    """Whether ``path`` (~ expanded, as DuckDB does) is a folder."""
    return os.path.isdir(os.path.expanduser(path))


def remove_if_unbuilt(path: str) -> None:
    """At exit: remove the warehouse file ``path`` (which this process created) and its WAL when
    it holds no table or view: a run that built nothing (its input check failed) leaves no file."""
    from dbt.adapters.duckdb.connections import DuckDBConnectionManager

    DuckDBConnectionManager.close_all_connections()  # dbt-duckdb's own exit step, taken first
    try:
        with duckdb.connect(path, read_only=True) as con:
            built = con.execute(
                "select (select count(*) from duckdb_tables() where not internal)"
                " + (select count(*) from duckdb_views() where not internal)"
            ).fetchone()[0]
    except duckdb.Error:  # gone, or opened by another process meanwhile: leave it
        return
    if built == 0:
        for name in (path, path + ".wal"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(name)


class Plugin(BasePlugin):
    _checked: set[str] = set()
    _attached: str | None = None  # the warehouse file, once attached in place of creds.path

    def initialize(self, plugin_config: dict[str, Any]) -> None:
        path = getattr(self.creds, "path", None) if self.creds is not None else None
        install_error_translation(warehouse_file(path))

    def update_connection_config(self, creds: Any, config: dict[str, Any]) -> None:
        # SQL's relative paths and the macro project_dir() (macros/raw_inputs.sql) take the
        # project directory from here: dbt's Jinja cannot see the current directory
        config["file_search_path"] = str(project_dir())
        path = warehouse_file(creds.path) or self._attached
        if path is None:
            return
        read_only = dbt_command() in READ_ONLY_COMMANDS
        if path not in self._checked:
            self._check_file(path, config, read_only)
            self._checked.add(path)
        if self._attached is None:
            # The warehouse is ATTACHed to an in-memory database rather than opened as it: ATTACH
            # is the only way DuckDB takes a row group size (preftools.warehouse.ROW_GROUP_SIZE)
            self._attached = path
            creds.path = ":memory:"
            creds.attach = [
                Attachment(path=path, alias=creds.database, read_only=read_only,
                           options={"row_group_size": ROW_GROUP_SIZE}),
                *(creds.attach or []),
            ]
        # DuckDB's default spill folder for a file database, not the in-memory one's ./.tmp
        config.setdefault("temp_directory", path + ".tmp")

    def configure_cursor(self, cursor: Any) -> Any:
        # every cursor (one per dbt thread) works in the warehouse, as when the file was opened
        # directly: unqualified names and current_database() are the warehouse's
        cursor.execute(f'use "{self.creds.database}"')
        return cursor

    def _check_file(self, path: str, config: dict[str, Any], read_only: bool) -> None:
        if not os.path.exists(path):
            if read_only:
                raise DbtRuntimeError(
                    f"No warehouse at {path}: `dbt {dbt_command()}` reads a built warehouse and creates none. "
                    "Build it first (`dbt build`), or point DUCKDB_PATH at the warehouse file."
                )
            atexit.register(remove_if_unbuilt, path)
        try:
            # with the profile's config_options: a new file is created here, in the storage
            # format profiles.yml asks for
            duckdb.connect(path, config=dict(config, access_mode="READ_ONLY" if read_only else "AUTOMATIC")).close()
        except duckdb.Error as exc:
            message = lock_message(path, str(exc), read_only)
            if message:
                raise DbtRuntimeError(message) from None
            message = disk_full_message(str(exc), path) or invalid_resource_setting()
            if message:
                raise DbtRuntimeError(message) from None
            raise

    def configure_connection(self, conn: duckdb.DuckDBPyConnection) -> None:
        # whether a local folder exists (glob() finds files only: an empty folder and a missing
        # one look alike): the input check's "does not exist" (macros/raw_inputs.sql)
        conn.create_function("preftools_is_dir", is_dir, ["VARCHAR"], "BOOLEAN")
