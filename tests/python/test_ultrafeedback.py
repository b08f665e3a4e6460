"""UltraFeedback: the marts against an independent Python implementation of the documented
rules (docs/marts.md, the models' docs), computed from the raw Parquet files with pyarrow.

Rules (from the docs, not from the SQL):
* an aspect Rating is an int when it is exactly "1".."5", else None; a value other than
  "1".."5" and "N/A" (None included) is an invalid rating;
* average_rating = mean of the non-None ratings, None when there is none;
* best = highest score, None below every number, ties to the first in list order;
* alternate = one of the others strictly below the best (None below any number), or any other
  when none is below; None with fewer than two completions; deterministic per seed.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

from benchmarks.reference import ASPECTS, VALID_RATINGS, alternate_candidates, best_index, mean_rating, parse_rating
from conftest import SHARED_FLAGS, run_dbt

UF_DIR = "argilla/ultrafeedback-binarized-curation/data"
TOL = 1e-9


# ---------------------------------------------------------------- the rules, in Python
# The rating rules (parse_rating, mean_rating, best_index, alternate_candidates) are the
# benchmark's reference's (benchmarks/reference.py): one Python oracle for the suite and make bench.

def is_invalid_rating(raw) -> bool:
    return raw not in VALID_RATINGS and raw != "N/A"


def same_number(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) < TOL


def close(a, b) -> bool:
    return same_number(a, b)


def pair_of(rec, alt_index):
    """(best, alternate) completions when the row is a training pair: the best rated scores
    strictly higher than its alternate (both rated); else None."""
    comps = rec["completions"]
    if len(comps) < 2 or alt_index is None:
        return None
    best, alt = comps[rec["best_rated"]], comps[alt_index]
    if best["average_rating"] is None or alt["average_rating"] is None:
        return None
    return (best, alt) if best["average_rating"] > alt["average_rating"] else None


# ---------------------------------------------------------------- raw rows, recomputed

def load_raw(raw_dir: Path) -> dict[tuple[str, int], dict]:
    rows = {}
    for path in sorted((Path(raw_dir) / UF_DIR).glob("*.parquet")):
        for i, row in enumerate(pq.read_table(path).to_pylist()):
            comps = []
            for c in row["completions"] or []:
                raws = [(c["annotations"] or {}).get(a, {}) or {} for a in ASPECTS]
                raws = [r.get("Rating") for r in raws]
                ratings = [parse_rating(r) for r in raws]
                comps.append({
                    "model": c["model"], "response": c["response"], "critique": c["critique"],
                    "overall_score": c["overall_score"], "published_average_rating": c["average_rating"],
                    "ratings": ratings, "invalid": any(is_invalid_rating(r) for r in raws),
                    "average_rating": mean_rating(ratings),
                })
            rec = {"raw": row, "completions": comps, "n_completions": None if row["completions"] is None else len(comps)}
            if comps:
                avgs = [c["average_rating"] for c in comps]
                overs = [c["overall_score"] for c in comps]
                rec["best_rated"] = best_index(avgs)
                rec["best_overall"] = best_index(overs)
                if len(comps) >= 2:
                    rec["alt_rated"] = alternate_candidates(avgs, rec["best_rated"])
                    rec["alt_overall"] = alternate_candidates(overs, rec["best_overall"])
            rows[(path.name, i)] = rec
    return rows


@pytest.fixture(scope="module")
def raw(warehouse):
    return load_raw(warehouse.raw_dir)


@pytest.fixture(scope="module")
def curated(warehouse):
    return {(r["source_file"], r["source_row"]): r
            for r in warehouse.rows("select * from ultrafeedback_curated")}


@pytest.fixture(scope="module")
def scores(warehouse):
    return {(r["source_file"], r["source_row"], r["completion_index"]): r
            for r in warehouse.rows("select * from ultrafeedback_completion_scores")}


@pytest.fixture(scope="module")
def audit(warehouse):
    return {(r["source_file"], r["source_row"]): r
            for r in warehouse.rows("select * from audit_ultrafeedback_published")}


# ---------------------------------------------------------------- completion grain

def test_every_raw_row_and_completion_is_kept(raw, curated, scores):
    assert set(curated) == set(raw)
    expected = {(f, r, i) for (f, r), rec in raw.items() for i in range(len(rec["completions"]))}
    assert set(scores) == expected
    assert any(not rec["completions"] for rec in raw.values()), "generated data has no empty list"
    for key, rec in raw.items():
        row = curated[key]
        assert row["has_no_completions"] == (not rec["completions"]), key
        assert row["n_completions"] == rec["n_completions"], key
        assert row["instruction"] == rec["raw"]["instruction"], key


def test_ratings_and_average(raw, scores):
    n_na = n_invalid = 0
    for (f, r), rec in raw.items():
        for i, c in enumerate(rec["completions"]):
            row = scores[(f, r, i)]
            got = [row[f"{a}_rating"] for a in ASPECTS]
            assert got == c["ratings"], (f, r, i)
            assert row["has_invalid_rating"] == c["invalid"], (f, r, i)
            assert close(row["average_rating"], c["average_rating"]), (f, r, i)
            assert close(row["published_average_rating"], c["published_average_rating"])
            assert row["model"] == c["model"] and row["response"] == c["response"]
            n_invalid += c["invalid"]
            n_na += None in c["ratings"] and not c["invalid"]
    assert n_invalid > 0 and n_na > 0, "generated data lacks N/A or invalid ratings"


def test_best_picks_per_completion(raw, scores):
    for (f, r), rec in raw.items():
        for i, _ in enumerate(rec["completions"]):
            row = scores[(f, r, i)]
            assert row["is_best_rated"] == (i == rec["best_rated"]), (f, r, i)
            assert row["is_best_overall"] == (i == rec["best_overall"]), (f, r, i)


def test_critique_sentiment_is_vader(raw, scores):
    analyzer = SentimentIntensityAnalyzer()
    cache: dict[str, float] = {}
    for (f, r), rec in raw.items():
        for i, c in enumerate(rec["completions"]):
            text = c["critique"]
            if text is None or not text.strip():
                expected = None
            else:
                if text not in cache:
                    cache[text] = analyzer.polarity_scores(text)["compound"]
                expected = cache[text]
            assert close(scores[(f, r, i)]["critique_sentiment"], expected), (f, r, i)


# ---------------------------------------------------------------- prompt grain

def test_curated_picks(raw, curated):
    n_diff = 0
    for key, rec in raw.items():
        row, comps = curated[key], rec["completions"]
        if not comps:
            for col in ("best_rated_model", "best_overall_model", "score_best_rated", "chosen",
                        "rejected", "best_rated_is_different_from_best_overall"):
                assert row[col] is None, (key, col)
            continue
        br, bo = comps[rec["best_rated"]], comps[rec["best_overall"]]
        assert row["best_rated_model"] == br["model"], key
        assert close(row["score_best_rated"], br["average_rating"]), key
        assert row["best_rated_response"] == br["response"], key
        assert row["best_overall_model"] == bo["model"], key
        assert close(row["score_best_overall"], bo["overall_score"]), key
        assert row["best_overall_score_response"] == bo["response"], key
        diff = rec["best_rated"] != rec["best_overall"]
        assert row["best_rated_is_different_from_best_overall"] == diff, key
        n_diff += diff
        instruction = rec["raw"]["instruction"]
        assert row["has_pair"] == (pair_of(rec, row["random_for_best_rated_index"]) is not None), key
        if not row["has_pair"]:
            # no pair (no alternate, a tie, an unrated side): the training columns are NULL
            assert row["prompt"] is None and row["chosen"] is None and row["rejected"] is None, key
            continue
        # TRL's explicit-prompt form: the user turn in prompt only, assistant turns in chosen/rejected
        assert row["prompt"] == [{"role": "user", "content": instruction}], key
        assert row["chosen"] == [{"role": "assistant", "content": br["response"]}], key
    assert n_diff > 0


def test_curated_margin_and_flags(raw, curated):
    """margin = (best rated - its alternate) / 4 on the 1..5 scale, in (0, 1], on a training pair
    and NULL on every other row; a side of the picks with an invalid aspect Rating is flagged. A
    pair also carries the checks every dataset gets (test_cross_dataset recomputes those, and
    test_training_contract checks they are preference_pairs'); a row without one has none."""
    n_flagged = 0
    for key, rec in raw.items():
        row, comps = curated[key], rec["completions"]
        if len(comps) < 2:
            assert row["margin"] is None and row["integrity_flags"] == [] and not row["is_flagged"], key
            continue
        best, alt = comps[rec["best_rated"]], comps[row["random_for_best_rated_index"]]
        if pair_of(rec, row["random_for_best_rated_index"]) is None:
            assert row["margin"] is None, key
        else:
            assert close(row["margin"], (best["average_rating"] - alt["average_rating"]) / 4), key
            assert 0 < row["margin"] <= 1, key
        want = [name for name, c in (("invalid_rating_chosen", best), ("invalid_rating_rejected", alt))
                if c["invalid"]]
        own = [f for f in row["integrity_flags"] if f not in SHARED_FLAGS]
        assert own == want, key
        if not row["has_pair"]:
            assert row["integrity_flags"] == want, key
        assert row["is_flagged"] == bool(row["integrity_flags"]), key
        n_flagged += bool(want)
    assert n_flagged > 0, "the generated data must plant invalid ratings on picked completions"


def test_random_alternates_obey_the_rule(raw, curated):
    for key, rec in raw.items():
        row, comps = curated[key], rec["completions"]
        for pick, score in (("best_rated", "average_rating"), ("best_overall", "overall_score")):
            idx = row[f"random_for_{pick}_index"]
            if len(comps) < 2:
                assert idx is None and row[f"random_response_for_{pick}"] is None, key
                continue
            allowed = rec["alt_rated" if pick == "best_rated" else "alt_overall"]
            assert idx in allowed, (key, pick, idx, allowed)
            alt = comps[idx]
            assert row[f"random_response_for_{pick}"] == alt["response"]
            assert row[f"random_response_for_{pick}_model"] == alt["model"]
            assert close(row[f"score_random_response_for_{pick}"], alt[score])
        pair = pair_of(rec, row["random_for_best_rated_index"])
        if pair is not None:
            assert row["rejected"] == [{"role": "assistant", "content": pair[1]["response"]}], key
        else:
            assert row["rejected"] is None, key


# ---------------------------------------------------------------- audit of argilla's columns

def locate(comps, model, response, exclude=None):
    hits = [i for i, c in enumerate(comps)
            if c["model"] == model and c["response"] == response and i != exclude]
    return hits[0] if hits else None


def test_audit_flags_exactly_the_published_mismatches(raw, audit):
    seen = defaultdict(int)
    for key, rec in raw.items():
        row, comps, pub = audit[key], rec["completions"], rec["raw"]
        br = comps[rec["best_rated"]] if comps else None
        bo = comps[rec["best_overall"]] if comps else None
        expected = {
            "best_rated_model_agrees": pub["best_rated_model"] == (br["model"] if br else None),
            "score_best_rated_agrees": same_number(pub["score_best_rated"], br["average_rating"] if br else None),
            "best_overall_model_agrees": pub["best_overall_model"] == (bo["model"] if bo else None),
            "score_best_overall_agrees": same_number(pub["score_best_overall"], bo["overall_score"] if bo else None),
            "best_rated_is_different_from_best_overall_agrees":
                pub["best_rated_is_different_from_best_overall"]
                == ((rec["best_rated"] != rec["best_overall"]) if comps else None),
            "average_ratings_agree": all(same_number(c["published_average_rating"], c["average_rating"]) for c in comps),
        }
        for col, value in expected.items():
            assert row[col] == value, (key, col)
            seen[col] += not value
        assert row["n_average_rating_mismatches"] == sum(
            not same_number(c["published_average_rating"], c["average_rating"]) for c in comps)
        assert row["published_picks_agree"] == all(expected.values()), key
    # the generated data plants disagreements; a check that never fires proves nothing
    assert seen["best_rated_model_agrees"] > 0 and seen["average_ratings_agree"] > 0, dict(seen)


def test_audit_published_alternates(raw, audit):
    for key, rec in raw.items():
        row, comps, pub = audit[key], rec["completions"], rec["raw"]
        for pick, score, pick_col, alt_col in (
            ("best_rated", "average_rating", "best_rated_response", "random_response_for_best_rated"),
            ("best_overall", "overall_score", "best_overall_score_response", "random_response_for_best_overall"),
        ):
            p, a = pub[pick_col], pub[alt_col]
            p_idx = locate(comps, p["model"], p["response"]) if p else None
            a_idx = locate(comps, a["model"], a["response"], exclude=p_idx) if a else None
            assert row[f"published_{pick}_index"] == p_idx, (key, pick)
            assert row[f"published_random_for_{pick}_index"] == a_idx, (key, pick)
            if a is None or a["response"] is None:
                assert row[f"published_random_for_{pick}_is_other_completion"] is None
                assert row[f"published_random_for_{pick}_obeys_rule"] is None
                continue
            assert row[f"published_random_for_{pick}_is_other_completion"] == (a_idx is not None), key
            if p_idx is None:
                expected = None
            else:
                scores = [c[score] for c in comps]
                expected = a_idx is not None and a_idx in alternate_candidates(scores, p_idx)
                # with duplicates, any matching other completion that is below also passes
                if not expected and a_idx is not None:
                    expected = any(
                        i != p_idx and comps[i]["model"] == a["model"] and comps[i]["response"] == a["response"]
                        and i in alternate_candidates(scores, p_idx) for i in range(len(comps)))
            assert row[f"published_random_for_{pick}_obeys_rule"] == expected, (key, pick)


# ---------------------------------------------------------------- summary

def test_score_bug_summary(raw, warehouse):
    """One row per source, one per model and one 'total' row (scope), every figure recomputed
    from the raw completions: the total's counts and means are over all completions (a mean
    over all gaps, not a mean of the groups' means)."""
    analyzer = SentimentIntensityAnalyzer()
    groups: dict[tuple[str, str | None, str | None], dict] = defaultdict(lambda: defaultdict(float))
    prompts: dict[tuple, set] = defaultdict(set)
    gaps: dict[tuple, dict[str, list]] = defaultdict(lambda: {"rating": [], "score": []})
    for key, rec in raw.items():
        comps = rec["completions"]
        for i, c in enumerate(comps):
            text = c["critique"]
            negative = bool(text and text.strip()) and analyzer.polarity_scores(text)["compound"] <= -0.05
            ten = c["overall_score"] == 10
            low = c["average_rating"] is not None and c["average_rating"] <= 2
            is_bo = i == rec["best_overall"]
            differs = is_bo and rec["best_rated"] != rec["best_overall"]
            rated, overall = comps[rec["best_rated"]], comps[rec["best_overall"]]
            for g in (("total", None, None), ("source", rec["raw"]["source"], None), ("model", None, c["model"])):
                s = groups[g]
                s["n_completions"] += 1
                s["n_overall_score_10"] += ten
                s["n_overall_score_10_low_rating"] += ten and low
                s["n_overall_score_10_negative_critique"] += ten and negative
                s["n_overall_score_10_low_rating_negative_critique"] += ten and low and negative
                s["n_best_overall_picks"] += is_bo
                s["n_best_rated_is_different"] += differs
                prompts[g].add(key)
                if differs and rated["average_rating"] is not None and overall["average_rating"] is not None:
                    gaps[g]["rating"].append(rated["average_rating"] - overall["average_rating"])
                if differs and rated["overall_score"] is not None and overall["overall_score"] is not None:
                    gaps[g]["score"].append(overall["overall_score"] - rated["overall_score"])
    rows = {(r["scope"], r["source"], r["model"]): r
            for r in warehouse.rows("select * from ultrafeedback_score_bug_summary")}
    assert set(rows) == set(groups)
    for g, expected in groups.items():
        row = rows[g]
        for col, value in expected.items():
            assert row[col] == value, (g, col)
        assert row["n_prompts"] == len(prompts[g]), g
        for col, values in (("mean_average_rating_gap", gaps[g]["rating"]),
                            ("mean_overall_score_gap", gaps[g]["score"])):
            assert close(row[col], sum(values) / len(values) if values else None), (g, col)
        scope, source, model = g
        part = source if scope == "source" else model if scope == "model" else None
        assert row["summary_key"] == hashlib.md5(f"{scope}:{part or ''}".encode()).hexdigest(), g
    total = rows[("total", None, None)]
    assert total["n_overall_score_10_low_rating"] > 0
    assert total["n_completions"] == sum(len(rec["completions"]) for rec in raw.values())
    assert total["mean_average_rating_gap"] is not None


# ---------------------------------------------------------------- determinism of the draws

def _alternates(db: Path) -> dict:
    with duckdb.connect(str(db), read_only=True) as con:
        return {r[0]: (r[1], r[2]) for r in con.execute(
            "select prompt_id, random_for_best_rated_index, random_for_best_overall_index "
            "from intermediate.int_ultrafeedback__prompts_picked").fetchall()}


def test_another_seed_draws_other_alternates_by_the_same_rule(warehouse, raw, tmp_path):
    """Another random_seed -> other draws than the session build's, which still obey the rule.
    Only the UltraFeedback chain up to the picks is run. (The same seed gives the same draws
    whatever the thread count: test_determinism.py compares every table of two builds.)"""
    db = tmp_path / "other_seed.duckdb"
    run_dbt(["run", "-s", "+int_ultrafeedback__prompts_picked", "--vars", "{random_seed: 7}"],
            warehouse.raw_dir, db, tmp_path / "work")
    other, session = _alternates(db), _alternates(warehouse.path)
    assert other.keys() == session.keys()
    changed = sum(other[k] != session[k] for k in other)
    assert changed > 0, "another seed drew the same alternates everywhere"
    with duckdb.connect(str(db), read_only=True) as con:
        keys = con.execute("select prompt_id, source_file, source_row from "
                           "intermediate.int_ultrafeedback__prompts_picked").fetchall()
    for prompt_id, f, r in keys:
        rec = raw[(f, r)]
        rated, overall = other[prompt_id]
        if len(rec["completions"]) >= 2:
            assert rated in rec["alt_rated"] and overall in rec["alt_overall"], (f, r)
        else:
            assert rated is None and overall is None, (f, r)
