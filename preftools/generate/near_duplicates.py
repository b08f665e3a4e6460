"""Near-duplicate cases planted in the stand-ins of pairs (docs/near-duplicates.md).

The rule, as the warehouse applies it (:mod:`preftools.generate.near_duplicate_rule`): a prompt's
text is its user turns joined with "\\n", a response's its messages; the shingles of a text are the
word 5-grams of its tokens (one shingle for 1-4 tokens, none without tokens); two texts are near
when the Jaccard similarity of their shingles is at least 0.8. Two prompts are near duplicates
when their texts are near (clusters: connected components); two pairs with near prompts are the
same comparison when chosen~chosen and rejected~rejected, a label conflict when chosen~rejected
and rejected~chosen; a pair has near-identical responses when chosen~rejected.

:func:`plan_near_duplicates` writes the texts of every case, one :class:`Case` each, made of
members (a prompt, a chosen and a rejected response) that go to rows of the registry's
``preference`` stand-ins (:data:`TARGETS`; each row's pair is its chosen against its rejected):

* ``prompt_case_whitespace``: one prompt in other letter case and white space (Jaccard 1);
* ``prompt_one_word``: one word changed in a prompt of 50 tokens (41 of 51 shingles: just above 0.8);
* ``prompt_template_chain``: three prompts of one template with two slots, A and B differing in the
  first slot, B and C in the second: A~B, B~C, A not near C, one cluster of three;
* ``same_comparison_edited``: a pair copied with its prompt, chosen and rejected each a word apart;
* ``label_conflict``: a pair copied with chosen and rejected swapped (restyled, or a word apart),
  as H4's pairs and argilla's cleaned ones disagree;
* ``near_identical_responses``: one pair whose rejected response is its chosen one with a word changed;
* ``prompt_near_miss``: one word changed in a prompt of 48 tokens (39 of 49: just below 0.8);
* ``comparison_near_miss``: a pair copied as in ``same_comparison_edited`` but its rejected one of
  48 tokens with a word changed: the prompts and chosen responses near, the rejected ones not.

Every other text of a case is unrelated, and no two cases share a shingle (:class:`_Shingles`), so
each case's verdict (:func:`verdict`) is the rule's on its rows alone; a case is kept only when
that verdict is the one its kind intends (:func:`_intended`, a draw that misses is drawn again).
The texts are random words of the text bank's vocabulary (:data:`.common.WORDS`) in sentences,
drawn from their own stream (not the bank's runs of sentences), so no other text of the stand-ins
is near them. The stand-ins' generators (:mod:`.extra_pairs`) put each member in a row free of any
other planted quirk (not a quirk's row, a duplicate's source, a donor, a contamination case or a
planted bias), keeping its scores (chosen strictly above rejected), so the rows are valid pairs,
and tell the plan where (:meth:`NearDuplicatePlan.place`); :func:`record` lists the cases whose
every member was written in the manifest under ``near_duplicates``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from preftools.generate.common import WORDS, n_planted, rng_for
from preftools.generate.extra_common import restyle
from preftools.generate.near_duplicate_rule import DEFAULTS, jaccard, near, prompt_text, response_text, shingles

THRESHOLD = DEFAULTS["threshold"]
RATE = 0.0005  # cases of each kind per row of H4's train_prefs (at least 2 of each)
H4, ARGILLA, RLHFLOW = "h4_ultrafeedback", "argilla_ultrafeedback_cleaned", "rlhflow_ultrafeedback"
TARGETS = (H4, ARGILLA, RLHFLOW)  # the registry's preference stand-ins, in registry order
KINDS = ("prompt_case_whitespace", "prompt_one_word", "prompt_template_chain", "same_comparison_edited",
         "label_conflict", "near_identical_responses", "prompt_near_miss", "comparison_near_miss")
SAME_COMPARISON, LABEL_CONFLICT = "same_comparison", "label_conflict"
# where the members of a case go: the i-th case of a kind takes routes[(i + offset) % len(routes)]
# (offset: the kind's position in KINDS, so that two cases of each kind take different routes)
PAIR_ROUTES = ((H4, ARGILLA), (ARGILLA, RLHFLOW), (RLHFLOW, H4), (H4, H4), (ARGILLA, ARGILLA), (RLHFLOW, RLHFLOW))
CONFLICT_ROUTES = ((H4, ARGILLA), (ARGILLA, H4), (H4, RLHFLOW), (ARGILLA, RLHFLOW))  # H4 and argilla first
CHAIN_ROUTES = ((H4, ARGILLA, RLHFLOW), (ARGILLA, RLHFLOW, H4), (RLHFLOW, H4, ARGILLA))
SINGLE_ROUTES = ((H4,), (ARGILLA,), (RLHFLOW,))
ATTEMPTS = 50  # draws of one case before giving up on it
ROUND = 6  # decimals of the Jaccard values in the manifest


def cases_per_kind(h4_rows: int) -> int:
    """Cases of each kind for a stand-in of H4 with ``h4_rows`` train_prefs rows (31 at scale 1.0, 2 at 0.01)."""
    return n_planted(h4_rows, RATE, 2)


# ======================================================================================
# texts
# ======================================================================================
@dataclass(frozen=True)
class Draft:
    """A text as its words (one token each) and its sentence lengths: rendered as sentences (the
    first word capitalised, a full stop at the end), a blank line after every third one."""

    words: tuple[str, ...]
    lengths: tuple[int, ...]

    def text(self) -> str:
        out, start = [], 0
        for k, length in enumerate(self.lengths):
            words = self.words[start:start + length]
            start += length
            sentence = " ".join((words[0].capitalize(),) + words[1:]) + "."
            out.append(sentence if k == 0 else ("\n\n" if k % 3 == 0 else " ") + sentence)
        return "".join(out)

    def with_words(self, replacements: dict[int, str]) -> Draft:
        words = list(self.words)
        for position, word in replacements.items():
            words[position] = word
        return Draft(tuple(words), self.lengths)


def draft(rng: np.random.Generator, n: int) -> Draft:
    """``n`` random words in sentences of 6-14 words (the last one may be shorter)."""
    words = tuple(WORDS[i] for i in rng.integers(0, len(WORDS), n))
    lengths = []
    while sum(lengths) < n:
        lengths.append(min(int(rng.integers(6, 15)), n - sum(lengths)))
    return Draft(words, tuple(lengths))


def _length(rng: np.random.Generator, lo: int, hi: int) -> int:
    return int(rng.integers(lo, hi + 1))


def _other_word(rng: np.random.Generator, used: set[str]) -> str:
    while True:
        word = WORDS[rng.integers(0, len(WORDS))]
        if word not in used:
            return word


def _one_word(rng: np.random.Generator, draft: Draft) -> Draft:
    """The draft with one word, at least 4 from either end (so 5 shingles change), replaced by one it lacks."""
    position = _length(rng, 4, len(draft.words) - 5)
    return draft.with_words({position: _other_word(rng, set(draft.words))})


# ======================================================================================
# the cases
# ======================================================================================
@dataclass(frozen=True)
class Member:
    """One row of a case: where it goes and its texts (the prompt is one user turn, each response one
    assistant turn)."""

    dataset: str
    prompt: str
    chosen: str
    rejected: str

    def messages(self) -> tuple[list[dict], list[dict], list[dict]]:
        """(prompt, chosen, rejected) as the warehouse's pair holds them."""
        return ([{"role": "user", "content": self.prompt}], [{"role": "assistant", "content": self.chosen}],
                [{"role": "assistant", "content": self.rejected}])


@dataclass(frozen=True)
class Case:
    kind: str
    members: tuple[Member, ...]
    verdict: dict  # the rule's, on the members' texts (:func:`verdict`)


def _j(a: frozenset, b: frozenset) -> float:
    return round(jaccard(a, b), ROUND)


def relations(prompts_near: bool, chosen_near: bool, rejected_near: bool, crossed_near: tuple[bool, bool]) -> list[str]:
    """The relations of two pairs: none unless their prompts are near (or the same)."""
    if not prompts_near:
        return []
    out = []
    if chosen_near and rejected_near:
        out.append(SAME_COMPARISON)
    if all(crossed_near):
        out.append(LABEL_CONFLICT)
    return out


def verdict(pairs: list[tuple[list[dict], list[dict], list[dict]]]) -> dict:
    """The rule's verdict on a case's pairs, each (prompt, chosen, rejected) as message lists:
    ``rows`` (per pair: chosen/rejected Jaccard, near-identical responses or not), ``comparisons``
    (per two pairs i < j: the prompt Jaccard, prompts near or not, the relations and the Jaccards of
    chosen i/chosen j, rejected i/rejected j, chosen i/rejected j, rejected i/chosen j) and
    ``clusters`` (the pairs' prompts' connected components, as lists of pair indices)."""
    sets = [(shingles(prompt_text(p)), shingles(response_text(c)), shingles(response_text(r))) for p, c, r in pairs]
    rows = [{"responses_jaccard": _j(c, r), "responses_near": near(c, r)} for _, c, r in sets]
    comparisons = []
    parent = list(range(len(pairs)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for i, j in itertools.combinations(range(len(pairs)), 2):
        (pi, ci, ri), (pj, cj, rj) = sets[i], sets[j]
        prompts_near = near(pi, pj)
        if prompts_near:
            parent[root(j)] = root(i)
        comparisons.append({
            "rows": [i, j], "prompt_jaccard": _j(pi, pj), "prompts_near": prompts_near,
            "relations": relations(prompts_near, near(ci, cj), near(ri, rj), (near(ci, rj), near(ri, cj))),
            "chosen_jaccard": _j(ci, cj), "rejected_jaccard": _j(ri, rj),
            "chosen_rejected_jaccard": _j(ci, rj), "rejected_chosen_jaccard": _j(ri, cj),
        })
    clusters: dict[int, list[int]] = {}
    for i in range(len(pairs)):
        clusters.setdefault(root(i), []).append(i)
    return {"rows": rows, "comparisons": comparisons, "clusters": sorted(clusters.values())}


def _off_threshold(value: float) -> bool:
    return abs(value - THRESHOLD) > 1e-6


def _intended(kind: str, v: dict) -> bool:
    """The verdict is the one the kind is planted for, and no Jaccard sits on the threshold."""
    rows, comparisons = v["rows"], v["comparisons"]
    values = [r["responses_jaccard"] for r in rows] + [c[k] for c in comparisons for k in c if k.endswith("jaccard")]
    if not all(_off_threshold(x) for x in values):
        return False
    if kind == "near_identical_responses":
        return len(rows) == 1 and rows[0]["responses_near"] and rows[0]["responses_jaccard"] < 1
    if any(r["responses_near"] for r in rows):
        return False
    if kind == "prompt_template_chain":
        near_ = [c["prompts_near"] for c in comparisons]  # (0, 1), (0, 2), (1, 2)
        return near_ == [True, False, True] and v["clusters"] == [[0, 1, 2]] and \
            all(c["relations"] == [] for c in comparisons)
    (c,) = comparisons
    if kind == "prompt_case_whitespace":
        return c["prompt_jaccard"] == 1 and c["prompts_near"] and c["relations"] == []
    if kind == "prompt_one_word":
        return c["prompts_near"] and c["prompt_jaccard"] < 1 and c["relations"] == []
    if kind == "prompt_near_miss":
        return not c["prompts_near"] and c["prompt_jaccard"] >= THRESHOLD - 0.05 and c["relations"] == []
    if kind == "same_comparison_edited":
        return c["prompts_near"] and c["relations"] == [SAME_COMPARISON] and \
            max(c["prompt_jaccard"], c["chosen_jaccard"], c["rejected_jaccard"]) < 1
    if kind == "label_conflict":
        return c["prompts_near"] and c["relations"] == [LABEL_CONFLICT]
    if kind == "comparison_near_miss":
        return c["prompts_near"] and c["relations"] == [] and c["chosen_jaccard"] >= THRESHOLD and \
            THRESHOLD - 0.05 <= c["rejected_jaccard"] < THRESHOLD
    raise ValueError(kind)


def _texts(kind: str, i: int, rng: np.random.Generator) -> list[tuple[str, str, str]]:
    """The (prompt, chosen, rejected) of the members of the i-th case of a kind."""
    def response(lo: int = 30, hi: int = 60) -> Draft:
        return draft(rng, _length(rng, lo, hi))

    def edited(draft: Draft) -> str:
        return _one_word(rng, draft).text()

    if kind == "prompt_case_whitespace":
        prompt = draft(rng, _length(rng, 20, 40)).text()
        return [(prompt, response().text(), response().text()), (restyle(prompt), response().text(), response().text())]
    if kind in ("prompt_one_word", "prompt_near_miss"):
        prompt = draft(rng, 50 if kind == "prompt_one_word" else 48)
        return [(prompt.text(), response().text(), response().text()),
                (edited(prompt), response().text(), response().text())]
    if kind == "prompt_template_chain":
        # 74 tokens (70 shingles); two 2-word slots far apart: one slot apart 64 / 76, both 58 / 82
        base = draft(rng, 74)
        first, second = _length(rng, 8, 20), _length(rng, 48, 62)
        fills = {}
        for slot in ("a1", "b1", "a2", "b2"):
            fills[slot] = [_other_word(rng, set(base.words) | {w for f in fills.values() for w in f}) for _ in range(2)]

        def member(one: list[str], two: list[str]) -> str:
            return base.with_words({first: one[0], first + 1: one[1], second: two[0], second + 1: two[1]}).text()

        return [(member(fills["a1"], fills["a2"]), response().text(), response().text()),
                (member(fills["b1"], fills["a2"]), response().text(), response().text()),
                (member(fills["b1"], fills["b2"]), response().text(), response().text())]
    if kind in ("same_comparison_edited", "comparison_near_miss"):
        prompt, chosen = draft(rng, _length(rng, 55, 70)), response(70, 100)
        rejected = response(70, 100) if kind == "same_comparison_edited" else draft(rng, 48)
        return [(prompt.text(), chosen.text(), rejected.text()), (edited(prompt), edited(chosen), edited(rejected))]
    if kind == "label_conflict":
        prompt, chosen, rejected = draft(rng, _length(rng, 55, 70)), response(60, 100), response(60, 100)
        if i % 2 == 0:  # as a cross-dataset copy: other letter case and white space
            return [(prompt.text(), chosen.text(), rejected.text()),
                    (restyle(prompt.text()), restyle(rejected.text()), restyle(chosen.text()))]
        return [(prompt.text(), chosen.text(), rejected.text()), (edited(prompt), edited(rejected), edited(chosen))]
    if kind == "near_identical_responses":
        chosen = response(70, 100)
        return [(draft(rng, _length(rng, 20, 40)).text(), chosen.text(), edited(chosen))]
    raise ValueError(kind)


def _routes(kind: str) -> tuple[tuple[str, ...], ...]:
    if kind == "prompt_template_chain":
        return CHAIN_ROUTES
    if kind == "near_identical_responses":
        return SINGLE_ROUTES
    return CONFLICT_ROUTES if kind == "label_conflict" else PAIR_ROUTES


class _Shingles:
    """Every shingle of the cases kept so far: a new case may share none."""

    def __init__(self):
        self.seen: set[tuple[str, ...]] = set()

    @staticmethod
    def of(members: list[tuple[str, str, str]]) -> set:
        return {s for texts in members for text in texts for s in shingles(text)}

    def fresh(self, members: list[tuple[str, str, str]]) -> bool:
        return not (self.of(members) & self.seen)

    def add(self, members: list[tuple[str, str, str]]) -> None:
        self.seen |= self.of(members)


# ======================================================================================
# the plan
# ======================================================================================
@dataclass(frozen=True)
class Slot:
    """A member of a case waiting for its row."""

    case: int  # index in NearDuplicatePlan.cases
    member: int
    texts: Member


@dataclass
class NearDuplicatePlan:
    """The cases, and the rows their members were written to (filled in by the stand-ins' generators)."""

    cases: list[Case] = field(default_factory=list)
    # (case, member) -> (dataset, hub_id, file relative to the repo, 0-based row)
    placed: dict[tuple[int, int], tuple[str, str, str, int]] = field(default_factory=dict)

    def slots(self, dataset: str) -> list[Slot]:
        """The members that go to rows of ``dataset``, in case order."""
        return [Slot(c, m, member) for c, case in enumerate(self.cases) for m, member in enumerate(case.members)
                if member.dataset == dataset]

    def place(self, dataset: str, hub_id: str, file: str, slots: list[Slot], rows) -> None:
        """Note that ``slots[k]`` was written to row ``rows[k]`` of ``file`` (a slot without a row is not)."""
        for slot, row in zip(slots, rows):
            self.placed[(slot.case, slot.member)] = (dataset, hub_id, file, int(row))


def plan_near_duplicates(seed: int, per_kind: int) -> NearDuplicatePlan:
    """``per_kind`` cases of each kind of :data:`KINDS`, each drawn (from its own random stream) until
    its verdict is the intended one and it shares no shingle with an earlier case."""
    plan = NearDuplicatePlan()
    seen = _Shingles()
    for offset, kind in enumerate(KINDS):
        routes = _routes(kind)
        for i in range(per_kind):
            rng = rng_for(seed, "near_duplicates", kind, i)
            route = routes[(i + offset) % len(routes)]
            for _ in range(ATTEMPTS):
                texts = _texts(kind, i, rng)
                members = tuple(Member(dataset, *t) for dataset, t in zip(route, texts, strict=True))
                v = verdict([m.messages() for m in members])
                if _intended(kind, v) and seen.fresh(texts):
                    plan.cases.append(Case(kind, members, v))
                    seen.add(texts)
                    break
    return plan


def record(manifest: dict, plan: NearDuplicatePlan | None) -> None:
    """List in the manifest (``near_duplicates``) every case whose members were all written: its
    kind, its rows (dataset, hub_id, file relative to the raw data folder, 0-based row, and the
    rule's chosen/rejected verdict) and the rule's verdict on them (:func:`verdict`)."""
    if plan is None:
        return
    for c, case in enumerate(plan.cases):
        where = [plan.placed.get((c, m)) for m in range(len(case.members))]
        if None in where:
            continue
        rows = [{"dataset": dataset, "hub_id": hub_id, "file": f"{hub_id}/{file}", "row": row, **verdict_row}
                for (dataset, hub_id, file, row), verdict_row in zip(where, case.verdict["rows"])]
        manifest.setdefault("near_duplicates", []).append({
            "kind": case.kind, "rows": rows, "comparisons": case.verdict["comparisons"],
            "clusters": case.verdict["clusters"],
        })
