"""Reference implementation for the benchmark: the computations of the warehouse, written the
way the upstream dataset scripts are (the RLHFlow script that made
RLHFlow/CodeUltraFeedback-standard): read the raw Parquet with pyarrow, turn rows into Python
dicts, loop and compute in Python.

It is the "what a user would otherwise write" side of ``make bench`` and the independent
side of its honesty check: every rule below is written from the rules as the marts document
them (docs/marts.md, the doc blocks in models/docs/), not from the dbt models' SQL, and
``benchmarks.run`` compares its outputs with the marts.

Computed (one Parquet file per output under ``--out``):

* ``uf_completions``  UltraFeedback, one row per raw row x completion: the four aspect
  ratings ("1".."5" -> int, anything else -> None) and their mean (None when all are None).
* ``uf_prompts``      UltraFeedback, one row per raw row: best-rated and best-overall picks
  (None ranks lowest, first in list order on ties), the candidates each random alternate
  may be drawn from (strictly lower score, else any other completion; none with fewer than
  two completions) and one draw among them.
* ``code_published``  the RLHFlow script's output on coseal/CodeUltraFeedback, in order,
  with its stale ``rating`` variable (carried across rows, as in the script) and its string
  comparison; ``code_quarantine`` the rows on which the script raises (KeyError for a model
  without annotation, also on a row with no annotations whose stale rating is not "N/A").
* ``code_corrected``  every unordered pair of two responses with valid, different integer
  ratings, chosen = the higher.
* ``rever_trajectories`` one row per judge row: the response score (Hard Rules satisfied +
  mean Principle score / 101) from the user JSON and the LAST ``<judge>`` block of the last
  assistant message, None when the verdict is unusable; ``rever_pairs`` one row per id.

Usage::

    python -m benchmarks.reference --raw-dir benchmarks/cache/seed42-scale1.0 --out /tmp/ref
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import sys
import time
from hashlib import md5
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from preftools.inputs.hub_layout import local_data_files, read_table

HUB_IDS = {
    "ultrafeedback": "argilla/ultrafeedback-binarized-curation",
    "code_ultrafeedback": "coseal/CodeUltraFeedback",
    "code_ultrafeedback_standard": "RLHFlow/CodeUltraFeedback-standard",
    "rever_judge": "OpenRubrics/ReVeR-Traces-Judge",
    "rever_rubric": "OpenRubrics/ReVeR-Traces-Rubric",
}
ASPECTS = ("helpfulness", "honesty", "instruction_following", "truthfulness")
VALID_RATINGS = {"1": 1, "2": 2, "3": 3, "4": 4, "5": 5}
KIND_TAG = re.compile(r"\[([^\[\]]*)\]\s*$")
BATCH_ROWS = 1000


# ----------------------------------------------------------------------------- reading

def iter_rows(raw_dir: Path, key: str, columns: list[str] | None) -> Iterator[tuple[Path, int, dict]]:
    """(file path, 0-based row in file, row as a dict) for every raw row, files in the Hub's
    order (preftools.inputs.hub_layout). ``columns=None`` decodes whole rows, as ``for example in
    load_dataset(...)`` does."""
    repo = Path(raw_dir) / HUB_IDS[key]
    files = local_data_files(repo)
    if not files:
        raise FileNotFoundError(f"no data file for {key} under {raw_dir}")
    for f in files:
        path = repo / f.path
        row_number = 0
        if f.format == "parquet":
            batches = pq.ParquetFile(path).iter_batches(batch_size=BATCH_ROWS, columns=columns)
        else:
            table = read_table(repo, [f])
            batches = (table.select(columns) if columns else table).to_batches(BATCH_ROWS)
        for batch in batches:
            for row in batch.to_pylist():
                yield path, row_number, row
                row_number += 1


def text_md5(text: str) -> str:
    return md5(text.encode()).hexdigest()


def exact_key(parts: Iterable[str | None]) -> str:
    """The exact key of text parts: md5 of the parts' md5s joined with ':' (None as 'null')."""
    return text_md5(":".join("null" if p is None else text_md5(p) for p in parts))


def list_exact_key(items: list | None, parts: Callable[[Any], list] = lambda x: [x]) -> str | None:
    """The exact key of a list: md5 of its elements' exact keys (over ``parts(element)``) joined
    with ':'; None for None."""
    return None if items is None else text_md5(":".join(exact_key(parts(x)) for x in items))


def unordered_pair_key(a: str | None, b: str | None) -> str:
    """The exact key of two keys in either order (the smaller first; None counts as the text 'null')."""
    a, b = sorted("null" if v is None else v for v in (a, b))
    return exact_key([a, b])


def row_keys(dataset: str, rows: list[tuple[str, int, str]]) -> list[str]:
    """The key of each raw row, given as (full path, row in file, content key): md5 of
    '<dataset>:<content key>:<occurrence>', where occurrence counts the rows before it with the
    same content key, by path then row."""
    occurrence: dict[str, int] = {}
    keys: dict[int, str] = {}
    for i in sorted(range(len(rows)), key=lambda i: rows[i][:2]):
        content = rows[i][2]
        n = occurrence.get(content, 0)
        occurrence[content] = n + 1
        keys[i] = text_md5(f"{dataset}:{content}:{n}")
    return [keys[i] for i in range(len(rows))]


def messages_key(messages: list | None) -> str | None:
    """The exact key of a message list, over each message's role and content."""
    return list_exact_key(messages, lambda m: [None, None] if m is None else [m.get("role"), m.get("content")])


# ----------------------------------------------------------------------------- UltraFeedback

def parse_rating(value: Any) -> int | None:
    """"1".."5" -> int; "N/A", "0", "10", "", None, text -> None."""
    return VALID_RATINGS.get(value) if isinstance(value, str) else None


def aspect_ratings(completion: dict) -> list[int | None]:
    """The four aspect ratings of a completion, parsed, in ASPECTS order."""
    annotations = completion.get("annotations") or {}
    return [parse_rating((annotations.get(a) or {}).get("Rating")) for a in ASPECTS]


def mean_rating(ratings: list[int | None]) -> float | None:
    """The mean of the valid ratings; None when there is none."""
    valid = [r for r in ratings if r is not None]
    return sum(valid) / len(valid) if valid else None


def rank_key(value: float | None) -> tuple[bool, float]:
    """Sort key where None is below every number."""
    return (value is not None, value if value is not None else 0.0)


def best_index(values: list[float | None]) -> int | None:
    """Position of the highest value, None lowest, the first position on ties."""
    best = None
    for i, v in enumerate(values):
        if best is None or rank_key(v) > rank_key(values[best]):
            best = i
    return best


def alternate_candidates(values: list[float | None], best: int | None) -> list[int]:
    """The completions an alternate of ``best`` may be drawn from: the others with a strictly
    lower value (None lower than any number); if there is none, every other completion."""
    if best is None or len(values) < 2:
        return []
    others = [i for i in range(len(values)) if i != best]
    lower = [i for i in others if rank_key(values[i]) < rank_key(values[best])]
    return lower or others


def ultrafeedback_content_key(row: dict) -> str:
    """What an UltraFeedback row is about: its source, instruction and completions' models and
    responses (not their ratings)."""
    return exact_key([row["source"], row["instruction"], list_exact_key(
        row["completions"], lambda c: [None, None] if c is None else [c["model"], c["response"]])])


def ultrafeedback(raw_dir: Path, seed: int, whole_rows: bool = False) -> tuple[list[dict], list[dict]]:
    rng = random.Random(seed)
    completions_out: list[dict] = []
    prompts_out: list[dict] = []
    contents: list[tuple[str, int, str]] = []
    columns = None if whole_rows else ["source", "instruction", "completions"]
    for path, source_row, row in iter_rows(raw_dir, "ultrafeedback", columns):
        source_file = path.name
        contents.append((str(path), source_row, ultrafeedback_content_key(row)))
        completions = row["completions"]
        averages: list[float | None] = []
        overall: list[float | None] = []
        models: list[str | None] = []
        for index, completion in enumerate(completions or []):
            ratings = aspect_ratings(completion)
            average = mean_rating(ratings)
            averages.append(average)
            overall.append(completion["overall_score"])
            models.append(completion["model"])
            completions_out.append({
                "source_file": source_file, "source_row": source_row, "completion_index": index,
                "model": completion["model"],
                **{f"{a}_rating": r for a, r in zip(ASPECTS, ratings)},
                "average_rating": average,
            })
        best_rated = best_index(averages)
        best_overall = best_index(overall)
        rated_pool = alternate_candidates(averages, best_rated)
        overall_pool = alternate_candidates(overall, best_overall)
        prompts_out.append({
            "source_file": source_file, "source_row": source_row,
            "n_completions": None if completions is None else len(completions),
            "best_rated_index": best_rated,
            "best_rated_model": None if best_rated is None else models[best_rated],
            "score_best_rated": None if best_rated is None else averages[best_rated],
            "best_overall_index": best_overall,
            "best_overall_model": None if best_overall is None else models[best_overall],
            "score_best_overall": None if best_overall is None else overall[best_overall],
            "random_for_best_rated_candidates": rated_pool,
            "random_for_best_overall_candidates": overall_pool,
            "random_for_best_rated_index": rng.choice(rated_pool) if rated_pool else None,
            "random_for_best_overall_index": rng.choice(overall_pool) if overall_pool else None,
        })
    for prompt, prompt_id in zip(prompts_out, row_keys("ultrafeedback", contents)):
        prompt["prompt_id"] = prompt_id
    return completions_out, prompts_out


# ----------------------------------------------------------------------------- CodeUltraFeedback

UNSET = object()  # `rating` before the script's first annotation loop has assigned it


def published_script_row(example: dict, prompt_id: str, rating: Any = UNSET) -> tuple[list[dict], Any, str | None]:
    """The RLHFlow script's loop body for one coseal row, line for line (its bugs: the doc block
    ``stale_variable_bug`` in models/docs/_shared.md). ``rating`` is the script's variable as the
    previous rows left it (the stale-variable bug spans rows: a row with no annotations tests the
    previous row's last rating).
    Returns (the pairs it appends, ``rating`` after the row, the exception it raises or None);
    a row that raises appends nothing: the warehouse sends it to quarantine instead of crashing."""
    data = []
    try:
        prompt = example["instruction"]
        responses = {}
        for row in example["responses"]:
            model_name, response = row["model"], row["response"]
            responses[model_name] = response
        annotations = {}
        for row in example["annotations"]:
            model_name, rating = row["model"], row["rating"]
            annotations[model_name] = rating
        preference = "code-" + example["preference"]  # noqa: F841 (unused, as in the card)
        all_models = []

        for model_name in responses.keys():
            if rating is UNSET:
                raise NameError("name 'rating' is not defined")
            if rating == "N/A":  # the stale variable: the LAST annotation's rating
                continue
            all_models.append(model_name)

        all_combinations = list(itertools.combinations(all_models, 2))
        assert len(all_combinations) == len(all_models) * (len(all_models) - 1) / 2

        for combination in all_combinations:
            response1 = responses[combination[0]]
            rating1 = annotations[combination[0]]
            response2 = responses[combination[1]]
            rating2 = annotations[combination[1]]

            if rating1 == rating2:
                continue

            if rating1 > rating2:  # string comparison: "N/A" > "5", "10" < "2"
                chosen_model, chosen_response, chosen_rating = combination[0], response1, rating1
                rejected_model, rejected_response, rejected_rating = combination[1], response2, rating2
            elif rating1 < rating2:
                chosen_model, chosen_response, chosen_rating = combination[1], response2, rating2
                rejected_model, rejected_response, rejected_rating = combination[0], response1, rating1

            data.append({
                # the script builds 'code-' + preference (and crashes on a NULL one) but never
                # writes it: the marts keep the raw aspect
                "prompt_id": prompt_id, "preference": example["preference"],
                "chosen_model": chosen_model, "rejected_model": rejected_model,
                "chosen": [{"content": prompt, "role": "user"}, {"content": chosen_response, "role": "assistant"}],
                "rejected": [{"content": prompt, "role": "user"}, {"content": rejected_response, "role": "assistant"}],
                "chosen_score": chosen_rating, "rejected_score": rejected_rating,
            })
    except (KeyError, TypeError, NameError) as error:
        return [], rating, type(error).__name__
    return data, rating, None


def code_ultrafeedback_content_key(example: dict) -> str:
    """What a CodeUltraFeedback row is about: its preference, instruction, models and responses."""
    return exact_key([example["preference"], example["instruction"], list_exact_key(example["models"]),
                      list_exact_key(example["responses"], lambda r: [None, None] if r is None else [r["model"], r["response"]])])


def code_ultrafeedback_standard_content_key(row: dict) -> str:
    """What a published RLHFlow pair is about: its two message lists, in either order."""
    return exact_key([unordered_pair_key(messages_key(row["chosen"]), messages_key(row["rejected"]))])


def code_ultrafeedback(raw_dir: Path, whole_rows: bool = False) -> tuple[list[dict], list[dict], list[dict], int]:
    """(published-logic pairs in script order, quarantined rows, corrected pairs, n responses)."""
    published: list[dict] = []
    quarantine: list[dict] = []
    corrected: list[dict] = []
    n_responses = 0
    rating = UNSET  # the script's `rating`, carried from row to row
    columns = ["instruction", "preference", "responses", "annotations"]
    rows = list(iter_rows(raw_dir, "code_ultrafeedback", None if whole_rows else columns + ["models"]))
    prompt_ids = row_keys("code_ultrafeedback", [(str(path), i, code_ultrafeedback_content_key(example))
                                                 for path, i, example in rows])
    for (path, source_row, example), prompt_id in zip(rows, prompt_ids):
        n_responses += len(example["responses"] or [])

        # --- the published script, line for line
        row_pairs, rating, error = published_script_row(example, prompt_id, rating)
        if error is not None:
            quarantine.append({"prompt_id": prompt_id, "reason": error})
        for pair in row_pairs:
            pair["pair_order"] = len(published)
            published.append(pair)

        # --- the corrected rule: valid integer ratings, different, chosen = higher
        preference = example["preference"]
        last_rating = {a["model"]: a["rating"] for a in example["annotations"] or [] if a is not None}
        rated = []
        for index, row in enumerate(example["responses"] or []):
            if row is None:
                continue
            rating_raw = last_rating.get(row["model"])  # a model's last annotation, as in the script
            rated.append((index, row["model"], VALID_RATINGS.get(rating_raw)))
        for (i, model_i, rating_i), (j, model_j, rating_j) in itertools.combinations(rated, 2):
            if rating_i is None or rating_j is None or rating_i == rating_j:
                continue
            hi, lo = ((i, model_i, rating_i), (j, model_j, rating_j)) if rating_i > rating_j \
                else ((j, model_j, rating_j), (i, model_i, rating_i))
            corrected.append({
                "prompt_id": prompt_id, "preference": preference,
                "chosen_response_index": hi[0], "rejected_response_index": lo[0],
                "chosen_model": hi[1], "rejected_model": lo[1],
                "chosen_rating": hi[2], "rejected_rating": lo[2], "score_margin": hi[2] - lo[2],
            })
    return published, quarantine, corrected, n_responses


# ----------------------------------------------------------------------------- ReVeR

def rever_rubric_content_key(row: dict) -> str:
    """What a rubric row is about: its id."""
    return exact_key([row["id"]])


def rever_judge_content_key(row: dict) -> str:
    """What a judge row is about: its id and candidate."""
    return exact_key([row["id"], row["candidate"]])


class _Invalid(ValueError):
    pass


def strict_json(text: Any) -> Any:
    """RFC 8259 JSON or _Invalid: no NaN/Infinity (Python's json takes them); an object is kept
    as ("__object__", [(key, value), ...]) so that repeated keys can be seen."""
    if text is None:
        raise _Invalid("null")

    def reject_constant(c):
        raise _Invalid(c)

    try:
        return json.loads(text, object_pairs_hook=lambda pairs: ("__object__", pairs),
                          parse_constant=reject_constant)
    except (json.JSONDecodeError, _Invalid) as e:
        raise _Invalid(str(e)) from None


def is_object(v: Any) -> bool:
    return isinstance(v, tuple) and len(v) == 2 and v[0] == "__object__"


def json_get(obj: Any, key: str) -> Any:
    """First value of ``key`` in a parsed object, None when absent or not an object."""
    if not is_object(obj):
        return None
    for k, v in obj[1]:
        if k == key:
            return v
    return None


def json_text(v: Any) -> str | None:
    """A JSON scalar as SQL reads it as text (strings unquoted, numbers as written)."""
    if v is None:
        return None
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return json.dumps(v)
    return None  # an object or array as an id matches no rubric id


def criterion_kind(criterion: Any) -> str:
    """hard_rule / principle by the criterion's closing tag, else unknown (a criterion that is
    not a string included)."""
    m = KIND_TAG.search(criterion) if isinstance(criterion, str) else None
    return {"Hard Rule": "hard_rule", "Principle": "principle"}.get(m.group(1) if m else None, "unknown")


def judge_trajectory(messages: list[dict] | None) -> dict:
    """One judge trajectory read and scored: the task (rubric items, instruction, response) from
    the user message's JSON; the verdict from the JSON of the LAST <judge> block of the last
    assistant message, a list of {rubric_id, score} (bare or under a single key) or a map keyed
    by rubric_id; ``verdict_status`` names the first thing that makes it unusable, else "ok".
    response_score = Hard Rules satisfied + mean Principle score / 101 (0 without Principles)."""
    msgs = [m for m in messages or [] if m is not None]
    user = next((m["content"] for m in msgs if m["role"] == "user"), None)
    assistants = [m["content"] for m in msgs if m["role"] == "assistant"]
    out = {
        "used_tool": any(m["role"] in ("tool_call", "tool") for m in msgs),
        "n_rubric_items": 0, "hard_rules_satisfied": None, "principle_mean": None, "response_score": None,
        "criteria": None, "instruction": None, "response": None,
    }
    try:
        task = strict_json(user)
    except _Invalid:
        task = None
    rubrics = json_get(task, "rubrics")
    if not isinstance(rubrics, list):
        return {**out, "verdict_status": "malformed_user_message"}
    items = [(json_text(json_get(r, "rubric_id")), json_get(r, "criterion")) for r in rubrics]
    out.update(n_rubric_items=len(items), criteria=[c for _, c in items],
               instruction=json_get(task, "instruction"), response=json_get(task, "response"))
    if not items:
        return {**out, "verdict_status": "no_rubric_items"}

    # a block: the text after a <judge> up to the first </judge> (an unclosed <judge> opens none)
    pieces = assistants[-1].split("<judge>")[1:] if assistants and assistants[-1] is not None else []
    blocks = [p.split("</judge>", 1)[0] for p in pieces if "</judge>" in p]
    out["n_judge_blocks"] = len(blocks)
    if not blocks:
        return {**out, "verdict_status": "no_judge_block"}
    try:
        verdict = strict_json(blocks[-1].strip())
    except _Invalid:
        return {**out, "verdict_status": "malformed_json"}

    # entries: (rubric_id, entry object) in document order
    if isinstance(verdict, list):
        entries = [(json_text(json_get(e, "rubric_id")), e) for e in verdict]
    elif is_object(verdict) and len(verdict[1]) == 1 and isinstance(verdict[1][0][1], list):
        entries = [(json_text(json_get(e, "rubric_id")), e) for e in verdict[1][0][1]]
    elif is_object(verdict):
        entries = list(verdict[1])
    else:
        return {**out, "verdict_status": "unrecognised_shape"}

    ids = [rid for rid, _ in items]
    by_id: dict[str | None, list] = {}
    for rid, e in entries:
        by_id.setdefault(rid, []).append(e)
    if any(rid not in ids for rid, _ in entries):
        return {**out, "verdict_status": "unknown_rubric_id"}
    if any(len(v) > 1 for v in by_id.values()) or len(set(ids)) != len(ids):
        return {**out, "verdict_status": "duplicate_rubric_id"}
    if any(rid not in by_id for rid in ids):
        return {**out, "verdict_status": "missing_items"}
    kinds = [criterion_kind(c) for _, c in items]
    if "unknown" in kinds:
        return {**out, "verdict_status": "unknown_rubric_kind"}
    scores = [json_get(by_id[rid][0], "score") for rid in ids]
    if any(isinstance(s, bool) or not isinstance(s, (int, float)) for s in scores):
        return {**out, "verdict_status": "invalid_score"}
    for k, s in zip(kinds, scores):
        if (k == "hard_rule" and s not in (0, 1)) or (k == "principle" and not (0 <= s <= 100 and s == int(s))):
            return {**out, "verdict_status": "score_out_of_range"}

    hard = sum(1 for k, s in zip(kinds, scores) if k == "hard_rule" and s == 1)
    princ = [s for k, s in zip(kinds, scores) if k == "principle"]
    mean = sum(princ) / len(princ) if princ else None
    return {**out, "verdict_status": "ok", "hard_rules_satisfied": hard, "principle_mean": mean,
            "response_score": hard + (mean / 101 if princ else 0.0)}


def response_score(messages: list[dict] | None) -> tuple[float | None, int | None, float | None]:
    """(score, Hard Rules satisfied, Principle mean) of one judge trajectory; (None, None, None)
    when the task or the verdict cannot be read or does not score every item validly."""
    t = judge_trajectory(messages)
    return t["response_score"], t["hard_rules_satisfied"], t["principle_mean"]


def retention(chosen: dict | None, rejected: dict | None) -> tuple[str, bool | None]:
    """(decided_by, kept) of a pair from its two scored trajectories: the chosen response must
    score strictly higher, compared exactly (Hard Rules satisfied first, then the Principle means,
    a missing mean as 0); "unscored" (kept None) when a side has no score, "tie" (not kept)."""
    c = chosen["response_score"] if chosen else None
    r = rejected["response_score"] if rejected else None
    if c is None or r is None:
        return "unscored", None
    if chosen["hard_rules_satisfied"] != rejected["hard_rules_satisfied"]:
        return "hard_rules", chosen["hard_rules_satisfied"] > rejected["hard_rules_satisfied"]
    c_mean, r_mean = chosen["principle_mean"] or 0, rejected["principle_mean"] or 0
    if c_mean != r_mean:
        return "principles", c_mean > r_mean
    return "tie", False


def rever(raw_dir: Path, whole_rows: bool = False) -> tuple[list[dict], list[dict]]:
    trajectories: list[dict] = []
    first_of: dict[tuple[str, str], dict] = {}
    ids: dict[str, None] = {}
    columns = None if whole_rows else ["id", "candidate", "messages"]
    for path, source_row, row in iter_rows(raw_dir, "rever_judge", columns):
        score, hard, principle_mean = response_score(row["messages"])
        trajectory = {"source_file": path.name, "source_row": source_row, "id": row["id"],
                      "candidate": row["candidate"], "response_score": score,
                      "hard_rules_satisfied": hard, "principle_mean": principle_mean}
        trajectories.append(trajectory)
        if row["id"] is not None:
            ids.setdefault(row["id"])
            first_of.setdefault((row["id"], row["candidate"]), trajectory)  # files/rows in order
    for _, _, row in iter_rows(raw_dir, "rever_rubric", None if whole_rows else ["id"]):
        if row["id"] is not None:
            ids.setdefault(row["id"])
    pairs = []
    for pair_id in ids:
        chosen, rejected = first_of.get((pair_id, "chosen")), first_of.get((pair_id, "rejected"))
        pairs.append({"id": pair_id, "chosen_score": chosen and chosen["response_score"],
                      "rejected_score": rejected and rejected["response_score"],
                      "kept": retention(chosen, rejected)[1]})
    return trajectories, pairs


# ----------------------------------------------------------------------------- main

def run(raw_dir: Path, out_dir: Path, seed: int = 42, whole_rows: bool = False) -> dict:
    """Compute everything and write one Parquet file per output; returns timings and counts."""
    out_dir.mkdir(parents=True, exist_ok=True)
    timings: dict[str, float] = {}
    outputs: dict[str, list[dict]] = {}

    t = time.perf_counter()
    outputs["uf_completions"], outputs["uf_prompts"] = ultrafeedback(raw_dir, seed, whole_rows)
    timings["ultrafeedback"] = time.perf_counter() - t

    t = time.perf_counter()
    outputs["code_published"], outputs["code_quarantine"], outputs["code_corrected"], n_responses = \
        code_ultrafeedback(raw_dir, whole_rows)
    timings["code_ultrafeedback"] = time.perf_counter() - t

    t = time.perf_counter()
    outputs["rever_trajectories"], outputs["rever_pairs"] = rever(raw_dir, whole_rows)
    timings["rever"] = time.perf_counter() - t

    t = time.perf_counter()
    for name, rows in outputs.items():
        if name == "code_published":  # the message lists are the script's output; keep the keys only
            rows = [{k: v for k, v in r.items() if k not in ("chosen", "rejected")} for r in rows]
        pq.write_table(pa.Table.from_pylist(rows), out_dir / f"{name}.parquet")
    timings["write"] = time.perf_counter() - t
    counts = {name: len(rows) for name, rows in outputs.items()}
    counts["code_responses"] = n_responses
    return {"seconds": {k: round(v, 3) for k, v in timings.items()}, "rows": counts}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.reference", description=__doc__.split("\n\n")[0])
    ap.add_argument("--raw-dir", required=True, type=Path, help="RAW_DATA_DIR in the Hub layout")
    ap.add_argument("--out", required=True, type=Path, help="folder for the output Parquet files")
    ap.add_argument("--seed", type=int, default=42, help="seed of the alternate draws")
    ap.add_argument("--whole-rows", action="store_true",
                    help="decode every column of each row (as iterating a datasets.Dataset does), "
                         "not only the columns used")
    a = ap.parse_args(argv)
    print(json.dumps(run(a.raw_dir, a.out, a.seed, a.whole_rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
