"""Writing the generated tables in the Hugging Face Hub layout, as Parquet or JSON Lines, with
a fixed file and row-group layout so that the bytes depend on nothing but seed, scale, text
length and format.

Files, by format (``n`` shards; the Hub's default patterns find every one of them):

* ``parquet``: ``DIR/<org>/<dataset>/data/train-0000K-of-0000N.parquet``
* ``jsonl`` / ``jsonl.gz``: ``DIR/<org>/<dataset>/train.jsonl[.gz]`` for one shard, else
  ``DIR/<org>/<dataset>/data/train-0000K-of-0000N.jsonl[.gz]``

The generators hand the rows over in chunks (:func:`write_chunk_rows` rows, a whole number of
row groups, for all but UltraFeedback, whose chunks are its :data:`CHUNK_ROWS`-row random
streams), so memory does not grow with the scale; since every row group is still cut from one
contiguous single-chunk table, the files are the same bytes as when a dataset was written
from one whole table. Every shard is first written as Parquet to a ``*.partial`` file; when the
dataset is complete, a Parquet shard is renamed to its name, a JSON shard is written from it by
DuckDB (``COPY ... (FORMAT json)``: nested structs and lists as JSON objects and arrays, NULL as
null, floats as numbers; streamed, deterministic bytes) and the partial file removed."""

from __future__ import annotations

import bisect
from pathlib import Path, PurePosixPath
from typing import Callable, Mapping

import pyarrow as pa
import pyarrow.parquet as pq

from preftools.inputs import contract
from preftools.inputs.hub_layout import file_format, local_paths

FORMATS = ("parquet", "jsonl", "jsonl.gz")
# As on the Hub: ReVeR-Traces-Rubric is a JSON Lines file at the root of its repo.
DEFAULT_FORMATS = {key: "parquet" for key in contract.DATASETS_BY_KEY} | {"rever_rubric": "jsonl"}
# Datasets written in a fixed number of shards (rows split evenly, in order): the card of
# argilla/ultrafeedback-binarized-curation gives 1.64 GB, 4 files under push_to_hub's 500 MB rule.
SHARD_COUNT = {
    "ultrafeedback": 4,
}
# The others: a new shard every SHARD_ROWS rows.
SHARD_ROWS = {
    "code_ultrafeedback": 100_000,
    "code_ultrafeedback_standard": 100_000,
    "rever_judge": 32_000,  # ~60,600 rows -> 2 files
    "rever_rubric": 100_000,
}
ROW_GROUP_ROWS = {
    "ultrafeedback": 1000,
    "code_ultrafeedback": 2000,
    "code_ultrafeedback_standard": 5000,
    "rever_judge": 4000,
    "rever_rubric": 5000,
}
# Row groups of the partial Parquet file a JSON shard is converted from (they do not show in the
# JSON; DuckDB holds about one at a time: 250 UltraFeedback rows ~ 0.1 GB, 1000 ~ 0.3 GB).
JSON_SOURCE_ROW_GROUP_ROWS = 250
COMPRESSION = "zstd"
WRITE_ROW_GROUPS = 2  # row groups per chunk the generators build and write at a time
PARTIAL_SUFFIX = ".partial"  # shard files not complete yet


def write_chunk_rows(key: str) -> int:
    """How many rows of dataset ``key`` the generators build and hand to the writer at a time
    (a whole number of row groups, so the row groups are the same as for one whole table)."""
    return WRITE_ROW_GROUPS * ROW_GROUP_ROWS[key]


def parse_formats(spec: str | Mapping[str, str] | None) -> dict[str, str]:
    """The format of every dataset: :data:`DEFAULT_FORMATS` changed by ``spec``, either a mapping
    key -> format or a comma-separated text of parts ``<format>`` (every dataset) or
    ``<key>=<format>`` (one dataset), applied in order: ``"jsonl"``,
    ``"rever_rubric=jsonl,ultrafeedback=jsonl.gz"``, ``"parquet,rever_judge=jsonl"``."""
    formats = dict(DEFAULT_FORMATS)
    if spec is None:
        return formats
    if isinstance(spec, Mapping):
        parts = list(spec.items())
    else:
        parts = []
        for part in (p.strip() for p in spec.split(",")):
            if part:
                key, _, fmt = part.rpartition("=")
                parts.append((key.strip() or None, fmt.strip()))
    for key, fmt in parts:
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
        if key is None:
            formats = dict.fromkeys(formats, fmt)
        elif key in formats:
            formats[key] = fmt
        else:
            raise ValueError(f"unknown dataset {key!r} (one of {', '.join(formats)})")
    return formats


def format_of(path: str | Path) -> str:
    """The format (one of :data:`FORMATS`) of a data file, from its name."""
    name = str(path).lower()
    for fmt in ("jsonl.gz", "jsonl", "parquet"):
        if name.endswith("." + fmt):
            return fmt
    raise ValueError(f"{path}: not a file the generator writes ({', '.join(FORMATS)})")


def shard_paths(repo_dir: Path, fmt: str, n_shards: int) -> list[Path]:
    """The files of a dataset written as ``n_shards`` shards of format ``fmt``."""
    if fmt != "parquet" and n_shards == 1:
        return [repo_dir / f"train.{fmt}"]
    return [repo_dir / "data" / f"train-{i:05d}-of-{n_shards:05d}.{fmt}" for i in range(n_shards)]


def remove_data_files(repo_dir: Path) -> None:
    """Remove a repo folder's data files of any format and layout (every file the Hub could
    read as data, and partial files), so that a new write leaves no stale file beside it."""
    for rel in local_paths(repo_dir):
        if any(part.startswith(".") for part in PurePosixPath(rel).parts):
            continue  # e.g. the fetcher's .cache/
        if file_format(rel) or rel.endswith(PARTIAL_SUFFIX):
            (repo_dir / rel).unlink()
    data_dir = repo_dir / "data"
    if data_dir.is_dir() and not any(data_dir.iterdir()):
        data_dir.rmdir()


def _sql_string(value: str | Path) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def _duckdb(**config):
    """A DuckDB connection in memory, without the progress bar (it would print to the terminal)."""
    import duckdb

    con = duckdb.connect(config=config)
    con.execute("set enable_progress_bar = false")
    return con


def write_json(source: pa.Table | Path, path: Path) -> None:
    """Write rows as JSON Lines (gzip-compressed for ``.jsonl.gz``) with DuckDB, from a Parquet
    file or an Arrow table, in their order. One thread: the rows stream through a row group at a
    time (with more, DuckDB holds batches back to keep the order: ~1 GB for an UltraFeedback
    shard); the bytes are the same with any number of threads."""
    compression = "gzip" if format_of(path) == "jsonl.gz" else "uncompressed"
    with _duckdb(threads=1) as con:
        if isinstance(source, pa.Table):
            con.register("rows_to_write", source)
            query = "select * from rows_to_write"
        else:
            query = f"select * from read_parquet({_sql_string(source)})"
        con.execute(f"COPY ({query}) TO {_sql_string(path)} (FORMAT json, COMPRESSION {compression})")


def write_file(table: pa.Table, path: Path, key: str) -> None:
    """Write a whole table to one data file, in the format its name says."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if format_of(path) == "parquet":
        pq.write_table(table, path, compression=COMPRESSION, row_group_size=ROW_GROUP_ROWS[key],
                       write_statistics=True)
    else:
        write_json(table, path)


def read_file(path: Path, schema: pa.Schema, columns: list[str] | None = None) -> pa.Table:
    """One data file's rows in the contract's types (JSON read by DuckDB with the contract's
    column types, as the schema says, not as it guesses)."""
    wanted = pa.schema([schema.field(c) for c in columns]) if columns else schema
    if format_of(path) == "parquet":
        return pq.read_table(path, columns=wanted.names).cast(wanted)
    types = contract.duckdb_types(schema)
    spec = "{" + ", ".join(f"{_sql_string(name)}: {_sql_string(typ)}" for name, typ in types.items()) + "}"
    select = ", ".join('"' + c.replace('"', '""') + '"' for c in wanted.names)
    with _duckdb() as con:
        table = con.sql(f"select {select} from read_json({_sql_string(path)}, columns = {spec}, "
                        "format = 'newline_delimited', maximum_object_size = 1073741824)").to_arrow_table()
    return table.cast(wanted)


def count_rows(path: Path) -> int:
    """The number of rows of a data file (Parquet: its footer; JSON Lines: its lines)."""
    if format_of(path) == "parquet":
        return pq.read_metadata(path).num_rows
    with _duckdb() as con:
        return con.execute(f"select count(*) from read_ndjson_objects({_sql_string(path)}, "
                           "maximum_object_size = 1073741824)").fetchone()[0]


class ShardedWriter:
    """Writes the ``n_rows`` rows of a dataset, handed over in order as one or more tables, into
    its shard files in format ``fmt``: each table is written with one call per shard it falls
    into, a shard's (partial Parquet) file is closed as soon as the next one is started, and
    :meth:`finish` gives the shards their names (converted to JSON for a JSON format).

    ``n_rows=None``: the row count is not known in advance (only for datasets with
    :data:`SHARD_ROWS`); the number of shards is known at :meth:`finish`."""

    def __init__(self, out_dir: Path, dataset: contract.RawDataset, n_rows: int | None, fmt: str = "parquet"):
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r}")
        self.out_dir = out_dir
        self.dataset = dataset
        self.fmt = fmt
        self.n_rows = n_rows
        self.row_group_rows = ROW_GROUP_ROWS[dataset.key]
        if fmt != "parquet":
            self.row_group_rows = min(self.row_group_rows, JSON_SOURCE_ROW_GROUP_ROWS)
        self.repo_dir = dataset.repo_dir(out_dir)
        self.repo_dir.mkdir(parents=True, exist_ok=True)
        remove_data_files(self.repo_dir)
        (self.repo_dir / "data").mkdir(exist_ok=True)
        if dataset.key in SHARD_COUNT:
            assert n_rows is not None, f"{dataset.key}: a fixed shard count needs the row count"
            n_shards = max(1, min(SHARD_COUNT[dataset.key], n_rows))
            self._bounds = [k * n_rows // n_shards for k in range(1, n_shards + 1)]  # end row of each shard
        else:
            self._bounds = None
        self.paths: list[Path] | None = None
        self.rows_written = 0
        self.tables_written = 0
        self._n_started = 0  # shards started (partial files)
        self._shard: int | None = None
        self._writer: pq.ParquetWriter | None = None

    def _shard_of(self, row: int) -> int:
        """The shard row number ``row`` goes to."""
        if self._bounds is not None:
            return min(bisect.bisect_right(self._bounds, row), len(self._bounds) - 1)
        return row // SHARD_ROWS[self.dataset.key]

    def _shard_end(self, shard: int) -> int:
        """The row after the last row of ``shard``."""
        if self._bounds is not None:
            return self._bounds[shard]
        return (shard + 1) * SHARD_ROWS[self.dataset.key]

    def _partial(self, shard: int) -> Path:
        return self.repo_dir / "data" / f"train-{shard:05d}.parquet{PARTIAL_SUFFIX}"

    def _writer_for(self, shard: int) -> pq.ParquetWriter:
        if shard != self._shard:
            self.close()
            self._writer = pq.ParquetWriter(str(self._partial(shard)), self.dataset.schema,
                                            compression=COMPRESSION, write_statistics=True)
            self._shard = shard
            self._n_started = max(self._n_started, shard + 1)
        return self._writer

    def write(self, table: pa.Table) -> None:
        self.tables_written += 1
        written = 0
        while True:
            shard = self._shard_of(self.rows_written)
            piece = table.slice(written, self._shard_end(shard) - self.rows_written)
            assert piece.num_rows or written == table.num_rows, f"{self.dataset.key}: more rows than announced"
            self._writer_for(shard).write_table(piece, row_group_size=self.row_group_rows)
            written += piece.num_rows
            self.rows_written += piece.num_rows
            if written >= table.num_rows:
                return

    def finish(self) -> None:
        """Close the last file (after writing an empty table if no table was handed over, as
        for a whole table without rows) and give the shards their names and format."""
        if self.tables_written == 0:
            self.write(self.dataset.schema.empty_table())
        self.close()
        if self.n_rows is not None:
            assert self.rows_written == self.n_rows, (self.dataset.key, self.rows_written, self.n_rows)
        self.paths = shard_paths(self.repo_dir, self.fmt, self._n_started)
        for shard, path in enumerate(self.paths):
            if self.fmt == "parquet":
                self._partial(shard).rename(path)
            else:
                write_json(self._partial(shard), path)
                self._partial(shard).unlink()
        data_dir = self.repo_dir / "data"
        if not any(data_dir.iterdir()):
            data_dir.rmdir()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
            self._shard = None

    def locate(self, row: int) -> tuple[str, int]:
        """The file a row of the dataset is in (relative to the repo folder, posix) and its 0-based row there."""
        assert self.paths is not None, "finish() first"
        shard = self._shard_of(row)
        start = shard * SHARD_ROWS[self.dataset.key] if self._bounds is None else ([0] + self._bounds)[shard]
        return PurePosixPath(self.paths[shard].relative_to(self.repo_dir)).as_posix(), row - start

    def relative_paths(self) -> list[str]:
        """The files written, relative to the output folder (posix)."""
        assert self.paths is not None, "finish() first"
        return [PurePosixPath(p.relative_to(self.out_dir)).as_posix() for p in self.paths]

    def __enter__(self) -> ShardedWriter:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def write_in_chunks(out_dir: Path, manifest: dict, key: str, n_rows: int, rows: Callable[[int, int], pa.Table],
                    fmt: str = "parquet") -> None:
    """Write the ``n_rows`` rows of dataset ``key``, built by ``rows(first, stop)`` a chunk of
    :func:`write_chunk_rows` rows at a time, and note its files in the manifest."""
    chunk_rows = write_chunk_rows(key)
    with ShardedWriter(out_dir, contract.DATASETS_BY_KEY[key], n_rows, fmt) as writer:
        for first in range(0, n_rows, chunk_rows):
            writer.write(rows(first, min(n_rows, first + chunk_rows)))
        writer.finish()
    record_dataset(manifest, key, writer, n_rows)


def record_dataset(manifest: dict, key: str, writer: ShardedWriter, n_rows: int) -> None:
    """Note a written dataset's files, format and row count in the manifest."""
    manifest["files"][key] = writer.relative_paths()
    manifest["formats"][key] = writer.fmt
    manifest["rows"][key] = n_rows
