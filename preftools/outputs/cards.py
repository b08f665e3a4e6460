"""Hugging Face dataset cards (``README.md``) for the exported marts.

``preftools.outputs.export`` writes one card per mart, ``EXPORT_DIR/<mart>/README.md``, into the same
staging folder as the Parquet files (so a card is published, and replaced, together with its
data) and records its sha256 in ``manifest.json``. A card holds:

- YAML front matter the Hub and ``datasets`` read: ``configs`` (one ``data_files`` entry per split
  actually written, ``data/<split>-*``), ``license`` and ``source_datasets`` (from the warehouse
  tables ``seeds.dataset_registry`` and ``meta.extra_datasets``, the `extra_datasets` entries the
  build registered), ``pretty_name``, ``tags``, ``size_categories``;
- the mart's description ("What the table holds") and each column's name, type and description,
  read from the DuckDB catalog (dbt ``persist_docs`` stores them as ``COMMENT``s: the models' yml
  and docs blocks are where a card's description is written; a Spark build has none, so its
  cards have no descriptions), as Markdown that renders as the text (``_plain``), each paragraph
  on one line;
- the card's own sections, written here: a training table's "Training format", a table of pairs'
  "Flagged pairs" (what a flag means, where this export puts the flagged pairs);
- rows per split, the source datasets with their licences and revisions (the registered entries
  also with their shape and what was read of them), a "How to use" block for training tables (those
  with ``prompt``, ``chosen`` and ``rejected`` columns: it selects the training rows, see
  ``training_filter``), for ``training_mixture`` what came from where (per dataset: the fraction
  asked, its clean pairs, the pairs taken), for the tables of pairs and the contamination tables
  the benchmarks their prompts were checked against (``meta.eval_sets``: Hub id, revision, the
  rule's settings) and per dataset the pairs flagged ``eval_contamination``, for the tables of pairs
  the near-duplicate check (the settings the build recorded in ``meta.warehouse_build_info``, per
  dataset the pairs flagged ``near_duplicate_pair``, ``label_conflict`` and
  ``near_identical_responses``, and the counts of ``near_duplicate_summary`` that involve its
  datasets), for every table secrets and personal data (the kinds looked for, what ``pii_summary``
  found in its datasets, and what the export redacted in it), and provenance: the build
  (``meta.warehouse_build_info``), the raw data by Hub id and revision and the project's git commit
  at export time.

Cards are deterministic: the same warehouse (and the same project commit and raw folder) gives
the same bytes; nothing in them depends on the clock or on the export directory, and no path of
the build machine is written (``RAW_DATA_DIR`` is named by the raw data's revision instead).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from preftools.cli import PROJECT_ROOT, project_path
from preftools.files import CARD_NAME, DEFAULT_SPLIT, FLAGGED_SUFFIX, GENERATOR_MANIFEST

REGISTRY_TABLE = ("seeds", "dataset_registry")
EXTRA_REGISTRY_TABLE = ("meta", "extra_datasets")  # the `extra_datasets` entries of the build
EVAL_SETS_TABLE = ("meta", "eval_sets")  # the `eval_sets` entries of the build, with the rule's settings
CONTAMINATION_FLAG = "eval_contamination"  # the integrity flag of a pair whose prompt holds an eval item
# A table with this column is one of the contamination tables (eval_items, contamination_matches, ...).
EVAL_SET_COLUMN = "eval_set"
# The integrity flags of the near-duplicate checks (docs/near-duplicates.md), and where the build
# records the rule's settings: meta.warehouse_build_info's columns, by setting.
NEAR_DUPLICATE_FLAGS = ("near_duplicate_pair", "label_conflict", "near_identical_responses")
NEAR_DUPLICATE_SUMMARY = "near_duplicate_summary"
NEAR_DUPLICATE_SETTINGS = {
    "enabled": "near_duplicates_enabled", "ngram": "near_duplicates_ngram", "threshold": "near_duplicates_threshold",
    "keep": "near_duplicates_keep", "bands": "near_duplicates_bands", "rows": "near_duplicates_rows",
    "mixture_max_pairs_per_prompt_cluster": "mixture_max_pairs_per_prompt_cluster",
}
# What the training_mixture card's table reads: per dataset of the `mixture` var, the fraction
# asked, its clean pairs and the pairs taken (a reporting view, since the fractions are only in
# the var); without it (a Spark export) the counts come from the marts, the fraction unrecorded.
MIXTURE_VIEW = ("reporting", "rpt_training_mixture")
MIXTURE_MART = "training_mixture"
# What the scan for secrets and personal data found: one row per dataset and kind (docs/pii.md).
PII_SUMMARY = "pii_summary"
SECRET_FLAG = "contains_secret"
HUB_DATASETS_URL = "https://huggingface.co/datasets"
TRAINING_COLUMNS = ("prompt", "chosen", "rejected")
EXAMPLE_MODEL = "Qwen/Qwen2.5-0.5B-Instruct"

# Which source datasets (registry dataset_key) feed which mart, by mart-name prefix; the longest
# matching prefix wins. ALL_ENABLED: every registry dataset whose group the build enabled
# (warehouse_build_info.datasets), and every `extra_datasets` entry; EXTRA_ONLY: the entries.
# rejects_<dataset_key> and training_mixture are handled in source_keys().
ALL_ENABLED = None
EXTRA_ONLY = "extra_datasets"
MART_SOURCES: dict[str, tuple[str, ...] | None] = {
    "ultrafeedback_": ("ultrafeedback",),
    "audit_ultrafeedback_": ("ultrafeedback",),
    "code_ultrafeedback_": ("code_ultrafeedback", "code_ultrafeedback_standard"),
    "audit_code_ultrafeedback_": ("code_ultrafeedback", "code_ultrafeedback_standard"),
    "rever_": ("rever_judge", "rever_rubric"),
    "judge_agreement": ("ultrafeedback", "rever_judge", "rever_rubric"),
    "preference_pairs": ALL_ENABLED,
    "prompt_overlap": ALL_ENABLED,
    "row_accounting": ALL_ENABLED,
    "rejects_extra_datasets": EXTRA_ONLY,
    "contamination_": ALL_ENABLED,
}
# Marts whose splits are already the training selection: their "How to use" block needs no filter.
SPLIT_TRAINING_MARTS = ("preference_pairs", MIXTURE_MART)
REJECTS_PREFIX = "rejects_"

# A registry licence that looks like a Hub licence id is used as is; anything else ("not stated on
# the card", free text) becomes `other`, explained in the card body.
HUB_LICENSE_ID = re.compile(r"[a-z0-9][a-z0-9.+-]*")
SIZE_CATEGORIES = (
    (1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"), (1_000_000_000, "100M<n<1B"),
    (10_000_000_000, "1B<n<10B"), (100_000_000_000, "10B<n<100B"), (1_000_000_000_000, "100B<n<1T"),
)


@dataclass(frozen=True)
class SourceDataset:
    key: str
    group: str
    hub_id: str
    license: str | None
    # an `extra_datasets` entry (meta.extra_datasets): its shape, config and splits read
    extra: bool = False
    shape: str | None = None
    config: str | None = None
    splits: tuple[str, ...] | None = None

    @property
    def hub_license(self) -> str | None:
        if self.license is None:
            return None
        value = self.license.strip().lower()
        return value if HUB_LICENSE_ID.fullmatch(value) else "other"


@dataclass(frozen=True)
class EvalSet:
    """An `eval_sets` entry of the build (meta.eval_sets). ``key`` is its name: raw_revisions()
    looks a dataset up by Hub id, then by that key."""

    key: str
    hub_id: str
    config: str | None
    splits: tuple[str, ...] | None
    fields: tuple[str, ...]

    @classmethod
    def from_row(cls, r: dict) -> EvalSet:
        """From a row of meta.eval_sets (or a view with its columns)."""
        return cls(key=str(r["eval_set"]), hub_id=str(r["hub_id"]), config=None if r.get("config") is None else str(r["config"]),
                   splits=_json_list(r.get("splits")), fields=_json_list(r.get("fields")) or ())


@dataclass
class Contamination:
    """What the cards say of benchmark contamination (docs/decontamination.md)."""

    eval_sets: list[EvalSet]
    settings: dict | None  # ngram, threshold, max_eval_share; None when no eval set is registered
    # dataset -> its rows of contamination_summary (one per eval set, zeros included), in registry order
    summary: dict[str, list[dict]] = field(default_factory=dict)
    # dataset -> {"n_flagged": pairs flagged eval_contamination, "n_only": ... and by no other check}
    flagged: dict[str, dict] = field(default_factory=dict)


@dataclass
class NearDuplicates:
    """What the cards say of near duplicates and label conflicts (docs/near-duplicates.md)."""

    # enabled, ngram, threshold, keep, bands, rows, mixture_max_pairs_per_prompt_cluster (the keys of
    # NEAR_DUPLICATE_SETTINGS); None when meta.warehouse_build_info does not record them
    settings: dict | None
    # the build's datasets in dataset order (built-in groups, then the extra_datasets entries)
    datasets: list[str] = field(default_factory=list)
    # the rows of near_duplicate_summary (dataset_a at or before dataset_b), in dataset order
    summary: list[dict] = field(default_factory=list)
    # dataset -> {"n_<flag>": pairs flagged <flag> per NEAR_DUPLICATE_FLAGS, "n_only": pairs flagged by
    # one of them and by no other check}, over preference_pairs
    flagged: dict[str, dict] = field(default_factory=dict)


@dataclass
class CardContext:
    """Facts shared by every card of one export (read once from the warehouse and the machine)."""

    registry: list[SourceDataset]
    registry_in_warehouse: bool
    build: dict | None
    raw_revisions: dict[str, str]  # hub_id -> revision text
    project_commit: str
    exported_with: str  # "preftools X, pyarrow Y"
    # training_mixture's make-up, one dict per dataset (dataset, fraction, n_clean_pairs,
    # n_taken; fraction None when not recorded); None when the warehouse has no training_mixture
    mixture: list[dict] | None = None
    # per dataset: its `dataset` row of pair_bias_profile ("profile") and its rows of
    # truncation_collapse ("collapse"); empty when the warehouse has neither table
    biases: dict[str, dict] = field(default_factory=dict)
    # a Markdown note every card ends with (`preftools export --card-note diff/diff.md`: the
    # summary of `preftools diff`, "Changes since <revision>"), its headings one level down
    note: str | None = None
    # the eval sets checked and what they found; None for a warehouse without meta.eval_sets
    contamination: Contamination | None = None
    # the near-duplicate check's settings and findings; None for a warehouse without near_duplicate_summary
    near_duplicates: NearDuplicates | None = None
    # the rows of pii_summary (dataset, kind, category, n_findings, n_pairs, n_pairs_flagged); None for
    # a warehouse without it (the scan was not built)
    pii_summary: list[dict] | None = None
    # what the export redacts, as manifest.json's `redaction`: secrets and personal ("redacted" or
    # "kept") and the patterns (kind, category, pattern, replacement); None: no section
    redaction: dict | None = None

    def revision(self, d: SourceDataset | EvalSet) -> str:
        return self.raw_revisions.get(d.hub_id, "unknown")

    @property
    def extra_datasets(self) -> list[SourceDataset]:
        return [d for d in self.registry if d.extra]


# --------------------------------------------------------------------------------------------
# reading what the cards say


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def _table_exists(con, schema: str, table: str) -> bool:
    return bool(con.execute(
        "select count(*) from duckdb_tables() where database_name = current_database() "
        "and schema_name = ? and table_name = ?",
        [schema, table],
    ).fetchall()[0][0])


def read_registry(con) -> tuple[list[SourceDataset], bool]:
    """The registry rows (seeds.dataset_registry), or the raw contract's datasets without licences
    when the warehouse has no registry table (the bool says whether the table was there); then the
    build's `extra_datasets` entries (meta.extra_datasets) in registry order."""
    builtin, in_warehouse = _read_builtin_registry(con)
    return builtin + read_extra_datasets(con), in_warehouse


def read_extra_datasets(con) -> list[SourceDataset]:
    """The `extra_datasets` entries the build registered (meta.extra_datasets), in registry order;
    [] for a warehouse without that table (built before the registry existed)."""
    schema, table = EXTRA_REGISTRY_TABLE
    if not _table_exists(con, schema, table):
        return []
    cur = con.execute(f"select * from {_quote(schema)}.{_quote(table)} order by registry_order")
    names = [d[0] for d in cur.description]
    out = []
    for row in cur.fetchall():
        r = dict(zip(names, row))
        if not (r.get("dataset") and r.get("hub_id")):
            continue
        out.append(SourceDataset(
            key=str(r["dataset"]),
            group=str(r["dataset"]),
            hub_id=str(r["hub_id"]),
            license=None if r.get("license") is None else str(r["license"]),
            extra=True,
            shape=None if r.get("shape") is None else str(r["shape"]),
            config=None if r.get("config") is None else str(r["config"]),
            splits=_json_list(r.get("splits")),
        ))
    return out


def _json_list(text) -> tuple[str, ...] | None:
    """A registry column holding a JSON list of names (splits, fields), as a tuple; None when NULL or not a list."""
    if not text:
        return None
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    return tuple(str(s) for s in parsed) if isinstance(parsed, list) else None


def _rows(con, sql: str, params: list | None = None) -> list[dict]:
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def read_contamination(con) -> Contamination | None:
    """The `eval_sets` entries the build checked the training prompts against (meta.eval_sets, with
    the rule's settings), each dataset's rows of contamination_summary, and its
    pairs flagged eval_contamination (preference_pairs). None for a warehouse without
    meta.eval_sets (built before decontamination)."""
    schema, table = EVAL_SETS_TABLE
    if not _table_exists(con, schema, table):
        return None
    rows = _rows(con, f"select * from {_quote(schema)}.{_quote(table)} order by registry_order")
    eval_sets = [EvalSet.from_row(r) for r in rows]
    settings = {k: rows[0][k] for k in ("ngram", "threshold", "max_eval_share")} if rows else None
    contamination = Contamination(eval_sets, settings)
    if rows and _table_exists(con, "main", "contamination_summary"):
        for r in _rows(
            con,
            "select s.* from main.contamination_summary s "
            f"inner join {_quote(schema)}.{_quote(table)} e on s.eval_set = e.eval_set "
            "order by s.dataset, e.registry_order",
        ):
            contamination.summary.setdefault(r["dataset"], []).append(r)
    if rows and _table_exists(con, "main", "preference_pairs"):
        for r in _rows(
            con,
            "select dataset, count(*) as n_flagged, count(case when len(integrity_flags) = 1 then 1 end) as n_only "
            "from main.preference_pairs where list_contains(integrity_flags, ?) group by dataset",
            [CONTAMINATION_FLAG],
        ):
            contamination.flagged[r["dataset"]] = r
    return contamination


def read_near_duplicates(con, build: dict | None) -> NearDuplicates | None:
    """The near-duplicate rule's settings as the build recorded them (meta.warehouse_build_info), the
    rows of near_duplicate_summary in dataset order, and each dataset's pairs flagged by the
    near-duplicate checks (preference_pairs). None for a warehouse without near_duplicate_summary
    (built before the check, or a partial export)."""
    if not _table_exists(con, "main", NEAR_DUPLICATE_SUMMARY):
        return None
    recorded = build or {}
    settings = ({key: recorded[column] for key, column in NEAR_DUPLICATE_SETTINGS.items()}
                if all(column in recorded for column in NEAR_DUPLICATE_SETTINGS.values()) else None)
    summary = _rows(con, f"select * from main.{_quote(NEAR_DUPLICATE_SUMMARY)}")
    # near_duplicate_summary has a row (x, d) for every dataset x at or before d: d's position is its
    # rows as dataset_b (a dataset never seen as dataset_b, in a summary missing rows, first)
    position: dict[str, int] = {r[side]: 0 for r in summary for side in ("dataset_a", "dataset_b")}
    for r in summary:
        position[r["dataset_b"]] += 1
    summary.sort(key=lambda r: (position[r["dataset_a"]], position[r["dataset_b"]]))
    found = NearDuplicates(settings, sorted(position, key=position.get), summary)
    if _table_exists(con, "main", "preference_pairs"):
        checks = ", ".join(f"'{f}'" for f in NEAR_DUPLICATE_FLAGS)
        near = f"len(list_filter(integrity_flags, lambda f: f in ({checks})))"
        counts = ", ".join(f"count(case when list_contains(integrity_flags, '{f}') then 1 end) as n_{f}"
                           for f in NEAR_DUPLICATE_FLAGS)
        for r in _rows(
            con,
            f"select dataset, {counts}, count(case when {near} > 0 and {near} = len(integrity_flags) then 1 end) as n_only "
            "from main.preference_pairs group by dataset",
        ):
            found.flagged[r["dataset"]] = r
    return found


def read_pii_summary(con) -> list[dict] | None:
    """The rows of pii_summary with a dataset, or None for a warehouse without it."""
    if not _table_exists(con, "main", PII_SUMMARY):
        return None
    return _rows(con, "select dataset, kind, category, n_findings, n_pairs, n_pairs_flagged "
                      f"from main.{_quote(PII_SUMMARY)} where dataset is not null order by dataset, kind")


def _read_builtin_registry(con) -> tuple[list[SourceDataset], bool]:
    schema, table = REGISTRY_TABLE
    if _table_exists(con, schema, table):
        cur = con.execute(f"select * from {_quote(schema)}.{_quote(table)}")
        names = [d[0] for d in cur.description]
        out = []
        for row in cur.fetchall():
            r = dict(zip(names, row))
            if not (r.get("dataset_key") and r.get("hub_id")):
                continue
            licence = r.get("license", r.get("licence"))
            out.append(SourceDataset(
                key=str(r["dataset_key"]),
                group=str(r.get("dataset_group") or r["dataset_key"]),
                hub_id=str(r["hub_id"]),
                license=None if licence is None else str(licence),
            ))
        return sorted(out, key=lambda d: d.key), True
    from preftools.inputs.contract import DATASETS

    return sorted((SourceDataset(d.key, d.group, d.hub_id, None) for d in DATASETS), key=lambda d: d.key), False


def read_descriptions(con, schema: str, table: str) -> tuple[str | None, dict[str, str]]:
    """(table comment, {column: comment}) from the DuckDB catalog; empty where there is none."""
    row = con.execute(
        "select comment from duckdb_tables() where database_name = current_database() "
        "and schema_name = ? and table_name = ?",
        [schema, table],
    ).fetchall()
    table_comment = row[0][0] if row and row[0][0] and str(row[0][0]).strip() else None
    columns = {
        name: str(comment)
        for name, comment in con.execute(
            "select column_name, comment from duckdb_columns() where database_name = current_database() "
            "and schema_name = ? and table_name = ?",
            [schema, table],
        ).fetchall()
        if comment is not None and str(comment).strip()
    }
    return table_comment, columns


def project_commit(root: Path = PROJECT_ROOT) -> str:
    """``git rev-parse HEAD`` of the checkout preftools runs from ("unknown" if it is not one),
    with "+ uncommitted changes" when tracked files differ from that commit."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}

    def git(*args: str) -> str:
        return subprocess.run(
            # --no-optional-locks: never take .git/index.lock (a concurrent `git commit` must not fail)
            ["git", "--no-optional-locks", "-C", str(root), *args],
            capture_output=True, text=True, timeout=20, check=True, env=env,
        ).stdout.strip()

    try:
        if Path(git("rev-parse", "--show-toplevel")).resolve() != root.resolve():
            return "unknown"  # preftools is installed inside some other repository
        commit = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", commit):
        return "unknown"
    return f"{commit} + uncommitted changes" if dirty else commit


def _build_row(build) -> dict | None:
    if isinstance(build, list):
        return build[0] if build else None
    return build


def _resolve_raw_dir(raw_data_dir: str) -> Path:
    # dbt runs from the project root, so a relative RAW_DATA_DIR (the default `sample_data`) is relative to it.
    return project_path(raw_data_dir)


def _fetch_record(raw_dir: Path, hub_id: str) -> str | None:
    """The commit preftools.inputs.fetch (huggingface_hub's local_dir download) recorded for every
    data file of a dataset (preftools.inputs.hub_layout), if they all agree and no file changed since;
    else None."""
    from preftools.inputs.hub_layout import local_data_files

    repo = raw_dir / hub_id
    records = repo / ".cache" / "huggingface" / "download"
    try:
        commits = set()
        for data_file in local_data_files(repo):
            f = repo / data_file.path
            meta = records / f"{data_file.path}.metadata"
            lines = meta.read_text().splitlines()
            commit, timestamp = lines[0].strip(), float(lines[2])
            if f.stat().st_mtime - 1 > timestamp or not re.fullmatch(r"[0-9a-f]{40}", commit):
                return None  # changed after the download
            commits.add(commit)
    except (OSError, ValueError, IndexError):
        return None
    return commits.pop() if len(commits) == 1 else None


def raw_revisions(build: dict | None, registry: list[SourceDataset | EvalSet]) -> dict[str, str]:
    """hub_id -> what is known of the raw files' revision: the build's ``raw_revisions`` column when
    it has one; else, when RAW_DATA_DIR is a local folder that still exists, "generated data" for
    the generator's output or the commit the fetcher recorded; else "unknown". Never writes there."""
    unknown = {d.hub_id: "unknown" for d in registry}
    if not build:
        return unknown
    recorded = build.get("raw_revisions")
    if recorded not in (None, ""):
        if isinstance(recorded, str):
            try:
                recorded = json.loads(recorded)
            except ValueError:
                return {d.hub_id: recorded for d in registry}
        if isinstance(recorded, dict):
            by_key = {str(k): str(v) for k, v in recorded.items()}
            return {d.hub_id: by_key.get(d.hub_id, by_key.get(d.key, "unknown")) for d in registry}
        return {d.hub_id: str(recorded) for d in registry}

    raw = build.get("raw_data_dir")
    if not raw:
        return unknown
    raw = str(raw)
    if raw.startswith("hf://"):
        return {d.hub_id: "read from the Hub at build time (revision not recorded)" for d in registry}
    if "://" in raw:
        return unknown
    raw_dir = _resolve_raw_dir(raw)
    try:
        if not raw_dir.is_dir():
            return unknown
        if (raw_dir / GENERATOR_MANIFEST).is_file():
            return {d.hub_id: f"generated data (see {GENERATOR_MANIFEST})" for d in registry}
    except OSError:
        return unknown
    out = {}
    for d in registry:
        commit = _fetch_record(raw_dir, d.hub_id)
        out[d.hub_id] = f"{commit} (recorded by the fetcher)" if commit else "unknown"
    return out


# Build-info columns that hold a path of the build machine: never published (cards, manifest.json).
MACHINE_PATH_KEYS = ("raw_data_dir",)


def _without_paths(text: str, row: dict) -> str:
    """``text`` with the build's local RAW_DATA_DIR (e.g. in "unknown (file:///... is read at build
    time ...)") replaced by the variable's name; a Hub URL (hf://) is kept."""
    raw = str(row.get("raw_data_dir") or "")
    if not raw or raw.startswith("hf://"):
        return text
    return text.replace(raw, "RAW_DATA_DIR")


def public_build(build):
    """The build-info row(s) as published: without the columns holding paths of the build machine
    (MACHINE_PATH_KEYS); the raw data is named by ``raw_revisions`` (Hub commits, or "generated,
    seed N, scale S")."""
    if isinstance(build, list):
        return [public_build(row) for row in build]
    if not isinstance(build, dict):
        return build
    return {
        key: _without_paths(value, build) if isinstance(value, str) else value
        for key, value in build.items() if key not in MACHINE_PATH_KEYS
    }


def read_mixture(con) -> list[dict] | None:
    """training_mixture's make-up: per dataset, the fraction asked (the `mixture` var, through the
    reporting view MIXTURE_VIEW), its clean pairs and the pairs taken; without the view (a Spark
    export) the counts from the marts and fraction None. None without a training_mixture mart."""
    if not _table_exists(con, "main", MIXTURE_MART):
        return None
    schema, view = MIXTURE_VIEW
    exists = con.execute(
        "select count(*) from information_schema.tables where table_catalog = current_database() "
        "and table_schema = ? and table_name = ?",
        [schema, view],
    ).fetchall()[0][0]
    if exists:
        cur = con.execute(
            f"select dataset, fraction, n_clean_pairs, n_taken, n_taken_chosen_longer, n_taken_rejected_longer, "
            f"length_balanced from {_quote(schema)}.{_quote(view)} "
            "order by mixture_order, dataset"
        )
    else:
        pairs = "main.preference_pairs" if _table_exists(con, "main", "preference_pairs") else None
        clean = (f"(select count(*) from {pairs} p where p.dataset = m.dataset and not p.is_flagged)"
                 if pairs else "cast(null as bigint)")
        cur = con.execute(
            f"select m.dataset, cast(null as double) as fraction, {clean} as n_clean_pairs, count(*) as n_taken "
            f"from main.{_quote(MIXTURE_MART)} m group by m.dataset order by m.dataset"
        )
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def read_biases(con) -> dict[str, dict]:
    """Each dataset's row of pair_bias_profile (slice_kind `dataset`) and rows of
    truncation_collapse, for the cards' "Known biases" section."""
    biases: dict[str, dict] = {}
    if _table_exists(con, "main", "pair_bias_profile"):
        for row in _rows(con, "select * from main.pair_bias_profile where slice_kind = 'dataset' order by dataset"):
            biases.setdefault(row["dataset"], {"profile": None, "collapse": []})["profile"] = row
    if _table_exists(con, "main", "truncation_collapse"):
        for row in _rows(con, "select * from main.truncation_collapse order by dataset, budget_tokens"):
            biases.setdefault(row["dataset"], {"profile": None, "collapse": []})["collapse"].append(row)
    return biases


def read_context(con, build, exported_with: str) -> CardContext:
    registry, in_warehouse = read_registry(con)
    contamination = read_contamination(con)
    row = _build_row(build)
    revisions = raw_revisions(row, registry + (contamination.eval_sets if contamination else []))
    return CardContext(
        registry=registry,
        registry_in_warehouse=in_warehouse,
        build=public_build(row),
        raw_revisions={hub_id: _without_paths(text, row or {}) for hub_id, text in revisions.items()},
        project_commit=project_commit(),
        exported_with=exported_with,
        mixture=read_mixture(con),
        biases=read_biases(con),
        contamination=contamination,
        near_duplicates=read_near_duplicates(con, row),
        pii_summary=read_pii_summary(con),
    )


def source_record(d: SourceDataset, context: CardContext) -> dict:
    """One source dataset as manifest.json lists it."""
    record = {"dataset": d.key, "hub_id": d.hub_id, "license": d.license, "revision": context.revision(d)}
    if d.extra:
        record.update(shape=d.shape, config=d.config, splits=list(d.splits) if d.splits is not None else None)
    return record


def eval_set_record(e: EvalSet, context: CardContext) -> dict:
    """One eval set as manifest.json lists it."""
    return {"name": e.key, "hub_id": e.hub_id, "config": e.config,
            "splits": list(e.splits) if e.splits is not None else None, "fields": list(e.fields),
            "revision": context.revision(e)}


# --------------------------------------------------------------------------------------------
# what a mart is made from


def enabled_groups(build: dict | None) -> list[str] | None:
    value = (build or {}).get("datasets")
    if value is None:
        return None
    items = value if isinstance(value, list) else str(value).split(",")
    return [str(g).strip() for g in items if str(g).strip()]


def source_keys(mart: str, registry: list[SourceDataset], build: dict | None,
                mixture: list[dict] | None = None) -> list[str]:
    """The registry dataset keys that feed ``mart`` (empty for a mart the mapping doesn't know).
    training_mixture: the datasets it took pairs from (``mixture``; a built-in dataset stands for
    its group's registry rows), every enabled one when that is not known."""
    keys_in_registry = [d.key for d in registry]
    groups = enabled_groups(build)
    enabled = [d.key for d in registry if d.extra or groups is None or d.group in groups]
    if mart == MIXTURE_MART:
        if mixture is None:
            return enabled
        taken = {str(m["dataset"]) for m in mixture if m.get("n_taken")}
        return [d.key for d in registry if d.key in enabled and (d.key if d.extra else d.group) in taken]
    if mart.startswith(REJECTS_PREFIX) and mart not in MART_SOURCES:
        key = mart[len(REJECTS_PREFIX):]
        return [key] if key in keys_in_registry else []
    matches = [p for p in MART_SOURCES if mart.startswith(p)]
    if not matches:
        return []
    keys = MART_SOURCES[max(matches, key=len)]
    if keys is ALL_ENABLED:
        return enabled
    if keys is EXTRA_ONLY:
        return [d.key for d in registry if d.extra]
    return [k for k in keys_in_registry if k in keys]


def is_training_table(columns: list[tuple[str, str]]) -> bool:
    names = {c for c, _ in columns}
    return all(c in names for c in TRAINING_COLUMNS)


def training_filter(mart: str, columns: list[tuple[str, str]]) -> str | None:
    """The Python condition on a row (``datasets`` filter) that keeps a training table's training
    rows: the rows with a pair (``has_pair``, where not every row is one) that no integrity check
    flags (``is_flagged``), i.e. the dataset's training split of preference_pairs. None for
    preference_pairs and training_mixture, whose splits are that selection."""
    if mart in SPLIT_TRAINING_MARTS:
        return None
    names = {c for c, _ in columns}
    parts = [text for column, text in (("has_pair", 'row["has_pair"]'), ("is_flagged", 'not row["is_flagged"]'))
             if column in names]
    return " and ".join(parts) or None


def size_category(rows: int) -> str:
    for limit, label in SIZE_CATEGORIES:
        if rows < limit:
            return label
    return "n>1T"


# --------------------------------------------------------------------------------------------
# rendering


# What a Markdown renderer would take for markup in the catalog's plain text: a `<` that starts
# an HTML tag or an autolink (the Hub would hide `<dataset>_flagged`), `*`, a `_` at the edge of a
# word (inside one, as in `pair_id`, it is never emphasis), a backtick, a `[` that starts a link,
# a backslash before punctuation, and a `&` that starts an entity.
_MARKUP = re.compile(r"<(?=[A-Za-z/!?])|[*`]|(?<![A-Za-z0-9_])_|_(?![A-Za-z0-9_])|\[(?=[^\]]*\]\()"
                     r"|\\(?=[!-/:-@\[-`{-~])|&(?=#?\w+;)")
# A line of a description that starts a block of its own: a table row or a list item.
_BLOCK_START = re.compile(r"\||- |\d+\. ")


def _plain(text: object) -> str:
    """Catalog text (plain) as Markdown that renders as the same text: markup characters
    escaped with a backslash (never as an HTML entity, which a reader of the source would see)."""
    return _MARKUP.sub(lambda m: "\\" + m.group(0), str(text))


def _paragraphs(text: str) -> str:
    """A catalog description as Markdown, one line per paragraph: the catalog keeps the line
    breaks of the descriptions (docs blocks are hard-wrapped, the models' yml folded), the card
    joins the lines of each paragraph and list item; table rows stay one per line."""
    blocks = []
    for block in re.split(r"\n[ \t]*\n", text.strip()):
        lines: list[str] = []
        for line in block.splitlines():
            line = _plain(line.strip())
            if lines and not _BLOCK_START.match(line) and not lines[-1].startswith("|"):
                lines[-1] += " " + line
            else:
                lines.append(line)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _cell(text: object) -> str:
    """Text for one Markdown table cell: one line, markup and pipes escaped."""
    return " ".join(_plain(text).split()).replace("|", "\\|")


def _code(text: object) -> str:
    text = " ".join(str(text).split())
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text}{pad}{fence}".replace("|", "\\|")


def _pretty(mart: str) -> str:
    words = mart.replace("_", " ").strip()
    return (words[:1].upper() + words[1:]) if words else mart


def _front_matter(data: dict) -> str:
    import yaml

    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=False, width=10_000)


def _fraction(value) -> str:
    if value is None:
        return "not recorded"
    return f"{value:g}"


def _mixture_table(mixture: list[dict]) -> list[str]:
    """What training_mixture took from where."""
    out = [
        "## What came from where",
        "",
        "Per dataset of the `mixture` var: the fraction of its clean pairs asked for, its clean pairs "
        "(the pairs of `preference_pairs` no integrity check flags) and the pairs taken, the first "
        "round(fraction x clean pairs) in an order drawn from `random_seed` (`mixture_rank`).",
        "",
        "| dataset | fraction asked | clean pairs | pairs taken |",
        "|---|---:|---:|---:|",
    ]
    for m in mixture:
        clean = m.get("n_clean_pairs")
        out.append(
            f"| {_cell(m['dataset'])} | {_fraction(m.get('fraction'))} | "
            f"{'not recorded' if clean is None else f'{clean:,}'} | {m.get('n_taken') or 0:,} |"
        )
    total = sum(m.get("n_taken") or 0 for m in mixture)
    out += [f"| **total** | | | **{total:,}** |", ""]
    if any(m.get("length_balanced") for m in mixture):
        out += [
            "**Length-balanced** (the var `mixture_length_balanced`): of each dataset's draw, only as many "
            "pairs whose chosen response is the longer one were kept as pairs whose rejected response is "
            "(the first ones in the draw; pairs of equal length all kept), so \"the longer response wins\" "
            "is at chance in this mixture: "
            + "; ".join(f"{_cell(m['dataset'])} {m.get('n_taken_chosen_longer') or 0:,} chosen longer, "
                        f"{m.get('n_taken_rejected_longer') or 0:,} rejected longer" for m in mixture)
            + ".",
            "",
        ]
    return out


def _training_format_section() -> list[str]:
    """The "Training format" section of a training table (``prompt``, ``chosen``, ``rejected``)."""
    return [
        "## Training format",
        "",
        "`prompt`, `chosen` and `rejected` are in TRL's explicit-prompt conversational form: each is a list of "
        "`{role, content}` messages, and the Columns table below says which turns each one holds. TRL's "
        "`DPOTrainer` and `RewardTrainer` read these columns as they are.",
        "",
    ]


def _flagged_section(mart: str, names: set[str], flagged: list[str], training: list[str],
                     condition: str | None) -> list[str]:
    """The "Flagged pairs" section of a table of pairs (an ``integrity_flags`` column): what a flag
    means for training and where this export puts the flagged pairs (``flagged``: the export's
    `<dataset>_flagged` splits, ``training`` the others). ``condition``: the training table's
    filter (training_filter), shown under "How to use"."""
    if "integrity_flags" not in names:
        return []
    out = [
        "## Flagged pairs",
        "",
        "An integrity check that finds something wrong with a pair flags it: `integrity_flags` names the checks "
        "(the Columns table describes each)"
        + (" and `is_flagged` is true" if "is_flagged" in names else "")
        + ". A flagged pair is **not for training by default**"
    ]
    if mart == "preference_pairs":
        out[-1] += (
            f": each dataset's flagged pairs are its split `<dataset>{FLAGGED_SUFFIX}`, and the other splits, one "
            "per dataset and named after it, hold the training pairs"
            + (f" ({', '.join(f'`{s}`' for s in training)})." if training else ".")
            + (f" Flagged in this build: {', '.join(f'`{s}`' for s in flagged)}." if flagged
               else f" This export has no `<dataset>{FLAGGED_SUFFIX}` split: no pair is flagged, or the build set "
                    "the var `train_on_flagged_pairs` and each dataset's split holds its flagged pairs too.")
            + f" `{MIXTURE_MART}` takes none of them."
        )
    elif mart == MIXTURE_MART:
        out[-1] += ", and this mixture takes none: it draws from the pairs no check flags."
    else:
        out[-1] += (
            f": the flagged pairs are the `<dataset>{FLAGGED_SUFFIX}` split of the `preference_pairs` export"
            + (', and the filter of the "How to use" snippet leaves them out.' if condition else ".")
        )
    return out + [""]


def _number(value, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _biases_section(datasets: list[str], biases: dict[str, dict]) -> list[str]:
    """The "Known biases" section: the datasets' rows of pair_bias_profile and truncation_collapse."""
    profiles = [(d, biases[d]["profile"]) for d in datasets if biases.get(d, {}).get("profile")]
    collapses = [(d, r) for d in datasets for r in biases.get(d, {}).get("collapse", [])]
    if not profiles and not collapses:
        return []
    out = [
        "## Known biases",
        "",
        "Measured on the clean training pairs of `preference_pairs` (tables `pair_bias_profile` and "
        "`truncation_collapse` of the warehouse, which also slice by source and chosen model). A "
        "reward model learns length from preference data: *chosen longer* is how often \"the longer "
        "response wins\" is right among pairs of unequal length (50% is no bias). Format patterns: the "
        "share of pairs whose chosen / rejected response has one.",
        "",
    ]
    if profiles:
        patterns = ("list", "bold", "header", "code", "link", "emoji")
        out += [
            "| dataset | pairs | chosen longer | mean chars chosen / rejected | length-margin corr. | "
            + " | ".join(f"{p} % chosen / rejected" for p in patterns) + " |",
            "|---|---:|---:|---:|---:|" + "---:|" * len(patterns),
        ]
        for d, p in profiles:
            cells = [
                _cell(d), f"{p['n_pairs']:,}",
                "—" if p["pct_chosen_longer"] is None else f"{p['pct_chosen_longer']:.1f}%",
                f"{_number(p['mean_chosen_len'], 0)} / {_number(p['mean_rejected_len'], 0)}",
                _number(p["length_margin_corr"], 3),
            ] + [f"{_number(p[f'pct_chosen_{x}'])} / {_number(p[f'pct_rejected_{x}'])}" for x in patterns]
            out.append("| " + " | ".join(cells) + " |")
        out += [""]
    if collapses:
        counted = sorted({r["counted_with"] for _, r in collapses})
        out += [
            "Truncation: pairs whose chosen and rejected responses become the same sequence when prompt + "
            "response are truncated to the budget (they differ only after it; tokens counted as "
            + ", ".join(f"`{c}`" for c in counted) + ").",
            "",
            "| dataset | budget (tokens) | pairs collapsed | % |",
            "|---|---:|---:|---:|",
        ]
        out += [
            f"| {_cell(d)} | {r['budget_tokens']:,} | {r['n_collapsed']:,} of {r['n_pairs']:,} | {r['pct_collapsed']:.1f}% |"
            for d, r in collapses
        ]
        out += [""]
    return out


def _contamination_section(datasets: list[str], context: CardContext, contamination_table: bool) -> list[str]:
    """The "Benchmark contamination" section: the eval sets the build checked the training prompts
    against (meta.eval_sets) with their revisions and the rule's settings, and per dataset of the
    card its pairs flagged eval_contamination and the items of each eval set its prompts hold."""
    c = context.contamination
    if c is None:
        return []
    out = ["## Benchmark contamination", ""]
    if contamination_table:
        out += ["This table is part of the benchmark decontamination check, not training data.", ""]
    if not c.eval_sets:
        return out + [
            "No eval set was registered in this build (the `eval_sets` var), so the training prompts were "
            "not checked against any benchmark.",
            "",
        ]
    ngram, threshold, limit = c.settings["ngram"], c.settings["threshold"], c.settings["max_eval_share"]
    out += [
        "The build checked every training prompt against these benchmarks (the `eval_sets` var): a pair "
        "whose prompt has a user turn containing one of their items is flagged "
        f"`{CONTAMINATION_FLAG}` and is not a training pair.",
        "",
        "| eval set | Hub id | config | splits | fields | revision |",
        "|---|---|---|---|---|---|",
    ]
    for e in c.eval_sets:
        out.append(
            f"| {_cell(e.key)} | [{e.hub_id}]({HUB_DATASETS_URL}/{e.hub_id}) | {_cell(e.config or 'default')} "
            f"| {_cell(', '.join(e.splits) if e.splits else 'all')} | {_cell(', '.join(e.fields))} "
            f"| {_cell(context.revision(e))} |"
        )
    out += [
        "",
        f"The rule (the var `contamination`: ngram {ngram}, threshold {threshold:g}, max_eval_share {limit:g}): "
        "texts are split into tokens (runs of letters and digits, lower-cased); an eval text of at least "
        f"{ngram} tokens matches a user turn when more than {100 * threshold:g}% of its tokens lie in a run of "
        f"{ngram} tokens the turn also has, a shorter one when the turn holds all its tokens in a row. A "
        f"dataset whose prompts hold more than {limit:g}% of an eval set's items is over the limit.",
        "",
    ]
    shown = [d for d in datasets if d in c.summary]
    if not shown:
        return out
    out += [
        f"| dataset | pairs flagged `{CONTAMINATION_FLAG}` | ... by no other check | items matched, per eval set |",
        "|---|---:|---:|---|",
    ]
    for d in shown:
        flagged = c.flagged.get(d, {})
        matched = "; ".join(
            f"{r['eval_set']} {r['n_eval_items_matched']:,} of {r['n_eval_items']:,} "
            f"({r['pct_eval_set_matched']:.1f}%{', over the limit' if r['exceeds_limit'] else ''})"
            for r in c.summary[d] if r["n_eval_items_matched"]
        )
        out.append(
            f"| {_cell(d)} | {flagged.get('n_flagged', 0):,} | {flagged.get('n_only', 0):,} | {_cell(matched or 'none')} |"
        )
    out += [
        "",
        "*By no other check*: the pairs that would be training pairs without this check. The matches, "
        "with the evidence, are in the warehouse's `contamination_matches`; one row per dataset and eval "
        "set in `contamination_summary`.",
        "",
    ]
    return out


def _near_duplicates_section(datasets: list[str], found: NearDuplicates | None) -> list[str]:
    """The "Near duplicates and label conflicts" section: what the build looked for (the rule with
    the settings it recorded), per dataset of the card its pairs flagged by each near-duplicate
    check, and the rows of near_duplicate_summary that involve the card's datasets."""
    if found is None:
        return []
    out = ["## Near duplicates and label conflicts", ""]
    settings = found.settings
    cap = (settings or {}).get("mixture_max_pairs_per_prompt_cluster")
    capped = (f"`training_mixture` took at most {cap:,} pairs of one prompt cluster (near-duplicate prompts, across "
              "datasets; the var `mixture_max_pairs_per_prompt_cluster`)." if cap is not None else None)
    if settings is None:
        out += ["The build did not record the near-duplicate settings (no `near_duplicates_*` columns in "
                "`meta.warehouse_build_info`).", ""]
    elif not settings["enabled"]:
        return out + [
            "The near-duplicate check was off in this build (the var `near_duplicates: {enabled: false}`): no "
            "prompt or pair was compared and no pair is flagged by it." + (f" {capped}" if capped else ""),
            "",
        ]
    else:
        ngram, threshold = settings["ngram"], settings["threshold"]
        out += [
            f"What the build looked for, across all its datasets (the var `near_duplicates`: ngram {ngram}, "
            f"threshold {threshold:g}, keep {settings['keep']}): two prompts are near duplicates when the sets of "
            f"word {ngram}-grams of their texts (tokens: runs of letters and digits, lower-cased) have a Jaccard "
            f"similarity of at least {threshold:g}. Two pairs whose prompts are the same or near duplicates make the "
            "same comparison when their chosen responses are near and their rejected ones too ("
            + ("every copy but the first" if settings["keep"] == "one" else "every copy")
            + " is flagged `near_duplicate_pair`), a label conflict when each one's chosen is near the other's "
            "rejected (both are flagged `label_conflict`); a pair whose chosen and rejected responses are near is "
            "flagged `near_identical_responses`.",
            "",
        ]
    if capped:
        out += [capped, ""]
    shown = [d for d in found.datasets if d in datasets]
    if not shown:
        return out
    out += [
        "| dataset | " + " | ".join(f"pairs flagged `{f}`" for f in NEAR_DUPLICATE_FLAGS) + " | ... by no other check |",
        "|---|" + "---:|" * (len(NEAR_DUPLICATE_FLAGS) + 1),
    ]
    for d in shown:
        flagged = found.flagged.get(d, {})
        cells = [f"{flagged.get(f'n_{f}', 0):,}" for f in NEAR_DUPLICATE_FLAGS] + [f"{flagged.get('n_only', 0):,}"]
        out.append(f"| {_cell(d)} | " + " | ".join(cells) + " |")
    out += [
        "",
        "Counted over all the dataset's pairs in `preference_pairs` (a pair can have several flags). *By no other "
        "check*: the pairs that would be training pairs without these checks.",
        "",
    ]
    involved = [r for r in found.summary if r["dataset_a"] in shown or r["dataset_b"] in shown]
    shared = [r for r in involved if r["n_prompt_pairs"] or r["n_same_comparison"] or r["n_label_conflicts"]]
    if not shared:
        return out + [
            f"None of {', '.join(f'`{d}`' for d in shown)} shares a near-duplicate prompt with itself or with another "
            "dataset of the build (`near_duplicate_summary`).",
            "",
        ]
    out += [
        "Shared between two datasets of the build, one of them this card's (`near_duplicate_summary`; a dataset "
        "with itself: within it): near-duplicate prompt pairs, pairs of pairs making the same comparison, and label "
        "conflicts.",
        "",
        "| dataset | with | prompt pairs | same comparisons | label conflicts |",
        "|---|---|---:|---:|---:|",
    ]
    out += [
        f"| {_cell(r['dataset_a'])} | {_cell(r['dataset_b'])} | {r['n_prompt_pairs']:,} | {r['n_same_comparison']:,} "
        f"| {r['n_label_conflicts']:,} |"
        for r in shared
    ]
    out += [""]
    if len(shared) < len(involved):
        out += [f"The other {len(involved) - len(shared):,} of the {len(involved):,} combinations involving this "
                "card's datasets share none.", ""]
    return out


def _secrets_section(datasets: list[str] | None, context: CardContext, redacted: dict[str, int]) -> list[str]:
    """The "Secrets and personal data" section: the kinds looked for, by category; per kind what
    pii_summary found in the card's datasets (``None``: every dataset); what the export redacted."""
    r = context.redaction
    if r is None:
        return []
    by_category = {c: [p for p in r["patterns"] if p["category"] == c] for c in ("secret", "personal")}
    patterns = by_category["secret"] + by_category["personal"]
    kinds = {c: ", ".join(f"`{p['kind']}`" for p in ps) for c, ps in by_category.items()}
    out = [
        "## Secrets and personal data",
        "",
        f"The build looks for secrets ({kinds['secret']}) and personal data ({kinds['personal']}; an IP "
        "address only when public) in every text of `preference_pairs`, with the patterns of the seed "
        f"`pii_patterns`. A pair with a secret is flagged `{SECRET_FLAG}` and left out of training.",
        "",
    ]
    summary = context.pii_summary
    kept = {c: r[key] == "kept" for c, key in (("secret", "secrets"), ("personal", "personal"))}

    def done(p: dict) -> str:
        return "kept" if kept[p["category"]] else f"{redacted.get(p['kind'], 0):,}"

    if summary is None:
        out += [
            "The warehouse has no `pii_summary` table: the scan was not built, so its findings are not counted here.",
            "",
            "| kind | category | replaced in this table |",
            "|---|---|---:|",
        ]
        out += [f"| `{p['kind']}` | {p['category']} | {done(p)} |" for p in patterns]
    else:
        shown = list(dict.fromkeys(row["dataset"] for row in summary))
        if datasets is not None:
            shown = [d for d in shown if d in datasets]
        out += [
            "| kind | category | found | pairs | pairs flagged | replaced in this table |",
            "|---|---|---:|---:|---:|---:|",
        ]
        for p in patterns:
            rows = [row for row in summary if row["kind"] == p["kind"] and row["dataset"] in shown]
            cells = [f"{sum(row[c] for row in rows):,}" for c in ("n_findings", "n_pairs", "n_pairs_flagged")]
            out.append(f"| `{p['kind']}` | {p['category']} | " + " | ".join(cells) + f" | {done(p)} |")
        where = ", ".join(_code(d) for d in shown) if datasets is not None else "every dataset of the build"
        out += [
            "",
            f"*Found*: the matches in the texts of {where or 'none of its datasets'} (the warehouse's `pii_summary`); "
            "*pairs*: the pairs holding one; *pairs flagged*: those flagged for it.",
        ]
    secrets = ", ".join(sorted({f"`{p['replacement']}`" for p in by_category["secret"]}))
    personal = " and ".join(f"every `{p['kind']}` with `{p['replacement']}`" for p in by_category["personal"])
    out += [
        "",
        ("This export kept secrets as they are (`--keep-secrets`): it is not for publishing, and "
         "`preftools publish` refuses it." if kept["secret"]
         else f"This export replaced every secret in this table's texts with {secrets}.")
        + (" Personal data is as it was (`preftools export --redact-personal` replaces it)." if kept["personal"]
           else f" It replaced {personal} (`--redact-personal`)."),
        "",
    ]
    return out


def _extra_datasets_table(mart: str, extra: list[SourceDataset], splits: dict[str, int]) -> list[str]:
    """The `extra_datasets` entries among a mart's sources: shape and what was read of them."""
    out = [
        "Registered with the `extra_datasets` var (the build's entries, `meta.extra_datasets`):",
        "",
    ]
    by_split = mart == "preference_pairs"
    head = "| entry | Hub id | shape | config | splits read |" + (" splits here |" if by_split else "")
    out += [head, "|---|---|---|---|---|" + ("---|" if by_split else "")]
    for d in extra:
        row = (
            f"| {_cell(d.key)} | {_cell(d.hub_id)} | {_cell(d.shape or '—')} | {_cell(d.config or 'default')} "
            f"| {_cell(', '.join(d.splits) if d.splits else 'all')} |"
        )
        if by_split:
            here = [f"`{s}` ({splits[s]:,})" for s in (d.key, d.key + FLAGGED_SUFFIX) if s in splits]
            row += f" {_cell(', '.join(here) or 'no pair')} |"
        out.append(row)
    out += [""]
    return out


def render_card(
    mart: str,
    columns: list[tuple[str, str]],
    splits: dict[str, int],
    context: CardContext,
    description: str | None = None,
    column_descriptions: dict[str, str] | None = None,
    redacted: dict[str, int] | None = None,
) -> str:
    """The README.md of one exported mart. ``splits``: split name -> rows, in file order;
    ``redacted``: kind -> the replacements the export made in the mart's files."""
    column_descriptions = column_descriptions or {}
    registry = {d.key: d for d in context.registry}
    sources = [registry[k] for k in source_keys(mart, context.registry, context.build, context.mixture)]
    training = is_training_table(columns)
    total = sum(splits.values())
    flagged = [s for s in splits if s.endswith(FLAGGED_SUFFIX)]
    train_splits = [s for s in splits if s not in flagged]

    licenses = sorted({d.hub_license for d in sources if d.hub_license})
    meta: dict = {"pretty_name": f"{_pretty(mart)} (preference-data warehouse)"}
    if licenses:
        meta["license"] = licenses[0] if len(licenses) == 1 else licenses
    if sources:
        meta["source_datasets"] = [d.hub_id for d in sources]
    meta["tags"] = ["preference", "dpo", "rlhf"] if training else ["preference"]
    meta["size_categories"] = [size_category(total)]
    meta["configs"] = [{
        "config_name": "default",
        "data_files": [{"split": s, "path": f"data/{s}-*"} for s in splits],
    }]

    out: list[str] = ["---", _front_matter(meta).rstrip("\n"), "---", "", f"# {_pretty(mart)}", ""]
    out += [
        f"The `main.{mart}` table of the preference-data warehouse (dbt + DuckDB), exported as Parquet "
        "in the Hub layout: one config, `default`, with the splits below.",
        "",
    ]
    names = {c for c, _ in columns}
    if description:
        out += ["## What the table holds", "", _paragraphs(description), ""]
    if training:
        out += _training_format_section()
    condition = training_filter(mart, columns) if training else None
    out += _flagged_section(mart, names, flagged, train_splits, condition)

    # splits
    out += ["## Splits", "", "| split | rows |", "|---|---:|"]
    out += [f"| {_cell(s)} | {n:,} |" for s, n in splits.items()]
    out += [f"| **total** | **{total:,}** |", ""]
    if total == 0:
        out += [
            "This table has no rows in this build: its file holds the schema only (pyarrow and DuckDB "
            "read it; `datasets` refuses an empty split)."
            + (" The build set no `mixture` var, so no pair was drawn: build with e.g. "
               "`dbt build --vars '{mixture: {ultrafeedback: 0.5}}'` (a fraction of each named dataset's "
               "clean pairs) and export again." if mart == MIXTURE_MART and not context.mixture else ""),
            "",
        ]

    if mart == MIXTURE_MART and context.mixture:
        out += _mixture_table(context.mixture)
    pairs_table = training or "is_flagged" in names  # the tables of training pairs
    # a dataset of preference_pairs is a built-in group (rever: rever_judge + rever_rubric) or an entry
    datasets = list(dict.fromkeys([name for d in sources for name in (d.group, d.key)] + train_splits))
    if pairs_table:
        out += _biases_section(datasets, context.biases)
    if pairs_table or EVAL_SET_COLUMN in names:
        out += _contamination_section(datasets, context, contamination_table=EVAL_SET_COLUMN in names)
    if pairs_table:
        out += _near_duplicates_section(datasets, context.near_duplicates)
    out += _secrets_section(datasets if sources else None, context, redacted or {})

    # how to use
    load_line = 'ds = load_dataset("ORG/NAME")  # the Hub id of this dataset, or the local folder holding this card'
    out += ["## How to use", "", "```python"]
    if training:
        use = train_splits or list(splits)
        if len(use) > 1:
            out += ["from datasets import concatenate_datasets, load_dataset"]
        else:
            out += ["from datasets import load_dataset"]
        out += ["from trl import DPOConfig, DPOTrainer", "", load_line]
        if len(use) > 1:
            out += [f"train = concatenate_datasets([ds[s] for s in {use!r}])"]
        else:
            out += [f"train = ds[{use[0]!r}]"]
        if condition:
            out += [f"train = train.filter(lambda row: {condition})"]
        out += [f"train = train.select_columns({list(TRAINING_COLUMNS)!r})"]
        out += [
            f'trainer = DPOTrainer(model="{EXAMPLE_MODEL}", args=DPOConfig(output_dir="dpo"), train_dataset=train)',
            "trainer.train()",
            "```",
        ]
        if condition:
            out += [
                "",
                f"The filter `{condition}` keeps the training rows: the same rows as this dataset's "
                "training split of `preference_pairs` (the column descriptions below say more).",
            ]
    else:
        out += [
            "from datasets import load_dataset",
            "",
            load_line,
            f"table = ds[{next(iter(splits), DEFAULT_SPLIT)!r}]",
            "```",
            "",
            "pyarrow, DuckDB, polars and Spark read `data/*.parquet` directly.",
        ]
    out += [""]

    # columns
    out += ["## Columns", "", "| column | type | description |", "|---|---|---|"]
    for name, duck_type in columns:
        text = column_descriptions.get(name)
        out.append(f"| {_code(name)} | {_code(duck_type)} | {_cell(text) if text else '—'} |")
    out += [""]
    if not description and not column_descriptions:
        out += ["No descriptions: the warehouse this was exported from has none in its catalog.", ""]

    # sources and licences
    out += ["## Source datasets and licences", ""]
    if sources:
        out += ["| dataset | Hub id | licence | revision |", "|---|---|---|---|"]
        for d in sources:
            licence = d.license if d.license else "not recorded"
            out.append(
                f"| {_cell(d.key)} | [{d.hub_id}]({HUB_DATASETS_URL}/{d.hub_id}) | {_cell(licence)} "
                f"| {_cell(context.revision(d))} |"
            )
        out += [""]
        extra = [d for d in sources if d.extra]
        if extra:
            out += _extra_datasets_table(mart, extra, splits)
        unstated = [d for d in sources if d.hub_license == "other" and not d.extra]
        unstated_entries = [d for d in sources if d.extra and (d.hub_license == "other" or not d.license)]
        note = (
            "This table is derived from the datasets above and keeps their licences"
            + (f" (`license: {', '.join(licenses)}` above)." if licenses else ".")
        )
        if unstated_entries:
            note += (
                f" {', '.join(d.hub_id for d in unstated_entries)}: "
                + ("its `extra_datasets` entry names" if len(unstated_entries) == 1 else "their `extra_datasets` entries name")
                + " no licence the Hub knows (`license:` in the entry; hence `license: other`): check the terms on "
                + ("its dataset card" if len(unstated_entries) == 1 else "their dataset cards")
                + " before redistributing this table or training on it."
            )
        if unstated:
            note += (
                f" {', '.join(d.hub_id for d in unstated)} "
                + ("states" if len(unstated) == 1 else "state")
                + " no licence on the dataset card (hence `license: other`): check the terms with "
                + ("its publisher" if len(unstated) == 1 else "their publishers")
                + " before redistributing this table or training on it."
            )
        if not context.registry_in_warehouse:
            note += " The warehouse has no `seeds.dataset_registry` table, so the licences are not recorded here."
        out += [note, ""]
    else:
        out += ["Not recorded for this table.", ""]

    # provenance
    build = context.build or {}
    out += ["## Provenance", "", "| | |", "|---|---|"]
    rows: list[tuple[str, str]] = []
    if build:
        # No invocation id or build time: a rebuild of the same inputs gives the same card (they
        # are in manifest.json).
        for key, label in (
            ("dbt_version", "dbt version"),
            ("target_name", "dbt target"),
            ("random_seed", "`random_seed`"),
            ("datasets", "dataset groups built"),
            ("git_commit", "project commit at build time"),
        ):
            if build.get(key) not in (None, ""):
                value = build[key]
                if key == "datasets":
                    value = ", ".join(enabled_groups(build) or [])
                rows.append((label, _code(value) if key == "git_commit" else _cell(value)))
    else:
        rows.append(("build", "not recorded (no `meta.warehouse_build_info`)"))
    revisions = [(d.hub_id, context.raw_revisions.get(d.hub_id, "unknown")) for d in sources]
    if revisions:
        if len({r for _, r in revisions}) == 1:
            rows.append(("raw data revision", _cell(revisions[0][1])))
        else:
            rows.append(("raw data revision", "; ".join(f"{_cell(h)}: {_cell(r)}" for h, r in revisions)))
    commit, _, dirty = context.project_commit.partition(" + ")
    rows.append((
        "project commit at export time",
        _code(commit) + (" with uncommitted changes" if dirty else "") + " (`git rev-parse HEAD` when exported)",
    ))
    rows.append(("exported with", _cell(context.exported_with)))
    out += [f"| {label} | {value} |" for label, value in rows]
    out += [""]
    if context.note:
        out += [("#" + line if line.startswith("#") else line) for line in context.note.strip().splitlines()] + [""]
    return "\n".join(out)
