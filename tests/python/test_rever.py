"""ReVeR marts against an independent Python reading of the raw Parquet files.

The rules come from issue 5 and the dataset card, re-implemented here with the ``json`` and
``re`` modules (not from the SQL): the verdict is the JSON of the LAST <judge> block of the
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

import pyarrow.parquet as pq
import pytest

from preftools import contract as C

NUMBERED_LINE = re.compile(r"^[ \t]*[0-9]+\.[ \t]*(.*?)[ \t]*$")
KIND_TAG = re.compile(r"\[([^\[\]]*)\]\s*$")
TOL = 1e-12


# --------------------------------------------------------------------------- raw reading
def _raw_rows(raw_dir: Path, key: str) -> list[dict]:
    """Every raw row with its raw key (file name, 0-based row number in the file)."""
    ds = C.DATASETS_BY_KEY[key]
    rows = []
    for path in sorted(ds.data_dir(raw_dir).glob("*.parquet")):
        for i, row in enumerate(pq.read_table(path).to_pylist()):
            row["source_file"], row["source_row"] = path.name, i
            rows.append(row)
    return rows


class _Invalid(ValueError):
    pass


def _strict_json(text):
    """RFC 8259 JSON or _Invalid: no NaN/Infinity, no trailing commas (json rejects those);
    duplicate object keys are kept as a list of pairs so that they can be detected."""
    if text is None:
        raise _Invalid("null")

    def reject_constant(c):
        raise _Invalid(c)

    try:
        return json.loads(text, object_pairs_hook=lambda pairs: ("__object__", pairs),
                          parse_constant=reject_constant)
    except (json.JSONDecodeError, _Invalid) as e:
        raise _Invalid(str(e)) from None


def _is_object(v) -> bool:
    return isinstance(v, tuple) and len(v) == 2 and v[0] == "__object__"


def _get(obj, key):
    """First value of `key` in a parsed object, None when absent or not an object."""
    if not _is_object(obj):
        return None
    for k, v in obj[1]:
        if k == key:
            return v
    return None


def _as_text(v):
    """A JSON scalar as SQL would read it as text (strings unquoted, numbers as written)."""
    if v is None:
        return None
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return json.dumps(v)
    return None  # objects / arrays as ids never match a rubric id in the generated data


def _kind(criterion: str | None) -> str:
    m = KIND_TAG.search(criterion or "")
    return {"Hard Rule": "hard_rule", "Principle": "principle"}.get(m.group(1) if m else None, "unknown")


# --------------------------------------------------------------------------- the rules
def judge_trajectory(row: dict) -> dict:
    """Parse one raw judge row and score it, independently of the SQL."""
    msgs = row["messages"] or []
    user = next((m["content"] for m in msgs if m["role"] == "user"), None)
    assistants = [m["content"] for m in msgs if m["role"] == "assistant"]
    out = {
        "used_tool": any(m["role"] in ("tool_call", "tool") for m in msgs),
        "n_rubric_items": 0, "hard_rules_satisfied": None, "principle_mean": None, "response_score": None,
        "criteria": None, "instruction": None, "response": None,
    }
    try:
        task = _strict_json(user)
    except _Invalid:
        task = None
    rubrics = _get(task, "rubrics")
    if not isinstance(rubrics, list):
        return {**out, "verdict_status": "malformed_user_message"}
    items = [(_as_text(_get(r, "rubric_id")), _get(r, "criterion")) for r in rubrics]
    out.update(n_rubric_items=len(items), criteria=[c for _, c in items],
               instruction=_get(task, "instruction"), response=_get(task, "response"))
    if not items:
        return {**out, "verdict_status": "no_rubric_items"}

    # a block: the text after a <judge> up to the first </judge> (an unclosed <judge> opens none)
    pieces = assistants[-1].split("<judge>")[1:] if assistants and assistants[-1] is not None else []
    blocks = [p.split("</judge>", 1)[0] for p in pieces if "</judge>" in p]
    out["n_judge_blocks"] = len(blocks)
    if not blocks:
        return {**out, "verdict_status": "no_judge_block"}
    try:
        verdict = _strict_json(blocks[-1].strip())
    except _Invalid:
        return {**out, "verdict_status": "malformed_json"}

    # entries: (rubric_id, entry object) in document order
    if isinstance(verdict, list):
        entries = [(_as_text(_get(e, "rubric_id")), e) for e in verdict]
    elif _is_object(verdict) and len(verdict[1]) == 1 and isinstance(verdict[1][0][1], list):
        entries = [(_as_text(_get(e, "rubric_id")), e) for e in verdict[1][0][1]]
    elif _is_object(verdict):
        entries = list(verdict[1])
    else:
        return {**out, "verdict_status": "unrecognised_shape"}

    ids = [rid for rid, _ in items]
    by_id = defaultdict(list)
    for rid, e in entries:
        by_id[rid].append(e)
    if any(rid not in ids for rid, _ in entries):
        return {**out, "verdict_status": "unknown_rubric_id"}
    if any(len(v) > 1 for v in by_id.values()) or len(set(ids)) != len(ids):
        return {**out, "verdict_status": "duplicate_rubric_id"}
    if any(rid not in by_id for rid in ids):
        return {**out, "verdict_status": "missing_items"}
    kinds = [_kind(c) for _, c in items]
    if "unknown" in kinds:
        return {**out, "verdict_status": "unknown_rubric_kind"}
    scores = [_get(by_id[rid][0], "score") for rid in ids]
    if any(isinstance(s, bool) or not isinstance(s, (int, float)) for s in scores):
        return {**out, "verdict_status": "invalid_score"}
    for k, s in zip(kinds, scores):
        if (k == "hard_rule" and s not in (0, 1)) or (k == "principle" and not (0 <= s <= 100 and s == int(s))):
            return {**out, "verdict_status": "score_out_of_range"}

    hard = sum(1 for k, s in zip(kinds, scores) if k == "hard_rule" and s == 1)
    princ = [s for k, s in zip(kinds, scores) if k == "principle"]
    mean = sum(princ) / len(princ) if princ else None
    return {**out, "verdict_status": "ok", "hard_rules_satisfied": hard, "principle_mean": mean,
            "response_score": hard + (mean / 101 if princ else 0.0)}


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
    traj = {(r["source_file"], r["source_row"]): {**r, **judge_trajectory(r)} for r in judge}
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
        if cs is None or rs is None:
            decided, kept = "unscored", None
        elif c["hard_rules_satisfied"] != r["hard_rules_satisfied"]:
            decided, kept = "hard_rules", cs > rs
        elif (c["principle_mean"] or 0) != (r["principle_mean"] or 0):
            decided, kept = "principles", cs > rs
        else:
            decided, kept = "tie", False
        crit = expected["rubrics"].get(pid)
        # the highest score a side's rubric allows: every Hard Rule satisfied, Principle mean 100
        tops = [sum(_kind(x) == "hard_rule" for x in t["criteria"])
                + (100 / 101 if any(_kind(x) == "principle" for x in t["criteria"]) else 0)
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
    want = {r["id"]: [(c, _kind(c)) for c in rubric_criteria(r)] for r in expected["rubric_rows"]}
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
        draft = judge_trajectory({**raw, "messages": raw["messages"][:-1] + [
            {"role": "assistant", "content": first_only}]})
        assert _close(row["response_score"], raw["response_score"]), row
        n_differ += draft["response_score"] != raw["response_score"]
    assert n_differ > 0  # the planted drafts do change the score, so the check has teeth


def test_summary_tool_rate(warehouse, expected):
    got = {r["source"]: r for r in warehouse.rows("select * from rever_summary")}
    by_source = Counter(t["source"] for t in expected["traj"].values())
    tools = Counter(t["source"] for t in expected["traj"].values() if t["used_tool"])
    for s, n in by_source.items():
        assert got[s]["n_trajectories"] == n
        assert got[s]["n_trajectories_with_tool"] == tools[s]
        assert _close(got[s]["tool_call_rate"], tools[s] / n)
    assert sum(tools.values()) == expected["manifest"]["rever"]["tool_call_trajectories"]
