"""coseal/CodeUltraFeedback and RLHFlow/CodeUltraFeedback-standard: vocabularies, the coseal
rows with their planted quirks, and the published processing script that turns them into
RLHFlow's pairs.  The random draws are made for all rows at once, the rows themselves are built
(and run through the script, and written) a chunk at a time.  Planted contamination
(:mod:`.contamination`) and planted personal data and secrets (:mod:`.pii`) are instructions of
rows that the warehouse pairs."""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from preftools.generate import contamination
from preftools.generate.common import (
    RATING_STR,
    GenerationRun,
    LazyStrings,
    TextBank,
    lazy_concat,
    lazy_map,
    lazy_options,
    n_planted,
    progress_bar,
    rng_for,
)
from preftools.generate.writer import ShardedWriter, record_dataset, write_chunk_rows
from preftools.inputs import contract

MODELS_PER_ROW = 4

# --------------------------------------------------------------------------------------
# vocabularies
# --------------------------------------------------------------------------------------
CODE_MODELS = (
    "gpt-4", "gpt-3.5-turbo", "codellama-34b-instruct", "codellama-13b-instruct",
    "codellama-7b-instruct", "llama-2-70b-chat", "llama-2-13b-chat", "wizardcoder-33b",
    "wizardcoder-15b", "wizardlm-33b", "wizardlm-7b", "deepseek-coder-33b-instruct",
    "deepseek-coder-6.7b-instruct", "mistral-7b-instruct",
)
CODE_INSTRUCTION_PREFIX = (
    "Write a Python function that", "Implement a JavaScript class that", "Create a SQL query that",
    "Refactor the following code so that it", "Design an algorithm that", "Write a C++ program that",
    "Explain and fix the bug in this function that",
)
CODE_SNIPPETS = (
    "def solve(items):\n    result = []\n    for item in items:\n        if item is not None:\n            result.append(item)\n    return result",
    "def count_words(text):\n    counts = {}\n    for word in text.split():\n        counts[word] = counts.get(word, 0) + 1\n    return counts",
    "SELECT name, COUNT(*) AS n\nFROM orders\nGROUP BY name\nORDER BY n DESC;",
    "class Stack {\n  constructor() { this.items = []; }\n  push(x) { this.items.push(x); }\n  pop() { return this.items.pop(); }\n}",
    "int main() {\n    int total = 0;\n    for (int i = 0; i < 10; ++i) total += i;\n    return total;\n}",
    "def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a",
)
CODE_RATIONALE = (
    "The code is hard to follow and lacks comments.",
    "The code works for simple cases but has readability issues.",
    "The code is moderately clear and mostly follows the instruction.",
    "The code is well structured, readable and follows the instruction.",
    "The code is exemplary: idiomatic, documented and efficient.",
)
RATIONALE_UNDETERMINED = "The rating could not be determined."
SPREAD_RATINGS_RATE = 0.45  # rows whose four ratings are distinct (the others may tie)
INDEPENDENT_RATING_P = (0.08, 0.17, 0.25, 0.3, 0.2)
NA_RATING_RATE = 0.04
INVALID_RATINGS = ("10", "0")
# Upstream, every annotations list has 4 items or none. These many rows (whatever the scale) are
# planted with 3 (the last annotation dropped: a model without annotation, on which the
# published script fails); the manifest lists them (code_ultrafeedback_planted.rows_missing_annotation).
MISSING_ANNOTATION_ROWS = 2


# ======================================================================================
# the coseal rows
# ======================================================================================
@dataclass(frozen=True)
class CodeQuirkPlan:
    """Rows (0-based, disjoint, never row 0) that get a planted quirk of the annotations list."""

    empty_annotations: set[int]
    missing_annotation: set[int]  # planted: the last annotation is dropped (3 items, not 4 or 0)
    forced_last_na: set[int]  # the last annotation is "N/A" (the script drops the row's models)
    forced_middle_na: set[int]  # an "N/A" that is not last (the script keeps it)
    repeated_row: set[int]  # a byte-identical copy of the row before it (the Hub data repeats rows)


@dataclass(frozen=True)
class CodeTexts:
    """The texts of rows ``first ..``: ``instruction[i - first]`` per row ``i``,
    ``responses`` / ``rationales[4 * (i - first) + model]`` per (row, model)."""

    instruction: list[str]
    responses: list[str]
    rationales: list[str]
    first: int = 0


@dataclass(frozen=True)
class LazyCodeTexts:
    """The texts of all rows, built a chunk of rows at a time."""

    instruction: LazyStrings  # per row
    responses: LazyStrings  # per (row, model): 4 * row + model
    rationales: LazyStrings  # per (row, model)

    def of_rows(self, first: int, stop: int) -> CodeTexts:
        rows, responses = np.arange(first, stop), np.arange(MODELS_PER_ROW * first, MODELS_PER_ROW * stop)
        return CodeTexts(self.instruction.at(rows).to_pylist(), self.responses.at(responses).to_pylist(),
                         self.rationales.at(responses).to_pylist(), first)


def _texts(rng, bank: TextBank, n_rows: int, text_factor: float) -> LazyCodeTexts:
    instruction = lazy_concat(
        lazy_options(CODE_INSTRUCTION_PREFIX, rng.integers(0, len(CODE_INSTRUCTION_PREFIX), n_rows)), " ",
        lazy_map(pc.utf8_lower, bank.lazy_sentences(rng, n_rows, 1, 3, text_factor)),
    )
    n_responses = MODELS_PER_ROW * n_rows
    intro = bank.lazy_sentences(rng, n_responses, 1, 3, text_factor)
    outro = bank.lazy_sentences(rng, n_responses, 2, 6, text_factor)
    snippet = lazy_options(CODE_SNIPPETS, rng.integers(0, len(CODE_SNIPPETS), n_responses))
    responses = lazy_concat(intro, "\n\n```\n", snippet, "\n```\n\n", outro)
    rationales = bank.lazy_sentences(rng, n_responses, 1, 3, text_factor)
    return LazyCodeTexts(instruction, responses, rationales)


def _ratings(rng, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Rating strings per (row, model), mostly spread out (few ties), sometimes independent draws
    (ties), a few "N/A"; and the shuffled order in which each row lists its annotations."""
    spread = rng.random(n_rows) < SPREAD_RATINGS_RATE
    distinct = np.argsort(rng.random((n_rows, 5)), axis=1)[:, :MODELS_PER_ROW] + 1
    independent = rng.choice(5, (n_rows, MODELS_PER_ROW), p=INDEPENDENT_RATING_P) + 1
    ratings = np.where(spread[:, None], distinct, independent).astype("<U3")
    is_na = rng.random((n_rows, MODELS_PER_ROW)) < NA_RATING_RATE
    ratings[is_na] = "N/A"
    annotation_order = np.argsort(rng.random((n_rows, MODELS_PER_ROW)), axis=1)
    return ratings, annotation_order


def _quirk_plan(rng, n_rows: int) -> CodeQuirkPlan:
    permutation = rng.permutation(np.arange(1, n_rows))  # row 0 stays a normal row
    sizes = {
        "empty_annotations": n_planted(n_rows, 0.01),
        "missing_annotation": MISSING_ANNOTATION_ROWS,
        "forced_last_na": n_planted(n_rows, 0.0, 3),
        "forced_middle_na": n_planted(n_rows, 0.0, 3),
    }
    rows: dict[str, set[int]] = {}
    at = 0
    for name, size in sizes.items():
        rows[name] = set(permutation[at: at + size].tolist())
        at += size
    # repeated rows: the next rows of the permutation whose row before has no quirk (no new draw)
    quirky = set().union(*rows.values())
    rows["repeated_row"] = set()
    for row in permutation[at:].tolist():
        if len(rows["repeated_row"]) == n_planted(n_rows, 0.0005):
            break
        if row - 1 not in quirky and row + 1 not in rows["repeated_row"]:
            rows["repeated_row"].add(row)
            quirky.add(row)
    return CodeQuirkPlan(**rows)


def _plant_invalid_ratings(rng, ratings: np.ndarray) -> None:
    """A few ratings become "10" or "0" (in place)."""
    n_cells = ratings.size
    cells = rng.choice(n_cells, n_planted(n_cells, 0.002, 2), replace=False)
    for cell in cells:
        ratings[cell // MODELS_PER_ROW, cell % MODELS_PER_ROW] = INVALID_RATINGS[cell % 2]


def _row(i: int, preference: str, models: list[str], ratings: np.ndarray, order: list[int],
         texts: CodeTexts, plan: CodeQuirkPlan) -> dict:
    ratings = ratings.copy()
    if i in plan.forced_last_na:
        ratings[order[-1]] = "N/A"
    if i in plan.forced_middle_na:
        ratings[order[-1]] = ratings[order[-1]] if ratings[order[-1]] != "N/A" else "3"
        ratings[order[1]] = "N/A"

    at = i - texts.first  # the row's place in ``texts``

    def annotation(k: int) -> dict:
        rating = ratings[k]
        reason = CODE_RATIONALE[int(rating) - 1] if rating in RATING_STR else RATIONALE_UNDETERMINED
        return {"model": models[k], "rating": str(rating),
                "rationale": reason + " " + texts.rationales[MODELS_PER_ROW * at + k]}

    annotations = [annotation(k) for k in order]
    if i in plan.empty_annotations:
        annotations = []
    elif i in plan.missing_annotation:
        annotations = annotations[:-1]
    return {
        "instruction": texts.instruction[at],
        "preference": preference,
        "models": models,
        "responses": [{"model": models[k], "response": texts.responses[MODELS_PER_ROW * at + k]}
                      for k in range(MODELS_PER_ROW)],
        "annotations": annotations,
    }


def _stats(rows: list[dict]) -> dict:
    def ratings(row: dict) -> list[str]:
        return [a["rating"] for a in row["annotations"]]

    return {
        "annotations_na": sum(r == "N/A" for row in rows for r in ratings(row)),
        "annotations_invalid": sum(r in INVALID_RATINGS for row in rows for r in ratings(row)),
        "rows_empty_annotations": sum(not row["annotations"] for row in rows),
        "rows_last_annotation_na": sum(bool(row["annotations"]) and ratings(row)[-1] == "N/A" for row in rows),
        "rows_middle_na_kept": sum(bool(row["annotations"]) and ratings(row)[-1] != "N/A"
                                   and "N/A" in ratings(row) for row in rows),
    }


def _paired_rows(ratings: np.ndarray, plan: CodeQuirkPlan) -> list[int]:
    """Rows without a planted quirk, not repeated by the next row, whose four ratings are valid and
    not all equal (so the warehouse pairs them)."""
    quirky = set().union(plan.empty_annotations, plan.missing_annotation, plan.forced_last_na,
                         plan.forced_middle_na, plan.repeated_row, {row - 1 for row in plan.repeated_row})
    valid = np.isin(ratings, RATING_STR).all(axis=1) & (ratings != ratings[:, :1]).any(axis=1)
    return [row for row in np.flatnonzero(valid).tolist() if row not in quirky]


def contamination_rows(seed: int, ratings: np.ndarray, plan: CodeQuirkPlan,
                       cases: list[contamination.Case]) -> dict[int, contamination.Case]:
    """The rows the planted cases go to, at random (after every other draw) among :func:`_paired_rows`."""
    rows = rng_for(seed, "contamination", "code").permutation(_paired_rows(ratings, plan))[: len(cases)]
    return {int(row): case for row, case in zip(rows, cases)}


def pii_rows(seed: int, ratings: np.ndarray, plan: CodeQuirkPlan, taken: set[int], count: int) -> list[int]:
    """The rows planted personal data and secrets go to (:mod:`.pii`), at random among
    :func:`_paired_rows` not ``taken`` (by contamination)."""
    free = [row for row in _paired_rows(ratings, plan) if row not in taken]
    return [int(row) for row in rng_for(seed, "pii", "code").permutation(free)[:count]]


def code_row_chunks(bank: TextBank, seed: int, n_rows: int, text_factor: float, chunk_rows: int,
                    cases: list[contamination.Case] = (),
                    placed: list[tuple[int, contamination.Case]] | None = None,
                    pii_texts: list[str] = (),
                    pii_placed: list[tuple[int, int]] | None = None) -> Iterator[list[dict]]:
    """The coseal rows (as dicts in the schema's shape), ``chunk_rows`` at a time; all random
    draws are made before the first chunk. ``cases``: instructions to plant (the rows they go to,
    with their case, are appended to ``placed``); ``pii_texts`` too (the rows, with the text's index,
    to ``pii_placed``)."""
    rng = rng_for(seed, "code")
    n_preferences = len(contract.CODE_ULTRAFEEDBACK_PREFERENCES)
    preference = np.repeat(np.arange(n_preferences), int(math.ceil(n_rows / n_preferences)))[:n_rows]
    preference = rng.permutation(preference)
    texts = _texts(rng, bank, n_rows, text_factor)
    models = np.argsort(rng.random((n_rows, len(CODE_MODELS))), axis=1)[:, :MODELS_PER_ROW]
    ratings, annotation_order = _ratings(rng, n_rows)
    plan = _quirk_plan(rng, n_rows)
    _plant_invalid_ratings(rng, ratings)
    planted = contamination_rows(seed, ratings, plan, list(cases))
    if placed is not None:
        placed.extend(sorted(planted.items()))
    instructions = {row: case.text for row, case in planted.items()}
    pii_planted = sorted(zip(pii_rows(seed, ratings, plan, set(planted), len(pii_texts)), range(len(pii_texts))))
    instructions.update((row, pii_texts[k]) for row, k in pii_planted)
    if pii_placed is not None:
        pii_placed.extend(pii_planted)
    previous: dict | None = None
    for first in range(0, n_rows, chunk_rows):
        stop = min(n_rows, first + chunk_rows)
        chunk_texts = texts.of_rows(first, stop)
        chunk = []
        for i in range(first, stop):
            previous = copy.deepcopy(previous) if i in plan.repeated_row else _row(
                i, contract.CODE_ULTRAFEEDBACK_PREFERENCES[preference[i]], [CODE_MODELS[j] for j in models[i]],
                ratings[i], list(annotation_order[i]), chunk_texts, plan)
            if i in instructions:
                previous["instruction"] = instructions[i]
            chunk.append(previous)
        yield chunk


# ======================================================================================
# RLHFlow's processing script
# ======================================================================================
def published_script_pairs(rows: Iterable[dict]) -> tuple[list[dict], list[dict]]:
    """The RLHFlow processing script of dataset card 002, transcribed faithfully.

    It mirrors card 002 line by line, bugs included:

    * ``rating`` is the loop variable of the annotations loop, so after that loop it
      holds the rating of the LAST annotation of the row; the ``if rating == 'N/A'``
      test therefore drops every model of a row whose last annotation is "N/A", and
      keeps rows where an "N/A" sits elsewhere (then "N/A" wins the comparison,
      since ratings are compared as strings and "N/A" > "5").  For a row with an
      empty annotations list ``rating`` is stale: it still holds the value of the
      last row that had annotations.
    * Ratings are compared as strings ("10" < "2").

    Where the real script would raise -- ``KeyError`` when a response model has no
    annotation (a model missing from, or an empty, annotations list) or
    ``NameError`` when ``rating`` was never assigned -- a real run would have
    crashed.  Here that row's pairs are skipped and processing continues; the
    skipped rows are returned as the second value ``[{"row", "error"}]``.
    """
    data: list[dict] = []
    skipped: list[dict] = []
    for row_data, skip in script_pairs_by_row(rows):
        if skip is not None:
            skipped.append(skip)
        else:
            data.extend(row_data)
    return data, skipped


def script_pairs_by_row(rows: Iterable[dict]) -> Iterator[tuple[list[dict], dict | None]]:
    """:func:`published_script_pairs` row by row (``rows`` is consumed as it goes): per row its
    pairs and ``None``, or ``[]`` and the ``{"row", "error"}`` record of a skipped row."""
    _unset = object()
    rating: Any = _unset  # module-level in the original script: carried across rows
    for i, example in enumerate(rows):
        row_data: list[dict] = []
        try:
            prompt = example['instruction']
            responses = {}
            for row in example['responses']:
                model_name, response = row['model'], row['response']
                responses[model_name] = response
            annotations = {}
            for row in example['annotations']:
                model_name, rating = row['model'], row['rating']
                annotations[model_name] = rating
            preference = 'code-' + example['preference']
            del preference  # unused in the card too; the line stays: it raises on a NULL preference
            all_models = []

            for model_name in responses.keys():
                if rating is _unset:
                    raise NameError("name 'rating' is not defined")
                if rating == 'N/A':
                    continue
                all_models.append(model_name)

            all_combinations = list(combinations(all_models, 2))

            assert len(all_combinations) == len(all_models) * (len(all_models) - 1) / 2

            for combination in all_combinations:
                response1 = responses[combination[0]]
                rating1 = annotations[combination[0]]
                response2 = responses[combination[1]]
                rating2 = annotations[combination[1]]

                if rating1 == rating2:
                    continue

                if rating1 > rating2:
                    chosen_message = [
                        {"content": prompt, "role": "user"},
                        {"content": response1, "role": "assistant"},
                    ]
                    rejected_message = [
                        {"content": prompt, "role": "user"},
                        {"content": response2, "role": "assistant"},
                    ]
                    chosen_rating = rating1
                    rejected_rating = rating2

                elif rating1 < rating2:
                    chosen_message = [
                        {"content": prompt, "role": "user"},
                        {"content": response2, "role": "assistant"},
                    ]
                    rejected_message = [
                        {"content": prompt, "role": "user"},
                        {"content": response1, "role": "assistant"},
                    ]
                    chosen_rating = rating2
                    rejected_rating = rating1
                else:
                    print("error")

                row_data.append({"rejected": rejected_message, "chosen": chosen_message,
                                 "rejected_score": rejected_rating, "chosen_score": chosen_rating})
        except (KeyError, NameError, TypeError) as exc:  # TypeError: a NULL list or rating (--bad-rate)
            yield [], {"row": i, "error": type(exc).__name__}
            continue
        yield row_data, None


# ======================================================================================
# the datasets
# ======================================================================================
def generate_code_ultrafeedback(run: GenerationRun, n_rows: int, manifest: dict) -> None:
    """Write the coseal rows and RLHFlow's pairs made from them (the wanted ones of the two);
    note the planted quirks and the script's skipped rows in ``manifest``.

    The rows are built a chunk at a time; each chunk is written, counted and run through the
    script (whose state carries over from row to row) before the next one is built, and the
    pairs are written whenever a chunk's worth of them has come together."""
    code, standard = (contract.DATASETS_BY_KEY[k] for k in ("code_ultrafeedback", "code_ultrafeedback_standard"))
    code_writer = ShardedWriter(run.out_dir, code, n_rows, run.formats[code.key]) if code.key in run.wanted else None
    pairs_writer = (ShardedWriter(run.out_dir, standard, None, run.formats[standard.key])
                    if standard.key in run.wanted else None)
    stats: dict[str, Any] = {}
    missing_annotation: list[int] = []  # rows planted with 3 annotations (0-based, file order)
    repeated: list[int] = []  # rows that repeat the row before them (0-based, file order)
    last: list[dict | None] = [None]  # the last row of the chunk before
    cases = run.contamination.cases(code.key) if run.contamination is not None else []
    placed: list[tuple[int, contamination.Case]] = []
    pii_slots = run.pii.slots(code.key) if run.pii is not None else []
    pii_placed: list[tuple[int, int]] = []  # (row, index in pii_slots)

    def rows() -> Iterator[dict]:
        first = 0
        for chunk in code_row_chunks(run.bank, run.seed, n_rows, run.text_factor, write_chunk_rows(code.key),
                                     cases, placed, [run.pii.cases[c].prompt for c in pii_slots], pii_placed):
            for name, count in _stats(chunk).items():
                stats[name] = stats.get(name, 0) + count
            missing_annotation.extend(first + i for i, row in enumerate(chunk)
                                      if 0 < len(row["annotations"]) < MODELS_PER_ROW)
            repeated.extend(first + i for i, row in enumerate(chunk) if row == (chunk[i - 1] if i else last[0]))
            last[0] = chunk[-1]
            first += len(chunk)
            if code_writer is not None:
                code_writer.write(pa.Table.from_pylist(chunk, schema=code.schema))
            yield from chunk

    pair_chunk_rows = write_chunk_rows(standard.key)
    pending: list[dict] = []  # pairs not written yet (fewer than pair_chunk_rows after each row)
    n_pairs = 0
    skipped: list[dict] = []
    try:
        for row_pairs, skip in script_pairs_by_row(progress_bar(rows(), n_rows, "code pairs", run.progress)):
            if skip is not None:
                skipped.append(skip)
                continue
            n_pairs += len(row_pairs)
            if pairs_writer is None:
                continue
            pending.extend(row_pairs)
            if len(pending) >= pair_chunk_rows:
                full = len(pending) // pair_chunk_rows * pair_chunk_rows
                pairs_writer.write(pa.Table.from_pylist(pending[:full], schema=standard.schema))
                del pending[:full]
        if pairs_writer is not None and pending:
            pairs_writer.write(pa.Table.from_pylist(pending, schema=standard.schema))
    finally:
        for writer in (code_writer, pairs_writer):
            if writer is not None:
                writer.close()
    if not n_rows:  # no chunk: the counts of an empty list of rows
        stats = _stats([])
    if code_writer is not None:
        code_writer.finish()
        record_dataset(manifest, code.key, code_writer, n_rows)
        for row, case in placed:
            contamination.record(manifest, code.key, code.hub_id, *code_writer.locate(row), case)
        for row, k in pii_placed:
            file, file_row = code_writer.locate(row)
            run.pii.place(code.key, code.hub_id, file, [pii_slots[k]], [file_row])
    if pairs_writer is not None:
        pairs_writer.finish()
        record_dataset(manifest, standard.key, pairs_writer, n_pairs)
    stats["rows_missing_annotation"] = missing_annotation
    stats["rows_repeated"] = repeated
    stats["script_rows_skipped"] = skipped
    stats["script_pairs"] = n_pairs
    manifest["code_ultrafeedback_planted"] = stats
