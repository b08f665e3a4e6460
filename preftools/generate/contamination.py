"""Benchmark contamination planted in the generated training data (docs/decontamination.md).

The rule, as the warehouse applies it (:mod:`preftools.generate.contamination_rule`): tokens are maximal runs
of Unicode letters and digits, lower-cased; an eval text of m tokens matches a user turn when its
tokens equal the turn's (exact), when m >= 8 and more than half of its token positions lie inside
an 8-gram the turn also has (coverage > 0.5), or when 0 < m < 8 and its tokens occur contiguously
in the turn.

:func:`plan_contamination` turns eval items of the stand-ins (:mod:`.eval_sets`) into training
texts, one :class:`Case` each, for a target: a block of UltraFeedback rows by source, the coseal
CodeUltraFeedback rows, or a registered extra dataset (:data:`CASES`):

* ``exact``: the eval text as the prompt (and every UltraFeedback row of source truthful_qa the
  planting reaches: a TruthfulQA question, as in the real dataset);
* ``case_punctuation``: upper-cased, punctuation replaced: the same tokens;
* ``inside_longer``: the eval text inside a longer prompt (coverage 1);
* ``paraphrase_above`` / ``paraphrase_below``: the first m // 2 + 1 / m // 2 tokens kept, every
  fourth later one replaced: coverage just above / at or below 0.5;
* ``short_inside``: a short question (fewer than 8 tokens) inside a longer prompt;
  ``short_scattered``: its words, in reverse order (no match);
* ``code``: a HumanEval prompt as a CodeUltraFeedback instruction, alone or after a lead-in.

An item is taken for a case only when, by :class:`EvalIndex`, the planted text matches that eval
text and no other (or nothing, for the two no-match kinds), so ``expect_match`` and ``coverage`` of
the manifest are the rule's verdict. The generators of the targets put the texts in rows that form
a preference pair (and carry no other planted quirk) and note each case in the manifest under
``contamination`` (:func:`record`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from preftools.generate.common import WORDS, rng_for
from preftools.generate.contamination_rule import compare, tokens

NGRAM = 8
THRESHOLD = 0.5
WORD = re.compile(r"[^\W_]+")  # a word of the generated (ASCII) texts, for rewording them
EXPECT_MATCH = {"exact": True, "case_punctuation": True, "inside_longer": True, "paraphrase_above": True,
                "paraphrase_below": False, "short_inside": True, "short_scattered": False, "code": True}


# ======================================================================================
# the rule: preftools.generate.contamination_rule
# ======================================================================================
def coverage(eval_text: str, user_turn: str, n: int = NGRAM) -> float:
    """The share of the eval text's token positions the user turn covers (1 for a short text found
    whole, 0 for an eval text without tokens)."""
    return compare(tokens(eval_text), tokens(user_turn), n, THRESHOLD).coverage


def matches(eval_text: str, user_turn: str, n: int = NGRAM, threshold: float = THRESHOLD) -> bool:
    return compare(tokens(eval_text), tokens(user_turn), n, threshold).matched


class EvalIndex:
    """Every eval text of the stand-ins, by its n-grams (a short one by its tokens): which eval
    texts a training text matches."""

    def __init__(self, eval_sets: dict):  # name -> .eval_sets.EvalSet
        self.texts: dict[tuple[str, int, int], str] = {}
        self.by_gram: dict[tuple, set] = defaultdict(set)
        self.short: dict[tuple, set] = defaultdict(set)
        for name, eval_set in eval_sets.items():
            for item, turns in enumerate(eval_set.items):
                for turn, text in enumerate(turns):
                    key = (name, item, turn)
                    self.texts[key] = text
                    t = tokens(text)
                    if len(t) < NGRAM:
                        self.short[tuple(t)].add(key)
                    for i in range(len(t) - NGRAM + 1):
                        self.by_gram[tuple(t[i: i + NGRAM])].add(key)

    def matched(self, user_turn: str) -> set[tuple[str, int, int]]:
        """The (eval set, item, turn) of every eval text the user turn matches."""
        u = tokens(user_turn)
        found = set()
        for i in range(len(u) - NGRAM + 1):
            found |= self.by_gram.get(tuple(u[i: i + NGRAM]), set())
        found = {key for key in found if matches(self.texts[key], user_turn)}
        for length in {len(t) for t in self.short if t}:
            for i in range(len(u) - length + 1):
                found |= self.short.get(tuple(u[i: i + length]), set())
        return found


# ======================================================================================
# the planted texts
# ======================================================================================
def restyled(text: str) -> str:
    """Upper case, every run of other characters between tokens one space (a new line where it
    had one), an exclamation mark at the end: the same tokens."""
    parts = re.split(f"({WORD.pattern})", text)
    out = []
    for k, part in enumerate(parts):
        if k % 2:
            out.append(part.upper())
        elif 0 < k < len(parts) - 1:
            out.append("\n" if "\n" in part else " ")
    return "".join(out) + "!"


def paraphrased(text: str, keep: int, rng: np.random.Generator) -> str:
    """The text with its first ``keep`` tokens as they are and every fourth token after them replaced
    by another word: no 8-gram after the first ``keep`` tokens is left."""
    spans = [m.span() for m in WORD.finditer(text)]
    out, last = [], 0
    for j, (start, end) in enumerate(spans):
        if j >= keep and (j - keep) % 4 == 0:
            word = text[start:end].lower()
            while word == text[start:end].lower():
                word = WORDS[rng.integers(0, len(WORDS))]
            out += [text[last:start], word]
            last = end
    return "".join(out) + text[last:]


def scattered(text: str) -> str:
    """The words of a short question in reverse order: all there, never in a row."""
    listed = ", ".join(f"'{t}'" for t in reversed(tokens(text)))
    return f"Write one sentence that uses each of these words: {listed}."


def planted_text(kind: str, eval_text: str, wrap: str, rng: np.random.Generator) -> str | None:
    """The training text of a case (None when the eval text is too short for the kind)."""
    m = len(tokens(eval_text))
    if kind == "case_punctuation":
        return restyled(eval_text)
    if kind in ("paraphrase_above", "paraphrase_below"):
        if m < 2 * NGRAM:
            return None
        return paraphrased(eval_text, m // 2 + (kind == "paraphrase_above"), rng)
    if kind == "short_scattered":
        return scattered(eval_text)
    return wrap.format(eval_text)


# ======================================================================================
# the cases
# ======================================================================================
@dataclass(frozen=True)
class Case:
    kind: str
    eval_set: str
    item_id: int
    turn: int
    text: str  # the planted user turn
    expect_match: bool
    coverage: float  # of the eval text by the planted user turn (:func:`coverage`)


# (target, kind, eval set, turn, how the eval text is wrapped) in the order the items are taken;
# a target is "ultrafeedback/<source>", "code_ultrafeedback" or an extra dataset's entry name.
CASES = (
    ("ultrafeedback/sharegpt", "exact", "alpaca_eval", 0, "{}"),
    ("ultrafeedback/sharegpt", "case_punctuation", "ifeval", 0, "{}"),
    ("ultrafeedback/sharegpt", "inside_longer", "mt_bench", 1,
     "I am collecting follow-up questions for a chatbot evaluation. Here is one of them:\n\n{}\n\n"
     "How would you answer it?"),
    ("ultrafeedback/evol_instruct", "inside_longer", "gsm8k", 0,
     "Solve the following math word problem and explain every step.\n\n{}\n\nGive the final answer as a number."),
    ("ultrafeedback/ultrachat", "paraphrase_above", "rewardbench", 0, "{}"),
    ("ultrafeedback/ultrachat", "paraphrase_below", "rewardbench", 0, "{}"),
    ("ultrafeedback/false_qa", "short_inside", "truthfulqa", 0,
     "My friend asked me this at dinner: {} I said I would look it up."),
    ("ultrafeedback/flan_v2_niv2", "short_scattered", "alpaca_eval", 0, "{}"),
    ("code_ultrafeedback", "code", "humaneval", 0, "{}"),
    ("code_ultrafeedback", "code", "humaneval", 0,
     "Complete the following Python function so that it passes its doctests.\n\n{}"),
    ("h4_ultrafeedback", "exact", "gsm8k", 0, "{}"),
    ("hh_helpful", "exact", "mt_bench", 1, "{}"),
)
# every UltraFeedback row of this source the planting reaches gets a TruthfulQA question, in item order
TRUTHFUL_QA_SOURCE = "ultrafeedback/truthful_qa"


@dataclass
class ContaminationPlan:
    """The cases of each target, in the order its rows take them (:attr:`by_target`)."""

    by_target: dict[str, list[Case]] = field(default_factory=dict)

    def cases(self, target: str) -> list[Case]:
        return list(self.by_target.get(target, []))


def _fits(case: Case, index: EvalIndex) -> bool:
    """The planted text matches its eval text and no other (nothing, for a no-match kind), and the
    kind's intent holds: exact token equality, coverage on its side of the threshold, the short
    question's words all there."""
    key = (case.eval_set, case.item_id, case.turn)
    eval_text = index.texts[key]
    if index.matched(case.text) != ({key} if case.expect_match else set()):
        return False
    if case.kind in ("exact", "case_punctuation"):
        return tokens(case.text) == tokens(eval_text)
    if case.kind == "paraphrase_below":
        return 0 < case.coverage <= THRESHOLD
    if case.kind == "short_scattered":
        return set(tokens(eval_text)) <= set(tokens(case.text))
    return True


def plan_contamination(seed: int, eval_sets: dict) -> ContaminationPlan:
    """The planted cases: for each entry of :data:`CASES`, the first item of the eval set (in a
    random order, each item used once) whose planted text fits (:func:`_fits`); short questions for
    the short kinds, texts of at least 8 tokens for the others. Then every other TruthfulQA question
    that fits, in item order, for the truthful_qa rows of UltraFeedback."""
    index = EvalIndex(eval_sets)
    rng = rng_for(seed, "contamination", "texts")
    used: set[tuple[str, int]] = set()
    plan = ContaminationPlan()

    def case(kind: str, name: str, item: int, turn: int, wrap: str) -> Case | None:
        eval_text = eval_sets[name].items[item][turn]
        if (len(tokens(eval_text)) < NGRAM) != kind.startswith("short"):
            return None
        text = planted_text(kind, eval_text, wrap, rng)
        if text is None:
            return None
        planted = Case(kind, name, item, turn, text, EXPECT_MATCH[kind], coverage(eval_text, text))
        return planted if _fits(planted, index) else None

    order = {name: rng_for(seed, "contamination", "items", name).permutation(len(eval_set.items))
             for name, eval_set in eval_sets.items()}
    for target, kind, name, turn, wrap in CASES:
        for item in order[name]:
            planted = None if (name, int(item)) in used else case(kind, name, int(item), turn, wrap)
            if planted is not None:
                plan.by_target.setdefault(target, []).append(planted)
                used.add((name, int(item)))
                break
    for item in range(len(eval_sets["truthfulqa"].items)):
        planted = None if ("truthfulqa", item) in used else case("exact", "truthfulqa", item, 0, "{}")
        if planted is not None:
            plan.by_target.setdefault(TRUTHFUL_QA_SOURCE, []).append(planted)
    return plan


def record(manifest: dict, dataset: str, hub_id: str, file: str, row: int, case: Case) -> None:
    """Note a planted case in the manifest (``contamination``): where it is (``file`` relative to
    the repo, ``row`` 0-based in the file) and what the rule finds there."""
    manifest.setdefault("contamination", []).append({
        "dataset": dataset, "hub_id": hub_id, "file": file, "row": int(row), "eval_set": case.eval_set,
        "item_id": case.item_id, "turn": case.turn, "kind": case.kind, "expect_match": case.expect_match,
        "coverage": round(case.coverage, 6),
    })

