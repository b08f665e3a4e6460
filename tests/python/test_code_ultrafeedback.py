"""CodeUltraFeedback: the published RLHFlow script reproduced, the corrected pairs, and the
audits, checked against Python written from the dataset card and the rules the marts document
(docs/marts.md, the doc blocks in models/docs/).

* ``published_script`` runs the transcription of the card's script (dataset card 002) that
  ``make bench`` uses too (benchmarks/reference.py: published_script_row) over the raw coseal
  Parquet in the order ``load_dataset`` reads it (files by name, then row). The card's script has no error handling; where it would raise, the row's pairs
  are dropped and the run goes on (``rating`` keeps the value the failing row assigned).
* ``corrected_pairs`` is the corrected rule, written independently.
* ``expected_reasons`` names each difference between the two by its documented reason.

Two datasets: the session's generated raw data (``warehouse``), and a small hand-made raw
dataset with the corner cases the generator does not plant (two files, a stale rating across
files, NameError on the first row, repeated models, NULL entries and ratings, codepoint order).
"""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from preftools.inputs import contract as C

from benchmarks import reference as ref
from conftest import SHARED_FLAGS, TEST_SEED, Warehouse, run_dbt
from preftools.generate import generate, published_script_pairs

CODE = C.DATASETS_BY_KEY["code_ultrafeedback"]
STANDARD = C.DATASETS_BY_KEY["code_ultrafeedback_standard"]
VALID = {"1", "2", "3", "4", "5"}

pytestmark = pytest.mark.slow


# ----------------------------------------------------------------------------------------
# Raw data, in the order the script reads it
# ----------------------------------------------------------------------------------------
def read_rows(raw_dir: Path, ds: C.RawDataset) -> list[dict]:
    """Every raw row as a dict, files by name then row number, with source_file/source_row."""
    rows = []
    for path in sorted(ds.data_dir(raw_dir).glob("*.parquet"), key=lambda p: p.name):
        for i, row in enumerate(pq.read_table(path).to_pylist()):
            rows.append({**row, "source_file": path.name, "source_row": i})
    return rows


# ----------------------------------------------------------------------------------------
# The card's script, transcribed (statement for statement; `ds` is the list of raw rows)
# ----------------------------------------------------------------------------------------
def published_script(ds: list[dict]) -> tuple[list[dict], list[dict], dict]:
    """Run the card's script over ``ds`` (the loop body is the benchmark reference's
    published_script_row, with the script's `rating` carried from row to row). Returns
    (data, failures, rating_at_test):

    data      the script's output list; each element also carries the row and the two models
              of its combination (keys prefixed with ``_``) for the comparisons below;
    failures  one {source_file, source_row, error} per row on which the script raises;
    rating_at_test  {(file, row): value of `rating` at `if rating == 'N/A'`} for the rows that
              reach it without raising (the rows with responses).
    """
    data: list[dict] = []
    failures: list[dict] = []
    rating_at_test: dict = {}
    rating = ref.UNSET
    for example in ds:
        key = (example["source_file"], example["source_row"])
        pairs, rating, error = ref.published_script_row(example, key, rating)
        if error is not None:
            failures.append({"source_file": key[0], "source_row": key[1], "error": error})
            continue
        if example["responses"]:
            rating_at_test[key] = rating
        data.extend({"rejected": p["rejected"], "chosen": p["chosen"],
                     "rejected_score": p["rejected_score"], "chosen_score": p["chosen_score"],
                     "_row": key, "_preference": "code-" + p["preference"],
                     "_chosen_model": p["chosen_model"], "_rejected_model": p["rejected_model"]}
                    for p in pairs)
    return data, failures, rating_at_test


def public(pair: dict) -> dict:
    return {k: v for k, v in pair.items() if not k.startswith("_")}


# ----------------------------------------------------------------------------------------
# The corrected rule, written independently
# ----------------------------------------------------------------------------------------
def corrected_pairs(ds: list[dict], failures: list[dict]) -> list[dict]:
    """Every unordered pair of two responses (positions) whose models both have a rating in
    "1".."5" (a model's last annotation) and different ratings; the higher is chosen. In the
    training format: prompt [user], chosen/rejected [assistant], margin = rating
    difference / 4; flagged `duplicate_model` when either model answers twice in the row and
    `quarantined` (the mart adds the reason) when the published script raises on the row."""
    failed = {(f["source_file"], f["source_row"]) for f in failures}
    out = []
    for example in ds:
        responses = [r for r in (example["responses"] or [])]
        rating_of: dict = {}
        for ann in example["annotations"] or []:
            if ann is not None:
                rating_of[ann["model"]] = ann["rating"]
        model_count = Counter(r["model"] for r in responses if r is not None and r["model"] is not None)
        valid = {}
        for i, r in enumerate(responses):
            if r is not None and r["model"] in rating_of and rating_of[r["model"]] in VALID:
                valid[i] = int(rating_of[r["model"]])
        row = (example["source_file"], example["source_row"])
        for i, j in itertools.combinations(sorted(valid), 2):
            if valid[i] == valid[j]:
                continue
            c, r = (i, j) if valid[i] > valid[j] else (j, i)
            flags = []
            if model_count[responses[c]["model"]] > 1 or model_count[responses[r]["model"]] > 1:
                flags.append("duplicate_model")
            if row in failed:
                flags.append("quarantined")
            out.append({
                "row": row,
                "preference": example["preference"],
                "chosen_response_index": c, "rejected_response_index": r,
                "chosen_model": responses[c]["model"], "rejected_model": responses[r]["model"],
                "chosen_rating": valid[c], "rejected_rating": valid[r],
                "score_margin": valid[c] - valid[r],
                "margin": (valid[c] - valid[r]) / 4,
                "prompt": [{"role": "user", "content": example["instruction"]}],
                "chosen": [{"role": "assistant", "content": responses[c]["response"]}],
                "rejected": [{"role": "assistant", "content": responses[r]["response"]}],
                "integrity_flags": flags,
            })
    return out


def first_positions(example: dict) -> dict:
    """model -> its first position in the responses list (the script's dict key position)."""
    pos: dict = {}
    for i, r in enumerate(example["responses"] or []):
        if r is not None and r["model"] not in pos:
            pos[r["model"]] = i
    return pos


def expected_reasons(ds, script_data, failures, rating_at_test, corrected) -> dict:
    """{(row, low position, high position): (status, reason)} from the documented reasons."""
    by_row = {(e["source_file"], e["source_row"]): e for e in ds}
    failed = {(f["source_file"], f["source_row"]) for f in failures}
    published = {}
    for p in script_data:
        pos = first_positions(by_row[p["_row"]])
        c, r = pos[p["_chosen_model"]], pos[p["_rejected_model"]]
        published[(p["_row"], min(c, r), max(c, r))] = (c, p["chosen_score"], p["rejected_score"])
    fixed = {(p["row"], min(p["chosen_response_index"], p["rejected_response_index"]),
              max(p["chosen_response_index"], p["rejected_response_index"])): p["chosen_response_index"]
             for p in corrected}
    out = {}
    for key in published.keys() | fixed.keys():
        if key in published and key in fixed:
            same = published[key][0] == fixed[key]
            out[key] = ("same", None) if same else ("flipped", "string_order_inverted")
        elif key in published:
            _, cs, rs = published[key]
            if cs == "N/A":
                reason = "na_rated_chosen"
            elif rs == "N/A":
                reason = "na_rated_rejected"
            elif cs.isascii() and cs.isdigit() and rs.isascii() and rs.isdigit() and int(cs) < int(rs):
                reason = "string_order_inverted"
            else:
                reason = "invalid_rating"
            out[key] = ("only_published_logic", reason)
        else:
            row = key[0]
            if row in failed:
                reason = "prompt_quarantined"
            elif rating_at_test.get(row, None) == "N/A":
                reason = "prompt_dropped_by_last_na"
            else:
                reason = "duplicate_model"
            out[key] = ("only_corrected", reason)
    return out


# ----------------------------------------------------------------------------------------
# The comparisons, shared by the two datasets
# ----------------------------------------------------------------------------------------
def check_published_logic(wh: Warehouse, ds, script_data, failures) -> None:
    sql_pairs = wh.rows("""
        select p.source_file, p.source_row, p.preference, p.chosen, p.rejected,
               p.chosen_score, p.rejected_score, p.chosen_model, p.rejected_model, p.pair_order
        from code_ultrafeedback_pairs_published_logic as p
        order by p.pair_order
    """)
    assert [r["pair_order"] for r in sql_pairs] == list(range(len(sql_pairs)))
    assert len(sql_pairs) == len(script_data)
    for i, (got, want) in enumerate(zip(sql_pairs, script_data)):
        assert (got["source_file"], got["source_row"]) == want["_row"], f"pair {i}: wrong prompt"
        # the script's `preference` ('code-' + raw) is never written; the mart keeps the raw value
        assert "code-" + got["preference"] == want["_preference"], f"pair {i}"
        assert (got["chosen_model"], got["rejected_model"]) == (want["_chosen_model"], want["_rejected_model"]), f"pair {i}"
        assert {k: got[k] for k in ("chosen", "rejected", "chosen_score", "rejected_score")} == public(
            {k: want[k] for k in ("chosen", "rejected", "chosen_score", "rejected_score")}), f"pair {i}"

    quarantine = wh.rows("""
        select source_file, source_row, error_type from code_ultrafeedback_published_logic_quarantine
        order by prompt_order
    """)
    assert [(q["source_file"], q["source_row"], q["error_type"]) for q in quarantine] == [
        (f["source_file"], f["source_row"], f["error"]) for f in failures]
    # every raw row is visible: the prompts mart has them all
    assert wh.scalar("select count(*) from code_ultrafeedback_prompts") == len(ds)


def check_corrected(wh: Warehouse, corrected) -> None:
    got = wh.rows("""
        select pr.source_file, pr.source_row, c.preference, c.chosen_response_index,
               c.rejected_response_index, c.chosen_model, c.rejected_model, c.chosen_rating,
               c.rejected_rating, c.score_margin, c.margin, c.prompt, c.chosen, c.rejected,
               c.integrity_flags, c.is_flagged, q.reason as quarantine_reason
        from code_ultrafeedback_pairs as c
        inner join code_ultrafeedback_prompts as pr on c.prompt_id = pr.prompt_id
        left join code_ultrafeedback_published_logic_quarantine as q on c.prompt_id = q.prompt_id
    """)
    for g in got:
        # the quarantine reason itself is checked by test_handmade_quarantine_reasons
        reason = g.pop("quarantine_reason")
        assert g.pop("is_flagged") == bool(g["integrity_flags"]), g
        # the checks every dataset gets are preference_pairs' (test_cross_dataset); the rest are CUF's
        flags = g["integrity_flags"] = [f for f in g["integrity_flags"] if f not in SHARED_FLAGS]
        if reason is not None:
            assert flags[-1] == "quarantined_" + reason, g
            flags[-1] = "quarantined"
    got_set = sorted((((g.pop("source_file"), g.pop("source_row")),) + tuple(sorted(g.items())) for g in got),
                     key=repr)
    want_set = sorted(((w["row"],) + tuple(sorted((k, v) for k, v in w.items() if k != "row")) for w in corrected),
                      key=repr)
    assert got_set == want_set


def check_reasons(wh: Warehouse, expected: dict) -> None:
    got = wh.rows("""
        select pr.source_file, pr.source_row, a.status, a.reason,
               least(coalesce(a.published_chosen_response_index, a.corrected_chosen_response_index),
                     coalesce(a.published_rejected_response_index, a.corrected_rejected_response_index)) as lo,
               greatest(coalesce(a.published_chosen_response_index, a.corrected_chosen_response_index),
                        coalesce(a.published_rejected_response_index, a.corrected_rejected_response_index)) as hi
        from audit_code_ultrafeedback_corrections as a
        inner join code_ultrafeedback_prompts as pr on a.prompt_id = pr.prompt_id
    """)
    got_map = {((g["source_file"], g["source_row"]), g["lo"], g["hi"]): (g["status"], g["reason"]) for g in got}
    assert len(got_map) == len(got)
    assert got_map == expected


def check_published_audit(wh: Warehouse, published_rows: list[dict]) -> None:
    statuses = wh.rows("""
        select status, count(*) as n, count(*) filter (where is_at_script_position) as n_in_place
        from audit_code_ultrafeedback_published group by status
    """)
    assert statuses == [{"status": "reproduced", "n": len(published_rows), "n_in_place": len(published_rows)}]


def check_summary(wh: Warehouse, published_rows, script_data, corrected, failures, rating_at_test,
                  expected) -> None:
    (total,) = wh.rows("select * from code_ultrafeedback_bug_summary where scope = 'total'")
    assert total["preference"] is None
    failed = {(f["source_file"], f["source_row"]) for f in failures}
    assert total["n_published_pairs"] == len(published_rows)
    assert total["n_published_chosen_score_na"] == sum(r["chosen_score"] == "N/A" for r in published_rows)
    assert total["n_published_logic_pairs"] == len(script_data)
    assert total["n_corrected_pairs"] == len(corrected)
    assert total["n_prompts_quarantined"] == len(failed)
    assert total["n_prompts_dropped"] == sum(v == "N/A" for k, v in rating_at_test.items() if k not in failed)
    reasons = Counter(r for _, r in expected.values() if r is not None)
    for reason in ("na_rated_chosen", "na_rated_rejected", "prompt_dropped_by_last_na",
                   "string_order_inverted", "invalid_rating", "prompt_quarantined", "duplicate_model"):
        assert total[f"n_{reason}"] == reasons[reason], reason
    by_pref = wh.rows("select * from code_ultrafeedback_bug_summary where scope = 'preference'")
    for col in ("n_prompts", "n_published_pairs", "n_corrected_pairs", "n_na_rated_chosen"):
        assert sum(r[col] for r in by_pref) == total[col], col


def check_prompts(wh: Warehouse, ds: list[dict], script_data: list[dict], corrected: list[dict]) -> None:
    """Per raw row: the pair counts under both logics, whether it yields a corrected pair and,
    if not, why (the first of no responses, no annotations, fewer than two responses
    with a 1..5 rating, all those ratings equal)."""
    n_corrected = Counter(p["row"] for p in corrected)
    n_script = Counter(p["_row"] for p in script_data)
    got = {(r["source_file"], r["source_row"]): r for r in wh.rows(
        "select source_file, source_row, n_published_logic_pairs, n_corrected_pairs, has_pair, no_pair_reason"
        " from code_ultrafeedback_prompts")}
    assert len(got) == len(ds)
    for example in ds:
        key = (example["source_file"], example["source_row"])
        responses = example["responses"] or []
        rating_of = {ann["model"]: ann["rating"] for ann in example["annotations"] or [] if ann is not None}
        ratings = [int(rating_of[r["model"]]) for r in responses
                   if r is not None and r["model"] in rating_of and rating_of[r["model"]] in VALID]
        if not responses:
            reason = "no_responses"
        elif not example["annotations"]:
            reason = "empty_annotations"
        elif len(ratings) < 2:
            reason = "fewer_than_two_rated_responses"
        elif len(set(ratings)) == 1:
            reason = "all_ratings_equal"
        else:
            reason = None
        row = got[key]
        assert row["n_corrected_pairs"] == n_corrected[key], key
        assert row["n_published_logic_pairs"] == n_script[key], key
        assert row["has_pair"] == (n_corrected[key] > 0), key
        assert row["no_pair_reason"] == reason, key
        # the two rules are one partition: a row yields a pair exactly when no reason applies
        assert row["has_pair"] == (reason is None), key


def check_all(wh: Warehouse) -> Counter:
    ds = read_rows(wh.raw_dir, CODE)
    published_rows = read_rows(wh.raw_dir, STANDARD)
    script_data, failures, rating_at_test = published_script(ds)
    corrected = corrected_pairs(ds, failures)
    expected = expected_reasons(ds, script_data, failures, rating_at_test, corrected)

    check_published_logic(wh, ds, script_data, failures)
    check_corrected(wh, corrected)
    check_prompts(wh, ds, script_data, corrected)
    check_reasons(wh, expected)
    check_published_audit(wh, published_rows)
    check_summary(wh, published_rows, script_data, corrected, failures, rating_at_test, expected)
    return Counter(r for _, r in expected.values())


# ----------------------------------------------------------------------------------------
# On the generated data
# ----------------------------------------------------------------------------------------
def test_generated_published_file_is_the_script_output(warehouse: Warehouse):
    """Our transcription of the card reproduces the generated RLHFlow file row for row, so the
    generated data is data 'the script really produced'."""
    script_data, _, _ = published_script(read_rows(warehouse.raw_dir, CODE))
    published = [{k: v for k, v in r.items() if k not in ("source_file", "source_row")}
                 for r in read_rows(warehouse.raw_dir, STANDARD)]
    assert published == [public(p) for p in script_data]


def test_generated_data_matches_python(warehouse: Warehouse):
    reasons = check_all(warehouse)
    # the planted quirks occur, so the comparisons above are not vacuous
    for reason in ("na_rated_chosen", "prompt_dropped_by_last_na", "prompt_quarantined", "invalid_rating"):
        assert reasons[reason] > 0, reason
    assert reasons[None] > 0


def test_generated_responses_mart(warehouse: Warehouse):
    ds = read_rows(warehouse.raw_dir, CODE)
    want = []
    for e in ds:
        last_ann = {}
        for k, a in enumerate(e["annotations"] or []):
            if a is not None:
                last_ann[a["model"]] = (k, a["rating"])
        for i, r in enumerate(e["responses"] or []):
            k, raw = last_ann.get(r["model"], (None, None))
            want.append(((e["source_file"], e["source_row"]), i, e["preference"], e["instruction"], r["model"],
                         r["response"], k, raw, int(raw) if raw in VALID else None))
    got = warehouse.rows("""
        select pr.source_file, pr.source_row, r.response_index, r.preference, r.instruction, r.model,
               r.response, r.annotation_index, r.rating_raw, r.rating
        from code_ultrafeedback_responses as r
        inner join code_ultrafeedback_prompts as pr on r.prompt_id = pr.prompt_id
    """)
    got = [((g["source_file"], g["source_row"]), g["response_index"], g["preference"], g["instruction"],
            g["model"], g["response"], g["annotation_index"], g["rating_raw"], g["rating"]) for g in got]
    assert sorted(got, key=repr) == sorted(want, key=repr)


# ----------------------------------------------------------------------------------------
# On hand-made rows: the corners the generator does not plant
# ----------------------------------------------------------------------------------------
def _resp(*models):
    return [{"model": m, "response": f"response {k} of {m}"} for k, m in enumerate(models)]


def _ann(*pairs):
    return [{"model": m, "rating": r, "rationale": "x"} for m, r in pairs]


HANDMADE_FILES = {
    "train-00000-of-00002.parquet": [
        # NameError: no earlier row assigned `rating`
        dict(instruction="q0", preference="style", responses=_resp("a", "b"), annotations=[]),
        # codepoint order: 'n/a' > 'N/A' > '5' > '10' > '1' > '0'; the last annotation is '3'
        dict(instruction="q1", preference="style", responses=_resp("a", "b", "c", "d", "e", "f"),
             annotations=_ann(("a", "n/a"), ("b", "N/A"), ("c", "10"), ("d", "1"), ("e", "0"), ("f", "3"))),
        # a repeated model (first position, last response), a repeated annotation (last wins)
        dict(instruction="q2", preference="readability", responses=_resp("a", "b", "a", "c"),
             annotations=_ann(("a", "5"), ("b", "2"), ("c", "4"), ("b", "1"))),
        # last annotation 'N/A': dropped (its valid pairs only in the corrected set)
        dict(instruction="q3", preference="complexity", responses=_resp("a", "b", "c"),
             annotations=_ann(("a", "5"), ("b", "2"), ("c", "N/A"))),
    ],
    "train-00001-of-00002.parquet": [
        # empty annotations, stale 'N/A' from the previous FILE: dropped, no error
        dict(instruction="q4", preference="style", responses=_resp("a", "b"), annotations=[]),
        # a NULL rating compared with a string: TypeError (after `rating` = '2' is assigned)
        dict(instruction="q5", preference="style", responses=_resp("a", "b", "c"),
             annotations=_ann(("a", "4"), ("b", None), ("c", "2"))),
        # empty annotations with a stale '2': KeyError on the first combination
        dict(instruction="q6", preference="explanation", responses=_resp("a", "b"), annotations=[]),
        # empty annotations, one response: no combination, no error, no pair
        dict(instruction="q7", preference="explanation", responses=_resp("a"), annotations=[]),
        # NULL preference: TypeError, but `rating` = '5' is assigned first
        dict(instruction="q8", preference=None, responses=_resp("a", "b"), annotations=_ann(("a", "1"), ("b", "5"))),
        # a model without annotation after a good combination: the whole row is lost
        dict(instruction="q9", preference="style", responses=_resp("a", "b", "c"),
             annotations=_ann(("a", "1"), ("b", "4"))),
        # a NULL annotations list: TypeError; a NULL response entry: TypeError
        dict(instruction="q10", preference="style", responses=_resp("a", "b"), annotations=None),
        dict(instruction="q11", preference="style", responses=[None, *_resp("b", "c")],
             annotations=_ann(("b", "2"), ("c", "3"))),
        # no responses at all: nothing, and the row stays visible
        dict(instruction="q12", preference="style", responses=[], annotations=_ann(("a", "2"))),
        # a normal row after all that: 'N/A' in the middle, two N/A (tie), ties, '10' vs '2'
        dict(instruction="q13", preference="style", responses=_resp("a", "b", "c", "d", "e"),
             annotations=_ann(("a", "N/A"), ("b", "3"), ("c", "N/A"), ("d", "10"), ("e", "2"))),
    ],
}


@pytest.fixture(scope="module")
def handmade(tmp_path_factory) -> Warehouse:
    raw = tmp_path_factory.mktemp("cuf_raw")
    # the other groups' raw files (the build's input check wants every dataset present)
    generate(raw, seed=TEST_SEED, scale=0.001, progress=False,
             datasets=[d.key for d in C.DATASETS if d.group != "code_ultrafeedback"])
    CODE.data_dir(raw).mkdir(parents=True)
    STANDARD.data_dir(raw).mkdir(parents=True)
    ds = []
    for name, rows in HANDMADE_FILES.items():
        pq.write_table(pa.Table.from_pylist(rows, schema=CODE.schema), CODE.data_dir(raw) / name)
        ds += [{**r, "source_file": name, "source_row": i} for i, r in enumerate(rows)]
    # the published file: the script's output on these rows
    data, _, _ = published_script(ds)
    pq.write_table(pa.Table.from_pylist([public(p) for p in data], schema=STANDARD.schema),
                   STANDARD.data_dir(raw) / "train-00000-of-00001.parquet")
    work = tmp_path_factory.mktemp("cuf_build")
    db = work / "warehouse.duckdb"
    run_dbt(["build", "-s", "+path:models/marts/code_ultrafeedback", "--indirect-selection", "cautious"],
            raw, db, work)
    return Warehouse(db, raw, work)


def test_handmade_rows_match_python(handmade: Warehouse):
    reasons = check_all(handmade)
    for reason in ("na_rated_chosen", "na_rated_rejected", "prompt_dropped_by_last_na", "string_order_inverted",
                   "invalid_rating", "prompt_quarantined", "duplicate_model"):
        assert reasons[reason] > 0, reason


def test_handmade_quarantine_reasons(handmade: Warehouse):
    got = {r["source_row"] + 100 * int(r["source_file"].startswith("train-00001")): r["reason"]
           for r in handmade.rows("select * from code_ultrafeedback_published_logic_quarantine")}
    assert got == {0: "rating_never_assigned", 101: "null_rating_compared", 102: "empty_annotations",
                   104: "null_preference", 105: "model_without_annotation", 106: "null_annotations",
                   107: "null_response_entry"}
    outcomes = {(r["source_file"][:13], r["source_row"]): r["script_outcome"]
                for r in handmade.rows("select * from code_ultrafeedback_prompts")}
    assert outcomes[("train-00001-o", 0)] == "dropped_by_na_rating"
    assert outcomes[("train-00001-o", 3)] == "processed"
    assert outcomes[("train-00001-o", 8)] == "processed"


# ----------------------------------------------------------------------------------------
# A tampered RLHFlow file: the published audit finds each change, row by row
# ----------------------------------------------------------------------------------------
SWAPPED, DROPPED, EDITED = (5, 6), 10, 20  # positions in the script's output


def match_key(row: dict) -> tuple:
    """What the audit matches a published row on: the prompt, both responses, both scores."""
    return (row["chosen"][0]["content"], row["chosen"][1]["content"], row["rejected"][1]["content"],
            row["chosen_score"], row["rejected_score"])


def expected_published_audit(published: list[dict], script: list[dict]) -> list[tuple]:
    """(status, published row, reproduced pair, is_at_script_position) for every row of the
    audit: rows matched on match_key, the n-th occurrence of a key with the n-th."""
    def numbered(rows):
        seen: Counter = Counter()
        out = {}
        for i, row in enumerate(rows):
            seen[match_key(row)] += 1
            out[(match_key(row), seen[match_key(row)])] = i
        return out

    pub, rep = numbered(published), numbered(script)
    out = []
    for key in pub.keys() | rep.keys():
        i, j = pub.get(key), rep.get(key)
        status = "only_in_reproduction" if i is None else "only_in_published" if j is None else "reproduced"
        out.append((status, i, j, None if i is None or j is None else i == j))
    return sorted(out, key=repr)


@pytest.fixture(scope="module")
def tampered(tmp_path_factory) -> tuple[Warehouse, list[dict], list[dict]]:
    """Generated CodeUltraFeedback data whose RLHFlow file lost a row, had one edited and two
    swapped; only the code_ultrafeedback group is built."""
    raw = tmp_path_factory.mktemp("cuf_tampered_raw")
    manifest = generate(raw, seed=TEST_SEED, scale=0.002, progress=False, datasets=[CODE.key, STANDARD.key])
    # without the repeated coseal rows (their pairs repeat), and the script's output made again
    (coseal,) = CODE.data_dir(raw).glob("*.parquet")
    repeated = set(manifest["code_ultrafeedback_planted"]["rows_repeated"])
    rows = [r for i, r in enumerate(pq.read_table(coseal).to_pylist()) if i not in repeated]
    pq.write_table(pa.Table.from_pylist(rows, schema=CODE.schema), coseal)
    (path,) = STANDARD.data_dir(raw).glob("*.parquet")
    script = pa.Table.from_pylist(published_script_pairs(rows)[0], schema=STANDARD.schema).to_pylist()
    # every pair distinct, so each change shows on its own rows
    assert len(script) > EDITED + 1 and len({match_key(r) for r in script}) == len(script)
    published = [dict(r) for r in script]
    published[SWAPPED[0]], published[SWAPPED[1]] = published[SWAPPED[1]], published[SWAPPED[0]]
    edited = published[EDITED]
    edited["chosen"] = [edited["chosen"][0], {**edited["chosen"][1], "content": edited["chosen"][1]["content"] + " (edited)"}]
    del published[DROPPED]
    pq.write_table(pa.Table.from_pylist(published, schema=STANDARD.schema), path)
    work = tmp_path_factory.mktemp("cuf_tampered_build")
    db = work / "warehouse.duckdb"
    run_dbt(["build", "-s", "+audit_code_ultrafeedback_published", "--indirect-selection", "cautious",
             "--vars", "{datasets: [code_ultrafeedback]}"], raw, db, work)
    return Warehouse(db, raw, work), published, script


def test_tampered_published_file_audit(tampered):
    wh, published, script = tampered
    got = sorted(((r["status"], r["source_row"], r["pair_order"], r["is_at_script_position"]) for r in wh.rows(
        "select status, source_row, pair_order, is_at_script_position from audit_code_ultrafeedback_published")),
        key=repr)
    assert got == expected_published_audit(published, script)

    def where(sql):
        return [tuple(r.values()) for r in wh.rows(
            f"select source_row, pair_order from audit_code_ultrafeedback_published where {sql} "
            "order by source_row nulls last, pair_order")]

    # the edited row (one up, after the drop) matches nothing; its pair and the dropped one are unmatched
    assert where("status = 'only_in_published'") == [(EDITED - 1, None)]
    assert where("status = 'only_in_reproduction'") == [(None, DROPPED), (None, EDITED)]
    # off the script's position: the swapped two, and every matched row after the drop
    assert where("not is_at_script_position") == [
        (SWAPPED[0], SWAPPED[1]), (SWAPPED[1], SWAPPED[0]),
        *[(i, i + 1) for i in range(DROPPED, len(published)) if i != EDITED - 1]]
    assert where("is_at_script_position") == [
        (i, i) for i in range(DROPPED) if i not in SWAPPED]
    # the untouched rows are all reproduced
    assert wh.scalar("select count(*) from audit_code_ultrafeedback_published where status = 'reproduced'") \
        == len(script) - 2
