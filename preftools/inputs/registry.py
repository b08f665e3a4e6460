"""The registries read from Python: the dbt vars ``extra_datasets`` (extra preference datasets)
and ``eval_sets`` (the benchmarks of docs/decontamination.md, which the fetcher downloads too).

An entry names a Hub dataset of a known shape and maps its columns (examples/extra_datasets.yml)::

    - name: h4_ultrafeedback                       # the `dataset` value, snake_case
      hub_id: HuggingFaceH4/ultrafeedback_binarized
      shape: preference                            # | rated_completions | transcript
      splits: [train_prefs]                        # default: every split
      config: default                              # the card's config (or, without card configs, a folder)
      columns: {prompt: prompt, chosen: chosen, rejected: rejected, ...}

:func:`load_vars` reads the vars as dbt sees them (dbt_project.yml, then ``--vars``),
:func:`extra_datasets` and :func:`eval_sets` validate the entries as the build does (one-line
:class:`ValueError` naming the entry, the key and the fix), :func:`data_files` lists an entry's
local data files by the Hub's rule (:mod:`preftools.inputs.hub_layout`), restricted to its config and splits.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Iterable

from preftools.cli import PROJECT_ROOT
from preftools.inputs.contract import DATASETS_BY_KEY
from preftools.inputs.hub_layout import DataFile, card_configs, local_data_files, resolve

SHAPES = ("preference", "rated_completions", "transcript")
REQUIRED_COLUMNS = {
    "preference": ("chosen", "rejected"),
    "transcript": ("chosen", "rejected"),
    "rated_completions": ("prompt", "completions", "response", "rating"),
}
OPTIONAL_COLUMNS = {
    "preference": ("prompt", "chosen_score", "rejected_score", "chosen_model", "rejected_model", "source"),
    "transcript": ("source",),
    "rated_completions": ("model", "source"),
}
KEYS = ("name", "hub_id", "shape", "splits", "config", "columns", "score_range", "pairing", "license")
PAIRINGS = ("best_vs_lower", "all_pairs")
BUILT_IN_NAMES = frozenset({"ultrafeedback", "code_ultrafeedback", "rever", *DATASETS_BY_KEY})
NAME_RE = re.compile(r"[a-z][a-z0-9_]*")
HUB_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*")
EVAL_SET_KEYS = ("name", "hub_id", "config", "splits", "fields")


class Registered:
    """An entry of a registry var (``var``): a Hub dataset by ``hub_id``, read with its ``config``
    and ``splits``, keyed by its ``name``."""

    var: ClassVar[str]
    name: str
    hub_id: str
    splits: tuple[str, ...] | None
    config: str | None

    @property
    def key(self) -> str:
        return self.name

    def repo_dir(self, raw_data_dir: str | Path) -> Path:
        """The local copy of the Hub repo: ``$RAW_DATA_DIR/<org>/<dataset>``."""
        return Path(raw_data_dir) / self.hub_id


@dataclass(frozen=True, eq=False)
class Entry(Registered):
    """One validated entry of ``extra_datasets``."""

    var: ClassVar[str] = "extra_datasets"
    name: str
    hub_id: str
    shape: str
    columns: dict[str, Any]  # canonical name -> column (or, inside a completion, field path; rating: a list)
    splits: tuple[str, ...] | None = None  # None: every split
    config: str | None = None
    spec: dict | None = None  # the entry as written

    def top_level_columns(self) -> list[str]:
        """The columns the data files must have: every mapped column, for rated_completions the
        prompt and completions columns (the others are fields inside a completion)."""
        if self.shape == "rated_completions":
            return [self.columns["prompt"], self.columns["completions"]]
        return list(dict.fromkeys(self.columns.values()))


def load_vars(vars_arg: str | None = None, project_dir: Path = PROJECT_ROOT) -> dict:
    """The project's ``vars:`` (dbt_project.yml) overridden key by key by ``vars_arg``: YAML text,
    as dbt's ``--vars`` takes it, or the path of a YAML file."""
    import yaml

    project_file = Path(project_dir) / "dbt_project.yml"
    project = yaml.safe_load(project_file.read_text(encoding="utf-8")) if project_file.is_file() else None
    project = project if isinstance(project, dict) else {}
    merged = dict(project.get("vars") or {})
    if vars_arg is None:
        return merged
    path = Path(vars_arg).expanduser()
    try:
        is_file = path.is_file()
    except OSError:  # e.g. YAML text too long for a file name
        is_file = False
    where = str(path) if is_file else "--vars"
    try:
        override = yaml.safe_load(path.read_text(encoding="utf-8") if is_file else vars_arg)
    except yaml.YAMLError as exc:
        first = " ".join(str(exc).split())
        raise ValueError(f"{where} is not valid YAML ({first})") from None
    if override is None:
        return merged
    if not isinstance(override, dict):
        raise ValueError(f"{where}: expected a YAML mapping such as '{{extra_datasets: [...]}}' or the path of a "
                         f"YAML file, got {vars_arg!r}")
    return merged | override


def extra_datasets(vars: dict) -> list[Entry]:
    """The entries of the var ``extra_datasets``, validated."""
    entries = vars.get("extra_datasets") or []
    if not isinstance(entries, list):
        raise ValueError("extra_datasets must be a list of entries (- name: ..., hub_id: ..., shape: ..., columns: ...)")
    seen: set[str] = set()
    out = []
    for index, raw in enumerate(entries):
        entry = _entry(index, raw)
        if entry.name in seen:
            raise ValueError(f"extra_datasets entry {index + 1} ({entry.name}): name {entry.name!r} is used twice; "
                             "give each entry its own name")
        seen.add(entry.name)
        out.append(entry)
    return out


def closest_name(name: Any, known: Iterable[str]) -> str | None:
    """The name of ``known`` fewest single-character edits (insert, delete, replace) from ``name``,
    the first of equals, when at most a third of its length (at least 1) away; else None. The
    rule of macros/check_vars.sql's closest_name, which the build's messages use."""
    name = str(name)
    best, most = None, max(1, len(name) // 3)
    for candidate in known:
        above = list(range(len(candidate) + 1))
        for i, a in enumerate(name, 1):
            row = [i]
            for j, b in enumerate(candidate, 1):
                row.append(min(above[j] + 1, row[j - 1] + 1, above[j - 1] + (a != b)))
            above = row
        if above[-1] <= most:
            best, most = candidate, above[-1] - 1
    return best


def did_you_mean(name: Any, known: Iterable[str], kind: str) -> str:
    """The end of a line about a ``name`` that is none of ``known`` (its ``kind``: keys, ...), as
    macros/check_vars.sql's did_you_mean words it."""
    known = list(known)
    closest = closest_name(name, known)
    if closest:
        return f": did you mean {closest}?"
    return f" -- the {kind} are {', '.join(known)}" if known else ""


def _entry(index: int, raw: Any) -> Entry:
    label = f"extra_datasets entry {index + 1}"
    if not isinstance(raw, dict):
        raise ValueError(f"{label}: expected a mapping with name, hub_id, shape and columns, got {raw!r}")
    name = raw.get("name")
    if isinstance(name, str):
        label += f" ({name})"

    def fail(key: str, problem: str, fix: str):
        raise ValueError(f"{label}: `{key}` {problem}; {fix}")

    unknown = [k for k in raw if k not in KEYS]
    if unknown:
        raise ValueError(f"{label}: unknown key {unknown[0]}{did_you_mean(unknown[0], KEYS, 'keys')}")
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        fail("name", f"is {name!r}", "use snake_case: lower-case letters, digits and _ (h4_ultrafeedback)")
    if name in BUILT_IN_NAMES:
        fail("name", f"{name!r} is a built-in dataset", "choose another name")
    if name.endswith("_flagged"):
        fail("name", f"{name!r} ends in _flagged, the suffix of a dataset's flagged export split", "choose another name")
    hub_id = raw.get("hub_id")
    if not isinstance(hub_id, str) or not HUB_ID_RE.fullmatch(hub_id):
        fail("hub_id", f"is {hub_id!r}", "use the Hub id org/name (HuggingFaceH4/ultrafeedback_binarized)")
    shape = raw.get("shape")
    if shape not in SHAPES:
        fail("shape", f"is {shape!r}", f"use one of {', '.join(SHAPES)}")
    columns = raw.get("columns")
    if not isinstance(columns, dict):
        fail("columns", f"is {columns!r}", "map each canonical name to a column: {chosen: chosen, rejected: rejected}")
    names = REQUIRED_COLUMNS[shape] + OPTIONAL_COLUMNS[shape]
    unknown = [c for c in columns if c not in names]
    if unknown:
        raise ValueError(f"{label}: `columns` maps {unknown[0]}, not a canonical name of shape {shape}"
                         f"{did_you_mean(unknown[0], names, 'canonical names')}")
    missing = [c for c in REQUIRED_COLUMNS[shape] if c not in columns]
    if missing:
        fail("columns", f"has no {', '.join(missing)}", f"a {shape} entry maps {', '.join(REQUIRED_COLUMNS[shape])}")
    for canonical, column in columns.items():
        paths = column if canonical == "rating" and isinstance(column, list) else [column]
        if not paths or not all(isinstance(p, str) and p for p in paths):
            fail("columns", f"maps {canonical} to {column!r}", "give a column name" +
                 (" or a list of field paths" if canonical == "rating" else ""))
    splits = raw.get("splits")
    if splits is not None and (not isinstance(splits, list) or not splits
                               or not all(isinstance(s, str) and s for s in splits)):
        fail("splits", f"is {splits!r}", "give a list of split names ([train]) or leave it out for every split")
    config = raw.get("config")
    if config is not None and not (isinstance(config, str) and config):
        fail("config", f"is {config!r}", "give the config's name as a string (helpful-base)")
    scores = [c for c in ("chosen_score", "rejected_score") if c in columns]
    if shape == "preference" and len(scores) == 1:
        fail("columns", f"maps {scores[0]} alone", "map both chosen_score and rejected_score, or neither")
    score_range = raw.get("score_range")
    if (scores or shape == "rated_completions") and score_range is None:
        fail("score_range", "is missing for a scored dataset", "give [lowest, highest] ([1, 10])")
    if score_range is not None and not (
            isinstance(score_range, list) and len(score_range) == 2
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in score_range)
            and score_range[0] < score_range[1]):
        fail("score_range", f"is {score_range!r}", "give [lo, hi] with lo < hi ([1, 5])")
    pairing = raw.get("pairing")
    if pairing is not None and (shape != "rated_completions" or pairing not in PAIRINGS):
        fail("pairing", f"is {pairing!r}", f"only a rated_completions entry has one: {' or '.join(PAIRINGS)}")
    return Entry(name, hub_id, shape, dict(columns), tuple(splits) if splits else None, config, dict(raw))


@dataclass(frozen=True, eq=False)
class EvalSet(Registered):
    """One validated entry of ``eval_sets``."""

    var: ClassVar[str] = "eval_sets"
    name: str
    hub_id: str
    fields: tuple[str, ...]  # the columns holding the eval texts
    splits: tuple[str, ...] | None = None  # None: every split
    config: str | None = None

    def top_level_columns(self) -> list[str]:
        """The columns the data files must have: the entry's fields."""
        return list(self.fields)


def eval_sets(vars: dict) -> list[EvalSet]:
    """The entries of the var ``eval_sets``, checked by macros/eval_sets.sql's rules, in its words
    (tests/python/test_fetch.py holds the two to the same verdicts)."""
    raw = vars.get("eval_sets") or []
    if not isinstance(raw, list):
        raise ValueError("var eval_sets must be a list of entries (`eval_sets: [{name: ..., hub_id: ..., fields: [...]}]`), "
                         f"got: {raw}")
    extras = vars.get("extra_datasets") if isinstance(vars.get("extra_datasets"), list) else []
    taken = set(BUILT_IN_NAMES) | {e.get("name") for e in extras if isinstance(e, dict) and isinstance(e.get("name"), str)}
    out: list[EvalSet] = []
    for index, e in enumerate(raw, 1):
        where = f"eval_sets entry {index}" + (f" ({e['name']})" if isinstance(e, dict) and e.get("name") else "")

        def fail(problem: str):
            raise ValueError(f"{where}: {problem}")

        if not isinstance(e, dict):
            fail(f"an entry is a mapping with name, hub_id and fields, got: {e}")
        unknown = [k for k in e if k not in EVAL_SET_KEYS]
        if unknown:
            fail(f"unknown key {unknown[0]}{did_you_mean(unknown[0], EVAL_SET_KEYS, 'keys')}")
        name, hub_id, fields, splits, config = (e.get(k) for k in ("name", "hub_id", "fields", "splits", "config"))
        if not (isinstance(name, str) and NAME_RE.fullmatch(name)):
            fail(f"`name` must be snake_case (lower-case letters, digits, _), e.g. name: truthfulqa; got: {name}")
        if name in taken:
            fail(f"name {name} is already taken (a dataset or an earlier entry: row_accounting names both) -- pick another name")
        if not (isinstance(hub_id, str) and HUB_ID_RE.fullmatch(hub_id)):
            fail(f"`hub_id` must be <org>/<dataset> as on the Hub, e.g. hub_id: truthfulqa/truthful_qa; got: {hub_id}")
        if not _names(fields):
            fail(f"`fields` is a list of the column names holding the eval texts, e.g. fields: [question]; got: {fields}")
        if splits is not None and not _names(splits):
            fail(f"`splits` is a list of split names, e.g. splits: [test]; got: {splits}")
        if config is not None and not (isinstance(config, str) and config):
            fail(f"`config` is the name of one of the repo's configs (subsets), e.g. config: main; got: {config}")
        taken.add(name)
        out.append(EvalSet(name, hub_id, tuple(dict.fromkeys(fields)), tuple(splits) if splits is not None else None, config))
    return out


def _names(value: Any) -> bool:
    """A non-empty list of non-empty strings."""
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) and v for v in value)


def resolve_files(paths: list[str], card_text: str | None, config: str | None = None,
                  splits: Iterable[str] | None = None) -> list[DataFile]:
    """The data files among a repo's ``paths`` by the Hub's rule (:func:`preftools.inputs.hub_layout.resolve`)
    with ``config``, restricted to ``splits`` (None: all), in the resolved order. A config named for
    a card without ``configs:`` is a folder of the repo (what ``load_dataset(hub_id, data_dir=...)``
    reads: the rule applied inside it), as Anthropic/hh-rlhf's ``helpful-base``; "default" there is
    the whole repo, as on the Hub."""
    if config not in (None, "default") and not card_configs(card_text):
        prefix = config.strip("/") + "/"
        inside = [p[len(prefix):] for p in paths if p.startswith(prefix)]
        found = [DataFile(prefix + f.path, f.split, f.format) for f in resolve(inside)] if inside else []
    else:
        found = resolve(paths, card_text, config)
    wanted = None if splits is None else set(splits)
    return [f for f in found if wanted is None or f.split in wanted]


def local_files(repo_dir: Path, config: str | None = None, splits: Iterable[str] | None = None) -> list[DataFile]:
    """:func:`resolve_files` on a local copy of a repo, as :func:`local_data_files` reads it."""
    return local_data_files(repo_dir, config, rule=functools.partial(resolve_files, splits=splits))


def data_files(entry: Entry, raw_dir: str | Path) -> list[Path]:
    """The entry's data files under ``raw_dir/<hub_id>/`` (its config and splits), in the Hub's order."""
    repo = entry.repo_dir(raw_dir)
    return [repo / f.path for f in local_files(repo, entry.config, entry.splits)]
