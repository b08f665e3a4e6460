"""preference_pairs, judge_agreement and prompt_overlap checked row by row against an independent
Python reading of the raw Parquet (rules from docs/marts.md and models/docs/, not from the SQL)."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter, defaultdict

import pytest

import near_duplicates_reference
import pii_reference
import test_code_ultrafeedback as cuf_tests
import test_rever as rever_tests
import test_ultrafeedback as uf_tests
from conftest import SHARED_FLAGS, raw_rows


def normalise(text: str | None) -> str | None:
    """Lower case, runs of white space (RE2's \\s: tab, newline, form feed, CR, space) -> one space, trimmed."""
    if text is None:
        return None
    return re.sub(r"[\t\n\f\r ]+", " ", text.lower()).strip(" ")


def prefers(chosen, rejected) -> str:
    if chosen is None or rejected is None:
        return "unknown"
    return "chosen" if chosen > rejected else "rejected" if chosen < rejected else "tie"


@pytest.fixture(scope="module")
def ultrafeedback_raw(warehouse):
    return {(f, i): row for f, i, row in raw_rows(warehouse.raw_dir, "ultrafeedback")}


# --------------------------------------------------------------------------- preference_pairs
# Every row of preference_pairs is rebuilt here from the raw Parquet with the documented rules
# (the per-dataset rules come from the dataset tests' independent implementations), then
# compared column by column: texts (in TRL's explicit-prompt form), models, scores, margins,
# integrity flags and the export split.

def user(text):
    return [{"role": "user", "content": text}]


def assistant(text):
    return [{"role": "assistant", "content": text}]


def pair_row(dataset, source, prompt, chosen, rejected, chosen_model, rejected_model,
             chosen_score, rejected_score, score_kind, scale_width, flags) -> dict:
    flags = sorted(flags)
    return {
        "dataset": dataset, "split": dataset + ("_flagged" if flags else ""), "source": source,
        "prompt": user(prompt), "chosen": assistant(chosen), "rejected": assistant(rejected),
        "chosen_model": chosen_model, "rejected_model": rejected_model,
        "chosen_score": chosen_score, "rejected_score": rejected_score, "score_kind": score_kind,
        "score_margin": chosen_score - rejected_score,
        "margin": (chosen_score - rejected_score) / scale_width,
        "integrity_flags": flags, "is_flagged": bool(flags),
    }


def comparable(row: dict) -> tuple:
    """A row as a hashable tuple, floats rounded to 1e-12 (sums in another order)."""
    out = []
    for k in sorted(row):
        v = row[k]
        if isinstance(v, float):
            v = round(v, 12)
        out.append((k, json.dumps(v, sort_keys=True) if isinstance(v, list) else v))
    return tuple(out)


def expected_ultrafeedback_pairs(warehouse) -> dict[str, dict]:
    """prompt_id -> pair: best rated (NULL lowest, first on ties) vs the curated alternate (its
    rule is checked in test_ultrafeedback), only when both are rated and the alternate is lower."""
    raw = uf_tests.load_raw(warehouse.raw_dir)
    curated = warehouse.rows(
        "select prompt_id, source_file, source_row, random_for_best_rated_index from ultrafeedback_curated")
    out = {}
    for c in curated:
        rec = raw[(c["source_file"], c["source_row"])]
        comps = rec["completions"]
        if len(comps) < 2:
            continue
        best, alt = comps[rec["best_rated"]], comps[c["random_for_best_rated_index"]]
        if best["average_rating"] is None or alt["average_rating"] is None \
                or not best["average_rating"] > alt["average_rating"]:
            continue
        flags = [name for name, x in (("invalid_rating_chosen", best), ("invalid_rating_rejected", alt))
                 if x["invalid"]]
        out[c["prompt_id"]] = pair_row(
            "ultrafeedback", rec["raw"]["source"], rec["raw"]["instruction"], best["response"], alt["response"],
            best["model"], alt["model"], best["average_rating"], alt["average_rating"],
            "average_rating_1_5", 4, flags)
    return out


def expected_code_ultrafeedback_pairs(warehouse) -> Counter:
    """(raw row, pair) multiset from the corrected rule written in test_code_ultrafeedback."""
    ds = cuf_tests.read_rows(warehouse.raw_dir, cuf_tests.CODE)
    _, failures, _ = cuf_tests.published_script(ds)
    out = Counter()
    for p in cuf_tests.corrected_pairs(ds, failures):
        row = pair_row(
            "code_ultrafeedback", p["preference"], p["prompt"][0]["content"], p["chosen"][0]["content"],
            p["rejected"][0]["content"], p["chosen_model"], p["rejected_model"], float(p["chosen_rating"]),
            float(p["rejected_rating"]), "rating_1_5", 4, p["integrity_flags"])
        out[(p["row"], comparable(row))] += 1
    return out


def expected_rever_pairs(warehouse) -> dict[str, dict]:
    """id -> pair for the pairs the retention rule keeps (scores from test_rever's parser);
    flags: every break the generator planted for the id, but not_kept."""
    expected = rever_tests.compute_expected(warehouse.raw_dir)
    planted = defaultdict(set)
    for b in expected["manifest"]["rever_integrity_breaks"]:
        if not b["kind"].startswith("info_") and b["kind"] != "not_kept" and b["id"] is not None:
            planted[b["id"]].add(b["kind"])
    out = {}
    for pid, p in rever_tests.compute_pairs(expected).items():
        if not p["kept"]:
            continue
        out[pid] = pair_row(
            "rever", p["source"], p["instruction"], p["chosen_response"], p["rejected_response"], None, None,
            p["chosen_score"], p["rejected_score"], "rubric_score", p["max_possible_score"], planted[pid])
    return out


BUILT_IN = ("ultrafeedback", "code_ultrafeedback", "rever")  # in registry order
# the checks preference_pairs applies to every dataset (the extra datasets' are in test_extra_datasets)


@pytest.fixture(scope="module")
def pairs(warehouse) -> list[dict]:
    """The built-in datasets' pairs (the session build registers extra datasets too)."""
    return warehouse.rows("select * from preference_pairs where list_contains(?, dataset)", [list(BUILT_IN)])


def test_preference_pairs_keys_and_shape(pairs):
    assert {r["dataset"] for r in pairs} == set(BUILT_IN)
    assert len({r["pair_id"] for r in pairs}) == len(pairs)
    for r in pairs:
        assert r["chosen"] != r["rejected"] or r["chosen_model"] != r["rejected_model"], r["pair_id"]
        assert 0 < r["margin"] <= 1, r["pair_id"]
    # the training split holds the clean pairs only; every dataset has flagged pairs in the generated data
    assert {r["split"] for r in pairs} == {"ultrafeedback", "code_ultrafeedback", "rever", "ultrafeedback_flagged",
                                           "code_ultrafeedback_flagged", "rever_flagged"}


def test_preference_pairs_shared_checks(pairs, warehouse):
    """The checks every dataset gets, recomputed here from the pairs' texts and scores: identical or
    empty responses, a score not above the other, an exact copy of an earlier pair of the dataset
    (earlier: smaller pair_id), the same normalised texts in a dataset registered earlier; the
    near-duplicate checks from their reference (near_duplicates_reference, over every dataset), the
    PII scan's from its own (pii_reference, on the pair's texts)."""
    near = near_duplicates_reference.warehouse_flags(warehouse)
    def text_key(r):
        return tuple(tuple((m["role"], normalise(m["content"])) for m in r[c]) for c in ("prompt", "chosen", "rejected"))

    def exact_key(r):
        return tuple(tuple((m["role"], m["content"]) for m in r[c]) for c in ("prompt", "chosen", "rejected"))

    first_dataset = {}
    for dataset in BUILT_IN:
        for r in pairs:
            if r["dataset"] == dataset:
                first_dataset.setdefault(text_key(r), BUILT_IN.index(dataset))
    first_copy = {}
    for r in sorted(pairs, key=lambda r: r["pair_id"]):
        first_copy.setdefault((r["dataset"], exact_key(r)), r["pair_id"])
    for r in pairs:
        want = set()
        if r["chosen"] == r["rejected"]:
            want.add("identical_responses")
        if any(not any((m["content"] or "").strip() for m in r[c]) for c in ("chosen", "rejected")):
            want.add("empty_response")
        if r["chosen_score"] is not None and r["rejected_score"] is not None and r["chosen_score"] <= r["rejected_score"]:
            want.add("score_not_higher")
        if first_copy[(r["dataset"], exact_key(r))] != r["pair_id"]:
            want.add("duplicate_pair")
        if first_dataset[text_key(r)] < BUILT_IN.index(r["dataset"]):
            want.add("cross_dataset_duplicate")
        want |= near[r["pair_id"]] | pii_reference.pair_flags(r)
        assert set(r["integrity_flags"]) & SHARED_FLAGS == want, r["pair_id"]
    # ReVeR's ultrafeedback-sourced pairs repeat UltraFeedback pairs: the check is not vacuous here
    assert any("cross_dataset_duplicate" in r["integrity_flags"] for r in pairs)


def _row_without_keys(r: dict) -> dict:
    """A pair without its keys and with only its dataset's own flags (the shared checks are
    test_preference_pairs_shared_checks'), its split and is_flagged following those."""
    row = {k: v for k, v in r.items() if k not in ("pair_id", "prompt_id")}
    row["integrity_flags"] = [f for f in r["integrity_flags"] if f not in SHARED_FLAGS]
    row["is_flagged"] = bool(row["integrity_flags"])
    row["split"] = r["dataset"] + ("_flagged" if row["integrity_flags"] else "")
    return row


def test_preference_pairs_ultrafeedback_rows(pairs, warehouse):
    want = expected_ultrafeedback_pairs(warehouse)
    got = {r["prompt_id"]: _row_without_keys(r) for r in pairs if r["dataset"] == "ultrafeedback"}
    assert got.keys() == want.keys()
    bad = [(k, want[k], got[k]) for k in want if comparable(got[k]) != comparable(want[k])]
    assert not bad, bad[:2]


def test_preference_pairs_code_ultrafeedback_rows(pairs, warehouse):
    want = expected_code_ultrafeedback_pairs(warehouse)
    rows_of = {r["prompt_id"]: (r["source_file"], r["source_row"])
               for r in warehouse.rows("select prompt_id, source_file, source_row from code_ultrafeedback_prompts")}
    got = Counter()
    for r in pairs:
        if r["dataset"] != "code_ultrafeedback":
            continue
        row = _row_without_keys(r)
        # the quarantine reason (checked in test_code_ultrafeedback) is summarised as `quarantined`
        row["integrity_flags"] = sorted("quarantined" if f.startswith("quarantined_") else f
                                        for f in row["integrity_flags"])
        got[(rows_of[r["prompt_id"]], comparable(row))] += 1
    assert sum(want.values()) > 0
    assert got == want, {"missing": list((want - got).items())[:2], "unexpected": list((got - want).items())[:2]}


def test_preference_pairs_rever_rows(pairs, warehouse):
    want = expected_rever_pairs(warehouse)
    got = {r["prompt_id"]: _row_without_keys(r) for r in pairs if r["dataset"] == "rever"}
    assert got.keys() == want.keys()
    bad = [(k, want[k], got[k]) for k in want if comparable(got[k]) != comparable(want[k])]
    assert not bad, bad[:2]


# --------------------------------------------------------------------------- judge_agreement

def test_judge_agreement_every_row(warehouse):
    """Each ReVeR pair of source ultrafeedback whose normalised instruction and both exact
    responses are two different completions of one UltraFeedback prompt: the first match by
    (prompt_id, chosen index, rejected index), the number of matches, both sides' ratings, and
    the three preferences with the agreement flags; then the summary counts."""
    uf = uf_tests.load_raw(warehouse.raw_dir)
    prompt_ids = {(r["source_file"], r["source_row"]): r["prompt_id"]
                  for r in warehouse.rows("select prompt_id, source_file, source_row from ultrafeedback_curated")}
    by_instruction = defaultdict(list)
    for key, rec in uf.items():
        by_instruction[normalise(rec["raw"]["instruction"])].append((prompt_ids[key], rec))
    rever = rever_tests.compute_pairs(rever_tests.compute_expected(warehouse.raw_dir))

    expected = {}
    n_rever_uf = 0
    for pid, p in rever.items():
        if p["source"] != "ultrafeedback":
            continue
        n_rever_uf += 1
        matches = []
        for prompt_id, rec in by_instruction.get(normalise(p["instruction"]), []) if p["instruction"] else []:
            comps = rec["completions"]
            for i, ci in enumerate(comps):
                for j, cj in enumerate(comps):
                    if i != j and ci["response"] == p["chosen_response"] and cj["response"] == p["rejected_response"]:
                        matches.append((prompt_id, i, j, ci, cj))
        if not matches:
            continue
        prompt_id, i, j, ci, cj = min(matches, key=lambda m: m[:3])
        a = prefers(ci["average_rating"], cj["average_rating"])
        o = prefers(ci["overall_score"], cj["overall_score"])
        judge = prefers(p["chosen_score"], p["rejected_score"])
        expected[pid] = {
            "ultrafeedback_prompt_id": prompt_id, "n_ultrafeedback_matches": len(matches),
            "chosen_completion_index": i, "rejected_completion_index": j,
            "chosen_model": ci["model"], "rejected_model": cj["model"],
            "chosen_average_rating": ci["average_rating"], "rejected_average_rating": cj["average_rating"],
            "chosen_overall_score": ci["overall_score"], "rejected_overall_score": cj["overall_score"],
            "judge_chosen_score": p["chosen_score"], "judge_rejected_score": p["rejected_score"],
            "kept": p["kept"], "average_rating_prefers": a, "overall_score_prefers": o, "judge_prefers": judge,
            "ratings_disagree": {a, o} == {"chosen", "rejected"},
            "judge_agrees_with_average_rating": judge in ("chosen", "rejected") and judge == a,
            "judge_agrees_with_overall_score": judge in ("chosen", "rejected") and judge == o,
        }
    got = {r.pop("id"): r for r in warehouse.rows("select * from judge_agreement")}
    assert expected, "the generated data must plant ReVeR pairs built from UltraFeedback"
    assert {k: comparable(v) for k, v in got.items()} == {k: comparable(v) for k, v in expected.items()}
    # the judge takes sides both ways in the generated data, so a swapped side would show
    assert {e["judge_prefers"] for e in expected.values()} >= {"chosen"}

    summary = warehouse.rows("select * from judge_agreement_summary")[0]
    rows = list(expected.values())

    def count(pred):
        return sum(1 for e in rows if pred(e))

    strict = ("chosen", "rejected")
    want = {
        "n_rever_ultrafeedback_pairs": n_rever_uf,
        "n_matched_pairs": len(rows),
        "n_decisive_average_rating": count(lambda e: e["average_rating_prefers"] in strict and e["judge_prefers"] in strict),
        "n_judge_agrees_with_average_rating": count(lambda e: e["judge_agrees_with_average_rating"]),
        "n_decisive_overall_score": count(lambda e: e["overall_score_prefers"] in strict and e["judge_prefers"] in strict),
        "n_judge_agrees_with_overall_score": count(lambda e: e["judge_agrees_with_overall_score"]),
        "n_ratings_disagree": count(lambda e: e["ratings_disagree"]),
        "n_disagreements_judge_sides_with_average_rating": count(
            lambda e: e["ratings_disagree"] and e["judge_agrees_with_average_rating"]),
        "n_disagreements_judge_sides_with_overall_score": count(
            lambda e: e["ratings_disagree"] and e["judge_agrees_with_overall_score"]),
    }
    for k, v in want.items():
        assert summary[k] == v, k
    for n, d in (("n_judge_agrees_with_average_rating", "n_decisive_average_rating"),
                 ("n_judge_agrees_with_overall_score", "n_decisive_overall_score")):
        rate = summary[n.replace("n_judge_agrees", "judge_agreement_rate")]
        assert (rate is None) if want[d] == 0 else rate == pytest.approx(want[n] / want[d], abs=1e-12)


def test_prompt_overlap(warehouse, ultrafeedback_raw):
    keys = defaultdict(set)
    for row in ultrafeedback_raw.values():
        if row["instruction"] is not None:
            keys[normalise(row["instruction"])].add("ultrafeedback")
    for _, _, row in raw_rows(warehouse.raw_dir, "code_ultrafeedback"):
        if row["instruction"] is not None:
            keys[normalise(row["instruction"])].add("code_ultrafeedback")
    rever_instructions = warehouse.rows("select instruction from rever_pairs where instruction is not null")
    for r in rever_instructions:
        keys[normalise(r["instruction"])].add("rever")
    # the registry's entries: the text of their pairs' user turns, joined by a blank line
    for r in warehouse.rows("select dataset, prompt from preference_pairs where not list_contains(?, dataset)",
                            [list(BUILT_IN)]):
        text = "\n\n".join(m["content"] for m in r["prompt"] if m["role"] == "user" and m["content"] is not None)
        if text:
            keys[normalise(text)].add(r["dataset"])
    expected = {hashlib.md5(k.encode()).hexdigest(): v for k, v in keys.items() if len(v) > 1}
    actual = {r["prompt_key_hash"]: set(r["datasets"].split(","))
              for r in warehouse.rows("select * from prompt_overlap")}
    assert expected, "the generated data must plant prompts shared between datasets"
    assert actual == expected
