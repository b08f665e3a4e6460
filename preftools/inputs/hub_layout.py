"""Which files of a Hugging Face dataset repo hold its data, decided the way the Hub decides.

A repo's data files are Parquet, JSON (JSON Lines or one JSON array per file; ``.json``,
``.jsonl``) or CSV (``.csv``, a header row first), JSON and CSV optionally compressed (``.gz``,
``.zst``), in any of the Hub's layouts:
``data/<split>-0000k-of-0000n[-<hash>].parquet``, ``<config>/<split>-*.parquet``,
``default/<split>/0000.parquet`` (the Parquet conversion on ``refs/convert/parquet``),
``<split>.jsonl`` at the root or under a config folder (``helpful-base/train.jsonl.gz``).

The rule is the ``datasets`` library's, which the Hub's dataset viewer runs: the card's
``configs:`` / ``data_files`` (README.md front matter) when it has them, else the Hub's default
patterns, the first that match. It is applied to a list of repo paths (a local folder's files, or
the Hub's listing of a revision before anything is downloaded), mirrored as empty files in an
in-memory file system so that the library's own glob resolves them.

The build (dbt) applies the same rule in ``macros/raw_files.sql``, with the default patterns
generated from the library into ``macros/hub_patterns.sql`` (``python -m preftools.inputs.hub_layout
--write-macro``), and reads each file with the DuckDB call :func:`duckdb_reader` gives;
tests/python/test_hub_layout.py checks that the two agree on both.
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from preftools.files import CARD_NAME

PARQUET_SUFFIXES = (".parquet",)
JSON_SUFFIXES = (".json", ".jsonl", ".json.gz", ".jsonl.gz", ".json.zst", ".jsonl.zst")
CSV_SUFFIXES = (".csv", ".csv.gz", ".csv.zst")
# how DuckDB reads each format: a CSV's first row names its columns, every column is text
READER_OPTIONS = {"parquet": "", "json": "", "csv": ", header = true, all_varchar = true"}
MACRO_PATH = Path(__file__).resolve().parents[2] / "macros" / "hub_patterns.sql"


class LayoutError(ValueError):
    """The repo's card or files do not say which files hold the data (one line, with the fix)."""


@dataclass(frozen=True)
class DataFile:
    path: str  # repo path, posix, relative to the repo root ("data/train-00000-of-00001.parquet")
    split: str
    format: str  # "parquet", "json" or "csv"


def file_format(path: str) -> str | None:
    """"parquet", "json", "csv", or None for a file the build cannot read."""
    name = path.lower()
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if name.endswith(JSON_SUFFIXES):
        return "json"
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    return None


def duckdb_reader(path: str, fmt: str) -> str:
    """The DuckDB table function call that reads one data file as the build does:
    ``read_parquet('<path>')``, ``read_json('<path>')`` or
    ``read_csv('<path>', header = true, all_varchar = true)``."""
    quoted = "'" + str(path).replace("'", "''") + "'"
    return f"read_{fmt}({quoted}{READER_OPTIONS[fmt]})"


def card_configs(card_text: str | None) -> dict[str, dict]:
    """The card's ``configs:`` by name ({} without a card or without configs)."""
    if not card_text:
        return {}
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCard

    try:
        data = DatasetCard(card_text).data
        return dict(MetadataConfigs.from_dataset_card_data(data))
    except ValueError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise LayoutError(f"README.md `configs:` cannot be read ({first}) -- write data_files as a path "
                          "pattern, a list of them, or a list of {split, path} (Hub dataset card docs)") from exc


def choose_config(configs: dict[str, dict], config: str | None) -> str | None:
    """The config whose files are read: ``config`` when given, else the card's default (``default:
    true``, else the only one, else the one named "default"); None when the card has no configs."""
    if not configs:
        if config not in (None, "default"):
            raise LayoutError(f"config {config!r} asked for, but the card declares no `configs:`")
        return None
    if config is not None:
        if config not in configs:
            raise LayoutError(f"config {config!r} is not in the card's configs ({', '.join(configs)})")
        return config
    defaults = [name for name, c in configs.items() if c.get("default")]
    if defaults:
        return defaults[0]
    if len(configs) == 1:
        return next(iter(configs))
    if "default" in configs:
        return "default"
    raise LayoutError(f"the card declares several configs ({', '.join(configs)}) and none is the default -- name one")


def resolve(paths: list[str], card_text: str | None = None, config: str | None = None) -> list[DataFile]:
    """The data files among ``paths`` (repo paths), in the Hub's order: split by split (as the card
    or the default patterns list them), files sorted within a split. Files the build cannot read
    (text, TSV, ...) are left out; :class:`LayoutError` when no pattern matches anything."""
    import fsspec
    from datasets.data_files import get_data_patterns, resolve_pattern, sanitize_patterns

    configs = card_configs(card_text)
    chosen = choose_config(configs, config)
    fs = fsspec.filesystem("memory")
    root = f"/preftools-layout-{uuid.uuid4().hex}"
    try:
        for path in paths:
            fs.pipe(f"{root}/{path}", b"")
        base = f"memory://{root}"
        if chosen is not None and configs[chosen].get("data_files"):
            patterns = sanitize_patterns(configs[chosen]["data_files"])
        else:
            try:
                patterns = get_data_patterns(base)
            except Exception as exc:  # EmptyDatasetError, FileNotFoundError
                raise LayoutError(f"no file matches the Hub's data-file patterns ({type(exc).__name__})") from exc
        found: list[DataFile] = []
        seen: set[str] = set()
        for split, split_patterns in patterns.items():
            for pattern in split_patterns:
                try:
                    matched = resolve_pattern(pattern, base)
                except FileNotFoundError:
                    continue
                for url in sorted(matched):
                    rel = url.split(root + "/", 1)[1]
                    fmt = file_format(rel)
                    if fmt and rel not in seen:
                        seen.add(rel)
                        found.append(DataFile(rel, str(split), fmt))
        return found
    finally:
        fs.rm(root, recursive=True) if fs.exists(root) else None


def local_paths(repo_dir: Path) -> list[str]:
    """Every file below ``repo_dir`` as a repo path (posix, relative), sorted."""
    out = []
    for dirpath, _dirs, files in os.walk(repo_dir):
        for name in files:
            out.append(PurePosixPath(Path(dirpath, name).relative_to(repo_dir)).as_posix())
    return sorted(out)


def local_data_files(repo_dir: Path, config: str | None = None,
                     rule: Callable[[list[str], str | None, str | None], list[DataFile]] | None = None) -> list[DataFile]:
    """:func:`resolve` (or ``rule``, called as resolve is) on a local copy of a repo
    (``$RAW_DATA_DIR/<org>/<name>``, its card read from README.md); [] when the folder does not
    exist or, without a card, holds no data file."""
    repo_dir = Path(repo_dir)
    if not repo_dir.is_dir():
        return []
    card = repo_dir / CARD_NAME
    card_text = card.read_text(encoding="utf-8", errors="replace") if card.is_file() else None
    try:
        return (rule or resolve)(local_paths(repo_dir), card_text, config)
    except LayoutError:
        if card_text is None:
            return []
        raise


def read_table(repo_dir: Path, files: list[DataFile] | None = None):
    """The rows of a local repo's data files as one Arrow table, in file order (Parquet with
    pyarrow, JSON and CSV with DuckDB's readers, as the build reads them)."""
    import duckdb
    import pyarrow as pa
    import pyarrow.parquet as pq

    repo_dir = Path(repo_dir)
    files = local_data_files(repo_dir) if files is None else files
    tables = []
    for f in files:
        full = str(repo_dir / f.path)
        if f.format == "parquet":
            tables.append(pq.read_table(full))
        else:
            with duckdb.connect() as con:
                tables.append(con.sql(f"select * from {duckdb_reader(full, f.format)}").to_arrow_table())
    if not tables:
        raise FileNotFoundError(f"no data file under {repo_dir}")
    return pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]


# --------------------------------------------------------------------------------------------
# the default patterns, for the build's Jinja twin of resolve()


def default_pattern_groups() -> list[dict[str, list[str]]]:
    """The Hub's default patterns in the order they are tried: first the sharded split pattern
    (split taken from the file name), then the groups of split keywords."""
    from datasets.data_files import ALL_DEFAULT_PATTERNS, ALL_SPLIT_PATTERNS

    groups = [{"{split}": [p]} for p in ALL_SPLIT_PATTERNS]
    groups += [{str(split): list(patterns) for split, patterns in group.items()} for group in ALL_DEFAULT_PATTERNS]
    return groups


def render_macro() -> str:
    import json

    body = json.dumps(default_pattern_groups(), indent=4)
    return (
        "{#- GENERATED by `python -m preftools.inputs.hub_layout --write-macro` from the datasets library's\n"
        "    default data-file patterns (what the Hub applies to a repo without `configs:` in its card),\n"
        "    in the order they are tried. \"{split}\" stands for the split, taken from the file name.\n"
        "    Do not edit by hand: tests/python/test_hub_layout.py fails when this file is stale. -#}\n"
        "{% macro hub_default_pattern_groups() %}\n"
        f"{{{{ return({body}) }}}}\n"
        "{% endmacro %}\n"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m preftools.inputs.hub_layout", description=__doc__.split("\n\n")[0])
    ap.add_argument("--write-macro", action="store_true", help=f"write {MACRO_PATH.name}")
    ap.add_argument("--check-macro", action="store_true", help="exit 1 when the committed macro is stale")
    ap.add_argument("repo_dir", nargs="?", help="print the data files of this local repo folder")
    args = ap.parse_args(argv)
    if args.write_macro:
        MACRO_PATH.write_text(render_macro(), encoding="utf-8")
        return 0
    if args.check_macro:
        return 0 if MACRO_PATH.read_text(encoding="utf-8") == render_macro() else 1
    if args.repo_dir:
        for f in local_data_files(Path(args.repo_dir)):
            print(f"{f.split}\t{f.format}\t{f.path}")
        return 0
    ap.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
