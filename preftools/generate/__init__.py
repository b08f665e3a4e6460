"""Deterministic sample-data generator: the five raw preference datasets, stand-ins of extra datasets and eval sets.

Writes the datasets in the Hugging Face Hub layout that the warehouse reads from
``$RAW_DATA_DIR``, each as Parquet or JSON Lines (``--format``; by default as on the Hub:
ReVeR-Traces-Rubric a JSON Lines file at the root of its repo, the others Parquet)::

    DIR/<org>/<dataset>/data/train-0000K-of-0000N.parquet
    DIR/<org>/<dataset>/train.jsonl[.gz]                         (JSON, one shard)
    DIR/<org>/<dataset>/data/train-0000K-of-0000N.jsonl[.gz]     (JSON, several shards)
    DIR/_generator_manifest.json          (files, formats, row counts, planted quirks, integrity breaks,
                                           planted contamination, planted near duplicates, planted
                                           personal data and secrets)

for every dataset of :data:`preftools.inputs.contract.DATASETS`, with exactly the schemas of
:mod:`preftools.inputs.contract`.  The data is synthetic but reproduces the quirks of the
real datasets (see the dataset cards) so that the dbt models and audits have
something to find:

* UltraFeedback (argilla/ultrafeedback-binarized-curation): 4 shards (the card's 1.64 GB under
  ``push_to_hub``'s 500 MB rule) at every scale, rows in blocks by source (evol_instruct first,
  flan_v2_cot 4.7 %), "N/A" ratings (honesty and instruction_following only) and invalid
  rating strings, the ``overall_score`` bug (critique score 1 stored as 10, with a
  clearly negative critique), ties, argilla's published pick columns (with ~1 % of
  rows deliberately wrong, and ~1 % of rows with a published ``average_rating``
  that disagrees with the annotations), empty / short ``completions`` lists,
  duplicated instructions and rows repeated byte for byte.
* coseal/CodeUltraFeedback: annotation lists of 4 items or none, in shuffled order, "N/A"
  ratings, rows whose last annotation is "N/A", invalid ratings ("10", "0"); two planted rows
  with a missing annotation (3 items; listed in the manifest); rows repeated byte for byte
  (listed in the manifest).
* RLHFlow/CodeUltraFeedback-standard: the output of the published processing
  script (dataset card 002) over the coseal rows, bugs included
  (:func:`published_script_pairs`), columns in the card's order.
* OpenRubrics ReVeR-Traces-Rubric / -Judge: rubric generation examples (the rubric prompt in
  the real wording) and judge trajectories (two per rubric), pair ids "<source>:<n>" of 12-30
  characters with sparse random n, tool calls in 58.9 % of trajectories, two verdict shapes,
  pairs built from the generated UltraFeedback rows, and planted integrity breaks listed in
  the manifest.

Same ``seed`` + ``scale`` + ``text_length`` + formats => byte-identical files.

Usage::

    python -m preftools.generate --seed 42 --scale 0.01 --out /tmp/raw
    python -m preftools.generate --seed 42 --scale 1.0 --out /data/raw   # full size, ~0.6 GB
    python -m preftools.generate --format parquet --out /tmp/raw          # every dataset Parquet
    python -m preftools.generate --format rever_rubric=jsonl,ultrafeedback=jsonl.gz --out /tmp/raw
    python -m preftools.generate --ultrafeedback-revision fixed --out /tmp/raw_fixed  # overall_score fixed

The bundled sample in ``sample_data/`` (the default ``RAW_DATA_DIR``) was made with::

    python -m preftools.generate --seed 42 --scale 0.01 --text-length 0.25 --out sample_data

Stand-ins of the extra datasets of examples/extra_datasets.yml (:data:`EXTRA_DATASETS`, by entry
name) are written too, in their own Hub layouts, column names and types (``--format`` does not
apply), from their own random streams, so the files above do not change with them:
HuggingFaceH4/ultrafeedback_binarized, argilla/ultrafeedback-binarized-preferences-cleaned,
RLHFlow/UltraFeedback-preference-standard, openbmb/UltraFeedback (JSON Lines per source) and
Anthropic/hh-rlhf (gzipped JSON Lines per folder), with planted quirks listed in the manifest
under ``extra_datasets``.

Stand-ins of the seven eval sets of examples/eval_sets.yml (:data:`EVAL_SETS`, by entry name;
:mod:`.eval_sets`) are written too, in their Hub layouts, column names and types, the real sizes
times the scale (at least 5 items), from their own random streams and text bank:
truthfulqa/truthful_qa (generation and multiple_choice configs), openai/openai_humaneval,
openai/gsm8k (main and socratic), HuggingFaceH4/mt_bench_prompts (two turns per prompt),
tatsu-lab/alpaca_eval (one JSON array), google/IFEval (JSON Lines at the root) and
allenai/reward-bench (the filtered split); the manifest's ``eval_sets`` lists each one's files, row
counts, the files its entry reads and its number of items. Some of their items are planted in the
training data by the rule of docs/decontamination.md (:mod:`.contamination`): exact copies,
copies in other letter case and punctuation, copies inside a longer prompt, paraphrases just above
and at or below the coverage threshold, short questions inside a prompt and scattered through one,
HumanEval prompts as CodeUltraFeedback instructions, TruthfulQA questions as the instructions of
UltraFeedback's truthful_qa rows, a GSM8K question as an H4 prompt and an MT-Bench follow-up as
the second human turn of an hh-rlhf transcript; each in a row that forms a preference pair, listed
in the manifest under ``contamination`` (dataset, hub_id, file, row, eval_set, item_id, turn, kind,
expect_match, coverage). The eval texts share no 8-gram with a training text by chance, so the
planted cases are the only matches. The eval sets are built whenever anything is generated (the
planted items do not depend on which datasets are written).

Near duplicates by the rule of docs/near-duplicates.md (:mod:`.near_duplicates`) are planted in the
three preference stand-ins (H4, argilla's cleaned set, RLHFlow), each case's rows clean pairs
whose prompt, chosen and rejected are the case's texts: one prompt in other letter case and white
space, one word changed in a long prompt (Jaccard just above 0.8), a template family chaining
A~B~C with A not near C, the same comparison copied with small edits, the same comparison reversed
(a label conflict), near-identical responses within a pair, and near misses just below 0.8 (a
prompt; a copied comparison's rejected response). At least 2 cases of each kind (31 at scale 1.0),
listed in the manifest under ``near_duplicates`` (kind; rows: dataset, hub_id, file relative to
the folder, row, responses_jaccard, responses_near; comparisons: rows, prompt_jaccard,
prompts_near, relations, chosen_jaccard, rejected_jaccard, chosen_rejected_jaccard,
rejected_chosen_jaccard; clusters), each the rule's verdict on the planted texts.

Personal data and secrets by the rule of the PII/secret scan of preference_pairs
(seeds/pii_patterns.csv, seeds/pii_reserved_networks.csv; :mod:`.pii`) are planted in the three
preference stand-ins, each case a clean pair whose prompt, chosen and rejected are the case's texts,
and in coseal's instructions (the prompt of the row's pairs): of each of the nine kinds (e-mail
address, public IP address, AWS access key id, GitHub, OpenAI, Hugging Face and Slack tokens, Google
API key, a PEM private key's header) random values of its format and near misses (a key one
character short or long, a wrong prefix, ``sk-learn``, a private, documentation or other reserved IP
address, an octet above 255, an address without a dot after the @, a public key's header), in the
prompt, the chosen or the rejected response, in code (a snippet: an assignment, a config file, a
shell export, a PEM block) or in prose (a sentence), amid random words. At least 2 values the rule
reports of each kind (31 at scale 1.0) and as many near misses (at least one of each), listed in the
manifest under ``pii`` (dataset, hub_id, file relative to the folder, row, side, context, kind,
variant, value, verdict: the kind the rule reports for the value in its text, null for a near miss),
each planted only when the rule finds exactly that in its row.

The package, by dataset: :mod:`.common` (random streams, the text bank, Arrow string
helpers), :mod:`.ultrafeedback`, :mod:`.code_ultrafeedback` (with RLHFlow's script),
:mod:`.rever`, :mod:`.writer` (the Parquet and JSON files), :mod:`.extra_common`,
:mod:`.extra_pairs` and :mod:`.extra_openbmb` (the stand-ins), :mod:`.eval_sets` and
:mod:`.contamination` (the eval sets and the planted cases), :mod:`.near_duplicates` (the planted
near duplicates), :mod:`.pii` (the planted personal data and secrets); :func:`generate` here runs
them in order and writes the manifest, ``__main__`` is the command line.

Memory: every dataset is built and written a bounded chunk of rows at a time (UltraFeedback in
its :data:`CHUNK_ROWS`-row random streams, the others in :func:`.writer.write_chunk_rows`-row
chunks of :class:`.common.LazyStrings` columns whose random draws are all made up front), so
peak memory does not grow with ``scale`` (about 0.5-0.6 GB at scale 1 and 4); the files are
the same bytes as when each dataset was built whole. A JSON dataset is written as Parquet
first and converted shard by shard, streamed through DuckDB (:func:`.writer.write_json`).

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

import json
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np

from preftools.generate import bad_values
from preftools.generate.code_ultrafeedback import generate_code_ultrafeedback, published_script_pairs
from preftools.generate.common import GENERATOR_VERSION, MANIFEST_NAME, GenerationRun, TextBank
from preftools.generate.contamination import plan_contamination
from preftools.generate.eval_sets import EVAL_SETS, build_eval_sets, write_eval_sets
from preftools.generate.extra_openbmb import generate_openbmb
from preftools.generate.extra_pairs import (
    cross_duplicates,
    generate_argilla,
    generate_h4,
    generate_hh,
    generate_rlhflow,
    near_duplicate_cases,
    pii_cases,
)
from preftools.generate.near_duplicates import plan_near_duplicates
from preftools.generate.near_duplicates import record as record_near_duplicates
from preftools.generate.pii import plan_pii
from preftools.generate.pii import record as record_pii
from preftools.generate.rever import REVER_SOURCE_P, REVER_UF_LINK_SHARE, generate_rever
from preftools.generate.ultrafeedback import (
    CHUNK_ROWS,
    CRITIQUE_TEMPLATE_COMPOUND,
    CRITIQUE_TEMPLATES,
    ULTRAFEEDBACK_REVISIONS,
    generate_ultrafeedback,
    plan_ultrafeedback,
    rows_for_rever_pairs,
)
from preftools.generate.writer import (
    COMPRESSION,
    DEFAULT_FORMATS,
    FORMATS,
    ROW_GROUP_ROWS,
    SHARD_COUNT,
    SHARD_ROWS,
    parse_formats,
)
from preftools.inputs import contract

__all__ = [
    "CHUNK_ROWS", "COMPRESSION", "CRITIQUE_TEMPLATES", "CRITIQUE_TEMPLATE_COMPOUND", "DEFAULT_FORMATS", "EVAL_SETS",
    "EXTRA_DATASETS",
    "FORMATS", "GENERATOR_VERSION", "MANIFEST_NAME", "ROW_GROUP_ROWS", "SHARD_COUNT", "SHARD_ROWS", "TextBank",
    "ULTRAFEEDBACK_REVISIONS", "generate", "parse_formats", "published_script_pairs", "rows_at_scale",
]

REVER_DATASETS = {"rever_judge", "rever_rubric"}
CODE_DATASETS = {"code_ultrafeedback", "code_ultrafeedback_standard"}
# The stand-ins of the extra datasets of examples/extra_datasets.yml, by entry name (in the
# registry's order: a cross-dataset duplicate repeats a pair of the stand-in before it).
EXTRA_DATASETS = ("h4_ultrafeedback", "argilla_ultrafeedback_cleaned", "rlhflow_ultrafeedback",
                  "openbmb_ultrafeedback", "hh_helpful")


def rows_at_scale(scale: float) -> dict[str, int]:
    """Row counts of the base datasets at a scale (before planted extra/missing rows)."""
    return {
        "ultrafeedback": int(round(63_967 * scale)),
        "code_ultrafeedback": int(round(10_000 * scale)),
        "rever_rubric": int(round(30_310 * scale)),
    }


def _ultrafeedback_rows_for_rever(n_rever_pairs: int) -> int:
    """How many UltraFeedback rows ReVeR pairs are built from: ~30 % of the pairs expected to
    have source 'ultrafeedback'."""
    expected = n_rever_pairs * REVER_SOURCE_P[contract.REVER_SOURCES.index("ultrafeedback")]
    return max(3, int(round(REVER_UF_LINK_SHARE * expected)))


def generate(out_dir: str | Path, seed: int = 42, scale: float = 0.01, progress: bool = True,
             datasets: Iterable[str] | None = None, text_length: float = 1.0, bad_rate: float = 0.0,
             formats: str | Mapping[str, str] | None = None, ultrafeedback_revision: str = "original") -> dict:
    """Write the raw datasets under ``out_dir`` and return the manifest (also written as
    ``out_dir/_generator_manifest.json``).

    ``datasets`` restricts the datasets written (keys of ``contract.DATASETS_BY_KEY``, of
    :data:`EXTRA_DATASETS` and of :data:`EVAL_SETS`); datasets that others depend on are still
    generated in memory (the eval sets always: the training data holds their planted items).  ``text_length``
    scales the length of all free texts (used for the small bundled sample).  ``bad_rate``
    > 0 then plants every kind of bad value of :mod:`preftools.generate.bad_values` on that share of
    the rows (listed in the manifest under ``bad_values``).  ``formats`` chooses the file format
    of each dataset (:func:`.writer.parse_formats`: ``"jsonl"``, ``"rever_rubric=jsonl.gz"``,
    a mapping; default :data:`DEFAULT_FORMATS`); writing a dataset first removes its data files
    of any format. ``ultrafeedback_revision`` "fixed" writes UltraFeedback with openbmb's
    overall_score fix applied (:func:`.ultrafeedback.overall_score_fix`; every other file as with
    "original"), so two folders differ as the two upstream revisions do.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    wanted = set(datasets) if datasets else set(contract.DATASETS_BY_KEY) | set(EXTRA_DATASETS) | set(EVAL_SETS)
    unknown = wanted - set(contract.DATASETS_BY_KEY) - set(EXTRA_DATASETS) - set(EVAL_SETS)
    if unknown:
        raise ValueError(f"unknown datasets: {sorted(unknown)}")
    if ultrafeedback_revision not in ULTRAFEEDBACK_REVISIONS:
        raise ValueError(f"unknown UltraFeedback revision {ultrafeedback_revision!r}; one of {ULTRAFEEDBACK_REVISIONS}")
    extras = wanted & set(EXTRA_DATASETS)
    evals = wanted & set(EVAL_SETS)
    wanted -= extras | evals
    file_formats = parse_formats(formats)
    counts = rows_at_scale(scale)
    started = time.perf_counter()
    manifest: dict[str, Any] = {
        "generator_version": GENERATOR_VERSION, "seed": seed, "scale": scale, "text_length": float(text_length),
        "rows": {}, "files": {}, "formats": {}, "rever_integrity_breaks": [],
    }
    # the eval sets first: the training data holds their planted items (only the texts are kept)
    eval_sets = build_eval_sets(seed, scale, float(text_length))
    write_eval_sets(out, eval_sets, evals, manifest)
    plan = plan_contamination(seed, eval_sets)
    del eval_sets
    near_plan = plan_near_duplicates(seed, near_duplicate_cases(scale)) if extras else None
    pii_plan = plan_pii(seed, pii_cases(scale))
    run = GenerationRun(out_dir=out, seed=seed, text_factor=float(text_length), bank=TextBank(seed),
                        wanted=frozenset(wanted), progress=progress, formats=file_formats,
                        ultrafeedback_revision=ultrafeedback_revision, contamination=plan,
                        near_duplicates=near_plan, pii=pii_plan)

    # UltraFeedback first: ReVeR builds some of its pairs from its rows
    need_rever = bool(wanted & REVER_DATASETS)
    ultrafeedback_plan = plan_ultrafeedback(counts["ultrafeedback"], seed)
    if need_rever:
        link_rows = rows_for_rever_pairs(_ultrafeedback_rows_for_rever(counts["rever_rubric"]), ultrafeedback_plan,
                                         seed)
    else:
        link_rows = np.zeros(0, np.int64)
    links = []
    if "ultrafeedback" in wanted or need_rever:
        links = generate_ultrafeedback(run, counts["ultrafeedback"], ultrafeedback_plan, link_rows, manifest)
    if wanted & CODE_DATASETS:
        generate_code_ultrafeedback(run, counts["code_ultrafeedback"], manifest)
    if need_rever:
        generate_rever(run, counts["rever_rubric"], links, manifest)
    if extras:
        generate_extras(run, scale, extras, manifest)
        record_near_duplicates(manifest, near_plan)
    record_pii(manifest, pii_plan)

    if bad_rate:
        manifest["bad_rate"] = bad_rate
        manifest["bad_values"] = bad_values.plant(out, manifest, bad_rate, seed)

    # (no timings or timestamps in the file: it must be byte-identical across runs)
    with open(out / MANIFEST_NAME, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    manifest["seconds"] = round(time.perf_counter() - started, 2)
    return manifest


def generate_extras(run: GenerationRun, scale: float, wanted: set[str], manifest: dict) -> None:
    """Write the stand-ins of :data:`EXTRA_DATASETS` in ``wanted`` (manifest ``extra_datasets``);
    a stand-in another one repeats pairs of is still built (not written) when only that one is wanted."""
    need_rlhflow = "rlhflow_ultrafeedback" in wanted
    need_argilla = need_rlhflow or "argilla_ultrafeedback_cleaned" in wanted
    n_from_h4, n_from_argilla = cross_duplicates(scale)
    h4_donors = []
    if need_argilla or "h4_ultrafeedback" in wanted:
        h4_donors = generate_h4(run, scale, manifest, "h4_ultrafeedback" in wanted, n_from_h4 if need_argilla else 0)
    if need_argilla:
        argilla_donors = generate_argilla(run, scale, manifest, "argilla_ultrafeedback_cleaned" in wanted, h4_donors,
                                          n_from_argilla if need_rlhflow else 0)
        if need_rlhflow:
            generate_rlhflow(run, scale, manifest, True, argilla_donors)
    if "openbmb_ultrafeedback" in wanted:
        generate_openbmb(run, scale, manifest)
    if "hh_helpful" in wanted:
        generate_hh(run, scale, manifest, True)
