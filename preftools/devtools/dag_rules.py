"""dbt-project-evaluator's rules, offline: read ``target/manifest.json`` and report what the
dbt-labs package would report, without installing it (the dbt hub is unreachable here and
fetched code is never committed).

Each rule is a function ``(Project, Config) -> list[Violation]`` named after the evaluator's
model (``fct_<rule>``), with the evaluator's default thresholds (models_fanout_threshold 3,
too_many_joins_threshold 7, chained_views_threshold 5, documentation and test coverage
targets 100 %). What is set for this project rather than taken from the package defaults:

* the model types (folder -> allowed name prefixes), in :data:`PROJECT_MODEL_TYPES`, the
  evaluator's ``model_types`` / ``<type>_folder_name`` / ``<type>_prefixes`` variables;
* the primary-key tests: the package's pairs plus this project's ``checks`` generic test
  (tests/generic/) when it is given a key (``primary_key``, ``unique`` like dbt_utils'
  unique_combination_of_columns, or ``one_row``);
* two rules excepted on purpose, with the reasons in CONTRIBUTING.md: the mart naming
  convention and source freshness (:data:`EXCEPTIONS`).

    python -m preftools.devtools.dag_rules [--manifest target/manifest.json] [--include-excepted]

prints one line per violation (rule, node, detail; tab-separated) and exits 1 if any.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path, PurePosixPath

from preftools.cli import EXIT_ERROR, error, run

PROG = "python -m preftools.devtools.dag_rules"
DEFAULT_MANIFEST = Path("target/manifest.json")


# ---------------------------------------------------------------------------- configuration

@dataclass(frozen=True)
class ModelType:
    """A kind of model: the folders it lives in and the prefixes its names take. With
    ``prefix_identifies`` a name with one of the prefixes is of this type wherever it sits
    (the evaluator's rule: the prefix decides, the folder only when the prefix says nothing)."""

    name: str
    folders: tuple[str, ...]
    prefixes: tuple[str, ...]
    prefix_identifies: bool = True


# The evaluator's defaults (base/staging/intermediate/marts/other) plus this project's folders:
# models/meta holds public tables like the marts (warehouse_build_info, read by the exports),
# models/reporting the report's `rpt_` views (the evaluator's `other` prefix), models/audits the
# audit views, named by dataset (uf_, cuf_, rever_). `rever_` is also how the ReVeR marts begin,
# so the audit prefixes only check names, they do not decide a type.
PROJECT_MODEL_TYPES: tuple[ModelType, ...] = (
    ModelType("base", ("base",), ("base_",)),
    ModelType("staging", ("staging",), ("stg_",)),
    ModelType("intermediate", ("intermediate",), ("int_",)),
    ModelType("marts", ("marts", "meta"), ("fct_", "dim_")),
    ModelType("reporting", ("reporting",), ("rpt_",)),
    ModelType("audits", ("audits",), ("uf_", "cuf_", "rever_"), prefix_identifies=False),
    ModelType("other", (), ()),
)


@dataclass(frozen=True)
class Excepted:
    """A rule (or the part of it about one model type) left out on purpose."""

    rule: str
    reason: str
    model_type: str | None = None

    def covers(self, v: Violation) -> bool:
        return v.rule == self.rule and (self.model_type is None or v.model_type == self.model_type)


EXCEPTIONS: tuple[Excepted, ...] = (
    Excepted("model_naming_conventions", model_type="marts",
             reason="the mart names are a public interface (exports, Hub datasets)"),
    Excepted("sources_without_freshness",
             reason="the raw data are static snapshots of Hub datasets, not loaded continuously"),
)


@dataclass(frozen=True)
class Config:
    models_fanout_threshold: int = 3
    too_many_joins_threshold: int = 7
    chained_views_threshold: int = 5
    documentation_coverage_target: float = 100.0
    test_coverage_target: float = 100.0
    # each set: the tests that together make a primary-key test (macro unique ids minus "macro.")
    primary_key_test_macros: tuple[tuple[str, ...], ...] = (
        ("dbt.test_unique", "dbt.test_not_null"),
        ("dbt_utils.test_unique_combination_of_columns",),
        ("preference_warehouse.test_checks",),
    )
    # a test of one of these macros counts only when it is given one of the arguments: a `checks`
    # test makes a key test with a primary key, a unique combination or one row (a one-row
    # model's key is the empty set)
    key_arguments: tuple[tuple[str, tuple[str, ...]], ...] = (
        ("preference_warehouse.test_checks", ("primary_key", "unique", "one_row")),
    )
    model_types: tuple[ModelType, ...] = PROJECT_MODEL_TYPES
    exceptions: tuple[Excepted, ...] = EXCEPTIONS


# ---------------------------------------------------------------------------- the graph

@dataclass(frozen=True)
class Violation:
    rule: str
    node: str
    detail: str
    model_type: str | None = field(default=None, compare=False)

    def line(self) -> str:
        return f"{self.rule}\t{self.node}\t{self.detail}"


@dataclass
class Resource:
    uid: str
    name: str            # the evaluator's resource_name: `<source>.<table>` for sources
    type: str            # model, seed, snapshot, analysis, operation, source, exposure
    path: str            # original_file_path
    raw: Mapping
    model_type: str | None = None

    @property
    def directory(self) -> str:
        return str(PurePosixPath(self.path).parent) + "/"

    @property
    def materialized(self) -> str | None:
        return (self.raw.get("config") or {}).get("materialized")

    @property
    def is_public(self) -> bool:
        return self.type == "model" and self.raw.get("access") == "public"

    @property
    def described(self) -> bool:
        return bool(self.raw.get("description"))


@dataclass
class Test:
    uid: str
    name: str
    path: str
    column_name: str | None
    macros: frozenset[str]
    is_generic: bool
    primary_parent: str | None
    arguments: Mapping = field(default_factory=dict)


class Project:
    """The root project's enabled resources and the DAG between them (tests apart, as in the
    evaluator: a test is never a parent or a child)."""

    def __init__(self, manifest: Mapping, config: Config = Config()):
        self.config = config
        project = (manifest.get("metadata") or {}).get("project_name")
        ours = (lambda n: project is None or n.get("package_name") == project)
        self.resources: dict[str, Resource] = {}
        self.tests: list[Test] = []
        for uid, n in (manifest.get("nodes") or {}).items():
            if not ours(n) or not (n.get("config") or {}).get("enabled", True):
                continue
            if n["resource_type"] == "test":
                parents = (n.get("depends_on") or {}).get("nodes") or []
                self.tests.append(Test(
                    uid, n["name"], n.get("original_file_path", ""), n.get("column_name"),
                    frozenset(m.removeprefix("macro.") for m in (n.get("depends_on") or {}).get("macros") or []),
                    bool(n.get("test_metadata")),
                    n.get("attached_node") or (parents[-1] if parents else None),
                    (n.get("test_metadata") or {}).get("kwargs") or {}))
            else:
                self.resources[uid] = Resource(uid, n["name"], n["resource_type"], n.get("original_file_path", ""), n)
        for uid, s in (manifest.get("sources") or {}).items():
            if ours(s) and (s.get("config") or {}).get("enabled", True):
                self.resources[uid] = Resource(uid, f"{s['source_name']}.{s['name']}", "source",
                                               s.get("original_file_path", ""), s)
        for uid, e in (manifest.get("exposures") or {}).items():
            if ours(e) and (e.get("config") or {}).get("enabled", True):
                self.resources[uid] = Resource(uid, e["name"], "exposure", e.get("original_file_path", ""), e)
        self.parents: dict[str, list[str]] = {}
        self.children: dict[str, list[str]] = {uid: [] for uid in self.resources}
        for uid, r in self.resources.items():
            deps = (r.raw.get("depends_on") or {}).get("nodes") or [] if r.type != "source" else []
            self.parents[uid] = [p for p in dict.fromkeys(deps) if p in self.resources]
            for p in self.parents[uid]:
                self.children[p].append(uid)
        for r in self.resources.values():
            if r.type == "model":
                r.model_type = self._model_type(r)

    # -- model types, the evaluator's way: the prefix decides, else the closest known folder
    def prefix(self, r: Resource) -> str:
        return r.name.split("_", 1)[0] + "_"

    def folder_type(self, r: Resource) -> str | None:
        for folder in reversed(PurePosixPath(r.path).parent.parts):
            for t in self.config.model_types:
                if folder in t.folders:
                    return t.name
        return None

    def _model_type(self, r: Resource) -> str:
        by_prefix = next((t.name for t in self.config.model_types
                          if t.prefix_identifies and self.prefix(r) in t.prefixes), None)
        return by_prefix or self.folder_type(r) or "other"

    def model_type_def(self, name: str) -> ModelType | None:
        return next((t for t in self.config.model_types if t.name == name), None)

    # -- helpers
    def dag_children(self, uid: str) -> list[str]:
        """Children other than exposures (the evaluator leaves exposures out of most DAG rules)."""
        return [u for u in self.children[uid] if self.resources[u].type != "exposure"]

    def of_type(self, *types: str) -> list[Resource]:
        return sorted((r for r in self.resources.values() if r.type in types), key=lambda r: r.name)

    def name(self, uid: str) -> str:
        return self.resources[uid].name

    def names(self, uids: Iterable[str]) -> str:
        return ", ".join(sorted(self.name(u) for u in uids))


# ---------------------------------------------------------------------------- modeling rules

RULES: dict[str, Callable[[Project, Config], list[Violation]]] = {}


def rule(fn: Callable[[Project, Config], list[Violation]]):
    RULES[fn.__name__] = fn
    return fn


@rule
def direct_join_to_source(p: Project, c: Config) -> list[Violation]:
    """A model that reads both a source and another model: stage the source first."""
    out = []
    for m in p.of_type("model"):
        kinds = {uid: p.resources[uid].type for uid in p.parents[m.uid]}
        srcs = [u for u, k in kinds.items() if k == "source"]
        mods = [u for u, k in kinds.items() if k == "model"]
        if srcs and mods:
            out.append(Violation("direct_join_to_source", m.name,
                                 f"reads source(s) {p.names(srcs)} and model(s) {p.names(mods)}"))
    return out


@rule
def marts_or_intermediate_dependent_on_source(p: Project, c: Config) -> list[Violation]:
    """Only staging reads sources."""
    return [Violation("marts_or_intermediate_dependent_on_source", m.name,
                      f"{m.model_type} model reads source(s) {p.names(srcs)}")
            for m in p.of_type("model") if m.model_type in ("marts", "intermediate")
            if (srcs := [u for u in p.parents[m.uid] if p.resources[u].type == "source"])]


@rule
def duplicate_sources(p: Project, c: Config) -> list[Violation]:
    """Two source definitions of one table."""
    by_location: dict[tuple, list[str]] = {}
    for s in p.of_type("source"):
        key = (s.raw.get("database"), s.raw.get("schema"), s.raw.get("identifier") or s.raw.get("name"))
        by_location.setdefault(key, []).append(s.name)
    return [Violation("duplicate_sources", ".".join(str(k) for k in key if k), "defined as " + ", ".join(sorted(v)))
            for key, v in sorted(by_location.items(), key=lambda kv: str(kv[0])) if len(v) > 1]


_QUOTED = r"""[\[`"']?\w+(?:-\w+)?[\]`"']?"""
_HARD_CODED = [
    # from/join <a>.<b>[.<c>], each part bare or quoted, then white space or the end
    re.compile(rf"(?<!distinct\s)\b(?:from|join)\s+({_QUOTED}(?:\.{_QUOTED}){{1,2}})(?=\s|$)", re.I),
    # from/join "<name>" (a quoted single name)
    re.compile(r"""(?<!distinct\s)\b(?:from|join)\s+([\[`"']\w+(?:-\w+)?[\]`"'])(?=\s|$)""", re.I),
    # from/join {{ var('...') }} (a table name in a variable)
    re.compile(r"""(?<!distinct\s)\b(?:from|join)\s+(\{\{\s*var\s*\([^)]*\)\s*\}\})""", re.I),
]


def hard_coded_references_in(sql: str) -> list[str]:
    """Table names written into the SQL instead of ref()/source() (`--` comments removed)."""
    code = re.sub(r"--.*", "", sql)
    return sorted({m.group(1).strip() for rx in _HARD_CODED for m in rx.finditer(code)})


@rule
def hard_coded_references(p: Project, c: Config) -> list[Violation]:
    return [Violation("hard_coded_references", m.name, ", ".join(refs))
            for m in p.of_type("model") if m.raw.get("language", "sql") == "sql"
            if (refs := hard_coded_references_in(m.raw.get("raw_code") or ""))]


@rule
def model_fanout(p: Project, c: Config) -> list[Violation]:
    """A resource with models_fanout_threshold or more leaf models (models no other model reads;
    exposures do not count, as in the evaluator) as direct children: the leaves probably share
    logic to move upstream."""
    leaves = {m.uid for m in p.of_type("model") if not p.dag_children(m.uid)}
    out = []
    for r in sorted(p.resources.values(), key=lambda r: r.name):
        leaf_children = [u for u in p.children[r.uid] if u in leaves]
        if len(leaf_children) >= c.models_fanout_threshold:
            out.append(Violation("model_fanout", r.name,
                                 f"{len(leaf_children)} leaf children (threshold {c.models_fanout_threshold}): "
                                 + p.names(leaf_children), r.model_type))
    return out


@rule
def multiple_sources_joined(p: Project, c: Config) -> list[Violation]:
    return [Violation("multiple_sources_joined", r.name, "reads sources " + p.names(srcs))
            for r in sorted(p.resources.values(), key=lambda r: r.name) if r.type != "exposure"
            if len(srcs := [u for u in p.parents[r.uid] if p.resources[u].type == "source"]) > 1]


@rule
def rejoining_of_upstream_concepts(p: Project, c: Config) -> list[Violation]:
    """parent -> middle -> child and parent -> child, where middle has no other child: the
    middle model is a step of the child (or of the parent), not a concept of its own."""
    dag = lambda uid: p.resources[uid].type not in ("exposure", "metric")  # noqa: E731
    out = []
    for parent in sorted(p.resources.values(), key=lambda r: r.name):
        if not dag(parent.uid):
            continue
        direct = {u for u in p.children[parent.uid] if dag(u)}
        for middle in direct:
            middle_children = [u for u in p.children[middle] if dag(u)]
            if len(middle_children) == 1 and middle_children[0] in direct:
                out.append(Violation("rejoining_of_upstream_concepts", p.name(middle_children[0]),
                                     f"reads {parent.name} directly and through {p.name(middle)} "
                                     f"(whose only child it is)"))
    return sorted(out, key=lambda v: (v.node, v.detail))


@rule
def root_models(p: Project, c: Config) -> list[Violation]:
    """A model with no parent at all: it reads nothing through ref() or source()."""
    return [Violation("root_models", m.name, "no ref() or source(): nothing upstream", m.model_type)
            for m in p.of_type("model") if not p.parents[m.uid]]


@rule
def source_fanout(p: Project, c: Config) -> list[Violation]:
    """A source read by more than one model: one staging model per source."""
    return [Violation("source_fanout", s.name, "read by models " + p.names(kids))
            for s in p.of_type("source")
            if len(kids := [u for u in p.children[s.uid] if p.resources[u].type == "model"]) > 1]


@rule
def staging_dependent_on_marts_or_intermediate(p: Project, c: Config) -> list[Violation]:
    return [Violation("staging_dependent_on_marts_or_intermediate", m.name,
                      f"reads {p.resources[u].model_type} model {p.name(u)}")
            for m in p.of_type("model") if m.model_type == "staging"
            for u in sorted(p.parents[m.uid], key=p.name)
            if p.resources[u].type == "model" and p.resources[u].model_type in ("marts", "intermediate")]


# the layers in the order data flows through them; a model reads its own layer or earlier ones
LAYER_ORDER = {"base": 0, "staging": 0, "intermediate": 1, "marts": 2, "reporting": 3, "audits": 3}


@rule
def model_dependent_on_later_layer(p: Project, c: Config) -> list[Violation]:
    """A model that reads a model of a later layer (an intermediate model reading a mart, a mart
    reading an audit): data flows staging -> intermediate -> marts -> audits and reporting. Not
    an evaluator rule: this project's own, beside the evaluator's two staging rules."""
    layer = lambda r: LAYER_ORDER.get(r.model_type)  # noqa: E731
    return [Violation("model_dependent_on_later_layer", m.name,
                      f"{m.model_type} model reads {p.resources[u].model_type} model {p.name(u)}", m.model_type)
            for m in p.of_type("model") if layer(m) is not None
            for u in sorted(p.parents[m.uid], key=p.name)
            if p.resources[u].type == "model" and (layer(p.resources[u]) or 0) > layer(m)]


@rule
def staging_dependent_on_staging(p: Project, c: Config) -> list[Violation]:
    return [Violation("staging_dependent_on_staging", m.name, f"reads staging model {p.name(u)}")
            for m in p.of_type("model", "snapshot") if m.model_type == "staging"
            for u in sorted(p.parents[m.uid], key=p.name)
            if p.resources[u].type in ("model", "snapshot") and p.resources[u].model_type == "staging"]


@rule
def too_many_joins(p: Project, c: Config) -> list[Violation]:
    return [Violation("too_many_joins", m.name,
                      f"{len(p.parents[m.uid])} direct parents (threshold {c.too_many_joins_threshold}): "
                      + p.names(p.parents[m.uid]))
            for m in p.of_type("model") if len(p.parents[m.uid]) >= c.too_many_joins_threshold]


@rule
def unused_sources(p: Project, c: Config) -> list[Violation]:
    return [Violation("unused_sources", s.name, "no model or analysis reads it")
            for s in p.of_type("source") if not p.dag_children(s.uid)]


# ---------------------------------------------------------------------------- testing rules

def _tests_by_model(p: Project) -> dict[str, list[Test]]:
    by_model: dict[str, list[Test]] = {}
    for t in p.tests:
        if t.primary_parent in p.resources:
            by_model.setdefault(t.primary_parent, []).append(t)
    return by_model


def is_primary_key_tested(r: Resource, tests: list[Test], c: Config) -> bool:
    """Some column (or the model as a whole) carries one full set of primary_key_test_macros
    (unique + not_null, or a unique combination), or a unique test plus a not_null constraint."""
    not_null_constrained = {name for name, col in (r.raw.get("columns") or {}).items()
                            if any(k.get("type") == "not_null" for k in col.get("constraints") or [])}
    by_column: dict[str | None, list[Test]] = {}
    for t in tests:
        by_column.setdefault(t.column_name, []).append(t)
    key_arguments = dict(c.key_arguments)

    def gives_a_key(t: Test) -> bool:
        return all(any(t.arguments.get(a) for a in key_arguments[m]) for m in t.macros if m in key_arguments)

    for column, col_tests in by_column.items():
        for test_set in c.primary_key_test_macros:
            if sum(1 for t in col_tests if t.macros & set(test_set) and gives_a_key(t)) >= len(test_set):
                return True
        uniques = sum(1 for t in col_tests if "dbt.test_unique" in t.macros)
        if uniques + (column in not_null_constrained) >= 2:
            return True
    return False


@rule
def missing_primary_key_tests(p: Project, c: Config) -> list[Violation]:
    tests = _tests_by_model(p)
    return [Violation("missing_primary_key_tests", m.name,
                      "no column with unique + not_null (or a unique combination test)", m.model_type)
            for m in p.of_type("model") if not is_primary_key_tested(m, tests.get(m.uid, []), c)]


@rule
def test_coverage(p: Project, c: Config) -> list[Violation]:
    tests = _tests_by_model(p)
    models = p.of_type("model")
    untested = [m.name for m in models if not tests.get(m.uid)]
    pct = round(100.0 * (len(models) - len(untested)) / len(models), 2) if models else 100.0
    if pct >= c.test_coverage_target:
        return []
    return [Violation("test_coverage", "project",
                      f"{pct}% of models tested < target {c.test_coverage_target:g}%; untested: {', '.join(untested)}")]


@rule
def sources_without_freshness(p: Project, c: Config) -> list[Violation]:
    def has(freshness):
        return bool(freshness) and any((freshness.get(k) or {}).get("count") for k in ("warn_after", "error_after"))
    return [Violation("sources_without_freshness", s.name, "no warn_after/error_after")
            for s in p.of_type("source")
            if not (has(s.raw.get("freshness")) or has((s.raw.get("config") or {}).get("freshness")))]


# ---------------------------------------------------------------------------- documentation rules

@rule
def undocumented_models(p: Project, c: Config) -> list[Violation]:
    return [Violation("undocumented_models", m.name, "no description", m.model_type)
            for m in p.of_type("model") if not m.described]


@rule
def undocumented_sources(p: Project, c: Config) -> list[Violation]:
    names = sorted({s.raw["source_name"] for s in p.of_type("source") if not s.raw.get("source_description")})
    return [Violation("undocumented_sources", n, "the source has no description") for n in names]


@rule
def undocumented_source_tables(p: Project, c: Config) -> list[Violation]:
    return [Violation("undocumented_source_tables", s.name, "no description")
            for s in p.of_type("source") if not s.described]


@rule
def documentation_coverage(p: Project, c: Config) -> list[Violation]:
    models = p.of_type("model")
    missing = [m.name for m in models if not m.described]
    pct = round(100.0 * (len(models) - len(missing)) / len(models), 2) if models else 100.0
    if pct >= c.documentation_coverage_target:
        return []
    return [Violation("documentation_coverage", "project",
                      f"{pct}% of models documented < target {c.documentation_coverage_target:g}%; "
                      f"undocumented: {', '.join(missing)}")]


# ---------------------------------------------------------------------------- structure rules

@rule
def model_naming_conventions(p: Project, c: Config) -> list[Violation]:
    out = []
    for m in p.of_type("model"):
        t = p.model_type_def(m.model_type)
        allowed = t.prefixes if t else ()
        if not any(m.name.startswith(x) for x in allowed):
            out.append(Violation("model_naming_conventions", m.name,
                                 f"{m.model_type} model: name should start with "
                                 + (" or ".join(allowed) if allowed else
                                    "the prefix of a known folder (it is in none: " + m.directory + ")"),
                                 m.model_type))
    return out


@rule
def model_directories(p: Project, c: Config) -> list[Violation]:
    out = []
    for m in p.of_type("model"):
        folder = p.folder_type(m)
        if folder is not None and folder != m.model_type:
            t = p.model_type_def(m.model_type)
            out.append(Violation("model_directories", m.name,
                                 f"{m.model_type} model (by its prefix) in {m.directory}, a {folder} folder; "
                                 f"move it under models/.../{t.folders[0] if t and t.folders else m.model_type}/",
                                 m.model_type))
        if m.model_type == "staging":
            for source_name in sorted({p.resources[u].raw["source_name"] for u in p.parents[m.uid]
                                       if p.resources[u].type == "source"}):
                if source_name not in m.directory:
                    out.append(Violation("model_directories", m.name,
                                         f"staging model of source {source_name} outside "
                                         f"models/staging/{source_name}/ ({m.directory})", m.model_type))
    return out


@rule
def source_directories(p: Project, c: Config) -> list[Violation]:
    return [Violation("source_directories", s.name,
                      f"defined in {s.path}, not under models/staging/{s.raw['source_name']}/")
            for s in p.of_type("source") if s.raw["source_name"] not in s.directory]


@rule
def test_directories(p: Project, c: Config) -> list[Violation]:
    out = []
    for t in sorted(p.tests, key=lambda t: t.name):
        m = p.resources.get(t.primary_parent or "")
        if t.is_generic and m is not None and m.type == "model":
            test_dir = str(PurePosixPath(t.path).parent) + "/"
            if test_dir != m.directory:
                out.append(Violation("test_directories", t.name,
                                     f"defined in {test_dir}, its model {m.name} is in {m.directory}"))
    return out


# ---------------------------------------------------------------------------- governance rules

@rule
def exposures_dependent_on_private_models(p: Project, c: Config) -> list[Violation]:
    out = []
    for e in p.of_type("exposure"):
        private = [u for u in p.parents[e.uid] if not p.resources[u].is_public]
        for u in sorted(private, key=p.name):
            r = p.resources[u]
            access = r.raw.get("access") or "protected" if r.type == "model" else r.type
            out.append(Violation("exposures_dependent_on_private_models", e.name, f"depends on {r.name} ({access})"))
    return out


@rule
def public_models_without_contract(p: Project, c: Config) -> list[Violation]:
    return [Violation("public_models_without_contract", m.name, "public, contract not enforced", m.model_type)
            for m in p.of_type("model")
            if m.is_public and not ((m.raw.get("config") or {}).get("contract") or {}).get("enforced")]


@rule
def undocumented_public_models(p: Project, c: Config) -> list[Violation]:
    out = []
    for m in p.of_type("model"):
        if not m.is_public:
            continue
        cols = m.raw.get("columns") or {}
        bare = sorted(n for n, col in cols.items() if not col.get("description"))
        why = ("no description" if not m.described else "no columns documented" if not cols
               else "columns without description: " + ", ".join(bare) if bare else None)
        if why:
            out.append(Violation("undocumented_public_models", m.name, why, m.model_type))
    return out


# ---------------------------------------------------------------------------- performance rules

@rule
def chained_views_dependencies(p: Project, c: Config) -> list[Violation]:
    """A model at the end of more than chained_views_threshold views (or ephemerals) in a row."""
    is_view = lambda uid: (p.resources[uid].type == "model"  # noqa: E731
                           and p.resources[uid].materialized in ("view", "ephemeral"))

    @cache
    def chain(uid: str) -> tuple[str, ...]:  # the longest run of views ending at this view
        best = max((chain(u) for u in p.parents[uid] if is_view(u)), key=len, default=())
        return (*best, uid)

    out = []
    for m in p.of_type("model"):
        longest = max((chain(u) for u in p.parents[m.uid] if is_view(u)), key=len, default=())
        if len(longest) > c.chained_views_threshold:
            out.append(Violation("chained_views_dependencies", m.name,
                                 f"{len(longest)} views in a row upstream (threshold {c.chained_views_threshold}): "
                                 + " -> ".join(p.name(u) for u in longest)))
    return out


@rule
def exposure_parents_materializations(p: Project, c: Config) -> list[Violation]:
    return [Violation("exposure_parents_materializations", e.name,
                      f"depends on {r.name} ({'source' if r.type == 'source' else r.materialized})")
            for e in p.of_type("exposure")
            for r in sorted((p.resources[u] for u in p.parents[e.uid]), key=lambda r: r.name)
            if r.type == "source" or (r.type == "model" and r.materialized in ("view", "ephemeral"))]


# ---------------------------------------------------------------------------- running

def check(manifest: Mapping, config: Config = Config(), include_excepted: bool = False,
          rules: Iterable[str] | None = None) -> list[Violation]:
    """Every violation of the manifest, rule by rule; the excepted ones left out unless asked."""
    project = Project(manifest, config)
    out = []
    for name in rules or RULES:
        for v in RULES[name](project, config):
            if include_excepted or not any(e.covers(v) for e in config.exceptions):
                out.append(v)
    return out


def load_manifest(path: Path) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST,
                    help="dbt's manifest.json (default: target/manifest.json; `dbt parse` writes it)")
    ap.add_argument("--include-excepted", action="store_true",
                    help="also report the rules excepted on purpose (see CONTRIBUTING.md)")
    args = ap.parse_args(argv)
    try:
        manifest = load_manifest(args.manifest)
    except (OSError, ValueError) as exc:
        error(PROG, f"cannot read {args.manifest}: {exc} (run `dbt parse` first)")
        return EXIT_ERROR
    violations = check(manifest, include_excepted=args.include_excepted)
    for v in violations:
        print(v.line())
    if violations:
        print(f"{len(violations)} violation(s) of {len({v.rule for v in violations})} rule(s)", file=sys.stderr)
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(run(PROG, main))
