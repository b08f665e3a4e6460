"""Which files of a Hub repo hold its data: the build's rule (macros/raw_files.sql, Jinja) against
the datasets library's (preftools.inputs.hub_layout, the rule the Hub's dataset viewer runs) on the
Hub's layouts, a card with `configs:`, and the files that are never data; and the DuckDB call
that reads each file, the same on both sides."""

from __future__ import annotations

import json

import pytest

from conftest import REPO, operation_cases
from preftools.inputs import hub_layout

CARD_HH = """---
license: mit
configs:
- config_name: helpful-base
  data_files:
  - split: train
    path: helpful-base/train.jsonl.gz
  - split: test
    path: helpful-base/test.jsonl.gz
- config_name: harmless-base
  data_files: harmless-base/*.jsonl.gz
---
# hh-rlhf
"""
CARD_DEFAULT_FLAG = """---
configs:
- config_name: raw
  data_files: raw/*.parquet
- config_name: clean
  default: true
  data_files:
  - split: train
    path: clean/train-*.parquet
  - split: test
    path: [clean/test-a.json, clean/test-b.json]
---
"""
CARD_NO_CONFIGS = "---\nlicense: apache-2.0\ntask_categories: [text-generation]\n---\n# A card without configs\n"

CASES = [
    # argilla's curation: push_to_hub shards, plus the repo's own files
    {"paths": ["README.md", ".gitattributes", *(f"data/train-0000{i}-of-00004.parquet" for i in range(4))]},
    # shards with a hash, two splits
    {"paths": ["data/train-00000-of-00002-8d3c1f.parquet", "data/train-00001-of-00002-aa01.parquet",
               "data/test-00000-of-00001-ff.parquet"]},
    # ReVeR-Traces-Rubric: JSON Lines at the root, no card
    {"paths": ["train.jsonl", ".gitattributes"]},
    {"paths": ["README.md", "train.json", "validation.json.zst"], "card": CARD_NO_CONFIGS},
    # the Parquet conversion branch
    {"paths": ["default/train/0000.parquet", "default/train/0001.parquet", "default/test/0000.parquet"]},
    # <config>/<split>-*.parquet without a card
    {"paths": ["en/train-00000-of-00001.parquet", "en/validation-00000-of-00001.parquet"]},
    # Anthropic/hh-rlhf: configs in the card, the default is the first... none marked: two configs -> named
    {"paths": ["README.md", "helpful-base/train.jsonl.gz", "helpful-base/test.jsonl.gz",
               "harmless-base/train.jsonl.gz", "harmless-base/test.jsonl.gz"], "card": CARD_HH, "config": "helpful-base"},
    {"paths": ["README.md", "helpful-base/train.jsonl.gz", "harmless-base/train.jsonl.gz", "harmless-base/test.jsonl.gz"],
     "card": CARD_HH, "config": "harmless-base"},
    # `default: true` picks the config; one path pattern or a list of them per split
    {"paths": ["README.md", "raw/x.parquet", "clean/train-0.parquet", "clean/train-1.parquet",
               "clean/test-a.json", "clean/test-b.json", "clean/notes.csv"], "card": CARD_DEFAULT_FLAG},
    # hidden and special folders, metadata files, other formats (TSV, text) are not data
    {"paths": [".cache/huggingface/download/data/train-00000-of-00001.parquet.metadata",
               "__pycache__/train.jsonl", "dataset_info.json", "config.json", "train.tsv", "test.txt", "train.jsonl.gz"]},
    # split keywords in folder names
    {"paths": ["data/training/part-0.parquet", "data/eval/part-0.parquet", "data/dev/part-0.parquet"]},
    # no split keyword: everything is train
    {"paths": ["rows.jsonl", "more/rows2.parquet"]},
    # CSV, plain and compressed, beside a file of another format
    {"paths": ["data/train.csv", "data/test.CSV.gz", "data/validation.csv.zst", "data/validation.csv.bz2", "data/notes.txt"]},
    # a card's config naming CSV files
    {"paths": ["README.md", "generation/validation.csv", "multiple_choice/validation.csv"],
     "card": "---\nconfigs:\n- config_name: generation\n  data_files:\n  - split: validation\n    path: generation/*.csv\n"
             "- config_name: multiple_choice\n  data_files: multiple_choice/*.csv\n---\n", "config": "generation"},
]


def jinja_picks(tmp_path) -> list[list[dict]]:
    return [json.loads(v) for v in operation_cases("hub_layout_cases", [dict(c) for c in CASES], "hub layout case", tmp_path)]


def test_build_rule_agrees_with_the_datasets_library(tmp_path):
    picks = jinja_picks(tmp_path)
    for case, picked in zip(CASES, picks):
        expected = [
            {"path": f.path, "split": f.split, "format": f.format, "reader": hub_layout.duckdb_reader(f.path, f.format)}
            for f in hub_layout.resolve(case["paths"], case.get("card"), case.get("config"))
        ]
        assert picked == expected, case


def test_the_cases_cover_what_the_rule_is_for():
    # guards the case list itself: each layout above picks something, and the decoys are left out
    picked = [[f.path for f in hub_layout.resolve(c["paths"], c.get("card"), c.get("config"))] for c in CASES]
    assert picked[0] == [f"data/train-0000{i}-of-00004.parquet" for i in range(4)]
    assert picked[2] == ["train.jsonl"]
    assert picked[4] == ["default/train/0000.parquet", "default/train/0001.parquet", "default/test/0000.parquet"]
    assert picked[6] == ["helpful-base/train.jsonl.gz", "helpful-base/test.jsonl.gz"]
    assert picked[8] == ["clean/train-0.parquet", "clean/train-1.parquet", "clean/test-a.json", "clean/test-b.json"]
    assert picked[9] == ["train.jsonl.gz"]
    assert picked[12] == ["data/train.csv", "data/validation.csv.zst", "data/test.CSV.gz"]
    assert picked[13] == ["generation/validation.csv"]
    formats = {f.path: f.format for c in CASES for f in hub_layout.resolve(c["paths"], c.get("card"), c.get("config"))}
    assert {formats["data/train.csv"], formats["clean/test-a.json"], formats["rows.jsonl"], formats["more/rows2.parquet"]} == \
        {"csv", "json", "parquet"}
    assert hub_layout.duckdb_reader("it's.csv", "csv") == "read_csv('it''s.csv', header = true, all_varchar = true)"


def test_several_configs_without_a_default_is_one_clear_error():
    with pytest.raises(hub_layout.LayoutError, match="several configs"):
        hub_layout.resolve(["README.md", "helpful-base/train.jsonl.gz"], CARD_HH)


def test_a_card_the_hub_cannot_read_is_one_line():
    card = "---\nconfigs:\n- config_name: x\n  data_files:\n    train: a.parquet\n---\n"
    with pytest.raises(hub_layout.LayoutError) as err:
        hub_layout.resolve(["README.md", "a.parquet"], card)
    assert "\n" not in str(err.value) and "README.md" in str(err.value)


def test_default_patterns_macro_is_current():
    assert (REPO / "macros" / "hub_patterns.sql").read_text() == hub_layout.render_macro(), (
        "macros/hub_patterns.sql is stale: run `python -m preftools.inputs.hub_layout --write-macro`"
    )
