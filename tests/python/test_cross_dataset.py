"""preference_pairs, judge_agreement and prompt_overlap checked against an independent Python
reading of the raw Parquet (rules from issues 3 and 6, not from the SQL)."""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict

import pyarrow.parquet as pq
import pytest

from preftools.contract import DATASETS_BY_KEY

VALID_RATINGS = {"1": 1, "2": 2, "3": 3, "4": 4, "5": 5}
ASPECTS = ("helpfulness", "honesty", "instruction_following", "truthfulness")


def normalise(text: str | None) -> str | None:
    """Lower case, runs of white space (RE2's \\s: tab, newline, form feed, CR, space) -> one space, trimmed."""
    if text is None:
        return None
    return re.sub(r"[\t\n\f\r ]+", " ", text.lower()).strip(" ")


def average_rating(completion: dict) -> float | None:
    ratings = []
    for aspect in ASPECTS:
        value = ((completion.get("annotations") or {}).get(aspect) or {}).get("Rating")
        if value in VALID_RATINGS:
            ratings.append(VALID_RATINGS[value])
    return sum(ratings) / len(ratings) if ratings else None


def prefers(chosen, rejected) -> str:
    if chosen is None or rejected is None:
        return "unknown"
    return "chosen" if chosen > rejected else "rejected" if chosen < rejected else "tie"


def raw_rows(raw_dir, key: str):
    """(file name, row number, row) for every raw row, files in name order."""
    for path in sorted(DATASETS_BY_KEY[key].data_dir(raw_dir).glob("*.parquet")):
        for i, row in enumerate(pq.read_table(path).to_pylist()):
            yield path.name, i, row


@pytest.fixture(scope="module")
def ultrafeedback_raw(warehouse):
    return {(f, i): row for f, i, row in raw_rows(warehouse.raw_dir, "ultrafeedback")}


def test_preference_pairs_are_trl_ready(warehouse):
    rows = warehouse.rows("select * from preference_pairs")
    assert {r["dataset"] for r in rows} == {"ultrafeedback", "code_ultrafeedback", "rever"}
    assert len({r["pair_id"] for r in rows}) == len(rows)
    for r in rows:
        user = {"role": "user", "content": r["prompt"]}
        assert r["chosen"] == [user, {"role": "assistant", "content": r["chosen_response"]}]
        assert r["rejected"] == [user, {"role": "assistant", "content": r["rejected_response"]}]
        assert r["chosen"] != r["rejected"] or r["chosen_model"] != r["rejected_model"]
        assert r["chosen_score"] > r["rejected_score"]
        assert r["score_margin"] == pytest.approx(r["chosen_score"] - r["rejected_score"])


def test_ultrafeedback_pairs_follow_the_rules(warehouse, ultrafeedback_raw):
    """Chosen = best rated (NULL lowest, first on ties); rejected = the curated alternate, which must
    be eligible; a pair exists exactly when both are rated and the alternate is strictly lower."""
    curated = warehouse.rows(
        "select prompt_id, source_file, source_row, random_for_best_rated_index from ultrafeedback_curated")
    pairs = {r["prompt_id"]: r for r in warehouse.rows(
        "select * from preference_pairs where dataset = 'ultrafeedback'")}
    expected_pairs = 0
    for c in curated:
        row = ultrafeedback_raw[(c["source_file"], c["source_row"])]
        completions = row["completions"] or []
        averages = [average_rating(x) for x in completions]
        if not completions:
            assert c["prompt_id"] not in pairs
            continue
        best = max(range(len(averages)), key=lambda i: (averages[i] is not None, averages[i] or 0, -i))
        alt = c["random_for_best_rated_index"]
        if len(completions) == 1:
            assert alt is None and c["prompt_id"] not in pairs
            continue
        assert alt is not None and alt != best
        lower = [i for i in range(len(averages)) if i != best and prefers(averages[best], averages[i]) == "chosen"
                 or (averages[best] is not None and averages[i] is None)]
        assert (alt in lower) if lower else True
        is_pair = averages[best] is not None and averages[alt] is not None and averages[best] > averages[alt]
        assert (c["prompt_id"] in pairs) == is_pair, c
        if is_pair:
            expected_pairs += 1
            p = pairs[c["prompt_id"]]
            assert p["prompt"] == row["instruction"]
            assert p["chosen_response"] == completions[best]["response"]
            assert p["chosen_model"] == completions[best]["model"]
            assert p["chosen_score"] == pytest.approx(averages[best])
            assert p["rejected_response"] == completions[alt]["response"]
            assert p["rejected_score"] == pytest.approx(averages[alt])
    assert expected_pairs == len(pairs) > 0


def rever_pairs_from_raw(raw_dir) -> dict[str, dict]:
    """id -> {source, instruction, chosen, rejected} for ids with exactly one chosen and one rejected trajectory."""
    by_id: dict[str, list] = defaultdict(list)
    for _, _, row in raw_rows(raw_dir, "rever_judge"):
        by_id[row["id"]].append(row)
    out = {}
    for pair_id, rows in by_id.items():
        candidates = sorted(r["candidate"] for r in rows)
        if candidates != ["chosen", "rejected"]:
            continue
        tasks = {}
        for r in rows:
            user = next(m for m in r["messages"] if m["role"] == "user")
            tasks[r["candidate"]] = json.loads(user["content"])
        out[pair_id] = {
            "source": rows[0]["source"],
            "instruction": tasks["chosen"]["instruction"],
            "chosen": tasks["chosen"]["response"],
            "rejected": tasks["rejected"]["response"],
        }
    return out


def test_judge_agreement_matches_and_preferences(warehouse, ultrafeedback_raw):
    rever = rever_pairs_from_raw(warehouse.raw_dir)
    uf_by_instruction = defaultdict(list)
    for key in sorted(ultrafeedback_raw):
        row = ultrafeedback_raw[key]
        uf_by_instruction[normalise(row["instruction"])].append(row)
    expected = {}
    for pair_id, pair in rever.items():
        if pair["source"] != "ultrafeedback":
            continue
        for row in uf_by_instruction.get(normalise(pair["instruction"]), []):
            responses = [c["response"] for c in row["completions"] or []]
            if pair["chosen"] in responses and pair["rejected"] in responses:
                ch = row["completions"][responses.index(pair["chosen"])]
                rj = row["completions"][responses.index(pair["rejected"])]
                expected[pair_id] = (prefers(average_rating(ch), average_rating(rj)),
                                     prefers(ch["overall_score"], rj["overall_score"]))
                break
    actual = {r["id"]: (r["average_rating_prefers"], r["overall_score_prefers"])
              for r in warehouse.rows("select * from judge_agreement")}
    assert expected, "the generated data must plant ReVeR pairs built from UltraFeedback"
    assert actual == expected
    summary = warehouse.rows("select * from judge_agreement_summary")[0]
    assert summary["n_matched_pairs"] == len(expected)
    assert summary["n_ratings_disagree"] == sum(
        1 for a, o in expected.values() if {a, o} == {"chosen", "rejected"})


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
    expected = {hashlib.md5(k.encode()).hexdigest(): v for k, v in keys.items() if len(v) > 1}
    actual = {r["prompt_key_hash"]: set(r["datasets"].split(","))
              for r in warehouse.rows("select * from prompt_overlap")}
    assert expected, "the generated data must plant prompts shared between datasets"
    assert actual == expected
