"""A second revision of the session's generated raw data, changed in known ways, as upstream
changes a dataset: rows removed, added, reordered, a rating changed. ``revise`` writes it and
returns what was planted; the tests compare the build of it with the session build.

Planted:

* UltraFeedback: one prompt removed and its shard's rows reversed; in another shard, one
  completion of a prompt rated 5 on every aspect (its best-rated pick moves to it) and one prompt
  added (a copy of that row with another instruction), at the end; in a third shard, openbmb's
  overall_score fix (a completion scored 10 whose mean rating is at most 2 scored 1).
* CodeUltraFeedback: one prompt removed; in another, the ratings of two responses swapped (their
  pair flips).
* hh_helpful (a registered dataset): the rows of its train file reversed.
* The registry: one entry added (ADDED_ENTRY, the harmless half of hh-rlhf), in the build's vars.

The prompts removed or changed are ones whose pairs carry no integrity flag and whose prompt
text no other prompt has, so that nothing else may change with them.
"""

from __future__ import annotations

import gzip
import json
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from conftest import Warehouse

UF = "argilla/ultrafeedback-binarized-curation"
CUF = "coseal/CodeUltraFeedback"
REORDERED_EXTRA = ("hh_helpful", "Anthropic/hh-rlhf/helpful-base/train.jsonl.gz")
ADDED_ENTRY = {"name": "hh_harmless", "hub_id": "Anthropic/hh-rlhf", "shape": "transcript",
               "config": "harmless-base", "columns": {"chosen": "chosen", "rejected": "rejected"}, "license": "mit"}
ASPECTS = ("helpfulness", "honesty", "instruction_following", "truthfulness")


@dataclass
class Planted:
    uf_removed: str  # prompt_id
    uf_rerated: str  # prompt_id
    uf_rerated_index: int  # the completion now rated 5 on every aspect
    uf_added_instruction: str
    uf_fixed: list[str]  # prompt_ids with a completion's overall_score 10 set to 1
    cuf_removed: str  # prompt_id
    cuf_swapped: str  # prompt_id
    cuf_swapped_indexes: tuple[int, int]  # (chosen, rejected) before the swap

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self)))

    @classmethod
    def load(cls, path: Path) -> "Planted":
        data = json.loads(path.read_text())
        return cls(**{**data, "cuf_swapped_indexes": tuple(data["cuf_swapped_indexes"])})


def mean_rating(completion: dict) -> float | None:
    """The mean of a completion's valid aspect ratings ("1".."5"), as the marts compute it."""
    from benchmarks.reference import aspect_ratings, mean_rating as mean

    return mean(aspect_ratings(completion))


def clean_prompts(warehouse: Warehouse, dataset: str) -> list[str]:
    """prompt_ids of ``dataset`` whose pairs are all unflagged and whose prompt text is unique."""
    return [r["prompt_id"] for r in warehouse.rows("""
        with texts as (
            select dataset, prompt_id, is_flagged, len(integrity_flags) as n_flags, to_json(prompt)::varchar as text
            from main.preference_pairs
        ),
        shared as (select text from texts group by text having count(distinct (dataset, prompt_id)) > 1)
        select prompt_id from texts
        where dataset = ? and text not in (select text from shared)
        group by prompt_id having bool_and(not is_flagged and n_flags = 0)
        order by prompt_id
    """, [dataset])]


def rewrite_parquet(path: Path, change) -> None:
    table = pq.read_table(path)
    rows = change(table.to_pylist())
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)


def revise(raw_dir: Path, out: Path, warehouse: Warehouse) -> Planted:
    shutil.copytree(raw_dir, out, dirs_exist_ok=True)

    # --- UltraFeedback
    curated = {r["prompt_id"]: r for r in warehouse.rows(
        "select prompt_id, source_file, source_row, n_completions, best_rated_index, score_best_rated"
        " from main.ultrafeedback_curated")}
    clean = [curated[p] for p in clean_prompts(warehouse, "ultrafeedback")]
    removed = clean[0]
    rerated = next(r for r in clean if r["source_file"] != removed["source_file"]
                   and r["n_completions"] >= 2 and r["score_best_rated"] is not None and r["score_best_rated"] < 5)
    rerated_index = next(i for i in range(rerated["n_completions"]) if i != rerated["best_rated_index"])
    added_instruction = None

    def remove_and_reverse(rows):
        del rows[removed["source_row"]]
        return rows[::-1]

    def rerate_and_add(rows):
        nonlocal added_instruction
        row = rows[rerated["source_row"]]
        added = json.loads(json.dumps(row))
        added_instruction = added["instruction"] = "A prompt added upstream: " + (row["instruction"] or "")
        completion = row["completions"][rerated_index]
        annotations = completion["annotations"] = completion["annotations"] or {}
        for aspect in ASPECTS:
            annotations[aspect] = {**(annotations.get(aspect) or {}), "Rating": "5"}
        return rows + [added]

    fixed_rows: list[int] = []

    def overall_score_fix(rows):
        for i, row in enumerate(rows):
            for completion in row["completions"] or []:
                mean = mean_rating(completion) if completion else None
                if completion and completion["overall_score"] == 10 and mean is not None and mean <= 2:
                    completion["overall_score"] = 1.0
                    fixed_rows.append(i)
        return rows

    data = out / UF / "data"
    rewrite_parquet(data / removed["source_file"], remove_and_reverse)
    rewrite_parquet(data / rerated["source_file"], rerate_and_add)
    fixed_file = sorted({r["source_file"] for r in curated.values()} - {removed["source_file"], rerated["source_file"]})[0]
    rewrite_parquet(data / fixed_file, overall_score_fix)
    fixed = sorted({p for p, r in curated.items() if r["source_file"] == fixed_file and r["source_row"] in fixed_rows})

    # --- CodeUltraFeedback
    cuf_clean = set(clean_prompts(warehouse, "code_ultrafeedback"))
    prompts = [r for r in warehouse.rows(
        "select prompt_id, source_row from main.code_ultrafeedback_prompts order by source_file, source_row")
        if r["prompt_id"] in cuf_clean]
    cuf_removed = prompts[0]
    swapped = next(p for p in warehouse.rows(
        "select prompt_id, chosen_response_index, rejected_response_index, chosen_model, rejected_model"
        " from main.code_ultrafeedback_pairs order by pair_id")
        if p["prompt_id"] in cuf_clean and p["prompt_id"] != cuf_removed["prompt_id"]
        and p["chosen_model"] != p["rejected_model"])
    swapped_row = next(r["source_row"] for r in prompts if r["prompt_id"] == swapped["prompt_id"])

    def remove_and_swap(rows):
        ratings = {a["model"]: a["rating"] for a in rows[swapped_row]["annotations"]}
        for a in rows[swapped_row]["annotations"]:
            if a["model"] == swapped["chosen_model"]:
                a["rating"] = ratings[swapped["rejected_model"]]
            elif a["model"] == swapped["rejected_model"]:
                a["rating"] = ratings[swapped["chosen_model"]]
        del rows[cuf_removed["source_row"]]
        return rows

    [cuf_file] = (out / CUF).rglob("*.parquet")
    rewrite_parquet(cuf_file, remove_and_swap)

    # --- a registered dataset's file reordered
    path = out / REORDERED_EXTRA[1]
    with gzip.open(path, "rt", encoding="utf-8") as f:
        lines = [line for line in f if line.strip()]
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.writelines(lines[::-1])

    return Planted(removed["prompt_id"], rerated["prompt_id"], rerated_index, added_instruction, fixed,
                   cuf_removed["prompt_id"], swapped["prompt_id"],
                   (swapped["chosen_response_index"], swapped["rejected_response_index"]))
