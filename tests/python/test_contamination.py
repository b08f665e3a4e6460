"""Benchmark decontamination (docs/decontamination.md) against an independent Python reference
written from the doc (tests/python/contamination_reference.py): eval_items, contamination_matches
and contamination_summary row for row, the `eval_contamination` flag in preference_pairs and the
training tables' filters, the generator's planted cases, and the one-line messages for a wrong
eval_sets entry.

The reference itself is checked first, on small hand-made inputs computed from the doc. The
warehouse tests share one build of the session's generated data with examples/eval_sets.yml (and,
through conftest.with_registry, examples/extra_datasets.yml).
"""

from __future__ import annotations

import json
import random
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml

import contamination_reference as ref
from conftest import REGISTRY_VARS, REPO, SCENARIO_BUILD, Warehouse, run_dbt, shared_once

EVAL_SETS_FILE = REPO / "examples" / "eval_sets.yml"
EVAL_VARS: dict = yaml.safe_load(EVAL_SETS_FILE.read_text(encoding="utf-8"))
BUILTIN = ("ultrafeedback", "code_ultrafeedback", "rever")
PLANTED_KINDS = ("exact", "case_punctuation", "inside_longer", "paraphrase_above", "paraphrase_below",
                 "short_inside", "short_scattered", "code")


# ============================================================================ the reference, by hand

def words(k: int, prefix: str = "w") -> list[str]:
    return [f"{prefix}{i}" for i in range(k)]


def verdict(eval_text: str, turn_text: str, n: int = 8, threshold: float = 0.5) -> ref.Verdict:
    return ref.compare(ref.tokens(eval_text), ref.tokens(turn_text), n, threshold)


def one_prompt(*user_texts: str, dataset: str = "d", prompt_id: str = "p") -> dict:
    prompt = []
    for t in user_texts:
        prompt += [{"role": "system", "content": "be brief"}] if not prompt else [{"role": "assistant", "content": "ok"}]
        prompt.append({"role": "user", "content": t})
    return {"dataset": dataset, "prompt_id": prompt_id, "prompt": prompt}


def items(*texts: str, eval_set: str = "bench") -> list[dict]:
    return [{"eval_set": eval_set, "item_id": i, "field": "q", "turn": 0, "text": t,
             "n_tokens": len(ref.tokens(t))} for i, t in enumerate(texts)]


def test_tokens_are_runs_of_letters_and_digits_lower_cased():
    assert ref.tokens("What's 2+2? It's FOUR.") == ["what", "s", "2", "2", "it", "s", "four"]
    assert ref.tokens("snake_case-and-kebab x.y") == ["snake", "case", "and", "kebab", "x", "y"]
    assert ref.tokens("Ünïcödé CAFÉ ٣٤ 東京タワー") == ["ünïcödé", "café", "٣٤", "東京タワー"]
    assert ref.tokens("  ... !!! ") == [] and ref.tokens("") == [] and ref.tokens(None) == []
    assert ref.tokens("½ x²") == ["½", "x²"]  # N* includes No
    assert ref.tokens("e\u0301t\u00e9") == ["e", "t\u00e9"]  # a combining mark (Mn) is not a letter
    # Unicode's simple case mapping, one character to one and without context (str.lower() would
    # give a final sigma ς and İ as i + a combining dot)
    assert ref.tokens("ΟΔΟΣ İ") == ["οδοσ", "i"]


def test_tokens_regex_equals_the_character_rule():
    rng = random.Random(7)
    for _ in range(3000):
        s = "".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(0x80, 0x3400), rng.randrange(0x10000, 0x2FFFF)]))
                    for _ in range(rng.randrange(0, 30)))
        assert ref.tokens(s) == ref.tokens_slow(s), s


def test_ten_tokens_three_overlapping_ngrams():
    """10 tokens: 3 eight-grams (starts 0, 1, 2). Windows 0 and 2 in the turn, not 1: every position
    is inside one of them, so coverage 10/10 and one run of all 10 tokens."""
    e = words(10)
    turn = e[:8] + ["x"] + e[2:]
    assert ref.ngram_windows(e, turn, 8) == [0, 2]
    v = ref.compare(e, turn, 8, 0.5)
    assert v == ref.Verdict(exact=False, matched=True, coverage=1.0, run=(0, 10))
    # only window 0: 8 of 10
    v = ref.compare(e, e[:8] + ["x"], 8, 0.5)
    assert (v.coverage, v.matched, v.run) == (0.8, True, (0, 8))


def test_coverage_threshold_is_strict():
    e = words(20)
    for k, coverage, matched in [(1, 8 / 20, False), (2, 9 / 20, False), (3, 10 / 20, False), (4, 11 / 20, True)]:
        turn = ["a"] + e[:7 + k] + ["b"]  # the first k eight-grams
        v = ref.compare(e, turn, 8, 0.5)
        assert (v.coverage, v.matched) == (coverage, matched), k
    assert ref.compare(e, e[:10], 8, 0.5).coverage == 0.5  # exactly the threshold: no match
    assert not ref.compare(e, e[:10], 8, 0.5).matched


def test_longest_run_and_ties():
    e = words(30)
    # runs 0..8 (9 tokens) and 15..29 (15 tokens): coverage 24/30, the longer run
    turn = e[:9] + ["gap"] + e[15:]
    v = ref.compare(e, turn, 8, 0.5)
    assert (v.coverage, v.run) == (24 / 30, (15, 15))
    # two runs of 10 (0..9 and 20..29): the earliest
    v = ref.compare(e, e[:10] + ["gap"] + e[20:], 8, 0.5)
    assert (v.coverage, v.matched, v.run) == (20 / 30, True, (0, 10))


def test_short_texts_contiguous_or_not():
    v = verdict("What is 2+2?", "So... WHAT is 2 + 2, exactly?")
    assert (v.matched, v.exact, v.coverage, v.run) == (True, False, 1.0, (0, 4))
    v = verdict("What is 2+2?", "what then is it, 2 or 2?")  # every token, scattered
    assert (v.matched, v.coverage, v.run) == (False, 0.0, None)
    v = verdict("is 2", "what is 2 2")
    assert v.matched
    assert not verdict("seven tokens are shorter than eight", "seven tokens are shorter than").matched  # a prefix


def test_exact_ignores_case_and_punctuation():
    v = verdict("Hello, World!", "hello world")
    assert (v.exact, v.matched, v.coverage) == (True, True, 1.0)
    long = "The quick brown fox -- jumps over the lazy dog; twice, at noon."
    v = verdict(long, long.upper().replace(",", "").replace(";", " "))
    assert (v.exact, v.matched, v.coverage, v.run) == (True, True, 1.0, (0, 12))
    assert not verdict(long, long + " again").exact and verdict(long, long + " again").matched


def test_empty_eval_text_never_matches():
    for text in ("", "!!!", None):
        v = ref.compare(ref.tokens(text), [], 8, 0.5)
        assert not v.matched and not v.exact
        assert not ref.compare(ref.tokens(text), ["a"], 8, 0.5).matched


def test_rows_best_over_user_turns_and_the_first_turn_on_ties():
    e = " ".join(words(20))
    half = " ".join(words(20)[:12])  # 12/20 in a later turn
    other = " ".join(words(20)[8:20])  # 12/20 in the first user turn, another run of the same length
    rows = ref.matches(items(e), [one_prompt(other, "unrelated", half)])
    assert rows == [{"dataset": "d", "prompt_id": "p", "eval_set": "bench", "item_id": 0, "field": "q", "turn": 0,
                     "match_kind": "ngram", "coverage": 0.6, "longest_shared_run": other}]
    # the whole text in the last turn: coverage 1, exact, its run
    rows = ref.matches(items(e), [one_prompt(other, e.upper())])
    assert [(r["match_kind"], r["coverage"], r["longest_shared_run"]) for r in rows] == [("exact", 1.0, e)]
    # assistant and system turns are not training texts
    prompt = {"dataset": "d", "prompt_id": "p", "prompt": [{"role": "system", "content": e},
                                                            {"role": "assistant", "content": e},
                                                            {"role": "user", "content": "hi"}]}
    assert ref.matches(items(e), [prompt]) == []


def test_the_longest_run_may_come_from_a_turn_that_does_not_match():
    """The row exists because the first user turn matches (22/40 in runs of 11); the longest run is
    the second turn's 16 tokens (16/40: no match there): "against one user turn", any of them."""
    t1, t2 = words(45, "k"), words(20, "s")
    e = " ".join(t1[0:11] + ["junk"] + t1[20:31] + ["junk"] + t2[0:16])
    [row] = ref.matches(items(e), [one_prompt(" ".join(t1), " ".join(t2))])
    assert (row["coverage"], row["longest_shared_run"]) == (22 / 40, " ".join(t2[0:16]))


def test_a_short_match_in_a_long_prompt_is_ngram_kind():
    rows = ref.matches(items("Name three colors."), [one_prompt("Please name three colors, then stop.")])
    assert [(r["match_kind"], r["coverage"], r["longest_shared_run"]) for r in rows] == [("ngram", 1.0, "name three colors")]


def test_indexed_matches_equal_brute_force():
    rng = random.Random(3)
    vocab = words(5, "v")
    for n in (2, 3, 8):
        eval_rows = []
        for i in range(40):
            for turn in range(rng.choice([1, 1, 2])):
                text = " ".join(rng.choice(vocab) for _ in range(rng.randrange(0, 18)))
                for f in ("a", "b")[:rng.choice([1, 2])]:
                    eval_rows.append({"eval_set": rng.choice(["s1", "s2"]), "item_id": i, "field": f, "turn": turn,
                                      "text": text if f == "a" else text[::-1], "n_tokens": 0})
        pairs = []
        for p in range(30):
            turns = [" ".join(rng.choice(vocab) for _ in range(rng.randrange(0, 25))) for _ in range(rng.randrange(1, 4))]
            if p % 5 == 0:  # an eval text as a whole user turn, upper-cased
                turns.insert(rng.randrange(len(turns) + 1), rng.choice(eval_rows)["text"].upper())
            pairs.append(one_prompt(*turns, prompt_id=f"p{p}"))
        fast = ref.matches(eval_rows, pairs, ngram=n, threshold=0.5)
        assert fast == ref.matches_brute_force(eval_rows, pairs, ngram=n, threshold=0.5), n
        assert fast and any(r["match_kind"] == "exact" for r in fast), n
        assert n == 8 or any(r["coverage"] < 1 for r in fast), n


def test_summary_counts_items_prompts_and_pairs():
    eval_rows = items("alpha beta gamma", "delta epsilon", "zeta eta theta iota")
    pairs = [one_prompt("say alpha beta gamma now", prompt_id="p1"), one_prompt("say alpha beta gamma now", prompt_id="p1"),
             one_prompt("delta epsilon", prompt_id="p2"), one_prompt("nothing here", prompt_id="p3"),
             one_prompt("alpha beta gamma", dataset="e", prompt_id="q1")]
    found = ref.matches(eval_rows, pairs)
    assert {(r["dataset"], r["prompt_id"], r["item_id"], r["match_kind"]) for r in found} == {
        ("d", "p1", 0, "ngram"), ("d", "p2", 1, "exact"), ("e", "q1", 0, "exact")}
    table = ref.summary(eval_rows, found, pairs, ["d", "e", "f"], ["bench", "empty"], max_eval_share=40.0)
    by = {(r["dataset"], r["eval_set"]): r for r in table}
    assert len(table) == 6
    assert by[("d", "bench")] == {"dataset": "d", "eval_set": "bench", "n_eval_items": 3, "n_eval_items_matched": 2,
                                  "pct_eval_set_matched": 100.0 * 2 / 3, "n_prompts_matched": 2, "n_pairs_flagged": 3,
                                  "exceeds_limit": True}
    assert (by[("e", "bench")]["pct_eval_set_matched"], by[("e", "bench")]["exceeds_limit"]) == (100.0 / 3, False)
    assert by[("f", "bench")]["n_eval_items_matched"] == 0 and by[("f", "bench")]["pct_eval_set_matched"] == 0.0
    assert by[("d", "empty")]["n_eval_items"] == 0


def test_eval_items_from_files(tmp_path):
    """Files in path order, rows in file order; a list field one text per element, NULL and [] one
    NULL text; every field of the entry in its order; the entry's splits only."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    repo = tmp_path / "org" / "bench" / "data"
    repo.mkdir(parents=True)
    schema = pa.schema([("q", pa.string()), ("turns", pa.list_(pa.string()))])
    pq.write_table(pa.table({"q": ["B0", None], "turns": [["t0", "t1"], []]}, schema=schema),
                   repo / "test-00001-of-00002.parquet")
    pq.write_table(pa.table({"q": ["A0"], "turns": [None]}, schema=schema), repo / "test-00000-of-00002.parquet")
    pq.write_table(pa.table({"q": ["X"], "turns": [["x"]]}, schema=schema), repo / "train-00000-of-00001.parquet")
    entry = {"name": "bench", "hub_id": "org/bench", "splits": ["test"], "fields": ["turns", "q"]}
    got = [(r["item_id"], r["field"], r["turn"], r["text"], r["n_tokens"]) for r in ref.eval_items([entry], tmp_path)]
    assert got == [(0, "turns", 0, None, 0), (0, "q", 0, "A0", 1),
                   (1, "turns", 0, "t0", 1), (1, "turns", 1, "t1", 1), (1, "q", 0, "B0", 1),
                   (2, "turns", 0, None, 0), (2, "q", 0, None, 0)]
    # JSON Lines at the repo root, every split (the default pattern's train)
    root = tmp_path / "org" / "lines"
    root.mkdir(parents=True)
    (root / "input_data.jsonl").write_text('{"prompt": "Write a poem."}\n{"prompt": "Hi, you!"}\n')
    entry = {"name": "lines", "hub_id": "org/lines", "fields": ["prompt"]}
    assert [(r["item_id"], r["text"], r["n_tokens"]) for r in ref.eval_items([entry], tmp_path)] == [
        (0, "Write a poem.", 3), (1, "Hi, you!", 2)]


# ============================================================================ the warehouse

def _build(raw_dir: Path, folder: Path) -> None:
    vars_ = {"eval_sets": EVAL_VARS["eval_sets"], "contamination": EVAL_VARS.get("contamination", {})}
    result = run_dbt([*SCENARIO_BUILD, "--vars", json.dumps(vars_)], raw_dir, folder / "warehouse.duckdb", folder,
                     check=False)
    (folder / "build.log").write_text(result.output, encoding="utf-8")
    (folder / "build.rc").write_text(str(result.returncode), encoding="utf-8")


@pytest.fixture(scope="module")
def built(raw_dir, tmp_path_factory) -> tuple[Warehouse, int, str]:
    """(warehouse, dbt's exit code, its output): one build of the session's generated data with
    examples/eval_sets.yml, shared by the xdist workers; each worker reads its own copy."""
    work = tmp_path_factory.mktemp("contamination")
    shared = shared_once(tmp_path_factory, "shared_contamination", lambda folder: _build(raw_dir, folder))
    if shared is None:
        _build(raw_dir, work)
    else:
        for f in shared.iterdir():
            if f.is_file():
                shutil.copy2(f, work / f.name)
    rc = int((work / "build.rc").read_text())
    return Warehouse(work / "warehouse.duckdb", raw_dir, work), rc, (work / "build.log").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def wh(built) -> Warehouse:
    warehouse, rc, output = built
    if not warehouse.path.exists():
        pytest.fail(f"the build made no warehouse (exit {rc}):\n{output[-6000:]}")
    return warehouse


@pytest.fixture(scope="module")
def pairs(wh) -> list[dict]:
    return wh.rows("select dataset, pair_id, prompt_id, prompt, split, integrity_flags, is_flagged from main.preference_pairs")


@pytest.fixture(scope="module")
def summary_datasets(wh) -> list[str]:
    """Every registered dataset (meta.extra_datasets) and the enabled built-in groups."""
    extra = [r["dataset"] for r in wh.rows("select dataset from meta.extra_datasets order by registry_order")]
    enabled = wh.scalar("select datasets from meta.warehouse_build_info").split(",")
    return [d for d in BUILTIN if d in enabled] + extra


@pytest.fixture(scope="module")
def reference(wh, pairs, summary_datasets) -> ref.Expected:
    return ref.expected(wh.raw_dir, EVAL_VARS["eval_sets"], EVAL_VARS.get("contamination"), pairs, summary_datasets)


@pytest.fixture(scope="module")
def manifest(raw_dir) -> dict:
    return json.loads((Path(raw_dir) / "_generator_manifest.json").read_text(encoding="utf-8"))


def _diff(got: list[dict], want: list[dict], key: tuple, columns: tuple, limit: int = 20) -> list[str]:
    """Lines naming each key missing, unexpected or differing in a column (exact comparison)."""
    g = {tuple(r[k] for k in key): r for r in got}
    w = {tuple(r[k] for k in key): r for r in want}
    assert len(g) == len(got), "repeated keys in the warehouse"
    out = [f"missing {k}: want {dict((c, w[k][c]) for c in columns if c not in key)}" for k in sorted(w.keys() - g.keys(), key=str)]
    out += [f"unexpected {k}: {dict((c, g[k][c]) for c in columns if c not in key)}" for k in sorted(g.keys() - w.keys(), key=str)]
    for k in sorted(g.keys() & w.keys(), key=str):
        for c in columns:
            if g[k][c] != w[k][c]:
                out.append(f"{k} {c}: got {g[k][c]!r}, want {w[k][c]!r}")
    return out[:limit] + ([f"... {len(out) - limit} more"] if len(out) > limit else [])


@pytest.mark.slow
def test_the_build_succeeds(built):
    _, rc, output = built
    assert rc == 0, output[-6000:]
    assert "Traceback" not in output


@pytest.mark.slow
def test_the_warning_names_the_table_and_the_var(wh, built):
    """Beside the warning of contamination_within_limit (between its START and WARN lines): the
    table whose rows it counts, as a query that gives that count, and the var that sets the limit."""
    lines = ANSI.sub("", built[2]).splitlines()
    start = next(i for i, line in enumerate(lines) if "START test contamination_within_limit" in line)
    warn = next(i for i, line in enumerate(lines) if re.search(r"WARN \d+ contamination_within_limit", line))
    n_warned = int(re.search(r"WARN (\d+) contamination_within_limit", lines[warn]).group(1))
    assert n_warned > 0  # the build's eval sets are over the limit (the generator plants them)
    beside = "\n".join(lines[start:warn])
    limit = ref.settings(EVAL_VARS.get("contamination"))["max_eval_share"]
    assert f"var contamination's max_eval_share = {limit}" in beside, beside
    table, where = re.search(r"read them in (\S+) where (\w+)", beside).groups()
    assert (table, where) == ("main.contamination_summary", "exceeds_limit")
    assert wh.scalar(f"select count(*) from {table} where {where}") == n_warned


@pytest.mark.slow
def test_eval_items_equal_the_reference(wh, reference):
    got = wh.rows(f"select {', '.join(ref.EVAL_ITEM_COLUMNS)} from main.eval_items")
    diffs = _diff(got, reference.eval_items, ("eval_set", "item_id", "field", "turn"), ref.EVAL_ITEM_COLUMNS)
    assert not diffs, "\n".join(diffs)
    # every eval set of the entry has items (the generator writes stand-ins of all seven)
    assert {r["eval_set"] for r in reference.eval_items} == {e["name"] for e in EVAL_VARS["eval_sets"]}


@pytest.mark.slow
def test_matches_equal_the_reference(wh, reference, pairs):
    got = wh.rows(f"select {', '.join(ref.MATCH_COLUMNS)} from main.contamination_matches")
    diffs = _diff(got, reference.matches, ref.MATCH_KEY, ref.MATCH_COLUMNS)
    if diffs:  # each differing key with the reference's verdict per user turn
        prompts = {(p["dataset"], p["prompt_id"]): p["prompt"] for p in pairs}
        conf = ref.settings(EVAL_VARS.get("contamination"))
        for line in list(diffs[:5]):
            m = re.search(r"\('([^']*)', '([^']*)', '([^']*)', (\d+), '([^']*)', (\d+)\)", line)
            if m:
                d, p, s, i, f, t = m.groups()
                diffs.append(f"  {(d, p, s, i, f, t)} by user turn: "
                             f"{ref.explain(reference.eval_items, (s, int(i), f, int(t)), prompts.get((d, p)), **conf)}")
    assert not diffs, f"{len(got)} rows, {len(reference.matches)} expected:\n" + "\n".join(diffs)
    assert reference.matches, "nothing matches: the comparison is vacuous"
    kinds = Counter(r["match_kind"] for r in reference.matches)
    assert kinds["exact"] and kinds["ngram"], kinds


@pytest.mark.slow
def test_summary_equals_the_reference(wh, reference, summary_datasets):
    got = wh.rows(f"select {', '.join(ref.SUMMARY_COLUMNS)} from main.contamination_summary")
    want = reference.summary
    assert len(want) == len(summary_datasets) * len(EVAL_VARS["eval_sets"])
    # pct: the same division in another order may differ in the last bit
    for r in got:
        w = next((x for x in want if (x["dataset"], x["eval_set"]) == (r["dataset"], r["eval_set"])), None)
        if w and r["pct_eval_set_matched"] is not None and w["pct_eval_set_matched"] is not None \
                and abs(r["pct_eval_set_matched"] - w["pct_eval_set_matched"]) <= 1e-9:
            r["pct_eval_set_matched"] = w["pct_eval_set_matched"]
    diffs = _diff(got, want, ("dataset", "eval_set"), ref.SUMMARY_COLUMNS, limit=40)
    assert not diffs, "\n".join(diffs)
    assert any(r["n_eval_items_matched"] for r in want)


@pytest.mark.slow
def test_flagged_pairs_are_the_matched_prompts(wh, pairs, reference):
    """eval_contamination on exactly the pairs of a matched (dataset, prompt_id); none of them in a
    training split, the training mixture or a training table's documented filter."""
    flagged = [p for p in pairs if "eval_contamination" in p["integrity_flags"]]
    got = {(p["dataset"], p["prompt_id"]) for p in flagged}
    assert got == reference.flagged, {"missing": sorted(reference.flagged - got)[:10],
                                      "unexpected": sorted(got - reference.flagged)[:10]}
    in_matches = {(r["dataset"], r["prompt_id"]) for r in wh.rows("select distinct dataset, prompt_id from main.contamination_matches")}
    assert got == in_matches
    assert sum((p["dataset"], p["prompt_id"]) in reference.flagged for p in pairs) == len(flagged)  # every pair of the prompt
    for p in flagged:
        assert p["is_flagged"] and p["split"] == p["dataset"] + "_flagged", (p["dataset"], p["pair_id"], p["split"])
    assert flagged and len({p["dataset"] for p in flagged}) > 1
    flagged_ids = [p["pair_id"] for p in flagged]
    assert wh.scalar("select count(*) from main.training_mixture where list_contains(?::varchar[], pair_id)",
                     [flagged_ids]) == 0
    uf = sorted(pid for d, pid in reference.flagged if d == "ultrafeedback")
    cuf = sorted(pid for d, pid in reference.flagged if d == "code_ultrafeedback")
    rever = sorted(pid for d, pid in reference.flagged if d == "rever")
    assert uf and cuf, "the planted contamination reaches both built-in training tables"

    def count(sql: str, ids: list[str]) -> int:
        return wh.scalar(sql.replace("IDS", "?::varchar[]"), [ids]) if ids else 0

    # the documented filters (docs/training.md): ultrafeedback_curated `has_pair and not is_flagged`,
    # code_ultrafeedback_pairs `not is_flagged`, rever_pairs `kept and not is_flagged`
    assert count("select count(*) from main.ultrafeedback_curated where has_pair and not is_flagged"
                 " and list_contains(IDS, prompt_id)", uf) == 0
    assert count("select count(*) from main.ultrafeedback_curated where has_pair and list_contains(IDS, prompt_id)"
                 " and not list_contains(integrity_flags, 'eval_contamination')", uf) == 0
    assert count("select count(*) from main.code_ultrafeedback_pairs where not is_flagged"
                 " and list_contains(IDS, prompt_id)", cuf) == 0
    assert count("select count(*) from main.code_ultrafeedback_pairs where list_contains(IDS, prompt_id)"
                 " and not list_contains(integrity_flags, 'eval_contamination')", cuf) == 0
    assert count("select count(*) from main.rever_pairs where kept and not is_flagged and list_contains(IDS, id)", rever) == 0


@pytest.mark.slow
def test_contaminated_pairs_audit_lists_every_flagged_pair(wh, pairs):
    flagged = {p["pair_id"] for p in pairs if "eval_contamination" in p["integrity_flags"]}
    audited = {r["pair_id"] for r in wh.rows("select distinct pair_id from audits.contaminated_pairs")}
    assert audited == flagged


# ------------------------------------------------------------------------------ the planted cases

def _entries() -> dict[str, dict]:
    return {e["name"]: e for e in REGISTRY_VARS["extra_datasets"]}


def _raw_row_prompt_ids(wh: Warehouse, dataset: str) -> dict[tuple[str, int], str]:
    """(file name, 0-based row) -> the prompt_id preference_pairs gives that raw row's pairs."""
    if dataset == "ultrafeedback":
        rows = wh.rows("select source_file, source_row, prompt_id from main.ultrafeedback_curated")
    elif dataset == "code_ultrafeedback":
        rows = wh.rows("select source_file, source_row, prompt_id from main.code_ultrafeedback_prompts")
    elif dataset == "rever":
        rows = wh.rows("select distinct source_file, source_row, id as prompt_id from main.rever_trajectories")
    else:
        import extra_reference

        return {(name, i): key for name, i, _row, key in extra_reference.entry_rows(_entries()[dataset], wh.raw_dir)}
    return {(Path(r["source_file"]).name, r["source_row"]): r["prompt_id"] for r in rows}


@pytest.fixture(scope="module")
def planted(wh, manifest, pairs) -> list[tuple[dict, str | None]]:
    """Each planted case of the manifest with the prompt_id its training row has in preference_pairs
    (None: the row has no pair there)."""
    cases = manifest.get("contamination") or []
    in_pairs = {(p["dataset"], p["prompt_id"]) for p in pairs}
    by_dataset = {d: _raw_row_prompt_ids(wh, d) for d in {c["dataset"] for c in cases}}
    out = []
    for c in cases:
        pid = by_dataset[c["dataset"]].get((Path(c["file"]).name, c["row"]))
        out.append((c, pid if (c["dataset"], pid) in in_pairs else None))
    return out


@pytest.mark.slow
def test_planted_cases_cover_every_kind(manifest):
    cases = manifest.get("contamination") or []
    assert cases, "the generator's manifest lists no planted contamination"
    assert set(PLANTED_KINDS) <= {c["kind"] for c in cases}, Counter(c["kind"] for c in cases)
    assert {c["dataset"] for c in cases} & set(_entries()), "no case planted in a registered dataset"
    assert {c["eval_set"] for c in cases} <= {e["name"] for e in EVAL_VARS["eval_sets"]}
    assert {True, False} <= {c["expect_match"] for c in cases}
    sets = manifest.get("eval_sets")
    assert sets, "the manifest lists no eval set stand-ins"


@pytest.mark.slow
def test_planted_cases_get_their_verdict(wh, planted, reference):
    reached = [(c, pid) for c, pid in planted if pid is not None]
    assert len(reached) * 2 > len(planted), f"only {len(reached)} of {len(planted)} planted rows have a pair"
    assert {c["kind"] for c, _ in reached} >= set(PLANTED_KINDS), Counter(c["kind"] for c, _ in reached)
    assert {c["dataset"] for c, _ in reached} & set(_entries()), "no planted registered-dataset row has a pair"
    got = {tuple(r[k] for k in ref.MATCH_KEY): r for r in wh.rows("select * from main.contamination_matches")}
    want = {tuple(r[k] for k in ref.MATCH_KEY) for r in reference.matches}
    wrong = []
    for c, pid in reached:
        key = (c["dataset"], pid, c["eval_set"], c["item_id"], _field(c), c["turn"])
        if (key in got) != c["expect_match"] or (key in want) != c["expect_match"]:
            wrong.append(f"{c['kind']} {c['dataset']} {c['file']}:{c['row']} -> {c['eval_set']} item {c['item_id']} "
                         f"turn {c['turn']}: expect_match {c['expect_match']}, warehouse {key in got}, reference {key in want}")
    assert not wrong, "\n".join(wrong)
    # the exact kinds are exact, the others not
    for c, pid in reached:
        row = got.get((c["dataset"], pid, c["eval_set"], c["item_id"], _field(c), c["turn"]))
        if row and c["kind"] in ("exact", "case_punctuation"):
            assert row["match_kind"] == "exact", (c, row)


def _field(case: dict) -> str:
    """The field of a planted case: its own, else its eval set's only field."""
    if "field" in case:
        return case["field"]
    (only,) = next(e for e in EVAL_VARS["eval_sets"] if e["name"] == case["eval_set"])["fields"]
    return only


# ------------------------------------------------------------------------------ a wrong entry

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _entry(which: str, **change) -> dict:
    e = dict(next(e for e in EVAL_VARS["eval_sets"] if e["name"] == which))
    for k, v in change.items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    return e


def _non_text_column(raw_dir: Path) -> tuple[str, str]:
    """(eval set, column) of a stand-in's column that is neither a string nor a list of strings."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for e in EVAL_VARS["eval_sets"]:
        for path in ref.eval_set_files(e, raw_dir):
            if path.suffix != ".parquet":
                continue
            for f in pq.read_schema(path):
                text = pa.types.is_string(f.type) or pa.types.is_large_string(f.type) or (
                    pa.types.is_list(f.type) and pa.types.is_string(f.type.value_type))
                if not text:
                    return e["name"], f.name
    pytest.skip("no stand-in has a column that is not text")


def _columns(raw_dir: Path, name: str) -> list[str]:
    import pyarrow.parquet as pq

    e = _entry(name)
    path = ref.eval_set_files(e, raw_dir)[0]
    return pq.read_schema(path).names if path.suffix == ".parquet" else list(ref.read_rows(path)[0])


def _bad_cases(raw_dir: Path) -> dict[str, tuple[dict, list[str], list[str]]]:
    """case -> (entry, what the line must name (all), the fix (one of))."""
    non_text_set, non_text_column = _non_text_column(raw_dir)
    return {
        "missing_field": (_entry("truthfulqa", fields=["no_such_field"]), ["truthfulqa", "fields", "no_such_field"],
                          _columns(raw_dir, "truthfulqa") + ["column"]),
        "not_text": (_entry(non_text_set, fields=[non_text_column]), [non_text_set, "fields", non_text_column],
                     ["string", "text"]),
        "missing_folder": (_entry("gsm8k", hub_id="nobody/no_such_eval"), ["gsm8k", "hub_id", "nobody/no_such_eval"],
                           ["fetch"]),
    }


@pytest.mark.slow
# the rules that need the files; the others: test_the_entry_rules (a run-operation, no build)
@pytest.mark.parametrize("case", ["missing_field", "not_text", "missing_folder"])
def test_a_wrong_entry_stops_the_build_with_one_line(case, raw_dir, tmp_path):
    entry, names, fixes = _bad_cases(raw_dir)[case]
    vars_ = {"eval_sets": [entry], "contamination": EVAL_VARS.get("contamination", {})}
    result = run_dbt(["build", "--select", "+eval_items", "--vars", json.dumps(vars_)], raw_dir, tmp_path / "wh.duckdb",
                     tmp_path, check=False)
    out = ANSI.sub("", result.output)
    assert result.returncode != 0, out[-3000:]
    assert "Traceback" not in out
    lines = {line.strip() for line in out.splitlines() if all(n in line for n in names)}
    assert len(lines) == 1, f"want one line naming {names}:\n{out[-3000:]}"
    (line,) = lines
    assert any(f in line for f in fixes), f"the line names no fix ({fixes}): {line}"


# Entries, each with what its problem names (None: valid); only rules the doc states: the keys of an
# entry, a snake_case name that names the set in every table (so once), the fields to read.
ENTRY_CASES = [
    ([_entry("truthfulqa")], None),
    (EVAL_VARS["eval_sets"], None),
    ([_entry("truthfulqa", extra=1)], "extra"),
    ([_entry("truthfulqa", name="TruthfulQA")], "name"),
    ([_entry("truthfulqa", name="truthful-qa")], "name"),
    ([_entry("truthfulqa", fields=[])], "fields"),
    ([_entry("truthfulqa", fields=None)], "fields"),
    ([_entry("truthfulqa"), _entry("truthfulqa")], "name"),
    (["truthfulqa"], ""),
]


def test_the_entry_rules(tmp_path):
    """The eval_sets run-operation's verdict on entries that need no data: ok, or a line naming the key."""
    from conftest import operation_cases

    verdicts = operation_cases("eval_sets_cases", [c for c, _ in ENTRY_CASES], "registry case", tmp_path)
    for (case, key), verdict in zip(ENTRY_CASES, verdicts):
        if key is None:
            assert verdict == "ok", (case, verdict)
        else:
            assert verdict != "ok" and key in verdict, (case, key, verdict)
