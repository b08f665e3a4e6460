"""Stand-in of openbmb/UltraFeedback (rated_completions): one JSON Lines file per source at the root
of the repo, a row per instruction with its completions, each with four aspect annotations
(string ratings "1".."5", "N/A" in honesty and instruction_following, a few invalid ones) and the
critique's overall_score (with the upstream bug: 10 for a bad response). The completions are built
with the helpers of :mod:`.ultrafeedback` (argilla's curation is made from this dataset).

Every row without a planted quirk has a completion rated strictly below its best one (so
best_vs_lower finds a pair); planted: rows with no completions, rows whose completions all tie,
rows with one unrated completion (every rating "N/A"), exact copies of an earlier row
(``duplicate_row`` in the manifest)."""

from __future__ import annotations

from pathlib import PurePosixPath

import numpy as np
import pyarrow as pa

from preftools.generate.common import GenerationRun, rng_for, segments, take_strings
from preftools.generate.extra_common import (
    CHUNK_ROWS,
    DUPLICATE,
    StandIn,
    apply_plan,
    card,
    instructions,
    plan_quirks,
    record_planted,
    write_stand_in,
)
from preftools.generate.ultrafeedback import (
    BUG_RATE,
    MODELS_PER_ROW,
    NA_CODE,
    INVALID_CODE,
    QUALITY_P,
    UF_MODELS,
    UF_PRINCIPLES,
    UF_PRINCIPLES_P,
    UF_SOURCE_P,
    UF_SOURCES,
    UF_SYSTEM_PROMPTS,
    CompletionRatings,
    _annotations,
    _critiques,
    _mean_of_valid,
    _overall_scores,
    _rating_codes,
)
from preftools.inputs import contract

OPENBMB = StandIn(
    "openbmb_ultrafeedback", "openbmb/UltraFeedback",
    files=(("evol_instruct.jsonl", 10_000), ("false_qa.jsonl", 2_339), ("flan.jsonl", 20_939),
           ("sharegpt.jsonl", 19_949), ("truthful_qa.jsonl", 811), ("ultrachat.jsonl", 9_929)),
    entry_files=("evol_instruct.jsonl", "false_qa.jsonl", "flan.jsonl", "sharegpt.jsonl", "truthful_qa.jsonl",
                 "ultrachat.jsonl"),
    # as upstream: no `configs:`; the Hub's default patterns read every file as split train
    card=card("UltraFeedback", "mit", "A generated stand-in (preftools.generate) in the layout and types of the "
              "Hub dataset: one JSON Lines file per source.", language=["en"], task_categories=["text-generation"]),
)
OPENBMB_COMPLETION = pa.struct([
    ("annotations", contract.ULTRAFEEDBACK_ANNOTATIONS), ("critique", pa.string()),
    ("custom_system_prompt", pa.string()), ("fine-grained_score", pa.float64()), ("model", pa.string()),
    ("overall_score", pa.float64()), ("principle", pa.string()), ("response", pa.string()),
])
OPENBMB_SCHEMA = pa.schema([
    ("source", pa.string()), ("instruction", pa.string()), ("models", pa.list_(pa.string())),
    ("completions", pa.list_(OPENBMB_COMPLETION)), ("correct_answers", pa.list_(pa.string())),
    ("incorrect_answers", pa.list_(pa.string())),
])
QUIRKS = {"empty_completions": 0.0005, "tied_completions": 0.0005, "unrated_completion": 0.0005, DUPLICATE: 0.0005}
FLAN_SOURCES = tuple(s for s in UF_SOURCES if s.startswith("flan_v2"))  # the sources of flan.jsonl
ALL_RATINGS = 4  # the aspects of a completion


class _Stats:
    def __init__(self) -> None:
        self.completions = self.rating_na = self.rating_invalid = 0


def _sources(rng: np.random.Generator, path: str, n: int) -> np.ndarray:
    """Each row's source (index into UF_SOURCES): the file's, or for flan.jsonl one of the FLAN parts."""
    stem = PurePosixPath(path).name.split(".")[0]
    if stem != "flan":
        return np.full(n, UF_SOURCES.index(stem))
    share = np.array([UF_SOURCE_P[UF_SOURCES.index(s)] for s in FLAN_SOURCES])
    return np.array([UF_SOURCES.index(s) for s in FLAN_SOURCES])[rng.choice(len(FLAN_SOURCES), n, p=share / share.sum())]


def _ratings(rng: np.random.Generator, layout, tied: np.ndarray, unrated: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rating codes (completions x 4), is_bug): UltraFeedback's ratings, the planted ties and unrated
    completions, and every other row given a completion rated below its best."""
    n = layout.total
    quality = rng.choice(5, n, p=list(QUALITY_P)) + 1
    is_bug = rng.random(n) < BUG_RATE
    quality = np.where(is_bug, rng.integers(1, 3, n), quality)
    delta = rng.choice(np.array([-1, 0, 1]), (n, ALL_RATINGS), p=[0.1, 0.8, 0.1])
    ratings = np.clip(quality[:, None] + delta, 1, 5)
    codes = _rating_codes(rng, ratings)
    first = layout.offsets[:-1]
    for row in tied:
        codes[first[row]: first[row] + MODELS_PER_ROW] = 3  # every rating "4"
    unrated_position = rng.integers(0, MODELS_PER_ROW, len(unrated))
    codes[first[unrated] + unrated_position] = NA_CODE

    # a row (with completions, no planted tie) whose completions all equal its best: rate one lower
    rows = len(first)
    rating = np.full((rows, MODELS_PER_ROW), -np.inf)
    mean = _mean_of_valid(codes)
    rating[layout.owner, layout.position] = np.where(np.isnan(mean), -np.inf, mean)
    best = rating.max(axis=1)
    has_lower = (rating < best[:, None]).any(axis=1)
    with_four = (layout.offsets[1:] - first) == MODELS_PER_ROW
    fix = with_four & ~np.isin(np.arange(rows), tied) & (~has_lower | (best == -np.inf))
    raise_first = fix & (best <= 1)  # all unrated or all "1": the first completion all "5"
    codes[first[raise_first]] = 4
    lower_last = fix & ~raise_first  # the last completion all "1"
    codes[first[lower_last] + MODELS_PER_ROW - 1] = 0
    return codes, is_bug


def _rows(run: GenerationRun, rng: np.random.Generator, path: str, n: int, empty: np.ndarray, tied: np.ndarray,
          unrated: np.ndarray, stats: _Stats) -> pa.Table:
    bank, factor = run.bank, run.text_factor
    source = _sources(rng, path, n)
    instruction = instructions(rng, bank, source, factor)
    models_of_row = np.argsort(rng.random((n, len(UF_MODELS))), axis=1)[:, :MODELS_PER_ROW]
    counts = np.full(n, MODELS_PER_ROW)
    counts[empty] = 0
    layout = segments(counts)
    codes, is_bug = _ratings(rng, layout, tied, unrated)
    mean = _mean_of_valid(codes)
    overall = _overall_scores(rng, mean, is_bug)
    _, critique = _critiques(rng, bank, CompletionRatings(is_bug, codes, mean, mean, overall), factor)
    n_completions = layout.total
    completions = pa.StructArray.from_arrays([
        _annotations(rng, bank, codes, factor),
        critique,
        take_strings(UF_SYSTEM_PROMPTS, rng.integers(0, len(UF_SYSTEM_PROMPTS), n_completions)),
        pa.array(mean, pa.float64(), from_pandas=True),
        take_strings(UF_MODELS, models_of_row[layout.owner, layout.position]),
        pa.array(overall, pa.float64()),
        take_strings(UF_PRINCIPLES, rng.choice(len(UF_PRINCIPLES), n_completions, p=UF_PRINCIPLES_P)),
        bank.long_text(rng, n_completions, 12, 22, factor),
    ], fields=list(OPENBMB_COMPLETION))

    def lists(values: pa.Array, per_row: np.ndarray, value_type) -> pa.ListArray:
        offsets = np.zeros(len(per_row) + 1, np.int32)
        np.cumsum(per_row, out=offsets[1:])
        return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values, type=pa.list_(value_type))

    is_truthful_qa = source == UF_SOURCES.index("truthful_qa")
    n_correct = np.where(is_truthful_qa, rng.integers(1, 4, n), 0)
    n_incorrect = np.where(is_truthful_qa, rng.integers(1, 4, n), 0)
    stats.completions += n_completions
    stats.rating_na += int((codes == NA_CODE).sum())
    stats.rating_invalid += int((codes >= INVALID_CODE).sum())
    return pa.Table.from_arrays([
        take_strings(UF_SOURCES, source), instruction,
        lists(take_strings(UF_MODELS, models_of_row.ravel()), np.full(n, MODELS_PER_ROW), pa.string()),
        lists(completions, counts, OPENBMB_COMPLETION),
        lists(bank.phrases(rng, int(n_correct.sum()), 2, 8), n_correct, pa.string()),
        lists(bank.phrases(rng, int(n_incorrect.sum()), 2, 8), n_incorrect, pa.string()),
    ], schema=OPENBMB_SCHEMA)


def generate_openbmb(run: GenerationRun, scale: float, manifest: dict) -> None:
    rows = OPENBMB.rows(scale)
    starts = dict(zip(rows, np.cumsum([0, *rows.values()])[:-1].tolist()))  # first global row of each file
    chunk_of = np.concatenate([i * 1_000_000 + np.arange(n) // CHUNK_ROWS for i, n in enumerate(rows.values())])
    plan = plan_quirks(rng_for(run.seed, "extra", "openbmb", "plan"), sum(rows.values()), QUIRKS, chunk_of=chunk_of)
    stats = _Stats()

    def tables(path: str, index: int, first: int, count: int) -> pa.Table:
        start = starts[path] + first
        positions = {quirk: np.array([p for p, _ in plan.in_chunk(quirk, start, count)], np.int64)
                     for quirk in ("empty_completions", "tied_completions", "unrated_completion")}
        table = _rows(run, rng_for(run.seed, "extra", "openbmb", path, index), path, count,
                      positions["empty_completions"], positions["tied_completions"], positions["unrated_completion"],
                      stats)
        return apply_plan(table, start, plan, {})

    write_stand_in(run, scale, OPENBMB, OPENBMB_SCHEMA, tables, manifest, True)

    def file_row(row: int) -> list:
        path = next(p for p in reversed(list(rows)) if starts[p] <= row)
        return [path, int(row - starts[path])]

    # (a copied row is a duplicate pair only when the seeded draw picks the same rejected completion)
    names = {DUPLICATE: "duplicate_row"}
    record_planted(manifest, OPENBMB.key,
                   {names.get(quirk, quirk): [file_row(r) for r in found] for quirk, found in plan.rows.items()},
                   completions=stats.completions, rating_na=stats.rating_na, rating_invalid=stats.rating_invalid)
