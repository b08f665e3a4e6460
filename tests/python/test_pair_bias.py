"""pair_bias_profile, truncation_collapse, their audits and the length-balanced mixture, checked
against an independent Python reading of preference_pairs with the definitions of the docs
(models/docs/cross_dataset.md and the columns' descriptions), not the SQL:

- a response's text: its messages' contents joined by "\\n"; len: its characters;
- format patterns, each read line by line or character by character (no regex): a list item, bold,
  a header, a code fence, a link, an emoji;
- d: the first character where chosen and rejected differ (the shorter one's length when one is
  a prefix of the other); a pair collapses at budget B when len(prompt text) + d >= 4 x B.

The generated data has every case planted (preftools/generate/biases.py): each pattern on each
side and a near miss of each, pairs that collapse at each default budget and pairs that just do not,
and a source whose chosen responses are mostly the longer ones."""

from __future__ import annotations

import math
import shutil
import statistics
from collections import defaultdict

import pytest

from conftest import run_dbt
from preftools.generate import biases as planted

BUDGETS = (512, 1024, 2048, 4096)  # the documented default of the var truncation_budgets
PATTERN_NAMES = ("list", "bold", "header", "code", "link", "emoji")
PLANTED_DATASET = "argilla_ultrafeedback_cleaned"


# ------------------------------------------------------------------ the definitions, in Python
def text(messages) -> str:
    return "\n".join(m["content"] for m in messages if m["content"] is not None)


def has_list(t: str) -> bool:
    for line in t.split("\n"):
        rest = line.lstrip(" ")
        if rest.startswith(("- ", "* ")):
            return True
        digits = len(rest) - len(rest.lstrip("0123456789"))
        if digits and rest[digits:digits + 2] == ". ":
            return True
    return False


def has_bold(t: str) -> bool:
    # `**`, at least one character other than a newline, `**`: two `**` on one line, apart
    for line in t.split("\n"):
        first = line.find("**")
        if first >= 0 and line.find("**", first + 3) >= 0:
            return True
    return False


def has_header(t: str) -> bool:
    for line in t.split("\n"):
        hashes = len(line) - len(line.lstrip("#"))
        if 1 <= hashes <= 6 and line[hashes:hashes + 1] == " ":
            return True
    return False


def has_emoji(t: str) -> bool:
    return any(0x1F300 <= ord(c) <= 0x1FAFF or 0x2600 <= ord(c) <= 0x27BF for c in t)


PATTERNS = {
    "list": has_list,
    "bold": has_bold,
    "header": has_header,
    "code": lambda t: "```" in t,
    "link": lambda t: "http://" in t or "https://" in t,
    "emoji": has_emoji,
}


def first_difference(a: str, b: str) -> int:
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


def clean_pairs(warehouse) -> list[dict]:
    """The clean training pairs of preference_pairs (split not ending in `_flagged`), measured."""
    pairs = []
    for row in warehouse.rows("select * from main.preference_pairs"):
        if row["split"].endswith("_flagged"):
            continue
        chosen, rejected, prompt = text(row["chosen"]), text(row["rejected"]), text(row["prompt"])
        row.update(
            chosen_len=len(chosen), rejected_len=len(rejected), prompt_len=len(prompt),
            d=first_difference(chosen, rejected),
            **{f"chosen_{p}": f(chosen) for p, f in PATTERNS.items()},
            **{f"rejected_{p}": f(rejected) for p, f in PATTERNS.items()},
        )
        pairs.append(row)
    return pairs


def collapses(pair: dict, budget: int) -> bool:
    return pair["prompt_len"] + pair["d"] >= 4 * budget


def profile(pairs: list[dict]) -> dict[tuple, dict]:
    slices = defaultdict(list)
    for p in pairs:
        for kind in ("dataset", "source", "chosen_model"):
            if p[kind] is not None:
                slices[(p["dataset"], kind, p[kind])].append(p)
    out = {}
    for key, group in slices.items():
        n = len(group)
        longer = sum(p["chosen_len"] > p["rejected_len"] for p in group)
        shorter = sum(p["chosen_len"] < p["rejected_len"] for p in group)
        scored = [(p["chosen_len"] - p["rejected_len"], p["margin"]) for p in group if p["margin"] is not None]
        try:
            corr = statistics.correlation([x for x, _ in scored], [y for _, y in scored]) if len(scored) >= 3 else None
        except statistics.StatisticsError:  # no variance on one side
            corr = None
        row = {
            "n_pairs": n, "n_chosen_longer": longer, "n_rejected_longer": shorter,
            "n_equal_length": n - longer - shorter,
            "pct_chosen_longer": 100 * longer / (longer + shorter) if longer + shorter else None,
            "mean_chosen_len": statistics.fmean(p["chosen_len"] for p in group),
            "mean_rejected_len": statistics.fmean(p["rejected_len"] for p in group),
            "length_margin_corr": corr,
        }
        for name in PATTERN_NAMES:
            row[f"pct_chosen_{name}"] = 100 * sum(p[f"chosen_{name}"] for p in group) / n
            row[f"pct_rejected_{name}"] = 100 * sum(p[f"rejected_{name}"] for p in group) / n
        out[key] = row
    return out


def same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


@pytest.fixture(scope="module")
def reference(warehouse):
    return clean_pairs(warehouse)


# ------------------------------------------------------------------ the planted cases occur
def test_every_planted_case_is_in_the_clean_pairs(reference):
    """Each pattern on each side and each near miss, and a pair that collapses at each budget but
    not at the next: otherwise the comparisons below could pass without exercising the rules."""
    planted_pairs = [p for p in reference if p["dataset"] == PLANTED_DATASET]
    for name in PATTERN_NAMES:
        assert any(p[f"chosen_{name}"] for p in planted_pairs), name
        assert any(p[f"rejected_{name}"] for p in planted_pairs), name
        near = [p for p in planted_pairs if planted.NEAR_MISSES[name] in text(p["rejected"])]
        assert near and not any(p[f"rejected_{name}"] for p in near), name
    for budget, following in zip(BUDGETS, BUDGETS[1:] + (None,)):
        assert any(collapses(p, budget) and (following is None or not collapses(p, following))
                   for p in planted_pairs), budget
        # and one that just misses: collapses at none of the budgets from this one up
        assert any(4 * budget - 20 <= p["prompt_len"] + p["d"] < 4 * budget for p in planted_pairs), budget


# ------------------------------------------------------------------ the tables
def test_pair_bias_profile_matches_the_definitions(warehouse, reference):
    expected = profile(reference)
    actual = {(r["dataset"], r["slice_kind"], r["slice"]): r
              for r in warehouse.rows("select * from main.pair_bias_profile")}
    assert sorted(actual) == sorted(expected)
    problems = [
        f"{key} {column}: table {row[column]!r}, reference {value!r}"
        for key, want in expected.items() for column, value in want.items()
        if not same((row := actual[key])[column], value)
    ]
    assert not problems, problems[:10]


def test_truncation_collapse_matches_the_definitions(warehouse, reference):
    by_dataset = defaultdict(list)
    for p in reference:
        by_dataset[p["dataset"]].append(p)
    expected = {
        (dataset, budget): (len(pairs), sum(collapses(p, budget) for p in pairs))
        for dataset, pairs in by_dataset.items() for budget in BUDGETS
    }
    rows = warehouse.rows("select * from main.truncation_collapse")
    actual = {(r["dataset"], r["budget_tokens"]): (r["n_pairs"], r["n_collapsed"]) for r in rows}
    assert actual == expected
    assert all(same(r["pct_collapsed"], 100 * r["n_collapsed"] / r["n_pairs"]) for r in rows)
    assert {r["counted_with"] for r in rows} == {"characters / 4"}


def test_audits_list_what_a_curator_acts_on(warehouse, reference):
    biased = {(r["dataset"], r["slice_kind"], r["slice"])
              for r in warehouse.rows("select * from audits.length_biased_slices")}
    expected = {key for key, r in profile(reference).items()
                if r["n_pairs"] >= 100 and r["pct_chosen_longer"] is not None and r["pct_chosen_longer"] >= 60}
    assert biased == expected
    assert (PLANTED_DATASET, "source", planted.LONGER_SOURCE) in biased  # the planted slice

    collapsed = {r["pair_id"] for r in warehouse.rows("select pair_id from audits.truncation_collapsed_pairs")}
    assert collapsed == {p["pair_id"] for p in reference if collapses(p, BUDGETS[0])}


# ------------------------------------------------------------------ the length-balanced mixture
def test_length_balanced_mixture_takes_equal_numbers_from_each_side(warehouse, reference, tmp_path):
    """From each dataset's draw (the unbalanced mixture of the session build), the first
    chosen-longer and rejected-longer pairs in draw order, as many of each, and every pair of
    equal length."""
    side = {p["pair_id"]: ("chosen" if p["chosen_len"] > p["rejected_len"]
                           else "rejected" if p["chosen_len"] < p["rejected_len"] else "equal") for p in reference}
    draw = defaultdict(list)
    for r in warehouse.rows("select dataset, pair_id from main.training_mixture order by dataset, mixture_rank"):
        draw[r["dataset"]].append(r["pair_id"])
    expected = set()
    for pair_ids in draw.values():
        keep = min(sum(side[i] == "chosen" for i in pair_ids), sum(side[i] == "rejected" for i in pair_ids))
        taken = defaultdict(int)
        for i in pair_ids:
            if side[i] == "equal" or taken[side[i]] < keep:
                expected.add(i)
                taken[side[i]] += 1
    assert any(len(v) for v in draw.values())

    db = tmp_path / "balanced.duckdb"
    for built in warehouse.path.parent.glob(warehouse.path.name + "*"):
        shutil.copy2(built, tmp_path / built.name.replace(warehouse.path.name, db.name))
    run_dbt(["build", "--select", "training_mixture", "rpt_training_mixture",
             "--vars", '{"mixture_length_balanced": true}'], warehouse.raw_dir, db, tmp_path / "work")
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        got = con.execute("select dataset, pair_id from main.training_mixture").fetchall()
        made_up = con.execute("select dataset, n_taken_chosen_longer, n_taken_rejected_longer, length_balanced "
                              "from reporting.rpt_training_mixture").fetchall()
    assert {i for _, i in got} == expected
    assert made_up and all(chosen == rejected and balanced for _, chosen, rejected, balanced in made_up), made_up
