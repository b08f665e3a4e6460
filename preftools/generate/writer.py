"""Writing the generated tables as Parquet in the Hugging Face Hub layout,
``DIR/<org>/<dataset>/data/train-0000K-of-0000N.parquet``, with a fixed file and row-group
layout so that the bytes depend on nothing but seed, scale and text length.

The generators hand the rows over in chunks (:func:`write_chunk_rows` rows, a whole number of
row groups, for all but UltraFeedback, whose chunks are its :data:`CHUNK_ROWS`-row random
streams), so memory does not grow with the scale; since every row group is still cut from one
contiguous single-chunk table, the files are the same bytes as when a dataset was written
from one whole table."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Callable

import pyarrow as pa
import pyarrow.parquet as pq

from preftools import contract

SHARD_ROWS = {
    "ultrafeedback": 24_000,  # 3 chunks of 8,000 rows; 63,967 rows -> 3 files of ~230 MB
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
COMPRESSION = "zstd"
WRITE_ROW_GROUPS = 2  # row groups per chunk the generators build and write at a time
PARTIAL_SUFFIX = ".partial"  # shard files of a dataset whose row count is not known yet


def write_chunk_rows(key: str) -> int:
    """How many rows of dataset ``key`` the generators build and hand to the writer at a time
    (a whole number of row groups, so the row groups are the same as for one whole table)."""
    return WRITE_ROW_GROUPS * ROW_GROUP_ROWS[key]


def _shard_names(data_dir: Path, n_shards: int) -> list[Path]:
    return [data_dir / f"train-{i:05d}-of-{n_shards:05d}.parquet" for i in range(n_shards)]


def _empty_data_dir(out_dir: Path, dataset: contract.RawDataset) -> Path:
    """The dataset's folder, created, without old shard files."""
    data_dir = dataset.data_dir(out_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    for old in [*data_dir.glob("train-*.parquet"), *data_dir.glob("train-*.parquet" + PARTIAL_SUFFIX)]:
        old.unlink()
    return data_dir


def shard_paths(out_dir: Path, dataset: contract.RawDataset, n_rows: int) -> list[Path]:
    """The files ``n_rows`` rows of ``dataset`` go to (the folder is created, old files removed)."""
    n_shards = max(1, math.ceil(n_rows / SHARD_ROWS[dataset.key]))
    return _shard_names(_empty_data_dir(out_dir, dataset), n_shards)


class ShardedParquetWriter:
    """Writes the ``n_rows`` rows of a dataset, handed over in order as one or more tables, into
    its shard files: each table is written with one call per shard it falls into, a shard's file
    is closed as soon as the next one is started.

    ``n_rows=None``: the row count is not known in advance (the file names hold the number of
    shards); the shards are written as ``*.partial`` files and renamed by :meth:`finish`."""

    def __init__(self, out_dir: Path, dataset: contract.RawDataset, n_rows: int | None):
        self.out_dir = out_dir
        self.dataset = dataset
        self.rows_per_shard = SHARD_ROWS[dataset.key]
        self.row_group_rows = ROW_GROUP_ROWS[dataset.key]
        if n_rows is None:
            self._data_dir = _empty_data_dir(out_dir, dataset)
            self.paths: list[Path] | None = None
        else:
            self.paths = shard_paths(out_dir, dataset, n_rows)
        self.rows_written = 0
        self.tables_written = 0
        self._shard: int | None = None
        self._writer: pq.ParquetWriter | None = None

    def _path(self, shard: int) -> Path:
        if self.paths is not None:
            return self.paths[shard]
        return self._data_dir / f"train-{shard:05d}.parquet{PARTIAL_SUFFIX}"

    def _writer_for(self, shard: int) -> pq.ParquetWriter:
        if shard != self._shard:
            self.close()
            self._writer = pq.ParquetWriter(str(self._path(shard)), self.dataset.schema,
                                            compression=COMPRESSION, write_statistics=True)
            self._shard = shard
        return self._writer

    def finish(self) -> None:
        """Close the last file, after writing an empty table if no table was handed over (as
        for a whole table without rows); with an unknown row count give the shards their names."""
        if self.tables_written == 0:
            self.write(self.dataset.schema.empty_table())
        self.close()
        if self.paths is None:
            n_shards = max(1, math.ceil(self.rows_written / self.rows_per_shard))
            final = _shard_names(self._data_dir, n_shards)
            for shard, path in enumerate(final):
                self._path(shard).rename(path)
            self.paths = final

    def write(self, table: pa.Table) -> None:
        self.tables_written += 1
        written = 0
        while True:
            shard = self.rows_written // self.rows_per_shard
            room = (shard + 1) * self.rows_per_shard - self.rows_written
            piece = table.slice(written, room)
            self._writer_for(shard).write_table(piece, row_group_size=self.row_group_rows)
            written += piece.num_rows
            self.rows_written += piece.num_rows
            if written >= table.num_rows:
                return

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
            self._shard = None

    def relative_paths(self) -> list[str]:
        assert self.paths is not None, "finish() first"
        return [str(p.relative_to(self.out_dir)) for p in self.paths]

    def __enter__(self) -> ShardedParquetWriter:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def write_in_chunks(out_dir: Path, manifest: dict, key: str, n_rows: int,
                    rows: Callable[[int, int], pa.Table]) -> None:
    """Write the ``n_rows`` rows of dataset ``key``, built by ``rows(first, stop)`` a chunk of
    :func:`write_chunk_rows` rows at a time, and note its files in the manifest."""
    chunk_rows = write_chunk_rows(key)
    with ShardedParquetWriter(out_dir, contract.DATASETS_BY_KEY[key], n_rows) as writer:
        for first in range(0, n_rows, chunk_rows):
            writer.write(rows(first, min(n_rows, first + chunk_rows)))
        writer.finish()
    record_dataset(manifest, key, writer.relative_paths(), n_rows)


def write_table(out_dir: Path, dataset: contract.RawDataset, table: pa.Table) -> list[str]:
    """Write a whole table; its files, relative to ``out_dir``."""
    with ShardedParquetWriter(out_dir, dataset, table.num_rows) as writer:
        writer.write(table)
    return writer.relative_paths()


def record_dataset(manifest: dict, key: str, files: list[str], n_rows: int) -> None:
    """Note a written dataset's files and row count in the manifest."""
    manifest["files"][key] = files
    manifest["rows"][key] = n_rows


def write_and_record(out_dir: Path, manifest: dict, key: str, table: pa.Table) -> None:
    record_dataset(manifest, key, write_table(out_dir, contract.DATASETS_BY_KEY[key], table), table.num_rows)
