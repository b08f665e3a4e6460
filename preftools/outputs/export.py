"""Export every mart of the warehouse to Parquet in the Hugging Face Hub layout.

    python -m preftools.export [--duckdb-path PATH] [--export-dir DIR] [--marts a,b] [--no-progress]
                               [--redact-personal] [--keep-secrets]
    make export [REDACT=personal]   # the same, with DUCKDB_PATH / EXPORT_DIR from the Makefile

What is exported: every table of the ``main`` schema of the warehouse (the marts; staging,
intermediate, seeds and meta live in other schemas), discovered at run time. The warehouse is
opened read-only, so the marts stay queryable in the ``.duckdb`` file and a running export only
blocks a concurrent ``dbt build`` (which then reports the lock), never the other way round.

Layout (``$EXPORT_DIR``, default ``exports/``)::

    <mart>/data/train-00000-of-0000N.parquet        one folder per mart, N files of < ~500 MB
    <mart>/README.md                                its Hugging Face dataset card (preftools.outputs.cards):
                                                    configs/splits, licence, source datasets, column
                                                    descriptions from the catalog, provenance
    preference_pairs/data/<dataset>-00000-of-0000N.parquet
                                                    marts in SPLIT_BY: one split per value of
                                                    their split column (ultrafeedback,
                                                    code_ultrafeedback, rever, each
                                                    `extra_datasets` entry, and
                                                    `<dataset>_flagged` for flagged pairs)
    training_mixture/data/training_mixture-00000-of-0000N.parquet
                                                    the `mixture` var's draw, one split
    manifest.json                                   per mart: files and card (sha256), row counts,
                                                    schema, source datasets (Hub id, licence,
                                                    revision), the dbt build that made them; the
                                                    build's `extra_datasets` entries (name, Hub id,
                                                    shape, licence, revision); the `eval_sets`
                                                    entries the prompts were checked against (Hub
                                                    id, revision) and the rule's settings; the
                                                    command line (no path of the build machine:
                                                    the raw data is named by its revision, the
                                                    warehouse and export folder by their variables)

Loading: ``datasets.load_dataset("<EXPORT_DIR>/<mart>")`` gives a ``train`` split, for
``training_mixture`` a ``training_mixture`` split, and for ``preference_pairs`` one split per
value of its ``split`` column: the card's ``configs`` name
each split's files ``data/<split>-*`` (``load_dataset("parquet", data_dir="<EXPORT_DIR>/<mart>")``
derives the same names from the file names; pointing ``data_dir`` at the ``data/`` folder itself
would put every file in ``train``). ``python -m preftools.publish`` uploads one mart folder as a
Hub dataset repo. pyarrow, DuckDB, polars and Spark read ``<mart>/data/*.parquet`` directly. A
mart with no rows is exported as one schema-only file (no row groups): pyarrow and DuckDB read
it, but ``datasets`` 5.2 refuses an empty split (a build without the ``mixture`` var has an empty
``training_mixture``: its card says so).

Files: ZSTD (level 3), Parquet 2.6, page index, content-defined chunking (re-uploads of a changed
export to the Hub deduplicate), and a row group size fixed per mart (about 64 MB of Arrow data,
1,000 to 100,000 rows, from the first rows). Rows are ordered by every column in column order
(first column first, NULLs last), so the same warehouse contents give byte-identical files with
the same pyarrow version; nothing time-dependent is written into the Parquet files, and the
manifest and cards only hold what the warehouse, the command line and the project checkout say.

Redaction (docs/pii.md; the rule is preftools.outputs.pii, read from the seeds ``pii_patterns`` and
``pii_reserved_networks``): every match of a secret pattern in every string written (every column of
every mart, nested lists and structs included, and the card's text) is replaced by its replacement,
``[REDACTED_SECRET]``; with ``--redact-personal`` every email and public IPv4 address too
(``[REDACTED_EMAIL]``, ``[REDACTED_IP]``). ``--keep-secrets`` writes the secrets as they are (and
``preftools publish`` refuses such an export). Rows keep their order (sorted before redaction).
``manifest.json`` records the rule and what it did: ``redaction`` (``secrets`` and ``personal``,
each "redacted" or "kept", over every mart of the export; the patterns) and per mart ``redaction``
(its settings, the replacements made per kind, every kind listed, and per column); the sizes and
sha256 are of the redacted files.

Atomic: everything, the new ``manifest.json`` included, is written into a hidden staging folder
``$EXPORT_DIR/.export-tmp-*`` and only when every selected mart is complete are the mart folders
swapped in by renames (milliseconds; on Linux each folder is exchanged with its previous version in
one step, so no mart folder is ever missing), then ``manifest.json`` is renamed into place. A
failure, a full disk or an interrupt (Ctrl-C, SIGTERM) before that point leaves the previous export
untouched and removes the staging folder; a killed process (SIGKILL, power loss) leaves a hidden
staging folder, which the next export removes, and, if it died during the swaps, some mart folders
of the new export beside the others' previous ones under the previous manifest (each folder whole;
``preftools.outputs.publish`` refuses the ones that differ from the manifest until the export is rerun).
Tables dbt leaves in schema main when a build is killed (``<mart>__dbt_tmp``, ``__dbt_backup``) are
not marts and are skipped with a warning. Two exports into the same directory exclude each other
through ``.export.lock``.

``--marts a,b`` exports some marts and keeps the other folders and their manifest entries; a full
export also removes the folders of marts that an earlier export wrote (per its manifest) and
that no longer exist in the warehouse.

Errors are one line on stderr (what failed, the path, what to do) and exit code 2; no tracebacks
(set ``PREFTOOLS_DEBUG=1`` to get one for an unexpected error).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import datetime as dt
import decimal
import errno
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import sys
import tempfile
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from preftools import __version__, cli, warehouse
from preftools.cli import EXIT_ERROR, EXIT_INTERRUPTED, one_line, unexpected_error, project_path
from preftools.files import CARD_NAME, DEFAULT_EXPORT_DIR, DEFAULT_SPLIT, LOCK_FILE, MANIFEST
from preftools.outputs import cards, pii
from preftools.warehouse import DEFAULT_DUCKDB_PATH

MART_SCHEMA = "main"
BUILD_INFO_TABLE = ("meta", "warehouse_build_info")

# Marts written as one Hugging Face split per value of a column (split names must be \w+).
# preference_pairs.split is the dataset for training pairs (a built-in dataset or an
# `extra_datasets` entry) and `<dataset>_flagged` for pairs an integrity check flags (kept out of
# training unless the dbt var train_on_flagged_pairs is true); training_mixture.split is always
# `training_mixture`.
SPLIT_BY: dict[str, str] = {"preference_pairs": "split", "training_mixture": "split"}
# The one split of a SPLIT_BY mart with no rows (written schema-only), where not DEFAULT_SPLIT.
EMPTY_SPLIT: dict[str, str] = {"training_mixture": "training_mixture"}
SPLIT_NAME = re.compile(r"\w+(\.\w+)*", re.ASCII)
MART_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")

# Files: a new file starts before one would pass MAX_FILE_BYTES (the Hub's usual ~500 MB shards).
MAX_FILE_BYTES = 500_000_000
# Row groups: a fixed row count per mart, sized from the first SAMPLE_ROWS rows to about
# ROW_GROUP_TARGET_BYTES of Arrow data, within [MIN_ROW_GROUP_ROWS, MAX_ROW_GROUP_ROWS].
ROW_GROUP_TARGET_BYTES = 64 * 1024 * 1024
MIN_ROW_GROUP_ROWS = 1_000
MAX_ROW_GROUP_ROWS = 100_000
SAMPLE_ROWS = 10_000
BATCH_ROWS = 10_000  # rows per Arrow batch streamed out of DuckDB
ZSTD_LEVEL = 3
PARQUET_OPTIONS = dict(
    version="2.6",
    compression="zstd",
    compression_level=ZSTD_LEVEL,
    use_dictionary=True,
    write_statistics=True,
    write_page_index=True,
    use_content_defined_chunking=True,
    store_schema=True,
)

STAGING_PREFIX = ".export-tmp-"

# The writer class, looked up at call time (tests wrap it to simulate a failure mid-export).
ParquetWriter = pq.ParquetWriter


class ExportError(Exception):
    """A problem to report as one line."""


class _Terminated(BaseException):
    """Raised by the SIGTERM handler so that clean-up runs as for Ctrl-C."""


# --------------------------------------------------------------------------------------------
# small helpers


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def _os_error_message(exc: OSError, where: Path | str, action: str = "write") -> str:
    # Files are staged and swapped in by renames (which need no space) after the manifest is
    # staged, so running out of space always happens before anything was replaced.
    return cli.os_error_message(
        exc, where, option="--export-dir", env="EXPORT_DIR", action=action,
        no_space_note="nothing was replaced: the previous export is intact and the partial files were removed; ",
    )


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _jsonable(value):
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


# Options whose value is a path of the machine that exported: recorded by the variable's name.
PATH_OPTIONS = {"--duckdb-path": "$DUCKDB_PATH", "--export-dir": "$EXPORT_DIR", "--spark-warehouse": "$SPARK_WAREHOUSE_DIR",
                "--card-note": "$CARD_NOTE"}


def public_command(args: list[str]) -> str:
    """A command line as the manifest records it: the values of PATH_OPTIONS replaced by their
    variable's name (manifest.json is published beside the data; paths of the machine are not)."""
    out, hide = [], None
    for arg in args:
        option, eq, _ = arg.partition("=")
        if hide is not None:
            out.append(hide)
            hide = None
        elif eq and option in PATH_OPTIONS:
            out.append(f"{option}={PATH_OPTIONS[option]}")
        else:
            out.append(shlex.quote(arg))
            hide = PATH_OPTIONS.get(arg)
    return " ".join(out)


def command_line(duckdb_path: Path, export_dir: Path, marts: list[str] | None, progress: bool = True,
                 redact_personal: bool = False, keep_secrets: bool = False) -> str:
    """The CLI invocation equivalent to an export (recorded in the manifest, see public_command)."""
    args = ["python", "-m", "preftools.export", "--duckdb-path", str(duckdb_path), "--export-dir", str(export_dir)]
    if marts is not None:
        args += ["--marts", ",".join(marts)]
    if redact_personal:
        args.append("--redact-personal")
    if keep_secrets:
        args.append("--keep-secrets")
    if not progress:
        args.append("--no-progress")
    return public_command(args)


# --------------------------------------------------------------------------------------------
# the warehouse


def open_warehouse(path: Path) -> contextlib.AbstractContextManager:
    """The warehouse, read-only; one clear line if it is missing, not DuckDB, or locked by a writer.
    Timestamps with time zone come out in UTC whatever the machine's zone (determinism), and the
    same DUCKDB_MEMORY_LIMIT / DUCKDB_THREADS knobs as the dbt profile apply."""
    return warehouse.open_read_only(path, then="run the export again", error=ExportError, resource_settings=True)


@contextlib.contextmanager
def open_spark_warehouse(path: Path) -> Iterator:
    """A Spark build (``dbt build --target spark``) as a DuckDB catalog, so the same export runs on it.

    Spark keeps each table as a folder of Parquet files, ``<warehouse>/<schema>.db/<table>/``; every
    table of ``main`` (the marts) and ``meta.warehouse_build_info`` is loaded into a scratch DuckDB file
    in a temporary folder (removed afterwards), and exported exactly as a DuckDB build would be."""
    import duckdb

    if not (path / f"{MART_SCHEMA}.db").is_dir():
        raise ExportError(
            f"no Spark warehouse at {path} (no {MART_SCHEMA}.db/ folder): run `dbt build --target spark` first, "
            "or point --spark-warehouse at SPARK_WAREHOUSE_DIR"
        )
    with tempfile.TemporaryDirectory(prefix="preftools-spark-export-") as scratch:
        con = duckdb.connect(str(Path(scratch) / "spark.duckdb"))
        try:
            con.execute("set TimeZone = 'UTC'")
            for schema in (MART_SCHEMA, BUILD_INFO_TABLE[0]):
                schema_dir = path / f"{schema}.db"
                if not schema_dir.is_dir():
                    continue
                con.execute(f"create schema if not exists {_quote(schema)}")
                for table_dir in sorted(p for p in schema_dir.iterdir() if p.is_dir()):
                    files = sorted(str(f) for f in table_dir.glob("*.parquet"))
                    if not files:
                        raise ExportError(f"Spark table folder {table_dir} holds no Parquet file; rebuild it on Spark")
                    con.execute(
                        f"create table {_quote(schema)}.{_quote(table_dir.name)} as select * from read_parquet(?)",
                        [files],
                    )
            # The seed the dataset cards read (licences, Hub ids); the cards do without it.
            schema, table = cards.REGISTRY_TABLE
            files = sorted(str(f) for f in (path / f"{schema}.db" / table).glob("*.parquet"))
            if files:
                con.execute(f"create schema if not exists {_quote(schema)}")
                con.execute(f"create table {_quote(schema)}.{_quote(table)} as select * from read_parquet(?)", [files])
            yield con
        finally:
            con.close()


# dbt builds a table as `<name>__dbt_tmp` and swaps the old one out as `<name>__dbt_backup`, which it
# drops just after the commit: a build killed in between leaves that table in schema main (the next
# build of the model drops it). Neither is a mart.
DBT_WORK_RELATION = re.compile(r".+__dbt_(tmp|backup)")


def dbt_leftovers(con) -> list[str]:
    """Tables of schema main that dbt left behind (an interrupted build): not marts."""
    rows = con.execute(
        "select table_name from duckdb_tables() "
        "where database_name = current_database() and schema_name = ? order by table_name",
        [MART_SCHEMA],
    ).fetchall()
    return [r[0] for r in rows if DBT_WORK_RELATION.fullmatch(r[0])]


def list_marts(con) -> list[str]:
    """The tables of schema main, except dbt's leftovers (see DBT_WORK_RELATION)."""
    rows = con.execute(
        "select table_name from duckdb_tables() "
        "where database_name = current_database() and schema_name = ? order by table_name",
        [MART_SCHEMA],
    ).fetchall()
    return [r[0] for r in rows if not DBT_WORK_RELATION.fullmatch(r[0])]


def table_columns(con, schema: str, table: str) -> list[tuple[str, str]]:
    """(name, DuckDB type) of each column, in table order."""
    return [
        (r[0], r[1])
        for r in con.execute(
            "select column_name, data_type from duckdb_columns() "
            "where database_name = current_database() and schema_name = ? and table_name = ? "
            "order by column_index",
            [schema, table],
        ).fetchall()
    ]


def read_build_info(con) -> dict | list | None:
    """The row(s) of meta.warehouse_build_info (the dbt invocation that built the warehouse), or None."""
    schema, table = BUILD_INFO_TABLE
    exists = con.execute(
        "select count(*) from duckdb_tables() where database_name = current_database() "
        "and schema_name = ? and table_name = ?",
        [schema, table],
    ).fetchall()[0][0]
    if not exists:
        return None
    cur = con.execute(f"select * from {_quote(schema)}.{_quote(table)} order by all")
    names = [d[0] for d in cur.description]
    rows = [_jsonable(dict(zip(names, row))) for row in cur.fetchall()]
    if not rows:
        return None
    return rows[0] if len(rows) == 1 else rows


# --------------------------------------------------------------------------------------------
# writing one mart


@dataclass
class WrittenFile:
    split: str
    path: Path  # final path while staged (under the staging folder)
    num_rows: int
    num_bytes: int = 0
    sha256: str = ""


@dataclass
class MartExport:
    name: str
    columns: list[tuple[str, str]]
    schema: pa.Schema | None = None
    split_by: str | None = None
    row_group_rows: int | None = None
    files: list[WrittenFile] = field(default_factory=list)
    card_bytes: int = 0  # the dataset card, <mart>/README.md
    card_sha256: str = ""
    redacted: Counter = field(default_factory=Counter)  # (column, kind) -> replacements made

    @property
    def num_rows(self) -> int:
        return sum(f.num_rows for f in self.files)


def row_group_rows_for(sample: pa.Table) -> int:
    """Rows per row group so that a group holds about ROW_GROUP_TARGET_BYTES of Arrow data."""
    if sample.num_rows == 0:
        return MAX_ROW_GROUP_ROWS
    per_row = max(1, sample.nbytes // sample.num_rows)
    rows = ROW_GROUP_TARGET_BYTES // per_row
    rows = max(MIN_ROW_GROUP_ROWS, min(MAX_ROW_GROUP_ROWS, rows))
    return int(rows // 1000 * 1000) if rows >= 1000 else int(rows)


class _SplitWriter:
    """Writes one split as files of whole row groups, each file below MAX_FILE_BYTES."""

    def __init__(self, out_dir: Path, split: str, schema: pa.Schema):
        self.out_dir = out_dir
        self.split = split
        self.schema = schema
        self.parts: list[tuple[Path, int]] = []  # (temporary path, rows)
        self._file = None
        self._writer = None
        self._rows = 0
        self._last_group_bytes = 0

    def _path(self, index: int) -> Path:
        return self.out_dir / f".{self.split}-{index:05d}.parquet.partial"

    def _open(self) -> None:
        path = self._path(len(self.parts))
        self._file = open(path, "wb")  # noqa: SIM115 - closed in _close/abort
        self._writer = ParquetWriter(self._file, self.schema, **PARQUET_OPTIONS)
        self.parts.append((path, 0))
        self._rows = 0
        self._last_group_bytes = 0

    def _close(self) -> None:
        if self._writer is None:
            return
        self._writer.close()
        self._writer = None
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        self._file = None
        self.parts[-1] = (self.parts[-1][0], self._rows)

    def write_group(self, table: pa.Table) -> None:
        if self._writer is not None and self._file.tell() + self._last_group_bytes > MAX_FILE_BYTES:
            self._close()
        if self._writer is None:
            self._open()
        before = self._file.tell()
        self._writer.write_table(table, row_group_size=table.num_rows)
        self._last_group_bytes = self._file.tell() - before
        self._rows += table.num_rows

    def finish(self) -> list[WrittenFile]:
        if self._writer is None and not self.parts:
            self._open()  # an empty split still gets one file (schema only, zero rows)
        self._close()
        total = len(self.parts)
        files = []
        for index, (tmp, rows) in enumerate(self.parts):
            final = self.out_dir / f"{self.split}-{index:05d}-of-{total:05d}.parquet"
            os.rename(tmp, final)
            files.append(WrittenFile(self.split, final, rows))
        return files

    def abort(self) -> None:
        """Close what is open; the half-written file goes with the staging folder."""
        if self._writer is None:
            # Interrupted inside the writer's constructor: the half-made writer may still own the
            # file and flush into it when collected, so leave both to the garbage collector.
            return
        with contextlib.suppress(Exception):
            self._writer.close()
        with contextlib.suppress(Exception):
            self._file.close()


def _regroup(batches: Iterator[pa.RecordBatch], schema: pa.Schema, state: MartExport) -> Iterator[pa.Table]:
    """Re-cut a stream of record batches into single-chunk tables of exactly ``state.row_group_rows``
    rows (the last one shorter), so the files do not depend on how DuckDB sized its batches."""
    pending: list[pa.RecordBatch] = []
    pending_rows = 0

    def cut(final: bool) -> Iterator[pa.Table]:
        nonlocal pending, pending_rows
        if state.row_group_rows is None:
            if pending_rows < SAMPLE_ROWS and not final:
                return
            sample = pa.Table.from_batches(pending, schema).slice(0, SAMPLE_ROWS).combine_chunks()
            state.row_group_rows = row_group_rows_for(sample)
        size = state.row_group_rows
        while pending_rows >= size or (final and pending_rows):
            table = pa.Table.from_batches(pending, schema)
            take = min(size, pending_rows)
            yield table.slice(0, take).combine_chunks()
            rest = table.slice(take)
            pending, pending_rows = rest.to_batches(), rest.num_rows

    for batch in batches:
        if batch.num_rows == 0:
            continue
        pending.append(batch)
        pending_rows += batch.num_rows
        yield from cut(final=False)
    yield from cut(final=True)


def export_mart(con, name: str, out_dir: Path, progress: bool = True, *, keep_secrets: bool = False,
                redact_personal: bool = False) -> MartExport:
    """Write ``main.<name>`` into ``out_dir/data/`` (a staging folder), redacted (preftools.outputs.pii),
    and return what was written."""
    import duckdb
    from tqdm.auto import tqdm

    # an ENUM's type names its values: the card and manifest.json show it redacted as the data
    columns = [(column, pii.redact_text(duck_type, redact_personal, secrets=not keep_secrets)[0])
               for column, duck_type in table_columns(con, MART_SCHEMA, name)]
    state = MartExport(name, columns, split_by=SPLIT_BY.get(name))
    relation = f"{_quote(MART_SCHEMA)}.{_quote(name)}"
    order_by = ", ".join(f"{_quote(c)} asc nulls last" for c, _ in columns)
    data_dir = out_dir / "data"
    data_dir.mkdir(parents=True)

    try:
        total = con.execute(f"select count(*) from {relation}").fetchall()[0][0]
        if state.split_by is not None:
            if state.split_by not in [c for c, _ in columns]:
                raise ExportError(
                    f"mart {name} is split by column {state.split_by!r}, which it does not have "
                    f"(columns: {', '.join(c for c, _ in columns)}); fix SPLIT_BY in preftools/outputs/export.py"
                )
            values = [r[0] for r in con.execute(
                f"select distinct {_quote(state.split_by)} from {relation} order by 1 nulls last"
            ).fetchall()]
            bad = [v for v in values if v is None or not SPLIT_NAME.fullmatch(str(v))]
            if bad:
                raise ExportError(
                    f"mart {name}: column {state.split_by} has value(s) {', '.join(repr(v) for v in bad[:5])} "
                    "that cannot name a Hugging Face split (letters, digits, _ and . only, not NULL); fix the model"
                )
            splits = [(str(v), f"where {_quote(state.split_by)} = ?", [v]) for v in values] or [
                (EMPTY_SPLIT.get(name, DEFAULT_SPLIT), "", [])]
        else:
            splits = [(DEFAULT_SPLIT, "", [])]

        with tqdm(total=total, desc=name, unit="rows", unit_scale=total >= 10_000, disable=not progress, leave=True) as bar:
            for split, where, params in splits:
                sql = f"select * from {relation} {where} order by {order_by}"
                reader = con.sql(sql, params=params or None).to_arrow_reader(BATCH_ROWS)
                if state.schema is None:
                    state.schema = reader.schema
                writer = _SplitWriter(data_dir, split, reader.schema)
                try:
                    for group in _regroup(iter(reader), reader.schema, state):
                        group, found = pii.redact_table(group, redact_personal, secrets=not keep_secrets)
                        state.redacted.update(found)
                        writer.write_group(group)
                        bar.update(group.num_rows)
                        bar.set_postfix_str(f"{split} file {len(writer.parts)}", refresh=False)
                    state.files += writer.finish()
                except BaseException:
                    writer.abort()
                    raise
    except duckdb.Error as exc:
        message = one_line(exc)
        hint = ""
        if re.search(r"out of memory|memory limit|temp|no space", message, re.IGNORECASE):
            hint = "; raise DUCKDB_MEMORY_LIMIT or free disk space for DuckDB's temp files (next to the warehouse file)"
        raise ExportError(f"DuckDB failed reading {MART_SCHEMA}.{name}: {message}{hint}") from None
    except OSError as exc:
        raise ExportError(f"exporting mart {name}: {_os_error_message(exc, data_dir)}") from None

    for f in state.files:
        f.num_bytes = f.path.stat().st_size
        with open(f.path, "rb") as fh:
            f.sha256 = hashlib.file_digest(fh, "sha256").hexdigest()
    if state.num_rows != total:  # the table changed under a read-only connection: cannot happen
        raise ExportError(f"mart {name}: wrote {state.num_rows} rows but the table has {total}; run the export again")
    return state


def splits_of(mart: MartExport) -> dict[str, int]:
    """split -> rows, in the order the files were written."""
    splits: dict[str, int] = {}
    for f in mart.files:
        splits[f.split] = splits.get(f.split, 0) + f.num_rows
    return splits


def redacted_kinds(mart: MartExport, rule: pii.Rule) -> dict[str, int]:
    """Kind -> replacements made in the mart's files, every kind of the rule in its order."""
    return {kind: sum(n for (_, k), n in mart.redacted.items() if k == kind) for kind in rule.kinds}


def redaction_settings(keep_secrets: bool, redact_personal: bool) -> dict[str, str]:
    return {"secrets": "kept" if keep_secrets else "redacted", "personal": "redacted" if redact_personal else "kept"}


def write_card(con, mart: MartExport, out_dir: Path, context: cards.CardContext, *, keep_secrets: bool = False,
               redact_personal: bool = False) -> None:
    """Write the Hugging Face dataset card ``out_dir/README.md`` (a staging folder) of an exported mart,
    its text redacted as the data (it is made of the catalog's descriptions and the card note)."""
    description, column_descriptions = cards.read_descriptions(con, MART_SCHEMA, mart.name)
    rule = pii.load_rule()
    text = cards.render_card(mart.name, mart.columns, splits_of(mart), context, description, column_descriptions,
                             redacted=redacted_kinds(mart, rule))
    text, _ = pii.redact_text(text, redact_personal, secrets=not keep_secrets, rule=rule)
    data = text.encode("utf-8")
    path = out_dir / CARD_NAME
    try:
        with open(path, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:
        raise ExportError(f"exporting mart {mart.name}: {_os_error_message(exc, path)}") from None
    mart.card_bytes = len(data)
    mart.card_sha256 = hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------------------------
# the export directory: lock, staging, publish, manifest


def prepare_export_dir(export_dir: Path) -> None:
    try:
        export_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(_os_error_message(exc, export_dir, action="create the export directory")) from None
    if not export_dir.is_dir():
        raise ExportError(f"cannot use {export_dir} as the export directory: it is not a directory; choose another --export-dir")


@contextlib.contextmanager
def export_lock(export_dir: Path) -> Iterator[None]:
    path = export_dir / LOCK_FILE
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise ExportError(_os_error_message(exc, path)) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "?"
            raise ExportError(
                f"another export into {export_dir} is running (PID {holder}), or `preftools publish` is uploading "
                "from it; wait for it to finish"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock


def remove_stale_staging(export_dir: Path) -> None:
    """Staging folders left by a killed export (we hold the lock, so none is in use)."""
    for path in export_dir.glob(STAGING_PREFIX + "*"):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)


def load_manifest(export_dir: Path) -> dict:
    path = export_dir / MANIFEST
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
        return data if isinstance(data, dict) and isinstance(data.get("marts"), dict) else {}
    except (OSError, ValueError):
        print(f"export: warning: ignoring unreadable {path}", file=sys.stderr)
        return {}


def mart_entry(mart: MartExport, build, exported_by: dict, context: cards.CardContext | None = None,
               redaction: dict | None = None) -> dict:
    """The manifest's entry of a mart; ``redaction``: the export's settings (redaction_settings)."""
    splits = splits_of(mart)
    sources = []
    if context is not None:
        registry = {d.key: d for d in context.registry}
        keys = cards.source_keys(mart.name, context.registry, context.build, context.mixture)
        sources = [cards.source_record(registry[k], context) for k in keys]
    return {
        "table": f"{MART_SCHEMA}.{mart.name}",
        "num_rows": mart.num_rows,
        "num_bytes": sum(f.num_bytes for f in mart.files),
        "split_by": mart.split_by,
        "splits": splits,
        "files": [
            {
                "path": f"{mart.name}/data/{f.path.name}",
                "split": f.split,
                "num_rows": f.num_rows,
                "num_bytes": f.num_bytes,
                "sha256": f.sha256,
            }
            for f in mart.files
        ],
        "card": {
            "path": f"{mart.name}/{CARD_NAME}",
            "num_bytes": mart.card_bytes,
            "sha256": mart.card_sha256,
        },
        "order_by": [c for c, _ in mart.columns],
        "row_group_rows": mart.row_group_rows,
        "schema": [
            {"name": fld.name, "arrow_type": str(fld.type), "duckdb_type": duck}
            for fld, (_, duck) in zip(mart.schema, mart.columns)
        ],
        "source_datasets": sources,
        "build": cards.public_build(build),
        "exported_by": exported_by,
        "redaction": redaction_entry(mart, redaction or redaction_settings(keep_secrets=False, redact_personal=False)),
    }


def redaction_entry(mart: MartExport, settings: dict) -> dict:
    """A mart's ``redaction`` in the manifest: the settings, the replacements per kind (every kind)
    and per column (the columns and kinds with one)."""
    rule = pii.load_rule()
    by_column = {}
    for column, _ in mart.columns:
        found = {kind: mart.redacted[(column, kind)] for kind in rule.kinds if mart.redacted[(column, kind)]}
        if found:
            by_column[column] = found
    return {**settings, "counts": redacted_kinds(mart, rule), "by_column": by_column}


def _stage_manifest(staging: Path, manifest: dict) -> Path:
    """Write the new manifest.json into the staging folder (renamed into place by ``publish``)."""
    path = staging / MANIFEST
    with open(path, "w") as fh:
        json.dump(manifest, fh, indent=2, ensure_ascii=False)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    return path


_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100
_renameat2 = None


def _exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths in one atomic step (Linux renameat2 with RENAME_EXCHANGE), so that
    ``b`` holds a whole folder at every instant; False where the OS or file system cannot."""
    global _renameat2
    if _renameat2 is None:
        try:
            fn = ctypes.CDLL(None, use_errno=True).renameat2
        except (OSError, AttributeError):
            _renameat2 = False
        else:
            fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
            fn.restype = ctypes.c_int
            _renameat2 = fn
    if _renameat2 is False:
        return False
    if _renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EPERM):
        return False  # not supported here: fall back to two renames
    raise OSError(code, os.strerror(code), str(a), None, str(b))


def publish(export_dir: Path, staging: Path, marts: list[str], retired: list[str], manifest: dict) -> None:
    """Swap the staged mart folders into place (old ones stay in the staging folder, which the
    caller deletes), remove retired mart folders, then replace manifest.json.

    The manifest is written (into the staging folder) before anything is replaced, so a full disk
    fails the export with the previous one intact; the rest are renames. Each mart folder is
    exchanged with its previous version in one atomic step where the OS can (Linux), so a process
    killed during the swaps leaves every mart folder whole (the previous or the new version) and the
    previous manifest, which ``preftools.outputs.publish`` checks every file against."""
    staged_manifest = _stage_manifest(staging, manifest)
    old = staging / ".previous"
    old.mkdir()
    for name in marts:
        final = export_dir / name
        if final.is_dir() and not final.is_symlink() and _exchange(staging / name, final):
            continue  # the previous version is now staging/<name>, deleted with the staging folder
        if final.exists() or final.is_symlink():
            os.rename(final, old / name)
        try:
            os.rename(staging / name, final)
        except BaseException:
            if (old / name).exists():
                os.rename(old / name, final)  # put the previous export back
            raise
    for name in retired:
        final = export_dir / name
        if final.is_dir() and not final.is_symlink():
            os.rename(final, old / name)
    os.replace(staged_manifest, export_dir / MANIFEST)
    _fsync_dir(export_dir)


# --------------------------------------------------------------------------------------------
# the export


def export(
    duckdb_path: Path | str,
    export_dir: Path | str,
    marts: list[str] | None = None,
    *,
    progress: bool = True,
    command: str | None = None,
    spark_warehouse: Path | str | None = None,
    card_note: Path | str | None = None,
    redact_personal: bool = False,
    keep_secrets: bool = False,
) -> dict:
    """Export the marts (all tables of schema main, or ``marts``) and return the manifest. With
    ``spark_warehouse``, the marts come from that Spark build instead of the DuckDB file; with
    ``card_note``, every card ends with that Markdown file (e.g. `preftools diff`'s diff.md).
    Secrets are redacted unless ``keep_secrets``; emails and public IP addresses with ``redact_personal``."""
    try:
        rule = pii.load_rule()
    except pii.RuleError as exc:
        raise ExportError(str(exc)) from None
    settings = redaction_settings(keep_secrets, redact_personal)
    note = None
    if card_note is not None:
        try:
            note = Path(card_note).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ExportError(f"cannot read the card note {card_note}: {one_line(exc)}; write it with "
                              "`preftools diff OLD NEW --out DIR` (DIR/diff.md) or fix --card-note") from None
    duckdb_path = Path(duckdb_path).expanduser().absolute()
    export_dir = Path(export_dir).expanduser().absolute()
    command = command or command_line(duckdb_path, export_dir, marts, progress, redact_personal, keep_secrets)
    # the warehouse by its file (folder) name only: no path of this machine in manifest.json
    exported_by = {"command": command, "preftools_version": __version__, "warehouse": duckdb_path.name}

    if spark_warehouse is not None:
        spark_warehouse = Path(spark_warehouse).expanduser().absolute()
        exported_by["warehouse"] = f"spark:{spark_warehouse.name}"
    source = open_spark_warehouse(spark_warehouse) if spark_warehouse is not None else open_warehouse(duckdb_path)
    with source as con:
        available = list_marts(con)
        leftovers = dbt_leftovers(con)
        if leftovers:
            print(
                f"export: warning: not exporting {', '.join(f'{MART_SCHEMA}.{t}' for t in leftovers)}: left by an "
                "interrupted dbt build (the next `dbt build` drops it)",
                file=sys.stderr,
            )
        if not available:
            raise ExportError(f"no tables in schema {MART_SCHEMA} of {duckdb_path}: run `make build` first")
        if marts is None:
            selected = available
        else:
            unknown = [m for m in marts if m not in available]
            if unknown or not marts:
                raise ExportError(
                    f"unknown mart(s): {', '.join(unknown) or '(none given)'}; "
                    f"the warehouse {duckdb_path} has: {', '.join(available)}"
                )
            selected = list(dict.fromkeys(marts))
        for name in selected:
            if not MART_NAME.fullmatch(name) or name in (MANIFEST, LOCK_FILE):
                raise ExportError(f"table {MART_SCHEMA}.{name} has a name that is not a safe folder name; rename the model")
        build = read_build_info(con)

        prepare_export_dir(export_dir)
        for name in selected:
            target = export_dir / name
            if (target.exists() and not target.is_dir()) or target.is_symlink():
                raise ExportError(f"{target} exists and is not a folder; move it away, then run the export again")

        with export_lock(export_dir):
            remove_stale_staging(export_dir)
            try:
                staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=export_dir))
            except OSError as exc:
                raise ExportError(_os_error_message(exc, export_dir)) from None
            try:
                context = cards.read_context(
                    con, build, exported_with=f"preftools {__version__}, pyarrow {pa.__version__}"
                )
                context.note = note
                context.redaction = {**settings, "patterns": rule.record()}
                written = []
                for name in selected:
                    mart = export_mart(con, name, staging / name, progress, keep_secrets=keep_secrets,
                                       redact_personal=redact_personal)
                    write_card(con, mart, staging / name, context, keep_secrets=keep_secrets,
                               redact_personal=redact_personal)
                    written.append(mart)

                previous = load_manifest(export_dir).get("marts", {})
                entries = {m.name: mart_entry(m, build, exported_by, context, settings) for m in written}
                retired = []
                for name, entry in previous.items():
                    if name in entries:
                        continue
                    if marts is None and name not in available:
                        retired.append(name)  # ours (per the manifest), and gone from the warehouse
                    elif (export_dir / name).is_dir():
                        entries[name] = entry
                manifest = {
                    "format": "parquet",
                    "layout": "<mart>/data/<split>-NNNNN-of-NNNNN.parquet (Hugging Face Hub layout)",
                    "compression": f"zstd (level {ZSTD_LEVEL})",
                    "writer": f"pyarrow {pa.__version__}",
                    **exported_by,
                    # the build's `extra_datasets` entries (meta.extra_datasets), in registry order
                    "extra_datasets": [
                        {"name": d.key, **{k: v for k, v in cards.source_record(d, context).items() if k != "dataset"}}
                        for d in context.extra_datasets
                    ],
                    # the build's `eval_sets` entries (meta.eval_sets) and the rule's settings
                    "eval_sets": [cards.eval_set_record(e, context)
                                  for e in (context.contamination.eval_sets if context.contamination else [])],
                    "contamination": context.contamination.settings if context.contamination else None,
                    # over every mart of the export: "redacted" only if each mart's files are
                    # (a mart kept from an earlier export, or one made before redaction, may not be)
                    "redaction": {
                        **{what: "redacted" if all((e.get("redaction") or {}).get(what) == "redacted"
                                                   for e in entries.values()) else "kept"
                           for what in ("secrets", "personal")},
                        "patterns": rule.record(),
                    },
                    "marts": {name: entries[name] for name in sorted(entries)},
                }
                try:
                    publish(export_dir, staging, [m.name for m in written], retired, manifest)
                except OSError as exc:
                    raise ExportError(f"publishing the export: {_os_error_message(exc, export_dir)}") from None
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    return manifest


# --------------------------------------------------------------------------------------------
# command line


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="preftools export",
        description=(
            "Export every mart (each table of schema main) of the DuckDB warehouse to Parquet in the "
            "Hugging Face Hub layout: EXPORT_DIR/<mart>/data/train-00000-of-0000N.parquet "
            "(preference_pairs: one split per dataset, extra_datasets entries included; training_mixture: "
            "one split training_mixture), a dataset card EXPORT_DIR/<mart>/README.md, "
            "plus EXPORT_DIR/manifest.json."
        ),
        epilog=(
            "Every secret (the seed pii_patterns: keys, tokens, private keys) in every string is replaced "
            "by [REDACTED_SECRET]; manifest.json and the cards say how many. "
            "Load with datasets.load_dataset('<EXPORT_DIR>/<mart>') or pyarrow/DuckDB on "
            "<EXPORT_DIR>/<mart>/data/*.parquet. The files are written to a hidden staging folder and "
            "renamed into place only when complete."
        ),
    )
    parser.add_argument(
        "--duckdb-path",
        default=None,
        help=f"the warehouse file, opened read-only (default: $DUCKDB_PATH, else {DEFAULT_DUCKDB_PATH})",
    )
    parser.add_argument(
        "--export-dir",
        default=None,
        help=f"where to write (default: $EXPORT_DIR, else {DEFAULT_EXPORT_DIR}/)",
    )
    parser.add_argument(
        "--spark-warehouse",
        default=None,
        help="export a Spark build instead (dbt build --target spark): its SPARK_WAREHOUSE_DIR, e.g. spark-warehouse",
    )
    parser.add_argument("--marts", default=None, help="comma-separated mart names to export (default: all)")
    parser.add_argument("--card-note", default=None,
                        help="a Markdown file every dataset card ends with, e.g. DIR/diff.md of "
                        "`preftools diff OLD NEW --out DIR` (\"Changes since <revision>\")")
    parser.add_argument("--redact-personal", action="store_true",
                        help="also replace every email with [REDACTED_EMAIL] and every public IPv4 address with "
                        "[REDACTED_IP] (make export REDACT=personal)")
    parser.add_argument("--keep-secrets", action="store_true",
                        help="write secrets (keys, tokens, private keys) as they are instead of [REDACTED_SECRET]; "
                        "`preftools publish` refuses such an export")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    if args.marts is not None:
        args.marts = [m.strip() for m in args.marts.split(",") if m.strip()]
        if not args.marts:
            parser.error("--marts needs at least one mart name")
    return args


def _on_sigterm(signum, frame):  # noqa: ARG001
    raise _Terminated()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    duckdb_path = warehouse.duckdb_path(args.duckdb_path)
    export_dir = Path(args.export_dir) if args.export_dir else project_path(os.environ.get("EXPORT_DIR") or DEFAULT_EXPORT_DIR)
    previous_handler = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        manifest = export(
            duckdb_path,
            export_dir,
            args.marts,
            progress=not args.no_progress,
            spark_warehouse=args.spark_warehouse,
            card_note=args.card_note,
            redact_personal=args.redact_personal,
            keep_secrets=args.keep_secrets,
            command=public_command(["python", "-m", "preftools.export", *(sys.argv[1:] if argv is None else argv)]),
        )
    except ExportError as exc:
        print(f"export: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except (KeyboardInterrupt, _Terminated):
        print(
            f"export: interrupted; {export_dir} still holds the previous export and the temporary files were removed",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - one line unless debugging
        return unexpected_error("export", exc)
    finally:
        signal.signal(signal.SIGTERM, previous_handler)

    names = args.marts or list(manifest["marts"])  # a full export's manifest lists exactly what it wrote
    exported = [manifest["marts"][name] for name in names]
    rows = sum(m["num_rows"] for m in exported)
    files = sum(len(m["files"]) for m in exported)
    size = sum(m["num_bytes"] for m in exported)
    category = {p["kind"]: p["category"] for p in manifest["redaction"]["patterns"]}
    found = Counter()
    for m in exported:
        for kind, n in m["redaction"]["counts"].items():
            found[category[kind]] += n
    secrets = ("secrets KEPT (--keep-secrets: `preftools publish` refuses this export)" if args.keep_secrets
               else f"{found[pii.SECRET]:,} secrets redacted")
    if args.redact_personal:
        secrets += f", {found[pii.PERSONAL]:,} emails and public IP addresses redacted"
    print(
        f"exported {len(exported)} marts ({rows:,} rows, {files} files, {size / 1e6:,.1f} MB; {secrets}) "
        f"to {export_dir.absolute()}; manifest: {export_dir.absolute() / MANIFEST}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
