"""Near-duplicate detection against an independent Python reference written from the rule
(tests/python/near_duplicates_reference.py): near_duplicate_prompts, prompt_clusters,
near_duplicate_pairs and near_duplicate_summary row for row, the flags `near_duplicate_pair`,
`label_conflict` and `near_identical_responses` in preference_pairs and the training tables'
filters, the one-line messages for a bad `near_duplicates` var, and the mixture's cap per prompt
cluster (`mixture_max_pairs_per_prompt_cluster`).

The reference itself is checked first, on small hand-made inputs computed from the rule, then its
fast path against brute force. The tests that run dbt have `warehouse` in their names, so that
`-k "not warehouse"` runs the pure-Python ones only: those on the session build (the `warehouse`
fixture: generated data with the example registry, default `near_duplicates` settings; the fixtures
`dataset_order`, `pairs` and `reference` serve any further test of it), the bad settings (a
`dbt compile` of the bundled sample) and the mixture's cap (training_mixture again on a copy).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter, defaultdict

import near_duplicates_reference as ref
import pytest
import yaml
from conftest import REGISTRY_VARS, REPO, Warehouse, copy_warehouse, run_dbt

BUILTIN = ("ultrafeedback", "code_ultrafeedback", "rever")
RANDOM_SEED = yaml.safe_load((REPO / "dbt_project.yml").read_text(encoding="utf-8"))["vars"]["random_seed"]


# ============================================================================ the reference, by hand

def words(k: int, prefix: str = "w", start: int = 0) -> str:
    return " ".join(f"{prefix}{i}" for i in range(start, start + k))


def row(dataset: str, pair_id: str, prompt_id: str, prompt: str | list, chosen: str, rejected: str) -> dict:
    """A preference_pairs row; ``prompt`` a text (one user turn) or the messages."""
    messages = prompt if isinstance(prompt, list) else [{"role": "user", "content": prompt}]
    return {"dataset": dataset, "pair_id": pair_id, "prompt_id": prompt_id, "prompt": messages,
            "chosen": [{"role": "assistant", "content": chosen}],
            "rejected": [{"role": "assistant", "content": rejected}]}


def keys(rows: list[dict], *columns: str) -> list[tuple]:
    return [tuple(r[c] for c in columns) for r in rows]


def flagged(expected: ref.Expected, flag: str) -> set[str]:
    return {pid for pid, f in expected.flags.items() if flag in f}


# two responses unrelated to each other and to everything else below
CHOSEN = "Paris is the capital of France and its largest city."
REJECTED = "I think the answer might be Lyon, but I am not sure."


def test_shingles_are_the_word_ngrams_of_the_tokens():
    assert ref.shingles("One two, THREE four five six seven!", 5) == {
        ("one", "two", "three", "four", "five"), ("two", "three", "four", "five", "six"),
        ("three", "four", "five", "six", "seven")}
    for n, count in [(1, 12), (3, 10), (5, 8), (12, 1)]:  # 12 tokens: 12 - n + 1 windows
        assert len(ref.shingles(words(12), n)) == count, n
    assert ref.shingles(words(5), 5) == {tuple(words(5).split())}  # exactly n tokens: one n-gram
    assert ref.shingles("a a a a a a a", 5) == {("a",) * 5}  # a set: three equal windows, one shingle
    assert ref.shingles("a b a b a b", 2) == {("a", "b"), ("b", "a")}


def test_a_text_shorter_than_n_has_one_shingle_its_whole_sequence():
    assert ref.shingles("Hello, World!", 5) == {("hello", "world")}
    assert ref.shingles(words(4), 5) == {tuple(words(4).split())}
    # a shorter text is never near a longer one that contains it: (hello, world) is not a 5-gram
    assert ref.jaccard(ref.shingles("hello world", 5), ref.shingles("hello world and more words here", 5)) == 0.0
    assert ref.jaccard(ref.shingles("hello world", 5), ref.shingles("hello world again", 5)) == 0.0
    assert ref.near(ref.shingles("hello world", 5), ref.shingles("HELLO... world", 5))


def test_a_text_without_tokens_is_never_near_anything():
    for text in ("", "  ?! ... -- ", None):
        assert ref.shingles(text, 5) == frozenset()
        assert not ref.near(ref.shingles(text, 5), ref.shingles("", 5))
        assert not ref.near(ref.shingles(text, 5), ref.shingles(text, 5))
        assert not ref.near(ref.shingles(text, 5), ref.shingles("a", 5))
    pairs = [row("d", "p1", "q1", "?!", "...", "!!!"), row("d", "p2", "q2", "", "", ""),
             row("d", "p3", "q3", "hi", "??", "")]
    got = ref.expected(pairs, ["d"])
    assert got.near_duplicate_prompts == [] and got.near_duplicate_pairs == []
    assert keys(got.prompt_clusters, "prompt_id", "cluster_id", "cluster_size") == [
        ("q1", "d:q1", 1), ("q2", "d:q2", 1), ("q3", "d:q3", 1)]
    assert all(not f for f in got.flags.values())  # empty responses are not near-identical either


def test_pairs_of_one_prompt_relate_whatever_its_text():
    """The same (dataset, prompt_id) relates its pairs even when the prompt has no tokens:
    prompt_jaccard 1.0."""
    pairs = [row("d", "p1", "q", "", CHOSEN, REJECTED), row("d", "p2", "q", "", CHOSEN.upper(), REJECTED + "!")]
    got = ref.expected(pairs, ["d"])
    assert got.near_duplicate_pairs == [{"pair_id_a": "p1", "pair_id_b": "p2", "dataset_a": "d", "dataset_b": "d",
                                         "relation": "same_comparison", "prompt_jaccard": 1.0,
                                         "chosen_a_jaccard": 1.0, "rejected_a_jaccard": 1.0}]
    assert got.flags == {"p1": set(), "p2": {"near_duplicate_pair"}}


def test_jaccard_exactly_at_the_threshold_is_near():
    nine, eight, seven = (ref.shingles(words(k), 5) for k in (9, 8, 7))  # 5, 4 and 3 five-grams, nested
    assert (len(nine), len(eight), len(seven)) == (5, 4, 3)
    assert ref.jaccard(nine, eight) == 0.8 and ref.near(nine, eight, 0.8)
    assert not ref.near(nine, eight, 0.81)
    assert ref.jaccard(nine, seven) == 0.6 and not ref.near(nine, seven, 0.8)
    fourteen, twelve = ref.shingles(words(14), 5), ref.shingles(words(12), 5)  # 10 and 8 five-grams
    assert ref.jaccard(fourteen, twelve) == 0.8 and ref.near(fourteen, twelve, 0.8)
    got = ref.expected([row("d", "p1", "a", words(9), CHOSEN, REJECTED), row("d", "p2", "b", words(8), "x", "y"),
                        row("d", "p3", "c", words(7), "x", "y")], ["d"])
    assert got.near_duplicate_prompts == [{"dataset_a": "d", "prompt_id_a": "a", "dataset_b": "d", "prompt_id_b": "b",
                                           "jaccard": 0.8, "n_shared_shingles": 4}]
    # b and c: 3/4, not near; c is its own cluster
    assert keys(got.prompt_clusters, "prompt_id", "cluster_id", "cluster_size") == [("a", "d:a", 2), ("b", "d:a", 2),
                                                                                  ("c", "d:c", 1)]


def test_white_space_case_and_punctuation_do_not_count():
    text = "The quick brown fox jumps over the lazy dog."
    same = "the QUICK   brown-fox\njumps over  the lazy dog!!!"
    assert ref.shingles(text, 5) == ref.shingles(same, 5) and len(ref.shingles(text, 5)) == 5
    # a prompt's text: its user turns joined with "\n" (two turns do not run into one token), the
    # system and assistant turns left out
    turns = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "The quick brown"},
             {"role": "assistant", "content": "Go on."}, {"role": "user", "content": "fox jumps over the lazy dog"}]
    assert ref.prompt_text(turns) == "The quick brown\nfox jumps over the lazy dog"
    got = ref.expected([row("e", "p1", "x", turns, CHOSEN, REJECTED), row("d", "p2", "y", same, "x", "y")], ["d", "e"])
    assert got.near_duplicate_prompts == [{"dataset_a": "d", "prompt_id_a": "y", "dataset_b": "e", "prompt_id_b": "x",
                                           "jaccard": 1.0, "n_shared_shingles": 5}]
    # a response's text: every message's content
    assert ref.response_text([{"role": "assistant", "content": "a"}, {"role": "user", "content": "b"}]) == "a\nb"


def test_a_chain_is_one_cluster_named_by_its_first_prompt():
    """A ~ B ~ C (9/11 each: ten 5-grams each, shifted by one token) with A not near C (8/12): one
    cluster of three, named by its first prompt in dataset order then prompt_id (string order:
    "10" before "9"). Pairs on A and C are not related (their prompts are not near), though their
    component of same comparisons joins them through B."""
    a, b, c = words(14), words(14, start=1), words(14, start=2)
    sa, sb, sc = (ref.shingles(t, 5) for t in (a, b, c))
    assert (ref.jaccard(sa, sb), ref.jaccard(sb, sc), ref.jaccard(sa, sc)) == (9 / 11, 9 / 11, 8 / 12)
    order = ["ultrafeedback", "hh"]
    pairs = [row("hh", "p_a", "a", a, CHOSEN, REJECTED), row("ultrafeedback", "p_b", "9", b, CHOSEN, REJECTED),
             row("ultrafeedback", "p_c", "10", c, CHOSEN, REJECTED),
             row("hh", "p_d", "0", "unrelated", CHOSEN, REJECTED)]
    got = ref.expected(pairs, order)
    assert got.near_duplicate_prompts == [
        {"dataset_a": "ultrafeedback", "prompt_id_a": "10", "dataset_b": "ultrafeedback", "prompt_id_b": "9",
         "jaccard": 9 / 11, "n_shared_shingles": 9},
        {"dataset_a": "ultrafeedback", "prompt_id_a": "9", "dataset_b": "hh", "prompt_id_b": "a",
         "jaccard": 9 / 11, "n_shared_shingles": 9}]
    assert keys(got.prompt_clusters, *ref.CLUSTER_COLUMNS) == [  # dataset, prompt_id, cluster_id, size, n_datasets
        ("hh", "0", "hh:0", 1, 1),
        ("hh", "a", "ultrafeedback:10", 3, 2),
        ("ultrafeedback", "10", "ultrafeedback:10", 3, 2),
        ("ultrafeedback", "9", "ultrafeedback:10", 3, 2)]
    assert keys(got.near_duplicate_pairs, "pair_id_a", "pair_id_b", "relation", "prompt_jaccard") == [
        ("p_b", "p_a", "same_comparison", 9 / 11), ("p_b", "p_c", "same_comparison", 9 / 11)]
    # one component {p_a, p_b, p_c}: p_b comes first (ultrafeedback before hh, then "p_b" < "p_c")
    assert flagged(got, "near_duplicate_pair") == {"p_a", "p_c"}
    assert got.cluster_of_pair == {"p_a": "ultrafeedback:10", "p_b": "ultrafeedback:10", "p_c": "ultrafeedback:10",
                                   "p_d": "hh:0"}


def test_a_swapped_pair_is_a_label_conflict():
    pairs = [row("d", "p2", "q", "Which city is the capital of France?", CHOSEN, REJECTED),
             row("e", "p1", "r", "which city is the capital of france", REJECTED.lower(), CHOSEN + " Indeed."),
             row("d", "p3", "s", "Which city is the capital of France? Answer briefly.", REJECTED, CHOSEN)]
    got = ref.expected(pairs, ["d", "e"])
    # q ~ r (the same 7 tokens: 3 five-grams); s is near neither (9 tokens: 5 five-grams, q's 3 among them)
    assert keys(got.near_duplicate_prompts, "prompt_id_a", "prompt_id_b", "jaccard") == [("q", "r", 1.0)]
    # chosen(p2) against rejected(p1): CHOSEN's 10 tokens (6 five-grams) in 11 (7): 6/7;
    # rejected(p2) against chosen(p1): the same tokens
    assert got.near_duplicate_pairs == [{
        "pair_id_a": "p2", "pair_id_b": "p1", "dataset_a": "d", "dataset_b": "e", "relation": "label_conflict",
        "prompt_jaccard": 1.0, "chosen_a_jaccard": 6 / 7, "rejected_a_jaccard": 1.0}]
    assert got.flags == {"p1": {"label_conflict"}, "p2": {"label_conflict"}, "p3": set()}


def test_one_pair_of_pairs_both_same_comparison_and_label_conflict():
    """ngram 1, threshold 0.5, one prompt: q1 = (abcd, abce), q2 = (abcde, abcef).
    chosen~chosen 4/5, rejected~rejected 4/5; chosen(q1)~rejected(q2) 3/6 (exactly 0.5: near),
    rejected(q1)~chosen(q2) 4/5: two rows. Each pair's own responses are near too (3/5, 4/6)."""
    pairs = [row("d", "q2", "p", "question", "a b c d e", "a b c e f"),
             row("d", "q1", "p", "question", "a b c d", "a b c e")]
    got = ref.expected(pairs, ["d"], ngram=1, threshold=0.5)
    assert keys(got.near_duplicate_pairs, "pair_id_a", "pair_id_b", "relation", "prompt_jaccard",
                "chosen_a_jaccard", "rejected_a_jaccard") == [
        ("q1", "q2", "label_conflict", 1.0, 0.5, 0.8), ("q1", "q2", "same_comparison", 1.0, 0.8, 0.8)]
    assert got.flags == {"q1": {"label_conflict", "near_identical_responses"},
                         "q2": {"label_conflict", "near_identical_responses", "near_duplicate_pair"}}
    # at 0.6 the conflict is gone (0.5 < 0.6) and the same comparison stays
    got = ref.expected(pairs, ["d"], ngram=1, threshold=0.6)
    assert keys(got.near_duplicate_pairs, "relation") == [("same_comparison",)]
    assert got.flags == {"q1": {"near_identical_responses"}, "q2": {"near_identical_responses", "near_duplicate_pair"}}


def test_keep_one_flags_all_but_the_first_keep_none_flags_all():
    prompt = "Name the capital of France, please, in one word."
    pairs = [row("ds2", "x1", "p2", prompt.upper(), CHOSEN, REJECTED),
             row("ds1", "y9", "p1", prompt, CHOSEN.lower(), REJECTED),
             row("ds1", "y10", "p1", prompt, CHOSEN, REJECTED.upper()),
             row("ds1", "y0", "p1", prompt, "A different answer altogether, about Rome.",
                 "And another one, about Madrid.")]
    one = ref.expected(pairs, ["ds1", "ds2"], keep="one")
    none = ref.expected(pairs, ["ds1", "ds2"], keep="none")
    assert keys(one.near_duplicate_pairs, "pair_id_a", "pair_id_b", "relation") == [
        ("y10", "x1", "same_comparison"), ("y10", "y9", "same_comparison"), ("y9", "x1", "same_comparison")]
    # order: ds1 before ds2, then pair_id as strings ("y10" < "y9")
    assert flagged(one, "near_duplicate_pair") == {"y9", "x1"}
    assert flagged(none, "near_duplicate_pair") == {"y10", "y9", "x1"}
    assert one.flags["y0"] == none.flags["y0"] == set()
    assert one.near_duplicate_pairs == none.near_duplicate_pairs


def test_summary_counts_every_dataset_pair_zeros_included():
    prompt = "Name the capital of France, please, in one word."
    pairs = [row("ds2", "x1", "p2", prompt.upper(), CHOSEN, REJECTED),
             row("ds1", "y9", "p1", prompt, CHOSEN, REJECTED),
             row("ds1", "y10", "p1", prompt, CHOSEN, REJECTED),
             row("ds1", "y8", "p3", prompt + " Thanks.", REJECTED, CHOSEN)]  # 6 five-grams, p1's 5 among them
    got = ref.expected(pairs, ["ds1", "ds2", "ds3"])
    assert keys(got.near_duplicate_prompts, "prompt_id_a", "prompt_id_b", "jaccard") == [
        ("p1", "p3", 5 / 6), ("p1", "p2", 1.0), ("p3", "p2", 5 / 6)]
    # y9 = y10 = x1 (same comparisons); y8 swaps them (label conflicts with all three)
    assert got.near_duplicate_summary == [
        {"dataset_a": "ds1", "dataset_b": "ds1", "n_prompt_pairs": 1, "n_same_comparison": 1, "n_label_conflicts": 2},
        {"dataset_a": "ds1", "dataset_b": "ds2", "n_prompt_pairs": 2, "n_same_comparison": 2, "n_label_conflicts": 1},
        {"dataset_a": "ds1", "dataset_b": "ds3", "n_prompt_pairs": 0, "n_same_comparison": 0, "n_label_conflicts": 0},
        {"dataset_a": "ds2", "dataset_b": "ds2", "n_prompt_pairs": 0, "n_same_comparison": 0, "n_label_conflicts": 0},
        {"dataset_a": "ds2", "dataset_b": "ds3", "n_prompt_pairs": 0, "n_same_comparison": 0, "n_label_conflicts": 0},
        {"dataset_a": "ds3", "dataset_b": "ds3", "n_prompt_pairs": 0, "n_same_comparison": 0, "n_label_conflicts": 0}]
    with pytest.raises(ValueError, match="ds2"):
        ref.expected(pairs, ["ds1"])  # a dataset of the rows out of the order


def test_settings_and_their_bounds():
    assert ref.settings(None) == {"enabled": True, "ngram": 5, "threshold": 0.8, "keep": "one"}
    assert ref.settings({"threshold": 1, "keep": "none"})["threshold"] == 1
    for bad in ({"threshold": 0}, {"threshold": 1.5}, {"ngram": 0}, {"ngram": 2.0}, {"keep": "some"}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            ref.settings(bad)


def test_one_text_per_prompt():
    with pytest.raises(ValueError, match="different texts"):
        ref.expected([row("d", "p1", "q", "one text", "a", "b"), row("d", "p2", "q", "another text", "a", "b")], ["d"])


def test_the_mixture_cap_keeps_the_first_pairs_by_md5_of_seed_mixture_pair_id():
    assert ref.stable_hash(42, "mixture", "p1") == hashlib.md5(b"42:mixture:p1").hexdigest()
    cluster = {"a": "X", "b": "X", "c": "X", "d": "Y", "e": "Z"}
    order = sorted("abc", key=lambda p: hashlib.md5(f"42:mixture:{p}".encode()).hexdigest())
    assert ref.capped_mixture("abcd", cluster, 1, 42) == {order[0], "d"}  # e was not drawn
    assert ref.capped_mixture("abcd", cluster, 2, 42) == {*order[:2], "d"}
    assert ref.capped_mixture("abcd", cluster, 3, 42) == set("abcd")


# ============================================================================ the fast path

def random_case(rng: random.Random, vocab: list[str], max_tokens: int) -> tuple[list[dict], list[str]]:
    """Prompts and responses of a few tokens from a small vocabulary (many near ones), some copied
    with another case and punctuation; pairs on a few datasets, several per prompt."""
    def text() -> str:
        return " ".join(rng.choice(vocab) for _ in range(rng.randrange(0, max_tokens)))

    def variant(t: str) -> str:
        return rng.choice([t, t.upper(), t.replace(" ", ", "), t + "!"])

    datasets = ["d0", "d1", "d2"]
    prompts = []
    for i in range(30):
        t = variant(prompts[rng.randrange(len(prompts))][2]) if prompts and rng.random() < 0.3 else text()
        prompts.append((rng.choice(datasets), f"q{i}", t))
    responses = [text() for _ in range(8)]
    pairs = []
    for i in range(70):
        d, q, t = rng.choice(prompts)
        pairs.append(row(d, f"p{i}", q, t, variant(rng.choice(responses)), variant(rng.choice(responses))))
    return pairs, datasets


def test_fast_path_equals_brute_force():
    rng = random.Random(11)
    seen = Counter()
    for n in (1, 2, 3, 5):
        for threshold in (0.3, 0.5, 0.8, 1.0):
            for vocab_size, max_tokens in ((3, 8), (6, 20)):
                pairs, datasets = random_case(rng, [f"v{i}" for i in range(vocab_size)], max_tokens)
                for keep in ref.KEEP:
                    fast = ref.expected(pairs, datasets, ngram=n, threshold=threshold, keep=keep)
                    slow = ref.expected(pairs, datasets, ngram=n, threshold=threshold, keep=keep, brute_force=True)
                    assert fast == slow, (n, threshold, vocab_size, keep)
                seen["prompt pairs"] += len(fast.near_duplicate_prompts)
                seen["non-identical prompt pairs"] += sum(r["jaccard"] < 1 for r in fast.near_duplicate_prompts)
                seen["clusters of 3+"] += sum(r["cluster_size"] > 2 for r in fast.prompt_clusters)
                seen.update(r["relation"] for r in fast.near_duplicate_pairs)
                seen.update(f for fs in fast.flags.values() for f in fs)
    assert all(seen[k] for k in ("prompt pairs", "non-identical prompt pairs", "clusters of 3+", *ref.RELATIONS,
                                 *ref.FLAGS)), seen


def test_similar_sets_equal_every_pair_compared():
    """The prefix filter on longer texts, where it leaves most pairs out."""
    rng = random.Random(5)
    vocab = [f"t{i}" for i in range(8)]
    base = [[rng.choice(vocab) for _ in range(rng.randrange(1, 60))] for _ in range(60)]
    texts = []
    for toks in base:  # each text and a copy with a few tokens changed
        texts.append(toks)
        copy = list(toks)
        for _ in range(rng.randrange(0, 3)):
            copy[rng.randrange(len(copy))] = rng.choice(vocab + ["other"])
        texts.append(copy)
    for n in (1, 3, 5):
        sets = list({ref.shingles(" ".join(t), n) for t in texts})  # distinct sets: none near at 1.0
        found = 0
        for threshold in (0.2, 0.5, 0.8, 0.9, 1.0):
            brute = [(i, j) for i in range(len(sets)) for j in range(i + 1, len(sets))
                     if ref.near(sets[i], sets[j], threshold)]
            assert ref.similar_sets(sets, threshold) == brute, (n, threshold)
            found += len(brute) if threshold >= 0.8 else 0
        assert found, n


# ============================================================================ the warehouse

def _diff(got: list[dict], want: list[dict], key: tuple, columns: tuple, limit: int = 20) -> list[str]:
    """Lines naming each key missing, unexpected or differing in a column (exact comparison)."""
    g = {tuple(r[k] for k in key): r for r in got}
    w = {tuple(r[k] for k in key): r for r in want}
    assert len(g) == len(got), "repeated keys in the warehouse"
    out = [f"missing {k}: want { {c: w[k][c] for c in columns if c not in key} }"
           for k in sorted(w.keys() - g.keys(), key=str)]
    out += [f"unexpected {k}: { {c: g[k][c] for c in columns if c not in key} }"
            for k in sorted(g.keys() - w.keys(), key=str)]
    for k in sorted(g.keys() & w.keys(), key=str):
        out += [f"{k} {c}: got {g[k][c]!r}, want {w[k][c]!r}" for c in columns if g[k][c] != w[k][c]]
    return out[:limit] + ([f"... {len(out) - limit} more"] if len(out) > limit else [])


@pytest.fixture(scope="module")
def dataset_order(warehouse: Warehouse) -> list[str]:
    """The built-in datasets, then the registry's entries in order, those the build has."""
    enabled = set(warehouse.scalar("select datasets from meta.warehouse_build_info").split(","))
    registered = {r["dataset"] for r in warehouse.rows("select dataset from meta.extra_datasets")}
    return [d for d in (*BUILTIN, *(e["name"] for e in REGISTRY_VARS["extra_datasets"])) if d in enabled | registered]


@pytest.fixture(scope="module")
def pairs(warehouse: Warehouse) -> list[dict]:
    return warehouse.rows("select dataset, pair_id, prompt_id, prompt, chosen, rejected, split, integrity_flags,"
                          " is_flagged from main.preference_pairs")


@pytest.fixture(scope="module")
def reference(pairs, dataset_order) -> ref.Expected:
    return ref.expected(pairs, dataset_order, **ref.settings(REGISTRY_VARS.get("near_duplicates")))


@pytest.mark.slow
def test_warehouse_reference_is_not_vacuous(reference, dataset_order, pairs):
    """The generated data has near prompts across datasets, both relations and every flag."""
    assert {p["dataset"] for p in pairs} <= set(dataset_order)
    assert any(r["dataset_a"] != r["dataset_b"] for r in reference.near_duplicate_prompts)
    assert any(r["jaccard"] < 1 for r in reference.near_duplicate_prompts)
    assert any(r["n_datasets"] > 1 for r in reference.prompt_clusters)
    relations = Counter(r["relation"] for r in reference.near_duplicate_pairs)
    assert all(relations[k] for k in ref.RELATIONS), relations
    flags = Counter(f for fs in reference.flags.values() for f in fs)
    assert all(flags[k] for k in ref.FLAGS), flags


@pytest.mark.slow
def test_warehouse_near_duplicate_prompts_equal_the_reference(warehouse, reference):
    """Every row the warehouse has is the reference's, with the same Jaccard and shared shingles;
    at least 99% of the reference's rows are found."""
    got = warehouse.rows(f"select {', '.join(ref.PROMPT_PAIR_COLUMNS)} from main.near_duplicate_prompts")
    want = reference.near_duplicate_prompts
    g = {tuple(r[k] for k in ref.PROMPT_PAIR_KEY) for r in got}
    w = {tuple(r[k] for k in ref.PROMPT_PAIR_KEY) for r in want}
    assert len(g) == len(got), "repeated keys in the warehouse"
    missing = w - g
    assert len(missing) <= 0.01 * len(w), \
        f"{len(missing)} of {len(w)} near prompt pairs missing: {sorted(missing)[:10]}"
    diffs = _diff(got, [r for r in want if tuple(r[k] for k in ref.PROMPT_PAIR_KEY) in g], ref.PROMPT_PAIR_KEY,
                  ref.PROMPT_PAIR_COLUMNS)
    assert not diffs, f"{len(got)} rows, {len(want)} expected:\n" + "\n".join(diffs)


@pytest.mark.slow
def test_warehouse_prompt_clusters_equal_the_reference(warehouse, reference):
    got = warehouse.rows(f"select {', '.join(ref.CLUSTER_COLUMNS)} from main.prompt_clusters")
    diffs = _diff(got, reference.prompt_clusters, ref.CLUSTER_KEY, ref.CLUSTER_COLUMNS)
    assert not diffs, f"{len(got)} rows, {len(reference.prompt_clusters)} expected:\n" + "\n".join(diffs)


@pytest.mark.slow
def test_warehouse_near_duplicate_pairs_equal_the_reference(warehouse, reference):
    got = warehouse.rows(f"select {', '.join(ref.PAIR_PAIR_COLUMNS)} from main.near_duplicate_pairs")
    diffs = _diff(got, reference.near_duplicate_pairs, ref.PAIR_PAIR_KEY, ref.PAIR_PAIR_COLUMNS)
    assert not diffs, f"{len(got)} rows, {len(reference.near_duplicate_pairs)} expected:\n" + "\n".join(diffs)


@pytest.mark.slow
def test_warehouse_near_duplicate_summary_equals_the_reference(warehouse, reference, dataset_order):
    got = warehouse.rows(f"select {', '.join(ref.SUMMARY_COLUMNS)} from main.near_duplicate_summary")
    want = reference.near_duplicate_summary
    assert len(want) == len(dataset_order) * (len(dataset_order) + 1) // 2
    diffs = _diff(got, want, ref.SUMMARY_KEY, ref.SUMMARY_COLUMNS, limit=40)
    assert not diffs, "\n".join(diffs)


@pytest.mark.slow
def test_warehouse_flags_equal_the_reference(pairs, reference):
    """The three flags of every pair; a flagged pair is is_flagged, in its dataset's _flagged split."""
    wrong = []
    for p in pairs:
        flags = list(p["integrity_flags"] or [])
        assert flags == sorted(flags), (p["pair_id"], flags)
        got, want = set(flags) & set(ref.FLAGS), reference.flags[p["pair_id"]]
        if got != want:
            wrong.append(f"{p['dataset']} {p['pair_id']}: got {sorted(got)}, want {sorted(want)}")
        if want:
            assert p["is_flagged"] and p["split"] == p["dataset"] + "_flagged", (p["dataset"], p["pair_id"], p["split"])
    assert not wrong, f"{len(wrong)} pairs:\n" + "\n".join(wrong[:20])


# (dataset, its training table, the key preference_pairs' pair_id is md5('<dataset>:' || key) of,
# "is a pair" (the rows that are preference_pairs' pairs), the documented training filter: docs/training.md)
TRAINING_TABLES = [
    ("ultrafeedback", "ultrafeedback_curated", "prompt_id", "has_pair", "has_pair and not is_flagged"),
    ("code_ultrafeedback", "code_ultrafeedback_pairs", "pair_id", "true", "not is_flagged"),
    ("rever", "rever_pairs", "id", "kept", "kept and not is_flagged"),
]


@pytest.mark.slow
def test_warehouse_flagged_pairs_stay_out_of_training(warehouse, pairs, reference, dataset_order):
    """Each training table carries its pair's near-duplicate flags and is_flagged, so its documented
    filter leaves every flagged pair out; training_mixture has none of them."""
    near_flagged = {pid for pid, f in reference.flags.items() if f}
    reached = 0
    for dataset, table, key, is_pair, train_filter in TRAINING_TABLES:
        if dataset not in dataset_order:
            continue
        rows = warehouse.rows(f"select {key} as key, ({is_pair}) as is_pair, ({train_filter}) as in_training,"
                              f" integrity_flags, is_flagged from main.{table}")
        by_pair = {ref.stable_hash(dataset, r["key"]): r for r in rows}
        of_dataset = {p["pair_id"] for p in pairs if p["dataset"] == dataset}
        assert {pid for pid, r in by_pair.items() if r["is_pair"]} == of_dataset, \
            f"{table}: its rows are not preference_pairs' pairs by md5('{dataset}:' || {key})"
        for pid in of_dataset & near_flagged:
            r = by_pair[pid]
            assert set(r["integrity_flags"] or []) & set(ref.FLAGS) == reference.flags[pid], (table, pid)
            assert r["is_flagged"] and not r["in_training"], (table, pid, r["integrity_flags"])
            reached += 1
    assert reached, "no near-duplicate flag in a built-in training table"
    mixture = {r["pair_id"] for r in warehouse.rows("select pair_id from main.training_mixture")}
    assert mixture, "the session's training_mixture is empty"
    assert not mixture & near_flagged, sorted(mixture & near_flagged)[:10]


# ============================================================================ a bad setting

ANSI = re.compile(r"\x1b\[[0-9;]*m")
# (key, bad value): each stops the build; the message names the var, the key and the value
BAD_SETTINGS = [("threshold", 0), ("threshold", 1.5), ("ngram", 0), ("keep", "some"), ("bands", 0), ("enabled", "yes")]


@pytest.mark.slow
def test_warehouse_settings_verdicts_name_the_var_the_key_and_the_value(tmp_path):
    """The build's check of the var near_duplicates, on every bad value at once (`dbt
    run-operation near_duplicate_settings_cases`): one line each naming the var, the key, the value
    and what it should be; good values (the defaults, the edges 1 and ngram 1, keep none) pass."""
    from conftest import operation_cases

    good = [{}, {"threshold": 1}, {"ngram": 1, "keep": "none"}, {"enabled": False}]
    cases = [{key: value} for key, value in BAD_SETTINGS] + good + [{"treshold": 0.8}]
    verdicts = operation_cases("near_duplicate_settings_cases", cases, "settings case", tmp_path)
    for (key, value), verdict in zip(BAD_SETTINGS, verdicts):
        assert verdict.startswith(f"var near_duplicates: `{key}` is ") and verdict.endswith(f"got: {value}"), verdict
    assert verdicts[len(BAD_SETTINGS):-1] == ["ok"] * len(good)
    assert verdicts[-1] == "var near_duplicates: unknown key treshold: did you mean threshold?"


@pytest.mark.slow
def test_a_bad_setting_stops_the_warehouse_build_with_one_line(tmp_path):
    """A bad value given to the build: `dbt compile` of the flags' model stops with that one line,
    no traceback."""
    result = run_dbt(["compile", "--select", "preference_pairs", "--vars", json.dumps({"near_duplicates": {"threshold": 1.5}})],
                     REPO / "sample_data", tmp_path / "w.duckdb", tmp_path, check=False)
    out = ANSI.sub("", result.output)
    assert result.returncode != 0, out[-3000:]
    assert "Traceback" not in out
    lines = {line.strip() for line in out.splitlines() if "var near_duplicates: `threshold`" in line and "got: 1.5" in line}
    assert len(lines) == 1, out[-3000:]


# ============================================================================ switched off

@pytest.mark.slow
def test_warehouse_switched_off_finds_and_flags_nothing(switched_off, pairs):
    """near_duplicates.enabled false (conftest.switched_off: the models again on a copy of the
    session build): the pair tables empty, every prompt its own cluster, no pair flagged by a
    near-duplicate check, the other flags as they were."""
    off = switched_off
    for table in ("near_duplicate_prompts", "near_duplicate_pairs"):
        assert off.scalar(f"select count(*) from main.{table}") == 0, table
    assert off.scalar("select sum(n_prompt_pairs + n_same_comparison + n_label_conflicts) from main.near_duplicate_summary") == 0
    clusters = off.rows("select dataset, prompt_id, cluster_id, cluster_size from main.prompt_clusters")
    assert {(r["dataset"], r["prompt_id"]) for r in clusters} == {(p["dataset"], p["prompt_id"]) for p in pairs}
    assert all(r["cluster_size"] == 1 and r["cluster_id"] == f"{r['dataset']}:{r['prompt_id']}" for r in clusters)
    near = set(ref.FLAGS)
    after = {r["pair_id"]: r["integrity_flags"] for r in off.rows("select pair_id, integrity_flags from main.preference_pairs")}
    assert after == {p["pair_id"]: [f for f in p["integrity_flags"] if f not in near] for p in pairs}


# ============================================================================ the mixture's cap

@pytest.mark.slow
def test_warehouse_mixture_cap_keeps_the_first_pair_of_each_cluster(warehouse, reference, tmp_path):
    """training_mixture again on a copy of the session build with
    mixture_max_pairs_per_prompt_cluster: 1: of the session's (uncapped) mixture, per prompt
    cluster the first pair in md5(random_seed:mixture:pair_id) order, then pair_id."""
    uncapped = [r["pair_id"] for r in warehouse.rows("select pair_id from main.training_mixture")]
    per_cluster = Counter(reference.cluster_of_pair[p] for p in uncapped)
    assert max(per_cluster.values(), default=0) > 1, "no prompt cluster has two pairs in the mixture: nothing to cap"

    db = tmp_path / "capped.duckdb"
    copy_warehouse(warehouse, db)
    run_dbt(["run", "-s", "training_mixture", "--vars", json.dumps({"mixture_max_pairs_per_prompt_cluster": 1})],
            warehouse.raw_dir, db, tmp_path / "work")
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        got = [pid for (pid,) in con.execute("select pair_id from main.training_mixture").fetchall()]
    clusters = defaultdict(list)
    for pid in got:
        clusters[reference.cluster_of_pair[pid]].append(pid)
    over = {c: ids for c, ids in clusters.items() if len(ids) > 1}
    assert not over, f"{len(over)} clusters with more than one pair: {list(over.items())[:5]}"
    want = ref.capped_mixture(uncapped, reference.cluster_of_pair, 1, RANDOM_SEED)
    assert set(got) == want, {"missing": sorted(want - set(got))[:10], "unexpected": sorted(set(got) - want)[:10]}


# ============================================================================ the planted cases

@pytest.fixture(scope="module")
def planted(warehouse: Warehouse) -> list[tuple[dict, list[dict]]]:
    """The generator's planted near-duplicate cases (manifest `near_duplicates`), each with the
    preference_pairs row of each of its raw rows (the registry's preference rows: one pair each,
    found by the prompt_id the entry's rule gives the row)."""
    import extra_reference

    manifest = json.loads((warehouse.raw_dir / "_generator_manifest.json").read_text(encoding="utf-8"))
    cases = manifest.get("near_duplicates") or []
    entries = {e["name"]: e for e in REGISTRY_VARS["extra_datasets"]}
    by_prompt = defaultdict(list)
    for p in warehouse.rows("select dataset, pair_id, prompt_id, integrity_flags from main.preference_pairs"):
        by_prompt[(p["dataset"], p["prompt_id"])].append(p)
    keys_of = {d: {(name, i): key for name, i, _row, key in extra_reference.entry_rows(entries[d], warehouse.raw_dir)}
               for d in {r["dataset"] for c in cases for r in c["rows"]}}
    out = []
    for case in cases:
        rows = []
        for r in case["rows"]:
            prompt_id = keys_of[r["dataset"]][(r["file"].rsplit("/", 1)[-1], r["row"])]
            (pair,) = by_prompt[(r["dataset"], prompt_id)]
            rows.append(pair)
        out.append((case, rows))
    return out


@pytest.mark.slow
def test_warehouse_planted_cases_get_their_verdict(warehouse, planted):
    """Each planted case as the manifest's verdict says (computed by the rule when it was planted):
    its prompts near or not, its pairs of pairs related as listed and no other way, its rows'
    responses near-identical or not, its clusters one cluster each."""
    assert {c["kind"] for c, _ in planted} >= {
        "prompt_case_whitespace", "prompt_one_word", "prompt_template_chain", "same_comparison_edited",
        "label_conflict", "near_identical_responses", "prompt_near_miss", "comparison_near_miss"}
    prompts = {(r["dataset_a"], r["prompt_id_a"], r["dataset_b"], r["prompt_id_b"]): r["jaccard"]
               for r in warehouse.rows("select * from main.near_duplicate_prompts")}
    relations = defaultdict(set)
    for r in warehouse.rows("select pair_id_a, pair_id_b, relation from main.near_duplicate_pairs"):
        relations[frozenset((r["pair_id_a"], r["pair_id_b"]))].add(r["relation"])
    clusters = {(r["dataset"], r["prompt_id"]): r["cluster_id"]
                for r in warehouse.rows("select dataset, prompt_id, cluster_id from main.prompt_clusters")}
    wrong = []
    for case, rows in planted:
        for comparison in case["comparisons"]:
            x, y = (rows[i] for i in comparison["rows"])
            key = [(x["dataset"], x["prompt_id"]), (y["dataset"], y["prompt_id"])]
            found = prompts.get((*key[0], *key[1]), prompts.get((*key[1], *key[0])))
            if (found is not None) != comparison["prompts_near"]:
                wrong.append(f"{case['kind']} rows {comparison['rows']}: prompts near {found is not None}, "
                             f"planted {comparison['prompts_near']} (Jaccard {comparison['prompt_jaccard']})")
            elif found is not None and round(found, 6) != comparison["prompt_jaccard"]:
                wrong.append(f"{case['kind']} rows {comparison['rows']}: prompt Jaccard {found}, planted {comparison['prompt_jaccard']}")
            got = relations.get(frozenset((x["pair_id"], y["pair_id"])), set())
            if got != set(comparison["relations"]):
                wrong.append(f"{case['kind']} rows {comparison['rows']}: relations {sorted(got)}, planted {comparison['relations']}")
        for pair, r in zip(rows, case["rows"]):
            if ("near_identical_responses" in pair["integrity_flags"]) != r["responses_near"]:
                wrong.append(f"{case['kind']} {r['dataset']} row {r['row']}: near_identical_responses "
                             f"{not r['responses_near']}, planted {r['responses_near']}")
        for cluster in case["clusters"]:
            ids = {clusters[(rows[i]["dataset"], rows[i]["prompt_id"])] for i in cluster}
            if len(ids) != 1:
                wrong.append(f"{case['kind']}: rows {cluster} in clusters {sorted(ids)}")
    assert not wrong, "\n".join(wrong)
