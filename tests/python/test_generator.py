"""Tests of the sample-data generator (preftools.generate).

Run: python -m pytest tests/python/test_generator.py -q
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter, defaultdict
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from preftools import contract as C
from preftools.generate import MANIFEST_NAME, generate, published_script_pairs

SCALE = 0.005
TEXT = 0.25


@pytest.fixture(scope="module")
def gen(tmp_path_factory):
    out = tmp_path_factory.mktemp("raw42")
    manifest = generate(out, seed=42, scale=SCALE, progress=False, text_length=TEXT)
    return out, manifest


def _read(out: Path, key: str) -> list[dict]:
    ds = C.DATASETS_BY_KEY[key]
    files = sorted(ds.data_dir(out).glob("*.parquet"))
    assert files, key
    rows = []
    for f in files:
        rows.extend(pq.read_table(f).to_pylist())
    return rows


def _digest(out: Path) -> dict[str, str]:
    return {
        str(p.relative_to(out)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(out.rglob("*")) if p.is_file()
    }


# ---------------------------------------------------------------------------------- layout


def test_layout_and_schemas(gen):
    out, manifest = gen
    assert (out / MANIFEST_NAME).is_file()
    for ds in C.DATASETS:
        files = sorted(ds.data_dir(out).glob("*.parquet"))
        assert [f.name for f in files] == ["train-00000-of-00001.parquet"], ds.key
        for f in files:
            schema = pq.read_schema(f)
            assert schema.names == ds.schema.names, ds.key
            for got, want in zip(schema, ds.schema):
                assert got.type.equals(want.type), (ds.key, got.name, got.type, want.type)
            assert schema.equals(ds.schema, check_metadata=False)
        assert manifest["files"][ds.key] == [str(f.relative_to(out)) for f in files]


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
        assert sum(pq.ParquetFile(out / f).metadata.num_rows for f in manifest["files"][key]) == n


def test_row_counts_other_scale(tmp_path):
    m = generate(tmp_path, seed=1, scale=0.002, progress=False, text_length=TEXT,
                 datasets=["ultrafeedback", "code_ultrafeedback"])
    assert m["rows"] == {"ultrafeedback": 128, "code_ultrafeedback": 20}
    assert not (tmp_path / "OpenRubrics").exists()


def test_deterministic(gen, tmp_path):
    out, _ = gen
    again = tmp_path / "again"
    generate(again, seed=42, scale=SCALE, progress=False, text_length=TEXT)
    assert _digest(again) == _digest(out)
    other = tmp_path / "other"
    generate(other, seed=43, scale=SCALE, progress=False, text_length=TEXT)
    a, b = _digest(out), _digest(other)
    assert a.keys() == b.keys()
    assert all(a[k] != b[k] for k in a)


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
    assert sum(0 < len(r["annotations"]) < 4 for r in rows) >= 2
    assert sum(a["rating"] in ("10", "0") for a in anns) >= 1
    shuffled = sum([a["model"] for a in r["annotations"]] != r["models"] for r in rows if len(r["annotations"]) == 4)
    assert shuffled > 0.7 * len(rows)


def test_standard_is_published_script_output(gen):
    out, manifest = gen
    rows = _read(out, "code_ultrafeedback")
    pairs, skipped = published_script_pairs(rows)
    assert _read(out, "code_ultrafeedback_standard") == [
        {"chosen": p["chosen"], "rejected": p["rejected"], "chosen_score": p["chosen_score"],
         "rejected_score": p["rejected_score"]} for p in pairs]
    assert skipped and all(s["error"] == "KeyError" for s in skipped)
    assert any(p["chosen_score"] == "N/A" for p in pairs)  # "N/A" wins the string comparison


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
    """generate() with every table handed to the Parquet writer recorded per dataset as
    (rows, Arrow bytes allocated at that moment)."""
    from preftools.generate import writer

    calls: dict[str, list[tuple[int, int]]] = defaultdict(list)
    original = writer.ShardedParquetWriter.write

    def spy(self, table):
        calls[self.dataset.key].append((table.num_rows, pa.total_allocated_bytes()))
        return original(self, table)

    with monkeypatch.context() as m:
        m.setattr(writer.ShardedParquetWriter, "write", spy)
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
        # same rows as written from the default layout
        tables = [pa.concat_tables([pq.read_table(out / f) for f in m["files"][key]]).combine_chunks()
                  for out, m in ((tmp_path / "baseline", baseline), (tmp_path / "large", large))]
        assert tables[0].equals(tables[1]), key
        # Arrow memory in use while the dataset is written: bounded by the chunk, not the scale
        small_peak, large_peak = (max(b for _, b in calls[key]) for calls in (small_calls, large_calls))
        assert large_peak < 2 * small_peak, (key, small_peak, large_peak)
