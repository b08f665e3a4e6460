"""Stand-ins of the extra datasets that hold pairs: HuggingFaceH4/ultrafeedback_binarized,
argilla/ultrafeedback-binarized-preferences-cleaned, RLHFlow/UltraFeedback-preference-standard
(preference) and Anthropic/hh-rlhf (transcript).

Rows without a planted quirk are clean pairs: distinct, non-empty responses, the chosen score
strictly above the rejected one and within the entry's score_range. A planted row has exactly one
quirk (:data:`H4_QUIRKS` ...); the donors of one stand-in are the pairs the next repeats (H4 ->
argilla with other letter case and white space, argilla -> RLHFlow exactly). Planted contamination
(:mod:`.contamination`), in clean pairs: a GSM8K question as an H4 prompt, an MT-Bench follow-up as
the second human turn of an hh-rlhf transcript. Planted near duplicates (:mod:`.near_duplicates`),
in clean pairs of the three preference stand-ins, each row's prompt, chosen and rejected replaced
by a case's texts (its scores kept): prompts near each other, the same comparison copied with small
edits or reversed, near-identical responses and near misses. Planted personal data and secrets
(:mod:`.pii`), in clean pairs of the three preference stand-ins, each row's prompt, chosen and
rejected replaced by a case's texts (its scores kept): an e-mail address, an IP address or a key in
code or in prose on one side, or a near miss."""

from __future__ import annotations

import copy
import hashlib
import itertools
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from preftools.generate import biases, contamination, near_duplicates, pii
from preftools.generate.common import GenerationRun, concat, n_planted, rng_for, segments, take_strings
from preftools.generate.extra_common import (
    ASSISTANT,
    CROSS_DUPLICATE,
    DUPLICATE,
    MESSAGES,
    SYSTEM,
    USER,
    QuirkPlan,
    StandIn,
    apply_plan,
    card,
    instructions,
    message_lists,
    plan_quirks,
    random_sources,
    record_planted,
    restyle,
    take_rows,
    user_assistant,
    write_stand_in,
)
from preftools.generate.ultrafeedback import UF_MODELS, UF_SOURCES, UF_SYSTEM_PROMPTS

CROSS_RATE = 0.001  # share of an entry's rows that repeat a pair of the stand-in before it
CONTAMINATION = "contamination"
NEAR_DUPLICATE = "near_duplicate"
PII = "pii"


def _contamination_rows(run: GenerationRun, key: str, n: int, taken: list[np.ndarray],
                        eligible: np.ndarray | None = None) -> tuple[list[contamination.Case], QuirkPlan]:
    """The planted cases of stand-in ``key`` (:mod:`.contamination`) and the rows they go to, at random
    among the ``eligible`` rows of its file (default: all) not ``taken`` (by a planted quirk, a
    duplicate's source, a donor)."""
    cases = run.contamination.cases(key) if run.contamination is not None else []
    free = np.ones(n, bool) if eligible is None else eligible.copy()
    for rows in taken:
        free[rows] = False
    rows = rng_for(run.seed, "contamination", key).permutation(np.flatnonzero(free))[: len(cases)]
    return cases[: len(rows)], QuirkPlan({CONTAMINATION: np.sort(rows)})


def _free_rows(run: GenerationRun, stream: str, key: str, n: int, taken: list, count: int) -> np.ndarray:
    """``count`` rows (or all there are) at random, by the stream (seed, ``stream``, ``key``), among
    the ``n`` rows of stand-in ``key``'s file not ``taken``; in order."""
    free = np.ones(n, bool)
    for rows in taken:
        free[np.asarray(rows, np.int64)] = False
    return np.sort(rng_for(run.seed, stream, key).permutation(np.flatnonzero(free))[:count])


def _near_duplicate_rows(run: GenerationRun, key: str, n: int,
                         taken: list) -> tuple[list[near_duplicates.Slot], QuirkPlan]:
    """The members of planted near-duplicate cases that go to stand-in ``key`` (:mod:`.near_duplicates`)
    and their rows, at random among the rows of its file not ``taken`` (by a planted quirk, a
    duplicate's source, a donor, a contamination case), the k-th member in the k-th of the rows in
    order."""
    slots = run.near_duplicates.slots(key) if run.near_duplicates is not None else []
    rows = _free_rows(run, "near_duplicates", key, n, taken, len(slots))
    return slots[: len(rows)], QuirkPlan({NEAR_DUPLICATE: rows})


def _pii_rows(run: GenerationRun, key: str, n: int, taken: list) -> tuple[list[int], QuirkPlan]:
    """The planted personal data and secrets that go to stand-in ``key`` (:mod:`.pii`, their indices
    in the plan) and their rows, at random among the rows of its file not ``taken`` (by any other
    planted case or quirk), the k-th case in the k-th of the rows in order."""
    slots = run.pii.slots(key) if run.pii is not None else []
    rows = _free_rows(run, "pii", key, n, taken, len(slots))
    return slots[: len(rows)], QuirkPlan({PII: rows})


def _texts_edit(members: list, prompt_column: bool):
    """Row -> the row with the k-th member's prompt, chosen and rejected (each [user, assistant]), its
    scores and other columns kept; the prompt also in the ``prompt`` column where the stand-in has one.
    A member: a near-duplicate case's member or a planted :class:`.pii.Case`."""
    def edit(row: dict, k: int) -> dict:
        member = members[k]
        if prompt_column:
            row["prompt"] = member.prompt
        row["chosen"] = [{"content": member.prompt, "role": "user"}, {"content": member.chosen, "role": "assistant"}]
        row["rejected"] = [{"content": member.prompt, "role": "user"},
                           {"content": member.rejected, "role": "assistant"}]
        return row
    return edit


def _place_near_duplicates(run: GenerationRun, stand_in: StandIn, path: str, slots: list[near_duplicates.Slot],
                           plan: QuirkPlan) -> None:
    if run.near_duplicates is not None:
        run.near_duplicates.place(stand_in.key, stand_in.hub_id, path, slots, plan.rows[NEAR_DUPLICATE])


def _place_pii(run: GenerationRun, stand_in: StandIn, path: str, slots: list[int], plan: QuirkPlan) -> None:
    if run.pii is not None:
        run.pii.place(stand_in.key, stand_in.hub_id, path, slots, plan.rows[PII])


def _record_contamination(manifest: dict, stand_in: StandIn, path: str, cases: list[contamination.Case],
                          plan: QuirkPlan) -> None:
    for row, case in zip(plan.rows[CONTAMINATION], cases):
        contamination.record(manifest, stand_in.key, stand_in.hub_id, path, int(row), case)


# --------------------------------------------------------------------------------------
# HuggingFaceH4/ultrafeedback_binarized
# --------------------------------------------------------------------------------------
H4_TRAIN = "data/train_prefs-00000-of-00001.parquet"
H4 = StandIn(
    "h4_ultrafeedback", "HuggingFaceH4/ultrafeedback_binarized",
    files=((H4_TRAIN, 61_135), ("data/train_sft-00000-of-00001.parquet", 61_135),
           ("data/test_prefs-00000-of-00001.parquet", 2_000)),
    entry_files=(H4_TRAIN,),
    card=card("UltraFeedback Binarized", "mit",
              "A generated stand-in (preftools.generate) in the layout and types of the Hub dataset: "
              "train_sft holds the rows of train_prefs, as upstream.",
              configs=[{"config_name": "default", "data_files": [
                  {"split": "train_prefs", "path": "data/train_prefs-*"},
                  {"split": "train_sft", "path": "data/train_sft-*"},
                  {"split": "test_prefs", "path": "data/test_prefs-*"}]}],
              language=["en"], task_categories=["text-generation"]),
)
H4_SCHEMA = pa.schema([
    ("prompt", pa.string()), ("prompt_id", pa.string()), ("chosen", MESSAGES), ("rejected", MESSAGES),
    ("messages", MESSAGES), ("score_chosen", pa.float64()), ("score_rejected", pa.float64()),
])
H4_QUIRKS = {"identical_responses": 0.002, "empty_response": 0.002, "inverted_scores": 0.002, "tied_scores": 0.002,
             "score_out_of_range": 0.002, DUPLICATE: 0.002}


def _sha256(strings: pa.Array) -> pa.Array:
    """Hex sha256 of each string (H4's prompt_id), by DuckDB."""
    import duckdb

    with duckdb.connect(config={"threads": 1}) as con:
        con.register("strings", pa.table({"s": strings}))
        return con.sql("select sha256(s) as h from strings").to_arrow_table().column("h").combine_chunks()


def _h4_rows(run: GenerationRun, rng: np.random.Generator, n: int) -> pa.Table:
    prompt = instructions(rng, run.bank, random_sources(rng, n), run.text_factor)
    chosen = user_assistant(prompt, run.bank.long_text(rng, n, 6, 14, run.text_factor))
    rejected = user_assistant(prompt, run.bank.long_text(rng, n, 6, 14, run.text_factor))
    half_chosen = rng.integers(3, 21, n)  # scores 1.5 .. 10 in steps of 0.5
    half_rejected = rng.integers(2, half_chosen)  # 1 .. below the chosen score
    return pa.Table.from_arrays([prompt, _sha256(prompt), chosen, rejected, chosen,
                                 pa.array(half_chosen / 2), pa.array(half_rejected / 2)], schema=H4_SCHEMA)


def _swap_scores(chosen: str, rejected: str):
    def edit(row: dict, k: int) -> dict:
        row[chosen], row[rejected] = row[rejected], row[chosen]
        return row
    return edit


def _tie_scores(chosen: str, rejected: str):
    def edit(row: dict, k: int) -> dict:
        row[rejected] = row[chosen]
        return row
    return edit


def _identical(row: dict, k: int) -> dict:
    row["rejected"] = copy.deepcopy(row["chosen"])
    return row


def _empty_last_turn(row: dict, k: int) -> dict:
    """The chosen (even k) or the rejected response empty ("" or blank)."""
    side = "chosen" if k % 2 == 0 else "rejected"
    row[side][-1]["content"] = "" if k % 2 == 0 else "  "
    return row


def _h4_out_of_range(row: dict, k: int) -> dict:
    if k % 2 == 0:
        row["score_chosen"] = 12.0
    else:
        row["score_rejected"] = 0.0
    return row


def _h4_empty(row: dict, k: int) -> dict:
    row = _empty_last_turn(row, k)
    row["messages"] = copy.deepcopy(row["chosen"])
    return row


H4_EDITS = {
    "identical_responses": _identical, "empty_response": _h4_empty,
    "inverted_scores": _swap_scores("score_chosen", "score_rejected"),
    "tied_scores": _tie_scores("score_chosen", "score_rejected"), "score_out_of_range": _h4_out_of_range,
}


@dataclass(frozen=True)
class Donor:
    """A pair the next stand-in repeats."""

    prompt: str
    chosen: str
    rejected: str
    chosen_score: float
    rejected_score: float


def generate_h4(run: GenerationRun, scale: float, manifest: dict, write: bool, n_donors: int) -> list[Donor]:
    rows = H4.rows(scale)
    plan = plan_quirks(rng_for(run.seed, "extra", "h4", "plan"), rows[H4_TRAIN], H4_QUIRKS, n_donors=n_donors)
    donors: list[Donor] = []
    cases, planted = _contamination_rows(run, H4.key, rows[H4_TRAIN],
                                         [*plan.rows.values(), plan.donors, list(plan.duplicate_source.values())])
    near_slots, near_planted = _near_duplicate_rows(
        run, H4.key, rows[H4_TRAIN],
        [*plan.rows.values(), plan.donors, list(plan.duplicate_source.values()), planted.rows[CONTAMINATION]])
    pii_slots, pii_planted = _pii_rows(
        run, H4.key, rows[H4_TRAIN],
        [*plan.rows.values(), plan.donors, list(plan.duplicate_source.values()), planted.rows[CONTAMINATION],
         near_planted.rows[NEAR_DUPLICATE]])

    def h4_texts(members: list):
        """:func:`_texts_edit`, the prompt's id and the messages (the chosen conversation) to match."""
        texts = _texts_edit(members, prompt_column=True)

        def edit(row: dict, k: int) -> dict:
            row = texts(row, k)
            row["prompt_id"] = hashlib.sha256(row["prompt"].encode()).hexdigest()
            row["messages"] = copy.deepcopy(row["chosen"])
            return row
        return edit

    near_duplicate = h4_texts([slot.texts for slot in near_slots])
    planted_pii = h4_texts([run.pii.cases[c] for c in pii_slots])

    def contaminate(row: dict, k: int) -> dict:
        """The prompt an eval item (:mod:`.contamination`), in every column that holds it."""
        row["prompt"] = cases[k].text
        row["prompt_id"] = hashlib.sha256(cases[k].text.encode()).hexdigest()
        for side in ("chosen", "rejected", "messages"):
            row[side][0]["content"] = cases[k].text
        return row

    def tables(path: str, index: int, first: int, count: int) -> pa.Table:
        rng = rng_for(run.seed, "extra", "h4", path, index)
        table = _h4_rows(run, rng, count)
        if path != H4_TRAIN:
            return table
        table = apply_plan(apply_plan(table, first, plan, H4_EDITS), first, planted, {CONTAMINATION: contaminate})
        table = apply_plan(table, first, near_planted, {NEAR_DUPLICATE: near_duplicate})
        table = apply_plan(table, first, pii_planted, {PII: planted_pii})
        donors.extend(Donor(r["prompt"], r["chosen"][1]["content"], r["rejected"][1]["content"], r["score_chosen"],
                            r["score_rejected"]) for r in take_rows(table, first, plan.donors))
        return table

    write_stand_in(run, scale, H4, H4_SCHEMA, tables, manifest, write,
                   copies={"data/train_sft-00000-of-00001.parquet": H4_TRAIN})
    if write:
        record_planted(manifest, H4.key, _planted(plan, H4_TRAIN), donor_rows=_rows_of(plan.donors, H4_TRAIN))
        _record_contamination(manifest, H4, H4_TRAIN, cases, planted)
        _place_near_duplicates(run, H4, H4_TRAIN, near_slots, near_planted)
        _place_pii(run, H4, H4_TRAIN, pii_slots, pii_planted)
    return donors


# --------------------------------------------------------------------------------------
# argilla/ultrafeedback-binarized-preferences-cleaned
# --------------------------------------------------------------------------------------
ONE_TRAIN_FILE = "data/train-00000-of-00001.parquet"
ARGILLA = StandIn(
    "argilla_ultrafeedback_cleaned", "argilla/ultrafeedback-binarized-preferences-cleaned",
    files=((ONE_TRAIN_FILE, 60_917),), entry_files=(ONE_TRAIN_FILE,),
    card=card("UltraFeedback Binarized Preferences Cleaned", "mit",
              "A generated stand-in (preftools.generate) in the layout and types of the Hub dataset.",
              configs=[{"config_name": "default", "data_files": [{"split": "train", "path": "data/train-*"}]}],
              language=["en"], task_categories=["text-generation"]),
)
ARGILLA_SCHEMA = pa.schema([
    ("source", pa.string()), ("prompt", pa.string()), ("chosen", MESSAGES), ("chosen-rating", pa.float64()),
    ("chosen-model", pa.string()), ("rejected", MESSAGES), ("rejected-rating", pa.float64()),
    ("rejected-model", pa.string()),
])
ARGILLA_QUIRKS = {"identical_responses": 0.002, "empty_response": 0.002, "inverted_scores": 0.002,
                  "tied_scores": 0.002, CROSS_DUPLICATE: CROSS_RATE, DUPLICATE: 0.002}


def _argilla_rows(run: GenerationRun, rng: np.random.Generator, n: int) -> pa.Table:
    source = random_sources(rng, n)
    prompt = instructions(rng, run.bank, source, run.text_factor)
    chosen = user_assistant(prompt, run.bank.long_text(rng, n, 6, 14, run.text_factor))
    rejected = user_assistant(prompt, run.bank.long_text(rng, n, 6, 14, run.text_factor))
    quarter_chosen = rng.integers(5, 21, n)  # mean aspect ratings 1.25 .. 5 (quarters)
    quarter_rejected = rng.integers(4, quarter_chosen)
    chosen_model = rng.integers(0, len(UF_MODELS), n)
    rejected_model = (chosen_model + rng.integers(1, len(UF_MODELS), n)) % len(UF_MODELS)
    return pa.Table.from_arrays([
        take_strings(UF_SOURCES, source), prompt, chosen, pa.array(quarter_chosen / 4),
        take_strings(UF_MODELS, chosen_model), rejected, pa.array(quarter_rejected / 4),
        take_strings(UF_MODELS, rejected_model),
    ], schema=ARGILLA_SCHEMA)


def generate_argilla(run: GenerationRun, scale: float, manifest: dict, write: bool, h4_donors: list[Donor],
                     n_donors: int) -> list[Donor]:
    rows = ARGILLA.rows(scale)
    plan = plan_quirks(rng_for(run.seed, "extra", "argilla", "plan"), rows[ONE_TRAIN_FILE], ARGILLA_QUIRKS,
                       n_donors=n_donors, fixed={CROSS_DUPLICATE: len(h4_donors)})
    donors: list[Donor] = []

    def repeat_h4(row: dict, k: int) -> dict:
        donor = h4_donors[k]
        row["prompt"] = restyle(donor.prompt)
        row["chosen"] = [{"content": row["prompt"], "role": "user"}, {"content": restyle(donor.chosen), "role": "assistant"}]
        row["rejected"] = [{"content": row["prompt"], "role": "user"},
                           {"content": restyle(donor.rejected), "role": "assistant"}]
        return row

    edits = {
        "identical_responses": _identical, "empty_response": _empty_last_turn,
        "inverted_scores": _swap_scores("chosen-rating", "rejected-rating"),
        "tied_scores": _tie_scores("chosen-rating", "rejected-rating"), CROSS_DUPLICATE: repeat_h4,
    }

    near_slots, near_planted = _near_duplicate_rows(
        run, ARGILLA.key, rows[ONE_TRAIN_FILE],
        [*plan.rows.values(), plan.donors, list(plan.duplicate_source.values())])
    near_edits = {NEAR_DUPLICATE: _texts_edit([slot.texts for slot in near_slots], prompt_column=True)}
    pii_slots, pii_planted = _pii_rows(
        run, ARGILLA.key, rows[ONE_TRAIN_FILE],
        [*plan.rows.values(), plan.donors, list(plan.duplicate_source.values()), near_planted.rows[NEAR_DUPLICATE]])
    pii_edits = {PII: _texts_edit([run.pii.cases[c] for c in pii_slots], prompt_column=True)}

    bias_planted: dict[str, list[list]] = {}
    # (no bias in a planted row: a quirk's, a donor's, a near duplicate's or planted personal data's)
    planned = np.concatenate([*plan.rows.values(), plan.donors, near_planted.rows[NEAR_DUPLICATE],
                              pii_planted.rows[PII]]).astype(np.int64)

    def tables(path: str, index: int, first: int, count: int) -> pa.Table:
        table = _argilla_rows(run, rng_for(run.seed, "extra", "argilla", index), count)
        free = ~np.isin(np.arange(first, first + count), planned)
        table, bias_rows = biases.plant(rng_for(run.seed, "extra", "argilla", "biases", index), table, free)
        for kind, positions in bias_rows.items():
            bias_planted.setdefault(kind, []).extend([path, first + p] for p in positions)
        table = apply_plan(apply_plan(table, first, plan, edits), first, near_planted, near_edits)
        table = apply_plan(table, first, pii_planted, pii_edits)
        donors.extend(Donor(r["prompt"], r["chosen"][1]["content"], r["rejected"][1]["content"], r["chosen-rating"],
                            r["rejected-rating"]) for r in take_rows(table, first, plan.donors))
        return table

    write_stand_in(run, scale, ARGILLA, ARGILLA_SCHEMA, tables, manifest, write)
    if write:
        record_planted(manifest, ARGILLA.key, _planted(plan, ONE_TRAIN_FILE),
                       donor_rows=_rows_of(plan.donors, ONE_TRAIN_FILE), bias_planted=bias_planted)
        _place_near_duplicates(run, ARGILLA, ONE_TRAIN_FILE, near_slots, near_planted)
        _place_pii(run, ARGILLA, ONE_TRAIN_FILE, pii_slots, pii_planted)
    return donors


# --------------------------------------------------------------------------------------
# RLHFlow/UltraFeedback-preference-standard
# --------------------------------------------------------------------------------------
RLHFLOW = StandIn(
    # every pair of a prompt's completions with different scores: the Hub's viewer counts ~340k rows
    "rlhflow_ultrafeedback", "RLHFlow/UltraFeedback-preference-standard",
    files=((ONE_TRAIN_FILE, 340_000),), entry_files=(ONE_TRAIN_FILE,),
    card=card("UltraFeedback-preference-standard", "mit",
              "A generated stand-in (preftools.generate) in the layout and types of the Hub dataset.",
              configs=[{"config_name": "default", "data_files": [{"split": "train", "path": "data/train-*"}]}]),
)
# as RLHFlow's other "standard" sets (RLHFlow/CodeUltraFeedback-standard): scores as strings
RLHFLOW_SCHEMA = pa.schema([
    ("rejected", MESSAGES), ("chosen", MESSAGES), ("chosen_score", pa.string()), ("rejected_score", pa.string()),
])
RLHFLOW_QUIRKS = {"identical_responses": 0.0005, "empty_response": 0.0005, "inverted_scores": 0.0005,
                  "tied_scores": 0.0005, "na_score": 0.0005, "unparseable_score": 0.0005,
                  "score_out_of_range": 0.0005, CROSS_DUPLICATE: CROSS_RATE / 5, DUPLICATE: 0.0005}
# the prompt turns before the two responses: (slot, role) of each kind of prompt
SLOT_SYSTEM, SLOT_USER, SLOT_REPLY, SLOT_FOLLOW_UP = range(4)
SLOT_ROLE = (SYSTEM, USER, ASSISTANT, USER)
PROMPT_KINDS = ((SLOT_USER,), (SLOT_SYSTEM, SLOT_USER), (SLOT_USER, SLOT_REPLY, SLOT_FOLLOW_UP),
                (SLOT_SYSTEM, SLOT_USER, SLOT_REPLY, SLOT_FOLLOW_UP))
PROMPT_KIND_P = (0.8, 0.1, 0.07, 0.03)
COMPLETIONS = 4
PAIRS = np.array(list(itertools.combinations(range(COMPLETIONS), 2)))
SCORE_TEXT = tuple(str(quarters / 4) for quarters in range(21))  # "1.0", "1.25", ..., "5.0"
UNPARSEABLE_SCORES = ("", "four", "4,5")


def _rlhflow_rows(run: GenerationRun, rng: np.random.Generator, n: int) -> pa.Table:
    """Prompts with four scored completions, one row per pair with different scores (in the
    prompt's order), the first ``n`` rows."""
    n_prompts = n // 3 + 8
    while True:  # (more prompts than needed: every one gives ~5.6 pairs)
        kind = rng.choice(len(PROMPT_KINDS), n_prompts, p=PROMPT_KIND_P)
        quarters = rng.integers(4, 21, (n_prompts, COMPLETIONS))  # mean of four 1-5 ratings
        first, second = quarters[:, PAIRS[:, 0]], quarters[:, PAIRS[:, 1]]
        prompt_of_row, pair_of_row = np.nonzero(first != second)
        if len(prompt_of_row) >= n:
            break
        n_prompts *= 2
    prompt_of_row, pair_of_row = prompt_of_row[:n], pair_of_row[:n]
    a, b = PAIRS[pair_of_row, 0], PAIRS[pair_of_row, 1]
    a_wins = quarters[prompt_of_row, a] > quarters[prompt_of_row, b]
    chosen_completion, rejected_completion = np.where(a_wins, a, b), np.where(a_wins, b, a)

    used = int(prompt_of_row[-1]) + 1 if n else 0
    bank, factor = run.bank, run.text_factor
    slots = [
        take_strings(UF_SYSTEM_PROMPTS, rng.integers(0, len(UF_SYSTEM_PROMPTS), used)),
        instructions(rng, bank, random_sources(rng, used), factor),
        bank.long_text(rng, used, 4, 8, factor),
        pc.utf8_lower(bank.sentences(rng, used, 1, 2, factor)),
        bank.long_text(rng, used * COMPLETIONS, 6, 14, factor),
    ]
    pool = pa.concat_arrays(slots)
    kind_of_row = kind[prompt_of_row]
    n_turns = np.array([len(k) for k in PROMPT_KINDS])[kind_of_row] + 1
    layout = segments(n_turns)
    turn_slot = np.full(layout.total, -1, np.int64)  # the slot of each prompt turn (-1: the response)
    for k, kind_slots in enumerate(PROMPT_KINDS):
        for position, slot in enumerate(kind_slots):
            turn_slot[(kind_of_row[layout.owner] == k) & (layout.position == position)] = slot
    is_response = turn_slot < 0
    role = np.where(is_response, ASSISTANT, np.array(SLOT_ROLE)[np.maximum(turn_slot, 0)])
    prompt_index = np.maximum(turn_slot, 0) * used + prompt_of_row[layout.owner]

    def side(completion: np.ndarray) -> pa.ListArray:
        response_index = 4 * used + prompt_of_row * COMPLETIONS + completion
        index = np.where(is_response, response_index[layout.owner], prompt_index)
        return message_lists(pool.take(pa.array(index)), role, n_turns)

    chosen_quarters = quarters[prompt_of_row, chosen_completion]
    rejected_quarters = quarters[prompt_of_row, rejected_completion]
    return pa.Table.from_arrays([side(rejected_completion), side(chosen_completion),
                                 take_strings(SCORE_TEXT, chosen_quarters), take_strings(SCORE_TEXT, rejected_quarters)],
                                schema=RLHFLOW_SCHEMA)


def _rlhflow_score(value: str):
    """Set the chosen (even k) or the rejected score to ``value`` (a function of k)."""
    def edit(row: dict, k: int) -> dict:
        row["chosen_score" if k % 2 == 0 else "rejected_score"] = value(k)
        return row
    return edit


def _rlhflow_out_of_range(row: dict, k: int) -> dict:
    if k % 2 == 0:
        row["chosen_score"] = "7.5"
    else:
        row["rejected_score"] = "0"
    return row


def generate_rlhflow(run: GenerationRun, scale: float, manifest: dict, write: bool,
                     argilla_donors: list[Donor]) -> None:
    rows = RLHFLOW.rows(scale)
    plan = plan_quirks(rng_for(run.seed, "extra", "rlhflow", "plan"), rows[ONE_TRAIN_FILE], RLHFLOW_QUIRKS,
                       fixed={CROSS_DUPLICATE: len(argilla_donors)})

    def repeat_argilla(row: dict, k: int) -> dict:
        donor = argilla_donors[k]
        row["chosen"] = [{"content": donor.prompt, "role": "user"}, {"content": donor.chosen, "role": "assistant"}]
        row["rejected"] = [{"content": donor.prompt, "role": "user"}, {"content": donor.rejected, "role": "assistant"}]
        row["chosen_score"], row["rejected_score"] = str(donor.chosen_score), str(donor.rejected_score)
        return row

    edits = {
        "identical_responses": _identical, "empty_response": _empty_last_turn,
        "inverted_scores": _swap_scores("chosen_score", "rejected_score"),
        "tied_scores": _tie_scores("chosen_score", "rejected_score"),
        "na_score": _rlhflow_score(lambda k: "N/A"),
        "unparseable_score": _rlhflow_score(lambda k: UNPARSEABLE_SCORES[k % len(UNPARSEABLE_SCORES)]),
        "score_out_of_range": _rlhflow_out_of_range, CROSS_DUPLICATE: repeat_argilla,
    }
    near_slots, near_planted = _near_duplicate_rows(
        run, RLHFLOW.key, rows[ONE_TRAIN_FILE], [*plan.rows.values(), list(plan.duplicate_source.values())])
    near_edits = {NEAR_DUPLICATE: _texts_edit([slot.texts for slot in near_slots], prompt_column=False)}
    pii_slots, pii_planted = _pii_rows(
        run, RLHFLOW.key, rows[ONE_TRAIN_FILE],
        [*plan.rows.values(), list(plan.duplicate_source.values()), near_planted.rows[NEAR_DUPLICATE]])
    pii_edits = {PII: _texts_edit([run.pii.cases[c] for c in pii_slots], prompt_column=False)}
    shapes = {"rows_system_turn": 0, "rows_multi_turn": 0}

    def tables(path: str, index: int, first: int, count: int) -> pa.Table:
        table = apply_plan(_rlhflow_rows(run, rng_for(run.seed, "extra", "rlhflow", index), count), first, plan, edits)
        table = apply_plan(apply_plan(table, first, near_planted, near_edits), first, pii_planted, pii_edits)
        roles = pc.struct_field(pc.list_flatten(table.column("chosen")), "role").to_numpy(zero_copy_only=False)
        owner = pc.list_parent_indices(table.column("chosen")).to_numpy()
        first_turn = np.r_[True, owner[1:] != owner[:-1]] if len(owner) else np.zeros(0, bool)
        shapes["rows_system_turn"] += int(((roles == "system") & first_turn).sum())
        shapes["rows_multi_turn"] += int((np.bincount(owner[roles == "user"], minlength=count) > 1).sum())
        return table

    write_stand_in(run, scale, RLHFLOW, RLHFLOW_SCHEMA, tables, manifest, write)
    if write:
        record_planted(manifest, RLHFLOW.key, _planted(plan, ONE_TRAIN_FILE), **shapes)
        _place_near_duplicates(run, RLHFLOW, ONE_TRAIN_FILE, near_slots, near_planted)
        _place_pii(run, RLHFLOW, ONE_TRAIN_FILE, pii_slots, pii_planted)


# --------------------------------------------------------------------------------------
# Anthropic/hh-rlhf
# --------------------------------------------------------------------------------------
HH_TRAIN = "helpful-base/train.jsonl.gz"
HH = StandIn(
    "hh_helpful", "Anthropic/hh-rlhf",
    files=((HH_TRAIN, 43_835), ("helpful-base/test.jsonl.gz", 2_354), ("harmless-base/train.jsonl.gz", 42_537),
           ("harmless-base/test.jsonl.gz", 2_312)),
    entry_files=(HH_TRAIN, "helpful-base/test.jsonl.gz"),
    # as upstream: no `configs:`, so `config: helpful-base` names the folder
    card=card("hh-rlhf", "mit", "A generated stand-in (preftools.generate) in the layout and types of the Hub "
              "dataset: one folder of JSON Lines per tranche.", tags=["human-feedback"]),
)
HH_SCHEMA = pa.schema([("chosen", pa.string()), ("rejected", pa.string())])
HH_QUIRKS = {"identical_responses": 0.002, "empty_response": 0.002, "differ_before_last_turn": 0.002,
             DUPLICATE: 0.002}
HUMAN_TURNS_P = (0.45, 0.3, 0.15, 0.1)  # 1 .. 4 human turns
HUMAN, REPLY = "\n\nHuman: ", "\n\nAssistant: "


def _hh_rows(run: GenerationRun, rng: np.random.Generator, humans: np.ndarray) -> pa.Table:
    """Transcripts with ``humans[i]`` human turns: the turns up to the last human one shared, then
    the chosen and the rejected last reply."""
    n, bank, factor = len(humans), run.bank, run.text_factor
    shared = segments(2 * humans - 1)
    is_human = shared.position % 2 == 0
    turn = shared.position // 2
    human_text = bank.lazy_sentences(rng, n * 4, 1, 2, factor)
    reply_text = bank.lazy_sentences(rng, n * 3, 1, 4, factor)
    texts = pa.concat_arrays([human_text.at(shared.owner[is_human] * 4 + turn[is_human]),
                              reply_text.at(shared.owner[~is_human] * 3 + turn[~is_human])])
    placed = np.empty(shared.total, np.int64)
    placed[np.flatnonzero(is_human)] = np.arange(is_human.sum())
    placed[np.flatnonzero(~is_human)] = is_human.sum() + np.arange((~is_human).sum())
    turns = concat(take_strings((HUMAN, REPLY), np.where(is_human, 0, 1)), texts.take(pa.array(placed)))
    prefix = pc.binary_join(pa.ListArray.from_arrays(pa.array(shared.offsets, pa.int32()), turns), "")
    chosen = concat(prefix, REPLY, bank.sentences(rng, n, 1, 5, factor))
    rejected = concat(prefix, REPLY, bank.sentences(rng, n, 1, 5, factor))
    return pa.Table.from_arrays([chosen, rejected], schema=HH_SCHEMA)


def _hh_identical(row: dict, k: int) -> dict:
    row["rejected"] = row["chosen"]
    return row


def _hh_empty_last_reply(row: dict, k: int) -> dict:
    """The rejected transcript ends in an empty "Assistant:" turn."""
    row["rejected"] = row["rejected"][: row["rejected"].rfind(REPLY)] + REPLY.rstrip(" ")
    return row


def _hh_differ_before_last(row: dict, k: int) -> dict:
    """The rejected transcript's first reply (before the last human turn) differs from the chosen one's."""
    at = row["rejected"].find(REPLY) + len(REPLY)
    row["rejected"] = row["rejected"][:at] + "Sorry, I misread that. " + row["rejected"][at:]
    return row


HH_EDITS = {"identical_responses": _hh_identical, "empty_response": _hh_empty_last_reply,
            "differ_before_last_turn": _hh_differ_before_last}


def _human_turns(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.choice(len(HUMAN_TURNS_P), n, p=HUMAN_TURNS_P) + 1


def _second_human_turn(transcript: str, text: str) -> str:
    """The transcript with the text of its second human turn replaced."""
    start = transcript.find(HUMAN, transcript.find(HUMAN) + 1) + len(HUMAN)
    return transcript[:start] + text + transcript[transcript.find(REPLY, start):]


def generate_hh(run: GenerationRun, scale: float, manifest: dict, write: bool) -> None:
    rows = HH.rows(scale)
    plan_rng = rng_for(run.seed, "extra", "hh", "plan")
    humans = _human_turns(plan_rng, rows[HH_TRAIN])
    plan = plan_quirks(plan_rng, rows[HH_TRAIN], HH_QUIRKS, eligible={"differ_before_last_turn": humans > 1})
    multi_turn = {"rows_multi_turn": 0}
    # an eval item (an MT-Bench follow-up) as the second human turn of a transcript with two or more
    cases, planted = _contamination_rows(run, HH.key, rows[HH_TRAIN],
                                         [*plan.rows.values(), list(plan.duplicate_source.values())], humans > 1)

    def contaminate(row: dict, k: int) -> dict:
        return {side: _second_human_turn(row[side], cases[k].text) for side in ("chosen", "rejected")}

    def tables(path: str, index: int, first: int, count: int) -> pa.Table:
        rng = rng_for(run.seed, "extra", "hh", path, index)
        if path == HH_TRAIN:
            table = apply_plan(_hh_rows(run, rng, humans[first: first + count]), first, plan, HH_EDITS)
            table = apply_plan(table, first, planted, {CONTAMINATION: contaminate})
        else:
            table = _hh_rows(run, rng, _human_turns(rng, count))
        if path in HH.entry_files:
            multi_turn["rows_multi_turn"] += int(pc.sum(pc.greater(pc.count_substring(table.column("chosen"), HUMAN),
                                                                   1)).as_py() or 0)
        return table

    write_stand_in(run, scale, HH, HH_SCHEMA, tables, manifest, write)
    if write:
        record_planted(manifest, HH.key, _planted(plan, HH_TRAIN), **multi_turn)
        _record_contamination(manifest, HH, HH_TRAIN, cases, planted)


# --------------------------------------------------------------------------------------


def _rows_of(rows: np.ndarray, path: str) -> list[list]:
    return [[path, int(r)] for r in rows]


def _planted(plan: QuirkPlan, path: str) -> dict[str, list[list]]:
    """The plan's rows as ``[file, row]`` per quirk (a plan over one file)."""
    return {quirk: _rows_of(rows, path) for quirk, rows in plan.rows.items()}


def near_duplicate_cases(scale: float) -> int:
    """How many near-duplicate cases of each kind are planted (:mod:`.near_duplicates`)."""
    return near_duplicates.cases_per_kind(H4.rows(scale)[H4_TRAIN])


def pii_cases(scale: float) -> int:
    """How many values of each kind the rule reports are planted (:mod:`.pii`; as many near misses)."""
    return pii.cases_per_kind(H4.rows(scale)[H4_TRAIN])


def cross_duplicates(scale: float) -> tuple[int, int]:
    """How many pairs argilla repeats from H4, and RLHFlow from argilla."""
    return (n_planted(ARGILLA.rows(scale)[ONE_TRAIN_FILE], ARGILLA_QUIRKS[CROSS_DUPLICATE], 2),
            n_planted(RLHFLOW.rows(scale)[ONE_TRAIN_FILE], RLHFLOW_QUIRKS[CROSS_DUPLICATE], 2))
