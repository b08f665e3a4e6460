"""Deterministic sample-data generator for the five raw preference datasets.

Writes Parquet files in the Hugging Face Hub layout that the warehouse reads from
``$RAW_DATA_DIR``::

    DIR/<org>/<dataset>/data/train-0000K-of-0000N.parquet
    DIR/_generator_manifest.json          (row counts, planted quirks, integrity breaks)

for every dataset of :data:`preftools.contract.DATASETS`, with exactly the schemas of
:mod:`preftools.contract`.  The data is synthetic but reproduces the quirks of the
real datasets (see the dataset cards) so that the dbt models and audits have
something to find:

* UltraFeedback (argilla/ultrafeedback-binarized-curation): "N/A" and invalid
  rating strings, the ``overall_score`` bug (critique score 1 stored as 10, with a
  clearly negative critique), ties, argilla's published pick columns (with ~1 % of
  rows deliberately wrong, and ~1 % of rows with a published ``average_rating``
  that disagrees with the annotations), empty / short ``completions`` lists and
  duplicated instructions.
* coseal/CodeUltraFeedback: shuffled annotation order, "N/A" ratings, rows whose
  last annotation is "N/A", empty annotation lists, a missing annotation, invalid
  ratings ("10", "0").
* RLHFlow/CodeUltraFeedback-standard: the output of the published processing
  script (dataset card 002) over the coseal rows, bugs included
  (:func:`published_script_pairs`).
* OpenRubrics ReVeR-Traces-Rubric / -Judge: rubric generation examples and judge
  trajectories (two per rubric), with tool calls in 58.9 % of trajectories, two
  verdict shapes, pairs built from the generated UltraFeedback rows, and planted
  integrity breaks listed in the manifest.

Same ``seed`` + ``scale`` + ``text_length`` => byte-identical files.

Usage::

    python -m preftools.generate --seed 42 --scale 0.01 --out /tmp/raw
    python -m preftools.generate --seed 42 --scale 1.0 --out /data/raw   # full size, ~2 GB

The bundled sample in ``sample_data/`` (the default ``RAW_DATA_DIR``) was made with::

    python -m preftools.generate --seed 42 --scale 0.01 --text-length 0.25 --out sample_data

Sentiment: ``best_overall_score_response_critique_sentiment`` is the VADER compound
score of the critique.  Every critique is one tone template sentence followed by
filler text made only of words that carry no VADER valence (and no boosters,
negations or "but"), so the compound score of the whole critique equals the score
of its template; the scores of the templates are stored in
:data:`CRITIQUE_TEMPLATE_COMPOUND` (computed with vaderSentiment 3.3.2) so the
generator does not need vaderSentiment at run time.  The tests check that VADER on
the full critique text reproduces the published value.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from itertools import combinations
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from preftools import contract as C

try:  # progress bars are optional
    from tqdm import tqdm as _tqdm
except ImportError:  # pragma: no cover
    _tqdm = None

GENERATOR_VERSION = "1.0"
MANIFEST_NAME = "_generator_manifest.json"

# Chunking / file layout (fixed, so that output bytes do not depend on anything but
# seed, scale and text_length).
CHUNK_ROWS = 8000
SHARD_ROWS = {
    "ultrafeedback": 3 * CHUNK_ROWS,  # 63,967 rows -> 3 files of ~230 MB
    "code_ultrafeedback": 100_000,
    "code_ultrafeedback_standard": 100_000,
    "rever_judge": 32_000,  # ~60,600 rows -> 2 files
    "rever_rubric": 100_000,
}
ROW_GROUP_ROWS = {
    "ultrafeedback": 1000,
    "code_ultrafeedback": 2000,
    "code_ultrafeedback_standard": 5000,
    "rever_judge": 4000,
    "rever_rubric": 5000,
}
COMPRESSION = "zstd"

# --------------------------------------------------------------------------------------
# Vocabulary.  None of these words has a VADER valence, none is a VADER booster or
# negation; that keeps the sentiment of critiques equal to that of their templates.
# --------------------------------------------------------------------------------------
WORDS = """
the of to for and in is that it as with was on be by this are from at or an which have has had
were been their its one all also can other into these some such than then them only over time
first new used two may after between many would each about there where system data model process
order part people water world area form point example result group method level state use work
table function file step line text field case type list set name code user page report section
term year class source rate size range test output input query index record factor weight length
unit signal layer node graph matrix vector sample label token format structure element feature
network service server client request response message channel stream buffer frame window column
row key map path route region city river mountain island coast village market street building house
room door floor wall garden tree plant seed leaf flower forest animal bird fish insect horse cattle
farm crop grain bread milk cheese salt sugar coffee tea wine paper book chapter letter word
paragraph note story history museum library school student teacher lesson course subject science
physics chemistry biology geology math algebra geometry angle circle square triangle surface volume
density temperature power force motion speed distance mass metal iron copper silver stone sand clay
glass cloth wool cotton silk color shape pattern design style technique approach procedure routine
schedule calendar month week day hour minute second morning evening night season summer winter
spring autumn weather cloud rain snow wind storm ocean lake pond bridge tunnel road railway station
airport harbor ship boat train truck car engine wheel motor pump valve pipe wire cable switch panel
screen keyboard device machine tool hammer knife spoon plate bowl cup bottle box bag basket shelf
drawer cabinet chair desk bed lamp mirror clock camera phone radio computer program variable
parameter constant operator expression statement loop branch condition array string integer float
object instance module package framework interface protocol header footer title caption figure
chart diagram summary outline draft version release update patch change merge folder directory
archive backup copy describe compare explain write provide include consider follow apply measure
calculate estimate convert translate summarize classify identify select arrange organize prepare
store load read parse render display print check review verify count sort filter split combine
reduce return call define declare assign compute generate collect gather build install configure
deploy run execute start open close move turn carry bring take make give show tell find keep hold
place put send receive pass enter walk travel visit meet plan cook bake boil mix pour fold wash dry
paint draw sing given specific general common simple basic main several various every same
different typical standard current previous next final initial average daily weekly annual local
national regional central northern southern eastern western upper inner outer small large long
short wide narrow high early late recent modern ancient physical chemical digital manual automatic
linear binary numeric textual visual written spoken formal technical practical often usually
typically generally mostly sometimes always later before during within across along around through
under above below among toward upon via per
""".split()

# --------------------------------------------------------------------------------------
# UltraFeedback vocabularies
# --------------------------------------------------------------------------------------
UF_SOURCES = (
    "evol_instruct", "false_qa", "flan_v2_cot", "sharegpt", "ultrachat", "truthful_qa",
    "flan_v2_niv2", "flan_v2_p3", "flan_v2_flan2021",
)
UF_SOURCE_P = (0.16, 0.04, 0.12, 0.31, 0.16, 0.012, 0.13, 0.04, 0.028)
UF_MODELS = (
    "gpt-4", "gpt-3.5-turbo", "llama-2-70b-chat", "llama-2-13b-chat", "llama-2-7b-chat",
    "wizardlm-70b", "wizardlm-13b", "wizardlm-7b", "vicuna-33b", "ultralm-65b", "ultralm-13b",
    "starchat", "mpt-30b-chat", "alpaca-7b", "pythia-12b", "falcon-40b-instruct", "bard",
)
UF_PRINCIPLES = ("helpfulness", "honesty", "truthfulness", "verbalized_calibration", "harmlessness")
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
_TONES = ("bug", "neg", "mid", "pos")
CRITIQUE_FLAT = tuple(t for k in _TONES for t in CRITIQUE_TEMPLATES[k])
CRITIQUE_FLAT_COMPOUND = np.array([v for k in _TONES for v in CRITIQUE_TEMPLATE_COMPOUND[k]])
_TONE_BASE = {k: sum(len(CRITIQUE_TEMPLATES[j]) for j in _TONES[: _TONES.index(k)]) for k in _TONES}

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
RATING_STR = ("1", "2", "3", "4", "5")
INVALID_RATINGS = ("0", "10", "", None, "five")

# --------------------------------------------------------------------------------------
# CodeUltraFeedback vocabularies
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

# --------------------------------------------------------------------------------------
# ReVeR vocabularies
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
RUBRIC_PROMPT_HEAD = (
    "You are an expert evaluator. Write a rubric for judging responses to the instruction below. "
    "Each item must be a single criterion starting with 'The response', labelled [Hard Rule] for "
    "explicit requirements or [Principle] for qualities of a good answer. Do not look at any "
    "response.\n\nInstruction:\n"
)
RUBRIC_PROMPT_TAIL = "\n\nReturn the rubric as a numbered list, one item per line."
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

BREAK_KINDS = (
    "rubric_unused", "rubric_single_trajectory", "duplicate_candidate", "trajectory_without_rubric",
    "criteria_mismatch", "not_kept", "verdict_no_judge_block", "verdict_malformed_json",
    "verdict_missing_items", "verdict_score_out_of_range", "info_multiple_judge_blocks",
)


# ======================================================================================
# helpers
# ======================================================================================
def _rng(seed: int, *path: Any) -> np.random.Generator:
    """Independent, reproducible stream for (seed, path...)."""
    words = [int(seed)]
    for p in path:
        if isinstance(p, str):
            words.extend(p.encode())
        else:
            words.append(int(p))
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(words)))


def _n_planted(n: int, rate: float, minimum: int = 3) -> int:
    return min(n, max(minimum, int(round(rate * n))))


def _join(*parts: Any) -> pa.Array:
    """Element-wise concatenation of string arrays / python strings."""
    return pc.binary_join_element_wise(*parts, "")


def _take_str(options: Iterable[str | None], idx: np.ndarray) -> pa.Array:
    return pc.take(pa.array(list(options), pa.string()), pa.array(idx, pa.int64()))


def _to_str(values: np.ndarray) -> pa.Array:
    return pc.cast(pa.array(values, pa.int64()), pa.string())


def _progress(it, total=None, desc=None, enabled=True):
    if enabled and _tqdm is not None:
        return _tqdm(it, total=total, desc=desc, leave=False, file=sys.stderr)
    return it


def _json_escape(arr: pa.Array) -> pa.Array:
    arr = pc.replace_substring(arr, "\\", "\\\\")
    arr = pc.replace_substring(arr, '"', '\\"')
    arr = pc.replace_substring(arr, "\n", "\\n")
    return arr


def _segment_ids(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(owner, position-within-owner, offsets) for a ragged layout."""
    offsets = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    owner = np.repeat(np.arange(len(counts)), counts)
    pos = np.arange(offsets[-1]) - offsets[owner]
    return owner, pos, offsets


class TextBank:
    """A fixed pseudo-random corpus; texts are slices of it, built without Python loops.

    ``sentences(...)`` returns texts of whole sentences ("Word word ... word. Word ...").
    ``phrases(...)`` returns lowercase word sequences without punctuation.
    """

    def __init__(self, seed: int, n_sentences: int = 150_000):
        rng = _rng(seed, "textbank")
        vocab = [w.encode() for w in WORDS]
        v = len(vocab)
        # token variants: 0 "w ", 1 "W ", 2 "w. "
        toks = [w + b" " for w in vocab] + [w[:1].upper() + w[1:] + b" " for w in vocab] + [
            w + b". " for w in vocab
        ]
        tok_len = np.array([len(t) for t in toks], np.int64)
        tok_start = np.zeros(len(toks), np.int64)
        tok_start[1:] = np.cumsum(tok_len)[:-1]
        tok_buf = np.frombuffer(b"".join(toks), np.uint8)

        # --- sentence corpus
        slen = rng.integers(6, 19, n_sentences)
        owner, pos, off = _segment_ids(slen)
        wid = rng.integers(0, v, off[-1])
        variant = np.where(pos == 0, 1, np.where(pos == slen[owner] - 1, 2, 0))
        self.sent_buf, starts = self._gather(tok_buf, tok_start, tok_len, wid + v * variant)
        self.sent_start = np.append(starts[off[:-1]], len(self.sent_buf))  # byte start per sentence
        self.n_sent = n_sentences
        # --- phrase corpus (lowercase words only)
        n_words = 400_000
        pid = rng.integers(0, v, n_words)
        self.phr_buf, self.phr_start = self._gather(tok_buf, tok_start, tok_len, pid)
        self.phr_start = np.append(self.phr_start, len(self.phr_buf))
        self.n_words = n_words
        self._sent_pa = pa.py_buffer(self.sent_buf)
        self._phr_pa = pa.py_buffer(self.phr_buf)

    @staticmethod
    def _gather(tok_buf, tok_start, tok_len, ids):
        lens = tok_len[ids]
        out_start = np.zeros(len(ids), np.int64)
        out_start[1:] = np.cumsum(lens)[:-1]
        total = int(lens.sum())
        idx = np.repeat(tok_start[ids] - out_start, lens) + np.arange(total)
        return tok_buf[idx], out_start

    @staticmethod
    def _view(buf: np.ndarray, buf_pa: pa.Buffer, start: np.ndarray, end: np.ndarray) -> pa.Array:
        """Build string slices buf[start:end] (all longer than 12 bytes) via a string_view."""
        n = len(start)
        length = (end - start).astype(np.int64)
        assert n == 0 or length.min() > 12
        views = np.zeros((n, 4), np.int32)
        views[:, 0] = length
        prefix = buf[start[:, None] + np.arange(4)]
        views[:, 1] = np.ascontiguousarray(prefix).view(np.int32)[:, 0]
        views[:, 2] = 0
        views[:, 3] = start
        arr = pa.Array.from_buffers(pa.string_view(), n, [None, pa.py_buffer(views), buf_pa])
        return arr.cast(pa.string())

    def sentences(self, rng: np.random.Generator, n: int, lo: int, hi: int, factor: float = 1.0) -> pa.Array:
        lo = max(1, int(round(lo * factor)))
        hi = max(lo, int(round(hi * factor)))
        k = rng.integers(lo, hi + 1, n)
        s = rng.integers(0, self.n_sent - hi - 1, n)
        start = self.sent_start[s]
        end = self.sent_start[s + k] - 1  # drop the trailing space
        return self._view(self.sent_buf, self._sent_pa, start, end)

    def long_text(self, rng: np.random.Generator, n: int, lo: int, hi: int, factor: float = 1.0) -> pa.Array:
        """Two independent slices joined by a blank line (keeps texts distinct)."""
        a = self.sentences(rng, n, (lo + 1) // 2, (hi + 1) // 2, factor)
        b = self.sentences(rng, n, lo // 2 or 1, hi // 2 or 1, factor)
        return pc.binary_join_element_wise(a, b, "\n\n")

    def phrases(self, rng: np.random.Generator, n: int, lo: int, hi: int) -> pa.Array:
        k = rng.integers(lo, hi + 1, n)
        s = rng.integers(0, self.n_words - hi - 1, n)
        start = self.phr_start[s]
        end = self.phr_start[s + k] - 1
        # phrases can be shorter than 13 bytes: pad to the right by extending k
        short = end - start <= 12
        while short.any():
            k = np.where(short, k + 1, k)
            end = self.phr_start[s + k] - 1
            short = end - start <= 12
        return self._view(self.phr_buf, self._phr_pa, start, end)


# ======================================================================================
# UltraFeedback
# ======================================================================================
def _uf_plan(n: int, seed: int) -> dict[str, np.ndarray]:
    """Global, per-row plan of the planted UltraFeedback quirks (disjoint row sets)."""
    rng = _rng(seed, "uf-plan")
    perm = rng.permutation(n)
    sizes = {
        "empty_completions": _n_planted(n, 0.0005),
        "one_completion": _n_planted(n, 0.0005),
        "three_completions": _n_planted(n, 0.002),
        "wrong_pick": _n_planted(n, 0.01),
        "average_rating_mismatch": _n_planted(n, 0.01),
        "duplicate_instruction": _n_planted(n, 0.0005),
    }
    plan: dict[str, np.ndarray] = {}
    at = 0
    for k, m in sizes.items():
        plan[k] = np.sort(perm[at: at + m])
        at += m
    # duplicated instruction: row j (planted) copies the instruction of row i = j-1-(j%5)
    # within the same chunk; i must be a normal row.
    dup_src = []
    special = np.zeros(n, bool)
    for k in sizes:
        special[plan[k]] = True
    for j in plan["duplicate_instruction"]:
        i = j - 1
        while i >= 0 and (special[i] or i // CHUNK_ROWS != j // CHUNK_ROWS):
            i -= 1
        if i < 0:
            i = j + 1
            while special[i] or i // CHUNK_ROWS != j // CHUNK_ROWS:
                i += 1
        dup_src.append(i)
    plan["duplicate_instruction_source"] = np.array(dup_src, np.int64)
    plan["special"] = special
    ncomp = np.full(n, 4, np.int64)
    ncomp[plan["empty_completions"]] = 0
    ncomp[plan["one_completion"]] = 1
    ncomp[plan["three_completions"]] = 3
    plan["ncomp"] = ncomp
    return plan


def _uf_rever_rows(n_uf: int, n_links: int, plan: dict[str, np.ndarray], seed: int) -> np.ndarray:
    """UltraFeedback rows that ReVeR pairs are built from (normal rows only)."""
    rng = _rng(seed, "uf-rever-rows")
    candidates = np.flatnonzero(~plan["special"])
    candidates = candidates[~np.isin(candidates, plan["duplicate_instruction_source"])]
    n_links = min(n_links, len(candidates))
    return np.sort(rng.choice(candidates, n_links, replace=False))


def _uf_chunk(bank: TextBank, seed: int, chunk: int, r0: int, n: int, plan: dict, tf: float,
              link_rows: np.ndarray) -> tuple[pa.Table, dict, list[dict]]:
    rng = _rng(seed, "uf", chunk)
    ncomp = plan["ncomp"][r0: r0 + n]
    row_of, pos, offsets = _segment_ids(ncomp)
    m = int(offsets[-1])

    # ---- rows: source + instruction
    src_idx = rng.choice(len(UF_SOURCES), n, p=np.array(UF_SOURCE_P) / sum(UF_SOURCE_P))
    pref_opts, pref_idx = [], np.zeros(n, np.int64)
    for si, s in enumerate(UF_SOURCES):
        base = len(pref_opts)
        pref_opts.extend(UF_INSTRUCTION_PREFIX[s])
        sel = src_idx == si
        pref_idx[sel] = base + rng.integers(0, len(UF_INSTRUCTION_PREFIX[s]), sel.sum())
    body = bank.sentences(rng, n, 1, 4, tf)
    instruction = _join(_take_str(pref_opts, pref_idx), " ", pc.utf8_lower(body))
    # planted duplicated instructions (both rows are in this chunk)
    dup = plan["duplicate_instruction"]
    dsel = (dup >= r0) & (dup < r0 + n)
    if dsel.any():
        tgt = dup[dsel] - r0
        src = plan["duplicate_instruction_source"][dsel] - r0
        take = np.arange(n)
        take[tgt] = src
        instruction = pc.take(instruction, pa.array(take))

    # ---- completions: models (4 distinct per row)
    keys = rng.random((n, len(UF_MODELS)))
    order = np.argsort(keys, axis=1)[:, :4]
    model_idx = order[row_of, pos]

    # ---- quality, ratings
    q = rng.choice(5, m, p=[0.12, 0.16, 0.24, 0.28, 0.20]) + 1
    bug = rng.random(m) < 0.08
    q = np.where(bug, rng.integers(1, 3, m), q)
    delta = rng.choice(np.array([-1, 0, 1]), (m, 4), p=[0.1, 0.8, 0.1])
    ratings = np.clip(q[:, None] + delta, 1, 5)
    ratings = np.where(bug[:, None], np.clip(q[:, None] + np.minimum(delta, 0), 1, 2), ratings)
    # rating string codes: 0..4 -> "1".."5", 5 -> "N/A", 6.. -> invalid
    code = ratings - 1
    na_hon = rng.random(m) < 0.10
    na_if = rng.random(m) < 0.02
    code[na_hon, 1] = 5
    code[na_if, 2] = 5
    invalid = rng.random(m) < 0.002
    inv_aspect = rng.integers(0, 4, m)
    inv_code = 6 + rng.integers(0, len(INVALID_RATINGS), m)
    code[invalid, inv_aspect[invalid]] = inv_code[invalid]
    valid = code <= 4
    vals = np.where(valid, code + 1, 0).astype(np.float64)
    nvalid = valid.sum(1)
    avg_true = np.where(nvalid > 0, vals.sum(1) / np.maximum(nvalid, 1), np.nan)
    # published average_rating: ~1 % of rows disagree with their annotations
    avg_pub = avg_true.copy()
    mism_rows = plan["average_rating_mismatch"]
    mism_rows = mism_rows[(mism_rows >= r0) & (mism_rows < r0 + n)] - r0
    for r in mism_rows:  # few rows; pick one non-bug completion per row
        cs = np.arange(offsets[r], offsets[r + 1])
        cs = cs[~bug[cs]] if (~bug[cs]).any() else cs
        if len(cs):
            c = cs[rng.integers(0, len(cs))]
            avg_pub[c] = avg_true[c] - 1.0 if avg_true[c] > 3 else avg_true[c] + 1.0
    # overall_score: critique score 1..10 in 0.5 steps; bug: 10.0
    overall = np.clip(np.round((2.25 * avg_true - 1.25 + rng.normal(0, 0.9, m)) * 2) / 2, 1.0, 10.0)
    overall = np.where(np.isnan(overall), 1.0, overall)
    overall = np.where(bug, 10.0, overall)
    # ---- critique tone (follows the critique score; bug -> strongly negative)
    tone = np.where(bug, 0, np.where(overall <= 4.0, 1, np.where(overall <= 6.5, 2, 3)))
    tone_base = np.array([_TONE_BASE[t] for t in _TONES])
    tone_len = np.array([len(CRITIQUE_TEMPLATES[t]) for t in _TONES])
    crit_tpl = tone_base[tone] + (rng.integers(0, 1000, m) % tone_len[tone])
    critique = _join(_take_str(CRITIQUE_FLAT, crit_tpl), " ", bank.sentences(rng, m, 3, 6, tf))

    # ---- annotations
    rating_opts = list(RATING_STR) + ["N/A"] + list(INVALID_RATINGS)
    rat_arr = [_take_str(rating_opts, code[:, a]) for a in range(4)]

    def rationale(a):
        c = code[:, a]
        opts = list(RATIONALE_BY_RATING) + [RATIONALE_NA]
        return _join(_take_str(opts, np.where(c <= 5, c, 5)), " ", bank.sentences(rng, m, 1, 2, tf))

    hp_t = pc.take(pa.array(HELPFULNESS_TYPES, pa.list_(pa.string())),
                   pa.array(rng.choice(len(HELPFULNESS_TYPES), m, p=HELPFULNESS_TYPES_P)))
    tr_t = pc.take(pa.array(TRUTHFULNESS_TYPES, pa.list_(pa.string())),
                   pa.array(rng.choice(len(TRUTHFULNESS_TYPES), m, p=TRUTHFULNESS_TYPES_P)))
    A = C.ULTRAFEEDBACK_ANNOTATIONS
    helpf = pa.StructArray.from_arrays(
        [rat_arr[0], bank.sentences(rng, m, 1, 2, tf), rationale(0), hp_t], fields=list(A.field("helpfulness").type))
    hon = pa.StructArray.from_arrays([rat_arr[1], rationale(1)], fields=list(A.field("honesty").type))
    instf = pa.StructArray.from_arrays([rat_arr[2], rationale(2)], fields=list(A.field("instruction_following").type))
    truth = pa.StructArray.from_arrays(
        [rat_arr[3], bank.sentences(rng, m, 1, 2, tf), rationale(3), tr_t], fields=list(A.field("truthfulness").type))
    annotations = pa.StructArray.from_arrays([helpf, hon, instf, truth], fields=list(A))
    response = bank.long_text(rng, m, 12, 22, tf)
    comp = pa.StructArray.from_arrays(
        [
            annotations,
            pa.array(avg_pub, pa.float64(), from_pandas=True),
            critique,
            _take_str(UF_SYSTEM_PROMPTS, rng.integers(0, len(UF_SYSTEM_PROMPTS), m)),
            _take_str(UF_MODELS, model_idx),
            pa.array(overall, pa.float64()),
            _take_str(UF_PRINCIPLES, rng.choice(len(UF_PRINCIPLES), m, p=[0.4, 0.15, 0.15, 0.2, 0.1])),
            response,
        ],
        fields=list(C.ULTRAFEEDBACK_COMPLETION),
    )

    # ---- argilla's picks (computed from the published average_rating / overall_score)
    present = np.zeros((n, 4), bool)
    present[row_of, pos] = True
    Apad = np.full((n, 4), -np.inf)
    Apad[row_of, pos] = np.where(np.isnan(avg_pub), -np.inf, avg_pub)
    Opad = np.full((n, 4), -np.inf)
    Opad[row_of, pos] = overall
    has = ncomp > 0
    ar = np.arange(n)

    def pick(S):
        best = np.argmax(S, axis=1)  # first on ties
        lower = present & (S < S[ar, best][:, None])
        other = present & (np.arange(4)[None, :] != best[:, None])
        elig = np.where(lower.any(1)[:, None], lower, other)
        u = np.where(elig, rng.random((n, 4)), -1.0)
        alt = np.argmax(u, axis=1)
        return best, alt, elig.any(1)

    best_r, alt_r, has_alt_r = pick(Apad)
    best_o, alt_o, has_alt_o = pick(Opad)

    def flat(idx, mask):
        return pa.array(offsets[:-1] + idx, pa.int64(), mask=~mask)

    def val(S, idx, mask):
        v = S[ar, idx]
        return pa.array(np.where(np.isfinite(v), v, 0.0), pa.float64(), mask=~(mask & np.isfinite(v)))

    best_rated_model = np.where(has, model_idx[np.minimum(offsets[:-1] + best_r, max(m - 1, 0))] if m else 0, -1)
    best_overall_model = np.where(has, model_idx[np.minimum(offsets[:-1] + best_o, max(m - 1, 0))] if m else 0, -1)
    is_diff = best_r != best_o
    # ---- planted wrong picks (~1 % of rows)
    wrong = plan["wrong_pick"]
    wrong = wrong[(wrong >= r0) & (wrong < r0 + n)] - r0
    wrong_kinds = []
    for i, r in enumerate(wrong):
        kind = ("best_rated_model", "best_rated_model", "best_overall_model", "flag")[i % 4]
        if ncomp[r] < 2:
            kind = "flag"
        if kind == "flag":
            is_diff[r] = not is_diff[r]
        else:
            models_r = model_idx[offsets[r]: offsets[r + 1]]
            arr = best_rated_model if kind == "best_rated_model" else best_overall_model
            choices = models_r[models_r != arr[r]]
            arr[r] = choices[rng.integers(0, len(choices))]
        wrong_kinds.append({"row": int(r0 + r), "column": kind if kind != "flag" else "best_rated_is_different_from_best_overall"})
    model_names = np.array(UF_MODELS + ("",), dtype=object)
    sentiment = CRITIQUE_FLAT_COMPOUND[crit_tpl[np.minimum(offsets[:-1] + best_o, max(m - 1, 0))]] if m else np.zeros(n)

    cols = {
        "source": _take_str(UF_SOURCES, src_idx),
        "instruction": instruction,
        "best_rated_is_different_from_best_overall": pa.array(is_diff, pa.bool_(), mask=~has),
        "best_overall_model": pa.array(model_names[best_overall_model], pa.string(), mask=~has),
        "score_best_overall": val(Opad, best_o, has),
        "best_rated_model": pa.array(model_names[best_rated_model], pa.string(), mask=~has),
        "score_best_rated": val(Apad, best_r, has),
        "best_overall_score_response": pc.take(comp, flat(best_o, has)),
        "random_response_for_best_overall": pc.take(comp, flat(alt_o, has_alt_o)),
        "best_rated_response": pc.take(comp, flat(best_r, has)),
        "random_response_for_best_rated": pc.take(comp, flat(alt_r, has_alt_r)),
        "score_random_response_for_best_overall": val(Opad, alt_o, has_alt_o),
        "score_random_response_for_rated": val(Apad, alt_r, has_alt_r),
        "completions": pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), comp,
                                                type=C.ULTRAFEEDBACK_SCHEMA.field("completions").type),
        "random_response_for_rated": val(Apad, alt_r, has_alt_r),
        "best_overall_score_response_critique_sentiment": pa.array(sentiment, pa.float64(), mask=~has),
    }
    table = pa.Table.from_arrays([cols[f.name] for f in C.ULTRAFEEDBACK_SCHEMA], schema=C.ULTRAFEEDBACK_SCHEMA)

    stats = {
        "completions": m,
        "bug_overall_10_low_rating": int((bug & (avg_true <= 2)).sum()),
        "rating_na": int((code == 5).sum()),
        "rating_invalid": int((code >= 6).sum()),
    }
    # ---- rows used by ReVeR pairs
    links = []
    lsel = link_rows[(link_rows >= r0) & (link_rows < r0 + n)] - r0
    if len(lsel):
        instr = pc.take(instruction, pa.array(lsel)).to_pylist()
        for j, r in enumerate(lsel):
            cs = np.arange(offsets[r], offsets[r + 1])
            links.append({
                "row": int(r0 + r),
                "instruction": instr[j],
                "responses": pc.take(response, pa.array(cs)).to_pylist(),
                "average_rating": avg_true[cs].tolist(),
                "overall_score": overall[cs].tolist(),
            })
    return table, {"stats": stats, "wrong_pick": wrong_kinds}, links


# ======================================================================================
# CodeUltraFeedback (coseal) and the RLHFlow "standard" pairs
# ======================================================================================
def _code_rows(bank: TextBank, seed: int, n: int, tf: float) -> tuple[list[dict], dict]:
    rng = _rng(seed, "code")
    npref = len(C.CODE_ULTRAFEEDBACK_PREFERENCES)
    prefs = np.repeat(np.arange(npref), int(math.ceil(n / npref)))[:n]
    prefs = rng.permutation(prefs)
    instruction = _join(
        _take_str(CODE_INSTRUCTION_PREFIX, rng.integers(0, len(CODE_INSTRUCTION_PREFIX), n)), " ",
        pc.utf8_lower(bank.sentences(rng, n, 1, 3, tf)),
    ).to_pylist()
    m = 4 * n
    intro = bank.sentences(rng, m, 1, 3, tf)
    outro = bank.sentences(rng, m, 2, 6, tf)
    snippet = _take_str(CODE_SNIPPETS, rng.integers(0, len(CODE_SNIPPETS), m))
    responses = _join(intro, "\n\n```\n", snippet, "\n```\n\n", outro).to_pylist()
    rationales = bank.sentences(rng, m, 1, 3, tf).to_pylist()
    models = np.argsort(rng.random((n, len(CODE_MODELS))), axis=1)[:, :4]
    # ratings: mostly spread out (few ties), sometimes independent draws (ties)
    spread = rng.random(n) < 0.45
    distinct = np.argsort(rng.random((n, 5)), axis=1)[:, :4] + 1
    indep = rng.choice(5, (n, 4), p=[0.08, 0.17, 0.25, 0.3, 0.2]) + 1
    ratings = np.where(spread[:, None], distinct, indep).astype("<U3")
    na = rng.random((n, 4)) < 0.04
    ratings[na] = "N/A"
    ann_order = np.argsort(rng.random((n, 4)), axis=1)  # annotations in shuffled order

    perm = rng.permutation(np.arange(1, n))  # row 0 stays a normal row
    sizes = {"empty_annotations": _n_planted(n, 0.01), "missing_annotation": _n_planted(n, 0.005, 2),
             "forced_last_na": _n_planted(n, 0.0, 3), "forced_middle_na": _n_planted(n, 0.0, 3)}
    plan, at = {}, 0
    for k, s in sizes.items():
        plan[k] = set(perm[at: at + s].tolist())
        at += s
    n_invalid = _n_planted(m, 0.002, 2)
    invalid_cells = rng.choice(n * 4, n_invalid, replace=False)
    for cell in invalid_cells:
        ratings[cell // 4, cell % 4] = ("10", "0")[cell % 2]

    rows = []
    for i in range(n):
        mods = [CODE_MODELS[j] for j in models[i]]
        r = ratings[i].copy()
        order = list(ann_order[i])
        if i in plan["forced_last_na"]:
            r[order[-1]] = "N/A"
        if i in plan["forced_middle_na"]:
            r[order[-1]] = r[order[-1]] if r[order[-1]] != "N/A" else "3"
            r[order[1]] = "N/A"
        anns = [{"model": mods[k], "rating": str(r[k]),
                 "rationale": (CODE_RATIONALE[int(r[k]) - 1] if r[k] in RATING_STR else
                               "The rating could not be determined.") + " " + rationales[4 * i + k]}
                for k in order]
        if i in plan["empty_annotations"]:
            anns = []
        elif i in plan["missing_annotation"]:
            anns = anns[:-1]
        rows.append({
            "instruction": instruction[i],
            "preference": C.CODE_ULTRAFEEDBACK_PREFERENCES[prefs[i]],
            "models": mods,
            "responses": [{"model": mods[k], "response": responses[4 * i + k]} for k in range(4)],
            "annotations": anns,
        })
    stats = {
        "annotations_na": sum(a["rating"] == "N/A" for row in rows for a in row["annotations"]),
        "annotations_invalid": sum(a["rating"] in ("10", "0") for row in rows for a in row["annotations"]),
        "rows_empty_annotations": sum(not row["annotations"] for row in rows),
        "rows_last_annotation_na": sum(bool(row["annotations"]) and row["annotations"][-1]["rating"] == "N/A" for row in rows),
        "rows_middle_na_kept": sum(bool(row["annotations"]) and row["annotations"][-1]["rating"] != "N/A"
                                   and any(a["rating"] == "N/A" for a in row["annotations"]) for row in rows),
        "rows_missing_annotation": sum(0 < len(row["annotations"]) < 4 for row in rows),
    }
    return rows, stats


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
            preference = 'code-' + example['preference']  # noqa: F841 (unused, as in the card)
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
            skipped.append({"row": i, "error": type(exc).__name__})
            continue
        data.extend(row_data)
    return data, skipped


# ======================================================================================
# ReVeR
# ======================================================================================
def _rever_plan(n: int, seed: int, uf_links: list[dict]) -> dict:
    """Per-pair numeric plan: sources, ids, rubric items, scores, planted breaks."""
    rng = _rng(seed, "rever-plan")
    k_twr = _n_planted(n, 0.001)
    P = n + k_twr  # the last k_twr pairs lose their rubric row
    src = rng.choice(len(C.REVER_SOURCES), P, p=REVER_SOURCE_P)
    # ids: "<source>:<n>" with a per-source running number
    num = np.zeros(P, np.int64)
    for s in range(len(C.REVER_SOURCES)):
        sel = np.flatnonzero(src == s)
        num[sel] = np.arange(len(sel))
    # UF-linked pairs
    uf_src = C.REVER_SOURCES.index("ultrafeedback")
    uf_pairs = np.flatnonzero(src[:n] == uf_src)
    n_link = min(len(uf_links), len(uf_pairs))
    link_pairs = np.sort(rng.choice(uf_pairs, n_link, replace=False)) if n_link else np.zeros(0, np.int64)
    link_of = np.full(P, -1, np.int64)
    link_of[link_pairs] = np.arange(n_link)

    # rubric items
    K = rng.integers(3, 9, P)
    owner, pos, off = _segment_ids(K)
    nh = np.minimum(rng.binomial(K, 0.4), K)
    no_hard = rng.random(P) < 0.08
    no_princ = rng.random(P) < 0.10
    nh = np.where(no_princ, K, np.where(no_hard, 0, np.maximum(nh, 1)))
    nh = np.minimum(nh, K)
    hard = pos < nh[owner]  # hard rules first
    np_ = K - nh
    # scores: per item, chosen (0) and rejected (1), regenerated until chosen > rejected
    I = int(off[-1])
    sc = np.zeros((2, I), np.int64)
    todo = np.arange(P)
    for _ in range(200):
        if len(todo) == 0:
            break
        items = np.concatenate([np.arange(off[p], off[p + 1]) for p in todo]) if len(todo) < P else np.arange(I)
        h = hard[items]
        princ_decided = rng.random(P) < 0.05  # ~1/3 of pairs end up decided by principles only
        pd_item = princ_decided[owner[items]]
        hc = rng.random(len(items)) < 0.85
        hr = np.where(pd_item, hc, rng.random(len(items)) < 0.45)
        pc_ = np.clip(np.round(rng.normal(72, 15, len(items))), 0, 100).astype(np.int64)
        pr_ = np.clip(np.round(rng.normal(58, 18, len(items))), 0, 100).astype(np.int64)
        sc[0, items] = np.where(h, hc, pc_)
        sc[1, items] = np.where(h, hr, pr_)
        tot = _pair_totals(sc, hard, owner, np_, P)
        bad = tot[0] <= tot[1]
        # swap chosen/rejected scores where rejected won
        swap = bad & (tot[0] < tot[1])
        sw_items = swap[owner]
        sc[:, sw_items] = sc[::-1, sw_items]
        tot = _pair_totals(sc, hard, owner, np_, P)
        todo = np.flatnonzero(tot[0] <= tot[1])
    assert len(todo) == 0, "could not make all pairs kept"
    hard_c = np.bincount(owner, weights=sc[0] * hard, minlength=P)
    hard_r = np.bincount(owner, weights=sc[1] * hard, minlength=P)

    # tool calls: exactly round(rate * trajectories)
    T = 2 * P
    tool = np.zeros(T, bool)
    tool[rng.choice(T, int(round(C.REVER_TOOL_CALL_RATE * T)), replace=False)] = True
    shape_map = rng.random(T) < 0.5
    list_key = rng.choice(len(VERDICT_LIST_KEYS), T, p=VERDICT_LIST_KEYS_P)
    rid_plain = rng.random(T) < 0.35  # rubric_id "1" instead of "r1"
    tool_kind = rng.integers(0, len(TOOL_CODES), T)

    # planted breaks on distinct, non-linked pairs among the first n
    kinds = [k for k in BREAK_KINDS if k != "trajectory_without_rubric"]
    per = _n_planted(n, 0.001)
    # verdict_missing_items drops, from the rejected trajectory, a Hard Rule scored 0 (so the
    # pair's order does not depend on how a missing item is read): needs such an item
    rej_hard0 = np.bincount(owner, weights=((sc[1] == 0) & hard), minlength=P)[:n] > 0
    free = np.ones(n, bool)
    free[link_pairs] = False
    assigned: list[tuple[int, str]] = []
    for kind in kinds:
        pool = np.flatnonzero(free & (rej_hard0 if kind == "verdict_missing_items" else True))
        chosen_p = rng.choice(pool, min(per, len(pool)), replace=False)
        free[chosen_p] = False
        assigned.extend((int(p), kind) for p in chosen_p)
    breaks: dict[int, tuple[str, str | None]] = {}
    for p, kind in assigned:
        if kind == "not_kept":
            sc[:, off[p]: off[p + 1]] = sc[::-1, off[p]: off[p + 1]]
        breaks[int(p)] = (kind, {"duplicate_candidate": "chosen", "criteria_mismatch": "rejected",
                                "verdict_no_judge_block": "rejected", "verdict_malformed_json": "chosen",
                                "verdict_missing_items": "rejected", "verdict_score_out_of_range": "chosen",
                                "info_multiple_judge_blocks": "chosen"}.get(kind))
    for p in range(n, P):
        breaks[p] = ("trajectory_without_rubric", None)
    return dict(P=P, n=n, src=src, num=num, link_of=link_of, K=K, owner=owner, pos=pos, off=off,
                hard=hard, np_=np_, sc=sc, tool=tool, shape_map=shape_map, list_key=list_key,
                rid_plain=rid_plain, tool_kind=tool_kind, breaks=breaks,
                principle_decided=int(((hard_c == hard_r)).sum()))


def _pair_totals(sc, hard, owner, np_, P):
    """Exact integer form of (#hard satisfied) + mean(principles)/101, times 101*n_principles."""
    out = []
    for t in (0, 1):
        hs = np.bincount(owner, weights=np.where(hard, sc[t], 0), minlength=P)
        ps = np.bincount(owner, weights=np.where(hard, 0, sc[t]), minlength=P)
        out.append(np.where(np_ > 0, hs * 101 * np_ + ps, hs))
    return out


def _rever_build(bank: TextBank, seed: int, plan: dict, uf_links: list[dict], tf: float,
                 progress: bool) -> tuple[pa.Table, pa.Table, list[dict], dict]:
    P, n = plan["P"], plan["n"]
    rng = _rng(seed, "rever-text")
    src, num, link_of = plan["src"], plan["num"], plan["link_of"]
    K, owner, pos, off, hard, sc = plan["K"], plan["owner"], plan["pos"], plan["off"], plan["hard"], plan["sc"]
    I = int(off[-1])
    ids = _join(_take_str(C.REVER_SOURCES, src), ":", _to_str(num))

    # ---- instructions and responses (pair level)
    pref_opts, pref_idx = [], np.zeros(P, np.int64)
    for si, s in enumerate(C.REVER_SOURCES):
        base = len(pref_opts)
        pref_opts.extend(REVER_INSTRUCTION_PREFIX[s])
        sel = src == si
        pref_idx[sel] = base + rng.integers(0, len(REVER_INSTRUCTION_PREFIX[s]), sel.sum())
    instruction = _join(_take_str(pref_opts, pref_idx), " ", pc.utf8_lower(bank.sentences(rng, P, 1, 3, tf)))
    chosen = bank.long_text(rng, P, 6, 14, tf)
    rejected = bank.long_text(rng, P, 4, 12, tf)
    linked = np.flatnonzero(link_of >= 0)
    link_info = []
    if len(linked):
        li, lc, lr = [], [], []
        for p in linked:
            L = uf_links[link_of[p]]
            nc = len(L["responses"])
            av, ov = L["average_rating"], L["overall_score"]
            pairs = [(a, b) for a in range(nc) for b in range(nc) if av[a] > av[b]]
            if not pairs:
                pairs = [(a, b) for a in range(nc) for b in range(nc) if a != b]
            disagree = [(a, b) for a, b in pairs if ov[a] < ov[b]]
            pool = disagree if (disagree and rng.random() < 0.5) else pairs
            a, b = pool[rng.integers(0, len(pool))]
            text = L["instruction"]
            variant = rng.integers(0, 5)
            if variant == 1:
                text = "  " + text.replace(" ", "  ", 2) + "\n"
            elif variant == 2:
                text = text.lower()
            elif variant == 3:
                text = text.upper()[:1] + text[1:] + " "
            li.append(text)
            lc.append(L["responses"][a])
            lr.append(L["responses"][b])
            link_info.append({"id": None, "uf_row": L["row"], "variant": int(variant),
                              "chosen_average_rating": av[a], "rejected_average_rating": av[b],
                              "chosen_overall_score": ov[a], "rejected_overall_score": ov[b]})
        mask = np.zeros(P, bool)
        mask[linked] = True
        instruction = pc.replace_with_mask(instruction, pa.array(mask), pa.array(li, pa.string()))
        chosen = pc.replace_with_mask(chosen, pa.array(mask), pa.array(lc, pa.string()))
        rejected = pc.replace_with_mask(rejected, pa.array(mask), pa.array(lr, pa.string()))
        id_list = pc.take(ids, pa.array(linked)).to_pylist()
        for d, i in zip(link_info, id_list):
            d["id"] = i

    # ---- rubric items (item level, shared by both trajectories)
    tpl = np.where(hard, rng.integers(0, len(HARD_TEMPLATES), I), len(HARD_TEMPLATES) + rng.integers(0, len(PRINCIPLE_TEMPLATES), I))
    criterion = _join(_take_str(HARD_TEMPLATES + PRINCIPLE_TEMPLATES, tpl), " ", bank.phrases(rng, I, 2, 5),
                      _take_str([". [Principle]", ". [Hard Rule]"], hard.astype(np.int64)))
    crit_list = pa.ListArray.from_arrays(pa.array(off, pa.int32()), _join(_to_str(pos + 1), ". ", criterion))
    numbered = pc.binary_join(crit_list, "\n")
    rubric_user = _join(RUBRIC_PROMPT_HEAD, instruction, RUBRIC_PROMPT_TAIL)
    rubric_asst = _join("<think>\n", bank.sentences(rng, P, 3, 8, tf), "\n</think>\n\nHere is the rubric:\n\n", numbered)
    rubric_rows = np.arange(n)
    rmsg_vals = pa.StructArray.from_arrays(
        [pa.array(["user", "assistant"] * n, pa.string()),
         pc.take(pa.chunked_array([rubric_user, rubric_asst]).combine_chunks(),
                 pa.array(np.stack([rubric_rows, rubric_rows + P], 1).ravel()))],
        fields=list(C.REVER_RUBRIC_SCHEMA.field("messages").type.value_type))
    rubric_table = pa.Table.from_arrays(
        [pc.take(ids, pa.array(rubric_rows)), _take_str(C.REVER_SOURCES, src[:n]),
         pa.ListArray.from_arrays(pa.array(np.arange(0, 2 * n + 1, 2), pa.int32()), rmsg_vals,
                                  type=C.REVER_RUBRIC_SCHEMA.field("messages").type)],
        schema=C.REVER_RUBRIC_SCHEMA)

    # ---- judge trajectories: t = 2p (chosen), 2p+1 (rejected)
    T = 2 * P
    t_pair = np.repeat(np.arange(P), 2)
    t_cand = np.tile([0, 1], P)
    tK = K[t_pair]
    t_owner, t_pos, t_off = _segment_ids(tK)
    item_idx = off[t_pair][t_owner] + t_pos  # item per (trajectory, item)
    score = sc[t_cand[t_owner], item_idx]
    rid = _join(_take_str(["r", ""], plan["rid_plain"][t_owner].astype(np.int64)), _to_str(t_pos + 1))
    crit_t = pc.take(criterion, pa.array(item_idx))
    resp = pc.take(pa.chunked_array([chosen, rejected]).combine_chunks(), pa.array(t_pair + P * t_cand))
    instr_t = pc.take(instruction, pa.array(t_pair))
    user_items = pa.ListArray.from_arrays(pa.array(t_off, pa.int32()),
                                          _join('{"rubric_id": "', rid, '", "criterion": "', _json_escape(crit_t), '"}'))
    user = _join('{"instruction": "', _json_escape(instr_t), '", "response": "', _json_escape(resp),
                 '", "rubrics": [', pc.binary_join(user_items, ", "), "]}")
    sat = np.where(hard[item_idx], score == 1, score >= 60)
    expl = _join(_take_str(["Not satisfied: the response does not fully address", "Satisfied: the response addresses"],
                           sat.astype(np.int64)), " ", bank.phrases(rng, len(item_idx), 2, 5), ".")
    s_str = _to_str(score)
    list_item = _join('{"rubric_id": "', rid, '", "score": ', s_str, ', "explanation": "', expl, '"}')
    map_item = _join('"', rid, '": {"score": ', s_str, ', "explanation": "', expl, '"}')
    v_items = pc.if_else(pa.array(plan["shape_map"][t_owner]), map_item, list_item)
    v_joined = pc.binary_join(pa.ListArray.from_arrays(pa.array(t_off, pa.int32()), v_items), ", ")
    verdict = pc.if_else(pa.array(plan["shape_map"]), _join("{", v_joined, "}"),
                         _join('{"', _take_str(VERDICT_LIST_KEYS, plan["list_key"]), '": [', v_joined, "]}"))
    think = _join("<think>\n", bank.sentences(rng, T, 2, 6, tf), "\n</think>")
    tool = plan["tool"]
    tk = plan["tool_kind"]
    tool_call = _join('{"name": "python", "arguments": {"code": "', _take_str([c for c, _ in TOOL_CODES], tk), '"}}')
    n_words = pc.add(pc.add(pc.count_substring(resp, " "), pc.count_substring(resp, "\n\n")), 1)
    n_sent = pc.count_substring(resp, ".")
    n_chars = pc.utf8_length(resp)
    tool_out = pc.cast(pc.choose(pa.array(tk), n_words, n_sent, n_chars), pa.string())
    final_tool = _join("<think>\n", bank.sentences(rng, T, 1, 3, tf), "\n</think>\n\nThe tool output confirms my checks.\n\n<judge>\n", verdict, "\n</judge>")
    final_plain = _join(think, "\n\nFinal verdict:\n\n<judge>\n", verdict, "\n</judge>")

    # ---- planted breaks (text edits on a few trajectories)
    breaks_out: list[dict] = []
    user_l, final_l = {}, {}
    id_of = lambda p: ids[int(p)].as_py()  # noqa: E731
    drop = np.zeros(T, bool)
    dup = np.zeros(T, bool)
    for p, (kind, cand) in sorted(plan["breaks"].items()):
        t = 2 * p + (1 if cand == "rejected" else 0)
        rec = {"kind": kind, "id": id_of(p), "candidate": cand}
        fin = (final_tool if tool[t] else final_plain)[t].as_py()
        head, _, rest = fin.rpartition("<judge>\n")
        vtxt = rest[: -len("\n</judge>")]
        if kind == "rubric_unused":
            drop[2 * p] = drop[2 * p + 1] = True
        elif kind == "rubric_single_trajectory":
            drop[2 * p + 1] = True
            rec["detail"] = "rejected trajectory missing"
        elif kind == "duplicate_candidate":
            dup[2 * p] = True
            rec["detail"] = "chosen trajectory appears twice (identical rows)"
        elif kind == "criteria_mismatch":
            it = off[p] + rng.integers(0, K[p])
            old = criterion[int(it)].as_py()
            words = old.split(" ")
            wi = 2 + rng.integers(0, max(1, len(words) - 4))
            words[wi] = "clearly" if words[wi] != "clearly" else "fully"
            new = " ".join(words)
            user_l[t] = user[t].as_py().replace('"criterion": "' + old + '"', '"criterion": "' + new + '"', 1)
            rec["detail"] = {"rubric_criterion": old, "trajectory_criterion": new}
        elif kind == "verdict_no_judge_block":
            final_l[t] = head.rstrip() + "\n\nI have scored every rubric item above."
        elif kind == "verdict_malformed_json":
            final_l[t] = head + "<judge>\n" + vtxt[:-1] + ",\n</judge>"
        elif kind == "verdict_missing_items":
            obj = json.loads(vtxt)
            its = np.arange(off[p], off[p + 1])
            j = int(np.flatnonzero((sc[1, its] == 0) & hard[its])[0])
            r_id = ("" if plan["rid_plain"][t] else "r") + str(j + 1)
            if plan["shape_map"][t]:
                del obj[r_id]
            else:
                key = VERDICT_LIST_KEYS[plan["list_key"][t]]
                obj[key] = [x for x in obj[key] if x["rubric_id"] != r_id]
            final_l[t] = head + "<judge>\n" + json.dumps(obj) + "\n</judge>"
            rec["detail"] = {"missing_rubric_id": r_id}
        elif kind == "verdict_score_out_of_range":
            obj = json.loads(vtxt)
            j = int(rng.integers(0, K[p]))
            r_id = ("" if plan["rid_plain"][t] else "r") + str(j + 1)
            bad = 2 if hard[off[p] + j] else 140
            if plan["shape_map"][t]:
                obj[r_id]["score"] = bad
            else:
                for x in obj[VERDICT_LIST_KEYS[plan["list_key"][t]]]:
                    if x["rubric_id"] == r_id:
                        x["score"] = bad
            final_l[t] = head + "<judge>\n" + json.dumps(obj) + "\n</judge>"
            rec["detail"] = {"rubric_id": r_id, "score": bad}
        elif kind == "info_multiple_judge_blocks":
            obj = json.loads(vtxt)
            items = obj.values() if plan["shape_map"][t] else obj[VERDICT_LIST_KEYS[plan["list_key"][t]]]
            for x in items:
                x["score"] = 0
            final_l[t] = (head + "<judge>\n" + json.dumps(obj) + "\n</judge>\n\nWait, I misread the response; "
                          "corrected verdict:\n\n<judge>\n" + vtxt + "\n</judge>")
            rec["detail"] = "first <judge> block is a draft (all scores 0); the last block is authoritative"
        elif kind == "not_kept":
            rec["detail"] = "chosen scores <= rejected scores"
        breaks_out.append(rec)

    def patch(arr, edits):
        if not edits:
            return arr
        mask = np.zeros(len(arr), bool)
        keys = sorted(edits)
        mask[keys] = True
        return pc.replace_with_mask(arr, pa.array(mask), pa.array([edits[k] for k in keys], pa.string()))

    user = patch(user, user_l)
    final_tool = patch(final_tool, {t: v for t, v in final_l.items() if tool[t]})
    final_plain = patch(final_plain, {t: v for t, v in final_l.items() if not tool[t]})
    first_asst = pc.if_else(pa.array(tool), _join(think, "\nI will verify this with the python tool."), final_plain)

    # ---- messages lists
    nmsg = np.where(tool, 6, 3)
    m_owner, m_pos, m_off = _segment_ids(nmsg)
    # candidate content arrays stacked: 0 system, 1 user, 2 first assistant, 3 tool_call, 4 tool_response, 5 final
    slot = m_pos  # the 3-message layout uses slots 0, 1, 2 (first assistant = final verdict)
    stack = pa.chunked_array([
        pa.array([JUDGE_SYSTEM_PROMPT] * 1, pa.string()), user, first_asst, tool_call, tool_out, final_tool,
    ]).combine_chunks()
    base = np.array([0, 1, 1 + T, 1 + 2 * T, 1 + 3 * T, 1 + 4 * T])
    content_idx = np.where(slot == 0, 0, base[slot] + m_owner)
    roles = np.array(["system", "user", "assistant", "tool_call", "tool_response", "assistant"], dtype=object)
    msg_vals = pa.StructArray.from_arrays(
        [pa.array(roles[slot], pa.string()), pc.take(stack, pa.array(content_idx))],
        fields=list(C.REVER_JUDGE_SCHEMA.field("messages").type.value_type))
    messages = pa.ListArray.from_arrays(pa.array(m_off, pa.int32()), msg_vals,
                                        type=C.REVER_JUDGE_SCHEMA.field("messages").type)
    judge = pa.Table.from_arrays(
        [pc.take(ids, pa.array(t_pair)), _take_str(C.REVER_SOURCES, src[t_pair]),
         _take_str(["chosen", "rejected"], t_cand), messages, pa.array([REVER_TOOLS_JSON] * T, pa.string())],
        schema=C.REVER_JUDGE_SCHEMA)
    # ---- row order: pairs in a random order, chosen then rejected; apply drops/duplicates
    prng = _rng(seed, "rever-order")
    order = []
    for p in prng.permutation(P):
        for t in (2 * p, 2 * p + 1):
            if not drop[t]:
                order.append(t)
                if dup[t]:
                    order.append(t)
    judge = judge.take(pa.array(np.array(order, np.int64)))
    info = {
        "pairs": int(P),
        "pairs_with_rubric": int(n),
        "pairs_decided_by_principles_only": plan["principle_decided"],
        "pairs_built_from_ultrafeedback": len(link_info),
        "ultrafeedback_links": link_info,
        "tool_call_trajectories": int(tool[np.array(order)].sum()),
        "judge_rows": len(order),
        "verdict_shape_map": int(plan["shape_map"][np.array(order)].sum()),
    }
    return rubric_table, judge, breaks_out, info


# ======================================================================================
# writing
# ======================================================================================
def _shard_paths(out_dir: Path, ds: C.RawDataset, n_rows: int) -> list[Path]:
    nshards = max(1, math.ceil(n_rows / SHARD_ROWS[ds.key]))
    d = ds.data_dir(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    for old in d.glob("train-*.parquet"):
        old.unlink()
    return [d / f"train-{i:05d}-of-{nshards:05d}.parquet" for i in range(nshards)]


def _writer(path: Path, schema: pa.Schema) -> pq.ParquetWriter:
    return pq.ParquetWriter(str(path), schema, compression=COMPRESSION, write_statistics=True)


def _write_table(out_dir: Path, ds: C.RawDataset, table: pa.Table) -> list[str]:
    paths = _shard_paths(out_dir, ds, table.num_rows)
    per = SHARD_ROWS[ds.key]
    for i, p in enumerate(paths):
        with _writer(p, ds.schema) as w:
            w.write_table(table.slice(i * per, per), row_group_size=ROW_GROUP_ROWS[ds.key])
    return [str(p.relative_to(out_dir)) for p in paths]


def rows_at_scale(scale: float) -> dict[str, int]:
    """Row counts of the base datasets at a scale (before planted extra/missing rows)."""
    return {
        "ultrafeedback": int(round(63_967 * scale)),
        "code_ultrafeedback": int(round(10_000 * scale)),
        "rever_rubric": int(round(30_310 * scale)),
    }


def generate(out_dir: str | Path, seed: int = 42, scale: float = 0.01, progress: bool = True,
             datasets: Iterable[str] | None = None, text_length: float = 1.0, bad_rate: float = 0.0) -> dict:
    """Write the raw datasets under ``out_dir`` and return the manifest (also written as
    ``out_dir/_generator_manifest.json``).

    ``datasets`` restricts the datasets written (keys of ``contract.DATASETS_BY_KEY``);
    datasets that others depend on are still generated in memory.  ``text_length``
    scales the length of all free texts (used for the small bundled sample).  ``bad_rate``
    > 0 then plants every kind of bad value of :mod:`preftools.bad_values` on that share of
    the rows (listed in the manifest under ``bad_values``).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    wanted = set(datasets) if datasets else set(C.DATASETS_BY_KEY)
    unknown = wanted - set(C.DATASETS_BY_KEY)
    if unknown:
        raise ValueError(f"unknown datasets: {sorted(unknown)}")
    counts = rows_at_scale(scale)
    tf = float(text_length)
    t0 = time.perf_counter()
    bank = TextBank(seed)
    manifest: dict[str, Any] = {
        "generator_version": GENERATOR_VERSION, "seed": seed, "scale": scale, "text_length": tf,
        "rows": {}, "files": {}, "rever_integrity_breaks": [],
    }

    # ---------------- UltraFeedback
    n_uf = counts["ultrafeedback"]
    n_rub = counts["rever_rubric"]
    need_rever = bool(wanted & {"rever_judge", "rever_rubric"})
    plan_uf = _uf_plan(n_uf, seed)
    # ReVeR pairs with source 'ultrafeedback' built from UF rows: ~30 % of them
    exp_uf_pairs = n_rub * REVER_SOURCE_P[C.REVER_SOURCES.index("ultrafeedback")]
    link_rows = _uf_rever_rows(n_uf, max(3, int(round(REVER_UF_LINK_SHARE * exp_uf_pairs))), plan_uf, seed) \
        if need_rever else np.zeros(0, np.int64)
    uf_links: list[dict] = []
    if "ultrafeedback" in wanted or need_rever:
        ds = C.DATASETS_BY_KEY["ultrafeedback"]
        write = "ultrafeedback" in wanted
        paths = _shard_paths(out, ds, n_uf) if write else []
        per_shard = SHARD_ROWS["ultrafeedback"]
        writers: dict[int, pq.ParquetWriter] = {}
        uf_stats: dict[str, Any] = {"bug_overall_10_low_rating": 0, "rating_na": 0, "rating_invalid": 0, "completions": 0}
        wrong: list[dict] = []
        nchunks = max(1, math.ceil(n_uf / CHUNK_ROWS))
        for ci in _progress(range(nchunks), nchunks, "ultrafeedback", progress):
            r0 = ci * CHUNK_ROWS
            nn = min(CHUNK_ROWS, n_uf - r0)
            table, info, links = _uf_chunk(bank, seed, ci, r0, nn, plan_uf, tf, link_rows)
            uf_links.extend(links)
            for k in uf_stats:
                uf_stats[k] += info["stats"][k]
            wrong.extend(info["wrong_pick"])
            if write:
                si = r0 // per_shard
                if si not in writers:
                    for w in writers.values():
                        w.close()
                    writers = {si: _writer(paths[si], ds.schema)}
                writers[si].write_table(table, row_group_size=ROW_GROUP_ROWS["ultrafeedback"])
            del table
        for w in writers.values():
            w.close()
        if write:
            manifest["rows"]["ultrafeedback"] = n_uf
            manifest["files"]["ultrafeedback"] = [str(p.relative_to(out)) for p in paths]
        manifest["ultrafeedback_planted"] = {
            **uf_stats,
            "rows_empty_completions": plan_uf["empty_completions"].tolist(),
            "rows_one_completion": plan_uf["one_completion"].tolist(),
            "rows_three_completions": plan_uf["three_completions"].tolist(),
            "rows_average_rating_mismatch": plan_uf["average_rating_mismatch"].tolist(),
            "rows_wrong_pick": wrong,
            "duplicate_instruction_pairs": [[int(a), int(b)] for a, b in zip(
                plan_uf["duplicate_instruction_source"], plan_uf["duplicate_instruction"])],
            "note": "row numbers are 0-based positions in file order; picks/scores are computed from "
                    "the published average_rating and overall_score of each completion",
        }

    # ---------------- CodeUltraFeedback + standard
    if wanted & {"code_ultrafeedback", "code_ultrafeedback_standard"}:
        n_code = counts["code_ultrafeedback"]
        rows, cstats = _code_rows(bank, seed, n_code, tf)
        if "code_ultrafeedback" in wanted:
            ds = C.DATASETS_BY_KEY["code_ultrafeedback"]
            t = pa.Table.from_pylist(rows, schema=ds.schema)
            manifest["files"][ds.key] = _write_table(out, ds, t)
            manifest["rows"][ds.key] = t.num_rows
        pairs, skipped = published_script_pairs(_progress(rows, len(rows), "code pairs", progress))
        cstats["script_rows_skipped"] = skipped
        cstats["script_pairs"] = len(pairs)
        manifest["code_ultrafeedback_planted"] = cstats
        if "code_ultrafeedback_standard" in wanted:
            ds = C.DATASETS_BY_KEY["code_ultrafeedback_standard"]
            t = pa.Table.from_pylist(pairs, schema=ds.schema)
            manifest["files"][ds.key] = _write_table(out, ds, t)
            manifest["rows"][ds.key] = t.num_rows
        del rows, pairs

    # ---------------- ReVeR
    if need_rever:
        plan = _rever_plan(n_rub, seed, uf_links)
        rubric, judge, breaks, info = _rever_build(bank, seed, plan, uf_links, tf, progress)
        for key, t in (("rever_rubric", rubric), ("rever_judge", judge)):
            if key in wanted:
                ds = C.DATASETS_BY_KEY[key]
                manifest["files"][key] = _write_table(out, ds, t)
                manifest["rows"][key] = t.num_rows
        manifest["rever_integrity_breaks"] = breaks
        manifest["rever"] = info

    if bad_rate:
        from preftools import bad_values

        manifest["bad_rate"] = bad_rate
        manifest["bad_values"] = bad_values.plant(out, manifest, bad_rate, seed)

    # (no timings or timestamps in the file: it must be byte-identical across runs)
    with open(out / MANIFEST_NAME, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    manifest["seconds"] = round(time.perf_counter() - t0, 2)
    return manifest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m preftools.generate", description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--scale", type=float, default=0.01, help="1.0 = upstream row counts")
    ap.add_argument("--out", required=True, help="output directory (the RAW_DATA_DIR)")
    ap.add_argument("--datasets", default=None,
                    help="comma-separated subset of: " + ",".join(C.DATASETS_BY_KEY))
    ap.add_argument("--text-length", type=float, default=1.0, help="factor on the length of free texts")
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument("--bad-rate", type=float, default=0.0,
                    help="plant every kind of bad value (preftools/bad_values.py) on this share of rows, e.g. 0.01")
    a = ap.parse_args(argv)
    ds = [s.strip() for s in a.datasets.split(",") if s.strip()] if a.datasets else None
    m = generate(a.out, seed=a.seed, scale=a.scale, progress=not a.no_progress, datasets=ds, text_length=a.text_length,
                 bad_rate=a.bad_rate)
    print(json.dumps({"rows": m["rows"], "rever_integrity_breaks": len(m["rever_integrity_breaks"]),
                      "seconds": m["seconds"]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
