"""A dbt-duckdb plugin that turns "the warehouse file is locked" into one clear line.

DuckDB lets one process open a database file for writing. When a second ``dbt build`` runs,
or a notebook holds ``warehouse.duckdb``, dbt-duckdb's connect fails deep inside dbt's error
handling and prints a Python traceback. This plugin (enabled in profiles.yml) tries the
lock first, just before dbt-duckdb connects, and raises a dbt error that dbt prints as a
message: which file, which process holds it, what to do.
"""

from __future__ import annotations

import re
from typing import Any

import duckdb
from dbt.adapters.duckdb.plugins import BasePlugin
from dbt_common.exceptions import DbtRuntimeError

_HOLDER = re.compile(r"Conflicting lock is held in (?P<exe>.+?) \(PID (?P<pid>\d+)\)")


def lock_message(path: str, error: str) -> str | None:
    """The one-line message for a DuckDB lock error, or None when ``error`` is something else."""
    if "Could not set lock" not in error:
        return None
    holder = _HOLDER.search(error)
    by = f"{holder['exe']} (PID {holder['pid']})" if holder else "another process"
    return (
        f"The warehouse file {path} is locked by {by}: another dbt build or a notebook holds it "
        "for writing. Wait for that build to finish or close that connection (readers should use "
        "duckdb.connect(path, read_only=True)), then run again."
    )


class Plugin(BasePlugin):
    _checked: set[str] = set()

    def update_connection_config(self, creds: Any, config: dict[str, Any]) -> None:
        path = creds.path
        if not path or path == ":memory:" or path in self._checked:
            return
        try:
            # with the profile's config_options: a new file is created here, in the storage
            # format profiles.yml asks for
            duckdb.connect(path, config=dict(config)).close()
        except duckdb.Error as exc:
            message = lock_message(path, str(exc))
            if message:
                raise DbtRuntimeError(message) from None
            raise
        self._checked.add(path)
