"""The expected contents of the decontamination tables (``eval_items``, ``contamination_matches``,
``contamination_summary``), computed in plain Python from the rule of docs/decontamination.md,
restated in the docstrings below; never from the SQL.

Eval items are read from the raw eval files (``preftools.inputs.registry.local_files``: the Hub's rule of
:mod:`preftools.inputs.hub_layout` with the entry's config and splits, as for ``extra_datasets``), with
pyarrow, Python's json or csv; the training side is given as rows of ``preference_pairs``
(``dataset``, ``prompt_id``, ``prompt`` as a list of ``{role, content}``), one per pair.

:func:`expected` is the entry point. :func:`compare` is the rule for one eval text against one user
turn, written as the doc states it (the hand-made cases in test_contamination.py check it);
:func:`matches` computes the same verdicts for every eval text and every prompt through an index
of the eval texts' n-grams (the doc's "hash joins on the n-grams, eval side first"), and the tests
hold it to :func:`matches_brute_force` on small inputs.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from preftools.generate.contamination_rule import (  # noqa: F401 (the rule, for the tests)
    Verdict, compare, contains, covered_positions, longest_run, ngram_windows, tokens, tokens_slow)

DEFAULTS = {"ngram": 8, "threshold": 0.5, "max_eval_share": 2.0}
EVAL_ITEM_COLUMNS = ("eval_set", "item_id", "field", "turn", "text", "n_tokens")
MATCH_COLUMNS = ("dataset", "prompt_id", "eval_set", "item_id", "field", "turn", "match_kind", "coverage",
                 "longest_shared_run")
MATCH_KEY = ("dataset", "prompt_id", "eval_set", "item_id", "field", "turn")
SUMMARY_COLUMNS = ("dataset", "eval_set", "n_eval_items", "n_eval_items_matched", "pct_eval_set_matched",
                   "n_prompts_matched", "n_pairs_flagged", "exceeds_limit")


def settings(contamination: dict | None) -> dict:
    """The var ``contamination`` with the doc's defaults for the keys it leaves out."""
    return {**DEFAULTS, **(contamination or {})}


# ------------------------------------------------------------------------------ eval texts

def eval_set_files(entry: dict, raw_dir: str | Path) -> list[Path]:
    """The entry's data files under ``raw_dir/<hub_id>/``, picked as for ``extra_datasets`` (the
    card's ``configs:`` or the Hub's default patterns, the entry's config and splits), in path order
    (the doc: "its files in path order")."""
    from preftools.inputs.registry import local_files

    repo = Path(raw_dir) / entry["hub_id"]
    found = local_files(repo, entry.get("config"), entry.get("splits"))
    return [repo / f.path for f in sorted(found, key=lambda f: f.path)]


def read_rows(path: Path) -> list[dict]:
    """The rows of one file, in file order: Parquet with pyarrow, JSON Lines / a JSON array (gzip or
    zstd compressed too) with Python's json, CSV with Python's csv (every value a string, an empty
    field NULL)."""
    name = path.name.lower()
    if name.endswith(".parquet"):
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    raw = path.read_bytes()
    if name.endswith(".gz"):
        raw = gzip.decompress(raw)
        name = name[:-3]
    elif name.endswith(".zst"):
        import zstandard

        raw = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw)).read()
        name = name[:-4]
    text = raw.decode("utf-8")
    if name.endswith(".csv"):  # the header row names the columns; an empty field is NULL
        return [{k: (v if v != "" else None) for k, v in row.items()} for row in csv.DictReader(io.StringIO(text, newline=""))]
    if name.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    try:
        data = json.loads(text)
    except json.JSONDecodeError:  # JSON Lines in a .json file
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return data if isinstance(data, list) else [data]


def field_texts(value: Any) -> list[str | None]:
    """The texts of one field of one item: a string gives one (turn 0), a list one per element
    (turn = its index); NULL or an empty list one NULL text (so every item is in eval_items)."""
    if value is None:
        return [None]
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        if not value:
            return [None]
        if not all(v is None or isinstance(v, str) for v in value):
            raise ValueError(f"a list field holds a non-string: {value!r}")
        return list(value)
    raise ValueError(f"not a string or a list of strings: {value!r}")


def eval_items(eval_sets: list[dict], raw_dir: str | Path) -> list[dict]:
    """One row per eval text (EVAL_ITEM_COLUMNS), in eval set, item, field (entry order), turn order.
    ``item_id`` is the item's 0-based position in its eval set: files in path order, rows in file
    order."""
    out = []
    for entry in eval_sets:
        item_id = 0
        files = eval_set_files(entry, raw_dir)
        if not files:
            raise ValueError(f"eval set {entry['name']}: no data file under {Path(raw_dir) / entry['hub_id']}")
        for path in files:
            for row in read_rows(path):
                for name in entry["fields"]:
                    for turn, text in enumerate(field_texts(row.get(name))):
                        out.append({"eval_set": entry["name"], "item_id": item_id, "field": name, "turn": turn,
                                    "text": text, "n_tokens": len(tokens(text))})
                item_id += 1
    return out


# ------------------------------------------------------------------------------ one eval text, one user turn

@dataclass
class Best:
    """One eval text against every user turn of one prompt: the best coverage, whether some user
    turn matches / is exact, and the longest covered run (start, length). Verdicts are added user
    turn by user turn in prompt order and a run replaces the kept one only when longer, so ties
    keep the earliest run of the first user turn that has a run that long."""

    coverage: float = 0.0
    matched: bool = False
    exact: bool = False
    run: tuple[int, int] | None = None

    def add(self, v: Verdict) -> None:
        self.coverage = max(self.coverage, v.coverage)
        self.matched |= v.matched
        self.exact |= v.exact
        if v.run is not None and (self.run is None or v.run[1] > self.run[1]):
            self.run = v.run


def match_rows(key: tuple, items: list[dict], eval_tokens: list[list[str]], found: dict[int, Best]) -> list[dict]:
    """The rows of one prompt (``key`` = (dataset, prompt_id)) from its verdicts by eval text
    (``found``: index in ``items`` -> Best): one per eval text (eval_set, item_id, field, turn) that
    some user turn matches."""
    out = []
    for e in sorted(found):
        best = found[e]
        if not best.matched:
            continue
        item, (start, length) = items[e], best.run
        out.append({
            "dataset": key[0], "prompt_id": key[1], "eval_set": item["eval_set"], "item_id": item["item_id"],
            "field": item["field"], "turn": item["turn"], "match_kind": "exact" if best.exact else "ngram",
            "coverage": best.coverage, "longest_shared_run": " ".join(eval_tokens[e][start:start + length]),
        })
    return out


# ------------------------------------------------------------------------------ training texts

def user_turns(pairs: Iterable[dict]) -> dict[tuple[str, str], list[str | None]]:
    """The user turns of each distinct (dataset, prompt_id), in prompt order (if two pairs of one
    prompt_id had different prompts, the user turns of both, each text once, first seen first)."""
    out: dict[tuple[str, str], list] = {}
    for p in pairs:
        texts = out.setdefault((p["dataset"], p["prompt_id"]), [])
        for message in p["prompt"] or []:
            if (message or {}).get("role") == "user" and message.get("content") not in texts:
                texts.append(message.get("content"))
    return out


# ------------------------------------------------------------------------------ every eval text, every prompt

def matches_brute_force(items: list[dict], pairs: Iterable[dict], ngram: int = 8, threshold: float = 0.5,
                        **_) -> list[dict]:
    """contamination_matches by :func:`compare` on every (eval text, prompt, user turn): for small inputs."""
    eval_tokens = [tokens(item["text"]) for item in items]
    out = []
    for key, texts in user_turns(pairs).items():
        turn_tokens = [tokens(t) for t in texts]
        found = {}
        for e, toks in enumerate(eval_tokens):
            best = found[e] = Best()
            for u in turn_tokens:
                best.add(compare(toks, u, ngram, threshold))
        out += match_rows(key, items, eval_tokens, found)
    return sort_matches(out)


def matches(items: list[dict], pairs: Iterable[dict], ngram: int = 8, threshold: float = 0.5, **_) -> list[dict]:
    """contamination_matches (MATCH_COLUMNS), the same rows as :func:`matches_brute_force`, through
    indexes of the eval side: its n-grams (texts of n or more tokens), its short texts (fewer), its
    whole token lists (exact); each user turn is looked up in them, and only the eval texts it
    shares something with are compared."""
    n = ngram
    eval_tokens = [tokens(item["text"]) for item in items]
    grams: dict[tuple, list[tuple[int, int]]] = defaultdict(list)  # n-gram -> (eval text, start)
    short: dict[tuple, list[int]] = defaultdict(list)  # tokens of a text shorter than n -> eval texts
    whole: dict[tuple, list[int]] = defaultdict(list)  # all tokens -> eval texts
    for e, toks in enumerate(eval_tokens):
        m = len(toks)
        if m == 0:
            continue
        whole[tuple(toks)].append(e)
        if m < n:
            short[tuple(toks)].append(e)
        else:
            for i in range(m - n + 1):
                grams[tuple(toks[i:i + n])].append((e, i))
    short_lengths = sorted({len(k) for k in short})

    out = []
    for key, texts in user_turns(pairs).items():
        best: dict[int, Best] = {}
        for text in texts:
            u = tokens(text)
            if not u:
                continue
            verdicts: dict[int, Verdict] = {}
            windows: dict[int, list[int]] = defaultdict(list)
            for g in {tuple(u[j:j + n]) for j in range(len(u) - n + 1)}:
                for e, i in grams.get(g, ()):
                    windows[e].append(i)
            exact = set(whole.get(tuple(u), ()))
            for e, starts in windows.items():
                positions = covered_positions(starts, n)
                coverage = len(positions) / len(eval_tokens[e])
                verdicts[e] = Verdict(e in exact, e in exact or coverage > threshold, coverage, longest_run(positions))
            for k in short_lengths:
                for j in range(len(u) - k + 1):
                    for e in short.get(tuple(u[j:j + k]), ()):
                        verdicts[e] = Verdict(e in exact, True, 1.0, (0, k))
            for e, v in verdicts.items():
                best.setdefault(e, Best()).add(v)
        out += match_rows(key, items, eval_tokens, best)
    return sort_matches(out)


def sort_matches(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda r: tuple(r[k] for k in MATCH_KEY))


# ------------------------------------------------------------------------------ the summary

def summary(items: list[dict], match_rows: list[dict], pairs: Iterable[dict], datasets: Iterable[str],
            eval_set_names: Iterable[str], max_eval_share: float = 2.0, **_) -> list[dict]:
    """contamination_summary: one row per (dataset, eval set) for every dataset and eval set given,
    zeros included. n_eval_items: the eval set's items; n_eval_items_matched: its items with a match
    in the dataset; pct_eval_set_matched = 100 * matched / items; n_prompts_matched: the dataset's
    prompts with a match in the eval set; n_pairs_flagged: the dataset's pairs whose prompt has one;
    exceeds_limit: pct > max_eval_share. (An eval set without items: pct 0.)"""
    n_pairs: dict[tuple[str, str], int] = defaultdict(int)
    for p in pairs:
        n_pairs[(p["dataset"], p["prompt_id"])] += 1
    n_items: dict[str, set] = defaultdict(set)
    for item in items:
        n_items[item["eval_set"]].add(item["item_id"])
    hit_items: dict[tuple, set] = defaultdict(set)
    hit_prompts: dict[tuple, set] = defaultdict(set)
    for r in match_rows:
        hit_items[(r["dataset"], r["eval_set"])].add(r["item_id"])
        hit_prompts[(r["dataset"], r["eval_set"])].add(r["prompt_id"])
    out = []
    for dataset in datasets:
        for name in eval_set_names:
            total, matched = len(n_items[name]), len(hit_items[(dataset, name)])
            pct = 100.0 * matched / total if total else 0.0
            prompts = hit_prompts[(dataset, name)]
            out.append({
                "dataset": dataset, "eval_set": name, "n_eval_items": total, "n_eval_items_matched": matched,
                "pct_eval_set_matched": pct, "n_prompts_matched": len(prompts),
                "n_pairs_flagged": sum(n_pairs[(dataset, p)] for p in prompts),
                "exceeds_limit": pct > max_eval_share,
            })
    return out


# ------------------------------------------------------------------------------ everything

@dataclass
class Expected:
    eval_items: list[dict]
    matches: list[dict]
    summary: list[dict]
    flagged: set[tuple[str, str]] = field(default_factory=set)  # (dataset, prompt_id) with a match


def expected(raw_dir: str | Path, eval_sets: list[dict], contamination: dict | None, pairs: list[dict],
             datasets: Iterable[str]) -> Expected:
    """The three tables for eval sets ``eval_sets`` (entries of the var) read under ``raw_dir``, the
    var ``contamination``, the rows of preference_pairs ``pairs`` (dataset, prompt_id, prompt; one
    per pair) and the summary's ``datasets``."""
    conf = settings(contamination)
    items = eval_items(eval_sets, raw_dir)
    found = matches(items, pairs, **conf)
    table = summary(items, found, pairs, datasets, [e["name"] for e in eval_sets], **conf)
    return Expected(items, found, table, {(r["dataset"], r["prompt_id"]) for r in found})


def explain(items: list[dict], text_key: tuple, prompt: list[dict], ngram: int = 8, threshold: float = 0.5,
            **_) -> list[dict]:
    """For a failing comparison: the eval text ``text_key`` = (eval_set, item_id, field, turn)
    against each user turn of ``prompt`` by :func:`compare`, one dict per user turn."""
    texts = [it for it in items if (it["eval_set"], it["item_id"], it["field"], it["turn"]) == tuple(text_key)]
    out = []
    for it in texts:
        e = tokens(it["text"])
        for i, message in enumerate(prompt or []):
            if (message or {}).get("role") != "user":
                continue
            v = compare(e, tokens(message.get("content")), ngram, threshold)
            run = " ".join(e[v.run[0]:v.run[0] + v.run[1]]) if v.run else None
            out.append({"message": i, "m": len(e), "exact": v.exact, "matched": v.matched,
                        "coverage": v.coverage, "run": run})
    return out
