"""The expected contents of the near-duplicate tables (``near_duplicate_prompts``,
``prompt_clusters``, ``near_duplicate_pairs``, ``near_duplicate_summary``) and flags
(``near_duplicate_pair``, ``label_conflict``, ``near_identical_responses`` in
``preference_pairs.integrity_flags``), computed in plain Python from the rule restated below; never
from the SQL.

The rule's primitives (texts, tokens, shingles, Jaccard, near) are
:mod:`preftools.generate.near_duplicate_rule`'s. The rule:

- A prompt's text is the contents of its user turns joined with "\\n", in order; a response's text
  the contents of its messages joined with "\\n". Tokens: maximal runs of Unicode letters and
  digits, lower-cased. Shingles: the set of word n-grams of the tokens (n = ``ngram``); a text of
  1 <= m < n tokens has one shingle, its whole token sequence; a text without tokens has none and
  is never near anything. Jaccard(a, b) = |a & b| / |a | b|; near: Jaccard >= ``threshold``.
- Two prompts (distinct (dataset, prompt_id), in one dataset or two) are near duplicates when their
  texts are near; prompt clusters are the connected components of that relation (a prompt alone is
  its own cluster).
- Two distinct pairs p, q whose prompts are the same (dataset, prompt_id) or near duplicates are the
  *same comparison* when chosen(p) ~ chosen(q) and rejected(p) ~ rejected(q), a *label conflict*
  when chosen(p) ~ rejected(q) and rejected(p) ~ chosen(q) (both is possible). Prompts of one
  cluster that are not near each other do not relate their pairs.
- Within one pair: *near-identical responses* when chosen ~ rejected.
- Dataset order (where a rule keeps one copy, and a before b in a row): the order given (the
  built-in datasets, then the registry's entries); within a dataset pair_id, for prompts prompt_id
  (string order).
- Flags: ``near_duplicate_pair`` on every pair of a connected component of the same-comparison
  graph except its first (``keep: none``: on every member of a component of 2+ pairs);
  ``label_conflict`` on both pairs of every label conflict; ``near_identical_responses``.

:func:`expected` is the entry point. It compares every prompt with every other through a prefix
filter over the distinct shingle sets (:func:`similar_sets`: every pair of sets with Jaccard >= t
shares a shingle among the rarest few of each, so only those are compared, exactly); the tests hold
it to ``expected(..., brute_force=True)``, which compares every prompt with every prompt and every
pair with every pair.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import combinations

from preftools.generate.near_duplicate_rule import (  # noqa: F401 (the rule, for the tests)
    DEFAULTS,
    jaccard,
    near,
    prompt_text,
    response_text,
    shingles,
    tokens,
)

KEEP = ("one", "none")
FLAGS = ("label_conflict", "near_duplicate_pair", "near_identical_responses")
RELATIONS = ("same_comparison", "label_conflict")
PROMPT_PAIR_COLUMNS = ("dataset_a", "prompt_id_a", "dataset_b", "prompt_id_b", "jaccard", "n_shared_shingles")
PROMPT_PAIR_KEY = ("dataset_a", "prompt_id_a", "dataset_b", "prompt_id_b")
CLUSTER_COLUMNS = ("dataset", "prompt_id", "cluster_id", "cluster_size", "n_datasets")
CLUSTER_KEY = ("dataset", "prompt_id")
PAIR_PAIR_COLUMNS = ("pair_id_a", "pair_id_b", "dataset_a", "dataset_b", "relation", "prompt_jaccard",
                     "chosen_a_jaccard", "rejected_a_jaccard")
PAIR_PAIR_KEY = ("pair_id_a", "pair_id_b", "relation")
SUMMARY_COLUMNS = ("dataset_a", "dataset_b", "n_prompt_pairs", "n_same_comparison", "n_label_conflicts")
SUMMARY_KEY = ("dataset_a", "dataset_b")

PromptKey = tuple[str, str]  # (dataset, prompt_id)


def settings(near_duplicates: dict | None) -> dict:
    """The var ``near_duplicates`` with the defaults for the keys it leaves out; ValueError for a
    value the rule has no meaning for (ngram a whole number >= 1, threshold in (0, 1], keep one or
    none)."""
    conf = {**DEFAULTS, **(near_duplicates or {})}
    n, t, keep = conf["ngram"], conf["threshold"], conf["keep"]
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"near_duplicates.ngram: a whole number >= 1, got {n!r}")
    if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0 < t <= 1:
        raise ValueError(f"near_duplicates.threshold: a number in (0, 1], got {t!r}")
    if keep not in KEEP:
        raise ValueError(f"near_duplicates.keep: one of {KEEP}, got {keep!r}")
    return conf


def stable_hash(*parts) -> str:
    """The warehouse's ``stable_hash([...])``: md5 (hex) of the parts joined with ':'."""
    return hashlib.md5(":".join(str(p) for p in parts).encode("utf-8")).hexdigest()


class Order:
    """Dataset order, then an id in string order."""

    def __init__(self, dataset_order: Iterable[str]):
        self.datasets = list(dataset_order)
        self.rank = {d: i for i, d in enumerate(self.datasets)}
        if len(self.rank) != len(self.datasets):
            raise ValueError(f"a dataset named twice in the order: {self.datasets}")

    def __call__(self, dataset: str, ident: str) -> tuple[int, str]:
        if dataset not in self.rank:
            raise ValueError(f"dataset {dataset!r} is not in the dataset order {self.datasets}")
        return self.rank[dataset], ident


class Components:
    """Union-find: the connected components of the edges given."""

    def __init__(self, nodes: Iterable):
        self.parent = {x: x for x in nodes}

    def find(self, x):
        root = x
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[x] != root:
            self.parent[x], x = root, self.parent[x]
        return root

    def union(self, a, b) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[ra] = rb

    def groups(self) -> list[list]:
        out = defaultdict(list)
        for x in self.parent:
            out[self.find(x)].append(x)
        return list(out.values())


# ------------------------------------------------------------------------------ near texts, every pair

def prefix_length(size: int, threshold: float) -> int:
    """How many of a set's rarest shingles a near set must share one of. Two sets with Jaccard >= t
    share s >= t * |a | b| >= t * |a| shingles; of a's shingles in one global order, a prefix of
    |a| - alpha + 1 (alpha <= s) holds the first shared one, and so does b's: the prefixes meet.
    alpha = floor(t * |a|), less a hair for floating point, at least 1: never more than s, so no
    near pair is missed; a longer prefix only adds candidates, which are then compared exactly."""
    alpha = max(1, math.floor(threshold * size * (1 - 1e-9)))
    return max(1, min(size, size - alpha + 1))


def similar_sets(sets: list[frozenset], threshold: float) -> list[tuple[int, int]]:
    """Index pairs (i < j) of the non-empty sets whose Jaccard is >= threshold: candidates from an
    inverted index of each set's prefix (its rarest shingles, :func:`prefix_length`), each candidate
    then compared exactly by :func:`near`."""
    freq = Counter(g for s in sets for g in s)
    index: dict[tuple, list[int]] = defaultdict(list)
    out = []
    for j, s in enumerate(sets):
        if not s:
            continue
        ranked = sorted(s, key=lambda g: (freq[g], g))
        candidates: set[int] = set()
        for g in ranked[:prefix_length(len(s), threshold)]:
            candidates.update(index[g])
            index[g].append(j)
        out += [(i, j) for i in candidates if near(sets[i], s, threshold)]
    return sorted(out)


# ------------------------------------------------------------------------------ the input

@dataclass(frozen=True)
class Pair:
    dataset: str
    pair_id: str
    prompt: PromptKey
    chosen: frozenset
    rejected: frozenset


def read_pairs(rows: Iterable[dict], n: int) -> tuple[dict[PromptKey, frozenset], list[Pair]]:
    """(the shingles of each prompt, the pairs with their responses' shingles) from rows of
    preference_pairs. Every pair of one (dataset, prompt_id) must have the same prompt text."""
    cache: dict[str, frozenset] = {}

    def sh(text: str) -> frozenset:
        if text not in cache:
            cache[text] = shingles(text, n)
        return cache[text]

    texts: dict[PromptKey, str] = {}
    pairs, seen = [], set()
    for r in rows:
        key = (r["dataset"], r["prompt_id"])
        text = prompt_text(r["prompt"])
        if texts.setdefault(key, text) != text:
            raise ValueError(f"prompt {key}: two pairs give it different texts ({texts[key]!r}, {text!r}); "
                             "the rule compares one text per (dataset, prompt_id)")
        if r["pair_id"] in seen:
            raise ValueError(f"pair_id {r['pair_id']!r} twice")
        seen.add(r["pair_id"])
        pairs.append(Pair(r["dataset"], r["pair_id"], key, sh(response_text(r["chosen"])),
                          sh(response_text(r["rejected"]))))
    return {key: sh(text) for key, text in texts.items()}, pairs


# ------------------------------------------------------------------------------ the four steps

def near_prompts(prompts: dict[PromptKey, frozenset], threshold: float, order: Order,
                 brute_force: bool = False) -> dict[tuple[PromptKey, PromptKey], tuple[float, int]]:
    """(prompt a, prompt b) -> (Jaccard, shared shingles) for every two near prompts, a before b.
    Prompts with the same shingles are grouped first (Jaccard 1 with each other), then the
    distinct sets compared by :func:`similar_sets`; ``brute_force``: every prompt with every prompt."""
    def ordered(ka: PromptKey, kb: PromptKey) -> tuple[PromptKey, PromptKey]:
        return (ka, kb) if order(*ka) <= order(*kb) else (kb, ka)

    out = {}
    if brute_force:
        for ka, kb in combinations(prompts, 2):
            a, b = prompts[ka], prompts[kb]
            if near(a, b, threshold):
                out[ordered(ka, kb)] = (jaccard(a, b), len(a & b))
        return out
    groups: dict[frozenset, list[PromptKey]] = defaultdict(list)
    for key, s in prompts.items():
        if s:
            groups[s].append(key)
    for s, keys in groups.items():
        for ka, kb in combinations(keys, 2):
            out[ordered(ka, kb)] = (jaccard(s, s), len(s))
    distinct = list(groups)
    for i, j in similar_sets(distinct, threshold):
        a, b = distinct[i], distinct[j]
        found = (jaccard(a, b), len(a & b))
        for ka in groups[a]:
            for kb in groups[b]:
                out[ordered(ka, kb)] = found
    return out


def related_pairs(pairs: list[Pair], prompt_pairs: dict, order: Order,
                  brute_force: bool = False) -> list[tuple[Pair, Pair, float]]:
    """(pair a, pair b, prompt Jaccard) for every two distinct pairs whose prompts are the same
    (Jaccard 1.0) or near duplicates, a before b."""
    def ordered(p: Pair, q: Pair) -> tuple[Pair, Pair]:
        return (p, q) if order(p.dataset, p.pair_id) <= order(q.dataset, q.pair_id) else (q, p)

    near_of = {frozenset(k): v[0] for k, v in prompt_pairs.items()}
    out = []
    if brute_force:
        for p, q in combinations(pairs, 2):
            if p.prompt == q.prompt:
                out.append((*ordered(p, q), 1.0))
            elif frozenset((p.prompt, q.prompt)) in near_of:
                out.append((*ordered(p, q), near_of[frozenset((p.prompt, q.prompt))]))
        return out
    by_prompt: dict[PromptKey, list[Pair]] = defaultdict(list)
    for p in pairs:
        by_prompt[p.prompt].append(p)
    for group in by_prompt.values():
        out += [(*ordered(p, q), 1.0) for p, q in combinations(group, 2)]
    for (ka, kb), (jac, _) in prompt_pairs.items():
        out += [(*ordered(p, q), jac) for p in by_prompt.get(ka, ()) for q in by_prompt.get(kb, ())]
    return out


def relation_rows(related: list[tuple[Pair, Pair, float]], threshold: float) -> list[dict]:
    """near_duplicate_pairs: a row per (related pair of pairs, relation)."""
    out = []
    for a, b, prompt_jac in related:
        for relation, (ca, rb) in (("same_comparison", (b.chosen, b.rejected)),
                                   ("label_conflict", (b.rejected, b.chosen))):
            if near(a.chosen, ca, threshold) and near(a.rejected, rb, threshold):
                out.append({"pair_id_a": a.pair_id, "pair_id_b": b.pair_id, "dataset_a": a.dataset,
                            "dataset_b": b.dataset, "relation": relation, "prompt_jaccard": prompt_jac,
                            "chosen_a_jaccard": jaccard(a.chosen, ca), "rejected_a_jaccard": jaccard(a.rejected, rb)})
    return out


def clusters(prompts: dict[PromptKey, frozenset], prompt_pairs: dict, order: Order) -> list[dict]:
    """prompt_clusters: every prompt with its cluster (the connected components of near prompts)."""
    comp = Components(prompts)
    for ka, kb in prompt_pairs:
        comp.union(ka, kb)
    out = []
    for members in comp.groups():
        first = min(members, key=lambda k: order(*k))
        datasets = {d for d, _ in members}
        out += [{"dataset": d, "prompt_id": p, "cluster_id": f"{first[0]}:{first[1]}", "cluster_size": len(members),
                 "n_datasets": len(datasets)} for d, p in members]
    return out


def flags(pairs: list[Pair], rows: list[dict], threshold: float, keep: str, order: Order) -> dict[str, set[str]]:
    """pair_id -> the near-duplicate flags of the pair (an empty set for none)."""
    out: dict[str, set[str]] = {p.pair_id: set() for p in pairs}
    dataset_of = {p.pair_id: p.dataset for p in pairs}
    for p in pairs:
        if near(p.chosen, p.rejected, threshold):
            out[p.pair_id].add("near_identical_responses")
    same = Components(out)
    for r in rows:
        if r["relation"] == "label_conflict":
            out[r["pair_id_a"]].add("label_conflict")
            out[r["pair_id_b"]].add("label_conflict")
        else:
            same.union(r["pair_id_a"], r["pair_id_b"])
    for members in same.groups():
        if len(members) < 2:
            continue
        members.sort(key=lambda i: order(dataset_of[i], i))
        for i in members[1:] if keep == "one" else members:
            out[i].add("near_duplicate_pair")
    return out


def summary(prompt_rows: list[dict], pair_rows: list[dict], order: Order) -> list[dict]:
    """near_duplicate_summary: a row per (dataset a, dataset b), a at or before b, every dataset."""
    n_prompts = Counter((r["dataset_a"], r["dataset_b"]) for r in prompt_rows)
    n_rel = Counter((r["dataset_a"], r["dataset_b"], r["relation"]) for r in pair_rows)
    return [{"dataset_a": a, "dataset_b": b, "n_prompt_pairs": n_prompts[(a, b)],
             "n_same_comparison": n_rel[(a, b, "same_comparison")],
             "n_label_conflicts": n_rel[(a, b, "label_conflict")]}
            for i, a in enumerate(order.datasets) for b in order.datasets[i:]]


# ------------------------------------------------------------------------------ everything

@dataclass
class Expected:
    near_duplicate_prompts: list[dict]
    prompt_clusters: list[dict]
    near_duplicate_pairs: list[dict]
    near_duplicate_summary: list[dict]
    flags: dict[str, set[str]]  # pair_id -> its near-duplicate flags (every pair; an empty set for none)
    cluster_of_pair: dict[str, str] = field(default_factory=dict)  # pair_id -> cluster_id of its prompt


def expected(pairs: Iterable[dict], dataset_order: Iterable[str], ngram: int = DEFAULTS["ngram"],
             threshold: float = DEFAULTS["threshold"], keep: str = DEFAULTS["keep"], brute_force: bool = False,
             **_) -> Expected:
    """The four tables and the flags for rows of preference_pairs ``pairs`` (dataset, pair_id,
    prompt_id, prompt, chosen, rejected; the messages as lists of {role, content}), datasets in
    ``dataset_order`` (every dataset of the rows, and those the summary lists), the settings of the
    var ``near_duplicates``. Rows are sorted by their tables' keys."""
    settings({"ngram": ngram, "threshold": threshold, "keep": keep})
    order = Order(dataset_order)
    prompts, parsed = read_pairs(pairs, ngram)
    for d, _ in prompts:
        order(d, "")  # every dataset is in the order
    found = near_prompts(prompts, threshold, order, brute_force)
    prompt_rows = [{"dataset_a": a[0], "prompt_id_a": a[1], "dataset_b": b[0], "prompt_id_b": b[1],
                    "jaccard": jac, "n_shared_shingles": shared} for (a, b), (jac, shared) in found.items()]
    pair_rows = relation_rows(related_pairs(parsed, found, order, brute_force), threshold)
    cluster_rows = clusters(prompts, found, order)
    cluster_of = {(r["dataset"], r["prompt_id"]): r["cluster_id"] for r in cluster_rows}
    return Expected(
        near_duplicate_prompts=sort_rows(prompt_rows, PROMPT_PAIR_KEY),
        prompt_clusters=sort_rows(cluster_rows, CLUSTER_KEY),
        near_duplicate_pairs=sort_rows(pair_rows, PAIR_PAIR_KEY),
        near_duplicate_summary=summary(prompt_rows, pair_rows, order),
        flags=flags(parsed, pair_rows, threshold, keep, order),
        cluster_of_pair={p.pair_id: cluster_of[p.prompt] for p in parsed},
    )


def sort_rows(rows: list[dict], key: tuple) -> list[dict]:
    return sorted(rows, key=lambda r: tuple(r[k] for k in key))


# ------------------------------------------------------------------------------ the mixture's cap

def mixture_order(pair_id: str, random_seed) -> tuple[str, str]:
    """A pair's place in the mixture's draw: stable_hash([random_seed, 'mixture', pair_id]), then pair_id."""
    return stable_hash(random_seed, "mixture", pair_id), pair_id


def capped_mixture(drawn: Iterable[str], cluster_of_pair: dict[str, str], k: int, random_seed) -> set[str]:
    """Of the pairs the fraction draw takes (``drawn``), per prompt cluster the first ``k`` in
    :func:`mixture_order`."""
    by_cluster: dict[str, list[str]] = defaultdict(list)
    for pid in drawn:
        by_cluster[cluster_of_pair[pid]].append(pid)
    return {pid for members in by_cluster.values()
            for pid in sorted(members, key=lambda i: mixture_order(i, random_seed))[:k]}


def warehouse_flags(wh, near_duplicates: dict | None = None) -> dict[str, set[str]]:
    """The near-duplicate flags of every pair of a built warehouse (``wh``: conftest.Warehouse),
    from its preference_pairs rows, datasets in the order of its build (the built-in groups it
    enabled, then its `extra_datasets` entries): for the tests of other flags, which take these
    from here instead of recomputing the rule."""
    enabled = wh.scalar("select datasets from meta.warehouse_build_info").split(",")
    entries = [r["dataset"] for r in wh.rows("select dataset from meta.extra_datasets order by registry_order")]
    order = [d for d in ("ultrafeedback", "code_ultrafeedback", "rever") if d in enabled] + entries
    pairs = wh.rows("select dataset, pair_id, prompt_id, prompt, chosen, rejected from main.preference_pairs")
    return expected(pairs, order, **settings(near_duplicates)).flags
