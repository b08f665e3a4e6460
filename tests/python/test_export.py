"""The Parquet export (docs/training.md "Export"; results written atomically): every mart of the session
warehouse is exported, then read back with pyarrow, DuckDB and Hugging Face ``datasets`` and
compared with the DuckDB tables; re-exports are byte-identical; failures (unwritable directory,
a write error mid-export, SIGTERM, SIGKILL, a locked or missing warehouse) leave the previous
export intact, no partial or temporary files, and one clear line.

Expected values come from the warehouse itself (information_schema, ``count(*)``, the rows as
DuckDB returns them to Python) and from the issue text, never from preftools/outputs/export.py. Every
string is exported redacted (docs/pii.md): the expected rows are the warehouse's with the rule applied
by this file's own reading of the seeds (``redacted``), and an independent scan finds no secret (nor,
with ``--redact-personal``, an email or public IP address) in any exported string. The cards'
benchmark contamination section is checked on the session warehouse (no eval set registered) and
on test_contamination's build with examples/eval_sets.yml, then published to the stand-in Hub. The
cards' near duplicates section is checked against the marts (preference_pairs' flags,
near_duplicate_summary) and the settings meta.warehouse_build_info records. Every card is also
read rendered, as the Hub shows it (card_markdown: markdown-it-py), for what makes it read as
written for its readers.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import ipaddress
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import card_markdown
from conftest import REPO, copy_warehouse, run_make
from hub_standin import TOKEN, hub_env
from preftools.outputs import export as ex
from test_contamination import built  # noqa: F401 - the fixture: one build with examples/eval_sets.yml, shared


pytestmark = pytest.mark.slow

FILE_NAME = re.compile(r"(?P<split>\w+(?:\.\w+)*)-(?P<index>\d{5})-of-(?P<total>\d{5})\.parquet")
MAX_FILE_BYTES = 500 * 1000 * 1000  # files under about 500 MB each, as the Hub advises
TRL_ROLES = {"system", "user", "assistant"}


# --------------------------------------------------------------------------------------------
# helpers: the warehouse side, computed without preftools.outputs.export


def duck_marts(con) -> list[str]:
    return [r[0] for r in con.execute(
        "select table_name from information_schema.tables "
        "where table_schema = 'main' and table_type = 'BASE TABLE' order by 1"
    ).fetchall()]


def duck_columns(con, table: str) -> list[tuple[str, str]]:
    return [tuple(r) for r in con.execute(
        "select column_name, data_type from information_schema.columns "
        "where table_schema = 'main' and table_name = ? order by ordinal_position", [table]
    ).fetchall()]


def duck_rows(con, sql: str) -> list[dict]:
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def canon(value) -> str:
    """A canonical string for a row or a value (struct field order kept; NaN == NaN)."""
    return json.dumps(value, default=repr, ensure_ascii=False)


def multiset(rows) -> Counter:
    return Counter(canon(r) for r in rows)


# --------------------------------------------------------------------------------------------
# secrets and personal data: the rule (docs/pii.md) read from its seeds by this file


@dataclass(frozen=True)
class Kind:
    kind: str
    category: str
    regex: re.Pattern
    replacement: str


with open(REPO / "seeds" / "pii_patterns.csv", newline="") as _fh:
    KINDS = [Kind(r["kind"], r["category"], re.compile(r["pattern"], re.ASCII), r["replacement"]) for r in csv.DictReader(_fh)]
with open(REPO / "seeds" / "pii_reserved_networks.csv", newline="") as _fh:
    RESERVED = [ipaddress.ip_network(r["network"]) for r in csv.DictReader(_fh)]
SECRET_KINDS = [k for k in KINDS if k.category == "secret"]
PERSONAL_KINDS = [k for k in KINDS if k.category == "personal"]


def public_ip(text: str) -> bool:
    octets = [int(part) for part in text.split(".")]
    return max(octets) <= 255 and not any(ipaddress.ip_address(".".join(map(str, octets))) in n for n in RESERVED)


def findings(text: str, kinds: list[Kind]) -> Counter:
    """Kind -> matches in ``text`` (each kind on its own, left to right; an IP address when public)."""
    return +Counter({k.kind: sum(1 for m in k.regex.finditer(text) if k.kind != "ip_address" or public_ip(m.group(0)))
                     for k in kinds})


def redacted(text: str, personal: bool = False) -> tuple[str, Counter]:
    """``text`` as the export writes it: each secret kind's matches replaced in the seed's order, then
    (``personal``) the emails and the public IP addresses; again while a pass replaces something (a
    key glued to the end of another starts at a word boundary once that one is replaced)."""
    counts: Counter = Counter()
    kinds = SECRET_KINDS + (PERSONAL_KINDS if personal else [])
    while True:
        before = text
        for k in kinds:
            def replace(m, k=k):
                if k.kind == "ip_address" and not public_ip(m.group(0)):
                    return m.group(0)
                counts[k.kind] += 1
                return k.replacement
            text = k.regex.sub(replace, text)
        if text == before:
            return text, counts


def strings(value):
    """Every string in a value as Python holds a row (lists, tuples, dicts: keys and values)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings(k)
            yield from strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from strings(v)


def redact_value(value, counts: Counter, personal: bool = False):
    if isinstance(value, str):
        text, found = redacted(value, personal)
        counts.update(found)
        return text
    if isinstance(value, dict):
        return {redact_value(k, counts, personal): redact_value(v, counts, personal) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_value(v, counts, personal) for v in value)
    return value


def parquet_strings(root: Path):
    """(file, column, string) for every string of every Parquet file under root, nested ones included."""
    for path in sorted(root.rglob("*.parquet")):
        table = pq.read_table(path)
        for column in table.column_names:
            for value in table.column(column).to_pylist():
                for text in strings(value):
                    yield path, column, text


def left_in(root: Path, kinds: list[Kind]) -> Counter:
    """(file, column, kind) -> findings in the exported Parquet files, cards and manifest under root."""
    found: Counter = Counter()
    for path, column, text in parquet_strings(root):
        found.update({(path.relative_to(root).as_posix(), column, k): n for k, n in findings(text, kinds).items()})
    for text_file in [*sorted(root.rglob("README.md")), root / "manifest.json"]:
        found.update({(text_file.relative_to(root).as_posix(), None, k): n
                      for k, n in findings(text_file.read_text(encoding="utf-8"), kinds).items()})
    return found


def is_nested_list_of_struct(duck_type: str) -> bool:
    return duck_type.startswith("STRUCT(") and duck_type.endswith("[]")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree(root: Path) -> dict[str, str]:
    """Every file under root (hidden ones included, except the lock file that holds a PID) -> sha256."""
    return {
        str(p.relative_to(root)): sha256(p)
        for p in sorted(root.rglob("*")) if p.is_file() and p.name != ".export.lock"
    }


def parquet_tree(root: Path) -> dict[str, str]:
    return {k: v for k, v in tree(root).items() if k.endswith(".parquet")}


def published_tree(root: Path) -> dict[str, str]:
    """The Parquet files and the dataset cards (what a Hub repo of a mart holds)."""
    return {k: v for k, v in tree(root).items() if k.endswith((".parquet", "/README.md"))}


def leftovers(root: Path) -> list[str]:
    """Temporary or partial files/folders anywhere under root."""
    return sorted(
        str(p.relative_to(root)) for p in root.rglob("*")
        if ".export-tmp-" in p.name or p.name.endswith((".partial", ".tmp"))
    )


def mart_files(export_dir: Path, mart: str) -> dict[str, list[Path]]:
    """split -> files, from the folder listing (not from the manifest)."""
    out: dict[str, list[Path]] = {}
    for path in sorted((export_dir / mart / "data").iterdir()):
        match = FILE_NAME.fullmatch(path.name)
        assert match, f"unexpected file {path}"
        out.setdefault(match["split"], []).append(path)
    return out


def run_cli(*args: str, env: dict | None = None, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "preftools.export", "--no-progress", *args],
        cwd=REPO, env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=timeout,
    )


def assert_one_clear_line(stderr: str, *needles: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


# --------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="module")
def exported(warehouse, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / "exports"
    proc = run_cli("--duckdb-path", str(warehouse.path), "--export-dir", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "exported" in proc.stdout
    return out


@pytest.fixture(scope="module")
def con(warehouse):
    with warehouse.connect() as c:
        yield c


@pytest.fixture(scope="module")
def marts(con) -> list[str]:
    names = duck_marts(con)
    assert names, "the warehouse has no marts"
    return names


@pytest.fixture(scope="module")
def as_exported(con):
    """mart -> (its rows as the export writes them, the replacements per kind), from the warehouse."""
    @functools.cache
    def rows(mart: str) -> tuple[list[dict], Counter]:
        counts: Counter = Counter()
        return [redact_value(r, counts) for r in duck_rows(con, f'select * from main."{mart}"')], counts
    return rows


# --------------------------------------------------------------------------------------------
# layout and contents


def test_every_mart_is_exported_in_the_hub_layout(exported, marts):
    folders = sorted(p.name for p in exported.iterdir() if p.is_dir() and not p.name.startswith("."))
    assert folders == marts
    for mart in marts:
        assert sorted(p.name for p in (exported / mart).iterdir()) == ["README.md", "data"], mart
        for split, files in mart_files(exported, mart).items():
            totals = {int(FILE_NAME.fullmatch(f.name)["total"]) for f in files}
            indexes = [int(FILE_NAME.fullmatch(f.name)["index"]) for f in files]
            assert totals == {len(files)} and indexes == list(range(len(files))), (mart, split)
            for f in files:
                assert f.stat().st_size < MAX_FILE_BYTES
                meta = pq.ParquetFile(f).metadata
                codecs = {meta.row_group(g).column(c).compression
                          for g in range(meta.num_row_groups) for c in range(meta.num_columns)}
                assert codecs == ({"ZSTD"} if meta.num_row_groups else set()), (f, codecs)
    assert leftovers(exported) == []
    assert (exported / "manifest.json").is_file()


def test_pyarrow_and_duckdb_read_back_the_tables(exported, marts, con, as_exported):
    """Row counts, column names, DuckDB and Arrow types, and every row (as a multiset, secrets
    redacted) equal."""
    for mart in marts:
        files = [f for fs in mart_files(exported, mart).values() for f in fs]
        table = pa.concat_tables(pq.read_table(f) for f in files)
        columns = duck_columns(con, mart)
        assert table.num_rows == con.execute(f'select count(*) from main."{mart}"').fetchall()[0][0], mart
        assert table.column_names == [c for c, _ in columns], mart
        # Arrow types as DuckDB itself converts the table (list field names aside).
        expected = con.sql(f'select * from main."{mart}" limit 0').to_arrow_table().schema
        for got, want in zip(table.schema, expected):
            assert got.type.equals(want.type), (mart, got, want)
        # DuckDB types after the round trip through Parquet.
        paths = [str(f) for f in files]
        described = [(r[0], r[1]) for r in con.execute("describe select * from read_parquet(?)", [paths]).fetchall()]
        assert described == columns, mart
        assert multiset(table.to_pylist()) == multiset(as_exported(mart)[0]), mart


def test_list_of_struct_columns_survive_value_for_value(exported, marts, con, as_exported):
    nested = [(m, c) for m in marts for c, t in duck_columns(con, m) if is_nested_list_of_struct(t)]
    assert nested, "no list-of-struct column in the marts: the check would be vacuous"
    non_empty = 0
    for mart, column in nested:
        files = [f for fs in mart_files(exported, mart).values() for f in fs]
        got = pa.concat_tables(pq.read_table(f, columns=[column]) for f in files)[column].to_pylist()
        want = [r[column] for r in as_exported(mart)[0]]
        assert multiset(got) == multiset(want), (mart, column)
        non_empty += sum(1 for v in want if v)
    assert non_empty > 0


def test_datasets_loads_every_mart_without_configuration(exported, marts, con, hf_env, as_exported):
    import datasets

    cache = str(hf_env / "load")
    loaded_some = False
    for mart in marts:
        splits = mart_files(exported, mart)
        if sum(pq.ParquetFile(f).metadata.num_rows for fs in splits.values() for f in fs) == 0:
            # datasets 5.2.0 cannot load a Parquet split with no rows ("Instruction 'train'
            # corresponds to no data"); pyarrow and DuckDB read the schema-only file (test above).
            continue
        loaded_some = True
        by_files = datasets.load_dataset(
            "parquet", data_files={s: [str(f) for f in fs] for s, fs in splits.items()}, cache_dir=cache
        )
        by_folder = datasets.load_dataset(str(exported / mart), cache_dir=cache)
        expected_features = datasets.Features.from_arrow_schema(
            con.sql(f'select * from main."{mart}" limit 0').to_arrow_table().schema
        )
        columns = [c for c, _ in duck_columns(con, mart)]
        rows = as_exported(mart)[0]
        for loaded in (by_files, by_folder):
            assert sorted(loaded) == sorted(splits), mart
            assert sum(len(loaded[s]) for s in loaded) == len(rows), mart
            for split in loaded:
                assert loaded[split].column_names == columns, mart
                assert loaded[split].features == expected_features, mart
        assert multiset(r for s in by_folder for r in by_folder[s].to_list()) == multiset(rows), mart
    assert loaded_some


def test_manifest_describes_files_counts_schema_and_build(exported, marts, con):
    manifest = json.loads((exported / "manifest.json").read_text())
    assert sorted(manifest["marts"]) == marts
    assert "preftools.export" in manifest["command"] and manifest["preftools_version"]
    has_build_info = con.execute(
        "select count(*) from information_schema.tables "
        "where table_schema = 'meta' and table_name = 'warehouse_build_info'"
    ).fetchall()[0][0]
    build = None
    if has_build_info:
        (row,) = duck_rows(con, "select * from meta.warehouse_build_info")
        build = json.loads(json.dumps(row, default=lambda v: v.isoformat()))
        assert build["invocation_id"] and build["random_seed"] is not None and build["raw_revisions"]
        # published beside the data: the raw data by its revision, not by the build machine's folder
        del build["raw_data_dir"]
    for mart in marts:
        entry = manifest["marts"][mart]
        count = con.execute(f'select count(*) from main."{mart}"').fetchall()[0][0]
        assert entry["num_rows"] == count
        assert [c["name"] for c in entry["schema"]] == [c for c, _ in duck_columns(con, mart)]
        assert [c["duckdb_type"] for c in entry["schema"]] == [t for _, t in duck_columns(con, mart)]
        listed = sorted(f["path"] for f in entry["files"])
        on_disk = sorted(str(p.relative_to(exported)) for fs in mart_files(exported, mart).values() for p in fs)
        assert listed == on_disk
        for f in entry["files"]:
            path = exported / f["path"]
            assert pq.ParquetFile(path).metadata.num_rows == f["num_rows"]
            assert sha256(path) == f["sha256"] and path.stat().st_size == f["num_bytes"]
        assert entry["build"] == build


def machine_paths(*paths) -> dict[str, str]:
    """Absolute paths of this machine (as given and resolved) -> what they are; "/" left out."""
    out = {}
    for label, path in paths:
        for form in {str(path), os.path.realpath(path)}:
            if Path(form).is_absolute() and len(Path(form).parts) > 1:
                out[form.rstrip("/")] = label
    return out


def test_no_path_of_the_build_machine_is_published(exported, warehouse, con):
    """Cards and manifest.json name the raw data by Hub id and revision, never by a local path:
    no absolute path of the build (RAW_DATA_DIR, DUCKDB_PATH, EXPORT_DIR, the repo, the home and
    temp folders) in any text file of the export. The session build reads generated data from a
    temp folder and the fixture exports with absolute --duckdb-path and --export-dir."""
    import tempfile

    paths = machine_paths(
        ("RAW_DATA_DIR", warehouse.raw_dir), ("DUCKDB_PATH", warehouse.path), ("EXPORT_DIR", exported),
        ("the repo", REPO), ("the home folder", Path.home()), ("the temp folder", tempfile.gettempdir()),
    )
    texts = [p for p in sorted(exported.rglob("*"))
             if p.is_file() and (p.suffix in (".md", ".json") or p.name in ("README.md", "manifest.json"))]
    assert any(p.name == "manifest.json" for p in texts) and sum(p.name == "README.md" for p in texts) > 1
    found = [
        (str(p.relative_to(exported)), label, path)
        for p in texts for path, label in paths.items() if path in p.read_text(encoding="utf-8")
    ]
    assert found == []
    # what names the raw data instead: the build's raw_revisions
    (build,) = duck_rows(con, "select raw_revisions from meta.warehouse_build_info")
    body = (exported / "preference_pairs" / "README.md").read_text(encoding="utf-8")
    assert f"| raw data revision | {build['raw_revisions']} |" in body
    manifest = json.loads((exported / "manifest.json").read_text())
    assert all(m["build"]["raw_revisions"] == build["raw_revisions"] for m in manifest["marts"].values())


def test_published_build_info_drops_local_paths():
    """A RAW_DATA_DIR that a revision text quotes (a file:// folder read at build time) is named by
    the variable instead; the Hub (hf://) is kept."""
    from preftools.outputs import cards

    local = {"raw_data_dir": "file:///srv/me/raw", "random_seed": 42,
             "raw_revisions": "unknown (file:///srv/me/raw is read at build time; the revision is not recorded)"}
    assert cards.public_build(local) == {
        "random_seed": 42, "raw_revisions": "unknown (RAW_DATA_DIR is read at build time; the revision is not recorded)"}
    hub = {"raw_data_dir": "hf://datasets", "raw_revisions": "unknown (hf://datasets is read at build time)"}
    assert cards.public_build([hub]) == [{"raw_revisions": "unknown (hf://datasets is read at build time)"}]
    assert "/home/me" not in ex.public_command(
        ["python", "-m", "preftools.export", "--duckdb-path", "/home/me/w.duckdb", "--export-dir=/home/me/out", "--marts", "a"])


# --------------------------------------------------------------------------------------------
# determinism


def test_second_export_is_byte_identical(exported, warehouse, tmp_path):
    again = tmp_path / "again"
    assert run_cli("--duckdb-path", str(warehouse.path), "--export-dir", str(again),
                   env={"DUCKDB_THREADS": "1"}).returncode == 0
    assert published_tree(again) == published_tree(exported)
    assert any(k.endswith("/README.md") for k in published_tree(again))
    # Re-exporting over an existing export replaces it with the same bytes.
    before = tree(again)
    assert run_cli("--duckdb-path", str(warehouse.path), "--export-dir", str(again)).returncode == 0
    assert tree(again) == before


def test_many_files_and_row_groups_do_not_depend_on_batching(warehouse, con, tmp_path, monkeypatch, as_exported):
    """Small limits force several files and row groups per mart; files stay identical whatever the
    batch size DuckDB streams with, row groups have a fixed size, and everything reads back."""
    monkeypatch.setattr(ex, "MAX_FILE_BYTES", 40_000)
    monkeypatch.setattr(ex, "MIN_ROW_GROUP_ROWS", 1)
    monkeypatch.setattr(ex, "MAX_ROW_GROUP_ROWS", 97)
    trees = []
    for batch_rows in (7, 1000):
        monkeypatch.setattr(ex, "BATCH_ROWS", batch_rows)
        out = tmp_path / f"batch{batch_rows}"
        ex.export(warehouse.path, out, progress=False)
        trees.append(parquet_tree(out))
    assert trees[0] == trees[1]

    manifest = json.loads((out / "manifest.json").read_text())
    multi = [m for m in manifest["marts"] if any(len(fs) > 1 for fs in mart_files(out, m).values())]
    assert multi, "no mart was split into several files"
    for mart in manifest["marts"]:
        rows = 0
        for files in mart_files(out, mart).values():
            sizes = [pq.ParquetFile(f).metadata.row_group(g).num_rows
                     for f in files for g in range(pq.ParquetFile(f).metadata.num_row_groups)]
            assert len(set(sizes[:-1])) <= 1 and (not sizes or sizes[-1] <= sizes[0]), (mart, sizes)
            rows += sum(sizes)
        assert rows == con.execute(f'select count(*) from main."{mart}"').fetchall()[0][0]
    for mart in multi[:2]:
        files = [str(f) for fs in mart_files(out, mart).values() for f in fs]
        cur = con.execute("select * from read_parquet(?)", [files])
        got = [dict(zip([d[0] for d in cur.description], r)) for r in cur.fetchall()]
        assert multiset(got) == multiset(as_exported(mart)[0]), mart


# --------------------------------------------------------------------------------------------
# preference_pairs (and any mart listed in SPLIT_BY)


BUILT_IN_DATASETS = ("ultrafeedback", "code_ultrafeedback", "rever")


def test_preference_pairs_rows_pass_a_trl_check(exported, marts, con):
    """One split per dataset for the training pairs and one `<dataset>_flagged` split for the
    pairs an integrity check flags; every row in TRL's explicit-prompt form: prompt =
    messages up to the last user turn, chosen/rejected = one assistant turn each. (make
    test-clients runs TRL itself on these files.)"""
    assert "preference_pairs" in marts, f"main.preference_pairs is not in the warehouse: {marts}"
    splits = mart_files(exported, "preference_pairs")
    datasets_in_table = [r[0] for r in con.execute(
        "select distinct dataset from main.preference_pairs order by 1").fetchall()]
    flagged_in_table = [r[0] for r in con.execute(
        "select distinct dataset from main.preference_pairs where len(integrity_flags) > 0 order by 1").fetchall()]
    assert sorted(splits) == sorted(datasets_in_table + [d + "_flagged" for d in flagged_in_table])
    for split, files in splits.items():
        table = pa.concat_tables(pq.read_table(f) for f in files)
        dataset, flagged = split.removesuffix("_flagged"), split.endswith("_flagged")
        assert table.num_rows == con.execute(
            "select count(*) from main.preference_pairs where dataset = ? and (len(integrity_flags) > 0) = ?",
            [dataset, flagged]).fetchall()[0][0]
        for row in table.to_pylist():
            assert row["dataset"] == dataset and bool(row["integrity_flags"]) == flagged, row["pair_id"]
            prompt, chosen, rejected = row["prompt"], row["chosen"], row["rejected"]
            for conversation in (prompt, chosen, rejected):
                assert isinstance(conversation, list) and (conversation or flagged), row["pair_id"]
                for message in conversation:
                    assert list(message) == ["role", "content"], row["pair_id"]
                    assert message["role"] in TRL_ROLES and isinstance(message["content"], str), row["pair_id"]
            if flagged:
                continue  # e.g. identical_responses or empty_response: what the flag says
            assert prompt[-1]["role"] == "user", row["pair_id"]
            assert chosen[0]["role"] == rejected[0]["role"] == "assistant" and chosen != rejected, row["pair_id"]
            if dataset in BUILT_IN_DATASETS:  # one assistant turn each, always scored
                assert [m["role"] for m in chosen] == [m["role"] for m in rejected] == ["assistant"], row["pair_id"]
            if row["score_kind"] is None:  # an unscored extra dataset (transcripts)
                assert row["margin"] is None, row["pair_id"]
            else:
                assert 0 < row["margin"] <= 1, row["pair_id"]


def test_split_marts_become_hf_splits(warehouse, tmp_path, monkeypatch, hf_env):
    """Generic SPLIT_BY mechanics on a stand-in table (so they are tested even before
    preference_pairs exists): one split per value, loadable by `datasets` as named splits."""
    import datasets

    db = copy_warehouse(warehouse, tmp_path / "wh.duckdb")
    with duckdb.connect(str(db)) as c:
        c.execute("""
            create table main.split_probe as
            select * from (values
                ('rever', 2, [{'role': 'user', 'content': 'q2'}, {'role': 'assistant', 'content': 'a2'}]),
                ('ultrafeedback', 1, [{'role': 'user', 'content': 'q1'}, {'role': 'assistant', 'content': 'a1'}]),
                ('code_ultrafeedback', 3, []),
                ('ultrafeedback', 4, null)
            ) t(dataset, n, messages)
        """)
    monkeypatch.setattr(ex, "SPLIT_BY", {"split_probe": "dataset"})
    out = tmp_path / "exports"
    ex.export(db, out, ["split_probe"], progress=False)
    assert sorted(p.name for p in (out / "split_probe" / "data").iterdir()) == [
        "code_ultrafeedback-00000-of-00001.parquet", "rever-00000-of-00001.parquet",
        "ultrafeedback-00000-of-00001.parquet",
    ]
    for loaded in (datasets.load_dataset(str(out / "split_probe"), cache_dir=str(hf_env / "probe")),
                   datasets.load_dataset("parquet", data_dir=str(out / "split_probe"), cache_dir=str(hf_env / "probe"))):
        assert {s: sorted(loaded[s]["n"]) for s in loaded} == {
            "code_ultrafeedback": [3], "rever": [2], "ultrafeedback": [1, 4]}
        assert loaded["rever"][0]["messages"] == [{"role": "user", "content": "q2"}, {"role": "assistant", "content": "a2"}]
        assert loaded["code_ultrafeedback"][0]["messages"] == []
    assert {r: m["splits"] for r, m in json.loads((out / "manifest.json").read_text())["marts"].items()} == {
        "split_probe": {"code_ultrafeedback": 1, "rever": 1, "ultrafeedback": 2}}

    # A value that cannot name a split is refused in one line, and nothing is left behind.
    with duckdb.connect(str(db)) as c:
        c.execute("insert into main.split_probe values ('hh-rlhf', 5, null)")
    before = tree(out)
    with pytest.raises(ex.ExportError, match=r"split_probe.*'hh-rlhf'.*cannot name a Hugging Face split"):
        ex.export(db, out, ["split_probe"], progress=False)
    assert tree(out) == before and leftovers(out) == []


# --------------------------------------------------------------------------------------------
# dataset cards (<mart>/README.md)


def card_front_matter(path: Path) -> dict:
    import yaml

    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), path
    front, _, _ = text[4:].partition("\n---\n")
    data = yaml.safe_load(front)
    assert isinstance(data, dict), path
    return data


def card_splits(front: dict) -> dict[str, str]:
    (config,) = front["configs"]
    assert config["config_name"] == "default"
    return {f["split"]: f["path"] for f in config["data_files"]}


def registry(con) -> dict[str, dict]:
    return {r["dataset_key"]: r for r in duck_rows(con, "select * from seeds.dataset_registry")}


def hub_license(value: str) -> str:
    return value if re.fullmatch(r"[a-z0-9][a-z0-9.+-]*", value) else "other"


def test_every_card_is_in_the_manifest_and_names_the_written_splits(exported, marts):
    manifest = json.loads((exported / "manifest.json").read_text())
    for mart in marts:
        card = exported / mart / "README.md"
        entry = manifest["marts"][mart]["card"]
        assert entry["path"] == f"{mart}/README.md"
        assert entry["sha256"] == sha256(card) and entry["num_bytes"] == card.stat().st_size, mart
        front = card_front_matter(card)
        splits = card_splits(front)
        assert sorted(splits) == sorted(mart_files(exported, mart)) == sorted(manifest["marts"][mart]["splits"]), mart
        assert all(path == f"data/{split}-*" for split, path in splits.items()), mart
        assert front["pretty_name"] and front["size_categories"], mart
        body = card.read_text(encoding="utf-8")
        for split, rows in manifest["marts"][mart]["splits"].items():
            assert f"| {split} | {rows:,} |" in body, (mart, split)


def test_datasets_loads_the_splits_the_card_names(exported, marts, hf_env):
    import datasets

    assert "preference_pairs" in marts, f"main.preference_pairs is not in the warehouse: {marts}"
    manifest = json.loads((exported / "manifest.json").read_text())
    cache = str(hf_env / "cards")
    pairs = datasets.load_dataset(str(exported / "preference_pairs"), cache_dir=cache)
    expected = manifest["marts"]["preference_pairs"]["splits"]
    assert sorted(pairs) == sorted(card_splits(card_front_matter(exported / "preference_pairs" / "README.md")))
    assert {split: len(pairs[split]) for split in pairs} == expected
    for split in pairs:  # what the card says of the splits
        flags = pairs[split]["integrity_flags"]
        if split.endswith("_flagged"):
            assert all(flags), f"{split}: a pair without integrity flags"
        else:
            assert not any(flags), f"{split}: flagged pairs in a training split"
    curated = datasets.load_dataset(str(exported / "ultrafeedback_curated"), cache_dir=cache)
    assert list(curated) == ["train"]
    assert len(curated["train"]) == manifest["marts"]["ultrafeedback_curated"]["num_rows"]


def test_card_licence_and_sources_follow_the_registry(exported, marts, con):
    reg = registry(con)
    (build,) = duck_rows(con, "select * from meta.warehouse_build_info")
    groups = build["datasets"].split(",")
    # the build's extra_datasets entries feed preference_pairs too
    entries = duck_rows(con, "select dataset as dataset_key, hub_id, license from meta.extra_datasets order by registry_order")
    expected_keys = {
        "preference_pairs": [k for k, r in reg.items() if r["dataset_group"] in groups] + [e["dataset_key"] for e in entries],
        "ultrafeedback_curated": ["ultrafeedback"],
        "audit_code_ultrafeedback_published": ["code_ultrafeedback", "code_ultrafeedback_standard"],
        "rever_pairs": ["rever_judge", "rever_rubric"],
        "judge_agreement": ["ultrafeedback", "rever_judge", "rever_rubric"],
        "rejects_code_ultrafeedback_standard": ["code_ultrafeedback_standard"],
    }
    reg.update({e["dataset_key"]: e for e in entries})
    assert set(expected_keys) <= set(marts), f"not in the warehouse: {sorted(set(expected_keys) - set(marts))}"
    for mart, keys in expected_keys.items():
        front = card_front_matter(exported / mart / "README.md")
        body = (exported / mart / "README.md").read_text(encoding="utf-8")
        assert sorted(front["source_datasets"]) == sorted(reg[k]["hub_id"] for k in keys), mart
        licenses = sorted({hub_license(reg[k]["license"]) for k in keys})
        assert front["license"] == (licenses[0] if len(licenses) == 1 else licenses), mart
        for k in keys:
            assert f"| {k} | [{reg[k]['hub_id']}](https://huggingface.co/datasets/{reg[k]['hub_id']}) | {reg[k]['license']} |" in body
        if "other" in licenses:
            assert "no licence on the dataset card" in body and "license: other" in body, mart
    # Training tables get the tags and a TRL block; an audit table does not.
    pairs = card_front_matter(exported / "preference_pairs" / "README.md")
    assert {"preference", "dpo", "rlhf"} <= set(pairs["tags"])
    body = (exported / "preference_pairs" / "README.md").read_text(encoding="utf-8")
    assert "DPOTrainer(" in body and "load_dataset(" in body
    assert "`<dataset>_flagged`" in body and "not for training by default" in body and "`integrity_flags`" in body
    assert "DPOTrainer(" not in (exported / "rever_summary" / "README.md").read_text(encoding="utf-8")


def catalog_comments(con) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """(mart -> its table comment, mart -> {column: comment}) of the marts with one, as in the catalog."""
    tables = dict(con.execute(
        "select table_name, comment from duckdb_tables() where schema_name = 'main' "
        "and comment is not null and trim(comment) <> ''"
    ).fetchall())
    columns: dict[str, dict[str, str]] = {}
    for table, column, comment in con.execute(
        "select table_name, column_name, comment from duckdb_columns() where schema_name = 'main' "
        "and comment is not null and trim(comment) <> '' order by table_name, column_index"
    ).fetchall():
        columns.setdefault(table, {})[column] = comment
    return tables, columns


def test_card_describes_the_columns_from_the_catalog(exported, marts, con):
    """Every card lists each column with its type and, rendered as the Hub renders Markdown, the
    column's comment as written in the catalog (a `<dataset>` shows as `<dataset>`, not hidden as
    a tag nor written `&lt;dataset>`); its "What the table holds" section shows the table comment,
    words as written, paragraphs and list items joined (the catalog keeps the line breaks)."""
    tables, comments = catalog_comments(con)
    assert "preference_pairs" in tables and comments.get("preference_pairs"), \
        "main.preference_pairs has no comments (dbt's persist_docs): the card has none to show"
    assert any("<" in c for c in comments["preference_pairs"].values())  # the escaping is exercised
    for mart in marts:
        card = card_markdown.read((exported / mart / "README.md").read_text(encoding="utf-8"))
        header, *rows = card_markdown.table(card, "Columns")
        assert header == ["column", "type", "description"], mart
        assert rows == [[column, duck_type, " ".join(comments.get(mart, {}).get(column, "—").split())]
                        for column, duck_type in duck_columns(con, mart)], mart
        described = " ".join(b.text for b in card.section("What the table holds") if b.kind != "table cell")
        if mart in tables and "\n|" not in tables[mart]:  # (a comment holding a table: its cells are rows)
            written = re.sub(r"(?m)^\s*- ", "", tables[mart])
            assert " ".join(described.split()) == " ".join(written.split()), mart
        else:
            assert (mart in tables) == bool(described), mart


def cards_as_read(con, export_dir: Path, marts: list[str]) -> dict[str, tuple[str, list[str]]]:
    """mart -> (its card, the headings it must have): card_markdown.expected_headings of the table
    as the warehouse has it (its columns, whether the catalog describes it)."""
    tables, _ = catalog_comments(con)
    return {mart: ((export_dir / mart / "README.md").read_text(encoding="utf-8"),
                   card_markdown.expected_headings({c for c, _ in duck_columns(con, mart)}, mart in tables))
            for mart in marts}


def test_every_card_reads_as_written_for_its_readers(exported, marts, con):
    """Every card of the export, rendered with markdown-it-py (card_markdown): valid Hub front
    matter; what the table holds, the training format and the flagged pairs each once under its
    own heading, with the other sections; no raw HTML or HTML entity; every paragraph on one
    line; nothing said twice; no seam of stitched fragments."""
    card_markdown.assert_written_for_readers(cards_as_read(con, exported, marts))


def test_cards_carry_the_known_biases(exported, con):
    """Each training table's card has its datasets' rows of pair_bias_profile (slice `dataset`)
    and truncation_collapse; a card of another mart has none."""
    profile = duck_rows(con, "select * from main.pair_bias_profile where slice_kind = 'dataset'")
    collapse = duck_rows(con, "select * from main.truncation_collapse")
    for mart, datasets in {"preference_pairs": {r["dataset"] for r in profile},
                           "ultrafeedback_curated": {"ultrafeedback"}, "rever_pairs": {"rever"}}.items():
        body = (exported / mart / "README.md").read_text(encoding="utf-8")
        section = body.split("## Known biases", 1)[1].split("\n## ", 1)[0]
        rows = [r for r in profile if r["dataset"] in datasets]
        assert rows and {line.split(" | ")[0].lstrip("| ") for line in section.splitlines()
                         if line.startswith("| ") and " | " in line and not line.startswith("| dataset")} == datasets, mart
        for r in rows:
            assert f"| {r['dataset']} | {r['n_pairs']:,} | {r['pct_chosen_longer']:.1f}% |" in section, (mart, r["dataset"])
        for r in collapse:
            line = f"| {r['dataset']} | {r['budget_tokens']:,} | {r['n_collapsed']:,} of {r['n_pairs']:,} |"
            assert (line in section) == (r["dataset"] in datasets), (mart, line)
    assert "## Known biases" not in (exported / "ultrafeedback_completion_scores" / "README.md").read_text(encoding="utf-8")


def test_card_provenance(exported, warehouse, con):
    (build,) = duck_rows(con, "select * from meta.warehouse_build_info")
    body = (exported / "preference_pairs" / "README.md").read_text(encoding="utf-8")
    assert f"| `random_seed` | {build['random_seed']} |" in body
    assert f"| dbt version | {build['dbt_version']} |" in body
    assert build["raw_data_dir"] not in body  # named by its revision below, never by a local path
    # a rebuild of the same inputs gives the same card: the invocation id and time stay in manifest.json
    assert build["invocation_id"] not in body
    # The session warehouse is built on generated data (its folder holds the generator's manifest).
    assert (warehouse.raw_dir / "_generator_manifest.json").is_file()
    assert f"| raw data revision | {build['raw_revisions']} |" in body and build["raw_revisions"].startswith("generated, seed 42, scale ")
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True)
    commit = head.stdout.strip() if head.returncode == 0 else "unknown"
    assert f"| project commit at export time | `{commit}`" in body


# --------------------------------------------------------------------------------------------
# the cards' benchmark contamination section

CONTAMINATION = "## Benchmark contamination"
CONTAMINATION_MARTS = ["preference_pairs", "ultrafeedback_curated", "code_ultrafeedback_pairs", "eval_items",
                       "contamination_matches", "contamination_summary"]


def card_section(body: str, heading: str) -> str:
    return body.split(heading, 1)[1].split("\n## ", 1)[0]


def table_rows(section: str, first_header: str) -> dict[str, list[str]]:
    """The rows of the Markdown table whose header starts with ``first_header``, by first cell."""
    lines = section[section.index(f"| {first_header} |"):].split("\n\n", 1)[0].splitlines()[2:]
    cells = [[c.strip() for c in line.strip().strip("|").split(" | ")] for line in lines]
    return {row[0]: row for row in cells}


def test_cards_say_when_no_eval_set_was_checked(exported, con):
    """The session build registers no eval set: the cards of pairs say their prompts were not checked."""
    assert con.execute("select count(*) from meta.eval_sets").fetchone()[0] == 0
    for mart in ("preference_pairs", "ultrafeedback_curated", "contamination_summary"):
        section = card_section((exported / mart / "README.md").read_text(encoding="utf-8"), CONTAMINATION)
        assert "No eval set was registered in this build" in section, mart
    assert CONTAMINATION not in (exported / "ultrafeedback_completion_scores" / "README.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def contaminated(built, tmp_path_factory):  # noqa: F811 - the imported fixture
    """(warehouse, export folder, manifest): the contamination build's marts that hold pairs or
    contamination, exported."""
    warehouse, rc, output = built
    assert rc == 0, output[-6000:]
    out = tmp_path_factory.mktemp("contamination_export") / "exports"
    proc = run_cli("--duckdb-path", str(warehouse.path), "--export-dir", str(out), "--marts", ",".join(CONTAMINATION_MARTS))
    assert proc.returncode == 0, proc.stderr
    return warehouse, out, json.loads((out / "manifest.json").read_text())


def test_contamination_cards_read_as_written_for_their_readers(contaminated):
    """The cards of pairs and contamination of a build with eval sets (their contamination
    sections hold tables and counts) pass the same reading as every card of the session export."""
    wh, out, _ = contaminated
    with wh.connect() as c:
        card_markdown.assert_written_for_readers(cards_as_read(c, out, CONTAMINATION_MARTS))


def test_cards_list_the_eval_sets_checked(contaminated):
    """Every card of pairs or contamination lists the eval sets of meta.eval_sets with their Hub id
    and the revision the build recorded, and the rule's settings; so does the manifest."""
    wh, out, manifest = contaminated
    eval_sets = wh.rows("select * from meta.eval_sets order by registry_order")
    assert eval_sets
    revisions = wh.scalar("select raw_revisions from meta.warehouse_build_info")
    try:
        recorded = json.loads(revisions)
    except ValueError:
        recorded = None
    revision = {e["hub_id"]: recorded.get(e["hub_id"], "unknown") if isinstance(recorded, dict) else revisions
                for e in eval_sets}
    settings = eval_sets[0]
    for mart in CONTAMINATION_MARTS:
        section = card_section((out / mart / "README.md").read_text(encoding="utf-8"), CONTAMINATION)
        rows = table_rows(section, "eval set")
        assert list(rows) == [e["eval_set"] for e in eval_sets], mart
        for e in eval_sets:
            row = rows[e["eval_set"]]
            assert row[1] == f"[{e['hub_id']}](https://huggingface.co/datasets/{e['hub_id']})" and row[-1] == revision[e["hub_id"]]
        assert (f"ngram {settings['ngram']}, threshold {settings['threshold']:g}, "
                f"max_eval_share {settings['max_eval_share']:g}") in section, mart
        assert ("not training data" in section) == (mart in ("eval_items", "contamination_matches", "contamination_summary"))
    assert [(e["name"], e["hub_id"], e["revision"]) for e in manifest["eval_sets"]] == [
        (e["eval_set"], e["hub_id"], revision[e["hub_id"]]) for e in eval_sets]
    assert manifest["contamination"] == {k: settings[k] for k in ("ngram", "threshold", "max_eval_share")}


def test_cards_count_each_datasets_contaminated_pairs(contaminated, hub, tmp_path):
    """Per dataset of the card: its pairs flagged eval_contamination (and by that check alone), counted
    from preference_pairs' flags, and the items of each eval set its prompts hold, from
    contamination_summary. `make publish` uploads the card as exported."""
    wh, out, _ = contaminated
    flagged, alone = Counter(), Counter()
    for r in wh.rows("select dataset, integrity_flags from main.preference_pairs"):
        if "eval_contamination" in r["integrity_flags"]:
            flagged[r["dataset"]] += 1
            alone[r["dataset"]] += r["integrity_flags"] == ["eval_contamination"]
    assert flagged
    summary = wh.rows("select s.* from main.contamination_summary s join meta.eval_sets e using (eval_set) "
                      "order by s.dataset, e.registry_order")
    every = sorted({r["dataset"] for r in summary})
    for mart, datasets in {"preference_pairs": every, "contamination_summary": every,
                           "ultrafeedback_curated": ["ultrafeedback"], "code_ultrafeedback_pairs": ["code_ultrafeedback"]}.items():
        section = card_section((out / mart / "README.md").read_text(encoding="utf-8"), CONTAMINATION)
        rows = table_rows(section, "dataset")
        assert sorted(rows) == datasets, mart
        for d in datasets:
            matched = "; ".join(
                f"{r['eval_set']} {r['n_eval_items_matched']:,} of {r['n_eval_items']:,} "
                f"({r['pct_eval_set_matched']:.1f}%{', over the limit' if r['exceeds_limit'] else ''})"
                for r in summary if r["dataset"] == d and r["n_eval_items_matched"]) or "none"
            assert rows[d] == [d, f"{flagged[d]:,}", f"{alone[d]:,}", matched], (mart, d)
    assert "| dataset |" not in card_section((out / "eval_items" / "README.md").read_text(encoding="utf-8"), CONTAMINATION)

    repo = "pref-org/decontaminated-pairs"
    proc = subprocess.run([sys.executable, "-m", "preftools.publish", "--export-dir", str(out), "--repo", repo],
                          cwd=tmp_path, env=hub_env(hub.endpoint, tmp_path / "hf_home", token=TOKEN, unset=("EXPORT_DIR",)),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert hub.files(repo)["README.md"] == (out / "preference_pairs" / "README.md").read_bytes()


# --------------------------------------------------------------------------------------------
# the cards' near duplicates and label conflicts section

NEAR_DUPLICATES = "## Near duplicates and label conflicts"
NEAR_DUPLICATE_FLAGS = ("near_duplicate_pair", "label_conflict", "near_identical_responses")


def markdown_rows(section: str, header_start: str) -> list[list[str]]:
    """The body rows of the Markdown table whose header line starts with ``header_start``, as cells."""
    lines = section[section.index(header_start):].split("\n\n", 1)[0].splitlines()[2:]
    return [[c.strip() for c in line.strip().strip("|").split(" | ")] for line in lines]


def dataset_order(con) -> list[str]:
    """docs/near-duplicates.md "Order": the built-in datasets the build enabled, then the
    extra_datasets entries in registry order."""
    enabled = con.execute("select datasets from meta.warehouse_build_info").fetchone()[0].split(",")
    extra = [r[0] for r in con.execute("select dataset from meta.extra_datasets order by registry_order").fetchall()]
    return [d for d in BUILT_IN_DATASETS if d in enabled] + extra


def test_cards_count_each_datasets_near_duplicates(exported, con):
    """Every training table's card: the rule with the settings meta.warehouse_build_info records, that
    flagged pairs are not for training (they are not in the training splits), per dataset of the
    card its pairs flagged by each near-duplicate check (and by no other check) counted from
    preference_pairs, and the rows of near_duplicate_summary with a count that involve its datasets."""
    (info,) = duck_rows(con, "select * from meta.warehouse_build_info")
    assert info["near_duplicates_enabled"]
    order = dataset_order(con)
    counts: dict[str, Counter] = {}
    for r in duck_rows(con, "select dataset, split, pair_id, integrity_flags from main.preference_pairs"):
        near = set(r["integrity_flags"]) & set(NEAR_DUPLICATE_FLAGS)
        c = counts.setdefault(r["dataset"], Counter())
        for f in near:
            c[f] += 1
        c["alone"] += bool(near) and near == set(r["integrity_flags"])
        if near:  # what the cards say: not in a training split, not in the mixture
            assert r["split"] == r["dataset"] + "_flagged", r
    assert sum(c[f] for c in counts.values() for f in NEAR_DUPLICATE_FLAGS), "no pair flagged by a near-duplicate check"
    mixed = {r["dataset"] for r in duck_rows(con, "select distinct dataset from main.training_mixture")}
    assert mixed and not duck_rows(con, "select pair_id from main.training_mixture where "
                                        + " or ".join(f"list_contains(integrity_flags, '{f}')" for f in NEAR_DUPLICATE_FLAGS))
    summary = duck_rows(con, "select * from main.near_duplicate_summary")
    summary.sort(key=lambda r: (order.index(r["dataset_a"]), order.index(r["dataset_b"])))
    ngram, threshold = info["near_duplicates_ngram"], info["near_duplicates_threshold"]
    manifest = json.loads((exported / "manifest.json").read_text())
    for mart, datasets in {"preference_pairs": set(counts), "ultrafeedback_curated": {"ultrafeedback"},
                           "code_ultrafeedback_pairs": {"code_ultrafeedback"}, "rever_pairs": {"rever"},
                           "training_mixture": mixed}.items():
        # the settings are in manifest.json too, with the build that recorded them
        build = manifest["marts"][mart]["build"]
        assert {k: build[k] for k in info if k.startswith("near_duplicates_")} == \
            {k: v for k, v in info.items() if k.startswith("near_duplicates_")}, mart
        section = card_section((exported / mart / "README.md").read_text(encoding="utf-8"), NEAR_DUPLICATES)
        assert f"ngram {ngram}, threshold {threshold:g}, keep {info['near_duplicates_keep']}" in section, mart
        assert f"word {ngram}-grams" in section and f"Jaccard similarity of at least {threshold:g}" in section, mart
        flagged = card_section((exported / mart / "README.md").read_text(encoding="utf-8"), "## Flagged pairs")
        assert "not for training by default" in flagged, mart
        shown = [d for d in order if d in datasets]
        assert markdown_rows(section, "| dataset | pairs flagged") == [
            [d, *(f"{counts.get(d, Counter())[f]:,}" for f in NEAR_DUPLICATE_FLAGS), f"{counts.get(d, Counter())['alone']:,}"]
            for d in shown], mart
        involved = [r for r in summary if r["dataset_a"] in datasets or r["dataset_b"] in datasets]
        shared = [r for r in involved if r["n_prompt_pairs"] or r["n_same_comparison"] or r["n_label_conflicts"]]
        assert shared or mart != "preference_pairs"  # the generated data has near duplicates
        if not shared:
            assert "| dataset | with |" not in section and "shares a near-duplicate prompt" in section, mart
            continue
        assert markdown_rows(section, "| dataset | with |") == [
            [r["dataset_a"], r["dataset_b"], f"{r['n_prompt_pairs']:,}", f"{r['n_same_comparison']:,}",
             f"{r['n_label_conflicts']:,}"] for r in shared], mart
        if len(shared) < len(involved):
            assert f"The other {len(involved) - len(shared):,} of the {len(involved):,} combinations" in section, mart
    for mart in ("ultrafeedback_completion_scores", "near_duplicate_summary", "prompt_clusters"):
        assert NEAR_DUPLICATES not in (exported / mart / "README.md").read_text(encoding="utf-8"), mart


def test_cards_say_when_the_near_duplicate_check_was_off(switched_off, tmp_path):
    """A build with near_duplicates.enabled false and mixture_max_pairs_per_prompt_cluster 2
    (conftest.switched_off): the training tables' cards say the check was off, and the cap, in
    one paragraph, with no table."""
    (info,) = switched_off.rows("select * from meta.warehouse_build_info")
    assert info["near_duplicates_enabled"] is False and info["mixture_max_pairs_per_prompt_cluster"] == 2
    out = tmp_path / "exports"
    proc = run_cli("--duckdb-path", str(switched_off.path), "--export-dir", str(out),
                   "--marts", "preference_pairs,training_mixture")
    assert proc.returncode == 0, proc.stderr
    for mart in ("preference_pairs", "training_mixture"):
        section = card_section((out / mart / "README.md").read_text(encoding="utf-8"), NEAR_DUPLICATES)
        assert "The near-duplicate check was off in this build" in section, mart
        assert "`training_mixture` took at most 2 pairs of one prompt cluster" in section, mart
        assert "| dataset |" not in section, mart
    build = json.loads((out / "manifest.json").read_text())["marts"]["preference_pairs"]["build"]
    assert build["near_duplicates_enabled"] is False and build["mixture_max_pairs_per_prompt_cluster"] == 2


def test_spark_layout_export_has_cards_without_descriptions(warehouse, tmp_path):
    """--spark-warehouse: tables as <schema>.db/<table>/*.parquet carry no comments, so the cards
    have no descriptions, but the same configs, licences (from seeds.db/dataset_registry) and build."""
    spark = tmp_path / "spark-warehouse"
    tables = [("main", "preference_pairs"), ("main", "rever_summary"), ("meta", "warehouse_build_info"),
              ("seeds", "dataset_registry")]
    with warehouse.connect() as c:
        for schema, table in tables:
            folder = spark / f"{schema}.db" / table
            folder.mkdir(parents=True)
            c.execute(f'copy (select * from {schema}."{table}") to \'{folder / "part-00000.parquet"}\' (format parquet)')
    out = tmp_path / "exports"
    manifest = ex.export(warehouse.path, out, progress=False, spark_warehouse=spark)
    assert sorted(manifest["marts"]) == ["preference_pairs", "rever_summary"]
    for mart in manifest["marts"]:
        card = out / mart / "README.md"
        body = card.read_text(encoding="utf-8")
        assert "No descriptions" in body and "| `" in body, mart
        assert sorted(card_splits(card_front_matter(card))) == sorted(manifest["marts"][mart]["splits"]), mart
    front = card_front_matter(out / "preference_pairs" / "README.md")
    assert front["license"] and front["source_datasets"]


# --------------------------------------------------------------------------------------------
# failures: nothing partial, previous export intact, one clear line


def test_unwritable_export_dir_fails_clearly_and_writes_nothing(warehouse, tmp_path):
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("a regular file\n")
    for target in (blocker / "exports", blocker):
        proc = run_cli("--duckdb-path", str(warehouse.path), "--export-dir", str(target))
        assert proc.returncode == 2
        line = assert_one_clear_line(proc.stderr, str(blocker), "--export-dir")
        assert "not a directory" in line or "not a folder" in line, line
    assert blocker.read_text() == "a regular file\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["not_a_dir"]


def test_write_error_mid_export_keeps_the_previous_export(warehouse, tmp_path, monkeypatch, capsys):
    out = tmp_path / "exports"
    ex.export(warehouse.path, out, progress=False)
    before = tree(out)

    real = pq.ParquetWriter
    opened = []

    class FailingWriter(real):
        """Behaves like pyarrow's writer for the first file, then the disk is 'full'."""

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            opened.append(self)

        def write_table(self, table, *args, **kwargs):
            if len(opened) > 1:
                raise OSError(28, "No space left on device")
            return super().write_table(table, *args, **kwargs)

    monkeypatch.setattr(ex, "ParquetWriter", FailingWriter)
    rc = ex.main(["--duckdb-path", str(warehouse.path), "--export-dir", str(out), "--no-progress"])
    assert rc == 2
    assert_one_clear_line(capsys.readouterr().err, "no space left on device", str(out))
    assert len(opened) == 2, "the failure did not happen after the first file"
    assert tree(out) == before
    assert leftovers(out) == []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_killed_export_keeps_the_previous_export(warehouse, tmp_path, sig):
    out = tmp_path / "exports"
    ex.export(warehouse.path, out, progress=False)
    before = tree(out)
    marker = tmp_path / "third-file-open"
    script = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        import pyarrow.parquet as pq
        from preftools.outputs import export as ex

        class Slow(pq.ParquetWriter):
            # stalls while writing the third file, so the signal lands mid-export
            count = 0
            def __init__(self, *a, **k):
                super().__init__(*a, **k)
                Slow.count += 1
                self.number = Slow.count
            def write_table(self, *a, **k):
                super().write_table(*a, **k)
                if self.number == 3:
                    Path({str(marker)!r}).touch()
                    time.sleep(60)

        ex.ParquetWriter = Slow
        sys.exit(ex.main(["--duckdb-path", {str(warehouse.path)!r}, "--export-dir", {str(out)!r}, "--no-progress"]))
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=REPO, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert list(out.glob(".export-tmp-*")), "the export should be staging its files"
    proc.send_signal(sig)
    stderr = proc.communicate(timeout=60)[1]
    if sig == signal.SIGTERM:
        assert proc.returncode == 130
        assert_one_clear_line(stderr, "interrupted", "previous export")
        assert leftovers(out) == []
    # The previous export is intact; only a hidden staging folder may survive a SIGKILL.
    assert {k: v for k, v in tree(out).items() if not k.startswith(".")} == {
        k: v for k, v in before.items() if not k.startswith(".")}
    assert all(name.startswith(".export-tmp-") for name in leftovers(out))
    # The next export removes what a killed one left behind.
    ex.export(warehouse.path, out, progress=False)
    assert leftovers(out) == []
    assert tree(out) == before


def test_missing_or_locked_warehouse_is_one_line(warehouse, tmp_path):
    out = tmp_path / "exports"
    proc = run_cli("--duckdb-path", str(tmp_path / "nope.duckdb"), "--export-dir", str(out))
    assert proc.returncode == 2
    assert_one_clear_line(proc.stderr, str(tmp_path / "nope.duckdb"), "run `make build` first")

    db = copy_warehouse(warehouse, tmp_path / "locked.duckdb")
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import duckdb, sys, time; c = duckdb.connect({str(db)!r}); print('ready', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        proc = run_cli("--duckdb-path", str(db), "--export-dir", str(out), env={"DUCKDB_PATH": "ignored"})
        assert proc.returncode == 2
        assert_one_clear_line(proc.stderr, str(db), "locked", f"PID {holder.pid}")
    finally:
        holder.kill()
        holder.wait()
    assert not out.exists()


def test_partial_export_keeps_other_marts_and_full_export_retires_dropped_ones(warehouse, marts, tmp_path):
    db = copy_warehouse(warehouse, tmp_path / "wh.duckdb")
    out = tmp_path / "exports"
    ex.export(db, out, progress=False)
    (out / "notes").mkdir()
    (out / "notes" / "keep.txt").write_text("user file")
    first, dropped = marts[0], marts[-1]
    before = tree(out)

    old_manifest = json.loads((out / "manifest.json").read_text())
    ex.export(db, out, [first], progress=False)
    # Same warehouse: the re-exported mart is byte-identical, the rest untouched.
    assert {k: v for k, v in tree(out).items() if k != "manifest.json"} == {
        k: v for k, v in before.items() if k != "manifest.json"}
    manifest = json.loads((out / "manifest.json").read_text())
    assert sorted(manifest["marts"]) == marts
    assert "--marts" in manifest["marts"][first]["exported_by"]["command"]
    assert {m: e for m, e in manifest["marts"].items() if m != first} == {
        m: e for m, e in old_manifest["marts"].items() if m != first}

    proc = run_cli("--duckdb-path", str(db), "--export-dir", str(out), "--marts", f"{first},no_such_mart")
    assert proc.returncode == 2
    assert_one_clear_line(proc.stderr, "no_such_mart", first)

    with duckdb.connect(str(db)) as c:
        c.execute(f'drop table main."{dropped}"')
    ex.export(db, out, progress=False)
    assert not (out / dropped).exists()
    assert sorted(json.loads((out / "manifest.json").read_text())["marts"]) == [m for m in marts if m != dropped]
    assert (out / "notes" / "keep.txt").read_text() == "user file"


# --------------------------------------------------------------------------------------------
# secrets and personal data: redaction at export (docs/pii.md)

SECRETS = "## Secrets and personal data"


def test_no_secret_is_left_in_the_export(exported, marts, as_exported):
    """The generated data holds secrets (the generator plants every kind); the export holds none,
    in any string of any file (nested message lists included) or card, and manifest.json counts,
    per mart and kind, the replacements this file's reading of the rule makes in the warehouse."""
    assert sum(sum(as_exported(m)[1].values()) for m in marts) > 0, "no secret in the warehouse: the check would be vacuous"
    assert {k for m in marts for k in as_exported(m)[1]} == {k.kind for k in SECRET_KINDS}, "not every kind is planted"
    assert left_in(exported, SECRET_KINDS) == Counter()
    manifest = json.loads((exported / "manifest.json").read_text())
    assert manifest["redaction"] == {
        "secrets": "redacted", "personal": "kept",
        "patterns": [{"kind": k.kind, "category": k.category, "pattern": k.regex.pattern, "replacement": k.replacement}
                     for k in KINDS],
    }
    for mart in marts:
        entry = manifest["marts"][mart]["redaction"]
        assert entry["secrets"] == "redacted" and entry["personal"] == "kept", mart
        assert entry["counts"] == {k.kind: as_exported(mart)[1][k.kind] for k in KINDS}, mart  # every kind, zeros too
        assert sum(n for c in entry["by_column"].values() for n in c.values()) == sum(as_exported(mart)[1].values()), mart


def test_cards_say_what_was_found_and_redacted(exported, con, as_exported):
    """Every card: the kinds looked for; per kind the findings, pairs and pairs flagged of
    pii_summary summed over the card's datasets (every dataset where the table is not one
    dataset's), and the replacements the export made in this table."""
    summary = duck_rows(con, "select * from main.pii_summary")
    every = {r["dataset"] for r in summary}
    order = [k for k in KINDS if k.category == "secret"] + [k for k in KINDS if k.category == "personal"]
    for mart, datasets in {"preference_pairs": every, "ultrafeedback_curated": {"ultrafeedback"},
                           "rever_pairs": {"rever"}, "pii_findings": every, "row_accounting": every}.items():
        section = card_section((exported / mart / "README.md").read_text(encoding="utf-8"), SECRETS)
        assert "flagged `contains_secret` and left out of training" in section, mart
        assert "replaced every secret in this table's texts with `[REDACTED_SECRET]`" in section, mart
        assert "Personal data is as it was" in section, mart
        rows = [r for r in summary if r["dataset"] in datasets]
        want = [[f"`{k.kind}`", k.category,
                 *(f"{sum(r[c] for r in rows if r['kind'] == k.kind):,}" for c in ("n_findings", "n_pairs", "n_pairs_flagged")),
                 f"{as_exported(mart)[1][k.kind]:,}" if k.category == "secret" else "kept"] for k in order]
        assert markdown_rows(section, "| kind |") == want, mart
    found = sum(r["n_findings"] for r in summary if r["category"] == "secret")
    assert found > 0  # the section shows findings, not only zeros


# A hand-made warehouse (no dbt): preference_pairs with nested messages and a table with a plain,
# a list, a map and a struct column, holding secrets, personal data and near misses; a
# pii_summary of made-up counts; the dataset registry and a build row (ultrafeedback and rever).
AWS, GITHUB = "AKIAIOSFODNN7EXAMPLE", "ghp_0123456789abcdefghijABCDEFGHIJ012345"
OPENAI, HUGGINGFACE = "sk-abcdefghijklmnopqrstuvwxyz012345", "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"
SLACK, GOOGLE = "xoxb-123456789012-abcdefABCDEF", "AIzaSyA-1234567890abcdefghijklmnopqrs_z"
PEM = "-----BEGIN PRIVATE KEY-----"
S, E, IP = "[REDACTED_SECRET]", "[REDACTED_EMAIL]", "[REDACTED_IP]"


def secret_warehouse(path: Path, pii_summary: bool = True) -> Path:
    with duckdb.connect(str(path)) as c:
        c.execute("create schema seeds")
        c.execute("create schema meta")
        c.execute("create table seeds.dataset_registry as select * from read_csv(?, header = true)",
                  [str(REPO / "seeds" / "dataset_registry.csv")])
        c.execute("""create table meta.warehouse_build_info as select 'hand-made' as invocation_id,
                     42::bigint as random_seed, 'ultrafeedback,rever' as datasets""")
        c.execute("create type mood as enum ('calm', 'AKIAZZZZZZZZZZZZZZZZ')")
        c.execute(f"""
            create table main.preference_pairs as
            select dataset, split, pair_id, [{{'role': 'user', 'content': p}}] as prompt,
                   [{{'role': 'assistant', 'content': c}}] as chosen, [{{'role': 'assistant', 'content': r}}] as rejected,
                   flags::varchar[] as integrity_flags
            from (values
                ('ultrafeedback', 'ultrafeedback_flagged', 'p1', 'my key is {AWS}, ok?', 'use {GITHUB}',
                 'mail jane@example.com from 8.8.8.8', ['contains_secret']),
                ('ultrafeedback', 'ultrafeedback', 'p2', 'host 10.0.0.1', 'near miss {AWS[:-1]} and sk-learn', 'bad', []),
                ('rever', 'rever_flagged', 'p3', '{PEM}' || chr(10) || 'MIIE', 'export KEY={OPENAI}', 'x', ['contains_secret'])
            ) t(dataset, split, pair_id, p, c, r, flags)
        """)
        c.execute(f"""
            create table main.ultrafeedback_notes as
            select * from (values
                (1, 'token {HUGGINGFACE} and {SLACK}', ['a', '{GOOGLE}'], map {{'k': '{AWS}', 'ip': '8.8.4.4'}},
                 {{'url': 'mailto:bob@example.org', 'rank': 1}}, 'AKIAZZZZZZZZZZZZZZZZ'::mood),
                (2, null, [], map {{}}::map(varchar, varchar), null, 'calm'::mood),
                (3, 'near miss {GOOGLE[:-1]}', null, null, {{'url': 'http://192.168.1.1/', 'rank': 2}}, null)
            ) t(id, note, tags, meta, source, mood)
        """)
        if pii_summary:
            c.execute("""
                create table main.pii_summary as select * from (values
                    ('ultrafeedback', 'aws_access_key_id', 'secret', 5, 3, 3),
                    ('ultrafeedback', 'email', 'personal', 2, 2, 0),
                    ('rever', 'aws_access_key_id', 'secret', 1, 1, 1),
                    ('rever', 'private_key', 'secret', 4, 4, 4),
                    ('code_ultrafeedback', 'github_token', 'secret', 7, 6, 6)
                ) t(dataset, kind, category, n_findings, n_pairs, n_pairs_flagged)
            """)
    return path


@pytest.fixture(scope="module")
def secret_db(tmp_path_factory) -> Path:
    return secret_warehouse(tmp_path_factory.mktemp("secrets") / "warehouse.duckdb")


def export_rows(out: Path, mart: str) -> list[dict]:
    files = sorted((out / mart / "data").glob("*.parquet"))
    return pa.concat_tables(pq.read_table(f) for f in files).to_pylist()


def card_rows(out: Path, mart: str) -> list[list[str]]:
    return markdown_rows(card_section((out / mart / "README.md").read_text(encoding="utf-8"), SECRETS), "| kind |")


def kinds_row(kind: str, category: str, *cells: str) -> list[str]:
    return [f"`{kind}`", category, *cells]


def test_export_redacts_secrets_in_every_kind_of_column(secret_db, tmp_path):
    out = tmp_path / "exports"
    proc = run_cli("--duckdb-path", str(secret_db), "--export-dir", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "9 secrets redacted" in proc.stdout, proc.stdout
    by_id = {r["pair_id"]: r for r in export_rows(out, "preference_pairs")}
    assert by_id["p1"]["prompt"] == [{"role": "user", "content": f"my key is {S}, ok?"}]
    assert by_id["p1"]["chosen"] == [{"role": "assistant", "content": f"use {S}"}]
    assert by_id["p1"]["rejected"] == [{"role": "assistant", "content": "mail jane@example.com from 8.8.8.8"}]
    assert by_id["p2"]["chosen"] == [{"role": "assistant", "content": f"near miss {AWS[:-1]} and sk-learn"}]
    assert by_id["p3"]["prompt"] == [{"role": "user", "content": f"{S}\nMIIE"}]
    assert by_id["p3"]["chosen"] == [{"role": "assistant", "content": f"export KEY={S}"}]
    assert export_rows(out, "ultrafeedback_notes") == [
        {"id": 1, "note": f"token {S} and {S}", "tags": ["a", S], "meta": [("k", S), ("ip", "8.8.4.4")],
         "source": {"url": "mailto:bob@example.org", "rank": 1}, "mood": S},
        {"id": 2, "note": None, "tags": [], "meta": [], "source": None, "mood": "calm"},
        {"id": 3, "note": f"near miss {GOOGLE[:-1]}", "tags": None, "meta": None,
         "source": {"url": "http://192.168.1.1/", "rank": 2}, "mood": None},
    ]
    assert left_in(out, SECRET_KINDS) == Counter()
    assert left_in(out, PERSONAL_KINDS) == Counter({("preference_pairs/data/ultrafeedback_flagged-00000-of-00001.parquet",
                                                     "rejected", "email"): 1,
                                                    ("preference_pairs/data/ultrafeedback_flagged-00000-of-00001.parquet",
                                                     "rejected", "ip_address"): 1,
                                                    ("ultrafeedback_notes/data/train-00000-of-00001.parquet", "meta", "ip_address"): 1,
                                                    ("ultrafeedback_notes/data/train-00000-of-00001.parquet", "source", "email"): 1})

    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["redaction"]["secrets"], manifest["redaction"]["personal"]) == ("redacted", "kept")
    zero = {k.kind: 0 for k in KINDS}
    assert manifest["marts"]["preference_pairs"]["redaction"] == {
        "secrets": "redacted", "personal": "kept",
        "counts": {**zero, "aws_access_key_id": 1, "github_token": 1, "openai_api_key": 1, "private_key": 1},
        "by_column": {"prompt": {"aws_access_key_id": 1, "private_key": 1},
                      "chosen": {"github_token": 1, "openai_api_key": 1}},
    }
    assert manifest["marts"]["ultrafeedback_notes"]["redaction"]["counts"] == {
        **zero, "aws_access_key_id": 2, "huggingface_token": 1, "slack_token": 1, "google_api_key": 1}
    assert manifest["marts"]["ultrafeedback_notes"]["redaction"]["by_column"] == {
        "note": {"huggingface_token": 1, "slack_token": 1}, "tags": {"google_api_key": 1},
        "meta": {"aws_access_key_id": 1}, "mood": {"aws_access_key_id": 1}}
    # sha256 and sizes are of the files as written (redacted)
    for f in manifest["marts"]["preference_pairs"]["files"]:
        assert sha256(out / f["path"]) == f["sha256"] and (out / f["path"]).stat().st_size == f["num_bytes"]

    # cards: pii_summary summed over the card's datasets (ultrafeedback_notes: ultrafeedback;
    # preference_pairs: the build's ultrafeedback and rever; pii_summary: every row)
    assert card_rows(out, "ultrafeedback_notes") == [
        kinds_row("aws_access_key_id", "secret", "5", "3", "3", "2"),
        kinds_row("github_token", "secret", "0", "0", "0", "0"),
        kinds_row("openai_api_key", "secret", "0", "0", "0", "0"),
        kinds_row("huggingface_token", "secret", "0", "0", "0", "1"),
        kinds_row("slack_token", "secret", "0", "0", "0", "1"),
        kinds_row("google_api_key", "secret", "0", "0", "0", "1"),
        kinds_row("private_key", "secret", "0", "0", "0", "0"),
        kinds_row("email", "personal", "2", "2", "0", "kept"),
        kinds_row("ip_address", "personal", "0", "0", "0", "kept"),
    ]
    pairs = card_rows(out, "preference_pairs")
    assert pairs[0] == kinds_row("aws_access_key_id", "secret", "6", "4", "4", "1")
    assert pairs[1] == kinds_row("github_token", "secret", "0", "0", "0", "1")
    assert pairs[6] == kinds_row("private_key", "secret", "4", "4", "4", "1")
    assert card_rows(out, "pii_summary")[1] == kinds_row("github_token", "secret", "7", "6", "6", "0")
    section = card_section((out / "preference_pairs" / "README.md").read_text(encoding="utf-8"), SECRETS)
    assert "the texts of `rever`, `ultrafeedback`" in section and "&" not in section

    # the same warehouse gives the same bytes
    again = tmp_path / "again"
    assert run_cli("--duckdb-path", str(secret_db), "--export-dir", str(again)).returncode == 0
    assert published_tree(again) == published_tree(out)


def test_export_redacts_personal_data_on_request(secret_db, tmp_path):
    out = tmp_path / "exports"
    proc = run_cli("--duckdb-path", str(secret_db), "--export-dir", str(out), "--redact-personal")
    assert proc.returncode == 0, proc.stderr
    assert "9 secrets redacted, 4 emails and public IP addresses redacted" in proc.stdout, proc.stdout
    assert left_in(out, KINDS) == Counter()
    by_id = {r["pair_id"]: r for r in export_rows(out, "preference_pairs")}
    assert by_id["p1"]["rejected"] == [{"role": "assistant", "content": f"mail {E} from {IP}"}]
    assert by_id["p2"]["prompt"] == [{"role": "user", "content": "host 10.0.0.1"}]  # private: not personal data
    notes = export_rows(out, "ultrafeedback_notes")
    assert notes[0]["meta"] == [("k", S), ("ip", IP)] and notes[0]["source"]["url"] == f"mailto:{E}"
    assert notes[2]["source"]["url"] == "http://192.168.1.1/"
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["redaction"]["secrets"], manifest["redaction"]["personal"]) == ("redacted", "redacted")
    assert "--redact-personal" in manifest["command"]
    counts = manifest["marts"]["preference_pairs"]["redaction"]["counts"]
    assert (counts["email"], counts["ip_address"]) == (1, 1)
    rows = card_rows(out, "ultrafeedback_notes")
    assert rows[7] == kinds_row("email", "personal", "2", "2", "0", "1")
    assert rows[8] == kinds_row("ip_address", "personal", "0", "0", "0", "1")
    section = card_section((out / "ultrafeedback_notes" / "README.md").read_text(encoding="utf-8"), SECRETS)
    assert "every `email` with `[REDACTED_EMAIL]` and every `ip_address` with `[REDACTED_IP]`" in section


def test_keep_secrets_exports_them_as_they_are_and_says_so(secret_db, tmp_path):
    out = tmp_path / "exports"
    proc = run_cli("--duckdb-path", str(secret_db), "--export-dir", str(out), "--keep-secrets")
    assert proc.returncode == 0, proc.stderr
    assert "secrets KEPT" in proc.stdout and "refuses" in proc.stdout, proc.stdout
    with duckdb.connect(str(secret_db), read_only=True) as c:
        cur = c.execute("select * from main.preference_pairs")
        want = [dict(zip([d[0] for d in cur.description], r)) for r in cur.fetchall()]
    assert multiset(export_rows(out, "preference_pairs")) == multiset(want)
    notes = export_rows(out, "ultrafeedback_notes")
    assert notes[0]["note"] == f"token {HUGGINGFACE} and {SLACK}" and notes[0]["meta"] == [("k", AWS), ("ip", "8.8.4.4")]
    # the 9 in the data, and the enum's value in its type, which the card and manifest.json show
    assert sum(left_in(out, SECRET_KINDS).values()) == 9 + 2
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["redaction"]["secrets"], manifest["redaction"]["personal"]) == ("kept", "kept")
    assert "--keep-secrets" in manifest["command"]
    for entry in manifest["marts"].values():
        assert entry["redaction"]["secrets"] == "kept" and set(entry["redaction"]["counts"].values()) == {0}
    assert card_rows(out, "ultrafeedback_notes")[0] == kinds_row("aws_access_key_id", "secret", "5", "3", "3", "kept")
    section = card_section((out / "ultrafeedback_notes" / "README.md").read_text(encoding="utf-8"), SECRETS)
    assert "kept secrets as they are (`--keep-secrets`)" in section

    # A partial export with redaction: that mart's entry says redacted, the export as a whole still kept.
    ex.export(secret_db, out, ["ultrafeedback_notes"], progress=False)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["marts"]["ultrafeedback_notes"]["redaction"]["secrets"] == "redacted"
    assert manifest["marts"]["preference_pairs"]["redaction"]["secrets"] == "kept"
    assert manifest["redaction"]["secrets"] == "kept"
    ex.export(secret_db, out, progress=False)
    assert json.loads((out / "manifest.json").read_text())["redaction"]["secrets"] == "redacted"


def test_cards_say_when_the_scan_was_not_built(tmp_path):
    db = secret_warehouse(tmp_path / "warehouse.duckdb", pii_summary=False)
    out = tmp_path / "exports"
    ex.export(db, out, progress=False)
    section = card_section((out / "ultrafeedback_notes" / "README.md").read_text(encoding="utf-8"), SECRETS)
    assert "no `pii_summary` table: the scan was not built" in section
    assert markdown_rows(section, "| kind |")[0] == kinds_row("aws_access_key_id", "secret", "2")


def test_make_export_passes_redact_personal():
    assert "--redact-personal" in run_make("-n", "export", "REDACT=personal").stdout
    assert "--redact-personal" not in run_make("-n", "export").stdout
