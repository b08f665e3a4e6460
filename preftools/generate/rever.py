"""OpenRubrics ReVeR-Traces-Rubric and ReVeR-Traces-Judge: vocabularies, the numeric plan of
the pairs (sources, rubric items, scores, trajectory styles, planted integrity breaks), and
the build of the rubric rows and the judge trajectories (two per rubric) from it.

Every random draw is made up front (numeric arrays, :class:`~.common.LazyStrings`); the rows
of both files are then built and written a chunk at a time, the judge file in its shuffled
file order, so memory does not grow with the scale."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from preftools.generate.common import (
    GenerationRun,
    LazyStrings,
    Segments,
    TextBank,
    json_escape,
    lazy_concat,
    lazy_gather,
    lazy_ints,
    lazy_joined,
    lazy_map,
    lazy_options,
    lazy_prefixed_by_source,
    lazy_replaced,
    lazy_select,
    n_planted,
    rng_for,
    segments,
    take_strings,
)
from preftools.generate.ultrafeedback import UltraFeedbackLink
from preftools.generate.writer import write_in_chunks
from preftools.inputs import contract

# Pair ids "<source>:<n>", 12 to 30 characters, as upstream: n drawn at random (sparse, distinct
# within a source) from ID_NUMBER_FIRST .. ID_NUMBER_FIRST + max(ID_NUMBER_RANGE, 20 x the pairs of
# the source) - 1, so ids are neither dense nor in row order ("magpie:10000" .. "ultrafeedback:999999").
ID_NUMBER_FIRST = 10_000
ID_NUMBER_RANGE = 990_000

# --------------------------------------------------------------------------------------
# vocabularies
# --------------------------------------------------------------------------------------
REVER_SOURCE_P = (0.25, 0.30, 0.20, 0.15, 0.10)  # aligned with contract.REVER_SOURCES
REVER_UF_LINK_SHARE = 0.30  # share of source='ultrafeedback' pairs built from UF rows
HARD_TEMPLATES = (
    "The response must mention", "The response must include a section on",
    "The response must stay within the requested length when describing",
    "The response must be written in English and cover", "The response must give a final answer about",
    "The response must use a numbered list for", "The response must not invent facts about",
)
PRINCIPLE_TEMPLATES = (
    "The response should explain clearly", "The response should give concrete examples of",
    "The response should keep a neutral tone when discussing", "The response should be concise about",
    "The response should justify its claims about", "The response should be well organized around",
)
REVER_INSTRUCTION_PREFIX = {
    "helpsteer3": ("Help me write", "Can you explain", "I need advice on"),
    "skywork": ("Answer the following question about", "Solve this problem involving"),
    "magpie": ("Could you give me an overview of", "What is the best way to"),
    "ifeval": ("Write an essay of at least 300 words about", "Write a response in exactly 3 paragraphs about",
               "Write a list of 5 bullet points about"),
    "ultrafeedback": ("Describe", "Explain how"),
}
JUDGE_SYSTEM_PROMPT = (
    "You are an impartial judge. You will be given an instruction, a response and a rubric. "
    "Evaluate the response against every rubric item independently. Hard Rule items are scored 0 "
    "(not satisfied) or 1 (satisfied); Principle items are scored with an integer from 0 to 100. "
    "You may call the python tool at most once for mechanical checks such as counting words or "
    "paragraphs. Think step by step inside <think></think>, then output your verdict as a JSON "
    "object inside <judge></judge> with one score and one explanation per rubric item."
)
# The user turn of a ReVeR-Traces-Rubric row. Its first two sentences, up to "operational
# rubric", are the real wording; the rest is this generator's (the card of the Rubric dataset is
# not among seeds/), written to match what the Judge card (seeds/001) says of the rubrics.
RUBRIC_PROMPT_HEAD = (
    "You are an expert in rubric design, instruction following, and task analysis. Given a user "
    "instruction and optional context, create a concise, operational rubric that a judge can apply to "
    "one response at a time, without seeing any other response.\n\n"
    "Each rubric item is a single criterion that starts with \"The response\" and ends with its label: "
    "[Hard Rule] for an explicit, checkable requirement of the instruction (scored 0 or 1), or "
    "[Principle] for a quality that distinguishes a better response (scored 0 to 100).\n\n"
    "User instruction:\n"
)
RUBRIC_PROMPT_TAIL = "\n\nContext:\n(none)\n\nReturn the rubric as a numbered list, one item per line."
REVER_TOOLS_JSON = json.dumps(
    [
        {
            "type": "function",
            "function": {
                "name": "python",
                "description": "Execute Python code in a sandbox and return its standard output. "
                "The variable `response` holds the response text.",
                "parameters": {
                    "type": "object",
                    "properties": {"code": {"type": "string", "description": "Python code to run."}},
                    "required": ["code"],
                },
            },
        }
    ]
)
TOOL_CODES = (
    ("print(len(response.split()))", "words"),
    ("print(response.count('.'))", "sentences"),
    ("print(len(response))", "chars"),
)
VERDICT_LIST_KEYS = ("scores", "verdicts", "items")
VERDICT_LIST_KEYS_P = (0.7, 0.15, 0.15)
CANDIDATES = ("chosen", "rejected")
MESSAGE_ROLES = ("system", "user", "assistant", "tool_call", "tool_response", "assistant")

BREAK_KINDS = (
    "rubric_unused", "rubric_single_trajectory", "duplicate_candidate", "trajectory_without_rubric",
    "criteria_mismatch", "not_kept", "verdict_no_judge_block", "verdict_malformed_json",
    "verdict_missing_items", "verdict_score_out_of_range", "info_multiple_judge_blocks",
)
# the trajectory a break is planted in (None: the pair as a whole)
BREAK_CANDIDATE = {
    "duplicate_candidate": "chosen", "criteria_mismatch": "rejected", "verdict_no_judge_block": "rejected",
    "verdict_malformed_json": "chosen", "verdict_missing_items": "rejected", "verdict_score_out_of_range": "chosen",
    "info_multiple_judge_blocks": "chosen",
}


# ======================================================================================
# the plan
# ======================================================================================
@dataclass(frozen=True)
class RubricItems:
    """The rubric items of all pairs, numbered pair after pair (Hard Rules first in each)."""

    layout: Segments  # owner = pair, position = item number within the pair
    is_hard: np.ndarray  # per item
    n_principles: np.ndarray  # per pair
    scores: np.ndarray  # (2, items): the score of the chosen (0) and the rejected (1) trajectory

    @property
    def per_pair(self) -> np.ndarray:
        return np.diff(self.layout.offsets)

    def of_pair(self, pair: int) -> slice:
        return slice(self.layout.offsets[pair], self.layout.offsets[pair + 1])


@dataclass(frozen=True)
class TrajectoryStyles:
    """How each judge trajectory (``2 * pair`` chosen, ``2 * pair + 1`` rejected) is written."""

    uses_tool: np.ndarray  # calls the python tool (6 messages instead of 3)
    verdict_is_map: np.ndarray  # {"r1": {...}} rather than {"scores": [{"rubric_id": "r1", ...}]}
    verdict_list_key: np.ndarray  # index into VERDICT_LIST_KEYS (list-shaped verdicts)
    plain_rubric_ids: np.ndarray  # rubric ids "1" instead of "r1"
    tool_kind: np.ndarray  # index into TOOL_CODES

    def rubric_id(self, trajectory: int, item: int) -> str:
        return ("" if self.plain_rubric_ids[trajectory] else "r") + str(item + 1)


@dataclass(frozen=True)
class PlantedBreak:
    kind: str
    candidate: str | None  # the trajectory it is planted in, None for the pair


@dataclass(frozen=True)
class ReverPlan:
    """Per-pair numeric plan: sources, ids, rubric items, scores, trajectory styles, planted breaks.

    Pairs ``n_with_rubric .. n_pairs - 1`` have trajectories but lose their rubric row."""

    n_pairs: int
    n_with_rubric: int
    source: np.ndarray  # index into contract.REVER_SOURCES
    number_in_source: np.ndarray  # the id is "<source>:<number>" (random, distinct within a source)
    link_of: np.ndarray  # index into the UltraFeedback links, -1 for pairs not built from one
    items: RubricItems
    styles: TrajectoryStyles
    breaks: dict[int, PlantedBreak]
    principle_decided: int  # pairs whose chosen and rejected satisfy as many Hard Rules


def plan_rever(n_with_rubric: int, seed: int, n_links: int) -> ReverPlan:
    rng = rng_for(seed, "rever-plan")
    n_pairs = n_with_rubric + n_planted(n_with_rubric, 0.001)
    source = rng.choice(len(contract.REVER_SOURCES), n_pairs, p=REVER_SOURCE_P)
    link_pairs = _link_pairs(rng, source[:n_with_rubric], n_links)
    link_of = np.full(n_pairs, -1, np.int64)
    link_of[link_pairs] = np.arange(len(link_pairs))
    items = _rubric_items(rng, n_pairs)
    hard_satisfied = [np.bincount(items.layout.owner, weights=items.scores[c] * items.is_hard, minlength=n_pairs)
                      for c in (0, 1)]
    styles = _trajectory_styles(rng, 2 * n_pairs)
    breaks = _plan_breaks(rng, n_with_rubric, n_pairs, items, link_pairs)
    return ReverPlan(
        n_pairs=n_pairs,
        n_with_rubric=n_with_rubric,
        source=source,
        number_in_source=_id_numbers(rng_for(seed, "rever-ids"), source),
        link_of=link_of,
        items=items,
        styles=styles,
        breaks=breaks,
        principle_decided=int((hard_satisfied[0] == hard_satisfied[1]).sum()),
    )


def _id_numbers(rng, source: np.ndarray) -> np.ndarray:
    """Per pair, the number of its id: distinct within its source, drawn at random (sparse)."""
    number = np.zeros(len(source), np.int64)
    for s in range(len(contract.REVER_SOURCES)):
        rows = np.flatnonzero(source == s)
        span = max(ID_NUMBER_RANGE, 20 * len(rows))
        number[rows] = ID_NUMBER_FIRST + rng.choice(span, len(rows), replace=False)
    return number


def _link_pairs(rng, source: np.ndarray, n_links: int) -> np.ndarray:
    """The pairs (with source 'ultrafeedback') built from the UltraFeedback links, in order."""
    ultrafeedback_pairs = np.flatnonzero(source == contract.REVER_SOURCES.index("ultrafeedback"))
    n_linked = min(n_links, len(ultrafeedback_pairs))
    if not n_linked:
        return np.zeros(0, np.int64)
    return np.sort(rng.choice(ultrafeedback_pairs, n_linked, replace=False))


def _rubric_items(rng, n_pairs: int) -> RubricItems:
    per_pair = rng.integers(3, 9, n_pairs)
    layout = segments(per_pair)
    n_hard = np.minimum(rng.binomial(per_pair, 0.4), per_pair)
    no_hard = rng.random(n_pairs) < 0.08
    no_principle = rng.random(n_pairs) < 0.10
    n_hard = np.where(no_principle, per_pair, np.where(no_hard, 0, np.maximum(n_hard, 1)))
    n_hard = np.minimum(n_hard, per_pair)
    is_hard = layout.position < n_hard[layout.owner]  # hard rules first
    n_principles = per_pair - n_hard
    scores = _chosen_wins_scores(rng, layout, is_hard, n_principles)
    return RubricItems(layout, is_hard, n_principles, scores)


def _chosen_wins_scores(rng, layout: Segments, is_hard: np.ndarray, n_principles: np.ndarray) -> np.ndarray:
    """Per item, the chosen (0) and rejected (1) trajectory's score, drawn again for the pairs
    where the rejected one does not lose (after swapping the two where it wins)."""
    n_pairs = len(n_principles)
    n_items = layout.total
    scores = np.zeros((2, n_items), np.int64)
    todo = np.arange(n_pairs)
    for _ in range(200):
        if len(todo) == 0:
            break
        if len(todo) < n_pairs:
            items = np.concatenate([np.arange(layout.offsets[p], layout.offsets[p + 1]) for p in todo])
        else:
            items = np.arange(n_items)
        hard = is_hard[items]
        principle_decided = rng.random(n_pairs) < 0.05  # ~1/3 of pairs end up decided by principles only
        same_hard_verdicts = principle_decided[layout.owner[items]]
        chosen_hard = rng.random(len(items)) < 0.85
        rejected_hard = np.where(same_hard_verdicts, chosen_hard, rng.random(len(items)) < 0.45)
        chosen_principle = np.clip(np.round(rng.normal(72, 15, len(items))), 0, 100).astype(np.int64)
        rejected_principle = np.clip(np.round(rng.normal(58, 18, len(items))), 0, 100).astype(np.int64)
        scores[0, items] = np.where(hard, chosen_hard, chosen_principle)
        scores[1, items] = np.where(hard, rejected_hard, rejected_principle)
        totals = _pair_totals(scores, is_hard, layout.owner, n_principles)
        rejected_wins = totals[0] < totals[1]
        swapped_items = rejected_wins[layout.owner]
        scores[:, swapped_items] = scores[::-1, swapped_items]
        totals = _pair_totals(scores, is_hard, layout.owner, n_principles)
        todo = np.flatnonzero(totals[0] <= totals[1])
    assert len(todo) == 0, "could not make all pairs kept"
    return scores


def _pair_totals(scores, is_hard, owner, n_principles):
    """Exact integer form of (#hard satisfied) + mean(principles)/101, times 101*n_principles."""
    totals = []
    n_pairs = len(n_principles)
    for candidate in (0, 1):
        hard_sum = np.bincount(owner, weights=np.where(is_hard, scores[candidate], 0), minlength=n_pairs)
        principle_sum = np.bincount(owner, weights=np.where(is_hard, 0, scores[candidate]), minlength=n_pairs)
        totals.append(np.where(n_principles > 0, hard_sum * 101 * n_principles + principle_sum, hard_sum))
    return totals


def _trajectory_styles(rng, n_trajectories: int) -> TrajectoryStyles:
    # tool calls: exactly round(rate * trajectories)
    uses_tool = np.zeros(n_trajectories, bool)
    n_tool = int(round(contract.REVER_TOOL_CALL_RATE * n_trajectories))
    uses_tool[rng.choice(n_trajectories, n_tool, replace=False)] = True
    verdict_is_map = rng.random(n_trajectories) < 0.5
    verdict_list_key = rng.choice(len(VERDICT_LIST_KEYS), n_trajectories, p=VERDICT_LIST_KEYS_P)
    plain_rubric_ids = rng.random(n_trajectories) < 0.35
    tool_kind = rng.integers(0, len(TOOL_CODES), n_trajectories)
    return TrajectoryStyles(uses_tool, verdict_is_map, verdict_list_key, plain_rubric_ids, tool_kind)


def _plan_breaks(rng, n_with_rubric: int, n_pairs: int, items: RubricItems,
                 link_pairs: np.ndarray) -> dict[int, PlantedBreak]:
    """Each kind of break on a few distinct pairs with a rubric that are not built from
    UltraFeedback; ``not_kept`` swaps the pair's scores (in place)."""
    kinds = [k for k in BREAK_KINDS if k != "trajectory_without_rubric"]
    per_kind = n_planted(n_with_rubric, 0.001)
    # verdict_missing_items drops, from the rejected trajectory, a Hard Rule scored 0 (so the
    # pair's order does not depend on how a missing item is read): needs such an item
    rejected_fails_a_hard_rule = np.bincount(
        items.layout.owner, weights=((items.scores[1] == 0) & items.is_hard), minlength=n_pairs
    )[:n_with_rubric] > 0
    free = np.ones(n_with_rubric, bool)
    free[link_pairs] = False
    assigned: list[tuple[int, str]] = []
    for kind in kinds:
        eligible = free & (rejected_fails_a_hard_rule if kind == "verdict_missing_items" else True)
        pool = np.flatnonzero(eligible)
        pairs = rng.choice(pool, min(per_kind, len(pool)), replace=False)
        free[pairs] = False
        assigned.extend((int(p), kind) for p in pairs)
    breaks: dict[int, PlantedBreak] = {}
    for pair, kind in assigned:
        if kind == "not_kept":
            of_pair = items.of_pair(pair)
            items.scores[:, of_pair] = items.scores[::-1, of_pair]
        breaks[pair] = PlantedBreak(kind, BREAK_CANDIDATE.get(kind))
    for pair in range(n_with_rubric, n_pairs):
        breaks[pair] = PlantedBreak("trajectory_without_rubric", None)
    return breaks


# ======================================================================================
# texts of the pairs and the rubrics
# ======================================================================================
@dataclass(frozen=True)
class PairTexts:
    ids: LazyStrings
    instruction: LazyStrings
    chosen: LazyStrings
    rejected: LazyStrings
    links: list[dict]  # manifest rever.ultrafeedback_links


def _pair_texts(rng, bank: TextBank, plan: ReverPlan, links: list[UltraFeedbackLink],
                text_factor: float) -> PairTexts:
    """Each pair's id, instruction and the two responses; the pairs built from UltraFeedback
    take the instruction (in one of a few spellings) and two completions of their row."""
    n = plan.n_pairs
    ids = lazy_concat(lazy_options(contract.REVER_SOURCES, plan.source), ":", lazy_ints(plan.number_in_source))
    prefix = lazy_prefixed_by_source(rng, plan.source, contract.REVER_SOURCES, REVER_INSTRUCTION_PREFIX)
    instruction = lazy_concat(prefix, " ", lazy_map(pc.utf8_lower, bank.lazy_sentences(rng, n, 1, 3, text_factor)))
    chosen = bank.lazy_long_text(rng, n, 6, 14, text_factor)
    rejected = bank.lazy_long_text(rng, n, 4, 12, text_factor)
    linked = np.flatnonzero(plan.link_of >= 0)
    if not len(linked):
        return PairTexts(ids, instruction, chosen, rejected, [])
    linked_pairs = [_linked_pair(rng, links[plan.link_of[pair]]) for pair in linked]

    def replaced(strings: LazyStrings, texts: list[str]) -> LazyStrings:
        return lazy_replaced(strings, dict(zip(linked.tolist(), texts)))

    link_records = [{"id": pair_id, **linked_pair.record}
                    for pair_id, linked_pair in zip(ids.at(linked).to_pylist(), linked_pairs)]
    return PairTexts(ids,
                     replaced(instruction, [p.instruction for p in linked_pairs]),
                     replaced(chosen, [p.chosen for p in linked_pairs]),
                     replaced(rejected, [p.rejected for p in linked_pairs]),
                     link_records)


@dataclass(frozen=True)
class LinkedPair:
    instruction: str
    chosen: str
    rejected: str
    record: dict  # for the manifest: the row, the variant, the two completions' scores


def _linked_pair(rng, link: UltraFeedbackLink) -> LinkedPair:
    """A pair built from an UltraFeedback row: a higher- over a lower-rated completion (half the
    time one the overall_score ranks the other way), the instruction respaced, lower-cased or
    recapitalised in some variants."""
    n = len(link.responses)
    ratings, overall = link.average_rating, link.overall_score
    ordered = [(a, b) for a in range(n) for b in range(n) if ratings[a] > ratings[b]]
    if not ordered:
        ordered = [(a, b) for a in range(n) for b in range(n) if a != b]
    disagree = [(a, b) for a, b in ordered if overall[a] < overall[b]]
    pool = disagree if (disagree and rng.random() < 0.5) else ordered
    a, b = pool[rng.integers(0, len(pool))]
    text = link.instruction
    variant = rng.integers(0, 5)
    if variant == 1:
        text = "  " + text.replace(" ", "  ", 2) + "\n"
    elif variant == 2:
        text = text.lower()
    elif variant == 3:
        text = text.upper()[:1] + text[1:] + " "
    record = {"uf_row": link.row, "variant": int(variant),
              "chosen_average_rating": ratings[a], "rejected_average_rating": ratings[b],
              "chosen_overall_score": overall[a], "rejected_overall_score": overall[b]}
    return LinkedPair(text, link.responses[a], link.responses[b], record)


def _criteria(rng, bank: TextBank, items: RubricItems) -> LazyStrings:
    """Each item's criterion: a Hard Rule or Principle template, a phrase and its label."""
    n = items.layout.total
    template = np.where(items.is_hard, rng.integers(0, len(HARD_TEMPLATES), n),
                        len(HARD_TEMPLATES) + rng.integers(0, len(PRINCIPLE_TEMPLATES), n))
    return lazy_concat(lazy_options(HARD_TEMPLATES + PRINCIPLE_TEMPLATES, template), " ",
                       bank.lazy_phrases(rng, n, 2, 5),
                       lazy_options([". [Principle]", ". [Hard Rule]"], items.is_hard.astype(np.int64)))


@dataclass(frozen=True)
class RubricTexts:
    """The two messages of each pair's rubric row."""

    user: LazyStrings  # the rubric prompt
    assistant: LazyStrings  # the model's numbered rubric


def _rubric_texts(rng, bank: TextBank, plan: ReverPlan, pairs: PairTexts, criterion: LazyStrings,
                  text_factor: float) -> RubricTexts:
    layout = plan.items.layout
    numbered_items = lazy_joined(lazy_concat(lazy_ints(layout.position + 1), ". ", criterion), layout.offsets, "\n")
    user = lazy_concat(RUBRIC_PROMPT_HEAD, pairs.instruction, RUBRIC_PROMPT_TAIL)
    assistant = lazy_concat("<think>\n", bank.lazy_sentences(rng, plan.n_pairs, 3, 8, text_factor),
                            "\n</think>\n\nHere is the rubric:\n\n", numbered_items)
    return RubricTexts(user, assistant)


def _rubric_table(plan: ReverPlan, pairs: PairTexts, texts: RubricTexts, rows: np.ndarray) -> pa.Table:
    """The rubric rows ``rows`` (pairs with a rubric): one row per pair, the rubric prompt and
    the model's numbered rubric."""
    n = len(rows)
    schema = contract.REVER_RUBRIC_SCHEMA
    local = np.arange(n)
    messages = pa.StructArray.from_arrays(
        [pa.array(["user", "assistant"] * n, pa.string()),
         pc.take(pa.concat_arrays([texts.user.at(rows), texts.assistant.at(rows)]),
                 pa.array(np.stack([local, local + n], 1).ravel()))],
        fields=list(schema.field("messages").type.value_type))
    return pa.Table.from_arrays(
        [pairs.ids.at(rows), take_strings(contract.REVER_SOURCES, plan.source[rows]),
         pa.ListArray.from_arrays(pa.array(np.arange(0, 2 * n + 1, 2), pa.int32()), messages,
                                  type=schema.field("messages").type)],
        schema=schema)


# ======================================================================================
# the judge trajectories
# ======================================================================================
@dataclass
class JudgeTexts:
    """The message texts of every trajectory ``t`` (pair ``t // 2``, chosen when ``t`` is even)."""

    user: LazyStrings
    think: LazyStrings
    tool_call: LazyStrings
    tool_output: LazyStrings
    final_with_tool: LazyStrings  # the verdict message after a tool call
    final_plain: LazyStrings  # the verdict message without one

    def final(self, trajectory: int, uses_tool: bool) -> str:
        return (self.final_with_tool if uses_tool else self.final_plain)[trajectory].as_py()


def _judge_texts(rng, bank: TextBank, plan: ReverPlan, pairs: PairTexts, criterion: LazyStrings,
                 text_factor: float) -> JudgeTexts:
    n_trajectories = 2 * plan.n_pairs
    items, styles = plan.items, plan.styles
    pair = np.repeat(np.arange(plan.n_pairs), 2)
    candidate = np.tile([0, 1], plan.n_pairs)
    entries = segments(items.per_pair[pair])  # one per (trajectory, rubric item)
    item = items.layout.offsets[pair][entries.owner] + entries.position
    score = items.scores[candidate[entries.owner], item]
    rubric_id = lazy_concat(lazy_options(["r", ""], styles.plain_rubric_ids[entries.owner].astype(np.int64)),
                            lazy_ints(entries.position + 1))
    response = lazy_select(candidate, [pairs.chosen, pairs.rejected], pair)
    rubric_entry = lazy_concat('{"rubric_id": "', rubric_id, '", "criterion": "',
                               lazy_map(json_escape, lazy_gather(criterion, item)), '"}')
    user = lazy_concat('{"instruction": "', lazy_map(json_escape, lazy_gather(pairs.instruction, pair)),
                       '", "response": "', lazy_map(json_escape, response),
                       '", "rubrics": [', lazy_joined(rubric_entry, entries.offsets, ", "), "]}")
    verdict = _verdicts(rng, bank, plan, entries, item, score, rubric_id)
    think = lazy_concat("<think>\n", bank.lazy_sentences(rng, n_trajectories, 2, 6, text_factor), "\n</think>")
    tool_call = lazy_concat('{"name": "python", "arguments": {"code": "',
                            lazy_options([code for code, _ in TOOL_CODES], styles.tool_kind), '"}}')
    final_with_tool = lazy_concat("<think>\n", bank.lazy_sentences(rng, n_trajectories, 1, 3, text_factor),
                                  "\n</think>\n\nThe tool output confirms my checks.\n\n<judge>\n", verdict,
                                  "\n</judge>")
    final_plain = lazy_concat(think, "\n\nFinal verdict:\n\n<judge>\n", verdict, "\n</judge>")
    tool_output = LazyStrings(n_trajectories, lambda at: _tool_outputs(response.at(at), styles.tool_kind[at]))
    return JudgeTexts(user, think, tool_call, tool_output, final_with_tool, final_plain)


def _verdicts(rng, bank: TextBank, plan: ReverPlan, entries: Segments, item: np.ndarray, score: np.ndarray,
              rubric_id: LazyStrings) -> LazyStrings:
    """Each trajectory's verdict JSON: per item a score and an explanation, as a map by rubric id
    or as a list under one of VERDICT_LIST_KEYS."""
    styles = plan.styles
    satisfied = np.where(plan.items.is_hard[item], score == 1, score >= 60)
    explanation = lazy_concat(
        lazy_options(["Not satisfied: the response does not fully address", "Satisfied: the response addresses"],
                     satisfied.astype(np.int64)),
        " ", bank.lazy_phrases(rng, len(item), 2, 5), ".")
    score_text = lazy_ints(score)
    list_entry = lazy_concat('{"rubric_id": "', rubric_id, '", "score": ', score_text, ', "explanation": "',
                             explanation, '"}')
    map_entry = lazy_concat('"', rubric_id, '": {"score": ', score_text, ', "explanation": "', explanation, '"}')
    entry = lazy_select(styles.verdict_is_map[entries.owner], [list_entry, map_entry])
    joined = lazy_joined(entry, entries.offsets, ", ")
    return lazy_select(styles.verdict_is_map, [
        lazy_concat('{"', lazy_options(VERDICT_LIST_KEYS, styles.verdict_list_key), '": [', joined, "]}"),
        lazy_concat("{", joined, "}"),
    ])


def _tool_outputs(response: pa.Array, tool_kind: np.ndarray) -> pa.Array:
    """What the python tool prints: the response's word, sentence or character count."""
    n_words = pc.add(pc.add(pc.count_substring(response, " "), pc.count_substring(response, "\n\n")), 1)
    n_sentences = pc.count_substring(response, ".")
    n_chars = pc.utf8_length(response)
    return pc.cast(pc.choose(pa.array(tool_kind), n_words, n_sentences, n_chars), pa.string())


# ======================================================================================
# planted integrity breaks (text edits on a few trajectories)
# ======================================================================================
@dataclass
class JudgeEdits:
    """What the planted breaks change in the judge file."""

    n_trajectories: int
    user: dict[int, str] = field(default_factory=dict)  # trajectory -> new user message
    final: dict[int, str] = field(default_factory=dict)  # trajectory -> new verdict message
    dropped: np.ndarray = field(init=False)  # trajectories left out of the file
    duplicated: np.ndarray = field(init=False)  # trajectories written twice

    def __post_init__(self) -> None:
        self.dropped = np.zeros(self.n_trajectories, bool)
        self.duplicated = np.zeros(self.n_trajectories, bool)


@dataclass(frozen=True)
class BreakSite:
    """Where a break is planted: the pair, its trajectory and that trajectory's verdict message."""

    pair: int
    trajectory: int
    verdict_head: str  # the message up to its last "<judge>\n"
    verdict_json: str  # the JSON inside that block

    def with_verdict(self, verdict_json: str) -> str:
        return self.verdict_head + "<judge>\n" + verdict_json + "\n</judge>"


def _verdict_entries(verdict: dict | list, plan: ReverPlan, trajectory: int) -> list[dict]:
    if plan.styles.verdict_is_map[trajectory]:
        return list(verdict.values())
    return verdict[VERDICT_LIST_KEYS[plan.styles.verdict_list_key[trajectory]]]


def _drop_both_trajectories(rng, plan, site: BreakSite, texts, criterion, edits: JudgeEdits):
    edits.dropped[2 * site.pair] = edits.dropped[2 * site.pair + 1] = True


def _drop_rejected_trajectory(rng, plan, site, texts, criterion, edits):
    edits.dropped[2 * site.pair + 1] = True
    return "rejected trajectory missing"


def _duplicate_chosen_trajectory(rng, plan, site, texts, criterion, edits):
    edits.duplicated[2 * site.pair] = True
    return "chosen trajectory appears twice (identical rows)"


def _reword_a_criterion(rng, plan, site, texts, criterion, edits):
    item = plan.items.layout.offsets[site.pair] + rng.integers(0, plan.items.per_pair[site.pair])
    old = criterion[int(item)].as_py()
    words = old.split(" ")
    word = 2 + rng.integers(0, max(1, len(words) - 4))
    words[word] = "clearly" if words[word] != "clearly" else "fully"
    new = " ".join(words)
    edits.user[site.trajectory] = texts.user[site.trajectory].as_py().replace(
        '"criterion": "' + old + '"', '"criterion": "' + new + '"', 1)
    return {"rubric_criterion": old, "trajectory_criterion": new}


def _remove_judge_block(rng, plan, site, texts, criterion, edits):
    edits.final[site.trajectory] = site.verdict_head.rstrip() + "\n\nI have scored every rubric item above."


def _break_verdict_json(rng, plan, site, texts, criterion, edits):
    edits.final[site.trajectory] = site.verdict_head + "<judge>\n" + site.verdict_json[:-1] + ",\n</judge>"


def _drop_a_failed_hard_rule(rng, plan, site, texts, criterion, edits):
    items = plan.items
    t = site.trajectory
    verdict = json.loads(site.verdict_json)
    of_pair = items.of_pair(site.pair)
    item = int(np.flatnonzero((items.scores[1, of_pair] == 0) & items.is_hard[of_pair])[0])
    rubric_id = plan.styles.rubric_id(t, item)
    if plan.styles.verdict_is_map[t]:
        del verdict[rubric_id]
    else:
        key = VERDICT_LIST_KEYS[plan.styles.verdict_list_key[t]]
        verdict[key] = [x for x in verdict[key] if x["rubric_id"] != rubric_id]
    edits.final[t] = site.with_verdict(json.dumps(verdict))
    return {"missing_rubric_id": rubric_id}


def _score_out_of_range(rng, plan, site, texts, criterion, edits):
    t = site.trajectory
    verdict = json.loads(site.verdict_json)
    item = int(rng.integers(0, plan.items.per_pair[site.pair]))
    rubric_id = plan.styles.rubric_id(t, item)
    bad = 2 if plan.items.is_hard[plan.items.layout.offsets[site.pair] + item] else 140
    if plan.styles.verdict_is_map[t]:
        verdict[rubric_id]["score"] = bad
    else:
        for entry in _verdict_entries(verdict, plan, t):
            if entry["rubric_id"] == rubric_id:
                entry["score"] = bad
    edits.final[t] = site.with_verdict(json.dumps(verdict))
    return {"rubric_id": rubric_id, "score": bad}


def _draft_judge_block_first(rng, plan, site, texts, criterion, edits):
    draft = json.loads(site.verdict_json)
    for entry in _verdict_entries(draft, plan, site.trajectory):
        entry["score"] = 0
    edits.final[site.trajectory] = (
        site.with_verdict(json.dumps(draft))
        + "\n\nWait, I misread the response; corrected verdict:\n\n<judge>\n" + site.verdict_json + "\n</judge>"
    )
    return "first <judge> block is a draft (all scores 0); the last block is authoritative"


def _scores_already_swapped(rng, plan, site, texts, criterion, edits):
    return "chosen scores <= rejected scores"  # swapped in the plan


def _pair_only(rng, plan, site, texts, criterion, edits):
    """trajectory_without_rubric: the plan already left out the rubric row."""


PLANT_BREAK = {
    "rubric_unused": _drop_both_trajectories,
    "rubric_single_trajectory": _drop_rejected_trajectory,
    "duplicate_candidate": _duplicate_chosen_trajectory,
    "trajectory_without_rubric": _pair_only,
    "criteria_mismatch": _reword_a_criterion,
    "not_kept": _scores_already_swapped,
    "verdict_no_judge_block": _remove_judge_block,
    "verdict_malformed_json": _break_verdict_json,
    "verdict_missing_items": _drop_a_failed_hard_rule,
    "verdict_score_out_of_range": _score_out_of_range,
    "info_multiple_judge_blocks": _draft_judge_block_first,
}


def _plant_breaks(rng, plan: ReverPlan, ids: LazyStrings, texts: JudgeTexts,
                  criterion: LazyStrings) -> tuple[list[dict], JudgeEdits]:
    """The manifest records of the planted breaks, and the edits they make."""
    edits = JudgeEdits(2 * plan.n_pairs)
    records: list[dict] = []
    for pair, planted in sorted(plan.breaks.items()):
        trajectory = 2 * pair + (1 if planted.candidate == "rejected" else 0)
        head, _, rest = texts.final(trajectory, plan.styles.uses_tool[trajectory]).rpartition("<judge>\n")
        site = BreakSite(pair, trajectory, head, rest[: -len("\n</judge>")])
        record = {"kind": planted.kind, "id": ids[int(pair)].as_py(), "candidate": planted.candidate}
        detail = PLANT_BREAK[planted.kind](rng, plan, site, texts, criterion, edits)
        if detail is not None:
            record["detail"] = detail
        records.append(record)
    return records, edits


# ======================================================================================
# the judge file
# ======================================================================================
@dataclass(frozen=True)
class JudgeMessages:
    """The message texts of every trajectory with the planted edits made."""

    user: LazyStrings
    first_assistant: LazyStrings  # the verdict, or the announcement of the tool call
    tool_call: LazyStrings
    tool_output: LazyStrings
    final_with_tool: LazyStrings


def _judge_messages(plan: ReverPlan, texts: JudgeTexts, edits: JudgeEdits) -> JudgeMessages:
    uses_tool = plan.styles.uses_tool
    final_with_tool = lazy_replaced(texts.final_with_tool, {t: v for t, v in edits.final.items() if uses_tool[t]})
    final_plain = lazy_replaced(texts.final_plain, {t: v for t, v in edits.final.items() if not uses_tool[t]})
    first_assistant = lazy_select(uses_tool, [
        final_plain, lazy_concat(texts.think, "\nI will verify this with the python tool.")])
    return JudgeMessages(lazy_replaced(texts.user, edits.user), first_assistant, texts.tool_call, texts.tool_output,
                         final_with_tool)


def _messages(plan: ReverPlan, texts: JudgeMessages, trajectories: np.ndarray) -> pa.ListArray:
    """The messages of ``trajectories``: system, user, assistant (the verdict); with a tool call:
    system, user, assistant (announcing the call), tool_call, tool_response, assistant (the verdict)."""
    n = len(trajectories)
    uses_tool = plan.styles.uses_tool[trajectories]
    with_tool = trajectories[uses_tool]
    n_with_tool = len(with_tool)
    messages = segments(np.where(uses_tool, 6, 3))
    slot = messages.position  # the 3-message layout uses slots 0, 1, 2 (first assistant = final verdict)
    # contents stacked: 0 system, 1 user, 2 first assistant (one per trajectory); 3 tool_call,
    # 4 tool_response, 5 final (one per trajectory with a tool call)
    stacked = pa.concat_arrays([
        pa.array([JUDGE_SYSTEM_PROMPT], pa.string()), texts.user.at(trajectories), texts.first_assistant.at(trajectories),
        texts.tool_call.at(with_tool), texts.tool_output.at(with_tool), texts.final_with_tool.at(with_tool),
    ])
    tool_rank = np.cumsum(uses_tool) - 1  # of each trajectory among those with a tool call
    owner = messages.owner
    content = np.where(slot == 0, 0, np.where(slot <= 2, 1 + (slot - 1) * n + owner,
                                              1 + 2 * n + (slot - 3) * n_with_tool + tool_rank[owner]))
    message_type = contract.REVER_JUDGE_SCHEMA.field("messages").type
    values = pa.StructArray.from_arrays(
        [pa.array(np.array(MESSAGE_ROLES, dtype=object)[slot], pa.string()), pc.take(stacked, pa.array(content))],
        fields=list(message_type.value_type))
    return pa.ListArray.from_arrays(pa.array(messages.offsets, pa.int32()), values, type=message_type)


def _judge_table(plan: ReverPlan, pairs: PairTexts, texts: JudgeMessages, trajectories: np.ndarray) -> pa.Table:
    """The judge rows of ``trajectories``."""
    pair = trajectories // 2
    return pa.Table.from_arrays(
        [pairs.ids.at(pair), take_strings(contract.REVER_SOURCES, plan.source[pair]),
         take_strings(CANDIDATES, trajectories % 2), _messages(plan, texts, trajectories),
         pa.array([REVER_TOOLS_JSON] * len(trajectories), pa.string())],
        schema=contract.REVER_JUDGE_SCHEMA)


def _file_order(seed: int, n_pairs: int, edits: JudgeEdits) -> np.ndarray:
    """Trajectories in file order: pairs in a random order, chosen then rejected, without the
    dropped ones and with the duplicated ones twice."""
    order = []
    for pair in rng_for(seed, "rever-order").permutation(n_pairs):
        for t in (2 * pair, 2 * pair + 1):
            if not edits.dropped[t]:
                order.append(t)
                if edits.duplicated[t]:
                    order.append(t)
    return np.array(order, np.int64)


@dataclass(frozen=True)
class ReverBuild:
    """The two ReVeR files, built a chunk of rows at a time, with the planted breaks and the
    manifest's ``rever`` entry."""

    plan: ReverPlan
    pairs: PairTexts
    rubric_texts: RubricTexts
    judge_messages: JudgeMessages
    order: np.ndarray  # the judge file's trajectories, in file order
    breaks: list[dict]
    info: dict

    @property
    def n_rubric_rows(self) -> int:
        return self.plan.n_with_rubric

    @property
    def n_judge_rows(self) -> int:
        return len(self.order)

    def rubric_rows(self, first: int, stop: int) -> pa.Table:
        """Rows ``first .. stop - 1`` of the rubric file."""
        return _rubric_table(self.plan, self.pairs, self.rubric_texts, np.arange(first, stop))

    def judge_rows(self, first: int, stop: int) -> pa.Table:
        """Rows ``first .. stop - 1`` of the judge file."""
        return _judge_table(self.plan, self.pairs, self.judge_messages, self.order[first:stop])


def build_rever(bank: TextBank, seed: int, plan: ReverPlan, links: list[UltraFeedbackLink],
                text_factor: float) -> ReverBuild:
    """The rubric and judge files (to build chunk by chunk), the planted breaks and the manifest's
    ``rever`` entry; every random draw is made here, in a fixed order."""
    rng = rng_for(seed, "rever-text")
    pairs = _pair_texts(rng, bank, plan, links, text_factor)
    criterion = _criteria(rng, bank, plan.items)
    rubric_texts = _rubric_texts(rng, bank, plan, pairs, criterion, text_factor)
    texts = _judge_texts(rng, bank, plan, pairs, criterion, text_factor)
    breaks, edits = _plant_breaks(rng, plan, pairs.ids, texts, criterion)
    order = _file_order(seed, plan.n_pairs, edits)
    info = {
        "pairs": int(plan.n_pairs),
        "pairs_with_rubric": int(plan.n_with_rubric),
        "pairs_decided_by_principles_only": plan.principle_decided,
        "pairs_built_from_ultrafeedback": len(pairs.links),
        "ultrafeedback_links": pairs.links,
        "tool_call_trajectories": int(plan.styles.uses_tool[order].sum()),
        "judge_rows": len(order),
        "verdict_shape_map": int(plan.styles.verdict_is_map[order].sum()),
    }
    return ReverBuild(plan, pairs, rubric_texts, _judge_messages(plan, texts, edits), order, breaks, info)


def generate_rever(run: GenerationRun, n_with_rubric: int, links: list[UltraFeedbackLink], manifest: dict) -> None:
    """Write the wanted ReVeR datasets a chunk at a time; note the planted breaks and the plan's
    counts in ``manifest``."""
    plan = plan_rever(n_with_rubric, run.seed, len(links))
    build = build_rever(run.bank, run.seed, plan, links, run.text_factor)
    for key, n_rows, rows in (("rever_rubric", build.n_rubric_rows, build.rubric_rows),
                              ("rever_judge", build.n_judge_rows, build.judge_rows)):
        if key in run.wanted:
            write_in_chunks(run.out_dir, manifest, key, n_rows, rows, run.formats[key])
    manifest["rever_integrity_breaks"] = build.breaks
    manifest["rever"] = build.info
