"""What the stand-ins of the extra datasets (examples/extra_datasets.yml) share: their files and
real row counts, the planted-quirk plan, message lists, the chunked file writer and the cards.

Each stand-in is written in the layout and with the column names and types of its Hub repo, a
chunk of rows at a time (each chunk from its own random stream of ``rng_for(seed, "extra", ...)``,
never one of the built-in datasets' streams, so their files do not change), and notes in the
manifest, under ``extra_datasets.<entry name>``, its files, their row counts and the rows of every
planted quirk as ``[file, 0-based row in the file]``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Callable, Iterable, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from preftools.generate.common import GenerationRun, TextBank, concat, n_planted, prefixed_by_source, progress_bar
from preftools.generate.ultrafeedback import UF_INSTRUCTION_PREFIX, UF_SOURCE_P, UF_SOURCES
from preftools.generate.writer import COMPRESSION, JSON_SOURCE_ROW_GROUP_ROWS, PARTIAL_SUFFIX, format_of, \
    remove_data_files, write_json

CHUNK_ROWS = 4000  # rows built and written at a time (each chunk its own random stream)
MIN_ROWS = 50  # rows of the files an entry reads, at the least: every planted quirk occurs
ROW_GROUP_ROWS = 1000

MESSAGE = pa.struct([("content", pa.string()), ("role", pa.string())])
MESSAGES = pa.list_(MESSAGE)
ROLES = ("system", "user", "assistant")
SYSTEM, USER, ASSISTANT = range(3)
DUPLICATE = "duplicate_pair"  # a quirk every stand-in plants: an exact copy of an earlier row of its file
CROSS_DUPLICATE = "cross_dataset_duplicate"


@dataclass(frozen=True)
class StandIn:
    """One extra dataset's Hub repo: its files (repo path, real row count, in the order they are
    generated), which of them the registry entry reads, and its card."""

    key: str  # the entry's name in examples/extra_datasets.yml
    hub_id: str
    files: tuple[tuple[str, int], ...]
    entry_files: tuple[str, ...]
    card: str  # README.md

    def rows(self, scale: float) -> dict[str, int]:
        """Rows per file: the real counts times ``scale``, at least :data:`MIN_ROWS` in the files the
        entry reads (all files grow by the same factor)."""
        real = dict(self.files)
        factor = max(scale, MIN_ROWS / sum(real[f] for f in self.entry_files))
        return {path: max(1, int(round(n * factor))) for path, n in self.files}

    def repo_dir(self, out_dir: Path) -> Path:
        return Path(out_dir) / self.hub_id


def chunks(n: int) -> Iterable[tuple[int, int, int]]:
    """(chunk index, first row, rows) of ``n`` rows in :data:`CHUNK_ROWS`-row chunks."""
    for index, first in enumerate(range(0, n, CHUNK_ROWS)):
        yield index, first, min(CHUNK_ROWS, n - first)


# ======================================================================================
# planted quirks
# ======================================================================================
@dataclass
class QuirkPlan:
    """Rows (0-based, over the files the plan covers, in order) of each planted quirk; a row has at
    most one. ``duplicate_source``: for each duplicate, the earlier row of its chunk it copies;
    ``donors``: rows without a quirk whose pairs the next stand-in repeats (a cross-dataset duplicate)."""

    rows: dict[str, np.ndarray]
    duplicate_source: dict[int, int] = field(default_factory=dict)
    donors: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def in_chunk(self, quirk: str, first: int, count: int) -> list[tuple[int, int]]:
        """(position in the chunk, index among the quirk's rows) of the quirk's rows in a chunk."""
        rows = self.rows.get(quirk, np.zeros(0, np.int64))
        hits = np.flatnonzero((rows >= first) & (rows < first + count))
        return [(int(rows[k] - first), int(k)) for k in hits]


def plan_quirks(rng: np.random.Generator, n: int, rates: Mapping[str, float], n_donors: int = 0,
                fixed: Mapping[str, int] | None = None, eligible: Mapping[str, np.ndarray] | None = None,
                chunk_of: np.ndarray | None = None) -> QuirkPlan:
    """Draw disjoint rows for each quirk: ``n_planted(n, rate, 2)`` of them (or ``fixed[quirk]``),
    among ``eligible[quirk]`` (a bool per row) where given. Each :data:`DUPLICATE` copies the
    nearest earlier row of its chunk (``chunk_of``, a chunk id per row; default: consecutive
    :data:`CHUNK_ROWS`-row chunks) without a quirk (a duplicate without one is dropped). Then
    ``n_donors`` donor rows among those left."""
    fixed = fixed or {}
    eligible = eligible or {}
    order = rng.permutation(n)
    taken = np.zeros(n, bool)
    rows: dict[str, np.ndarray] = {}
    for quirk, rate in rates.items():
        count = fixed.get(quirk, n_planted(n, rate, 2))
        free = order[~taken[order]]
        if quirk in eligible:
            free = free[eligible[quirk][free]]
        rows[quirk] = np.sort(free[:count])
        taken[rows[quirk]] = True
    plan = QuirkPlan(rows)
    if DUPLICATE in rows:
        chunk_of = np.arange(n) // CHUNK_ROWS if chunk_of is None else chunk_of
        kept = []
        for row in rows[DUPLICATE]:
            source = row - 1
            while source >= 0 and chunk_of[source] == chunk_of[row] and taken[source]:
                source -= 1
            if source >= 0 and chunk_of[source] == chunk_of[row]:
                plan.duplicate_source[int(row)] = int(source)
                kept.append(row)
            else:
                taken[row] = False
        rows[DUPLICATE] = np.array(kept, np.int64)
    if n_donors:
        free = order[~taken[order]]
        plan.donors = np.sort(free[:n_donors])
    return plan


def apply_plan(table: pa.Table, first: int, plan: QuirkPlan,
               edits: Mapping[str, Callable[[dict, int], dict]]) -> pa.Table:
    """The chunk ``table`` (rows ``first ..``) with the planted quirks: row -> ``edits[quirk](row,
    k)`` for the k-th row of the quirk (k counts over the whole plan); a duplicate is a copy of its
    source row. Only the planted rows go through Python."""
    changes: dict[int, dict] = {}

    def row_at(position: int) -> dict:
        return table.slice(position, 1).to_pylist()[0]

    for position, _ in plan.in_chunk(DUPLICATE, first, table.num_rows):
        changes[position] = row_at(plan.duplicate_source[first + position] - first)
    for quirk, edit in edits.items():
        for position, k in plan.in_chunk(quirk, first, table.num_rows):
            changes[position] = edit(row_at(position), k)
    return replace_rows(table, changes)


def replace_rows(table: pa.Table, changes: Mapping[int, dict]) -> pa.Table:
    """``table`` with the rows at the positions of ``changes`` replaced by its values."""
    if not changes:
        return table
    pieces, previous = [], 0
    for position in sorted(changes):
        pieces.append(table.slice(previous, position - previous))
        pieces.append(pa.Table.from_pylist([changes[position]], schema=table.schema))
        previous = position + 1
    pieces.append(table.slice(previous))
    return pa.concat_tables(pieces).combine_chunks()


def take_rows(table: pa.Table, first: int, rows: np.ndarray) -> list[dict]:
    """The rows of the global row list ``rows`` that fall into the chunk ``table`` (rows ``first ..``)."""
    hits = rows[(rows >= first) & (rows < first + table.num_rows)] - first
    return table.take(pa.array(hits, pa.int64())).to_pylist() if len(hits) else []


def instructions(rng: np.random.Generator, bank: TextBank, source_index: np.ndarray, text_factor: float) -> pa.Array:
    """UltraFeedback-like instructions: a prefix of the row's source (``UF_SOURCES[source_index]``)
    and a lower-case sentence or few."""
    prefix = prefixed_by_source(rng, source_index, UF_SOURCES, UF_INSTRUCTION_PREFIX)
    return concat(prefix, " ", pc.utf8_lower(bank.sentences(rng, len(source_index), 1, 4, text_factor)))


def random_sources(rng: np.random.Generator, n: int) -> np.ndarray:
    """Sources (indices into ``UF_SOURCES``) in UltraFeedback's proportions."""
    return rng.choice(len(UF_SOURCES), n, p=np.array(UF_SOURCE_P) / sum(UF_SOURCE_P))


def restyle(text: str) -> str:
    """The same text in other letter case and white space: equal after lower-casing and collapsing
    white space (a cross-dataset duplicate)."""
    return "  ".join(text.swapcase().split(" "))


# ======================================================================================
# message lists
# ======================================================================================
def message_lists(content: pa.Array, role: np.ndarray, lengths: np.ndarray) -> pa.ListArray:
    """Lists of {content, role} (the Hub's field order): ``lengths[i]`` messages for row ``i``,
    taken in order from ``content`` and the role codes ``role`` (:data:`ROLES`)."""
    offsets = np.zeros(len(lengths) + 1, np.int32)
    np.cumsum(lengths, out=offsets[1:])
    roles = pa.array(np.array(ROLES, dtype=object)[np.asarray(role, np.int64)], pa.string())
    values = pa.StructArray.from_arrays([content, roles], fields=list(MESSAGE))
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values, type=MESSAGES)


def user_assistant(prompt: pa.Array, response: pa.Array) -> pa.ListArray:
    """[{prompt, user}, {response, assistant}] per row."""
    n = len(prompt)
    order = np.stack([np.arange(n), n + np.arange(n)], axis=1).ravel()
    content = pa.concat_arrays([prompt, response]).take(pa.array(order))
    return message_lists(content, np.tile([USER, ASSISTANT], n), np.full(n, 2))


# ======================================================================================
# files
# ======================================================================================
class FileWriter:
    """One data file written from chunks of rows: a partial Parquet file, at :meth:`finish` renamed
    (Parquet) or converted to JSON Lines by DuckDB (``.jsonl``, ``.jsonl.gz``), as the built-in
    datasets' files are (:mod:`.writer`)."""

    def __init__(self, path: Path, schema: pa.Schema):
        self.path = path
        self.format = format_of(path)
        self.partial = path.with_name(path.name + PARTIAL_SUFFIX)
        self.rows = 0
        path.parent.mkdir(parents=True, exist_ok=True)
        self._row_group_rows = ROW_GROUP_ROWS if self.format == "parquet" else JSON_SOURCE_ROW_GROUP_ROWS
        self._writer = pq.ParquetWriter(str(self.partial), schema, compression=COMPRESSION, write_statistics=True)

    def write(self, table: pa.Table) -> None:
        self._writer.write_table(table, row_group_size=self._row_group_rows)
        self.rows += table.num_rows

    def finish(self) -> None:
        self._writer.close()
        if self.format == "parquet":
            self.partial.replace(self.path)
        else:
            write_json(self.partial, self.path)
            self.partial.unlink()

    def close(self) -> None:
        self._writer.close()
        self.partial.unlink(missing_ok=True)


def write_stand_in(run: GenerationRun, scale: float, stand_in: StandIn, schema: pa.Schema,
                   tables: Callable[[str, int, int, int], pa.Table], manifest: dict, write: bool,
                   copies: Mapping[str, str] | None = None) -> dict[str, int]:
    """Build every file of ``stand_in`` chunk by chunk (``tables(file, chunk index, first row, rows)``),
    write them and its card when ``write``; ``copies`` maps a file to another one that gets the same
    rows. Notes the files in the manifest; the rows per file."""
    rows = stand_in.rows(scale)
    copies = dict(copies or {})
    repo = stand_in.repo_dir(run.out_dir)
    if write:
        repo.mkdir(parents=True, exist_ok=True)
        remove_data_files(repo)
        (repo / "README.md").write_text(stand_in.card, encoding="utf-8")
    for path, n in rows.items():
        if path in copies:
            continue
        targets = [path] + [copy for copy, original in copies.items() if original == path]
        writers = [FileWriter(repo / p, schema) for p in targets] if write else []
        try:
            for index, first, count in progress_bar(list(chunks(n)), desc=f"{stand_in.key} {path}",
                                                     enabled=run.progress):
                table = tables(path, index, first, count)
                assert table.num_rows == count, (stand_in.key, path, table.num_rows, count)
                for w in writers:
                    w.write(table)
            for w in writers:
                w.finish()
        except BaseException:
            for w in writers:
                w.close()
            raise
    if write:
        section = manifest.setdefault("extra_datasets", {}).setdefault(stand_in.key, {})
        section["hub_id"] = stand_in.hub_id
        section["files"] = [PurePosixPath(stand_in.hub_id, p).as_posix() for p in rows]
        section["rows"] = rows
        section["entry_files"] = list(stand_in.entry_files)
    return rows


def record_planted(manifest: dict, key: str, planted: Mapping[str, list[list]], **stats) -> None:
    """The planted rows (``[file, row]`` per quirk), their counts and other counts of a stand-in."""
    section = manifest.setdefault("extra_datasets", {}).setdefault(key, {})
    section["planted"] = {quirk: rows for quirk, rows in planted.items()}
    section["planted_counts"] = {quirk: len(rows) for quirk, rows in planted.items()}
    section.update(stats)


def card(pretty_name: str, license: str, body: str, configs: list[dict] | None = None, **extra) -> str:
    """A dataset card: YAML front matter (``configs:`` only where the real card has them), one line of text."""
    import yaml

    front: dict = {"license": license, **extra, "pretty_name": pretty_name}
    if configs is not None:
        front["configs"] = configs
    return "---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n\n" + f"# {pretty_name}\n\n{body}\n"
