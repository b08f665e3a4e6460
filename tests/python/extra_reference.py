"""The expected warehouse contents for the extra datasets (the `extra_datasets` registry),
computed in plain Python from the raw files and the rules a user of the registry reads: the
shapes, pairing, checks and mixture of docs/extra-datasets.md and the column descriptions of
``preference_pairs`` (models/marts/cross_dataset/_cross_dataset__models.yml), restated in the
docstrings below; never from the SQL.

Raw files are listed with ``preftools.inputs.registry.data_files(entry, raw_dir)`` (the Hub's rule,
restricted to the entry's config and splits) and read with ``conftest.raw_file_rows`` (pyarrow or
Python's json, no DuckDB).

:func:`expected` is the entry point: the pairs of every extra dataset (the columns of
``preference_pairs``), their integrity flags, the rejected rated rows, the raw row count of every
entry and the training mixture.
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pii_reference
from benchmarks import reference as rules

# The columns of main.preference_pairs that the reference computes (all but score_kind, a label made
# from the entry's shape and score_range).
PAIR_COLUMNS = (
    "dataset", "split", "pair_id", "source", "prompt_id", "prompt", "chosen", "rejected", "margin",
    "chosen_model", "rejected_model", "chosen_score", "rejected_score", "score_margin",
    "integrity_flags", "is_flagged",
)
FLAGS = (
    "identical_responses", "empty_response", "score_not_higher", "unparseable_score",
    "score_out_of_range", "duplicate_pair", "cross_dataset_duplicate",
    "near_duplicate_pair", "label_conflict", "near_identical_responses", "contains_secret",
)
REJECT_REASONS = ("no_completions", "no_lower_rated_completion", "no_rated_pair")
BUILTIN_DATASETS = ("ultrafeedback", "code_ultrafeedback", "rever")  # registered first, in this order

TRANSCRIPT_MARKERS = {"\n\nHuman:": "user", "\n\nAssistant:": "assistant"}
NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
# "collapsing white space" for cross_dataset_duplicate: the repo's normalisation (test_cross_dataset):
# runs of RE2 \s (tab, newline, form feed, CR, space) -> one space, then trimmed.
WHITE_RUN = re.compile(r"[\t\n\f\r ]+")


def md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()


# ------------------------------------------------------------------------------ messages

def message(role: str | None, content: str | None) -> dict:
    return {"role": role, "content": content}


def user(text: str | None) -> list[dict]:
    return [message("user", text)]


def assistant(text: str | None) -> list[dict]:
    return [message("assistant", text)]


def as_turns(value: list) -> list[dict]:
    """A list of turns as {role, content} (other fields of a turn dropped)."""
    return [message((t or {}).get("role"), (t or {}).get("content")) for t in value]


def is_blank(text: str | None) -> bool:
    return text is None or text.strip() == ""


def is_empty(messages: list[dict]) -> bool:
    """No turn, or every content NULL or blank."""
    return all(is_blank(t["content"]) for t in messages)


def normalise(text: str | None) -> str | None:
    if text is None:
        return None
    return WHITE_RUN.sub(" ", text.lower()).strip(" ")


def exact_key(messages: list[dict]) -> tuple:
    return tuple((t["role"], t["content"]) for t in messages)


def normalised_key(messages: list[dict]) -> tuple:
    return tuple((t["role"], normalise(t["content"])) for t in messages)


# ------------------------------------------------------------------------------ raw rows

def staged_text(value) -> str | None:
    """A column read as text (None for a list or None)."""
    return None if value is None or isinstance(value, list) else str(value)


def content_key(row: dict, entry: dict) -> str:
    """What a raw row is about, as benchmarks/reference.py keys it: a rated row's prompt; a pair's
    prompt and its two responses in either order (never scores or ratings)."""
    if entry["shape"] == "rated_completions":
        return rules.exact_key([staged_text(column(row, entry, "prompt"))])
    prompt = mapped_messages(column(row, entry, "prompt"), "user") if "prompt" in entry["columns"] else []
    sides = []
    for side in ("chosen", "rejected"):
        value = column(row, entry, side)
        messages = [] if entry["shape"] == "transcript" else mapped_messages(value, "assistant")
        sides.append(rules.exact_key([rules.messages_key(messages), staged_text(value)]))
    return rules.exact_key([rules.messages_key(prompt), rules.unordered_pair_key(*sides)])


def entry_files(entry: dict, raw_dir: Path) -> list[Path]:
    """The entry's data files (the Hub's rule, its config and splits), by preftools.inputs.registry."""
    from preftools.inputs.registry import data_files, extra_datasets

    [validated] = extra_datasets({"extra_datasets": [entry]})
    return [Path(f) for f in data_files(validated, raw_dir)]


def entry_rows(entry: dict, raw_dir: Path) -> list[tuple[str, int, dict, str]]:
    """(file name, 0-based row in the file, row, prompt_id) for every raw row of the entry, in
    file order; prompt_id is the row's key (benchmarks/reference.py's row_keys)."""
    from conftest import raw_file_rows

    rows = [(path, i, row) for path in entry_files(entry, raw_dir) for i, row in enumerate(raw_file_rows(path))]
    keys = rules.row_keys(entry["name"], [(str(path), i, content_key(row, entry)) for path, i, row in rows])
    return [(path.name, i, row, key) for (path, i, row), key in zip(rows, keys)]


def column(row: dict, entry: dict, canonical: str):
    """The value of a canonical column (None when the entry does not map it)."""
    name = entry.get("columns", {}).get(canonical)
    return None if name is None else row.get(name)


def field_path(obj: Any, path: str):
    """The value at a dotted field path inside a completion (None when any step is missing)."""
    for part in path.split("."):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def maps_scores(entry: dict) -> bool:
    columns = entry.get("columns", {})
    if entry["shape"] == "rated_completions":
        return True
    return entry["shape"] == "preference" and ("chosen_score" in columns or "rejected_score" in columns)


# ------------------------------------------------------------------------------ scores

def parse_score(value) -> float | None:
    """A number, or a string holding one (trimmed: "4", "4.5", "-1", "1e0"); anything else
    (None, "N/A", "", text, a boolean) -> None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and NUMBER.fullmatch(value.strip()):
        return float(value.strip())
    return None


def in_range(score: float, score_range) -> bool:
    lo, hi = score_range
    return lo <= score <= hi


# ------------------------------------------------------------------------------ preference

def common_prefix(a: list, b: list) -> int:
    k = 0
    while k < len(a) and k < len(b) and a[k] == b[k]:
        k += 1
    return k


def implicit_prompt_lists(chosen: list[dict], rejected: list[dict]) -> tuple[list, list, list]:
    """k = common prefix of chosen and rejected (turn equality); p = the last user turn among the
    first k; prompt = chosen[:p+1], responses the rest. No user turn in the prefix: prompt = []."""
    k = common_prefix(chosen, rejected)
    users = [i for i in range(k) if chosen[i]["role"] == "user"]
    if not users:
        return [], chosen, rejected
    p = users[-1]
    return chosen[:p + 1], chosen[p + 1:], rejected[p + 1:]


def implicit_prompt_strings(chosen: str, rejected: str) -> tuple[list, list, list]:
    """idx = common character prefix; one back when the character before it is a space;
    prompt = [user chosen[:idx]], responses the rest as assistant turns."""
    idx = common_prefix(chosen, rejected)
    if idx > 0 and chosen[idx - 1] == " ":
        idx -= 1
    return user(chosen[:idx]), assistant(chosen[idx:]), assistant(rejected[idx:])


def strip_prompt(prompt: list[dict], response_value, response: list[dict]) -> list[dict]:
    """A response given as a list that starts with all of the prompt's turns loses them."""
    if isinstance(response_value, list) and response[:len(prompt)] == prompt:
        return response[len(prompt):]
    return response


def mapped_messages(value, role: str) -> list[dict]:
    """A string -> [{role, s}]; a list -> as is (None -> no turn)."""
    if isinstance(value, str):
        return [message(role, value)]
    return as_turns(value or [])


def preference_messages(row: dict, entry: dict) -> tuple[list, list, list]:
    chosen_value, rejected_value = column(row, entry, "chosen"), column(row, entry, "rejected")
    if "prompt" in entry.get("columns", {}):
        prompt = mapped_messages(column(row, entry, "prompt"), "user")
        chosen = strip_prompt(prompt, chosen_value, mapped_messages(chosen_value, "assistant"))
        rejected = strip_prompt(prompt, rejected_value, mapped_messages(rejected_value, "assistant"))
        return prompt, chosen, rejected
    if isinstance(chosen_value, str) and isinstance(rejected_value, str):
        return implicit_prompt_strings(chosen_value, rejected_value)
    return implicit_prompt_lists(mapped_messages(chosen_value, "assistant"),
                                 mapped_messages(rejected_value, "assistant"))


# ------------------------------------------------------------------------------ transcript

def parse_transcript(text: str | None) -> list[dict]:
    """Split on "\\n\\nHuman:" / "\\n\\nAssistant:" into user / assistant turns, contents trimmed;
    the text before the first marker is a user turn when not blank."""
    if text is None:
        return []
    pattern = "(" + "|".join(re.escape(m) for m in TRANSCRIPT_MARKERS) + ")"
    parts = re.split(pattern, text)
    turns = [message("user", parts[0].strip())] if parts[0].strip() else []
    for marker, content in zip(parts[1::2], parts[2::2]):
        turns.append(message(TRANSCRIPT_MARKERS[marker], content.strip()))
    return turns


def transcript_messages(row: dict, entry: dict) -> tuple[list, list, list]:
    return implicit_prompt_lists(parse_transcript(column(row, entry, "chosen")),
                                 parse_transcript(column(row, entry, "rejected")))


# ------------------------------------------------------------------------------ rated completions

def rating_paths(entry: dict) -> list[str]:
    paths = entry["columns"]["rating"]
    return [paths] if isinstance(paths, str) else list(paths)


def completion_rating(completion: dict, paths: list[str], score_range) -> float | None:
    """The mean of the rating paths' values that are numbers (or strings holding one) within
    score_range; None when there is none."""
    values = [parse_score(field_path(completion, p)) for p in paths]
    values = [v for v in values if v is not None and in_range(v, score_range)]
    return sum(values) / len(values) if values else None


def below(x: float | None, y: float | None) -> bool:
    """x strictly below y; None is below every number, nothing is below None."""
    if y is None:
        return False
    return x is None or x < y


def best_rated(ratings: list[float | None]) -> int:
    """The highest rating, None below every number, ties to the first in list order."""
    best = 0
    for i in range(1, len(ratings)):
        if below(ratings[best], ratings[i]):
            best = i
    return best


def draw_lower(ratings: list[float | None], best: int, random_seed, prompt_id: str) -> int | None:
    """The candidate strictly below the best with the smallest md5('<seed>:best_rated:<prompt_id>:<i>')."""
    lower = [i for i in range(len(ratings)) if i != best and below(ratings[i], ratings[best])]
    if not lower:
        return None
    return min(lower, key=lambda i: md5(f"{random_seed}:best_rated:{prompt_id}:{i}"))


def rated_pairs_of_row(ratings: list[float | None], pairing: str, random_seed, prompt_id: str):
    """(chosen index, rejected index) pairs of one row, or the reject reason (a string)."""
    if not ratings:
        return "no_completions"
    if pairing == "all_pairs":
        pairs = [(i, j) if ratings[i] > ratings[j] else (j, i)
                 for i in range(len(ratings)) for j in range(i + 1, len(ratings))
                 if ratings[i] is not None and ratings[j] is not None and ratings[i] != ratings[j]]
        return sorted(pairs) or "no_rated_pair"
    best = best_rated(ratings)
    lower = draw_lower(ratings, best, random_seed, prompt_id)
    return [(best, lower)] if lower is not None else "no_lower_rated_completion"


# ------------------------------------------------------------------------------ pairs

def new_pair(entry, order, prompt_id, pair_id, source, prompt, chosen, rejected,
             chosen_model=None, rejected_model=None, chosen_score=None, rejected_score=None) -> dict:
    """A pair's columns (flags, split, margins filled by :func:`finish_pairs`); ``_order`` is
    (source_file, source_row, chosen index, rejected index): "earlier" for duplicate_pair."""
    return {
        "dataset": entry["name"], "pair_id": pair_id, "source": source, "prompt_id": prompt_id,
        "prompt": prompt, "chosen": chosen, "rejected": rejected,
        "chosen_model": chosen_model, "rejected_model": rejected_model,
        "chosen_score": chosen_score, "rejected_score": rejected_score,
        "_order": order,
    }


def preference_pairs(entry: dict, rows) -> tuple[list, list]:
    pairs = []
    for file_name, i, row, prompt_id in rows:
        prompt, chosen, rejected = preference_messages(row, entry)
        pairs.append(new_pair(
            entry, (file_name, i, 0, 0), prompt_id, md5(f"{entry['name']}:{prompt_id}"),
            column(row, entry, "source"), prompt, chosen, rejected,
            column(row, entry, "chosen_model"), column(row, entry, "rejected_model"),
            parse_score(column(row, entry, "chosen_score")), parse_score(column(row, entry, "rejected_score")),
        ))
    return pairs, []


def transcript_pairs(entry: dict, rows) -> tuple[list, list]:
    pairs = []
    for file_name, i, row, prompt_id in rows:
        prompt, chosen, rejected = transcript_messages(row, entry)
        pairs.append(new_pair(entry, (file_name, i, 0, 0), prompt_id, md5(f"{entry['name']}:{prompt_id}"),
                              column(row, entry, "source"), prompt, chosen, rejected))
    return pairs, []


def rated_completion_pairs(entry: dict, rows, random_seed) -> tuple[list, list]:
    columns, name = entry["columns"], entry["name"]
    pairing = entry.get("pairing", "best_vs_lower")
    paths = rating_paths(entry)
    pairs, rejects = [], []
    for file_name, i, row, prompt_id in rows:
        completions = column(row, entry, "completions") or []
        ratings = [completion_rating(c or {}, paths, entry["score_range"]) for c in completions]
        found = rated_pairs_of_row(ratings, pairing, random_seed, prompt_id)
        if isinstance(found, str):
            rejects.append({"dataset": name, "source_file": file_name, "source_row": i, "reason": found})
            continue
        prompt = user(column(row, entry, "prompt"))

        def response(c):
            return assistant(field_path(completions[c], columns["response"]))

        def model(c):
            return field_path(completions[c], columns["model"]) if "model" in columns else None

        for c, r in found:
            pair_id = md5(f"{name}:{prompt_id}:{c}:{r}") if pairing == "all_pairs" else md5(f"{name}:{prompt_id}")
            pairs.append(new_pair(entry, (file_name, i, c, r), prompt_id, pair_id, column(row, entry, "source"),
                                  prompt, response(c), response(r), model(c), model(r), ratings[c], ratings[r]))
    return pairs, rejects


def pair_flags(pair: dict, entry: dict, pii_flag_personal: bool = False) -> set[str]:
    """The flags that need no other pair, the PII scan's from its reference (pii_reference: on the
    pair's texts; contains_personal_data with the var ``pii_flag_personal``)."""
    flags = pii_reference.pair_flags(pair, pii_flag_personal)
    c, r = pair["chosen_score"], pair["rejected_score"]
    if pair["chosen"] == pair["rejected"]:
        flags.add("identical_responses")
    if is_empty(pair["chosen"]) or is_empty(pair["rejected"]):
        flags.add("empty_response")
    if c is not None and r is not None and c <= r:
        flags.add("score_not_higher")
    if maps_scores(entry) and (c is None or r is None):
        flags.add("unparseable_score")
    if entry.get("score_range") and any(s is not None and not in_range(s, entry["score_range"]) for s in (c, r)):
        flags.add("score_out_of_range")
    return flags


def pair_key(pair: dict, key=exact_key) -> tuple:
    return (key(pair["prompt"]), key(pair["chosen"]), key(pair["rejected"]))


def finish_pairs(pairs: list[dict], entry: dict, earlier_keys: set, train_on_flagged_pairs: bool,
                 other_flags: dict[str, set[str]], pii_flag_personal: bool = False) -> None:
    """Margins, the flags (duplicate_pair within the dataset, cross_dataset_duplicate against
    ``earlier_keys``: normalised pair keys of the datasets registered before; ``other_flags``, pair_id
    -> the flags other rules' references give it, such as the near-duplicate checks), split."""
    seen = set()
    for pair in sorted(pairs, key=lambda p: p["_order"]):
        flags = pair_flags(pair, entry, pii_flag_personal) | other_flags.get(pair["pair_id"], set())
        key = pair_key(pair)
        if key in seen:
            flags.add("duplicate_pair")
        seen.add(key)
        if pair_key(pair, normalised_key) in earlier_keys:
            flags.add("cross_dataset_duplicate")
        c, r = pair["chosen_score"], pair["rejected_score"]
        scored = maps_scores(entry) and c is not None and r is not None
        lo, hi = entry.get("score_range") or (None, None)
        pair["score_margin"] = c - r if scored else None
        pair["margin"] = (c - r) / (hi - lo) if scored else None
        pair["integrity_flags"] = sorted(flags)
        pair["is_flagged"] = bool(flags)
        pair["split"] = entry["name"] + ("_flagged" if flags and not train_on_flagged_pairs else "")


def entry_pairs(entry: dict, raw_dir: Path, random_seed) -> tuple[list, list, int]:
    """(pairs, rejects, raw row count) of one registry entry, flags not yet set."""
    rows = entry_rows(entry, raw_dir)
    if entry["shape"] == "preference":
        pairs, rejects = preference_pairs(entry, rows)
    elif entry["shape"] == "transcript":
        pairs, rejects = transcript_pairs(entry, rows)
    elif entry["shape"] == "rated_completions":
        pairs, rejects = rated_completion_pairs(entry, rows, random_seed)
    else:
        raise ValueError(f"unknown shape {entry['shape']!r}")
    return pairs, rejects, len(rows)


# ------------------------------------------------------------------------------ mixture

def mixture_pick(pair_ids: list[str], fraction: float, random_seed) -> list[str]:
    """Of a dataset's clean pairs, the first floor(fraction * n + 0.5) by md5('<seed>:mixture:<pair_id>')."""
    ordered = sorted(pair_ids, key=lambda p: md5(f"{random_seed}:mixture:{p}"))
    return ordered[:math.floor(fraction * len(ordered) + 0.5)]


# ------------------------------------------------------------------------------ everything

@dataclass
class Expected:
    pairs: dict[str, list[dict]] = field(default_factory=dict)  # entry name -> its pairs
    rejects: list[dict] = field(default_factory=list)  # dataset, source_file, source_row, reason
    raw_rows: dict[str, int] = field(default_factory=dict)  # entry name -> raw rows
    mixture: dict[str, list[str]] = field(default_factory=dict)  # dataset -> picked pair_ids (sorted)

    def rows_with_pair(self, name: str) -> int:
        return len({p["_order"][:2] for p in self.pairs[name]})


def expected(raw_dir: Path, entries: list[dict], random_seed, mixture: dict | None,
             builtin_pairs: list[dict], train_on_flagged_pairs: bool = False,
             other_flags: dict[str, set[str]] | None = None, pii_flag_personal: bool = False) -> Expected:
    """The expected extra-dataset contents of a warehouse built on ``raw_dir`` with these
    registry entries. ``builtin_pairs``: the warehouse's preference_pairs rows of the built-in
    datasets (dataset, pair_id, prompt, chosen, rejected, is_flagged), for cross_dataset_duplicate
    and the mixture; ``other_flags``: pair_id -> flags of rules checked by their own references
    (near_duplicates_reference.warehouse_flags); ``pii_flag_personal``: the var of that name."""
    out = Expected()
    earlier = {pair_key(p, normalised_key) for p in builtin_pairs if p["dataset"] in BUILTIN_DATASETS}
    for entry in entries:
        pairs, rejects, n = entry_pairs(entry, raw_dir, random_seed)
        finish_pairs(pairs, entry, earlier, train_on_flagged_pairs, other_flags or {}, pii_flag_personal)
        earlier |= {pair_key(p, normalised_key) for p in pairs}
        out.pairs[entry["name"]] = pairs
        out.rejects += rejects
        out.raw_rows[entry["name"]] = n
    for dataset, fraction in (mixture or {}).items():
        if dataset in out.pairs:
            clean = [p["pair_id"] for p in out.pairs[dataset] if not p["integrity_flags"]]
        else:
            clean = [p["pair_id"] for p in builtin_pairs if p["dataset"] == dataset and not p["is_flagged"]]
        out.mixture[dataset] = sorted(mixture_pick(clean, fraction, random_seed))
    return out
