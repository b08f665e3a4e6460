"""ReVeR marts against an independent Python reading of the raw Parquet files.

The rules come from the marts' docs and the dataset card, written in Python with the ``json`` and
``re`` modules, not from the SQL (a trajectory's score: benchmarks/reference.py, judge_trajectory,
which make bench uses too): the verdict is the JSON of the LAST <judge> block of the
last assistant message, in a list shape (bare or under any single key) or a map keyed by
rubric_id; a response's score is the number of satisfied Hard Rules plus the mean Principle
score / 101 (0 without Principles); a pair is kept when the chosen response scores strictly
higher. The integrity table must hold exactly the breaks the generator planted (manifest).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchmarks.reference import criterion_kind, judge_trajectory, retention
from conftest import Warehouse, raw_rows, run_dbt
from preftools.inputs import contract as C

NUMBERED_LINE = re.compile(r"^[ \t]*[0-9]+\.[ \t]*(.*?)[ \t]*$")
TOL = 1e-12


# --------------------------------------------------------------------------- raw reading
def _raw_rows(raw_dir: Path, key: str) -> list[dict]:
    """Every raw row with its raw key (file name, 0-based row number in the file)."""
    rows = []
    for name, i, row in raw_rows(raw_dir, key):
        row["source_file"], row["source_row"] = name, i
        rows.append(row)
    return rows


# --------------------------------------------------------------------------- the rules
# A judge trajectory is read and scored by the benchmark's reference (benchmarks/reference.py:
# judge_trajectory), the one Python oracle of the rule; the rubric's numbered list is read here.
def rubric_criteria(row: dict) -> list[str]:
    """The numbered list that ends the last assistant message (trailing run of '1. ...' lines)."""
    assistants = [m["content"] for m in (row["messages"] or []) if m["role"] == "assistant"]
    if not assistants:
        return []
    lines = assistants[-1].rstrip().split("\n")
    out = []
    for line in reversed(lines):
        m = NUMBERED_LINE.match(line)
        if not m:
            break
        out.append(m.group(1))
    return out[::-1]


# --------------------------------------------------------------------------- fixtures
def compute_expected(raw_dir: Path) -> dict:
    """Every trajectory parsed and scored, the rubrics, the generator's manifest."""
    judge = _raw_rows(raw_dir, "rever_judge")
    rubric = _raw_rows(raw_dir, "rever_rubric")
    traj = {(r["source_file"], r["source_row"]): {**r, **judge_trajectory(r["messages"])} for r in judge}
    rubrics, rubric_sources = {}, {}
    for r in sorted(rubric, key=lambda r: (r["source_file"], r["source_row"])):
        rubrics.setdefault(r["id"], rubric_criteria(r))
        rubric_sources.setdefault(r["id"], r["source"])
    manifest = json.loads((raw_dir / "_generator_manifest.json").read_text())
    return {"traj": traj, "rubric_rows": rubric, "rubrics": rubrics, "rubric_sources": rubric_sources,
            "manifest": manifest}


@pytest.fixture(scope="module")
def expected(warehouse):
    return compute_expected(warehouse.raw_dir)


@pytest.fixture(scope="module")
def expected_pairs(expected):
    return compute_pairs(expected)


def compute_pairs(expected: dict) -> dict:
    """Per id: the first chosen and first rejected trajectory (file, row order)."""
    members: dict[str, dict] = defaultdict(dict)
    counts: Counter = Counter()
    trajectory_sources: dict[str, list] = defaultdict(list)
    for key in sorted(expected["traj"]):
        t = expected["traj"][key]
        counts[t["id"]] += 1
        members[t["id"]].setdefault(t["candidate"], t)
        if t["source"] is not None:
            trajectory_sources[t["id"]].append(t["source"])
    pairs = {}
    for pid in set(members) | set(expected["rubrics"]):
        c, r = members.get(pid, {}).get("chosen"), members.get(pid, {}).get("rejected")
        cs = c["response_score"] if c else None
        rs = r["response_score"] if r else None
        decided, kept = retention(c, r)
        crit = expected["rubrics"].get(pid)
        # the highest score a side's rubric allows: every Hard Rule satisfied, Principle mean 100
        tops = [sum(criterion_kind(x) == "hard_rule" for x in t["criteria"])
                + (100 / 101 if any(criterion_kind(x) == "principle" for x in t["criteria"]) else 0)
                for t in (c, r) if t and t["criteria"] is not None]
        pairs[pid] = {
            # the rubric's source, else the trajectories' (the smallest)
            "source": expected["rubric_sources"].get(pid) or min(trajectory_sources[pid], default=None),
            "max_possible_score": max(tops) if tops else None,
            "chosen_score": cs, "rejected_score": rs, "decided_by": decided, "kept": kept,
            "n_trajectories": counts[pid], "rubric_found": pid in expected["rubrics"],
            "rubric_matches_chosen": None if c is None else (crit is not None and c["criteria"] == crit),
            "rubric_matches_rejected": None if r is None else (crit is not None and r["criteria"] == crit),
            "instruction": (c or r or {}).get("instruction"),
            "chosen_response": c["response"] if c else None,
            "rejected_response": r["response"] if r else None,
        }
    return pairs


def _close(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=0, abs_tol=TOL)


# --------------------------------------------------------------------------- tests
def test_generated_data_has_every_planted_kind(expected):
    """Guard: the comparisons below are only meaningful if the generator planted breaks."""
    kinds = {b["kind"] for b in expected["manifest"]["rever_integrity_breaks"]}
    for k in ("verdict_no_judge_block", "verdict_malformed_json", "verdict_missing_items",
              "verdict_score_out_of_range", "not_kept", "criteria_mismatch", "duplicate_candidate",
              "rubric_unused", "rubric_single_trajectory", "trajectory_without_rubric",
              "info_multiple_judge_blocks"):
        assert k in kinds, k
    statuses = Counter(t["verdict_status"] for t in expected["traj"].values())
    assert statuses["ok"] > 0 and len(statuses) >= 4, statuses


def test_trajectory_scores_and_statuses(warehouse, expected):
    got = {(r["source_file"], r["source_row"]): r for r in warehouse.rows(
        "select source_file, source_row, verdict_status, used_tool, n_rubric_items, "
        "hard_rules_satisfied, principle_mean, response_score, instruction, response from rever_trajectories")}
    assert got.keys() == expected["traj"].keys()
    bad = []
    for key, e in expected["traj"].items():
        g = got[key]
        same = (g["verdict_status"] == e["verdict_status"] and g["used_tool"] == e["used_tool"]
                and g["n_rubric_items"] == e["n_rubric_items"]
                and g["hard_rules_satisfied"] == e["hard_rules_satisfied"]
                and _close(g["principle_mean"], e["principle_mean"])
                and _close(g["response_score"], e["response_score"])
                and g["instruction"] == e["instruction"] and g["response"] == e["response"])
        if not same:
            bad.append((key, {k: e.get(k) for k in g}, g))
    assert not bad, bad[:3]


def test_pair_scores_and_retention_rule(warehouse, expected_pairs):
    got = {r["id"]: r for r in warehouse.rows("select * from rever_pairs")}
    assert got.keys() == expected_pairs.keys()
    bad = []
    for pid, e in expected_pairs.items():
        g = got[pid]
        score_margin = None if e["chosen_score"] is None or e["rejected_score"] is None \
            else e["chosen_score"] - e["rejected_score"]
        # margin: score_margin on a [-1, 1] scale, the width being the rubric's highest possible score
        margin = None if score_margin is None else score_margin / e["max_possible_score"]
        same = (_close(g["chosen_score"], e["chosen_score"]) and _close(g["rejected_score"], e["rejected_score"])
                and _close(g["score_margin"], score_margin) and _close(g["margin"], margin)
                and all(g[k] == e[k] for k in ("decided_by", "kept", "n_trajectories", "rubric_found",
                                                "rubric_matches_chosen", "rubric_matches_rejected",
                                                "instruction", "chosen_response", "rejected_response")))
        if not same:
            bad.append((pid, e, g))
    assert not bad, bad[:3]
    # the generator's pairs all follow the rule except those it broke on purpose
    assert Counter(e["decided_by"] for e in expected_pairs.values())["principles"] > 0


def test_rubric_items_parsed_from_the_numbered_list(warehouse, expected):
    got = defaultdict(list)
    for r in warehouse.rows("select id, item_index, criterion, kind from rever_rubric_items order by id, item_index"):
        got[r["id"]].append((r["criterion"], r["kind"]))
    want = {r["id"]: [(c, criterion_kind(c)) for c in rubric_criteria(r)] for r in expected["rubric_rows"]}
    assert dict(got) == want


def test_integrity_holds_exactly_the_planted_breaks(warehouse, expected):
    planted = Counter((b["kind"], b["id"], b["candidate"])
                      for b in expected["manifest"]["rever_integrity_breaks"]
                      if not b["kind"].startswith("info_"))
    got = Counter((r["kind"], r["id"], r["candidate"])
                  for r in warehouse.rows("select kind, id, candidate from rever_integrity"))
    assert got == planted, {"missing": planted - got, "unexpected": got - planted}


def test_integrity_details_point_at_the_planted_items(warehouse, expected):
    """The planted detail (which rubric item, which criterion) is where the marts say."""
    for b in expected["manifest"]["rever_integrity_breaks"]:
        if b["kind"] == "verdict_score_out_of_range":
            rows = warehouse.rows(
                "select rubric_id, score from rever_verdicts where id = ? and candidate = ? "
                "and item_status = 'score_out_of_range'", [b["id"], b["candidate"]])
            assert rows == [{"rubric_id": b["detail"]["rubric_id"], "score": b["detail"]["score"]}], b
        elif b["kind"] == "verdict_missing_items":
            rows = warehouse.rows(
                "select rubric_id from rever_verdicts where id = ? and candidate = ? "
                "and item_status = 'missing_item'", [b["id"], b["candidate"]])
            assert rows == [{"rubric_id": b["detail"]["missing_rubric_id"]}], b
        elif b["kind"] == "criteria_mismatch":
            traj = warehouse.rows("select criterion from rever_verdicts where id = ? and candidate = ?",
                                  [b["id"], b["candidate"]])
            rub = warehouse.rows("select criterion from rever_rubric_items where id = ?", [b["id"]])
            assert {"criterion": b["detail"]["trajectory_criterion"]} in traj, b
            assert {"criterion": b["detail"]["rubric_criterion"]} in rub, b
            assert {"criterion": b["detail"]["trajectory_criterion"]} not in rub, b


def test_multiple_judge_blocks_use_the_last(warehouse, expected):
    """Not a break: the verdict is the last block, the earlier draft is ignored."""
    infos = [b for b in expected["manifest"]["rever_integrity_breaks"] if b["kind"] == "info_multiple_judge_blocks"]
    assert infos
    n_differ = 0
    for b in infos:
        (row,) = warehouse.rows(
            "select source_file, source_row, verdict_status, n_judge_blocks, response_score "
            "from rever_trajectories where id = ? and candidate = ?", [b["id"], b["candidate"]])
        raw = expected["traj"][(row["source_file"], row["source_row"])]
        assert row["verdict_status"] == "ok" and row["n_judge_blocks"] >= 2, row
        # the score the first (draft) block would give
        last = raw["messages"][-1]["content"]
        first_only = last[: last.index("</judge>") + len("</judge>")]
        draft = judge_trajectory(raw["messages"][:-1] + [{"role": "assistant", "content": first_only}])
        assert _close(row["response_score"], raw["response_score"]), row
        n_differ += draft["response_score"] != raw["response_score"]
    assert n_differ > 0  # the planted drafts do change the score, so the check has teeth


def test_summary_tool_rate(warehouse, expected):
    rows = warehouse.rows("select * from rever_summary")
    got = {r["source"]: r for r in rows if r["scope"] == "source"}
    (total,) = [r for r in rows if r["scope"] == "total"]
    assert total["source"] is None and len(rows) == len(got) + 1
    by_source = Counter(t["source"] for t in expected["traj"].values())
    tools = Counter(t["source"] for t in expected["traj"].values() if t["used_tool"])
    for s, n in by_source.items():
        assert got[s]["n_trajectories"] == n
        assert got[s]["n_trajectories_with_tool"] == tools[s]
        assert _close(got[s]["tool_call_rate"], tools[s] / n)
    assert sum(tools.values()) == expected["manifest"]["rever"]["tool_call_trajectories"]
    # the total row: over all trajectories
    assert total["n_trajectories"] == len(expected["traj"])
    assert total["n_trajectories_with_tool"] == sum(tools.values())
    assert _close(total["tool_call_rate"], sum(tools.values()) / len(expected["traj"]))


def test_summary_pairs(warehouse, expected_pairs):
    """Per source and over all sources (the 'total' row), from the recomputed pairs: counts,
    share decided by principles and the mean margin, the total's over all scored pairs (not a
    mean of the sources' means)."""
    groups: dict[tuple[str, str | None], list[dict]] = defaultdict(list)
    for p in expected_pairs.values():
        groups[("source", p["source"])].append(p)
        groups[("total", None)].append(p)
    got = {(r["scope"], r["source"]): r for r in warehouse.rows("select * from rever_summary")}
    for g, pairs in groups.items():
        scored = [p for p in pairs if p["decided_by"] != "unscored"]
        margins = [p["chosen_score"] - p["rejected_score"] for p in scored]
        decided = Counter(p["decided_by"] for p in pairs)
        row = got[g]
        assert (row["n_pairs"], row["n_pairs_scored"], row["n_pairs_kept"]) == (
            len(pairs), len(scored), sum(p["kept"] is True for p in pairs)), g
        assert (row["n_decided_by_hard_rules"], row["n_decided_by_principles"], row["n_ties"]) == (
            decided["hard_rules"], decided["principles"], decided["tie"]), g
        assert _close(row["share_decided_by_principles"], decided["principles"] / len(scored) if scored else None), g
        assert _close(row["mean_score_margin"], sum(margins) / len(margins) if margins else None), g
    assert len(groups) > 2  # several sources besides the total


# --------------------------------------------------------------------------- hand-made rows
# The verdict statuses the generator never produces, each on a pair of its own (chosen broken,
# rejected sound unless said), in small Parquet files in the Hub layout, written with pyarrow
# in the contract's schemas. Each asserts the exact verdict_status and the exact integrity rows.
HANDMADE_RUBRIC = [("r1", "The response must be a haiku. [Hard Rule]"),
                   ("r2", "The response should be vivid. [Principle]")]
SOUND_CHOSEN = '{"r1": {"score": 1, "explanation": "yes"}, "r2": {"score": 80, "explanation": "vivid"}}'
SOUND_REJECTED = '{"r1": {"score": 0, "explanation": "no"}, "r2": {"score": 80, "explanation": "vivid"}}'


def _task(rubric=HANDMADE_RUBRIC, rubrics=None) -> str:
    items = [{"rubric_id": i, "criterion": c} for i, c in rubric] if rubrics is None else rubrics
    return json.dumps({"instruction": "Write a haiku about rain.", "response": "Rain on the tin roof.",
                       "rubrics": items})


def _judge_row(pid: str, candidate: str, user: str, verdict: str) -> dict:
    return {"id": pid, "source": "helpsteer3", "candidate": candidate, "tools": "[]", "messages": [
        {"role": "system", "content": "You are an impartial judge."},
        {"role": "user", "content": user},
        {"role": "assistant", "content": f"<think>\nChecking each item.\n</think>\n<judge>\n{verdict}\n</judge>"},
    ]}


def _rejected_response(user: str) -> str:
    """The user message of the rejected side: the same task, another response."""
    try:
        task = json.loads(user)
    except json.JSONDecodeError:
        return user
    return json.dumps({**task, "response": "It rains."})


def _rubric_row(pid: str, rubric=HANDMADE_RUBRIC) -> dict:
    numbered = "\n".join(f"{n}. {c}" for n, (_, c) in enumerate(rubric, 1))
    return {"id": pid, "source": "helpsteer3", "messages": [
        {"role": "user", "content": "Write a rubric for: Write a haiku about rain."},
        {"role": "assistant", "content": "<think>\nTwo items.\n</think>\n\nHere is the rubric:\n\n" + numbered},
    ]}


UNTAGGED_RUBRIC = [("r1", "The response must be a haiku."), ("r2", "The response should be vivid. [Principle]")]
TWICE_RUBRIC = [("r1", "The response must be a haiku. [Hard Rule]"), ("r1", "The response must rhyme. [Hard Rule]"),
                ("r2", "The response should be vivid. [Principle]")]

# id: (chosen user message, chosen verdict, rejected user message, rejected verdict, rubric,
#      expected status of chosen, of rejected, expected integrity rows {(kind, candidate)})
HANDMADE_PAIRS = {
    "handmade:ok": (_task(), SOUND_CHOSEN, _task(), SOUND_REJECTED, HANDMADE_RUBRIC, "ok", "ok", set()),
    # both sides score the same: a tie, not kept
    "handmade:tie": (_task(), SOUND_CHOSEN, _task(), SOUND_CHOSEN, HANDMADE_RUBRIC, "ok", "ok", {("not_kept", None)}),
    "handmade:unknown_rubric_id": (
        _task(), '{"r1": {"score": 1}, "r2": {"score": 80}, "r9": {"score": 1}}', _task(), SOUND_REJECTED,
        HANDMADE_RUBRIC, "unknown_rubric_id", "ok", {("verdict_unknown_rubric_id", "chosen")}),
    "handmade:duplicate_rubric_id": (
        _task(), '{"scores": [{"rubric_id": "r1", "score": 1}, {"rubric_id": "r2", "score": 80}, '
                 '{"rubric_id": "r1", "score": 0}]}', _task(), SOUND_REJECTED,
        HANDMADE_RUBRIC, "duplicate_rubric_id", "ok", {("verdict_duplicate_rubric_id", "chosen")}),
    "handmade:duplicate_rubric_id_in_task": (
        _task(TWICE_RUBRIC), SOUND_CHOSEN, _task(TWICE_RUBRIC), SOUND_REJECTED,
        TWICE_RUBRIC, "duplicate_rubric_id", "duplicate_rubric_id",
        {("verdict_duplicate_rubric_id", "chosen"), ("verdict_duplicate_rubric_id", "rejected")}),
    "handmade:invalid_score": (
        _task(), '{"r1": {"score": "1"}, "r2": {"score": 80}}', _task(), '{"r1": {"score": true}, "r2": {"score": 80}}',
        HANDMADE_RUBRIC, "invalid_score", "invalid_score",
        {("verdict_invalid_score", "chosen"), ("verdict_invalid_score", "rejected")}),
    "handmade:unrecognised_shape": (
        _task(), '"both items satisfied"', _task(), '42',
        HANDMADE_RUBRIC, "unrecognised_shape", "unrecognised_shape",
        {("verdict_unrecognised_shape", "chosen"), ("verdict_unrecognised_shape", "rejected")}),
    "handmade:unknown_rubric_kind": (
        _task(UNTAGGED_RUBRIC), SOUND_CHOSEN, _task(UNTAGGED_RUBRIC), SOUND_REJECTED, UNTAGGED_RUBRIC,
        "unknown_rubric_kind", "unknown_rubric_kind",
        {("verdict_unknown_rubric_kind", "chosen"), ("verdict_unknown_rubric_kind", "rejected"),
         ("rubric_unknown_kind", None)}),
    # the task lists no criterion while the rubric has two: a criteria mismatch as well
    "handmade:no_rubric_items": (
        _task(rubrics=[]), SOUND_CHOSEN, _task(), SOUND_REJECTED, HANDMADE_RUBRIC, "no_rubric_items", "ok",
        {("verdict_no_rubric_items", "chosen"), ("criteria_mismatch", "chosen")}),
    # not JSON; JSON whose `rubrics` is not a list (no criteria mismatch on a malformed task)
    "handmade:malformed_user_message": (
        "Instruction: Write a haiku about rain.\nRubric: r1, r2", SOUND_CHOSEN,
        json.dumps({"instruction": "Write a haiku about rain.", "response": "x", "rubrics": "r1, r2"}),
        SOUND_REJECTED, HANDMADE_RUBRIC, "malformed_user_message", "malformed_user_message",
        {("verdict_malformed_user_message", "chosen"), ("verdict_malformed_user_message", "rejected")}),
}
DUPLICATE_ID = "handmade:duplicate_trajectory"
INVALID_CANDIDATE_ID = "handmade:invalid_candidate"
OWN_TESTS = (DUPLICATE_ID, INVALID_CANDIDATE_ID)  # ids checked by tests of their own


@pytest.fixture(scope="module")
def handmade_rever(tmp_path_factory):
    """The ReVeR marts built on HANDMADE_PAIRS (one judge file, one rubric file), plus a pair whose
    rejected trajectory appears twice (the second, identical row a duplicate_candidate) and a
    pair whose chosen trajectory has the candidate 'maybe'."""

    raw = tmp_path_factory.mktemp("rever_raw")
    judge, rubric = [], []
    for pid, (c_user, c_verdict, r_user, r_verdict, rub, *_) in HANDMADE_PAIRS.items():
        judge += [_judge_row(pid, "chosen", c_user, c_verdict),
                  _judge_row(pid, "rejected", _rejected_response(r_user), r_verdict)]
        rubric.append(_rubric_row(pid, rub))
    judge += [_judge_row(DUPLICATE_ID, "chosen", _task(), SOUND_CHOSEN),
              _judge_row(DUPLICATE_ID, "rejected", _rejected_response(_task()), SOUND_REJECTED),
              _judge_row(DUPLICATE_ID, "rejected", _rejected_response(_task()), SOUND_REJECTED)]
    rubric.append(_rubric_row(DUPLICATE_ID))
    judge += [_judge_row(INVALID_CANDIDATE_ID, "maybe", _task(), SOUND_CHOSEN),
              _judge_row(INVALID_CANDIDATE_ID, "rejected", _rejected_response(_task()), SOUND_REJECTED)]
    rubric.append(_rubric_row(INVALID_CANDIDATE_ID))
    for key, rows in (("rever_judge", judge), ("rever_rubric", rubric)):
        ds = C.DATASETS_BY_KEY[key]
        ds.data_dir(raw).mkdir(parents=True)
        pq.write_table(pa.Table.from_pylist(rows, schema=ds.schema), ds.data_dir(raw) / "train-00000-of-00001.parquet")
    work = tmp_path_factory.mktemp("rever_build")
    db = work / "warehouse.duckdb"
    run_dbt(["build", "-s", "+path:models/marts/rever", "+rejects_rever_judge", "--indirect-selection", "cautious",
             "--vars", "{datasets: [rever]}"], raw, db, work)
    return Warehouse(db, raw, work)


def test_handmade_verdict_statuses(handmade_rever):
    got = {(r["id"], r["candidate"]): r["verdict_status"] for r in handmade_rever.rows(
        "select id, candidate, verdict_status from rever_trajectories where id not in (?, ?)", list(OWN_TESTS))}
    want = {}
    for pid, (*_, chosen_status, rejected_status, _) in HANDMADE_PAIRS.items():
        want[(pid, "chosen")], want[(pid, "rejected")] = chosen_status, rejected_status
    assert got == want
    # the independent Python reading of this file agrees on every row
    for row in _raw_rows(handmade_rever.raw_dir, "rever_judge"):
        if row["id"] not in OWN_TESTS:
            assert judge_trajectory(row["messages"])["verdict_status"] == want[(row["id"], row["candidate"])], row["id"]


def test_handmade_retention_rule(handmade_rever):
    """Each hand-made pair is decided and kept as the reference's retention rule says, a tie
    included (the generated data has none)."""
    rows = sorted(_raw_rows(handmade_rever.raw_dir, "rever_judge"), key=lambda r: (r["source_file"], r["source_row"]))
    first: dict = {}
    for row in rows:
        first.setdefault((row["id"], row["candidate"]), judge_trajectory(row["messages"]))
    got = {r["id"]: (r["decided_by"], r["kept"]) for r in handmade_rever.rows("select id, decided_by, kept from rever_pairs")}
    assert got == {pid: retention(first.get((pid, "chosen")), first.get((pid, "rejected"))) for pid in got}
    assert got["handmade:tie"] == ("tie", False) and got["handmade:ok"] == ("hard_rules", True)


def test_handmade_integrity_kinds(handmade_rever):
    """Every integrity row of the hand-made pairs, exactly: the kind `verdict_<status>` of each
    broken trajectory, and nothing else but the consequences named in HANDMADE_PAIRS."""
    got = Counter((r["id"], r["kind"], r["candidate"]) for r in handmade_rever.rows(
        "select id, kind, candidate from rever_integrity where id not in (?, ?)", list(OWN_TESTS)))
    want = Counter((pid, kind, candidate) for pid, (*_, kinds) in HANDMADE_PAIRS.items() for kind, candidate in kinds)
    assert got == want, {"missing": want - got, "unexpected": got - want}
    # the trajectory-level rows point at their raw row
    for r in handmade_rever.rows("select * from rever_integrity where level = 'trajectory'"):
        assert r["source_file"] == "train-00000-of-00001.parquet" and r["source_row"] is not None, r


def test_handmade_duplicate_trajectory(handmade_rever):
    """The second row of one (id, candidate) is a duplicate_candidate, and only that: the first
    row stands for the pair, which is scored and kept."""
    rows = handmade_rever.rows(
        "select kind, level, candidate, source_row, trajectory_id from rever_integrity where id = ?", [DUPLICATE_ID])
    last_row = 2 * len(HANDMADE_PAIRS) + 2  # the third row of the duplicate id
    (traj,) = handmade_rever.rows("select trajectory_id from rever_trajectories where source_row = ?", [last_row])
    assert rows == [{"kind": "duplicate_candidate", "level": "trajectory", "candidate": "rejected",
                     "source_row": last_row, "trajectory_id": traj["trajectory_id"]}]
    (pair,) = handmade_rever.rows("select n_trajectories, n_rejected, kept, decided_by from rever_pairs where id = ?",
                                  [DUPLICATE_ID])
    assert pair == {"n_trajectories": 3, "n_rejected": 2, "kept": True, "decided_by": "hard_rules"}


def test_handmade_invalid_candidate(handmade_rever):
    """A trajectory whose candidate is neither chosen nor rejected: invalid_candidate, and its pair
    misses its chosen side; the trajectory is rejected as invalid_candidate."""
    kinds = Counter((r["kind"], r["candidate"]) for r in handmade_rever.rows(
        "select kind, candidate from rever_integrity where id = ?", [INVALID_CANDIDATE_ID]))
    assert kinds == Counter({("invalid_candidate", "maybe"): 1, ("missing_candidate", "chosen"): 1})
    reasons = {r["candidate"]: r["reason"] for r in handmade_rever.rows(
        "select candidate, reason from rejects_rever_judge where id = ?", [INVALID_CANDIDATE_ID])}
    assert reasons["maybe"] == "invalid_candidate"


def test_handmade_invalid_candidate_partner_is_explained(handmade_rever):
    reasons = {r["candidate"]: r["reason"] for r in handmade_rever.rows(
        "select candidate, reason from rejects_rever_judge where id = ?", [INVALID_CANDIDATE_ID])}
    # (found by this test: the partner was 'unexplained', which failed row_accounting_balances
    # and with it the whole build, on one bad candidate value)
    assert reasons == {"maybe": "invalid_candidate", "rejected": "missing_candidate"}, reasons
