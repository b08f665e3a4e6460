"""Tests of the sample-data generator (preftools.generate).

Run: python -m pytest tests/python/test_generator.py -q
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import pii_reference
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from preftools.generate import MANIFEST_NAME, generate, published_script_pairs
from preftools.generate.__main__ import main as generate_cli
from preftools.generate.writer import count_rows, parse_formats
from preftools.inputs import contract as C

SCALE = 0.005
TEXT = 0.25
UF_SOURCE_ORDER = ("evol_instruct", "false_qa", "flan_v2_cot", "sharegpt", "ultrachat", "truthful_qa",
                   "flan_v2_niv2", "flan_v2_p3", "flan_v2_flan2021")
RUBRIC_PROMPT_START = ("You are an expert in rubric design, instruction following, and task analysis. Given a user "
                       "instruction and optional context, create a concise, operational rubric")


@pytest.fixture(scope="module")
def gen(tmp_path_factory):
    out = tmp_path_factory.mktemp("raw42")
    manifest = generate(out, seed=42, scale=SCALE, progress=False, text_length=TEXT)
    return out, manifest


@pytest.fixture(scope="module")
def gen_parquet(tmp_path_factory):
    """The same data as ``gen``, every dataset written as Parquet."""
    out = tmp_path_factory.mktemp("raw42_parquet")
    manifest = generate(out, seed=42, scale=SCALE, progress=False, text_length=TEXT, formats="parquet")
    return out, manifest


def _read(out: Path, key: str) -> list[dict]:
    """A dataset's rows as the build reads them (its data files by the Hub's rule, in order)."""
    return C.DATASETS_BY_KEY[key].read(out).to_pylist()


def _files(out: Path, key: str) -> list[str]:
    """A dataset's data files by the Hub's rule, relative to ``out``."""
    return [p.relative_to(out).as_posix() for p in C.DATASETS_BY_KEY[key].data_files(out)]


def _digest(out: Path) -> dict[str, str]:
    return {
        str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*")) if p.is_file()
    }


def _json_lines(path: Path) -> list[dict]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


# ---------------------------------------------------------------------------------- layout


def test_layout_and_schemas(gen):
    """Every dataset where the Hub has it, and only there: UltraFeedback in 4 Parquet shards,
    ReVeR-Traces-Rubric one JSON Lines file at the repo root, the others one Parquet shard."""
    out, manifest = gen
    assert (out / MANIFEST_NAME).is_file()
    expected = {
        "ultrafeedback": [f"data/train-0000{k}-of-00004.parquet" for k in range(4)],
        "code_ultrafeedback": ["data/train-00000-of-00001.parquet"],
        "code_ultrafeedback_standard": ["data/train-00000-of-00001.parquet"],
        "rever_judge": ["data/train-00000-of-00001.parquet"],
        "rever_rubric": ["train.jsonl"],
    }
    for ds in C.DATASETS:
        repo = ds.repo_dir(out)
        on_disk = sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_file())
        assert on_disk == expected[ds.key], ds.key  # no partial or stale file beside them
        assert _files(out, ds.key) == [f"{ds.hub_id}/{f}" for f in expected[ds.key]]
        assert manifest["files"][ds.key] == _files(out, ds.key)
        assert manifest["formats"][ds.key] == ("jsonl" if ds.key == "rever_rubric" else "parquet")
        for f in ds.data_files(out):
            if f.suffix == ".parquet":
                schema = pq.read_schema(f)
                assert schema.equals(ds.schema, check_metadata=False), ds.key
            else:  # JSON Lines: every row an object with the contract's columns, in its order
                assert all(list(row) == ds.schema.names for row in _json_lines(f)), ds.key
        assert ds.read(out).cast(ds.schema).num_rows == manifest["rows"][ds.key]


def test_row_counts(gen):
    out, manifest = gen
    rows = manifest["rows"]
    assert rows["ultrafeedback"] == round(63_967 * SCALE)
    assert rows["code_ultrafeedback"] == round(10_000 * SCALE)
    assert rows["rever_rubric"] == round(30_310 * SCALE)
    kinds = Counter(b["kind"] for b in manifest["rever_integrity_breaks"])
    expected_judge = (
        2 * rows["rever_rubric"] + 2 * kinds["trajectory_without_rubric"] - 2 * kinds["rubric_unused"]
        - kinds["rubric_single_trajectory"] + kinds["duplicate_candidate"]
    )
    assert rows["rever_judge"] == expected_judge
    for key, n in rows.items():
        assert sum(count_rows(out / f) for f in manifest["files"][key]) == n


def test_row_counts_other_scale(tmp_path):
    m = generate(tmp_path, seed=1, scale=0.002, progress=False, text_length=TEXT,
                 datasets=["ultrafeedback", "code_ultrafeedback"])
    assert m["rows"] == {"ultrafeedback": 128, "code_ultrafeedback": 20}
    assert not (tmp_path / "OpenRubrics").exists()


def test_ultrafeedback_four_even_shards(gen, tmp_path):
    """4 shards at every scale, the rows split evenly in order; fewer only with fewer than 4 rows."""
    out, manifest = gen
    sizes = [count_rows(out / f) for f in manifest["files"]["ultrafeedback"]]
    assert len(sizes) == 4 and max(sizes) - min(sizes) <= 1 and sum(sizes) == manifest["rows"]["ultrafeedback"]
    tiny = generate(tmp_path, seed=42, scale=0.00005, progress=False, text_length=TEXT, datasets=["ultrafeedback"])
    assert tiny["rows"]["ultrafeedback"] == 3
    assert [Path(f).name for f in tiny["files"]["ultrafeedback"]] == [f"train-0000{k}-of-00003.parquet" for k in range(3)]
    assert [count_rows(tmp_path / f) for f in tiny["files"]["ultrafeedback"]] == [1, 1, 1]


def test_deterministic(gen, tmp_path):
    out, _ = gen
    again = tmp_path / "again"
    generate(again, seed=42, scale=SCALE, progress=False, text_length=TEXT)
    assert _digest(again) == _digest(out)
    other = tmp_path / "other"
    generate(other, seed=43, scale=SCALE, progress=False, text_length=TEXT)
    a, b = _digest(out), _digest(other)
    assert a.keys() == b.keys()
    assert all(a[k] != b[k] for k in a if not k.endswith("README.md"))  # (the stand-ins' cards are fixed texts)


# ---------------------------------------------------------------------------------- formats


def test_json_rows_equal_parquet_rows(gen, gen_parquet):
    """The default data mixes formats (ReVeR-Traces-Rubric JSON Lines, the Judge Parquet); read
    the way the build reads them, its rows are those of an all-Parquet run, value for value."""
    out, manifest = gen
    parquet_out, parquet_manifest = gen_parquet
    assert set(parquet_manifest["formats"].values()) == {"parquet"}
    assert parquet_manifest["files"]["rever_rubric"] == [
        "OpenRubrics/ReVeR-Traces-Rubric/data/train-00000-of-00001.parquet"]
    for ds in C.DATASETS:
        assert ds.read(out).cast(ds.schema).equals(ds.read(parquet_out)), ds.key
    # the Parquet datasets are the same bytes in both runs
    a, b = _digest(out), _digest(parquet_out)
    assert {k: v for k, v in a.items() if k.startswith(("argilla", "coseal", "RLHFlow", "OpenRubrics/ReVeR-Traces-J"))} \
        == {k: v for k, v in b.items() if k.startswith(("argilla", "coseal", "RLHFlow", "OpenRubrics/ReVeR-Traces-J"))}
    # JSON keeps the values' JSON types: objects, arrays, strings, null
    rubric_rows = _json_lines(out / manifest["files"]["rever_rubric"][0])
    assert all(isinstance(r["messages"], list) and all(isinstance(m, dict) for m in r["messages"])
               for r in rubric_rows)


def test_format_option_per_dataset_and_gzip(gen_parquet, tmp_path):
    """``--format`` per dataset (gzip too): a dataset's files of another format are removed, the
    rows are the same, and the same seed writes the same bytes."""
    parquet_out, _ = gen_parquet
    out = tmp_path / "mixed"
    args = ["--seed", "42", "--scale", str(SCALE), "--text-length", str(TEXT), "--no-progress",
            "--format", "rever_rubric=jsonl.gz,ultrafeedback=jsonl,rever_judge=jsonl.gz"]
    # first all Parquet into the same folder: switching format must leave no stale file
    assert generate_cli(["--out", str(out), "--format", "parquet", *args[:-2]]) == 0
    assert generate_cli(["--out", str(out), *args]) == 0
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    assert manifest["formats"] == {"ultrafeedback": "jsonl", "code_ultrafeedback": "parquet",
                                   "code_ultrafeedback_standard": "parquet", "rever_judge": "jsonl.gz",
                                   "rever_rubric": "jsonl.gz"}
    assert manifest["files"]["ultrafeedback"] == [
        f"argilla/ultrafeedback-binarized-curation/data/train-0000{k}-of-00004.jsonl" for k in range(4)]
    assert manifest["files"]["rever_rubric"] == ["OpenRubrics/ReVeR-Traces-Rubric/train.jsonl.gz"]
    assert manifest["files"]["rever_judge"] == ["OpenRubrics/ReVeR-Traces-Judge/train.jsonl.gz"]
    for ds in C.DATASETS:
        repo = ds.repo_dir(out)
        on_disk = sorted(p.relative_to(out).as_posix() for p in repo.rglob("*") if p.is_file())
        assert on_disk == manifest["files"][ds.key] == _files(out, ds.key), ds.key
        assert ds.read(out).cast(ds.schema).equals(ds.read(parquet_out)), ds.key
    rubric = out / manifest["files"]["rever_rubric"][0]
    assert rubric.read_bytes()[:2] == b"\x1f\x8b"  # gzip
    assert len(_json_lines(rubric)) == manifest["rows"]["rever_rubric"]
    # numbers are JSON numbers, lists JSON arrays, NULL null
    uf = _json_lines(out / manifest["files"]["ultrafeedback"][0])
    assert all(isinstance(c["overall_score"], float) for r in uf for c in r["completions"])
    assert any(r["best_rated_response"] is None for r in _read(out, "ultrafeedback"))
    again = tmp_path / "again"
    assert generate_cli(["--out", str(again), *args]) == 0
    assert _digest(again) == _digest(out)


def test_bad_values_keep_each_format(tmp_path):
    """--bad-rate on JSON datasets: the bad values are planted in the JSON files, which stay
    JSON (no Parquet file beside them); RLHFlow's file is rewritten in its format."""
    formats = "rever_rubric=jsonl.gz,code_ultrafeedback=jsonl,code_ultrafeedback_standard=jsonl"
    m = generate(tmp_path, seed=42, scale=SCALE, progress=False, text_length=TEXT, bad_rate=0.01, formats=formats)
    for ds in C.DATASETS:
        repo = ds.repo_dir(tmp_path)
        on_disk = sorted(p.relative_to(tmp_path).as_posix() for p in repo.rglob("*") if p.is_file())
        assert on_disk == m["files"][ds.key] == _files(tmp_path, ds.key), ds.key
        assert ds.read(tmp_path).num_rows == m["rows"][ds.key], ds.key
    assert m["files"]["code_ultrafeedback_standard"] == ["RLHFlow/CodeUltraFeedback-standard/train.jsonl"]
    rubric = _read(tmp_path, "rever_rubric")
    planted = defaultdict(list)
    for b in m["bad_values"]:
        planted[b["kind"]].append(b)
    for b in planted["rubric_no_items"]:
        assert b["file"] == "train.jsonl.gz" and [x["role"] for x in rubric[b["row"]]["messages"]] == ["user"]
    for b in planted["rubric_duplicate"]:
        assert rubric[b["row"]]["id"] == b["id"] and sum(r["id"] == b["id"] for r in rubric) == 2
    code = _read(tmp_path, "code_ultrafeedback")
    assert all(code[b["row"]]["annotations"] is None for b in planted["cuf_null_annotations"])
    pairs, _ = published_script_pairs(code)
    assert _read(tmp_path, "code_ultrafeedback_standard") == pairs


def test_parse_formats():
    assert parse_formats(None)["rever_rubric"] == "jsonl"
    assert set(parse_formats(None).values()) == {"parquet", "jsonl"}
    assert set(parse_formats("jsonl.gz").values()) == {"jsonl.gz"}
    assert parse_formats("parquet,rever_judge=jsonl") == {**dict.fromkeys(C.DATASETS_BY_KEY, "parquet"),
                                                         "rever_judge": "jsonl"}
    for bad in ("csv", "ultrafeedback=xml", "nope=jsonl"):
        with pytest.raises(ValueError):
            parse_formats(bad)


# ---------------------------------------------------------------------------- UltraFeedback


def _avg(annotations: dict) -> float | None:
    vals = [int(a["Rating"]) for a in annotations.values() if a["Rating"] in {"1", "2", "3", "4", "5"}]
    return sum(vals) / len(vals) if vals else None


def test_ultrafeedback_quirks(gen):
    out, manifest = gen
    rows = _read(out, "ultrafeedback")
    comps = [c for r in rows for c in r["completions"]]
    ratings = Counter(c["annotations"][a]["Rating"] for c in comps for a in c["annotations"])
    hon_na = sum(c["annotations"]["honesty"]["Rating"] == "N/A" for c in comps) / len(comps)
    assert 0.06 < hon_na < 0.15
    assert ratings["N/A"] > hon_na * len(comps)  # some instruction_following N/A too
    assert set(ratings) - {"1", "2", "3", "4", "5", "N/A"}, "no invalid rating strings"
    # the overall_score bug: weak average rating, overall_score 10, negative critique
    bug = [c for c in comps if c["overall_score"] == 10.0 and c["average_rating"] <= 2]
    assert 0.05 < len(bug) / len(comps) < 0.11
    # 4 distinct models per full row, several completion counts
    assert all(len({c["model"] for c in r["completions"]}) == len(r["completions"]) for r in rows)
    sizes = Counter(len(r["completions"]) for r in rows)
    assert sizes[0] >= 3 and sizes[1] >= 3 and sizes[3] >= 3 and sizes[4] > 0.95 * len(rows)
    assert all(r["best_rated_response"] is None and r["best_rated_model"] is None
               for r in rows if not r["completions"])
    # duplicated instructions
    dup = Counter(r["instruction"] for r in rows)
    assert sum(1 for v in dup.values() if v > 1) >= 3
    # ties of average_rating / overall_score within a row are common
    ties_avg = sum(len({c["average_rating"] for c in r["completions"]}) < len(r["completions"]) for r in rows)
    ties_ovr = sum(len({c["overall_score"] for c in r["completions"]}) < len(r["completions"]) for r in rows)
    assert ties_avg > 0.3 * len(rows) and ties_ovr > 0.1 * len(rows)
    # published average_rating disagrees with the annotations in the planted rows only
    bad_avg = {i for i, r in enumerate(rows)
               for c in r["completions"] if c["average_rating"] != pytest.approx(_avg(c["annotations"]))}
    assert bad_avg == set(manifest["ultrafeedback_planted"]["rows_average_rating_mismatch"])


def test_ultrafeedback_source_blocks(gen, tmp_path):
    """The rows come in one block per source, in the upstream order (evol_instruct first);
    flan_v2_cot is ~4.7 % of the rows (checked where there are enough rows, scale 0.05)."""
    out, _ = gen
    blocks = [source for source, _ in itertools.groupby(r["source"] for r in _read(out, "ultrafeedback"))]
    assert blocks == list(UF_SOURCE_ORDER)  # each source once, as one block, in order
    manifest = generate(tmp_path, seed=7, scale=0.05, progress=False, text_length=0.1, datasets=["ultrafeedback"])
    table = C.DATASETS_BY_KEY["ultrafeedback"].read(tmp_path)
    sources = table.column("source").to_pylist()
    assert len(sources) == manifest["rows"]["ultrafeedback"] == 3198
    assert [s for s, _ in itertools.groupby(sources)] == list(UF_SOURCE_ORDER)
    assert sources.count("flan_v2_cot") / len(sources) == pytest.approx(0.047, abs=0.002)


def test_ultrafeedback_na_only_in_honesty_and_instruction_following(gen):
    out, _ = gen
    rows = _read(out, "ultrafeedback")
    completions = [c for r in rows for c in r["completions"]]
    picked = [r[col] for r in rows for col in ("best_overall_score_response", "random_response_for_best_overall",
                                                "best_rated_response", "random_response_for_best_rated") if r[col]]
    na = Counter(aspect for c in completions + picked for aspect, a in c["annotations"].items() if a["Rating"] == "N/A")
    assert set(na) == {"honesty", "instruction_following"}, na


def test_ultrafeedback_picks(gen):
    """Argilla's pick columns are consistent with the published completion scores, except
    in the planted rows."""
    out, manifest = gen
    rows = _read(out, "ultrafeedback")
    wrong = set()
    for i, r in enumerate(rows):
        cs = r["completions"]
        if not cs:
            continue
        avgs = [c["average_rating"] for c in cs]
        ovr = [c["overall_score"] for c in cs]
        br = max(range(len(cs)), key=lambda j: (avgs[j], -j))
        bo = max(range(len(cs)), key=lambda j: (ovr[j], -j))
        assert r["best_rated_response"] == cs[br] and r["best_overall_score_response"] == cs[bo]
        assert r["score_best_rated"] == avgs[br] and r["score_best_overall"] == ovr[bo]
        alt_r, alt_o = r["random_response_for_best_rated"], r["random_response_for_best_overall"]
        if len(cs) == 1:
            assert alt_r is None and alt_o is None
        else:
            assert alt_r in cs and alt_r != cs[br] and alt_o in cs and alt_o != cs[bo]
            if any(a < avgs[br] for a in avgs):
                assert alt_r["average_rating"] < avgs[br]
            if any(o < ovr[bo] for o in ovr):
                assert alt_o["overall_score"] < ovr[bo]
            assert r["score_random_response_for_rated"] == alt_r["average_rating"] == r["random_response_for_rated"]
            assert r["score_random_response_for_best_overall"] == alt_o["overall_score"]
        if (r["best_rated_model"] != cs[br]["model"] or r["best_overall_model"] != cs[bo]["model"]
                or r["best_rated_is_different_from_best_overall"] != (br != bo)):
            wrong.add(i)
    planted = {w["row"] for w in manifest["ultrafeedback_planted"]["rows_wrong_pick"]}
    assert wrong == planted and len(planted) >= 3


def test_critique_sentiment_is_vader(gen):
    vader = pytest.importorskip("vaderSentiment.vaderSentiment")
    sia = vader.SentimentIntensityAnalyzer()
    out, _ = gen
    rows = [r for r in _read(out, "ultrafeedback") if r["completions"]][:120]
    for r in rows:
        crit = r["best_overall_score_response"]["critique"]
        assert sia.polarity_scores(crit)["compound"] == r["best_overall_score_response_critique_sentiment"]
    bug = [r for r in rows if r["score_best_overall"] == 10.0 and r["best_overall_score_response"]["average_rating"] <= 2]
    assert bug and all(r["best_overall_score_response_critique_sentiment"] < -0.5 for r in bug)


# ------------------------------------------------------------------------ CodeUltraFeedback


def test_code_ultrafeedback_quirks(gen):
    out, manifest = gen
    rows = _read(out, "code_ultrafeedback")
    assert {r["preference"] for r in rows} == set(C.CODE_ULTRAFEEDBACK_PREFERENCES)
    assert all(len(set(r["models"])) == 4 and [x["model"] for x in r["responses"]] == r["models"] for r in rows)
    anns = [a for r in rows for a in r["annotations"]]
    na = sum(a["rating"] == "N/A" for a in anns)
    assert na >= 5
    assert sum(not r["annotations"] for r in rows) >= 3
    assert sum(bool(r["annotations"]) and r["annotations"][-1]["rating"] == "N/A" for r in rows) >= 3
    assert sum(bool(r["annotations"]) and r["annotations"][-1]["rating"] != "N/A"
               and any(a["rating"] == "N/A" for a in r["annotations"]) for r in rows) >= 3
    # upstream, every annotations list has 4 items or none; the planted rows with 3 are listed
    planted = manifest["code_ultrafeedback_planted"]["rows_missing_annotation"]
    lengths = Counter(len(r["annotations"]) for i, r in enumerate(rows) if i not in planted)
    assert set(lengths) == {0, 4} and lengths[0] >= 3
    assert len(planted) == 2 and all(len(rows[i]["annotations"]) == 3 for i in planted)
    assert sum(a["rating"] in ("10", "0") for a in anns) >= 1
    shuffled = sum([a["model"] for a in r["annotations"]] != r["models"] for r in rows if len(r["annotations"]) == 4)
    assert shuffled > 0.7 * len(rows)


def test_repeated_rows(gen):
    """The Hub data repeats rows byte for byte: the rows the manifest lists are exactly the rows
    equal to another one, in both datasets (UltraFeedback: a copy of an earlier row of its chunk;
    CodeUltraFeedback: of the row before it)."""
    out, manifest = gen
    uf = [json.dumps(r, sort_keys=True) for r in _read(out, "ultrafeedback")]
    pairs = manifest["ultrafeedback_planted"]["duplicate_row_pairs"]
    assert len(pairs) >= 3 and all(uf[source] == uf[copy] for source, copy in pairs)
    assert len(uf) - len(set(uf)) == len(pairs)
    code = [json.dumps(r, sort_keys=True) for r in _read(out, "code_ultrafeedback")]
    repeated = manifest["code_ultrafeedback_planted"]["rows_repeated"]
    assert len(repeated) >= 3 and all(code[i] == code[i - 1] for i in repeated)
    assert len(code) - len(set(code)) == len(repeated)


def test_standard_is_published_script_output(gen):
    out, manifest = gen
    rows = _read(out, "code_ultrafeedback")
    pairs, skipped = published_script_pairs(rows)
    assert _read(out, "code_ultrafeedback_standard") == [
        {"chosen": p["chosen"], "rejected": p["rejected"], "chosen_score": p["chosen_score"],
         "rejected_score": p["rejected_score"]} for p in pairs]
    assert skipped and all(s["error"] == "KeyError" for s in skipped)
    assert any(p["chosen_score"] == "N/A" for p in pairs)  # "N/A" wins the string comparison


def test_standard_column_order(gen):
    """RLHFlow/CodeUltraFeedback-standard's columns in the order of its card and file."""
    out, manifest = gen
    (path,) = manifest["files"]["code_ultrafeedback_standard"]
    assert pq.read_schema(out / path).names == ["rejected", "chosen", "chosen_score", "rejected_score"]


def test_published_script_stale_rating():
    def row(anns, models=("a", "b", "c")):
        return {"instruction": "x", "preference": "style",
                "responses": [{"model": m, "response": m} for m in models],
                "annotations": [{"model": m, "rating": r, "rationale": ""} for m, r in anns]}

    rows = [
        row([]),  # rating never set -> NameError -> skipped
        row([("a", "5"), ("b", "N/A"), ("c", "3")]),  # N/A in the middle is kept and wins
        row([("a", "5"), ("b", "4"), ("c", "N/A")]),  # last N/A drops the whole prompt
        row([]),  # stale rating 'N/A' -> no models -> no error, no pairs
        row([("a", "1"), ("b", "2"), ("c", "10")]),  # string comparison: "2" > "10"
        row([]),  # stale rating '10' -> KeyError
    ]
    pairs, skipped = published_script_pairs(rows)
    assert [s["error"] for s in skipped] == ["NameError", "KeyError"]
    scores = [(p["chosen_score"], p["rejected_score"]) for p in pairs]
    assert scores == [("N/A", "5"), ("5", "3"), ("N/A", "3"), ("2", "1"), ("10", "1"), ("2", "10")]


# ------------------------------------------------------------------------------------ ReVeR

_ITEM = re.compile(r"^(\d+)\. (.*)$")
_JUDGE = re.compile(r"<judge>(.*?)</judge>", re.S)


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


def _rubric_items(rubric_row: dict) -> list[str]:
    text = rubric_row["messages"][-1]["content"].split("Here is the rubric:", 1)[1]
    items = [_ITEM.match(line) for line in text.strip().splitlines()]
    assert all(items)
    assert [int(m.group(1)) for m in items] == list(range(1, len(items) + 1))
    return [m.group(2) for m in items]


def _verdict(final: str):
    """(problem or None, {rubric_id: score}, number of judge blocks)"""
    blocks = _JUDGE.findall(final)
    if not blocks:
        return "verdict_no_judge_block", None, 0
    try:
        obj = json.loads(blocks[-1])
    except json.JSONDecodeError:
        return "verdict_malformed_json", None, len(blocks)
    if len(obj) == 1 and isinstance(next(iter(obj.values())), list):
        return None, {x["rubric_id"]: x["score"] for x in next(iter(obj.values()))}, len(blocks)
    return None, {k: v["score"] for k, v in obj.items()}, len(blocks)


def _audit(rubrics: list[dict], judges: list[dict]):
    """Independent re-implementation of the ReVeR promises; returns the set of breaks."""
    found = set()
    rub = {r["id"]: _rubric_items(r) for r in rubrics}
    by_id = defaultdict(list)
    for j in judges:
        by_id[j["id"]].append(j)
    for i in rub:
        cands = Counter(j["candidate"] for j in by_id.get(i, []))
        if not cands:
            found.add(("rubric_unused", i, None))
        elif set(cands) != {"chosen", "rejected"}:
            found.add(("rubric_single_trajectory", i, None))
        for c, k in cands.items():
            if k > 1:
                found.add(("duplicate_candidate", i, c))
    scores = {}
    for i, js in by_id.items():
        if i not in rub:
            found.add(("trajectory_without_rubric", i, None))
            continue
        hard = ["[Hard Rule]" in c for c in rub[i]]
        for j in js:
            task = json.loads(j["messages"][1]["content"])
            if [x["criterion"] for x in task["rubrics"]] != rub[i]:
                found.add(("criteria_mismatch", i, j["candidate"]))
            problem, sc, nblocks = _verdict(j["messages"][-1]["content"])
            if nblocks > 1:
                found.add(("info_multiple_judge_blocks", i, j["candidate"]))
            if problem:
                found.add((problem, i, j["candidate"]))
                continue
            ids = [x["rubric_id"] for x in task["rubrics"]]
            if set(sc) != set(ids):
                found.add(("verdict_missing_items", i, j["candidate"]))
                continue
            vals = [sc[r] for r in ids]
            if any((v not in (0, 1)) if h else not (0 <= v <= 100) for v, h in zip(vals, hard)):
                found.add(("verdict_score_out_of_range", i, j["candidate"]))
                continue
            princ = [v for v, h in zip(vals, hard) if not h]
            scores[(i, j["candidate"])] = sum(v for v, h in zip(vals, hard) if h) + (
                sum(princ) / len(princ) / 101 if princ else 0.0)
    for i in rub:
        if (i, "chosen") in scores and (i, "rejected") in scores:
            if scores[(i, "chosen")] <= scores[(i, "rejected")]:
                found.add(("not_kept", i, None))
    return found, scores


def test_rever_integrity_breaks_match_manifest(gen):
    out, manifest = gen
    rubrics, judges = _read(out, "rever_rubric"), _read(out, "rever_judge")
    found, scores = _audit(rubrics, judges)
    planted = {(b["kind"], b["id"], b["candidate"]) for b in manifest["rever_integrity_breaks"]}
    assert found == planted
    kinds = Counter(k for k, _, _ in planted)
    assert set(kinds) == {
        "rubric_unused", "rubric_single_trajectory", "duplicate_candidate", "trajectory_without_rubric",
        "criteria_mismatch", "not_kept", "verdict_no_judge_block", "verdict_malformed_json",
        "verdict_missing_items", "verdict_score_out_of_range", "info_multiple_judge_blocks"}
    assert min(kinds.values()) >= 3
    # a realistic share of kept pairs is decided by the principles only
    rub = {r["id"]: _rubric_items(r) for r in rubrics}
    assert all(r["id"].split(":")[0] == r["source"] and r["source"] in C.REVER_SOURCES for r in rubrics)
    assert sum(not any("[Principle]" in c for c in items) for items in rub.values()) >= 3
    assert all(3 <= len(items) <= 8 for items in rub.values())
    ties = sum(int(scores[(i, "chosen")]) == int(scores[(i, "rejected")])
               for i in rub if (i, "chosen") in scores and (i, "rejected") in scores)
    assert ties > 0.2 * len(rub)


_REVER_ID = re.compile(r"^(helpsteer3|ultrafeedback|skywork|magpie|ifeval):([0-9]+)$")


def test_rever_ids(gen):
    """Ids "<source>:<n>" of 12-30 characters, n sparse and drawn at random: not dense, rows
    not in id order, in either file."""
    out, manifest = gen
    rubrics, judges = _read(out, "rever_rubric"), _read(out, "rever_judge")
    for rows in (rubrics, judges):
        ids = [r["id"] for r in rows]
        assert all(12 <= len(i) <= 30 for i in ids), min(ids, key=len)
        matched = [_REVER_ID.match(i) for i in ids]
        assert all(matched) and all(m.group(1) == r["source"] for m, r in zip(matched, rows))
        assert ids != sorted(ids)
        numbers = [int(m.group(2)) for m in matched]
        assert numbers != sorted(numbers)
    # one rubric row per id; distinct numbers within a source, far apart (not a running number)
    assert len({r["id"] for r in rubrics}) == len(rubrics)
    by_source = defaultdict(list)
    for r in rubrics:
        by_source[r["source"]].append(int(r["id"].split(":")[1]))
    for source, numbers in by_source.items():
        assert len(set(numbers)) == len(numbers)
        assert max(numbers) - min(numbers) > 20 * len(numbers), source
    assert {r["id"] for r in judges} - {r["id"] for r in rubrics} == {
        b["id"] for b in manifest["rever_integrity_breaks"] if b["kind"] == "trajectory_without_rubric"}


def test_rever_rubric_prompt(gen):
    """The rubric row's user turn in the real wording, asking for the pair's instruction."""
    out, _ = gen
    instruction = {}
    for j in _read(out, "rever_judge"):
        try:
            instruction[j["id"]] = json.loads(j["messages"][1]["content"])["instruction"]
        except json.JSONDecodeError:
            continue
    rubrics = _read(out, "rever_rubric")
    for r in rubrics:
        user = r["messages"][0]
        assert user["role"] == "user" and user["content"].startswith(RUBRIC_PROMPT_START)
        if r["id"] in instruction:
            assert "\n" + instruction[r["id"]] + "\n" in user["content"]
    assert sum(r["id"] in instruction for r in rubrics) > 0.9 * len(rubrics)


def test_rever_trajectories(gen):
    out, manifest = gen
    judges = _read(out, "rever_judge")
    roles = Counter(tuple(m["role"] for m in j["messages"]) for j in judges)
    assert set(roles) == {("system", "user", "assistant"),
                          ("system", "user", "assistant", "tool_call", "tool_response", "assistant")}
    rate = sum("tool_call" in r for r in roles.elements()) / len(judges)
    assert abs(rate - C.REVER_TOOL_CALL_RATE) < 0.03
    shapes = Counter()
    for j in judges:
        blocks = _JUDGE.findall(j["messages"][-1]["content"])
        try:
            obj = json.loads(blocks[-1])
        except (IndexError, json.JSONDecodeError):
            continue
        key = next(iter(obj))
        shapes[key if isinstance(obj[key], list) else "map"] += 1
        json.loads(j["tools"])
        assert j["messages"][-1]["content"].rstrip().endswith("</judge>")
    assert shapes["map"] > 0.35 * len(judges) and shapes["scores"] > 0.2 * len(judges)
    assert shapes["verdicts"] + shapes["items"] > 0


def test_rever_pairs_from_ultrafeedback(gen):
    out, manifest = gen
    uf = _read(out, "ultrafeedback")
    by_instr = defaultdict(list)
    for r in uf:
        by_instr[_norm(r["instruction"])].append(r)
    judges = _read(out, "rever_judge")
    linked = defaultdict(dict)
    for j in judges:
        if j["source"] != "ultrafeedback":
            continue
        task = json.loads(j["messages"][1]["content"])
        rows = by_instr.get(_norm(task["instruction"]))
        if rows:
            assert len(rows) == 1
            linked[j["id"]][j["candidate"]] = next(
                c for c in rows[0]["completions"] if c["response"] == task["response"])
    assert len(linked) == manifest["rever"]["pairs_built_from_ultrafeedback"] >= 5
    uf_pairs = {j["id"] for j in judges if j["source"] == "ultrafeedback"}
    assert 0.15 < len(linked) / len(uf_pairs) < 0.5
    disagree = sum((p["chosen"]["average_rating"] - p["rejected"]["average_rating"])
                   * (p["chosen"]["overall_score"] - p["rejected"]["overall_score"]) < 0
                   for p in linked.values() if len(p) == 2)
    assert disagree >= 1
    variants = {d["variant"] for d in manifest["rever"]["ultrafeedback_links"]}
    assert len(variants) >= 3


def test_bundled_sample_is_current(tmp_path):
    """sample_data/ is exactly what the command in the generate.py docstring writes."""
    sample = Path(__file__).resolve().parents[2] / "sample_data"
    if not (sample / MANIFEST_NAME).is_file():
        pytest.skip("no bundled sample")
    generate(tmp_path, seed=42, scale=0.01, progress=False, text_length=0.25)
    assert _digest(tmp_path) == _digest(sample)


# ------------------------------------------------------------------------- bounded memory


def _generate_spied(out: Path, scale: float, monkeypatch) -> tuple[dict, dict[str, list[tuple[int, int]]]]:
    """generate() with every table handed to the writer recorded per dataset as
    (rows, Arrow bytes allocated at that moment)."""
    from preftools.generate import writer

    calls: dict[str, list[tuple[int, int]]] = defaultdict(list)
    original = writer.ShardedWriter.write

    def spy(self, table):
        calls[self.dataset.key].append((table.num_rows, pa.total_allocated_bytes()))
        return original(self, table)

    with monkeypatch.context() as m:
        m.setattr(writer.ShardedWriter, "write", spy)
        manifest = generate(out, seed=42, scale=scale, progress=False, text_length=TEXT)
    return manifest, calls


def test_writes_in_bounded_chunks(tmp_path, monkeypatch):
    """Peak memory must not grow with the scale: every dataset is built and written a bounded
    chunk of rows at a time, never as one whole table.  With tiny chunks, row groups and shards
    (so that small scales span many chunks), at two scales 4x apart: no table handed to the
    writer is larger than one chunk, the larger scale takes ~4x as many of them, and the Arrow
    memory in use while a chunk is written does not grow with the scale (it would ~4x if a
    dataset were built whole and written in slices).  The files hold the same rows as with the
    default row groups (chunking changes the layout, never the rows)."""
    from preftools.generate import ultrafeedback, writer

    monkeypatch.setattr(ultrafeedback, "CHUNK_ROWS", 48)  # its chunks are its random streams
    baseline = generate(tmp_path / "baseline", seed=42, scale=0.02, progress=False, text_length=TEXT)
    for key in writer.ROW_GROUP_ROWS:
        monkeypatch.setitem(writer.ROW_GROUP_ROWS, key, 16)
    for key in writer.SHARD_ROWS:  # UltraFeedback: 4 shards at every scale
        monkeypatch.setitem(writer.SHARD_ROWS, key, 96)
    small, small_calls = _generate_spied(tmp_path / "small", 0.005, monkeypatch)
    large, large_calls = _generate_spied(tmp_path / "large", 0.02, monkeypatch)

    for key in C.DATASETS_BY_KEY:
        bound = 48 if key == "ultrafeedback" else writer.write_chunk_rows(key)
        assert bound <= 48
        for manifest, calls in ((small, small_calls), (large, large_calls)):
            rows = [n for n, _ in calls[key]]
            assert sum(rows) == manifest["rows"][key], key
            assert max(rows) <= bound, (key, max(rows), bound)
        assert len(large_calls[key]) >= 3 * len(small_calls[key]) >= 3, key
        assert len(large["files"][key]) > 1, key  # several shards, each written chunk by chunk
        # same rows as written from the default layout (JSON too: the rubric in 7 shards)
        tables = [C.DATASETS_BY_KEY[key].read(out).cast(C.DATASETS_BY_KEY[key].schema).combine_chunks()
                  for out in (tmp_path / "baseline", tmp_path / "large")]
        assert tables[0].equals(tables[1]), key
        # Arrow memory in use while the dataset is written: bounded by the chunk, not the scale
        small_peak, large_peak = (max(b for _, b in calls[key]) for calls in (small_calls, large_calls))
        assert large_peak < 2 * small_peak, (key, small_peak, large_peak)
    assert large["files"]["rever_rubric"][0] == "OpenRubrics/ReVeR-Traces-Rubric/data/train-00000-of-00007.jsonl"


# ---------------------------------------------------------- stand-ins of the extra datasets
# (the entries of examples/extra_datasets.yml; preftools/generate/extra_*.py)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "extra_datasets.yml"
# Each repo's files as on the Hub, and the real row counts they scale.
EXTRA_FILES = {
    "h4_ultrafeedback": {"README.md": None, "data/test_prefs-00000-of-00001.parquet": 2000,
                         "data/train_prefs-00000-of-00001.parquet": 61135,
                         "data/train_sft-00000-of-00001.parquet": 61135},
    "argilla_ultrafeedback_cleaned": {"README.md": None, "data/train-00000-of-00001.parquet": 60917},
    "rlhflow_ultrafeedback": {"README.md": None, "data/train-00000-of-00001.parquet": 340000},
    "openbmb_ultrafeedback": {"README.md": None, "evol_instruct.jsonl": 10000, "false_qa.jsonl": 2339,
                              "flan.jsonl": 20939, "sharegpt.jsonl": 19949, "truthful_qa.jsonl": 811,
                              "ultrachat.jsonl": 9929},
    "hh_helpful": {"README.md": None, "harmless-base/test.jsonl.gz": 2312, "harmless-base/train.jsonl.gz": 42537,
                   "helpful-base/test.jsonl.gz": 2354, "helpful-base/train.jsonl.gz": 43835},
}
MESSAGES = pa.list_(pa.struct([("content", pa.string()), ("role", pa.string())]))
EXTRA_SCHEMAS = {
    "h4_ultrafeedback": pa.schema([("prompt", pa.string()), ("prompt_id", pa.string()), ("chosen", MESSAGES),
                                   ("rejected", MESSAGES), ("messages", MESSAGES), ("score_chosen", pa.float64()),
                                   ("score_rejected", pa.float64())]),
    "argilla_ultrafeedback_cleaned": pa.schema([
        ("source", pa.string()), ("prompt", pa.string()), ("chosen", MESSAGES), ("chosen-rating", pa.float64()),
        ("chosen-model", pa.string()), ("rejected", MESSAGES), ("rejected-rating", pa.float64()),
        ("rejected-model", pa.string())]),
    "rlhflow_ultrafeedback": pa.schema([("rejected", MESSAGES), ("chosen", MESSAGES), ("chosen_score", pa.string()),
                                        ("rejected_score", pa.string())]),
}
# planted quirk -> the integrity flag of preference_pairs it is to raise (None: a shape, no flag)
QUIRK_FLAG = {"identical_responses": "identical_responses", "empty_response": "empty_response",
              "inverted_scores": "score_not_higher", "tied_scores": "score_not_higher",
              "na_score": "unparseable_score", "unparseable_score": "unparseable_score",
              "score_out_of_range": "score_out_of_range", "duplicate_pair": "duplicate_pair",
              "cross_dataset_duplicate": "cross_dataset_duplicate", "differ_before_last_turn": None}


@pytest.fixture(scope="module")
def entries():
    from preftools.inputs import registry

    return {e.name: e for e in registry.extra_datasets(registry.load_vars(str(EXAMPLES)))}


def _raw_rows(entry, out: Path):
    """(file, row number, row) of an entry's rows: its files by the registry's rule, each read as is."""
    from preftools.inputs import registry

    for path in registry.data_files(entry, out):
        rows = pq.read_table(path).to_pylist() if path.suffix == ".parquet" else _json_lines(path)
        for i, row in enumerate(rows):
            yield path.relative_to(entry.repo_dir(out)).as_posix(), i, row


def _number(value) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    try:
        return float(str(value).strip()) if value is not None else None
    except ValueError:
        return None


def _turns(transcript: str) -> list[dict]:
    parts = re.split(r"(\n\nHuman:|\n\nAssistant:)", transcript)
    turns = [{"role": "user", "content": parts[0].strip()}] if parts[0].strip() else []
    return turns + [{"role": "user" if "Human" in m else "assistant", "content": c.strip()}
                    for m, c in zip(parts[1::2], parts[2::2])]


def _implicit_prompt(chosen: list, rejected: list) -> tuple[list, list, list]:
    k = 0
    while k < min(len(chosen), len(rejected)) and chosen[k] == rejected[k]:
        k += 1
    users = [i for i in range(k) if chosen[i]["role"] == "user"]
    return (chosen[:users[-1] + 1], chosen[users[-1] + 1:], rejected[users[-1] + 1:]) if users else ([], chosen, rejected)


def _pairs(entry, out: Path):
    """(file, row, prompt, chosen, rejected, scores) by the rules of the extra-datasets spec."""
    c = entry.columns
    for f, i, row in _raw_rows(entry, out):
        chosen, rejected = row[c["chosen"]], row[c["rejected"]]
        if entry.shape == "transcript":
            prompt, chosen, rejected = _implicit_prompt(_turns(chosen), _turns(rejected))
        elif "prompt" in c:
            prompt = [{"role": "user", "content": row[c["prompt"]]}]
            chosen, rejected = (m[1:] if m[:1] == prompt else m for m in (chosen, rejected))
        else:
            prompt, chosen, rejected = _implicit_prompt(chosen, rejected)
        scores = (_number(row[c["chosen_score"]]), _number(row[c["rejected_score"]])) if "chosen_score" in c else None
        yield f, i, prompt, chosen, rejected, scores


def _flags(entries: dict, out: Path) -> dict[str, dict[tuple, list[str]]]:
    """The integrity flags of every pair of the preference and transcript entries, by (file, row)."""
    def normal(messages):
        return tuple((m["role"], " ".join(m["content"].lower().split())) for m in messages)

    def blank(messages):
        return not messages or all(not (m["content"] or "").strip() for m in messages)

    flags, earlier = {}, set()
    for name, entry in entries.items():
        if entry.shape == "rated_completions":
            continue
        lo, hi = entry.spec.get("score_range", (None, None))
        seen, mine, found = set(), set(), {}
        for f, i, prompt, chosen, rejected, scores in _pairs(entry, out):
            got = []
            if chosen == rejected:
                got.append("identical_responses")
            if blank(chosen) or blank(rejected):
                got.append("empty_response")
            if scores is not None:
                if None in scores:
                    got.append("unparseable_score")
                elif scores[0] <= scores[1]:
                    got.append("score_not_higher")
                if any(s is not None and not lo <= s <= hi for s in scores):
                    got.append("score_out_of_range")
            key = json.dumps([prompt, chosen, rejected])
            if key in seen:
                got.append("duplicate_pair")
            seen.add(key)
            if (normal(prompt), normal(chosen), normal(rejected)) in earlier:
                got.append("cross_dataset_duplicate")
            mine.add((normal(prompt), normal(chosen), normal(rejected)))
            if got:
                found[(f, i)] = sorted(got)
        earlier |= mine
        flags[name] = found
    return flags


def test_extra_stand_ins_layout_types_and_sizes(gen, entries):
    """Each stand-in in its Hub repo's layout (files, cards), column names and types, the real row
    counts times the scale (at least 50 rows in the files the entry reads); the registry entries
    of examples/extra_datasets.yml pick exactly their files."""
    out, manifest = gen
    import yaml

    from preftools.inputs import registry

    for name, files in EXTRA_FILES.items():
        entry, section = entries[name], manifest["extra_datasets"][name]
        repo = entry.repo_dir(out)
        assert sorted(p.relative_to(repo).as_posix() for p in repo.rglob("*") if p.is_file()) == sorted(files), name
        main = sum(files[f] for f in section["entry_files"])
        factor = max(SCALE, 50 / main)
        assert section["rows"] == {f: max(1, round(n * factor)) for f, n in files.items() if n}, name
        assert sorted(section["files"]) == sorted(f"{entry.hub_id}/{f}" for f in files if files[f]), name
        picked = [p.relative_to(repo).as_posix() for p in registry.data_files(entry, out)]
        assert picked == section["entry_files"], name
        assert sum(1 for _ in _raw_rows(entry, out)) == sum(section["rows"][f] for f in picked) >= 50, name
        for f in files:
            if f.endswith(".parquet"):
                assert pq.read_schema(repo / f).equals(EXTRA_SCHEMAS[name], check_metadata=False), (name, f)
            elif files[f]:
                assert count_rows(repo / f) == section["rows"][f], (name, f)
    # the cards: H4's names its splits (configs), hh-rlhf's and openbmb's name none, as upstream
    front = {name: yaml.safe_load((entries[name].repo_dir(out) / "README.md").read_text().split("---")[1])
             for name in EXTRA_FILES}
    assert [s["split"] for s in front["h4_ultrafeedback"]["configs"][0]["data_files"]] == \
        ["train_prefs", "train_sft", "test_prefs"]
    assert "configs" not in front["hh_helpful"] and "configs" not in front["openbmb_ultrafeedback"]
    # H4: prompt_id is the sha256 of the prompt; messages = chosen = [user prompt, assistant]; train_sft = train_prefs
    h4 = entries["h4_ultrafeedback"].repo_dir(out) / "data"
    rows = pq.read_table(h4 / "train_prefs-00000-of-00001.parquet").to_pylist()
    assert pq.read_table(h4 / "train_sft-00000-of-00001.parquet").to_pylist() == rows
    assert all(r["prompt_id"] == hashlib.sha256(r["prompt"].encode()).hexdigest() and r["messages"] == r["chosen"]
               and [m["role"] for m in r["chosen"]] == ["user", "assistant"] for r in rows)
    # hh-rlhf: whole transcripts, {chosen, rejected}
    for f, _, row in _raw_rows(entries["hh_helpful"], out):
        assert list(row) == ["chosen", "rejected"] and row["chosen"].startswith("\n\nHuman: "), f
    # openbmb: one file per source, string ratings, the completion's fields as upstream
    first = _json_lines(entries["openbmb_ultrafeedback"].repo_dir(out) / "flan.jsonl")[0]
    assert list(first) == ["source", "instruction", "models", "completions", "correct_answers", "incorrect_answers"]
    assert first["source"].startswith("flan_v2_")
    assert list(first["completions"][0]) == ["annotations", "critique", "custom_system_prompt", "fine-grained_score",
                                             "model", "overall_score", "principle", "response"]
    assert list(first["completions"][0]["annotations"]["truthfulness"]) == ["Rating", "Rationale",
                                                                            "Rationale For Rating", "Type"]


def test_extra_stand_ins_planted_quirks_are_the_flags(gen, entries):
    """Every planted quirk raises its integrity flag (by the rules of the extra-datasets spec) on its
    row, and no other row of the pair datasets is flagged: the manifest's planted rows are the flags."""
    out, manifest = gen
    flags = _flags(entries, out)
    for name, found in flags.items():
        planted = manifest["extra_datasets"][name]["planted"]
        assert all(len(rows) >= 2 for rows in planted.values()), (name, planted)
        expected = {tuple(row): [QUIRK_FLAG[q]] for q, rows in planted.items() if QUIRK_FLAG[q] for row in rows}
        assert found == expected, name
        assert manifest["extra_datasets"][name]["planted_counts"] == {q: len(r) for q, r in planted.items()}
    for quirk in ("inverted_scores", "tied_scores", "score_out_of_range", "empty_response", "identical_responses",
                  "duplicate_pair"):
        assert quirk in manifest["extra_datasets"]["h4_ultrafeedback"]["planted"], quirk
    assert {"na_score", "unparseable_score", "cross_dataset_duplicate"} <= set(
        manifest["extra_datasets"]["rlhflow_ultrafeedback"]["planted"])
    # the cross-dataset duplicates differ from their source in letter case and white space (argilla)
    h4_pairs = {json.dumps([p, c, r]) for _, _, p, c, r, _ in _pairs(entries["h4_ultrafeedback"], out)}
    argilla = {(f, i): json.dumps([p, c, r]) for f, i, p, c, r, _ in _pairs(entries["argilla_ultrafeedback_cleaned"], out)}
    for f, i in manifest["extra_datasets"]["argilla_ultrafeedback_cleaned"]["planted"]["cross_dataset_duplicate"]:
        assert argilla[(f, i)] not in h4_pairs


def test_extra_stand_ins_shapes(gen, entries):
    """The shapes a registry entry has to handle: RLHFlow's implicit prompts (multi-turn, a leading
    system turn), hh-rlhf's transcripts (multi-turn, a pair that differs before the last turn, an
    empty last "Assistant:" turn), openbmb's rated completions (none, all tied, one unrated)."""
    out, manifest = gen
    rlhflow = manifest["extra_datasets"]["rlhflow_ultrafeedback"]
    prompts = [p for *_, p, _c, _r, _s in _pairs(entries["rlhflow_ultrafeedback"], out)]
    assert sum(p[0]["role"] == "system" for p in prompts) == rlhflow["rows_system_turn"] > 0
    assert sum(sum(m["role"] == "user" for m in p) > 1 for p in prompts) == rlhflow["rows_multi_turn"] > 0
    assert {s for *_, s in _pairs(entries["rlhflow_ultrafeedback"], out) if None not in s} and all(
        isinstance(r["chosen_score"], str) for _, _, r in _raw_rows(entries["rlhflow_ultrafeedback"], out))

    hh = manifest["extra_datasets"]["hh_helpful"]
    pairs = {(f, i): (p, c, r) for f, i, p, c, r, _ in _pairs(entries["hh_helpful"], out)}
    transcripts = [_turns(row["chosen"]) for _, _, row in _raw_rows(entries["hh_helpful"], out)]
    assert sum(sum(m["role"] == "user" for m in t) > 1 for t in transcripts) == hh["rows_multi_turn"] > 0
    for f, i in hh["planted"]["differ_before_last_turn"]:
        _, chosen, rejected = pairs[(f, i)]
        assert len(chosen) > 1 and len(rejected) > 1 and chosen[-1] != rejected[-1]
    raw = {(f, i): row for f, i, row in _raw_rows(entries["hh_helpful"], out)}
    for f, i in hh["planted"]["empty_response"]:
        assert raw[(f, i)]["rejected"].endswith("\n\nAssistant:")

    entry = entries["openbmb_ultrafeedback"]
    lo, hi = entry.spec["score_range"]

    def rating(completion):
        values = []
        for path in entry.columns["rating"]:
            value = completion
            for part in path.split("."):
                value = value.get(part) if isinstance(value, dict) else None
            number = _number(value)
            if number is not None and lo <= number <= hi:
                values.append(number)
        return sum(values) / len(values) if values else None

    kinds = {}
    for f, i, row in _raw_rows(entry, out):
        ratings = [rating(c) for c in row["completions"]]
        rated = [r for r in ratings if r is not None]
        if not row["completions"]:
            kinds[(f, i)] = "empty_completions"
        elif not [r for r in ratings if r is None or r < max(rated)]:
            kinds[(f, i)] = "tied_completions"
        elif None in ratings:
            kinds[(f, i)] = "unrated_completion"
    planted = manifest["extra_datasets"]["openbmb_ultrafeedback"]["planted"]
    assert kinds == {tuple(row): q for q, rows in planted.items() if q != "duplicate_row" for row in rows}
    rows = {(f, i): row for f, i, row in _raw_rows(entry, out)}
    for f, i in planted["duplicate_row"]:
        assert sum(row == rows[(f, i)] for row in rows.values()) >= 2
    ratings = Counter(c["annotations"][a]["Rating"] for r in rows.values() for c in r["completions"]
                      for a in c["annotations"])
    assert ratings["N/A"] > 0 and {"1", "2", "3", "4", "5"} <= set(ratings)


def test_built_in_datasets_do_not_change_with_the_stand_ins(gen, tmp_path):
    """The stand-ins draw from their own random streams: the built-in datasets' files are the same
    bytes with and without them."""
    out, _ = gen
    generate(tmp_path, seed=42, scale=SCALE, progress=False, text_length=TEXT, datasets=list(C.DATASETS_BY_KEY))
    built_in = {k: v for k, v in _digest(out).items() if any(k.startswith(d.hub_id + "/") for d in C.DATASETS)}
    assert built_in == {k: v for k, v in _digest(tmp_path).items() if k != MANIFEST_NAME}
    assert not (tmp_path / "openbmb").exists() and "extra_datasets" not in json.loads((tmp_path / MANIFEST_NAME).read_text())


def test_one_stand_in_alone(tmp_path):
    """A stand-in whose pairs another repeats is built (not written) when only that one is asked for."""
    m = generate(tmp_path, seed=42, scale=SCALE, progress=False, text_length=TEXT, datasets=["rlhflow_ultrafeedback"])
    assert list(m["extra_datasets"]) == ["rlhflow_ultrafeedback"] and m["rows"] == {}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["RLHFlow", MANIFEST_NAME]
    assert len(m["extra_datasets"]["rlhflow_ultrafeedback"]["planted"]["cross_dataset_duplicate"]) >= 2
    # only the near-duplicate cases whose every row was written: those wholly in RLHFlow's stand-in
    cases = m.get("near_duplicates", [])
    assert cases and all(r["dataset"] == "rlhflow_ultrafeedback" for c in cases for r in c["rows"])


def test_fixed_ultrafeedback_revision(gen, tmp_path):
    """openbmb's overall_score fix: of the completions scored 10, those whose mean rating is at
    most 2 are scored 1, those above 4 keep 10, the rest get a new score; nothing else changes."""
    from benchmarks.reference import aspect_ratings, mean_rating

    out, _ = gen
    fixed = tmp_path / "fixed"
    generate(fixed, seed=42, scale=SCALE, progress=False, text_length=TEXT, ultrafeedback_revision="fixed")
    a, b = _digest(out), _digest(fixed)
    assert a.keys() == b.keys()
    assert {k for k in a if a[k] != b[k]} - {MANIFEST_NAME} == set(_files(out, "ultrafeedback"))
    seen = Counter()
    for row, new_row in zip(_read(out, "ultrafeedback"), _read(fixed, "ultrafeedback"), strict=True):
        for c, d in zip(row["completions"], new_row["completions"], strict=True):
            assert {**c, "overall_score": None} == {**d, "overall_score": None}
            mean = mean_rating(aspect_ratings(c))
            if c["overall_score"] != 10:
                assert d["overall_score"] == c["overall_score"]
            elif mean is not None and mean <= 2:
                assert d["overall_score"] == 1
                seen["set to 1"] += 1
            elif mean is not None and mean > 4:
                assert d["overall_score"] == 10
            else:
                assert 1 <= d["overall_score"] <= 10
                seen["re-annotated"] += d["overall_score"] != 10
    assert seen["set to 1"] > 0 and seen["re-annotated"] > 0


# ------------------------------------------------------------------- planted near duplicates
# (preftools/generate/near_duplicates.py: the rule of preftools/generate/near_duplicate_rule.py)

NEAR_KINDS = ("prompt_case_whitespace", "prompt_one_word", "prompt_template_chain", "same_comparison_edited",
              "label_conflict", "near_identical_responses", "prompt_near_miss", "comparison_near_miss")
PAIR_ENTRIES = ("h4_ultrafeedback", "argilla_ultrafeedback_cleaned", "rlhflow_ultrafeedback")


@pytest.fixture(scope="module")
def gen_pairs(tmp_path_factory):
    """The three preference stand-ins at scale 0.01 (the tests' and the bundled sample's scale)."""
    out = tmp_path_factory.mktemp("raw42_pairs")
    manifest = generate(out, seed=42, scale=0.01, progress=False, text_length=TEXT, datasets=list(PAIR_ENTRIES))
    return out, manifest


def _near_verdict(pairs: list[tuple[list, list, list]]) -> dict:
    """The rule's verdict on planted pairs (prompt, chosen, rejected as message lists), written
    from the rule: per pair its chosen/rejected Jaccard; per two pairs the prompt Jaccard, the
    relations (when the prompts are near) and the four response Jaccards; the prompts' clusters."""
    from preftools.generate.near_duplicate_rule import jaccard, near, prompt_text, response_text, shingles

    sets = [(shingles(prompt_text(p)), shingles(response_text(c)), shingles(response_text(r))) for p, c, r in pairs]
    rows = [{"responses_jaccard": round(jaccard(c, r), 6), "responses_near": near(c, r)} for _, c, r in sets]
    comparisons, linked = [], {i: {i} for i in range(len(pairs))}
    for i, j in itertools.combinations(range(len(pairs)), 2):
        (pi, ci, ri), (pj, cj, rj) = sets[i], sets[j]
        relations = []
        if near(pi, pj):
            relations += ["same_comparison"] if near(ci, cj) and near(ri, rj) else []
            relations += ["label_conflict"] if near(ci, rj) and near(ri, cj) else []
            for k in linked[i] | linked[j]:
                linked[k] = linked[i] | linked[j]
        comparisons.append({
            "rows": [i, j], "prompt_jaccard": round(jaccard(pi, pj), 6), "prompts_near": near(pi, pj),
            "relations": relations, "chosen_jaccard": round(jaccard(ci, cj), 6),
            "rejected_jaccard": round(jaccard(ri, rj), 6), "chosen_rejected_jaccard": round(jaccard(ci, rj), 6),
            "rejected_chosen_jaccard": round(jaccard(ri, cj), 6)})
    clusters = sorted({tuple(sorted(c)) for c in linked.values()})
    return {"rows": rows, "comparisons": comparisons, "clusters": [list(c) for c in clusters]}


def _intended(case: dict) -> bool:
    """What each kind is planted for."""
    rows, comparisons, kind = case["rows"], case["comparisons"], case["kind"]
    if kind == "near_identical_responses":
        return len(rows) == 1 and rows[0]["responses_near"] and 0.8 <= rows[0]["responses_jaccard"] < 1
    if any(r["responses_near"] for r in rows):
        return False
    if kind == "prompt_template_chain":
        return [c["prompts_near"] for c in comparisons] == [True, False, True] and case["clusters"] == [[0, 1, 2]] \
            and not any(c["relations"] for c in comparisons)
    (c,) = comparisons
    return {
        "prompt_case_whitespace": c["prompt_jaccard"] == 1 and not c["relations"],
        "prompt_one_word": 0.8 <= c["prompt_jaccard"] < 0.85 and not c["relations"],
        "same_comparison_edited": c["prompts_near"] and c["relations"] == ["same_comparison"]
        and max(c["prompt_jaccard"], c["chosen_jaccard"], c["rejected_jaccard"]) < 1,
        "label_conflict": c["prompts_near"] and c["relations"] == ["label_conflict"],
        "prompt_near_miss": 0.75 <= c["prompt_jaccard"] < 0.8 and not c["prompts_near"] and not c["relations"],
        "comparison_near_miss": c["prompts_near"] and c["chosen_jaccard"] >= 0.8 and 0.75 <= c["rejected_jaccard"] < 0.8
        and not c["relations"],
    }[kind]


@pytest.mark.parametrize("fixture", ["gen", "gen_pairs"])
def test_near_duplicates_every_kind_planted(fixture, request):
    """At least 2 cases of each kind at the tests' scales (0.005 and 0.01), in all three preference
    stand-ins, a few hundred at scale 1.0; the label conflicts between H4 and argilla's cleaned set."""
    from preftools.generate.extra_pairs import near_duplicate_cases

    _, manifest = request.getfixturevalue(fixture)
    cases = manifest["near_duplicates"]
    kinds = Counter(c["kind"] for c in cases)
    assert set(kinds) == set(NEAR_KINDS) and min(kinds.values()) >= 2, kinds
    assert {r["dataset"] for c in cases for r in c["rows"]} == set(PAIR_ENTRIES)
    assert any({r["dataset"] for r in c["rows"]} == {"h4_ultrafeedback", "argilla_ultrafeedback_cleaned"}
               for c in cases if c["kind"] == "label_conflict")
    assert all(len(c["rows"]) == 3 for c in cases if c["kind"] == "prompt_template_chain")
    assert 100 <= near_duplicate_cases(1.0) * len(NEAR_KINDS) <= 400


@pytest.mark.parametrize("fixture", ["gen", "gen_pairs"])
def test_near_duplicate_verdicts_from_the_raw_files(fixture, request, entries):
    """Each case's verdict, computed again with the rule from its rows as read from the raw files
    (by the extra-datasets spec), is the manifest's, and the one its kind is planted for; no prompt
    of the three stand-ins outside a case is near one of its prompts; its rows are clean pairs
    that carry no other planted quirk."""
    out, manifest = request.getfixturevalue(fixture)
    pairs, prompts = {}, {}
    for name in PAIR_ENTRIES:
        entry = entries[name]
        for f, i, prompt, chosen, rejected, scores in _pairs(entry, out):
            pairs[(name, f"{entry.hub_id}/{f}", i)] = (prompt, chosen, rejected, scores)
    from preftools.generate.near_duplicate_rule import near, prompt_text, shingles

    index = defaultdict(set)  # shingle -> the rows whose prompt has it
    for key, (prompt, *_rest) in pairs.items():
        prompts[key] = shingles(prompt_text(prompt))
        for s in prompts[key]:
            index[s].add(key)

    other_planted = set()
    for name in PAIR_ENTRIES:
        section = manifest["extra_datasets"][name]
        hub_id = section["hub_id"]
        lists = [*section["planted"].values(), section.get("donor_rows", []), *section.get("bias_planted", {}).values()]
        other_planted |= {(name, f"{hub_id}/{f}", i) for rows in lists for f, i in rows}
    other_planted |= {(c["dataset"], f"{c['hub_id']}/{c['file']}", c["row"]) for c in manifest["contamination"]}
    flagged = {(name, f"{entries[name].hub_id}/{f}", i) for name, found in _flags(entries, out).items()
               for f, i in found}

    seen = set()
    for case in manifest["near_duplicates"]:
        keys = [(r["dataset"], r["file"], r["row"]) for r in case["rows"]]
        assert all(k in pairs for k in keys) and not seen & set(keys), case
        seen |= set(keys)
        assert _near_verdict([pairs[k][:3] for k in keys]) == {
            "rows": [{k: r[k] for k in ("responses_jaccard", "responses_near")} for r in case["rows"]],
            "comparisons": case["comparisons"], "clusters": case["clusters"]}, case
        assert _intended(case), case
        near_in_case = defaultdict(set)
        for c in case["comparisons"]:
            if c["prompts_near"]:
                i, j = (keys[n] for n in c["rows"])
                near_in_case[i].add(j)
                near_in_case[j].add(i)
        for k in keys:
            _, chosen, rejected, (chosen_score, rejected_score) = pairs[k]
            assert chosen_score > rejected_score and chosen and rejected, (case["kind"], k)
            assert k not in other_planted and k not in flagged, (case["kind"], k)
            near_rows = {o for s in prompts[k] for o in index[s] if near(prompts[k], prompts[o])} - {k}
            assert near_rows == near_in_case[k], (case["kind"], k)


# ---------------------------------------------------------------- planted personal data and secrets
# (preftools/generate/pii.py), checked with the scan's independent reference (pii_reference.py)

PII_PATTERNS = pii_reference.KINDS
PII_SIDES = pii_reference.SIDES


def _pii_findings(text: str) -> list[tuple[str, str]]:
    """(kind, matched text) of each finding of the rule in ``text``, kind by kind, left to right."""
    return [(kind, value) for kind in PII_PATTERNS for value in pii_reference.matches(kind, text)]


@pytest.fixture(scope="module")
def gen_001(tmp_path_factory):
    """Every dataset at scale 0.01, as the bundled sample."""
    out = tmp_path_factory.mktemp("raw42_001")
    return out, generate(out, seed=42, scale=0.01, progress=False, text_length=TEXT)


def _strings(value) -> list[str]:
    """Every string inside a row (nested lists and structs)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [s for v in value for s in _strings(v)] if isinstance(value, list) else []


def _file_rows(path: Path) -> list[dict]:
    if path.suffix == ".parquet":
        return pq.read_table(path).to_pylist()
    if path.suffix == ".json":
        return json.loads(path.read_text(encoding="utf-8"))
    return _json_lines(path)


def _pii_side_texts(out: Path, entries: dict) -> dict[tuple[str, str, int], dict[str, str]]:
    """The texts of every pair of the preference stand-ins and of every coseal row, by (dataset, file
    relative to ``out``, row), as preference_pairs holds them: prompt, chosen and rejected, each its
    messages' contents joined with "\\n" (coseal: the instruction, the prompt of the row's pairs)."""
    texts = {}
    for name in PAIR_ENTRIES:
        entry = entries[name]
        for f, i, prompt, chosen, rejected, _ in _pairs(entry, out):
            texts[(name, f"{entry.hub_id}/{f}", i)] = {
                side: "\n".join(m["content"] for m in messages)
                for side, messages in zip(PII_SIDES, (prompt, chosen, rejected))}
    for f in _files(out, "code_ultrafeedback"):
        for i, row in enumerate(_file_rows(out / f)):
            texts[("code_ultrafeedback", f, i)] = {"prompt": row["instruction"]}
    return texts


@pytest.mark.parametrize("fixture", ["gen", "gen_001"])
def test_pii_every_kind_planted(fixture, request):
    """At least 2 values of each kind the rule reports, at the tests' scales (0.005 and 0.01), and a
    near miss of each kind and of each of its variants; in prompts, chosen and rejected responses,
    code and prose, the three preference stand-ins and coseal's instructions; ~30 of each kind at scale 1.0."""
    from preftools.generate.extra_pairs import pii_cases

    _, manifest = request.getfixturevalue(fixture)
    cases = manifest["pii"]
    assert all(set(c) == {"dataset", "hub_id", "file", "row", "side", "context", "kind", "variant", "value",
                          "verdict"} for c in cases)
    positives = Counter(c["kind"] for c in cases if c["verdict"] is not None)
    assert set(positives) == set(PII_PATTERNS) and min(positives.values()) >= 2, positives
    misses = {(c["kind"], c["variant"]) for c in cases if c["verdict"] is None}
    assert {kind for kind, _ in misses} == set(PII_PATTERNS)
    assert {("email", "no_dot_after_at"), ("ip_address", "private"), ("ip_address", "documentation"),
            ("ip_address", "octet_over_255"), ("openai_api_key", "sk_learn"), ("aws_access_key_id", "one_short"),
            ("github_token", "one_short"), ("huggingface_token", "one_short"), ("private_key", "public_key")} <= misses
    assert "sk-learn" in {c["value"] for c in cases}
    for kind in PII_PATTERNS:
        mine = [c for c in cases if c["kind"] == kind and c["verdict"] is not None]
        assert len({c["side"] for c in mine}) >= 2 and len({c["context"] for c in mine}) == 2, kind
    for verdict in (True, False):
        assert {(c["side"], c["context"]) for c in cases if (c["verdict"] is not None) == verdict} == {
            (side, context) for side in PII_SIDES for context in ("code", "prose")}
    assert {c["dataset"] for c in cases if c["verdict"]} == {*PAIR_ENTRIES, "code_ultrafeedback"}
    assert all(c["side"] == "prompt" for c in cases if c["dataset"] == "code_ultrafeedback")
    assert 25 <= pii_cases(1.0) <= 40


@pytest.mark.parametrize("fixture", ["gen", "gen_001"])
def test_pii_values_and_verdicts_from_the_raw_files(fixture, request, entries):
    """Each case's value is in its row of its raw file, on its side of the pair as preference_pairs
    holds it; the rule (written here) finds there exactly the value, of the manifest's verdict, and
    nothing on the row's other sides (a near miss: nothing at all). Nowhere else in the generated
    data does the rule find anything, and the rows are clean pairs that carry no other planted case."""
    out, manifest = request.getfixturevalue(fixture)
    cases = manifest["pii"]
    texts = _pii_side_texts(out, entries)
    rows = {}
    for case in cases:
        path = out / case["file"]
        if path not in rows:
            rows[path] = _file_rows(path)
        assert any(case["value"] in s for s in _strings(rows[path][case["row"]])), case
        sides = texts[(case["dataset"], case["file"], case["row"])]
        assert case["value"] in sides[case["side"]], case
        expected = [(case["verdict"], case["value"])] if case["verdict"] else []
        assert {side: _pii_findings(text) for side, text in sides.items()} == {
            side: expected if side == case["side"] else [] for side in sides}, case
        assert (case["verdict"] is None) == (case["variant"] != "match") and case["verdict"] in (case["kind"], None)
    assert len({(c["file"], c["row"]) for c in cases}) == len(cases)

    # the planted values are all the rule finds, in any file
    found = set()
    for path in sorted(out.rglob("*")):
        if path.is_file() and path.name != MANIFEST_NAME and path.suffix in (".parquet", ".json", ".jsonl", ".gz"):
            found |= {f for row in _file_rows(path) for s in _strings(row) for f in _pii_findings(s)}
    assert found == {(c["verdict"], c["value"]) for c in cases if c["verdict"]}

    # clean pairs of the stand-ins, coseal rows the warehouse pairs, none of them another planted case
    other = {(c["dataset"], f"{c['hub_id']}/{c['file']}", c["row"]) for c in manifest["contamination"]}
    other |= {(r["dataset"], r["file"], r["row"]) for c in manifest["near_duplicates"] for r in c["rows"]}
    for name in PAIR_ENTRIES:
        section = manifest["extra_datasets"][name]
        lists = [*section["planted"].values(), section.get("donor_rows", []), *section.get("bias_planted", {}).values()]
        other |= {(name, f"{section['hub_id']}/{f}", i) for rows_ in lists for f, i in rows_}
    flagged = {(name, f"{entries[name].hub_id}/{f}", i) for name, found_ in _flags(entries, out).items()
               for f, i in found_}
    code = manifest["code_ultrafeedback_planted"]
    scores = {(name, f"{entries[name].hub_id}/{f}", i): s for name in PAIR_ENTRIES
              for f, i, *_, s in _pairs(entries[name], out)}
    for case in cases:
        key = (case["dataset"], case["file"], case["row"])
        assert key not in other and key not in flagged, case
        if case["dataset"] == "code_ultrafeedback":
            row = rows[out / case["file"]][case["row"]]
            ratings = [a["rating"] for a in row["annotations"]]
            assert len(ratings) == 4 and set(ratings) <= set("12345") and len(set(ratings)) > 1, case
            assert case["row"] not in code["rows_repeated"] and case["row"] + 1 not in code["rows_repeated"]
        else:
            assert scores[key][0] > scores[key][1], case
