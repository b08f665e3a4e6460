"""The built warehouse as the tools see it: its default path, opening it read-only with one
clear line for each way that can fail (shared by the export and the report), and the reading
of DuckDB's lock errors (shared with the dbt plugin :mod:`preftools.dbt_runtime.lock_check`)."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import duckdb

from preftools.cli import one_line, project_path

DEFAULT_DUCKDB_PATH = "warehouse.duckdb"
DUCKDB_PATH_ENV = "DUCKDB_PATH"
# The warehouse's row groups: 16,384 rows, not DuckDB's 122,880 (given when the dbt plugin
# preftools.dbt_runtime.lock_check attaches the file). DuckDB writes a table's full row groups
# while the query runs, on every thread; a table of less than one row group (most tables of a
# build) stays in memory until its COMMIT, which compresses it on one thread while the other dbt
# thread's commits wait. Measured at scale 1.0: the fresh build 0.82x wall and 0.91x CPU;
# 8,192 and 32,768 rows were slower.
ROW_GROUP_SIZE = 16384
# DuckDB settings taken from the environment, as in the dbt profile
RESOURCE_SETTINGS = (("memory_limit", "DUCKDB_MEMORY_LIMIT"), ("threads", "DUCKDB_THREADS"))

# "... Conflicting lock is held in /usr/bin/python3 (PID 1234) by user ..."
LOCK_HOLDER = re.compile(r"Conflicting lock is held in (?P<exe>.+?) \(PID (?P<pid>\d+)\)")


class WarehouseError(Exception):
    """The warehouse can't be opened; the message is one line saying why and what to do."""


def duckdb_path(given: str | None) -> Path:
    """The warehouse file: ``given`` (--duckdb-path, relative to the current directory), else
    $DUCKDB_PATH, else warehouse.duckdb (both relative to the project directory, as in dbt's profile)."""
    if given:
        return Path(given)
    return project_path(os.environ.get(DUCKDB_PATH_ENV) or DEFAULT_DUCKDB_PATH)


def is_lock_error(message: str) -> bool:
    """Whether a DuckDB error says another process holds the file's lock."""
    return "Conflicting lock" in message or "Could not set lock" in message


class LockHolder(NamedTuple):
    executable: str
    pid: str


def lock_holder(message: str) -> LockHolder | None:
    """The process holding the lock, from a DuckDB lock error (None when it is not named)."""
    match = LOCK_HOLDER.search(message)
    return LockHolder(match["exe"], match["pid"]) if match else None


POINT_AT_FILE = "point --duckdb-path / DUCKDB_PATH at the .duckdb file"


def check_file(path: Path, point: str = POINT_AT_FILE) -> None:
    """Raise WarehouseError when ``path`` is missing or a directory; ``point`` says how the user
    names another file."""
    if not path.exists():
        raise WarehouseError(f"no warehouse at {path}: run `make build` first (or {point})")
    if path.is_dir():
        raise WarehouseError(f"{path} is a directory, not a DuckDB file; {point}")


def open_error(path: Path, exc: duckdb.Error, then: str, point: str = POINT_AT_FILE) -> WarehouseError:
    """One line for DuckDB's failure to open ``path`` read-only (a writer's lock, not a DuckDB
    file, anything else); ``then`` ends the advice (e.g. "run the export again"), ``point`` says
    how the user names another file."""
    message = one_line(exc, 2000)
    if is_lock_error(message):
        holder = lock_holder(message)
        by = f" by {holder.executable} (PID {holder.pid})" if holder else ""
        return WarehouseError(
            f"the warehouse {path} is locked{by}, which is writing to it (a running `dbt build`?); "
            f"wait for it to finish or close it, then {then}"
        )
    if "not a valid DuckDB database" in message:
        return WarehouseError(f"{path} is not a DuckDB database file; run `make build` first or {point}")
    return WarehouseError(f"cannot open the warehouse {path}: {message[:400]}")


def connect_read_only(path: Path, then: str) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the warehouse file at ``path``; ``then`` ends the advice
    (e.g. "run the export again")."""
    check_file(path)
    try:
        return duckdb.connect(str(path), read_only=True)
    except duckdb.Error as exc:
        raise open_error(path, exc, then) from None


def attach_read_only(con: duckdb.DuckDBPyConnection, path: Path, alias: str, then: str, point: str) -> None:
    """ATTACH the warehouse file at ``path`` read-only as ``alias`` to ``con`` (other readers, a
    notebook say, may hold it open meanwhile), with the same one-line errors as connect_read_only."""
    check_file(path, point)
    try:
        con.execute(f"attach ? as {alias} (read_only)", [str(path)])
    except duckdb.Error as exc:
        raise open_error(path, exc, then, point) from None


@contextlib.contextmanager
def open_read_only(path: Path, then: str, *, error: type[Exception] = WarehouseError,
                   resource_settings: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    """The warehouse, read-only, with timestamps in UTC whatever the machine's zone; each failure
    to open it is raised as one line of the caller's exception class ``error``. With
    ``resource_settings``, DUCKDB_MEMORY_LIMIT / DUCKDB_THREADS apply as in the dbt profile."""
    try:
        con = connect_read_only(path, then)
    except WarehouseError as exc:
        raise error(str(exc)) from None
    try:
        con.execute("set TimeZone = 'UTC'")
        if resource_settings:
            apply_resource_settings(con, error)
        yield con
    finally:
        con.close()


# what each of RESOURCE_SETTINGS' env vars takes
_RESOURCE_VALUES = {"DUCKDB_MEMORY_LIMIT": "a size such as 1GB or 4GB", "DUCKDB_THREADS": "a whole number such as 2"}


def resource_setting_message(env: str, setting: str, exc: Exception) -> str:
    """One line naming the env var whose value DuckDB refused, and what it takes."""
    return (f"{env}={os.environ.get(env)!r} is not a valid DuckDB {setting}: {one_line(exc)}. "
            f"Set {env} to {_RESOURCE_VALUES[env]}, or unset it for the default.")


def invalid_resource_setting() -> str | None:
    """The message for a DUCKDB_MEMORY_LIMIT / DUCKDB_THREADS that DuckDB refuses, else None."""
    for setting, env in RESOURCE_SETTINGS:
        if os.environ.get(env):
            try:
                duckdb.connect(config={setting: os.environ[env]}).close()
            except duckdb.Error as exc:
                return resource_setting_message(env, setting, exc)
    return None


def apply_resource_settings(con: duckdb.DuckDBPyConnection, error: type[Exception]) -> None:
    """DUCKDB_MEMORY_LIMIT / DUCKDB_THREADS, when set, as in the dbt profile (else DuckDB's
    defaults); a value DuckDB refuses is raised as one line of ``error``."""
    # Set after connecting: a notebook may already hold the file open read-only in this
    # process, and DuckDB refuses a second configuration.
    for setting, env in RESOURCE_SETTINGS:
        if os.environ.get(env):
            try:
                con.execute(f"set {setting} = ?", [os.environ[env]])
            except duckdb.Error as exc:
                raise error(resource_setting_message(env, setting, exc)) from None
