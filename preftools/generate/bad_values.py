"""Bad values at a chosen rate: ``python -m preftools.generate --bad-rate 0.01``.

After the generator has written the five datasets, :func:`plant` rewrites their files with
every kind of bad value the tests plant by hand (tests/python/test_bad_values.py, the hand-made
ReVeR rows of tests/python/test_rever.py), each on ``rate`` of the rows of its dataset (at
least one row; the 1 MB response on at most :data:`MAX_BIG_RESPONSES` rows), on distinct rows,
deterministically from the seed. Every planted row is listed in the manifest under
``bad_values`` with the place the warehouse must show it (``expect``): a rejects model and its
reason, an integrity kind, or a value kept as is. tests/python/test_bad_rate.py builds such data
and checks every row.

ReVeR kinds act on one trajectory of a pair the generator left clean (no planted break), so
the expected reason is the planted one; RLHFlow/CodeUltraFeedback-standard is rewritten as the
published script's output on the modified coseal rows, as upstream.

Files are found by the Hub's rule (:meth:`preftools.inputs.contract.RawDataset.data_files`), read in the
contract's types and written back in their own format (Parquet or JSON Lines, gzip or not).
"""

from __future__ import annotations

import json
import re
import zlib
from collections import defaultdict
from pathlib import Path, PurePosixPath
from typing import Any, Callable

import numpy as np
import pyarrow as pa

from preftools.generate.code_ultrafeedback import published_script_pairs
from preftools.generate.writer import count_rows, format_of, read_file, remove_data_files, shard_paths, write_file
from preftools.inputs import contract as C

MAX_BIG_RESPONSES = 8
BIG = "x" * (1 << 20)
JUDGE_BLOCK = re.compile(r"<judge>(?!.*<judge>)(.*?)</judge>", re.S)  # the last block


# ------------------------------------------------------------------------------ verdict edits
def _verdict_entries(verdict: Any) -> list[dict]:
    """The entries of a verdict in either shape, as list-shape entries {rubric_id, ...}."""
    if isinstance(verdict, list):
        return [dict(e) for e in verdict]
    if isinstance(verdict, dict) and len(verdict) == 1 and isinstance(next(iter(verdict.values())), list):
        return [dict(e) for e in next(iter(verdict.values()))]
    return [{"rubric_id": k, **v} for k, v in verdict.items()]


def _edit_verdict(row: dict, edit: Callable[[list[dict]], Any]) -> dict:
    """``row`` with the last <judge> block of its last message replaced by JSON of ``edit(entries)``."""
    messages = [dict(m) for m in row["messages"]]
    last = messages[-1]
    block = JUDGE_BLOCK.search(last["content"])
    entries = _verdict_entries(json.loads(block.group(1)))
    new = json.dumps(edit(entries))
    last["content"] = last["content"][: block.start(1)] + "\n" + new + "\n" + last["content"][block.end(1):]
    return {**row, "messages": messages}


def _break_verdict(row: dict) -> dict:
    """``row`` with the last <judge> block of its last message not JSON any more."""
    last = row["messages"][-1]
    block = JUDGE_BLOCK.search(last["content"])
    content = last["content"][: block.start(1)] + "{not json" + last["content"][block.end(1):]
    return {**row, "messages": row["messages"][:-1] + [{**last, "content": content}]}


def _edit_task(row: dict, edit: Callable[[dict], Any]) -> dict:
    messages = [dict(m) for m in row["messages"]]
    user = next(m for m in messages if m["role"] == "user")
    new = edit(json.loads(user["content"]))
    user["content"] = new if isinstance(new, str) else json.dumps(new)
    return {**row, "messages": messages}


def _untag_first(task: dict) -> dict:
    rubrics = [dict(r) for r in task["rubrics"]]
    rubrics[0]["criterion"] = re.sub(r"\s*\[[^\[\]]*\]\s*$", "", rubrics[0]["criterion"])
    return {**task, "rubrics": rubrics}


def _completion0(row: dict, edit: Callable[[dict], None]) -> dict:
    completions = [dict(c) for c in row["completions"]]
    first = completions[0]
    first["annotations"] = {k: dict(v) for k, v in first["annotations"].items()}
    edit(first)
    return {**row, "completions": completions}


def _set_rating(aspect: str, value: str):
    return lambda c: c["annotations"][aspect].update(Rating=value)


# ------------------------------------------------------------------------------ the kinds
# kind: (dataset, edit of the row -> new row (or "append": a copy of the row is appended to its
#        file), expected place in the warehouse, rows it needs)
Edit = Callable[[dict], dict]
KINDS: dict[str, tuple[str, Edit | str, dict, str]] = {
    # UltraFeedback: invalid ratings are NULL and flagged; texts pass through; no list -> rejected
    "uf_rating_out_of_range": ("ultrafeedback", lambda r: _completion0(r, _set_rating("helpfulness", "7")),
                               {"flagged": "has_invalid_rating"}, "completions"),
    "uf_rating_not_a_number": ("ultrafeedback", lambda r: _completion0(r, _set_rating("truthfulness", "abc")),
                               {"flagged": "has_invalid_rating"}, "completions"),
    "uf_null_instruction": ("ultrafeedback", lambda r: {**r, "instruction": None}, {"kept": "instruction"}, "any"),
    "uf_nul_byte": ("ultrafeedback", lambda r: _completion0(r, lambda c: c.update(response="before\x00after")),
                    {"kept": "response"}, "completions"),
    "uf_big_response": ("ultrafeedback", lambda r: _completion0(r, lambda c: c.update(response=BIG)),
                        {"kept": "response"}, "completions"),
    "uf_replacement_chars": ("ultrafeedback",
                             lambda r: _completion0(r, lambda c: c.update(critique="bad \ufffd\ufffd bytes")),
                             {"kept": "critique"}, "completions"),
    "uf_empty_completions": ("ultrafeedback", lambda r: {**r, "completions": []},
                             {"rejects": "no_completions"}, "any"),
    "uf_null_completions": ("ultrafeedback", lambda r: {**r, "completions": None},
                            {"rejects": "no_completions"}, "any"),
    # CodeUltraFeedback: an invalid rating is NULL; no annotations / responses -> rejected
    "cuf_rating_10": ("code_ultrafeedback",
                      lambda r: {**r, "annotations": r["annotations"][:-1] + [{**r["annotations"][-1], "rating": "10"}]},
                      {"kept": "rating_raw"}, "annotations"),
    "cuf_null_annotations": ("code_ultrafeedback", lambda r: {**r, "annotations": None},
                             {"rejects": "empty_annotations"}, "responses"),
    "cuf_empty_responses": ("code_ultrafeedback", lambda r: {**r, "responses": []},
                            {"rejects": "no_responses"}, "any"),
    # ReVeR judge: one trajectory of a clean pair
    "judge_invalid_candidate": ("rever_judge", lambda r: {**r, "candidate": "maybe"},
                                {"rejects": "invalid_candidate"}, "clean_pair"),
    "judge_duplicate_trajectory": ("rever_judge", "append", {"rejects": "not_pair_member",
                                                             "integrity": "duplicate_candidate"}, "clean_pair"),
    "judge_empty_messages": ("rever_judge", lambda r: {**r, "messages": []},
                             {"rejects": "verdict_malformed_user_message"}, "clean_pair"),
    "judge_malformed_json": ("rever_judge", lambda r: _break_verdict(r),
                             {"rejects": "verdict_malformed_json"}, "clean_pair"),
    "judge_malformed_user_message": ("rever_judge", lambda r: _edit_task(r, lambda t: "Rubric: see above."),
                                     {"rejects": "verdict_malformed_user_message"}, "clean_pair"),
    "judge_no_rubric_items": ("rever_judge", lambda r: _edit_task(r, lambda t: {**t, "rubrics": []}),
                              {"rejects": "verdict_no_rubric_items"}, "clean_pair"),
    "judge_unknown_rubric_kind": ("rever_judge", lambda r: _edit_task(r, _untag_first),
                                  {"rejects": "verdict_unknown_rubric_kind"}, "clean_pair"),
    "judge_unknown_rubric_id": ("rever_judge", lambda r: _edit_verdict(
        r, lambda e: e + [{"rubric_id": "planted_unknown", "score": 1, "explanation": "planted"}]),
        {"rejects": "verdict_unknown_rubric_id"}, "clean_pair"),
    "judge_duplicate_rubric_id": ("rever_judge", lambda r: _edit_verdict(r, lambda e: e + [dict(e[0])]),
                                  {"rejects": "verdict_duplicate_rubric_id"}, "clean_pair"),
    "judge_invalid_score": ("rever_judge", lambda r: _edit_verdict(
        r, lambda e: [{**e[0], "score": str(e[0]["score"])}] + e[1:]),
        {"rejects": "verdict_invalid_score"}, "clean_pair"),
    "judge_unrecognised_shape": ("rever_judge", lambda r: _edit_verdict(r, lambda e: "planted"),
                                 {"rejects": "verdict_unrecognised_shape"}, "clean_pair"),
    # ReVeR rubric
    "rubric_no_items": ("rever_rubric",
                        lambda r: {**r, "messages": [m for m in r["messages"] if m["role"] == "user"]},
                        {"rejects": "no_rubric_items"}, "clean_pair"),
    "rubric_duplicate": ("rever_rubric", "append", {"integrity": "duplicate_rubric"}, "clean_pair"),
}


def _rng(seed: int, name: str) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def _eligible(row: dict, needs: str, clean_ids: set) -> bool:
    if needs == "completions":
        return bool(row["completions"]) and row["completions"][0] is not None
    if needs == "annotations":
        return bool(row["annotations"]) and row["annotations"][-1] is not None
    if needs == "responses":
        return bool(row["responses"])
    if needs == "clean_pair":
        return row["id"] in clean_ids
    return True


def _plant_dataset(out: Path, key: str, kinds: list[str], rate: float, seed: int,
                   clean_ids: set, used_ids: set, keep: set[tuple[str, int]]) -> list[dict]:
    """``keep``: the rows (file relative to the repo, row) left as they are."""
    ds = C.DATASETS_BY_KEY[key]
    files = ds.data_files(out)
    tables = {p: read_file(p, ds.schema) for p in files}
    n = sum(t.num_rows for t in tables.values())
    order = _rng(seed, key).permutation(n)
    offsets, start = [], 0
    for p in files:
        offsets.append((start, p))
        start += tables[p].num_rows

    def locate(g: int) -> tuple[Path, int]:
        for begin, p in reversed(offsets):
            if g >= begin:
                return p, g - begin
        raise AssertionError(g)

    edits: dict[Path, dict[int, dict]] = defaultdict(dict)
    appends: dict[Path, list[dict]] = defaultdict(list)
    planted: list[dict] = []
    cursor = 0
    for kind in kinds:
        _, edit, expect, needs = KINDS[kind]
        want = max(1, int(round(rate * n)))
        if kind == "uf_big_response":
            want = min(want, MAX_BIG_RESPONSES)
        got = 0
        while got < want and cursor < n:
            path, row_number = locate(int(order[cursor]))
            cursor += 1
            if (path.relative_to(ds.repo_dir(out)).as_posix(), row_number) in keep:
                continue
            row = tables[path].slice(row_number, 1).to_pylist()[0]
            if not _eligible(row, needs, clean_ids) or (needs == "clean_pair" and row["id"] in used_ids):
                continue
            if needs == "clean_pair":
                used_ids.add(row["id"])  # one planted value per pair, across both ReVeR datasets
            if edit == "append":
                appends[path].append(row)
                row_number = tables[path].num_rows + len(appends[path]) - 1
            else:
                edits[path][row_number] = edit(row)
            planted.append({"kind": kind, "dataset": key, "file": path.name, "row": row_number,
                            "id": row.get("id"), "candidate": row.get("candidate"), "expect": expect})
            got += 1
    for path in files:
        if not edits[path] and not appends[path]:
            continue
        table = tables[path]
        changed = pa.Table.from_pylist([*edits[path].values(), *appends[path]], schema=ds.schema)
        base = table.num_rows
        position = {r: base + k for k, r in enumerate(edits[path])}
        take = [position.get(i, i) for i in range(base)]
        take += [base + len(edits[path]) + k for k in range(len(appends[path]))]
        table = pa.concat_tables([table, changed]).take(pa.array(take, pa.int64()))
        write_file(table, path, key)
    return planted


def plant(out_dir: str | Path, manifest: dict, rate: float, seed: int) -> list[dict]:
    """Plant every kind of KINDS on ``rate`` of its dataset's rows in the files under
    ``out_dir`` (updating ``manifest['rows']``); returns the planted rows."""
    out = Path(out_dir)
    broken = {b["id"] for b in manifest.get("rever_integrity_breaks", [])}
    judge = C.DATASETS_BY_KEY["rever_judge"]
    judge_ids = set()
    for p in judge.data_files(out):
        judge_ids |= set(read_file(p, judge.schema, columns=["id"])["id"].to_pylist())
    clean_ids = judge_ids - broken
    used_ids: set = set()
    planted: list[dict] = []
    by_dataset: dict[str, list[str]] = defaultdict(list)
    for kind, (key, *_rest) in KINDS.items():
        by_dataset[key].append(kind)
    for key, kinds in by_dataset.items():
        if key in manifest.get("rows", {}):
            # the rows of planted contamination and personal data stay as they are: the manifest's
            # verdicts hold
            keep = {(c["file"], c["row"]) for c in manifest.get("contamination", []) if c["dataset"] == key}
            keep |= {(PurePosixPath(c["file"]).relative_to(c["hub_id"]).as_posix(), c["row"])
                     for c in manifest.get("pii", []) if c["dataset"] == key}
            planted += _plant_dataset(out, key, kinds, rate, seed, clean_ids, used_ids, keep)
    # RLHFlow's file is the published script's output on the (modified) coseal rows
    code, standard = C.DATASETS_BY_KEY["code_ultrafeedback"], C.DATASETS_BY_KEY["code_ultrafeedback_standard"]
    if code.key in manifest.get("rows", {}) and standard.key in manifest.get("rows", {}):
        rows = [r for p in code.data_files(out) for r in read_file(p, code.schema).to_pylist()]
        pairs, _ = published_script_pairs(rows)
        repo = standard.repo_dir(out)
        fmt = format_of(standard.data_files(out)[0])
        remove_data_files(repo)
        (path,) = shard_paths(repo, fmt, 1)
        write_file(pa.Table.from_pylist(pairs, schema=standard.schema), path, standard.key)
        manifest.setdefault("files", {})[standard.key] = [path.relative_to(out).as_posix()]
    for key in manifest.get("rows", {}):
        manifest["rows"][key] = sum(count_rows(p) for p in C.DATASETS_BY_KEY[key].data_files(out))
    return planted
