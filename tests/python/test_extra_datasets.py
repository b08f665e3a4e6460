"""The extra datasets (the `extra_datasets` registry, examples/extra_datasets.yml) against an
independent Python reference written from the team's spec (tests/python/extra_reference.py):
every pair of preference_pairs column by column, the flags and splits, the margins, the rejected
rated rows, row_accounting's block per entry and the training_mixture mart; and that every planted
quirk occurs in the generated data, so that none of this passes vacuously.

The reference itself is checked first, on small hand-made rows written from the spec.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import pytest
import yaml

import extra_reference as ref
import near_duplicates_reference
from extra_reference import assistant, message, user

REPO = Path(__file__).resolve().parents[2]
REGISTRY_FILE = REPO / "examples" / "extra_datasets.yml"
TOL = 1e-9


# ============================================================================ the reference, by hand

def entry(shape, columns, **kw):
    return {"name": "demo", "hub_id": "org/demo", "shape": shape, "columns": columns, **kw}


def turns(*pairs):
    return [message(role, content) for role, content in pairs]


def finished(e, pairs, earlier=frozenset()):
    ref.finish_pairs(pairs, e, set(earlier), train_on_flagged_pairs=False, other_flags={})
    return pairs


def test_content_key_is_what_was_judged():
    e = entry("preference", {"prompt": "p", "chosen": "c", "rejected": "r", "chosen_score": "cs"})
    row = {"p": "Hi?", "c": "Hello", "r": "Go away", "cs": "5"}
    key = ref.content_key(row, e)
    assert ref.content_key({**row, "cs": "1"}, e) == key  # a score is not what the row is about
    assert ref.content_key({**row, "c": "Go away", "r": "Hello"}, e) == key  # a swapped pair keeps it
    assert ref.content_key({**row, "p": "Hi!"}, e) != key and ref.content_key({**row, "r": "Bye"}, e) != key


# ------------------------------------------------------------------------- the registry's rules
# Entries, each with the key its problem names (None: valid). The build (macros/extra_datasets.sql)
# and the fetcher (preftools/inputs/registry.py) check entries each on its own (the fetcher runs before
# any dbt); both must give the same verdict.
def _h4(**change):
    entry = dict(next(e for e in yaml.safe_load(REGISTRY_FILE.read_text())["extra_datasets"] if e["name"] == "h4_ultrafeedback"))
    return {k: v for k, v in {**entry, **change}.items() if v is not None}


H4_COLUMNS = _h4()["columns"]
REGISTRY_CASES = [
    *[([e], None) for e in yaml.safe_load(REGISTRY_FILE.read_text())["extra_datasets"]],
    ([_h4(shape="pairs")], "shape"),
    ([_h4(hub_id="ultrafeedback_binarized")], "hub_id"),
    ([_h4(name="ultrafeedback")], "name"),
    ([_h4(name="H4")], "name"),
    ([_h4(name="h4_flagged")], "name"),
    ([_h4(name="h4", extra_key=1)], "extra_key"),
    ([_h4(columns=None, colums=H4_COLUMNS)], "unknown key colums: did you mean columns?"),
    ([_h4(columns={**H4_COLUMNS, "chosen_scor": "x"})], "`columns` maps chosen_scor, not a canonical name of shape preference: did you mean chosen_score?"),
    ([_h4(columns={"chosen": "chosen"})], "columns"),
    ([_h4(columns={**H4_COLUMNS, "chosen_text": "x"})], "columns"),
    ([_h4(columns={**H4_COLUMNS, "chosen": 3})], "columns"),
    ([_h4(columns={k: v for k, v in H4_COLUMNS.items() if k != "rejected_score"})], "chosen_score"),
    ([_h4(score_range=None)], "score_range"),
    ([_h4(score_range=[10, 1])], "score_range"),
    ([_h4(score_range=[True, 10])], "score_range"),
    ([_h4(splits="train_prefs")], "splits"),
    ([_h4(splits=[])], "splits"),
    ([_h4(config="")], "config"),
    ([_h4(config=3)], "config"),
    ([_h4(pairing="all_pairs")], "pairing"),
    ([_h4(), _h4()], "name"),
    (["h4"], "mapping"),
]


def test_the_build_and_the_fetcher_judge_entries_alike(tmp_path):
    from conftest import operation_cases
    from preftools.inputs import registry

    build = operation_cases("extra_datasets_cases", [c for c, _ in REGISTRY_CASES], "registry case", tmp_path)
    for i, (case, key) in enumerate(REGISTRY_CASES):
        try:
            registry.extra_datasets({"extra_datasets": case})
            fetcher = "ok"
        except ValueError as exc:
            fetcher = str(exc)
        for who, verdict in (("build", build[i]), ("fetcher", fetcher)):
            if key is None:
                assert verdict == "ok", (who, case, verdict)
            else:
                assert verdict != "ok" and key in verdict and "extra_datasets entry" in verdict, (who, case, verdict)


@pytest.mark.parametrize("value, want", [
    (4, 4.0), (4.5, 4.5), ("4", 4.0), (" 4.5 ", 4.5), ("-1", -1.0), ("1e0", 1.0), ("+2", 2.0), (".5", 0.5),
    ("N/A", None), ("", None), ("  ", None), ("four", None), ("4 stars", None), (None, None), (True, None),
])
def test_parse_score(value, want):
    assert ref.parse_score(value) == want


def test_preference_mapped_string_prompt_and_string_responses():
    e = entry("preference", {"prompt": "p", "chosen": "c", "rejected": "r"})
    assert ref.preference_messages({"p": "Hi?", "c": "Hello", "r": "Go away"}, e) == (
        user("Hi?"), assistant("Hello"), assistant("Go away"))


def test_preference_h4_prompt_turns_are_stripped():
    """H4 layout: prompt a string, chosen/rejected [user prompt, assistant answer] lists."""
    e = entry("preference", {"prompt": "prompt", "chosen": "chosen", "rejected": "rejected"})
    row = {
        "prompt": "What is 2+2?",
        "chosen": [{"role": "user", "content": "What is 2+2?"}, {"role": "assistant", "content": "4"}],
        # the repeated prompt differs (trailing space): not stripped
        "rejected": [{"role": "user", "content": "What is 2+2? "}, {"role": "assistant", "content": "5"}],
    }
    prompt, chosen, rejected = ref.preference_messages(row, e)
    assert prompt == user("What is 2+2?")
    assert chosen == assistant("4")
    assert rejected == turns(("user", "What is 2+2? "), ("assistant", "5"))


def test_preference_list_prompt_stripped_only_when_all_its_turns_lead():
    e = entry("preference", {"prompt": "prompt", "chosen": "chosen", "rejected": "rejected"})
    prompt = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Name a colour."}]
    row = {
        "prompt": prompt,
        "chosen": prompt + [{"role": "assistant", "content": "Red."}],
        "rejected": prompt[1:] + [{"role": "assistant", "content": "Colours are..."}],  # system turn missing
    }
    p, chosen, rejected = ref.preference_messages(row, e)
    assert p == turns(("system", "Be brief."), ("user", "Name a colour."))
    assert chosen == assistant("Red.")
    assert rejected == turns(("user", "Name a colour."), ("assistant", "Colours are..."))


def test_implicit_prompt_with_system_turn_and_several_turns():
    """Prompt = chosen up to the last user turn of the shared prefix (system turn included)."""
    e = entry("preference", {"chosen": "chosen", "rejected": "rejected"})
    shared = [("system", "You are terse."), ("user", "Hi"), ("assistant", "Hello."), ("user", "Joke?")]
    row = {
        "chosen": [{"role": r, "content": c} for r, c in shared + [("assistant", "Knock knock.")]],
        "rejected": [{"role": r, "content": c} for r, c in shared + [("assistant", "No.")]],
    }
    prompt, chosen, rejected = ref.preference_messages(row, e)
    assert prompt == turns(*shared)
    assert chosen == assistant("Knock knock.")
    assert rejected == assistant("No.")


def test_implicit_prompt_stops_at_last_user_turn_of_the_prefix():
    """The responses share an assistant turn after the last user turn: it stays in the responses."""
    chosen = turns(("user", "Q"), ("assistant", "Well,"), ("user", "go on"), ("assistant", "yes"))
    rejected = turns(("user", "Q"), ("assistant", "Well,"), ("assistant", "no"))
    assert ref.implicit_prompt_lists(chosen, rejected) == (
        turns(("user", "Q")), turns(("assistant", "Well,"), ("user", "go on"), ("assistant", "yes")),
        turns(("assistant", "Well,"), ("assistant", "no")))
    # the shared prefix ends in a user turn's assistant answer, and later turns differ
    chosen = turns(("user", "A"), ("assistant", "B"), ("user", "C"), ("assistant", "D"))
    rejected = turns(("user", "A"), ("assistant", "B"), ("user", "C"), ("assistant", "E"))
    assert ref.implicit_prompt_lists(chosen, rejected) == (chosen[:3], chosen[3:], rejected[3:])


def test_implicit_prompt_without_user_turn_in_the_prefix():
    chosen = turns(("system", "S"), ("assistant", "x"))
    rejected = turns(("system", "S"), ("assistant", "y"))
    assert ref.implicit_prompt_lists(chosen, rejected) == ([], chosen, rejected)
    # nothing shared at all
    chosen, rejected = turns(("user", "a")), turns(("user", "b"))
    assert ref.implicit_prompt_lists(chosen, rejected) == ([], chosen, rejected)


def test_implicit_prompt_strings_and_the_space_rule():
    e = entry("preference", {"chosen": "c", "rejected": "r"})
    # common prefix "Q: what? A: " ends in a space: the space goes to the responses
    assert ref.preference_messages({"c": "Q: what? A: yes", "r": "Q: what? A: no"}, e) == (
        user("Q: what? A:"), assistant(" yes"), assistant(" no"))
    # the common prefix runs into the answers ("Q? Th" of "There"/"They"): cut there, no space rule
    assert ref.preference_messages({"c": "Q? There", "r": "Q? They"}, e) == (
        user("Q? The"), assistant("re"), assistant("y"))
    # nothing in common: an empty user prompt, the whole strings as responses
    assert ref.preference_messages({"c": "abc", "r": "xyz"}, e) == (user(""), assistant("abc"), assistant("xyz"))
    # one string a prefix of the other
    assert ref.preference_messages({"c": "Hi there", "r": "Hi"}, e) == (user("Hi"), assistant(" there"), assistant(""))


def test_parse_transcript():
    text = "\n\nHuman: What's up?  \n\nAssistant:  Not much.\n\nHuman: ok\n\nAssistant: Bye"
    assert ref.parse_transcript(text) == turns(
        ("user", "What's up?"), ("assistant", "Not much."), ("user", "ok"), ("assistant", "Bye"))
    # text before the first marker is a user turn when not blank
    assert ref.parse_transcript("Context here\n\nAssistant: Hi") == turns(("user", "Context here"), ("assistant", "Hi"))
    assert ref.parse_transcript("  \n\nHuman: Hi\n\nAssistant:") == turns(("user", "Hi"), ("assistant", ""))
    # a marker without its blank line is text
    assert ref.parse_transcript("\n\nHuman: say Assistant: hi\nHuman: x") == turns(("user", "say Assistant: hi\nHuman: x"))
    assert ref.parse_transcript(None) == []


def test_transcript_pair_hh_rlhf():
    e = entry("transcript", {"chosen": "chosen", "rejected": "rejected"})
    row = {
        "chosen": "\n\nHuman: Hi\n\nAssistant: Hello!\n\nHuman: Tell me a fact.\n\nAssistant: Water is wet.",
        "rejected": "\n\nHuman: Hi\n\nAssistant: Hello!\n\nHuman: Tell me a fact.\n\nAssistant: No.",
    }
    pairs, rejects = ref.transcript_pairs(e, [("train.jsonl.gz", 0, row, "P0")])
    [pair] = finished(e, pairs)
    assert rejects == []
    assert pair["prompt"] == turns(("user", "Hi"), ("assistant", "Hello!"), ("user", "Tell me a fact."))
    assert pair["chosen"] == assistant("Water is wet.") and pair["rejected"] == assistant("No.")
    assert pair["prompt_id"] == "P0" and pair["pair_id"] == ref.md5("demo:P0")
    assert (pair["margin"], pair["score_margin"], pair["chosen_score"], pair["integrity_flags"]) == (None, None, None, [])
    assert pair["split"] == "demo"


def test_completion_rating_mean_of_valid_values():
    paths = ["annotations.helpfulness.Rating", "annotations.honesty.Rating"]
    c = {"annotations": {"helpfulness": {"Rating": "4"}, "honesty": {"Rating": "5"}}}
    assert ref.completion_rating(c, paths, [1, 5]) == 4.5
    c = {"annotations": {"helpfulness": {"Rating": "N/A"}, "honesty": {"Rating": 3}}}
    assert ref.completion_rating(c, paths, [1, 5]) == 3.0
    c = {"annotations": {"helpfulness": {"Rating": "7"}, "honesty": None}}  # out of range, missing
    assert ref.completion_rating(c, paths, [1, 5]) is None
    c = {"annotations": {"helpfulness": {"Rating": "0"}, "honesty": {"Rating": " 2 "}}}
    assert ref.completion_rating(c, paths, [1, 5]) == 2.0


def rated_entry(pairing="best_vs_lower"):
    return entry("rated_completions", {
        "prompt": "instruction", "completions": "completions", "response": "response", "model": "model",
        "source": "source", "rating": ["a.x.Rating", "a.y.Rating"]}, score_range=[1, 5], pairing=pairing)


def completion(model, response, *ratings):
    return {"model": model, "response": response,
            "a": {k: {"Rating": v} for k, v in zip("xy", ratings)}}


def test_rated_best_vs_lower_draw():
    e = rated_entry()
    row = {"instruction": "Q", "source": "s", "completions": [
        completion("m0", "r0", "3", "3"), completion("m1", "r1", "5", "4"),  # best: 4.5
        completion("m2", "r2", "N/A", "N/A"), completion("m3", "r3", "5", "4"),  # unrated; tie with best
        completion("m4", "r4", "1", "2"),
    ]}
    pairs, rejects = ref.rated_completion_pairs(e, [("train.jsonl", 2, row, "P2")], random_seed=42)
    prompt_id = "P2"
    candidates = [0, 2, 4]  # strictly below 4.5 (the unrated one included); not 3 (tie)
    drawn = min(candidates, key=lambda i: ref.md5(f"42:best_rated:{prompt_id}:{i}"))
    [pair] = finished(e, pairs)
    assert rejects == []
    assert pair["chosen"] == assistant("r1") and pair["chosen_model"] == "m1" and pair["chosen_score"] == 4.5
    assert pair["rejected"] == assistant(f"r{drawn}") and pair["rejected_model"] == f"m{drawn}"
    assert pair["prompt"] == user("Q") and pair["source"] == "s"
    assert pair["pair_id"] == ref.md5(f"demo:{prompt_id}") and pair["_order"] == ("train.jsonl", 2, 1, drawn)
    want_score = {0: 3.0, 2: None, 4: 1.5}[drawn]
    assert pair["rejected_score"] == want_score
    if want_score is None:
        assert pair["integrity_flags"] == ["unparseable_score"] and pair["margin"] is None
    else:
        assert pair["integrity_flags"] == [] and math.isclose(pair["margin"], (4.5 - want_score) / 4)
    # another seed may draw another candidate, never a non-candidate
    for seed in range(20):
        pairs, _ = ref.rated_completion_pairs(e, [("train.jsonl", 2, row, "P2")], random_seed=seed)
        assert pairs[0]["_order"][3] in candidates


def test_rated_unrated_completion_is_drawn_and_flagged():
    e = rated_entry()
    row = {"instruction": "Q", "source": None, "completions": [
        completion("a", "x", "N/A", None), completion("b", "y", "2", "2")]}
    [pair] = finished(e, ref.rated_completion_pairs(e, [("f.parquet", 0, row, "P0")], 1)[0])
    assert (pair["chosen_model"], pair["rejected_model"]) == ("b", "a")
    assert (pair["chosen_score"], pair["rejected_score"], pair["margin"], pair["score_margin"]) == (2.0, None, None, None)
    assert pair["integrity_flags"] == ["unparseable_score"] and pair["split"] == "demo_flagged"


@pytest.mark.parametrize("completions, reason", [
    ([], "no_completions"),
    (None, "no_completions"),
    ([completion("a", "x", "3", "3")], "no_lower_rated_completion"),  # a single completion
    ([completion("a", "x", "3", "4"), completion("b", "y", "4", "3")], "no_lower_rated_completion"),  # all tie
    ([completion("a", "x", "N/A", "N/A"), completion("b", "y", None, "9")], "no_lower_rated_completion"),  # unrated
])
def test_rated_rows_without_pair(completions, reason):
    row = {"instruction": "Q", "source": "s", "completions": completions}
    pairs, rejects = ref.rated_completion_pairs(rated_entry(), [("f.parquet", 5, row, "P5")], 42)
    assert pairs == []
    assert rejects == [{"dataset": "demo", "source_file": "f.parquet", "source_row": 5, "reason": reason}]


def test_rated_all_pairs():
    e = rated_entry("all_pairs")
    row = {"instruction": "Q", "source": "s", "completions": [
        completion("a", "x", "3", "3"), completion("b", "y", "5", "5"), completion("c", "z", "3", None),
        completion("d", "w", "N/A", None), completion("e", "v", "1", "1")]}
    pairs, rejects = ref.rated_completion_pairs(e, [("f.parquet", 0, row, "P0")], 42)
    prompt_id = "P0"
    # ratings 3, 5, 3, None, 1: every rated pair with different ratings, the higher chosen
    assert sorted(p["_order"][2:] for p in pairs) == [(0, 4), (1, 0), (1, 2), (1, 4), (2, 4)]
    assert {p["pair_id"] for p in pairs} == {ref.md5(f"demo:{prompt_id}:{c}:{r}") for c, r in
                                             [(0, 4), (1, 0), (1, 2), (1, 4), (2, 4)]}
    assert rejects == []
    all_tied = {"instruction": "Q", "source": "s", "completions": [
        completion("a", "x", "3", "3"), completion("b", "y", "3", "N/A"), completion("c", "z", "N/A", "N/A")]}
    assert ref.rated_completion_pairs(e, [("f.parquet", 1, all_tied, "P1")], 42) == (
        [], [{"dataset": "demo", "source_file": "f.parquet", "source_row": 1, "reason": "no_rated_pair"}])


def test_preference_scores_and_their_flags():
    e = entry("preference", {"prompt": "p", "chosen": "c", "rejected": "r", "chosen_score": "cs",
                             "rejected_score": "rs"}, score_range=[1, 10])
    rows = [
        ("a.parquet", 0, {"p": "Q", "c": "A", "r": "B", "cs": 8, "rs": "6.5"}, "P0"),  # clean
        ("a.parquet", 1, {"p": "Q", "c": "A", "r": "A", "cs": 5, "rs": 5}, "P1"),  # identical, not higher
        ("a.parquet", 2, {"p": "Q", "c": " \n", "r": "B", "cs": "N/A", "rs": 2}, "P2"),  # blank, unparseable
        ("a.parquet", 3, {"p": "Q", "c": "C", "r": "B", "cs": 12, "rs": "0"}, "P3"),  # both out of range
        ("a.parquet", 4, {"p": "Q", "c": "A", "r": "B", "cs": "9", "rs": 1}, "P4"),  # duplicate of row 0 (scores aside)
        ("a.parquet", 5, {"p": "q", "c": "a", "r": " OTHER\n\nanswer", "cs": 9, "rs": 1}, "P5"),  # cross-dataset duplicate
        ("a.parquet", 6, {"p": "Q", "c": [], "r": "B", "cs": 9, "rs": None}, "P6"),  # no turn; NULL score
    ]
    pairs, _ = ref.preference_pairs(e, rows)
    earlier = {ref.pair_key({"prompt": user("Q"), "chosen": assistant("A"), "rejected": assistant("other answer")},
                            ref.normalised_key)}
    got = {p["_order"][1]: p for p in finished(e, pairs, earlier)}
    assert got[0]["integrity_flags"] == [] and got[0]["split"] == "demo"
    assert math.isclose(got[0]["margin"], 1.5 / 9) and math.isclose(got[0]["score_margin"], 1.5)
    assert got[1]["integrity_flags"] == ["identical_responses", "score_not_higher"] and got[1]["margin"] == 0
    assert got[2]["integrity_flags"] == ["empty_response", "unparseable_score"] and got[2]["margin"] is None
    assert got[3]["integrity_flags"] == ["score_out_of_range"] and math.isclose(got[3]["margin"], 12 / 9)
    assert got[4]["integrity_flags"] == ["duplicate_pair"] and got[4]["split"] == "demo_flagged"
    assert got[5]["integrity_flags"] == ["cross_dataset_duplicate"]
    assert got[6]["integrity_flags"] == ["empty_response", "unparseable_score"] and got[6]["chosen"] == []


def test_duplicate_pair_keeps_the_earliest_by_file_row_and_indexes():
    e = entry("transcript", {"chosen": "c", "rejected": "r"})
    row = {"c": "\n\nHuman: Q\n\nAssistant: A", "r": "\n\nHuman: Q\n\nAssistant: B"}
    # handed over out of order: the earliest (file "a", row 3) stays clean
    pairs, _ = ref.transcript_pairs(e, [("b.jsonl", 0, row, "P0"), ("a.jsonl", 9, row, "P1"), ("a.jsonl", 3, row, "P2")])
    flags = {p["_order"][:2]: p["integrity_flags"] for p in finished(e, pairs)}
    assert flags == {("a.jsonl", 3): [], ("a.jsonl", 9): ["duplicate_pair"], ("b.jsonl", 0): ["duplicate_pair"]}


def test_unscored_preference_has_no_score_flags():
    e = entry("preference", {"chosen": "c", "rejected": "r"})
    row = {"c": turns(("user", "Q"), ("assistant", "A")), "r": turns(("user", "Q"), ("assistant", "B"))}
    pairs, _ = ref.preference_pairs(e, [("f.parquet", 0, row, "P0")])
    [pair] = finished(e, pairs)
    assert pair["prompt"] == user("Q") and pair["integrity_flags"] == []
    assert (pair["margin"], pair["score_margin"], pair["chosen_score"], pair["rejected_score"]) == (None,) * 4


def test_mixture_pick():
    ids = [f"p{i}" for i in range(10)]
    picked = ref.mixture_pick(ids, 0.25, 42)  # floor(2.5 + 0.5) = 3
    assert picked == sorted(ids, key=lambda p: ref.md5(f"42:mixture:{p}"))[:3]
    assert len(ref.mixture_pick(ids[:5], 0.5, 42)) == 3  # floor(2.5 + 0.5)
    assert len(ref.mixture_pick(ids[:3], 0.5, 42)) == 2  # floor(1.5 + 0.5)
    assert ref.mixture_pick(ids, 0.0, 42) == [] and len(ref.mixture_pick(ids, 1.0, 42)) == 10


def test_cross_dataset_duplicate_against_earlier_datasets_only(tmp_path, monkeypatch):
    """expected(): a pair of the second entry that repeats (case, spacing) a pair of the first
    entry or of a built-in dataset is flagged; the first entry's is not (nothing before it but the
    built-ins)."""
    import json

    first = {"name": "first", "hub_id": "o/first", "shape": "transcript", "columns": {"chosen": "c", "rejected": "r"}}
    second = {"name": "second", "hub_id": "o/second", "shape": "transcript", "columns": {"chosen": "c", "rejected": "r"}}
    rows = {
        "first": [{"c": "\n\nHuman: Hello there\n\nAssistant: Yes", "r": "\n\nHuman: Hello there\n\nAssistant: No"}],
        "second": [{"c": "\n\nHuman: hello  THERE\n\nAssistant: yes", "r": "\n\nHuman: hello  THERE\n\nAssistant: no"},
                   {"c": "\n\nHuman: Built in\n\nAssistant: a", "r": "\n\nHuman: Built in\n\nAssistant: b"},
                   {"c": "\n\nHuman: new\n\nAssistant: a", "r": "\n\nHuman: new\n\nAssistant: b"}],
    }
    for name, rs in rows.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rs))
    monkeypatch.setattr(ref, "entry_files", lambda e, raw_dir: [Path(raw_dir) / e["name"] / "train.jsonl"])
    builtin = [
        {"dataset": "rever", "pair_id": "r1", "prompt": user("BUILT\tIN"), "chosen": assistant("A"),
         "rejected": assistant("B"), "is_flagged": False},
        {"dataset": "ultrafeedback", "pair_id": "u1", "prompt": user("x"), "chosen": assistant("y"),
         "rejected": assistant("z"), "is_flagged": False},
        {"dataset": "ultrafeedback", "pair_id": "u2", "prompt": user("x"), "chosen": assistant("y"),
         "rejected": assistant("w"), "is_flagged": True},
    ]
    out = ref.expected(tmp_path, [first, second], 42, {"second": 0.5, "ultrafeedback": 1.0}, builtin)
    assert [p["integrity_flags"] for p in out.pairs["first"]] == [[]]
    assert [p["integrity_flags"] for p in out.pairs["second"]] == [
        ["cross_dataset_duplicate"], ["cross_dataset_duplicate"], []]
    assert out.raw_rows == {"first": 1, "second": 3} and out.rejects == []
    assert out.mixture == {"second": [out.pairs["second"][2]["pair_id"]], "ultrafeedback": ["u1"]}


# ============================================================================ the warehouse

def registry_vars() -> dict:
    """The vars of the build: dbt_project.yml's, with examples/extra_datasets.yml's over them."""
    project = yaml.safe_load((REPO / "dbt_project.yml").read_text(encoding="utf-8"))["vars"]
    return {**project, **yaml.safe_load(REGISTRY_FILE.read_text(encoding="utf-8"))}


VARS = registry_vars()
ENTRIES = VARS["extra_datasets"]
NAMES = [e["name"] for e in ENTRIES]
ENTRY = {e["name"]: e for e in ENTRIES}


@pytest.fixture(scope="module")
def builtin_pairs(warehouse):
    return warehouse.rows(
        "select dataset, pair_id, prompt, chosen, rejected, is_flagged from main.preference_pairs"
        " where dataset in ('ultrafeedback', 'code_ultrafeedback', 'rever')")


@pytest.fixture(scope="module")
def reference(warehouse, builtin_pairs) -> ref.Expected:
    return ref.expected(warehouse.raw_dir, ENTRIES, VARS["random_seed"], VARS.get("mixture"), builtin_pairs,
                        bool(VARS.get("train_on_flagged_pairs", False)),
                        near_duplicates_reference.warehouse_flags(warehouse))


@pytest.fixture(scope="module")
def extra_rows(warehouse) -> dict[str, list[dict]]:
    rows = warehouse.rows("select * from main.preference_pairs where list_contains(?, dataset)", [NAMES])
    out = {name: [] for name in NAMES}
    for r in rows:
        out[r["dataset"]].append(r)
    return out


def same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(a, b, rel_tol=TOL, abs_tol=TOL)
    return a == b


def differences(got: list[dict], want: list[dict], columns=ref.PAIR_COLUMNS) -> list[str]:
    """The multisets of rows compared on ``columns`` (pair_id as the key, floats with a tolerance):
    a line per differing column of a pair, then per missing or unexpected pair. A missing pair is
    compared with the warehouse's pair of its raw row (prompt_id) when there is exactly one, so a
    wrong pair_id shows as such."""
    got_ids, want_ids = Counter(r["pair_id"] for r in got), Counter(r["pair_id"] for r in want)
    assert max(want_ids.values(), default=1) == 1, "the reference's pair_ids are unique per dataset"
    by_id = {r["pair_id"]: r for r in got}
    unmatched = [r for r in got if r["pair_id"] not in want_ids]
    by_prompt: dict[str, list[dict]] = {}
    for r in unmatched:
        by_prompt.setdefault(r["prompt_id"], []).append(r)
    out, missing = [], []
    for w in want:
        g = by_id.get(w["pair_id"])
        if g is None:
            candidates = by_prompt.get(w["prompt_id"], [])
            if len(candidates) != 1 or sum(x["prompt_id"] == w["prompt_id"] for x in want) != 1:
                missing.append(f"missing pair {w['pair_id']} (row {w['_order']})")
                continue
            g = candidates[0]
        for col in columns:
            if not same(g[col], w[col]):
                out.append(f"{w['dataset']} {w['pair_id']} (row {w['_order']}) {col}: got {g[col]!r}, want {w[col]!r}")
    matched_by_prompt = {w["prompt_id"] for w in want if w["pair_id"] not in by_id}
    unexpected = [f"unexpected pair {r['pair_id']} (prompt_id {r['prompt_id']})" for r in unmatched
                  if len(by_prompt[r["prompt_id"]]) != 1 or r["prompt_id"] not in matched_by_prompt]
    extra = sum(n - 1 for n in got_ids.values() if n > 1)
    return out + missing + unexpected + ([f"{extra} repeated pair_ids in the warehouse"] if extra else [])


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_pairs_equal_the_reference(name, extra_rows, reference):
    want = reference.pairs[name]
    assert want, f"{name}: no raw rows (the generator writes every registry entry)"
    diffs = differences(extra_rows[name], want)
    assert not diffs, f"{len(diffs)} differences, first ones:\n" + "\n".join(diffs[:25])


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_flags_and_splits(name, extra_rows, reference):
    got = Counter((tuple(r["integrity_flags"]), r["split"], r["is_flagged"]) for r in extra_rows[name])
    want = Counter((tuple(p["integrity_flags"]), p["split"], p["is_flagged"]) for p in reference.pairs[name])
    assert got == want
    for r in extra_rows[name]:
        assert r["integrity_flags"] == sorted(set(r["integrity_flags"])), r["pair_id"]
        assert set(r["integrity_flags"]) <= set(ref.FLAGS), r["integrity_flags"]
        assert r["is_flagged"] == bool(r["integrity_flags"])
        assert r["split"] == name + ("_flagged" if r["is_flagged"] else ""), r["pair_id"]


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_margins(name, extra_rows):
    entry = ENTRY[name]
    rows = extra_rows[name]
    assert rows
    if not ref.maps_scores(entry):
        for r in rows:
            assert (r["margin"], r["score_margin"], r["chosen_score"], r["rejected_score"]) == (None,) * 4, r["pair_id"]
        return
    lo, hi = entry["score_range"]
    scored_clean = [r for r in rows if not r["is_flagged"]]
    assert scored_clean
    for r in scored_clean:
        assert r["margin"] is not None and 0 < r["margin"] <= 1, (r["pair_id"], r["margin"])
        assert math.isclose(r["score_margin"], r["chosen_score"] - r["rejected_score"], abs_tol=TOL)
        assert math.isclose(r["margin"], r["score_margin"] / (hi - lo), abs_tol=TOL)
    for r in rows:
        if r["chosen_score"] is None or r["rejected_score"] is None:
            assert r["margin"] is None and r["score_margin"] is None, r["pair_id"]


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_score_kind_is_one_value_per_dataset(name, extra_rows):
    """The spec does not name the extra datasets' score_kind: one value per dataset is all that is checked."""
    assert len({r["score_kind"] for r in extra_rows[name]}) == 1


@pytest.mark.slow
def test_rejects_equal_the_reference(warehouse, reference):
    got = Counter((r["dataset"], r["source_file"], r["source_row"], r["reason"]) for r in warehouse.rows(
        "select dataset, source_file, source_row, reason from main.rejects_extra_datasets"))
    want = Counter((r["dataset"], r["source_file"], r["source_row"], r["reason"]) for r in reference.rejects)
    assert got == want, {"missing": list((want - got).elements())[:10], "unexpected": list((got - want).elements())[:10]}


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_row_accounting_balances(name, warehouse, reference):
    """One block per entry: its raw rows (the reference's count of the raw files' rows), every one
    a pair (kept or flagged) or a reject."""
    block = warehouse.rows("select * from main.row_accounting where dataset = ?", [name])
    n_raw = reference.raw_rows[name]
    assert n_raw > 0
    assert block, f"no row_accounting block for {name}"
    assert {r["raw_rows"] for r in block} == {n_raw}
    assert {r["hub_id"] for r in block} == {ENTRY[name]["hub_id"]}
    assert sum(r["n_rows"] for r in block) == n_raw
    rejected = Counter()
    for r in block:
        if r["outcome"] == "rejected":
            rejected[r["destination"]] += r["n_rows"]
    want_rejected = Counter(r["reason"] for r in reference.rejects if r["dataset"] == name)
    assert rejected == want_rejected
    assert n_raw - sum(want_rejected.values()) == reference.rows_with_pair(name)
    if ENTRY[name].get("pairing") != "all_pairs":  # one pair per row: flagged rows = flagged pairs
        flagged = sum(r["n_rows"] for r in block if r["outcome"] == "flagged")
        assert flagged == sum(p["is_flagged"] for p in reference.pairs[name])


@pytest.mark.slow
def test_training_mixture_equals_the_reference(warehouse, reference):
    rows = warehouse.rows("select * from main.training_mixture")
    got = {}
    for r in rows:
        got.setdefault(r["dataset"], []).append(r["pair_id"])
    got = {k: sorted(v) for k, v in got.items()}
    want = {k: v for k, v in reference.mixture.items() if v}
    assert {k: len(v) for k, v in got.items()} == {k: len(v) for k, v in want.items()}
    assert got == want
    assert all(not r["is_flagged"] and not r["integrity_flags"] for r in rows)
    # the same rows as in preference_pairs
    pp = warehouse.rows("select * from main.preference_pairs where pair_id in (select pair_id from main.training_mixture)")
    key = {(r["dataset"], r["pair_id"]): r for r in pp}
    for r in rows:
        p = key[(r["dataset"], r["pair_id"])]
        assert r["split"] == "training_mixture" and p["split"] == r["dataset"]  # its own export split
        for col in [c for c in ref.PAIR_COLUMNS if c != "split"] + ["score_kind"]:
            assert same(r[col], p[col]), (r["dataset"], r["pair_id"], col)


@pytest.mark.slow
def test_every_planted_quirk_occurs(reference):
    """The generated data exercises every rule, so the comparisons above are not vacuous."""
    flags = Counter(f for pairs in reference.pairs.values() for p in pairs for f in p["integrity_flags"])
    for flag in ref.FLAGS:
        assert flags[flag] > 0, f"no pair flagged {flag}: {dict(flags)}"
    for name, pairs in reference.pairs.items():
        assert any(not p["integrity_flags"] for p in pairs), f"{name}: no clean pair"
    # the reject reasons of the pairings in the registry
    reasons = Counter(r["reason"] for r in reference.rejects)
    pairings = {e.get("pairing", "best_vs_lower") for e in ENTRIES if e["shape"] == "rated_completions"}
    assert reasons["no_completions"] > 0, reasons
    if "best_vs_lower" in pairings:
        assert reasons["no_lower_rated_completion"] > 0, reasons
    if "all_pairs" in pairings:
        assert reasons["no_rated_pair"] > 0, reasons
    # the shapes' message rules meet their cases (implicit prompts: rlhflow's lists, hh-rlhf's transcripts)
    implicit = [p for name in NAMES if ENTRY[name]["shape"] != "rated_completions" and "prompt" not in ENTRY[name]["columns"]
                for p in reference.pairs[name]]
    assert any(p["prompt"] and p["prompt"][0]["role"] == "system" for p in implicit), "no implicit prompt with a system turn"
    assert any(sum(t["role"] == "user" for t in p["prompt"]) > 1 for p in implicit), "no multi-turn implicit prompt"


# The generator's names of planted quirks that are not the flag or reject reason they cause.
QUIRK_OUTCOME = {
    "inverted_scores": "score_not_higher", "tied_scores": "score_not_higher", "na_score": "unparseable_score",
    "empty_completions": "no_completions", "tied_completions": "no_lower_rated_completion",
}


@pytest.mark.slow
def test_planted_rows_show_their_quirk(warehouse, reference):
    """Every row the generator's manifest lists under a quirk named for a flag or reject reason (or
    one of QUIRK_OUTCOME) gets it in the reference: the generator plants what the spec flags."""
    import json

    manifest = json.loads((Path(warehouse.raw_dir) / "_generator_manifest.json").read_text(encoding="utf-8"))
    planted = manifest.get("extra_datasets", {})
    assert set(NAMES) <= set(planted), "the generator notes every registry entry's planted rows"
    outcomes = set(ref.FLAGS) | set(ref.REJECT_REASONS)
    missing, checked = [], Counter()
    for name in NAMES:
        by_row: dict[tuple, set] = {}
        for p in reference.pairs[name]:
            by_row.setdefault(p["_order"][:2], set()).update(p["integrity_flags"])
        for r in reference.rejects:
            if r["dataset"] == name:
                by_row.setdefault((r["source_file"], r["source_row"]), set()).add(r["reason"])
        for quirk, rows in planted[name].get("planted", {}).items():
            outcome = QUIRK_OUTCOME.get(quirk, quirk)
            if outcome not in outcomes:
                continue  # a quirk of the messages (e.g. a transcript differing before its last turn)
            for file, row in rows:
                checked[outcome] += 1
                if outcome not in by_row.get((Path(file).name, row), set()):
                    missing.append(f"{name} {quirk} {file}:{row} -> {sorted(by_row.get((Path(file).name, row), set()))}")
    assert not missing, "planted rows without their quirk:\n" + "\n".join(missing)
    assert checked, "the manifest lists no planted rows"
