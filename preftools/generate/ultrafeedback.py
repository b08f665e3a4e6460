"""UltraFeedback (argilla/ultrafeedback-binarized-curation): vocabularies, the plan of the
planted quirks, and the generator, which builds the rows chunk by chunk (each chunk with its
own random stream) and streams them to the Parquet files."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from preftools.generate import contamination
from preftools.generate.common import (
    RATING_STR,
    GenerationRun,
    Segments,
    TextBank,
    concat,
    n_planted,
    prefixed_by_source,
    progress_bar,
    replace_at,
    rng_for,
    segments,
    take_strings,
)
from preftools.generate.writer import ShardedWriter, record_dataset
from preftools.inputs import contract

CHUNK_ROWS = 8000
MODELS_PER_ROW = 4
ASPECTS = ("helpfulness", "honesty", "instruction_following", "truthfulness")

# --------------------------------------------------------------------------------------
# vocabularies
# --------------------------------------------------------------------------------------
# The sources in the order their blocks of rows come in the file (upstream, the rows are grouped
# by source, evol_instruct first; the card (seeds/000) lists no sources, so the order of the
# other blocks is this generator's), and their shares of the rows. flan_v2_cot's 4.7 % is
# upstream's; the others are estimates (sharegpt the largest pool, evol_instruct and ultrachat
# about half of it, the FLAN parts together about a third of the rows).
UF_SOURCES = (
    "evol_instruct", "false_qa", "flan_v2_cot", "sharegpt", "ultrachat", "truthful_qa",
    "flan_v2_niv2", "flan_v2_p3", "flan_v2_flan2021",
)
UF_SOURCE_P = (0.156, 0.037, 0.047, 0.312, 0.156, 0.013, 0.16, 0.05, 0.069)
UF_MODELS = (
    "gpt-4", "gpt-3.5-turbo", "llama-2-70b-chat", "llama-2-13b-chat", "llama-2-7b-chat",
    "wizardlm-70b", "wizardlm-13b", "wizardlm-7b", "vicuna-33b", "ultralm-65b", "ultralm-13b",
    "starchat", "mpt-30b-chat", "alpaca-7b", "pythia-12b", "falcon-40b-instruct", "bard",
)
UF_PRINCIPLES = ("helpfulness", "honesty", "truthfulness", "verbalized_calibration", "harmlessness")
UF_PRINCIPLES_P = (0.4, 0.15, 0.15, 0.2, 0.1)
UF_SYSTEM_PROMPTS = (
    "As an AI assistant, provide not just answers but also spark curiosity. Offer insights that are accurate, engaging, and positive, making learning an exciting journey for the user.",
    "You are an AI assistant. Your primary focus should be on the safety and wellness of the users. Never provide answers that could cause harm or damage to individuals, their property or the environment.",
    "As an AI assistant, it is crucial that you motivate users by providing them with meaningful and exciting content that is also helpful and informative.",
    "The assistant should express its confidence as a scalar at the end of the response. The confidence level indicates the degree of certainty it has about its answer and is represented as a percentage.",
    "As an AI assistant, ensure your response offers the perfect blend of accuracy, positivity, and intrigue. Strive to be educational while keeping the user engaged.",
    "You are an AI assistant that helps people find information. User will you give you a question. Your task is to answer as faithfully as you can.",
)
UF_INSTRUCTION_PREFIX = {
    "evol_instruct": ("Write a detailed guide that explains", "Can you describe how", "Using a table, compare"),
    "false_qa": ("Why does the", "How many legs does the", "When did the"),
    "flan_v2_cot": ("Question: Is the following sentence true? Options: yes or no. Let's think first.", "Reasoning and answer: consider the"),
    "sharegpt": ("I want you to act as a consultant and explain", "write me a short story about", "how can I set up"),
    "ultrachat": ("Can you summarize the main points about", "What are the benefits of", "Provide a list of"),
    "truthful_qa": ("What happens if you", "Is it true that the"),
    "flan_v2_niv2": ("Detailed Instructions: In this task, you are given a sentence. Classify", "Given the task definition and input, reply with output. Translate"),
    "flan_v2_p3": ("Answer the following question given this paragraph:", "Please answer the following question about this text:"),
    "flan_v2_flan2021": ("Generate a sentence that describes", "Summarize this article:"),
}
# Critique tone templates (first sentence of every critique) and their VADER compound
# scores (vaderSentiment 3.3.2).  "bug" = critique of a low-rated response whose
# critique score 1 was stored as overall_score 10.
CRITIQUE_TEMPLATES = {
    "bug": (
        "The response is incorrect and misleading. It fails to answer the question.",
        "The answer is wrong and confusing, and it fails to address the question.",
        "This response is poor: it contains serious errors and useless filler.",
        "The response is completely wrong, irrelevant and misleading.",
        "Terrible answer. The response is wrong, misleading and unhelpful.",
    ),
    "neg": (
        "The response has errors and misses key parts of the task.",
        "The answer is weak and partly incorrect.",
        "The response is unclear and contains a mistake.",
        "The response fails to follow the instructions.",
    ),
    "mid": (
        "The response is partially correct but lacks some detail.",
        "The answer is acceptable, though a few points are vague.",
        "The response addresses the task with minor issues.",
        "The answer covers the basics reasonably.",
    ),
    "pos": (
        "The response is accurate, clear and helpful.",
        "Excellent answer: correct, well organized and useful.",
        "The response is thorough, precise and easy to follow.",
        "Great response that fully satisfies the instruction.",
    ),
}
CRITIQUE_TEMPLATE_COMPOUND = {
    "bug": (-0.6705, -0.7783, -0.8225, -0.7264, -0.836),
    "neg": (-0.5106, -0.4404, -0.5267, -0.4215),
    "mid": (0.0, 0.2263, 0.0, 0.0),
    "pos": (0.6597, 0.8271, 0.4404, 0.8016),
}
TONES = ("bug", "neg", "mid", "pos")
CRITIQUE_FLAT = tuple(t for tone in TONES for t in CRITIQUE_TEMPLATES[tone])
CRITIQUE_FLAT_COMPOUND = np.array([v for tone in TONES for v in CRITIQUE_TEMPLATE_COMPOUND[tone]])
# position in CRITIQUE_FLAT of each tone's first template, and the number of its templates
TONE_FIRST_TEMPLATE = np.array([sum(len(CRITIQUE_TEMPLATES[t]) for t in TONES[:i]) for i in range(len(TONES))])
TONE_N_TEMPLATES = np.array([len(CRITIQUE_TEMPLATES[t]) for t in TONES])

RATIONALE_BY_RATING = (
    "The text does not meet the requirements.",  # 1
    "The text addresses only one aspect of the task.",  # 2
    "The text partially complies with the instruction.",  # 3
    "The text almost fully aligns with the instruction.",  # 4
    "The text is comprehensive and fully aligned with the instruction.",  # 5
)
RATIONALE_NA = "The text is not applicable for this aspect."
HELPFULNESS_TYPES = (["1", "2", "3"], ["1", "2"], ["1"], ["2", "3"], ["1", "3"], [], ["2"], ["0"])
HELPFULNESS_TYPES_P = (0.42, 0.22, 0.12, 0.08, 0.06, 0.05, 0.03, 0.02)
TRUTHFULNESS_TYPES = (["0"], ["1"], ["2"], ["3"], ["1", "2"], [], ["1", "3"])
TRUTHFULNESS_TYPES_P = (0.55, 0.15, 0.1, 0.08, 0.06, 0.04, 0.02)
INVALID_RATINGS = ("0", "10", "", None, "five")

# Rating codes: 0..4 stand for "1".."5", NA_CODE for "N/A", INVALID_CODE + k for INVALID_RATINGS[k].
NA_CODE = 5
INVALID_CODE = 6
RATING_OPTIONS = list(RATING_STR) + ["N/A"] + list(INVALID_RATINGS)
QUALITY_P = (0.12, 0.16, 0.24, 0.28, 0.20)  # of the true quality 1..5 of a response
BUG_RATE = 0.08  # share of completions hit by the overall_score bug
# The revisions of the UltraFeedback data: as first published, or with openbmb's overall_score fix
# (overall_score_fix); `python -m preftools.generate --ultrafeedback-revision fixed`.
ULTRAFEEDBACK_REVISIONS = ("original", "fixed")
HONESTY_NA_RATE = 0.10
INSTRUCTION_FOLLOWING_NA_RATE = 0.02
INVALID_RATING_RATE = 0.002

# Planted quirks: (plan field, share of rows), drawn in this order from one permutation.
PLANTED_RATES = (
    ("empty_completions", 0.0005),
    ("one_completion", 0.0005),
    ("three_completions", 0.002),
    ("wrong_pick", 0.01),
    ("average_rating_mismatch", 0.01),
    ("duplicate_instruction", 0.0005),
    ("duplicate_row", 0.0005),
)
# The published pick columns a planted wrong pick breaks, in turn.
WRONG_PICK_CYCLE = ("best_rated_model", "best_rated_model", "best_overall_model", "flag")


# ======================================================================================
# the plan of planted quirks (global, over all chunks)
# ======================================================================================
@dataclass(frozen=True)
class UltraFeedbackPlan:
    """Row numbers (sorted, 0-based, disjoint) of each planted UltraFeedback quirk."""

    empty_completions: np.ndarray
    one_completion: np.ndarray
    three_completions: np.ndarray
    wrong_pick: np.ndarray
    average_rating_mismatch: np.ndarray
    duplicate_instruction: np.ndarray  # rows whose instruction is a copy ...
    duplicate_instruction_source: np.ndarray  # ... of these rows (same chunk, no quirk)
    duplicate_row: np.ndarray  # rows that are a byte-identical copy (the Hub data repeats rows) ...
    duplicate_row_source: np.ndarray  # ... of these rows (same chunk, no quirk)
    is_planted: np.ndarray  # bool per row: in one of the sets above
    completions_per_row: np.ndarray
    source_index: np.ndarray  # per row, into UF_SOURCES: one block of rows per source, in order


def plan_ultrafeedback(n_rows: int, seed: int) -> UltraFeedbackPlan:
    rng = rng_for(seed, "uf-plan")
    permutation = rng.permutation(n_rows)
    planted: dict[str, np.ndarray] = {}
    at = 0
    for name, rate in PLANTED_RATES:
        size = n_planted(n_rows, rate)
        planted[name] = np.sort(permutation[at: at + size])
        at += size
    is_planted = np.zeros(n_rows, bool)
    for rows in planted.values():
        is_planted[rows] = True
    completions_per_row = np.full(n_rows, MODELS_PER_ROW, np.int64)
    completions_per_row[planted["empty_completions"]] = 0
    completions_per_row[planted["one_completion"]] = 1
    completions_per_row[planted["three_completions"]] = 3
    return UltraFeedbackPlan(
        **planted,
        duplicate_instruction_source=_duplicate_sources(planted["duplicate_instruction"], is_planted),
        duplicate_row_source=_duplicate_sources(planted["duplicate_row"], is_planted),
        is_planted=is_planted,
        completions_per_row=completions_per_row,
        source_index=source_blocks(n_rows),
    )


def source_blocks(n_rows: int) -> np.ndarray:
    """Each row's source: the sources of UF_SOURCES one block after the other, each block
    ``UF_SOURCE_P`` of the rows (rounded by largest remainder, so the blocks add up to n_rows)."""
    share = np.array(UF_SOURCE_P) / sum(UF_SOURCE_P) * n_rows
    counts = np.floor(share).astype(np.int64)
    remainder_order = np.argsort(-(share - counts), kind="stable")
    counts[remainder_order[: n_rows - counts.sum()]] += 1
    return np.repeat(np.arange(len(UF_SOURCES)), counts)


def _duplicate_sources(duplicates: np.ndarray, is_planted: np.ndarray) -> np.ndarray:
    """For each planted duplicate row, the nearest earlier row of the same chunk without a
    quirk (the nearest later one when there is none) that it copies (its instruction, or all of it)."""
    sources = []
    for row in duplicates:
        chunk = row // CHUNK_ROWS
        source = row - 1
        while source >= 0 and (is_planted[source] or source // CHUNK_ROWS != chunk):
            source -= 1
        if source < 0:
            source = row + 1
            while is_planted[source] or source // CHUNK_ROWS != chunk:
                source += 1
        sources.append(source)
    return np.array(sources, np.int64)


def rows_for_rever_pairs(n_links: int, plan: UltraFeedbackPlan, seed: int) -> np.ndarray:
    """UltraFeedback rows that ReVeR pairs are built from (rows without a quirk only)."""
    rng = rng_for(seed, "uf-rever-rows")
    candidates = np.flatnonzero(~plan.is_planted)
    candidates = candidates[~np.isin(candidates, plan.duplicate_instruction_source)]
    candidates = candidates[~np.isin(candidates, plan.duplicate_row_source)]
    n_links = min(n_links, len(candidates))
    return np.sort(rng.choice(candidates, n_links, replace=False))


# ======================================================================================
# one chunk of rows
# ======================================================================================
@dataclass(frozen=True)
class UltraFeedbackLink:
    """An UltraFeedback row a ReVeR pair is built from."""

    row: int
    instruction: str
    responses: list[str]
    average_rating: list[float]
    overall_score: list[float]


@dataclass
class UltraFeedbackStats:
    """Counts of planted values, summed over the chunks (manifest ``ultrafeedback_planted``)."""

    completions: int = 0
    bug_overall_10_low_rating: int = 0
    rating_na: int = 0
    rating_invalid: int = 0

    def add(self, other: UltraFeedbackStats) -> None:
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)


@dataclass(frozen=True)
class UltraFeedbackChunk:
    table: pa.Table
    stats: UltraFeedbackStats
    wrong_picks: list[dict]  # {"row", "column"} of each planted wrong pick
    links: list[UltraFeedbackLink]


@dataclass(frozen=True)
class ChunkRows:
    """Where a chunk sits: its rows ``first .. first + count - 1`` and their completions."""

    first: int
    count: int
    completions: Segments  # owner = row within the chunk

    def planted(self, rows: np.ndarray) -> np.ndarray:
        """The rows of a global row list that fall into this chunk, as positions within it."""
        return rows[(rows >= self.first) & (rows < self.first + self.count)] - self.first


@dataclass(frozen=True)
class CompletionRatings:
    """Per completion: the four aspect ratings and the scores derived from them."""

    is_bug: np.ndarray  # hit by the overall_score bug (critique score 1 stored as 10)
    codes: np.ndarray  # (completions, 4) rating codes, see NA_CODE / INVALID_CODE
    average_true: np.ndarray  # mean of the valid ratings (NaN when none)
    average_published: np.ndarray  # average_rating as published (a few disagree)
    overall_score: np.ndarray


@dataclass(frozen=True)
class Pick:
    """A published pick per row: the best completion and a random other one."""

    best: np.ndarray  # position within the row
    alternative: np.ndarray
    has_alternative: np.ndarray


def generate_chunk(bank: TextBank, seed: int, chunk_index: int, first_row: int, n_rows: int,
                   plan: UltraFeedbackPlan, text_factor: float, link_rows: np.ndarray,
                   revision: str = "original") -> UltraFeedbackChunk:
    """Rows ``first_row .. first_row + n_rows - 1``, from the chunk's own random stream; with
    ``revision`` "fixed", the overall_score fix applied (the critiques and every other draw as in
    the original, so the two revisions differ only by the fix and what it changes)."""
    rng = rng_for(seed, "uf", chunk_index)
    rows = ChunkRows(first_row, n_rows, segments(plan.completions_per_row[first_row: first_row + n_rows]))
    n_completions = rows.completions.total

    source_index, instruction = _instructions(rng, bank, rows, plan, text_factor)
    model_index = _completion_models(rng, rows)
    ratings = _ratings(rng, rows, plan)
    critique_template, critique = _critiques(rng, bank, ratings, text_factor)
    original = ratings
    if revision == "fixed":
        ratings = overall_score_fix(seed, chunk_index, ratings)
    annotations = _annotations(rng, bank, ratings.codes, text_factor)
    response = bank.long_text(rng, n_completions, 12, 22, text_factor)
    completions = pa.StructArray.from_arrays(
        [
            annotations,
            pa.array(ratings.average_published, pa.float64(), from_pandas=True),
            critique,
            take_strings(UF_SYSTEM_PROMPTS, rng.integers(0, len(UF_SYSTEM_PROMPTS), n_completions)),
            take_strings(UF_MODELS, model_index),
            pa.array(ratings.overall_score, pa.float64()),
            take_strings(UF_PRINCIPLES, rng.choice(len(UF_PRINCIPLES), n_completions, p=UF_PRINCIPLES_P)),
            response,
        ],
        fields=list(contract.ULTRAFEEDBACK_COMPLETION),
    )
    table, wrong_picks = _published_table(rng, rows, plan, source_index, instruction, completions,
                                          model_index, ratings, critique_template)
    # the duplicate rows, copied whole from their sources (after every draw: the other rows stay as they are)
    row_take, completion_take = np.arange(n_rows), np.arange(n_completions)
    offsets = rows.completions.offsets
    in_chunk = (plan.duplicate_row >= first_row) & (plan.duplicate_row < first_row + n_rows)
    for copy, source in zip(plan.duplicate_row[in_chunk] - first_row, plan.duplicate_row_source[in_chunk] - first_row):
        row_take[copy] = source
        completion_take[offsets[copy]: offsets[copy + 1]] = np.arange(offsets[source], offsets[source + 1])
    table = table.take(pa.array(row_take))
    stats = UltraFeedbackStats(
        completions=n_completions,
        bug_overall_10_low_rating=int((ratings.is_bug & (ratings.overall_score == 10.0)
                                       & (ratings.average_true <= 2))[completion_take].sum()),
        rating_na=int((ratings.codes[completion_take] == NA_CODE).sum()),
        rating_invalid=int((ratings.codes[completion_take] >= INVALID_CODE).sum()),
    )
    # ReVeR's pairs are built from the original scores: the fix changes UltraFeedback alone
    links = _links(rows, rows.planted(link_rows), instruction, response, original)
    return UltraFeedbackChunk(table, stats, wrong_picks, links)


def _instructions(rng, bank: TextBank, rows: ChunkRows, plan: UltraFeedbackPlan,
                  text_factor: float) -> tuple[np.ndarray, pa.Array]:
    """Each row's source (from the plan's source blocks) and instruction (a source-specific
    prefix and a lowercase sentence); the planted duplicates copy their source row's instruction."""
    n = rows.count
    source_index = plan.source_index[rows.first: rows.first + n]
    prefix = prefixed_by_source(rng, source_index, UF_SOURCES, UF_INSTRUCTION_PREFIX)
    body = bank.sentences(rng, n, 1, 4, text_factor)
    instruction = concat(prefix, " ", pc.utf8_lower(body))
    # both rows of a planted duplicate are in this chunk
    duplicates = plan.duplicate_instruction
    in_chunk = (duplicates >= rows.first) & (duplicates < rows.first + n)
    if in_chunk.any():
        take = np.arange(n)
        take[duplicates[in_chunk] - rows.first] = plan.duplicate_instruction_source[in_chunk] - rows.first
        instruction = pc.take(instruction, pa.array(take))
    return source_index, instruction


def _completion_models(rng, rows: ChunkRows) -> np.ndarray:
    """The model of each completion: four distinct models per row."""
    random_keys = rng.random((rows.count, len(UF_MODELS)))
    models_of_row = np.argsort(random_keys, axis=1)[:, :MODELS_PER_ROW]
    return models_of_row[rows.completions.owner, rows.completions.position]


def _ratings(rng, rows: ChunkRows, plan: UltraFeedbackPlan) -> CompletionRatings:
    n = rows.completions.total
    quality = rng.choice(5, n, p=list(QUALITY_P)) + 1
    is_bug = rng.random(n) < BUG_RATE
    quality = np.where(is_bug, rng.integers(1, 3, n), quality)
    delta = rng.choice(np.array([-1, 0, 1]), (n, 4), p=[0.1, 0.8, 0.1])
    ratings = np.clip(quality[:, None] + delta, 1, 5)
    ratings = np.where(is_bug[:, None], np.clip(quality[:, None] + np.minimum(delta, 0), 1, 2), ratings)
    codes = _rating_codes(rng, ratings)
    average_true = _mean_of_valid(codes)
    average_published = _published_averages(rng, rows, plan, average_true, is_bug)
    return CompletionRatings(is_bug, codes, average_true, average_published,
                             _overall_scores(rng, average_true, is_bug))


def _rating_codes(rng, ratings: np.ndarray) -> np.ndarray:
    """Ratings 1..5 as codes, with "N/A" honesty / instruction-following ratings and a few invalid ones."""
    n = len(ratings)
    codes = ratings - 1
    honesty_na = rng.random(n) < HONESTY_NA_RATE
    instruction_following_na = rng.random(n) < INSTRUCTION_FOLLOWING_NA_RATE
    codes[honesty_na, ASPECTS.index("honesty")] = NA_CODE
    codes[instruction_following_na, ASPECTS.index("instruction_following")] = NA_CODE
    invalid = rng.random(n) < INVALID_RATING_RATE
    invalid_aspect = rng.integers(0, 4, n)
    invalid_code = INVALID_CODE + rng.integers(0, len(INVALID_RATINGS), n)
    codes[invalid, invalid_aspect[invalid]] = invalid_code[invalid]
    return codes


def _mean_of_valid(codes: np.ndarray) -> np.ndarray:
    valid = codes < NA_CODE
    values = np.where(valid, codes + 1, 0).astype(np.float64)
    n_valid = valid.sum(1)
    return np.where(n_valid > 0, values.sum(1) / np.maximum(n_valid, 1), np.nan)


def _published_averages(rng, rows: ChunkRows, plan: UltraFeedbackPlan, average_true: np.ndarray,
                        is_bug: np.ndarray) -> np.ndarray:
    """average_rating as published: on the planted mismatch rows one completion (not a bug one
    where possible) is off by one."""
    published = average_true.copy()
    offsets = rows.completions.offsets
    for row in rows.planted(plan.average_rating_mismatch):
        candidates = np.arange(offsets[row], offsets[row + 1])
        candidates = candidates[~is_bug[candidates]] if (~is_bug[candidates]).any() else candidates
        if len(candidates):
            c = candidates[rng.integers(0, len(candidates))]
            published[c] = average_true[c] - 1.0 if average_true[c] > 3 else average_true[c] + 1.0
    return published


def _overall_scores(rng, average_true: np.ndarray, is_bug: np.ndarray) -> np.ndarray:
    """The critique score 1..10 in steps of 0.5, following the ratings; 10.0 for the bug."""
    noisy = 2.25 * average_true - 1.25 + rng.normal(0, 0.9, len(average_true))
    overall = np.clip(np.round(noisy * 2) / 2, 1.0, 10.0)
    overall = np.where(np.isnan(overall), 1.0, overall)
    return np.where(is_bug, 10.0, overall)


def overall_score_fix(seed: int, chunk_index: int, ratings: CompletionRatings) -> CompletionRatings:
    """openbmb's fix of overall_score (UltraFeedback, 2023-12): of the completions scored 10, those
    whose mean rating is <= 2 (the bug's critique score 1 stored as 10) get 1, those above 4 keep
    10, the rest are re-annotated: a new critique score drawn as for any other completion, from
    the chunk's own stream for the fix."""
    rng = rng_for(seed, "uf-overall-score-fix", chunk_index)
    mean, score = ratings.average_true, ratings.overall_score
    reannotated = _overall_scores(rng, mean, np.zeros(len(score), bool))
    ten = score == 10.0
    fixed = np.where(ten & (mean <= 2), 1.0, np.where(ten & (mean > 4), 10.0, np.where(ten, reannotated, score)))
    return replace(ratings, overall_score=fixed)


def _critiques(rng, bank: TextBank, ratings: CompletionRatings, text_factor: float) -> tuple[np.ndarray, pa.Array]:
    """Each critique's template (its tone follows the critique score; strongly negative for the
    bug) and its text: the template, then neutral filler."""
    n = len(ratings.overall_score)
    overall = ratings.overall_score
    tone = np.where(ratings.is_bug, 0, np.where(overall <= 4.0, 1, np.where(overall <= 6.5, 2, 3)))
    template = TONE_FIRST_TEMPLATE[tone] + (rng.integers(0, 1000, n) % TONE_N_TEMPLATES[tone])
    critique = concat(take_strings(CRITIQUE_FLAT, template), " ", bank.sentences(rng, n, 3, 6, text_factor))
    return template, critique


def _annotations(rng, bank: TextBank, codes: np.ndarray, text_factor: float) -> pa.StructArray:
    n = len(codes)
    fields = contract.ULTRAFEEDBACK_ANNOTATIONS

    def rating(aspect: int) -> pa.Array:
        return take_strings(RATING_OPTIONS, codes[:, aspect])

    def rationale_for_rating(aspect: int) -> pa.Array:
        template = np.where(codes[:, aspect] <= NA_CODE, codes[:, aspect], NA_CODE)
        return concat(take_strings(list(RATIONALE_BY_RATING) + [RATIONALE_NA], template), " ",
                      bank.sentences(rng, n, 1, 2, text_factor))

    def typed_aspect(aspect: int, types: pa.Array) -> pa.StructArray:
        rationale = bank.sentences(rng, n, 1, 2, text_factor)
        return pa.StructArray.from_arrays([rating(aspect), rationale, rationale_for_rating(aspect), types],
                                          fields=list(fields.field(ASPECTS[aspect]).type))

    def plain_aspect(aspect: int) -> pa.StructArray:
        return pa.StructArray.from_arrays([rating(aspect), rationale_for_rating(aspect)],
                                          fields=list(fields.field(ASPECTS[aspect]).type))

    helpfulness_types = pc.take(pa.array(HELPFULNESS_TYPES, pa.list_(pa.string())),
                                pa.array(rng.choice(len(HELPFULNESS_TYPES), n, p=HELPFULNESS_TYPES_P)))
    truthfulness_types = pc.take(pa.array(TRUTHFULNESS_TYPES, pa.list_(pa.string())),
                                 pa.array(rng.choice(len(TRUTHFULNESS_TYPES), n, p=TRUTHFULNESS_TYPES_P)))
    helpfulness = typed_aspect(0, helpfulness_types)
    honesty = plain_aspect(1)
    instruction_following = plain_aspect(2)
    truthfulness = typed_aspect(3, truthfulness_types)
    return pa.StructArray.from_arrays([helpfulness, honesty, instruction_following, truthfulness],
                                      fields=list(fields))


def _pick(rng, scores: np.ndarray, present: np.ndarray) -> Pick:
    """argilla's pick on ``scores`` (rows x 4, -inf where absent): the best (first on ties) and a
    random other completion, a lower-scored one where there is one."""
    rows = np.arange(len(scores))
    best = np.argmax(scores, axis=1)
    lower = present & (scores < scores[rows, best][:, None])
    other = present & (np.arange(4)[None, :] != best[:, None])
    eligible = np.where(lower.any(1)[:, None], lower, other)
    random_key = np.where(eligible, rng.random((len(scores), 4)), -1.0)
    return Pick(best, np.argmax(random_key, axis=1), eligible.any(1))


def _published_table(rng, rows: ChunkRows, plan: UltraFeedbackPlan, source_index: np.ndarray,
                     instruction: pa.Array, completions: pa.StructArray, model_index: np.ndarray,
                     ratings: CompletionRatings, critique_template: np.ndarray) -> tuple[pa.Table, list[dict]]:
    """The chunk's table: argilla's pick columns (computed from the published average_rating and
    overall_score, with the planted wrong picks) next to the completions."""
    n = rows.count
    n_completions = rows.completions.total
    owner, position, offsets = rows.completions.owner, rows.completions.position, rows.completions.offsets
    present = np.zeros((n, 4), bool)
    present[owner, position] = True
    rating_scores = np.full((n, 4), -np.inf)
    rating_scores[owner, position] = np.where(np.isnan(ratings.average_published), -np.inf,
                                              ratings.average_published)
    overall_scores = np.full((n, 4), -np.inf)
    overall_scores[owner, position] = ratings.overall_score
    has_completions = rows.completions.offsets[1:] > rows.completions.offsets[:-1]
    row_numbers = np.arange(n)

    by_rating = _pick(rng, rating_scores, present)
    by_overall = _pick(rng, overall_scores, present)

    def completion_of(position_in_row: np.ndarray, mask: np.ndarray) -> pa.Array:
        return pa.array(offsets[:-1] + position_in_row, pa.int64(), mask=~mask)

    def score_of(scores: np.ndarray, position_in_row: np.ndarray, mask: np.ndarray) -> pa.Array:
        value = scores[row_numbers, position_in_row]
        return pa.array(np.where(np.isfinite(value), value, 0.0), pa.float64(), mask=~(mask & np.isfinite(value)))

    def first_completion(position_in_row: np.ndarray) -> np.ndarray:
        return np.minimum(offsets[:-1] + position_in_row, max(n_completions - 1, 0))

    def model_of(pick: Pick) -> np.ndarray:
        return np.where(has_completions, model_index[first_completion(pick.best)] if n_completions else 0, -1)

    best_rated_model = model_of(by_rating)
    best_overall_model = model_of(by_overall)
    picks_differ = by_rating.best != by_overall.best
    wrong_picks = _plant_wrong_picks(rng, rows, plan, model_index, best_rated_model, best_overall_model,
                                     picks_differ)
    model_names = np.array(UF_MODELS + ("",), dtype=object)
    if n_completions:
        sentiment = CRITIQUE_FLAT_COMPOUND[critique_template[first_completion(by_overall.best)]]
    else:
        sentiment = np.zeros(n)
    columns = {
        "source": take_strings(UF_SOURCES, source_index),
        "instruction": instruction,
        "best_rated_is_different_from_best_overall": pa.array(picks_differ, pa.bool_(), mask=~has_completions),
        "best_overall_model": pa.array(model_names[best_overall_model], pa.string(), mask=~has_completions),
        "score_best_overall": score_of(overall_scores, by_overall.best, has_completions),
        "best_rated_model": pa.array(model_names[best_rated_model], pa.string(), mask=~has_completions),
        "score_best_rated": score_of(rating_scores, by_rating.best, has_completions),
        "best_overall_score_response": pc.take(completions, completion_of(by_overall.best, has_completions)),
        "random_response_for_best_overall": pc.take(
            completions, completion_of(by_overall.alternative, by_overall.has_alternative)),
        "best_rated_response": pc.take(completions, completion_of(by_rating.best, has_completions)),
        "random_response_for_best_rated": pc.take(
            completions, completion_of(by_rating.alternative, by_rating.has_alternative)),
        "score_random_response_for_best_overall": score_of(overall_scores, by_overall.alternative,
                                                           by_overall.has_alternative),
        "score_random_response_for_rated": score_of(rating_scores, by_rating.alternative, by_rating.has_alternative),
        "completions": pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), completions,
                                                type=contract.ULTRAFEEDBACK_SCHEMA.field("completions").type),
        "random_response_for_rated": score_of(rating_scores, by_rating.alternative, by_rating.has_alternative),
        "best_overall_score_response_critique_sentiment": pa.array(sentiment, pa.float64(), mask=~has_completions),
    }
    schema = contract.ULTRAFEEDBACK_SCHEMA
    return pa.Table.from_arrays([columns[f.name] for f in schema], schema=schema), wrong_picks


def _plant_wrong_picks(rng, rows: ChunkRows, plan: UltraFeedbackPlan, model_index: np.ndarray,
                       best_rated_model: np.ndarray, best_overall_model: np.ndarray,
                       picks_differ: np.ndarray) -> list[dict]:
    """Break a published pick column on each planted row (in place); the manifest records."""
    offsets = rows.completions.offsets
    records = []
    for i, row in enumerate(rows.planted(plan.wrong_pick)):
        column = WRONG_PICK_CYCLE[i % len(WRONG_PICK_CYCLE)]
        if offsets[row + 1] - offsets[row] < 2:
            column = "flag"
        if column == "flag":
            picks_differ[row] = not picks_differ[row]
            column = "best_rated_is_different_from_best_overall"
        else:
            models_of_row = model_index[offsets[row]: offsets[row + 1]]
            picked = best_rated_model if column == "best_rated_model" else best_overall_model
            others = models_of_row[models_of_row != picked[row]]
            picked[row] = others[rng.integers(0, len(others))]
        records.append({"row": int(rows.first + row), "column": column})
    return records


def _links(rows: ChunkRows, link_rows: np.ndarray, instruction: pa.Array, response: pa.Array,
           ratings: CompletionRatings) -> list[UltraFeedbackLink]:
    """The chunk's rows that ReVeR pairs are built from (``link_rows``: positions in the chunk)."""
    if not len(link_rows):
        return []
    offsets = rows.completions.offsets
    instructions = pc.take(instruction, pa.array(link_rows)).to_pylist()
    links = []
    for text, row in zip(instructions, link_rows):
        completions = np.arange(offsets[row], offsets[row + 1])
        links.append(UltraFeedbackLink(
            row=int(rows.first + row),
            instruction=text,
            responses=pc.take(response, pa.array(completions)).to_pylist(),
            average_rating=ratings.average_true[completions].tolist(),
            overall_score=ratings.overall_score[completions].tolist(),
        ))
    return links


# ======================================================================================
# planted contamination
# ======================================================================================
def forms_pair(completions: list[dict]) -> bool:
    """The warehouse pairs the row: every completion has a valid rating and no invalid one, and their
    mean ratings are not all equal (so the best rated has an alternate rated strictly lower)."""
    means = []
    for completion in completions:
        ratings = [aspect["Rating"] for aspect in completion["annotations"].values()]
        valid = [int(r) for r in ratings if r in RATING_STR]
        if not valid or any(r not in RATING_STR and r != "N/A" for r in ratings):
            return False
        means.append(sum(valid) / len(valid))
    return len(means) > 1 and max(means) > min(means)


class ContaminationPlanting:
    """The planted cases of :mod:`.contamination` in UltraFeedback's instructions. The cases of a
    source (target ``ultrafeedback/<source>``) take, in row order from a random row of the first half
    of the source's block, its rows with four completions and no planted quirk (neither copied nor
    copied from, no ReVeR pair built from them) that form a pair (:func:`forms_pair`); the
    TruthfulQA questions take such rows of the truthful_qa block from its first row on. Rows change
    after every random draw of their chunk, so the other rows (and ReVeR's pairs) stay as they are."""

    def __init__(self, run: GenerationRun, plan: UltraFeedbackPlan, link_rows: np.ndarray):
        self.free = (plan.completions_per_row == MODELS_PER_ROW) & ~plan.is_planted
        for rows in (plan.duplicate_instruction_source, plan.duplicate_row_source, link_rows):
            self.free[rows] = False
        self.source_index = plan.source_index
        self.queues: dict[int, list[contamination.Case]] = {}
        self.start: dict[int, int] = {}
        rng = rng_for(run.seed, "contamination", "ultrafeedback")
        for k, source in enumerate(UF_SOURCES):
            target = f"ultrafeedback/{source}"
            cases = run.contamination.cases(target) if run.contamination is not None else []
            rows = np.flatnonzero(self.free & (self.source_index == k))
            if not cases or not len(rows):
                continue
            self.queues[k] = cases
            first_half = 1 if target == contamination.TRUTHFUL_QA_SOURCE else (len(rows) + 1) // 2
            self.start[k] = int(rows[rng.integers(0, first_half)])
        self.placed: list[tuple[int, contamination.Case]] = []  # (row, case)

    def plant(self, table: pa.Table, first_row: int) -> pa.Table:
        """The chunk ``table`` (rows ``first_row ..``) with the cases its rows take."""
        edits: dict[int, str] = {}
        for k, queue in self.queues.items():
            at = np.arange(first_row, first_row + table.num_rows)
            for row in at[self.free[at] & (self.source_index[at] == k) & (at >= self.start[k])]:
                if not queue:
                    break
                if forms_pair(table.column("completions")[int(row - first_row)].as_py()):
                    case = queue.pop(0)
                    edits[int(row - first_row)] = case.text
                    self.placed.append((int(row), case))
        if not edits:
            return table
        column = table.schema.get_field_index("instruction")
        return table.set_column(column, table.schema.field(column),
                                replace_at(table.column(column).combine_chunks(), edits))


# ======================================================================================
# the dataset
# ======================================================================================
def generate_ultrafeedback(run: GenerationRun, n_rows: int, plan: UltraFeedbackPlan, link_rows: np.ndarray,
                           manifest: dict) -> list[UltraFeedbackLink]:
    """Generate the rows chunk by chunk, write them when the dataset is wanted, note the planted
    quirks in ``manifest``; the rows ReVeR pairs are built from."""
    key = "ultrafeedback"
    write = key in run.wanted
    writer = ShardedWriter(run.out_dir, contract.DATASETS_BY_KEY[key], n_rows, run.formats[key]) if write else None
    stats = UltraFeedbackStats()
    wrong_picks: list[dict] = []
    links: list[UltraFeedbackLink] = []
    planting = ContaminationPlanting(run, plan, link_rows)
    n_chunks = max(1, math.ceil(n_rows / CHUNK_ROWS))
    try:
        for chunk_index in progress_bar(range(n_chunks), n_chunks, key, run.progress):
            first_row = chunk_index * CHUNK_ROWS
            chunk = generate_chunk(run.bank, run.seed, chunk_index, first_row, min(CHUNK_ROWS, n_rows - first_row),
                                   plan, run.text_factor, link_rows, run.ultrafeedback_revision)
            links.extend(chunk.links)
            stats.add(chunk.stats)
            wrong_picks.extend(chunk.wrong_picks)
            if writer is not None:
                writer.write(planting.plant(chunk.table, first_row))
            del chunk
        if writer is not None:
            writer.finish()
    finally:
        if writer is not None:
            writer.close()
    if writer is not None:
        record_dataset(manifest, key, writer, n_rows)
        for row, case in planting.placed:
            contamination.record(manifest, key, writer.dataset.hub_id, *writer.locate(row), case)
    manifest["ultrafeedback_planted"] = {
        "revision": run.ultrafeedback_revision,
        **asdict(stats),
        "rows_empty_completions": plan.empty_completions.tolist(),
        "rows_one_completion": plan.one_completion.tolist(),
        "rows_three_completions": plan.three_completions.tolist(),
        "rows_average_rating_mismatch": plan.average_rating_mismatch.tolist(),
        "rows_wrong_pick": wrong_picks,
        "duplicate_instruction_pairs": [
            [int(source), int(copy)]
            for source, copy in zip(plan.duplicate_instruction_source, plan.duplicate_instruction)
        ],
        "duplicate_row_pairs": [
            [int(source), int(copy)] for source, copy in zip(plan.duplicate_row_source, plan.duplicate_row)
        ],
        "note": "row numbers are 0-based positions in the dataset (its files in order, counted across "
                "files); picks/scores are computed from "
                "the published average_rating and overall_score of each completion",
    }
    return links
