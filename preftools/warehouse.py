"""Opening the built warehouse for reading, with one clear line for each way it can fail
(shared by the export and the report)."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb


class WarehouseError(Exception):
    """The warehouse can't be opened; the message is one line saying why and what to do."""


def one_line(text: object, limit: int = 400) -> str:
    return " ".join(str(text).split())[:limit]


def connect_read_only(path: Path, then: str) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the warehouse file at ``path``; ``then`` ends the advice
    (e.g. "run the export again")."""
    if not path.exists():
        raise WarehouseError(
            f"no warehouse at {path}: run `make build` first (or point --duckdb-path / DUCKDB_PATH at the .duckdb file)"
        )
    if path.is_dir():
        raise WarehouseError(f"{path} is a directory, not a DuckDB file; point --duckdb-path / DUCKDB_PATH at the .duckdb file")
    try:
        return duckdb.connect(str(path), read_only=True)
    except duckdb.Error as exc:
        message = one_line(exc, 2000)
        if "Conflicting lock" in message or "Could not set lock" in message:
            holder = re.search(r"held in (.+?) \(PID (\d+)\)", message)
            by = f" by {holder.group(1)} (PID {holder.group(2)})" if holder else ""
            raise WarehouseError(
                f"the warehouse {path} is locked{by}, which is writing to it (a running `dbt build`?); "
                f"wait for it to finish or close it, then {then}"
            ) from None
        if "not a valid DuckDB database" in message:
            raise WarehouseError(f"{path} is not a DuckDB database file; run `make build` first or fix --duckdb-path") from None
        raise WarehouseError(f"cannot open the warehouse {path}: {message[:400]}") from None
