"""One training contract, true on every table offered for training (preference_pairs,
ultrafeedback_curated, code_ultrafeedback_pairs, and rever_pairs' kept pairs):

* ``prompt``, ``chosen``, ``rejected`` and ``margin`` are non-NULL exactly on the rows that are
  training pairs (``has_pair``; every row of a table without that column), and a pair's margin
  is in (0, 1];
* each table has one documented filter, the same words in the README, the column descriptions
  and its dataset card, and that filter applied to the table's export gives the ``<dataset>``
  training split of preference_pairs, row for row.

The warehouse is built on the session's generated data (which repeats UltraFeedback and
CodeUltraFeedback rows byte for byte, and ReVeR pairs UltraFeedback pairs) with UltraFeedback
rows planted where both picks exist but make no pair (every completion rated the same, an
unrated alternate, no rating at all, a tie whose completions carry an invalid rating), the rows
a filter on ``chosen is not None`` used to let through, and a row repeated byte for byte whose
alternate is forced (so its two copies make the same pair: one copy is a ``duplicate_pair``). The snippets are run as written, extracted from the
Markdown (README.md, docs/*.md and the exported cards), with the real ``datasets`` library; only ``trl`` is
replaced by a stand-in that does nothing (``make test-clients`` runs the real one). The expected
rows are read from preference_pairs' split files with pyarrow, never from the snippet.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import sys
import types
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import REPO, SCENARIO_BUILD, Warehouse, run_dbt
from preftools.inputs.contract import DATASETS_BY_KEY
from preftools.outputs import export as ex

pytestmark = pytest.mark.slow

PAIR_COLUMNS = ("prompt", "chosen", "rejected", "margin")
# each training table -> its dataset's training split of preference_pairs
TRAINING_TABLES = {"ultrafeedback_curated": "ultrafeedback", "code_ultrafeedback_pairs": "code_ultrafeedback"}
# the README's preference_pairs examples train on `pairs["ultrafeedback"]`
README_PAIRS_SPLIT = "ultrafeedback"
CODE_BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
README_LOAD = re.compile(r'load_dataset\("exports/(\w+)"\)')
FILTER = re.compile(r"\.filter\(lambda row: (.+)\)\s*$", re.MULTILINE)


# --------------------------------------------------------------------------------------------
# fixtures and helpers


def set_ratings(completion: dict, ratings: list[str]) -> None:
    for aspect, rating in zip(("helpfulness", "honesty", "instruction_following", "truthfulness"), ratings):
        completion["annotations"][aspect]["Rating"] = rating


def plant_rows(rows: list[dict]) -> None:
    """Four raw rows with two or more completions that yield no pair (independently of the
    random draw): every completion rated the same; one rated and the others all "N/A" (the
    alternate is unrated); all "N/A"; all the same with an invalid truthfulness Rating. Then a
    row whose only completion rated below the best is the last one (so that is its alternate,
    whatever the draw), and a byte-identical copy of it in place of the row after it."""
    plans = [
        lambda i: ["3", "3", "3", "3"],
        lambda i: ["5", "5", "5", "5"] if i == 0 else ["N/A"] * 4,
        lambda i: ["N/A"] * 4,
        lambda i: ["4", "4", "4", "abc"],
        lambda i: ["1", "1", "1", "1"] if i == 3 else ["5", "5", "5", "5"],
    ]
    usable = [i for i, r in enumerate(rows) if r["completions"] and len(r["completions"]) >= 2
              and all(c["annotations"] and all(c["annotations"].values()) for c in r["completions"])]
    assert len(usable) >= len(plans)
    for i, plan in zip(usable, plans):
        for k, completion in enumerate(rows[i]["completions"]):
            set_ratings(completion, plan(k))
    repeated = usable[len(plans) - 1]
    assert len(rows[repeated]["completions"]) == 4
    rows[repeated + 1] = copy.deepcopy(rows[repeated])


@pytest.fixture(scope="module")
def planted(raw_dir, tmp_path_factory) -> Warehouse:
    work = tmp_path_factory.mktemp("contract")
    raw = work / "raw"
    shutil.copytree(raw_dir, raw)
    path = sorted(DATASETS_BY_KEY["ultrafeedback"].data_dir(raw).glob("*.parquet"))[0]  # the first file
    rows = pq.read_table(path).to_pylist()
    plant_rows(rows)
    pq.write_table(pa.Table.from_pylist(rows, schema=DATASETS_BY_KEY["ultrafeedback"].schema), path)
    db = work / "warehouse.duckdb"
    run_dbt(SCENARIO_BUILD, raw, db, work)  # the data tests of the contract run here too
    return Warehouse(db, raw, work)


@pytest.fixture(scope="module")
def exported(planted) -> Path:
    out = planted.work_dir / "exports"
    ex.export(planted.path, out, progress=False)
    return out


@pytest.fixture()
def hf_offline(tmp_path, monkeypatch):
    """datasets never touches the network or the user's cache; trl is a stand-in."""
    import datasets

    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_cache" / "home"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    trl = types.ModuleType("trl")

    class _Stub:
        def __init__(self, *args, **kwargs):
            self.kwargs = kwargs

        def train(self):
            return None

    for name in ("DPOConfig", "DPOTrainer", "RewardConfig", "RewardTrainer"):
        setattr(trl, name, type(name, (_Stub,), {}))
    monkeypatch.setitem(sys.modules, "trl", trl)


def read_table(files) -> list[dict]:
    return pa.concat_tables(pq.read_table(f) for f in files).to_pylist()


def split_rows(exported: Path, split: str) -> list[dict]:
    files = sorted((exported / "preference_pairs" / "data").glob(f"{split}-*.parquet"))
    assert files, split
    return read_table(files)


def training_splits(exported: Path) -> list[str]:
    names = {p.name.split("-")[0] for p in (exported / "preference_pairs" / "data").glob("*.parquet")}
    return sorted(n for n in names if not n.endswith("_flagged"))


def key(row: dict, with_margin: bool) -> str:
    parts = [row["prompt"], row["chosen"], row["rejected"]] + ([row["margin"]] if with_margin else [])
    return json.dumps(parts, ensure_ascii=False)


def selected(train) -> Counter:
    """The rows a snippet's `train` holds, by prompt/chosen/rejected texts (and margin if kept)."""
    with_margin = "margin" in train.column_names
    return Counter(key(r, with_margin) for r in train.to_list())


def expected(exported: Path, splits: list[str], with_margin: bool) -> Counter:
    return Counter(key(r, with_margin) for s in splits for r in split_rows(exported, s))


def run_snippet(code: str, cwd: Path, monkeypatch):
    """exec the snippet as written in ``cwd`` (with a datasets cache of its own: the cards all
    load "ORG/NAME"); its `train` dataset."""
    import datasets

    monkeypatch.chdir(cwd)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cwd / ".hf_datasets_cache")
    namespace: dict = {"__name__": "__snippet__"}
    exec(compile(code, "<snippet>", "exec"), namespace)  # noqa: S102 - our own documentation
    assert "train" in namespace, code
    return namespace["train"]


def readme_snippets() -> list[tuple[str, str]]:
    """(table, code) of every Python block that loads an export, in README.md and docs/*.md."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    text = "\n".join(p.read_text(encoding="utf-8") for p in pages)
    out = []
    for code in CODE_BLOCK.findall(text):
        tables = set(README_LOAD.findall(code))
        if tables:
            assert len(tables) == 1, code
            out.append((tables.pop(), code))
    return out


def card_snippet(exported: Path, table: str) -> str:
    text = (exported / table / "README.md").read_text(encoding="utf-8")
    _, _, how_to = text.partition("## How to use\n")
    blocks = CODE_BLOCK.findall(how_to)
    assert blocks, table
    return blocks[0]


# --------------------------------------------------------------------------------------------
# the contract on the exported tables


def test_pair_columns_are_filled_exactly_on_training_pairs(exported):
    """Read back from the exports: the pair's columns are all set on a pair (margin in (0, 1]) and
    all NULL elsewhere. For ultrafeedback_curated the pair rule is recomputed from its scores (the
    best rated strictly above its alternate), margin = the difference / 4 (the 1..5 scale)."""
    for table in ("preference_pairs", *TRAINING_TABLES):
        rows = read_table(sorted((exported / table / "data").glob("*.parquet")))
        assert rows, table
        for row in rows:
            is_pair = row.get("has_pair", True)
            registered = row.get("dataset") not in ("ultrafeedback", "code_ultrafeedback", "rever")
            if table == "preference_pairs" and registered and (row["score_kind"] is None or row["is_flagged"]):
                # a registered dataset without scores: no margin; a flagged pair is not for
                # training (a registered dataset's chosen score may be lower, or unparseable)
                assert all(row[c] is not None for c in PAIR_COLUMNS[:3]), (table, row)
                if row["score_kind"] is None:
                    assert row["margin"] is None and row["score_margin"] is None, (table, row)
                elif row["margin"] is not None and row["margin"] <= 0:
                    assert "score_not_higher" in row["integrity_flags"], (table, row)
                continue
            if is_pair:
                assert all(row[c] is not None for c in PAIR_COLUMNS), (table, row)
                assert 0 < row["margin"] <= 1, (table, row["margin"])
            else:
                assert all(row[c] is None for c in PAIR_COLUMNS), (table, row)
    curated = read_table(sorted((exported / "ultrafeedback_curated" / "data").glob("*.parquet")))
    for row in curated:
        best, alternate = row["score_best_rated"], row["score_random_response_for_best_rated"]
        is_pair = best is not None and alternate is not None and best > alternate
        assert row["has_pair"] == is_pair, row["prompt_id"]
        if is_pair:
            assert abs(row["margin"] - (best - alternate) / 4) < 1e-12, row["prompt_id"]
    # the planted rows: both picks, no pair (a tie, an unrated side), one of them flagged
    no_pair = [r for r in curated if not r["has_pair"] and r["random_for_best_rated_index"] is not None]
    assert len(no_pair) >= 4 and any(r["is_flagged"] for r in no_pair), len(no_pair)
    assert any(r["has_pair"] and r["is_flagged"] for r in curated)  # and flagged pairs


def test_each_filter_gives_its_split_with_repeated_rows(planted):
    """In the warehouse, on data with repeated rows: each table's documented filter (read from its
    column descriptions in the catalog, evaluated on its rows) selects exactly the pairs of its
    dataset's training split of preference_pairs; the planted repeated row is two pairs, one of
    them a `duplicate_pair`, and both datasets' repeated rows did flag pairs."""
    with planted.connect() as con:
        def rows(sql: str) -> list[dict]:
            cursor = con.execute(sql)
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, r)) for r in cursor.fetchall()]

        def documented_filter(table: str):
            comments = " ".join(r["comment"] for r in rows(
                f"select comment from duckdb_columns() where schema_name = 'main' and table_name = '{table}' "
                "and comment is not null"))
            conditions = set(re.findall(r"\.filter\(lambda row: ([^)]+)\)", " ".join(comments.split())))
            assert len(conditions) == 1, (table, conditions)
            return eval(f"lambda row: {conditions.pop()}")  # noqa: S307 - our own documentation

        split = rows("select dataset, split, prompt_id, prompt, chosen, rejected, margin, integrity_flags "
                     "from preference_pairs")
        for table, dataset, key in (("ultrafeedback_curated", "ultrafeedback", "prompt_id"),
                                    ("code_ultrafeedback_pairs", "code_ultrafeedback", "prompt_id"),
                                    ("rever_pairs", "rever", "id")):
            keep = documented_filter(table)
            columns = [key] + (["prompt", "chosen", "rejected", "margin"] if table != "rever_pairs" else [])
            got = Counter(json.dumps([r[c] for c in columns]) for r in rows(f"select * from {table}") if keep(r))
            want = Counter(json.dumps([r["prompt_id"]] + [r[c] for c in columns[1:]])
                           for r in split if r["split"] == dataset)
            assert sum(want.values()) > 0 and got == want, (table, list((got - want).items())[:2],
                                                            list((want - got).items())[:2])
        flagged = Counter(r["dataset"] for r in split if "duplicate_pair" in r["integrity_flags"])
        assert flagged["ultrafeedback"] and flagged["code_ultrafeedback"], flagged
        # the planted copy among them: two pairs with the same texts, one of them flagged
        copies = rows("select prompt, chosen, rejected, integrity_flags from ultrafeedback_curated where has_pair")
        by_texts = Counter(json.dumps([r["prompt"], r["chosen"], r["rejected"]]) for r in copies)
        repeated = [r for r in copies if by_texts[json.dumps([r["prompt"], r["chosen"], r["rejected"]])] > 1]
        assert repeated and 2 * sum("duplicate_pair" in r["integrity_flags"] for r in repeated) == len(repeated), repeated


# --------------------------------------------------------------------------------------------
# the documented filters, run as written


def test_readme_snippets_select_the_training_split(exported, tmp_path, monkeypatch, hf_offline):
    snippets = readme_snippets()
    assert {t for t, _ in snippets} >= {"preference_pairs", *TRAINING_TABLES}, [t for t, _ in snippets]
    for number, (table, code) in enumerate(snippets):
        cwd = tmp_path / f"snippet{number}"
        cwd.mkdir()
        (cwd / "exports").symlink_to(exported)
        train = run_snippet(code, cwd, monkeypatch)
        with_margin = "margin" in train.column_names
        if table == "training_mixture":  # its own table: all of it is for training
            rows = read_table(sorted((exported / table / "data").glob("*.parquet")))
            want = Counter(key(r, with_margin) for r in rows)
        else:
            want = expected(exported, [TRAINING_TABLES.get(table, README_PAIRS_SPLIT)], with_margin)
        split = table
        assert sum(want.values()) > 0, split
        assert selected(train) == want, (table, code)


def test_card_snippets_select_the_training_split(exported, tmp_path, monkeypatch, hf_offline):
    """Each training table's card, with its placeholder Hub id ORG/NAME standing for the local
    folder that holds the card (as the card's comment says)."""
    for table in ("preference_pairs", *TRAINING_TABLES):
        code = card_snippet(exported, table)
        assert 'load_dataset("ORG/NAME")' in code, code
        cwd = tmp_path / table
        (cwd / "ORG").mkdir(parents=True)
        (cwd / "ORG" / "NAME").symlink_to(exported / table)
        train = run_snippet(code, cwd, monkeypatch)
        splits = [TRAINING_TABLES[table]] if table in TRAINING_TABLES else training_splits(exported)
        want = expected(exported, splits, "margin" in train.column_names)
        assert sum(want.values()) > 0, splits
        assert selected(train) == want, (table, code)


def test_one_filter_per_table_in_the_same_words(exported, planted):
    """The README's filter of a table is its card's, and the table's column descriptions (in the
    warehouse catalog, so in the card too) quote it."""
    readme = {table: FILTER.findall(code) for table, code in readme_snippets() if table in TRAINING_TABLES}
    with planted.connect() as con:
        for table in TRAINING_TABLES:
            (condition,) = readme[table]
            assert FILTER.findall(card_snippet(exported, table)) == [condition], table
            comments = [r[0] for r in con.execute(
                "select comment from duckdb_columns() where schema_name = 'main' and table_name = ?", [table]
            ).fetchall() if r[0]]
            assert any(f".filter(lambda row: {condition})" in " ".join(c.split()) for c in comments), table
