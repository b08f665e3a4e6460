"""The audit report: `python -m preftools.report` writes one
self-contained HTML file from the session warehouse; it loads nothing from the network, carries
each chart's data, and renders in headless Chromium (a screenshot that is not blank, and the
vega-embed SVG of every chart in the DOM). A mart that was not built gives a "not built" note,
never a crash; a missing warehouse, or one without any mart, is refused in one line.

The charts' data is checked against the warehouse where it is a mart's own row, and against an
independent computation from the raw files (rules written from the marts' docs) where the
report aggregates: the UltraFeedback score grid, the best-rated/best-overall
disagreement by source, the ReVeR tool-call rates and pair counts, the CodeUltraFeedback
published pair count. The benchmark contamination section is checked on the session warehouse (no
eval set registered) and on test_contamination's build with examples/eval_sets.yml. The near
duplicates section is checked against the marts it reads (near_duplicate_summary, prompt_clusters,
preference_pairs' flags) and the settings meta.warehouse_build_info records. The secrets and
personal data section is checked against counts made from pii_findings and preference_pairs' flags,
and for the absence of every value it counts (whole or masked).
"""

from __future__ import annotations

import html
import json
import math
import re
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from html.parser import HTMLParser
from pathlib import Path

import duckdb
import pii_reference
import pytest

from benchmarks.reference import aspect_ratings, best_index, mean_rating
from conftest import REPO
from preftools.inputs.hub_layout import read_table
from test_contamination import built  # noqa: F401 - the fixture: one build with examples/eval_sets.yml, shared

pytestmark = pytest.mark.slow

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser")
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--window-size=1400,3000", "--virtual-time-budget=10000",
]
CHART_IDS = [
    "uf-score-grid", "uf-model-bug", "uf-disagreement", "cuf-reasons", "cuf-pairs",
    "rever-margins", "rever-tool-calls", "judge-agreement", "length-bias", "truncation-collapse",
]


# --------------------------------------------------------------------------------------------
# helpers


def run_report(duckdb_path: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "preftools.report", "--duckdb-path", str(duckdb_path), "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )


class PageParser(HTMLParser):
    """Tags with their attributes, and the text of each <script>."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.scripts: list[tuple[dict, str]] = []
        self._script: dict | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag == "script":
            self._script, self._text = attrs, []

    def handle_data(self, data):
        if self._script is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag == "script" and self._script is not None:
            self.scripts.append((self._script, "".join(self._text)))
            self._script = None


def parse_page(text: str) -> PageParser:
    parser = PageParser()
    parser.feed(text)
    parser.close()
    return parser


def chart_specs(page: PageParser) -> dict[str, dict]:
    return {
        attrs["id"].removeprefix("spec-"): json.loads(body)
        for attrs, body in page.scripts
        if attrs.get("type") == "application/json" and attrs.get("id", "").startswith("spec-")
    }


def spec_values(spec) -> list[dict]:
    """Every inline data row of a Vega-Lite spec (top-level datasets and any data.values)."""
    rows: list[dict] = []

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "datasets" and isinstance(value, dict):
                    for values in value.values():
                        rows.extend(values)
                elif key == "values" and isinstance(value, list) and value and isinstance(value[0], dict):
                    rows.extend(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(spec)
    return rows


def table_cells(text: str, table_id: str) -> list[list[str]]:
    """The cells of a figures table, header row first, as the page shows them."""
    m = re.search(rf'<table class="figures" id="table-{re.escape(table_id)}">(.*?)</table>', text, re.S)
    assert m, f"no table {table_id}"
    return [[html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", m.group(1), re.S)]


def section_html(text: str, section_id: str) -> str:
    start = text.index(f'<section id="{section_id}">')
    return text[start:text.index("</section>", start)]


def recorded_revision(raw_revisions: str, hub_id: str) -> str:
    """What meta.warehouse_build_info.raw_revisions says of a dataset: its entry when the column is a
    JSON object, else the one text every dataset shares."""
    try:
        recorded = json.loads(raw_revisions)
    except ValueError:
        return raw_revisions
    return recorded.get(hub_id, "unknown") if isinstance(recorded, dict) else raw_revisions


def read_raw(raw_dir: Path, hub_id: str) -> list[dict]:
    """Every row of a dataset's raw files, whatever their format (Parquet, JSON Lines) and place."""
    return read_table(raw_dir / hub_id).to_pylist()


def find_chromium() -> str | None:
    for candidate in CHROMIUM_CANDIDATES:
        path = shutil.which(candidate)
        if path:
            return path
    return None


def chromium(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    binary = find_chromium()
    if binary is None:
        pytest.skip("chromium not installed: apt-get install chromium")
    profile = tmp_path / f"chromium-profile-{len(list(tmp_path.glob('chromium-profile-*')))}"
    return subprocess.run(
        [binary, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=180,
    )


# --------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="module")
def report(warehouse, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "audit_report.html"
    proc = run_report(warehouse.path, out)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text(encoding="utf-8")
    return out, text, parse_page(text)


@pytest.fixture(scope="module")
def specs(report):
    return chart_specs(report[2])


# --------------------------------------------------------------------------------------------
# self-contained


def test_report_is_self_contained(report):
    _, text, page = report
    external = []
    for tag, attrs in page.tags:
        for attr in ("src", "href", "data", "srcset", "poster", "action"):
            value = (attrs.get(attr) or "").strip().lower()
            if value.startswith(("http:", "https:", "//", "ftp:")):
                external.append(f"<{tag} {attr}={attrs[attr]!r}>")
        if tag == "link":
            external.append(f"<link {attrs}>")  # no stylesheet, font or preload link at all
        if tag == "script" and attrs.get("src"):
            external.append(f"<script src={attrs['src']!r}>")
        if tag == "a" and attrs.get("href") and not attrs["href"].startswith("#"):
            external.append(f"<a href={attrs['href']!r}>")
    assert not external, f"references outside the file: {external}"
    assert "@import" not in text and "url(http" not in text.replace(" ", "")
    # the libraries are inline: one script defines vegaEmbed
    assert any("window.vegaEmbed" in body for attrs, body in page.scripts if not attrs.get("type", "").endswith("json"))
    for chart_id, spec in chart_specs(page).items():
        dumped = json.dumps(spec)
        assert '"url"' not in dumped, f"{chart_id} loads data from a URL"


def test_report_has_build_info(report, warehouse):
    _, text, _ = report
    info = warehouse.rows("select invocation_id, random_seed, raw_data_dir, built_at from meta.warehouse_build_info")[0]
    for key in ("invocation_id", "random_seed", "raw_data_dir"):
        assert str(info[key]) in text, key
    assert str(info["built_at"])[:19] in text


def test_every_chart_is_present(specs, report):
    # (plus the charts of the extra_datasets entries, "extra-<name>-...": test_extra_exports.py)
    assert sorted(c for c in specs if not c.startswith("extra-")) == sorted(CHART_IDS)
    _, text, _ = report
    for chart_id in CHART_IDS:
        assert f'id="chart-{chart_id}"' in text
        assert spec_values(specs[chart_id]), f"{chart_id} has no data"
    # the full build has every mart: no "not built" note anywhere
    assert "data-not-built=" not in text and 'class="not-built"' not in text and 'class="build not-built"' not in text


def test_no_raw_text_in_the_report(report, warehouse):
    """Only aggregates: no instruction or response text leaks into the HTML (but the start of the first
    prompt of the largest prompt clusters, in their table: test_near_duplicates_section_lists_the_largest_clusters)."""
    _, text, _ = report
    text = re.sub(r'<table class="figures" id="table-near-duplicate-clusters">.*?</table>', "", text, flags=re.S)
    samples = warehouse.rows(
        "select instruction from main.ultrafeedback_curated where length(instruction) > 40 order by prompt_id limit 20"
    ) + warehouse.rows(
        "select response as instruction from main.ultrafeedback_completion_scores "
        "where length(response) > 40 order by completion_id limit 20"
    )
    assert samples
    for row in samples:
        assert row["instruction"][:40] not in text


def test_report_is_deterministic(report, warehouse, tmp_path):
    out, text, _ = report
    again = tmp_path / "again.html"
    proc = run_report(warehouse.path, again)
    assert proc.returncode == 0, proc.stderr
    assert again.read_text(encoding="utf-8") == text


# --------------------------------------------------------------------------------------------
# the charts' data against independent computations


def test_ultrafeedback_score_grid(specs, warehouse):
    """Cells = completions per model x overall_score x average-rating bin, recomputed from raw."""
    expected: Counter = Counter()
    for row in read_raw(warehouse.raw_dir, "argilla/ultrafeedback-binarized-curation"):
        for completion in row["completions"] or []:
            avg = mean_rating(aspect_ratings(completion))
            score = completion.get("overall_score")
            if avg is None or score is None:
                continue
            rating_bin = min(math.floor(avg * 2) / 2, 4.5)
            expected[(completion.get("model") or "(no model)", float(score), rating_bin)] += 1
    got = Counter()
    for cell in spec_values(specs["uf-score-grid"]):
        got[(cell["model"], cell["overall_score"], cell["rating_bin_start"])] += cell["n_completions"]
    assert got == expected


def test_ultrafeedback_disagreement_by_source(specs, warehouse):
    """Share of prompts whose best-rated and best-overall picks differ, recomputed from raw."""
    picks = defaultdict(lambda: [0, 0])
    for row in read_raw(warehouse.raw_dir, "argilla/ultrafeedback-binarized-curation"):
        completions = row["completions"] or []
        if not completions:
            continue
        rated = best_index([mean_rating(aspect_ratings(c)) for c in completions])
        overall = best_index([c.get("overall_score") for c in completions])
        for key in (("source", row["source"] or "(no source)"), ("all", None)):
            picks[key][0] += 1
            picks[key][1] += rated != overall
    rows = spec_values(specs["uf-disagreement"])
    got = {
        (r["dimension"], r["source"] if r["dimension"] == "source" else None):
            (r["n_best_overall_picks"], r["n_best_rated_is_different"], r["share_best_rated_is_different"])
        for r in rows
    }
    assert set(got) == set(picks)
    for key, (n, n_different) in picks.items():
        assert got[key][:2] == (n, n_different), key
        assert got[key][2] == pytest.approx(n_different / n, abs=1e-6), key


def test_code_ultrafeedback_chart_data(specs, warehouse):
    raw_coseal = read_raw(warehouse.raw_dir, "coseal/CodeUltraFeedback")
    raw_published = read_table(warehouse.raw_dir / "RLHFlow/CodeUltraFeedback-standard").num_rows
    pairs = spec_values(specs["cuf-pairs"])
    published = [p for p in pairs if p["pairs"].startswith("published")]
    assert sum(p["n_pairs"] for p in published) == raw_published
    preferences = {r["preference"] for r in raw_coseal if r["preference"] is not None}
    assert preferences <= {p["preference"] for p in published}
    # the reasons chart is the bug summary's per-preference counts, unpivoted
    mart = warehouse.rows("select * from main.code_ultrafeedback_bug_summary where scope = 'preference'")
    expected = {
        (m["preference"] or "(unmatched)", column.removeprefix("n_")): m[column]
        for m in mart for column in m
        if column in {"n_na_rated_chosen", "n_na_rated_rejected", "n_prompt_dropped_by_last_na",
                      "n_string_order_inverted", "n_invalid_rating", "n_prompt_quarantined", "n_duplicate_model"}
    }
    got = {(r["preference"], r["reason"]): r["n_pairs"] for r in spec_values(specs["cuf-reasons"])}
    assert got == expected
    assert sum(got.values()) > 0, "the generated data plants script bugs: some pairs must differ"


def test_known_biases_chart_data(specs, warehouse):
    """The charts draw pair_bias_profile (every dataset slice, other slices of 20 pairs or more,
    those with a pair of unequal length) and truncation_collapse, row for row."""
    profile = warehouse.rows("select * from main.pair_bias_profile")
    expected = {(r["dataset"], r["slice_kind"], r["slice"]): round(r["pct_chosen_longer"], 6) for r in profile
                if r["pct_chosen_longer"] is not None and (r["slice_kind"] == "dataset" or r["n_pairs"] >= 20)}
    got = {(r["dataset"], r["slice_kind"], r["slice"]): r["pct_chosen_longer"] for r in spec_values(specs["length-bias"])}
    assert got == expected
    assert {k[0] for k in got} == {r["dataset"] for r in profile}
    collapse = {(r["dataset"], r["budget_tokens"]): r["n_collapsed"]
                for r in warehouse.rows("select * from main.truncation_collapse")}
    assert {(r["dataset"], r["budget_tokens"]): r["n_collapsed"]
            for r in spec_values(specs["truncation-collapse"])} == collapse
    assert sum(collapse.values()) > 0, "the generated data plants pairs that collapse"


def test_rever_chart_data(specs, warehouse, report):
    judge = read_raw(warehouse.raw_dir, "OpenRubrics/ReVeR-Traces-Judge")
    rubric = read_raw(warehouse.raw_dir, "OpenRubrics/ReVeR-Traces-Rubric")
    trajectories = Counter()
    with_tool = Counter()
    for row in judge:
        source = row["source"]
        trajectories[source] += 1
        with_tool[source] += any((m.get("role") in ("tool_call", "tool")) for m in row["messages"] or [])
    tools = {r["source"]: r for r in spec_values(specs["rever-tool-calls"]) if "source" in r}
    assert {s: t["n_trajectories"] for s, t in tools.items()} == dict(trajectories)
    for source, t in tools.items():
        assert t["n_trajectories_with_tool"] == with_tool[source], source
        assert t["tool_call_rate"] == pytest.approx(with_tool[source] / trajectories[source], abs=1e-6)
    references = [r for r in spec_values(specs["rever-tool-calls"]) if "reference" in r]
    assert any(r["rate"] == pytest.approx(0.589) for r in references)  # the card's figure
    # every pair id is either in the margin histogram or counted as unscored
    ids = {r["id"] for r in judge} | {r["id"] for r in rubric}
    in_histogram = sum(r["n_pairs"] for r in spec_values(specs["rever-margins"]))
    n_unscored = warehouse.scalar("select count(*) from main.rever_pairs where score_margin is null")
    assert in_histogram + n_unscored == len(ids)
    if n_unscored:
        assert f"{n_unscored:,} of {len(ids):,} pairs have a side without a score" in report[1]


def test_rever_headline(warehouse):
    """The ReVeR headline is over all sources: trajectories and tool use recomputed from the raw
    judge file, pair figures from every rever_pairs row (the mean margin over all scored pairs,
    not a mean of per-source means)."""
    judge = read_raw(warehouse.raw_dir, "OpenRubrics/ReVeR-Traces-Judge")
    with_tool = sum(any((m.get("role") in ("tool_call", "tool")) for m in row["messages"] or []) for row in judge)
    (headline,) = warehouse.rows("select * from reporting.rpt_headline_rever")
    pairs = warehouse.rows("select score_margin, kept from main.rever_pairs")
    margins = [p["score_margin"] for p in pairs if p["score_margin"] is not None]
    assert headline["n_pairs"] == len(pairs)
    assert headline["n_pairs_kept"] == sum(p["kept"] is True for p in pairs)
    assert headline["n_pairs_unscored"] == len(pairs) - len(margins)
    assert headline["mean_score_margin"] == pytest.approx(sum(margins) / len(margins), abs=1e-9)
    assert headline["tool_call_rate"] == pytest.approx(with_tool / len(judge), abs=1e-12)


def test_rever_headline_names_the_score_margin(report, warehouse):
    """The headline's margin is labelled as the score margin and is the mean of
    rever_pairs.score_margin (chosen minus rejected rubric score), not of the normalised margin."""
    _, text, _ = report
    pairs = warehouse.rows("select score_margin, margin from main.rever_pairs where score_margin is not null")
    mean_score_margin = sum(p["score_margin"] for p in pairs) / len(pairs)
    mean_margin = sum(p["margin"] for p in pairs) / len(pairs)
    assert f"{mean_score_margin:,.3f}" != f"{mean_margin:,.3f}", "the data cannot tell the two apart"
    label = "mean score margin of the scored pairs (chosen minus rejected rubric score)"
    shown = re.search(rf'<td>{re.escape(label)}</td><td class="value">([^<]*)</td>', text)
    assert shown, f"no headline row {label!r}"
    assert shown[1] == f"{mean_score_margin:,.3f}"
    assert "mean margin" not in text


def test_judge_agreement_chart_data(specs, warehouse):
    summary = warehouse.rows("select * from main.judge_agreement_summary")[0]
    rows = spec_values(specs["judge-agreement"])
    rates = {r["score"]: r for r in rows if "score" in r}
    assert rates["average rating (fixed)"]["n_agree"] == summary["n_judge_agrees_with_average_rating"]
    assert rates["overall_score (buggy)"]["n_agree"] == summary["n_judge_agrees_with_overall_score"]
    sides = {r["judge_sides_with"]: r["n_pairs"] for r in rows if "judge_sides_with" in r}
    assert sum(sides.values()) == summary["n_ratings_disagree"]
    assert sides["average rating (fixed)"] == summary["n_disagreements_judge_sides_with_average_rating"]


# --------------------------------------------------------------------------------------------
# benchmark contamination


@pytest.fixture(scope="module")
def contaminated_report(built, tmp_path_factory):  # noqa: F811 - the imported fixture
    """(warehouse, report text) of the build with the eval sets of examples/eval_sets.yml."""
    warehouse, rc, output = built
    assert rc == 0, output[-6000:]
    out = tmp_path_factory.mktemp("contamination_report") / "audit_report.html"
    proc = run_report(warehouse.path, out)
    assert proc.returncode == 0, proc.stderr
    return warehouse, out.read_text(encoding="utf-8")


def test_contamination_section_without_eval_sets(report, warehouse):
    """The session build registers no eval set: the section says so in one line, with no table."""
    _, text, _ = report
    assert warehouse.scalar("select count(*) from meta.eval_sets") == 0
    section = section_html(text, "contamination")
    assert "No eval set is registered in this build" in section
    assert "<table" not in section and "not-built" not in section


def test_contamination_section_lists_the_eval_sets_checked(contaminated_report):
    """Each eval set of meta.eval_sets in registry order, with its Hub id, items, the revision the
    build recorded, and the rule's settings."""
    wh, text = contaminated_report
    eval_sets = wh.rows("select * from meta.eval_sets order by registry_order")
    assert eval_sets
    items = {r["eval_set"]: r["n"] for r in wh.rows("select eval_set, count(distinct item_id) as n from main.eval_items group by 1")}
    revisions = wh.scalar("select raw_revisions from meta.warehouse_build_info")
    cells = table_cells(text, "contamination-eval-sets")
    rows = [dict(zip(cells[0], row)) for row in cells[1:]]
    assert [(r["eval set"], r["Hub id"], r["items"], r["revision"]) for r in rows] == [
        (e["eval_set"], e["hub_id"], f"{items[e['eval_set']]:,}", recorded_revision(revisions, e["hub_id"]))
        for e in eval_sets]
    settings = eval_sets[0]
    section = html.unescape(section_html(text, "contamination"))
    assert (f"ngram {settings['ngram']}, threshold {settings['threshold']:g}" in section
            and f"max_eval_share {settings['max_eval_share']:g}%" in section)


def test_contamination_section_has_the_summary_and_examples(contaminated_report):
    """Every (dataset, eval set) of contamination_summary with an item matched, with its numbers and
    the rows over max_eval_share marked; per eval set with a match, its match of highest coverage
    with the evidence as contamination_matches has it."""
    wh, text = contaminated_report
    summary = wh.rows("select * from main.contamination_summary where n_eval_items_matched > 0")
    assert any(r["exceeds_limit"] for r in summary)
    cells = table_cells(text, "contamination-summary")
    got = {(row[0], row[1]): dict(zip(cells[0], row)) for row in cells[1:]}
    assert sorted(got) == sorted((r["dataset"], r["eval_set"]) for r in summary)
    for r in summary:
        g = got[(r["dataset"], r["eval_set"])]
        assert g["items matched"] == f"{r['n_eval_items_matched']:,} / {r['n_eval_items']:,}"
        assert g["% of the eval set"] == f"{r['pct_eval_set_matched']:.1f}%"
        assert (g["prompts"], g["pairs flagged"]) == (f"{r['n_prompts_matched']:,}", f"{r['n_pairs_flagged']:,}")
        assert g["over max_eval_share"].startswith("yes") == r["exceeds_limit"]
    n_all = wh.scalar("select count(*) from main.contamination_summary")
    assert f"{n_all - len(summary):,} of the {n_all:,} dataset x eval set combinations match no item" in text

    matches = wh.rows("select * from main.contamination_matches")
    key = ("dataset", "prompt_id", "eval_set", "item_id", "field", "turn")
    by_key = {tuple(m[k] for k in key): m for m in matches}
    cells = table_cells(text, "contamination-examples")
    examples = [dict(zip(cells[0], row)) for row in cells[1:]]
    assert sorted(e["eval set"] for e in examples) == sorted({m["eval_set"] for m in matches})
    for e in examples:
        field, turn = re.fullmatch(r"(.*) \((\d+)\)", e["field (turn)"]).groups()
        m = by_key[(e["dataset"], e["prompt_id"], e["eval set"], int(e["item"]), field, int(turn))]
        assert (e["match"], e["longest shared run"]) == (m["match_kind"], m["longest_shared_run"])
        best = max(x["coverage"] for x in matches if x["eval_set"] == e["eval set"])
        assert m["coverage"] == best and e["coverage"] == f"{best:.2f}"


# --------------------------------------------------------------------------------------------
# near duplicates and label conflicts

BUILTIN_DATASETS = ("ultrafeedback", "code_ultrafeedback", "rever")
NEAR_DUPLICATE_FLAGS = ("near_duplicate_pair", "label_conflict", "near_identical_responses")


def dataset_order(wh) -> list[str]:
    """docs/near-duplicates.md "Order": the built-in datasets the build enabled, then the
    extra_datasets entries in registry order."""
    enabled = wh.scalar("select datasets from meta.warehouse_build_info").split(",")
    extra = [r["dataset"] for r in wh.rows("select dataset from meta.extra_datasets order by registry_order")]
    return [d for d in BUILTIN_DATASETS if d in enabled] + extra


def prompt_text(prompt: list[dict]) -> str:
    """A prompt's text as the near-duplicate rule reads it: its user turns' contents joined with a line break."""
    return "\n".join(m["content"] for m in prompt if m["role"] == "user" and m["content"] is not None)


def test_near_duplicates_section_states_the_settings(report, warehouse):
    """The settings the build recorded in meta.warehouse_build_info, in a table and in the intro."""
    _, text, _ = report
    (info,) = warehouse.rows("select * from meta.warehouse_build_info")
    cells = table_cells(text, "near-duplicate-settings")
    got = {row[0]: row[1] for row in cells[1:]}
    cap = info["mixture_max_pairs_per_prompt_cluster"]
    assert got == {
        "enabled": str(info["near_duplicates_enabled"]).lower(),
        "ngram (words per shingle)": str(info["near_duplicates_ngram"]),
        "threshold (Jaccard)": f"{info['near_duplicates_threshold']:g}",
        "keep": info["near_duplicates_keep"],
        "MinHash LSH (bands x rows)": f"{info['near_duplicates_bands']} x {info['near_duplicates_rows']}",
        "mixture_max_pairs_per_prompt_cluster": "no cap" if cap is None else str(cap),
    }
    assert info["near_duplicates_enabled"]
    section = html.unescape(section_html(text, "near-duplicates"))
    assert (f"ngram {info['near_duplicates_ngram']}, threshold {info['near_duplicates_threshold']:g}, "
            f"keep {info['near_duplicates_keep']}") in section
    assert "not-built" not in section


def test_near_duplicates_matrix_is_the_summary(report, warehouse):
    """One row and one column per dataset in dataset order; the cell (a, b), a at or before b, holds
    near_duplicate_summary's prompt pairs / same comparisons / label conflicts ("·" for none); the
    cells below the diagonal are empty."""
    _, text, _ = report
    order = dataset_order(warehouse)
    summary = {(r["dataset_a"], r["dataset_b"]): r for r in warehouse.rows("select * from main.near_duplicate_summary")}
    assert len(summary) == len(order) * (len(order) + 1) // 2
    assert any(a != b and r["n_prompt_pairs"] for (a, b), r in summary.items())  # not vacuous
    cells = table_cells(text, "near-duplicate-matrix")
    assert cells[0] == ["dataset", *order]
    assert [row[0] for row in cells[1:]] == order
    for i, a in enumerate(order):
        for j, b in enumerate(order):
            got = cells[1 + i][1 + j]
            if j < i:
                assert got == "", (a, b)
                continue
            r = summary[(a, b)]
            counts = (r["n_prompt_pairs"], r["n_same_comparison"], r["n_label_conflicts"])
            assert got == (" / ".join(f"{n:,}" for n in counts) if any(counts) else "·"), (a, b)


def test_near_duplicates_section_lists_the_largest_clusters(report, warehouse):
    """The 10 clusters of prompt_clusters with the most prompts (then by cluster_id; none of one prompt),
    each with its datasets in dataset order, its pairs in preference_pairs and the first 120 characters
    of its first prompt's text (the prompt cluster_id names; its first pair by pair_id), on one line."""
    _, text, _ = report
    order = dataset_order(warehouse)
    members = warehouse.rows("select * from main.prompt_clusters")
    sizes = Counter(m["cluster_id"] for m in members)
    assert all(sizes[m["cluster_id"]] == m["cluster_size"] for m in members)
    largest = sorted((c for c, n in sizes.items() if n > 1), key=lambda c: (-sizes[c], c))[:10]
    assert largest
    pairs = warehouse.rows("select dataset, prompt_id, pair_id, prompt from main.preference_pairs")
    by_prompt = defaultdict(list)
    for p in pairs:
        by_prompt[(p["dataset"], p["prompt_id"])].append(p)
    cells = table_cells(text, "near-duplicate-clusters")
    assert cells[0] == ["cluster", "prompts", "datasets", "pairs", "first prompt"]
    assert [row[0] for row in cells[1:]] == largest
    for row, cluster in zip(cells[1:], largest):
        inside = [m for m in members if m["cluster_id"] == cluster]
        datasets = sorted({m["dataset"] for m in inside}, key=order.index)
        n_pairs = sum(len(by_prompt[(m["dataset"], m["prompt_id"])]) for m in inside)
        (first,) = [m for m in inside if f"{m['dataset']}:{m['prompt_id']}" == cluster]
        full = prompt_text(min(by_prompt[(first["dataset"], first["prompt_id"])], key=lambda p: p["pair_id"])["prompt"])
        preview = " ".join(full[:120].split()) + (" …" if len(full) > 120 else "")
        assert row == [cluster, f"{sizes[cluster]:,}", ", ".join(datasets), f"{n_pairs:,}", preview], cluster
    n_clusters = sum(1 for n in sizes.values() if n > 1)
    n_prompts = sum(n for n in sizes.values() if n > 1)
    section = html.unescape(section_html(text, "near-duplicates"))
    assert (f"{n_prompts:,} of the {len(members):,} prompts of preference_pairs have a near duplicate, "
            f"in {n_clusters:,} prompt clusters of two or more") in section


def test_near_duplicates_section_counts_each_datasets_flags(report, warehouse):
    """Per dataset of preference_pairs, in dataset order, then a total: its pairs, those each
    near-duplicate flag marks, those any marks, and those no other integrity flag marks."""
    _, text, _ = report
    order = dataset_order(warehouse)
    counts: dict[str, Counter] = defaultdict(Counter)
    for r in warehouse.rows("select dataset, integrity_flags from main.preference_pairs"):
        c = counts[r["dataset"]]
        flags = set(r["integrity_flags"])
        near = flags & set(NEAR_DUPLICATE_FLAGS)
        c["pairs"] += 1
        for f in NEAR_DUPLICATE_FLAGS:
            c[f] += f in flags
        c["any"] += bool(near)
        c["alone"] += bool(near) and near == flags
    assert sum(c["any"] for c in counts.values()), "no pair flagged by a near-duplicate check"
    columns = ["pairs", *NEAR_DUPLICATE_FLAGS, "any", "alone"]
    cells = table_cells(text, "near-duplicate-flags")
    assert cells[0] == ["dataset", "pairs", *NEAR_DUPLICATE_FLAGS, "any of the three", "... by no other check"]
    shown = [d for d in order if d in counts]
    assert cells[1:] == [[d, *(f"{counts[d][c]:,}" for c in columns)] for d in shown] + [
        ["total", *(f"{sum(counts[d][c] for d in shown):,}" for c in columns)]]


def test_near_duplicates_section_when_the_check_was_off(switched_off, tmp_path):
    """A build with near_duplicates.enabled false: the settings it used (as meta.warehouse_build_info
    records them) and one note; no matrix, cluster or flag table (there is nothing in them)."""
    wh = switched_off
    (info,) = wh.rows("select * from meta.warehouse_build_info")
    assert info["near_duplicates_enabled"] is False and info["mixture_max_pairs_per_prompt_cluster"] == 2
    assert wh.scalar("select count(*) from main.prompt_clusters where cluster_size > 1") == 0
    out = tmp_path / "off.html"
    proc = run_report(wh.path, out)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text(encoding="utf-8")
    settings = {row[0]: row[1] for row in table_cells(text, "near-duplicate-settings")[1:]}
    assert settings["enabled"] == "false" and settings["mixture_max_pairs_per_prompt_cluster"] == "2"
    assert settings["threshold (Jaccard)"] == f"{info['near_duplicates_threshold']:g}"
    section = html.unescape(section_html(text, "near-duplicates"))
    assert "The check was off in this build" in section
    for table in ("matrix", "clusters", "flags"):
        assert f'id="table-near-duplicate-{table}"' not in section, table


# --------------------------------------------------------------------------------------------
# secrets and personal data

PII_CATEGORIES = ("secret", "personal")  # the table's row order: secrets first, then by kind


def pii_kinds(wh) -> dict[str, str]:
    """kind -> category, of every kind of the seed pii_patterns (pii_summary has each for every dataset)."""
    return {r["kind"]: r["category"] for r in wh.rows("select distinct kind, category from main.pii_summary")}


def test_pii_section_counts_each_kind_per_dataset(report, warehouse):
    """One row per kind (secrets first, then by kind), one column per dataset in dataset order and a
    total; each cell holds the kind's matches in the dataset's texts / the pairs holding one, counted
    here from pii_findings ("·" for none)."""
    _, text, _ = report
    order = dataset_order(warehouse)
    category = pii_kinds(warehouse)
    assert sorted(set(category.values())) == sorted(PII_CATEGORIES)
    n_findings: Counter = Counter()
    pairs: dict[tuple, set] = defaultdict(set)
    for r in warehouse.rows("select dataset, pair_id, kind, n_occurrences from main.pii_findings"):
        n_findings[(r["dataset"], r["kind"])] += r["n_occurrences"]
        pairs[(r["dataset"], r["kind"])].add(r["pair_id"])

    def cell(n: int, p: int) -> str:
        return f"{n:,} / {p:,}" if n else "·"

    kinds = sorted(category, key=lambda k: (PII_CATEGORIES.index(category[k]), k))
    want = [["kind", "category", *order, "total"]]
    for kind in kinds:
        want.append([kind, category[kind], *(cell(n_findings[(d, kind)], len(pairs[(d, kind)])) for d in order),
                     cell(sum(n_findings[(d, kind)] for d in order), sum(len(pairs[(d, kind)]) for d in order))])
    assert table_cells(text, "pii-summary") == want
    section = html.unescape(section_html(text, "pii"))
    assert "not-built" not in section
    assert "audits.pii_findings" in section
    secrets = [k for k in kinds if category[k] == "secret"]
    personal = [k for k in kinds if category[k] == "personal"]
    assert (f"This build looked for {len(secrets)} formats of keys and tokens ({', '.join(secrets)}) and "
            f"{len(personal)} kinds of personal data ({', '.join(personal)})") in section
    assert ("No text of this build holds a secret or personal data of these kinds." in section) == (not n_findings)


def test_pii_section_states_the_setting_and_the_flagged_pairs(report, warehouse):
    """The var pii_flag_personal as meta.warehouse_build_info records it, and the pairs with a secret,
    with personal data and flagged for either, counted here from pii_findings and preference_pairs."""
    _, text, _ = report
    flag_personal = warehouse.scalar("select pii_flag_personal from meta.warehouse_build_info")
    assert flag_personal is False  # the session build's default
    with_secret, with_personal = set(), set()
    for r in warehouse.rows("select pair_id, category from main.pii_findings"):
        (with_secret if r["category"] == "secret" else with_personal).add(r["pair_id"])
    pairs = warehouse.rows("select integrity_flags from main.preference_pairs")
    flagged = sum(1 for p in pairs if {"contains_secret", "contains_personal_data"} & set(p["integrity_flags"]))
    assert flagged == len(with_secret)  # without the var, only secrets flag a pair
    section = html.unescape(section_html(text, "pii"))
    assert "pii_flag_personal was false: pairs with personal data are not flagged." in section
    assert (f"Of the {len(pairs):,} pairs of preference_pairs, {len(with_secret):,} hold a secret (flagged "
            f"contains_secret) and {len(with_personal):,} personal data (not flagged: pii_flag_personal is false); "
            f"{flagged:,} pairs are flagged for either and leave training.") in section


def test_pii_section_shows_no_value(report, warehouse):
    """No value pii_findings counts is in the report, neither whole (found again in its pair's text
    of audits.pii_findings by its md5) nor masked; the section shows kinds and counts only. (The
    start of the first prompt of the largest prompt clusters is the report's one text: left out.)"""
    _, text, _ = report
    page = html.unescape(re.sub(r'<table class="figures" id="table-near-duplicate-clusters">.*?</table>', "",
                                text, flags=re.S))
    findings = warehouse.rows(
        "select kind, side, value_md5, value_masked, prompt, chosen, rejected from audits.pii_findings")
    values, masked = set(), set()
    for f in findings:
        side_text = pii_reference.texts(f)[f["side"]]
        found = {v for v in pii_reference.matches(f["kind"], side_text) if pii_reference.md5(v) == f["value_md5"]}
        assert len(found) == 1, (f["kind"], f["side"], f["value_md5"])
        values |= found
        masked.add(f["value_masked"])
    assert [v for v in values if v in page] == []
    assert [m for m in masked if m in page] == []


# --------------------------------------------------------------------------------------------
# missing marts, errors


def test_missing_marts_give_not_built_notes(warehouse, tmp_path):
    """A warehouse without judge_agreement_summary and meta.warehouse_build_info still gives a report."""
    partial = tmp_path / "partial.duckdb"
    shutil.copy(warehouse.path, partial)
    with duckdb.connect(str(partial)) as con:
        con.execute("drop table main.judge_agreement_summary")
        con.execute("drop table main.pii_summary")
        con.execute("drop table meta.warehouse_build_info")
    out = tmp_path / "partial.html"
    proc = run_report(partial, out)
    assert proc.returncode == 0, proc.stderr
    assert "judge_agreement_summary" in proc.stdout
    text = out.read_text(encoding="utf-8")
    specs = chart_specs(parse_page(text))
    assert sorted(c for c in specs if not c.startswith("extra-")) == sorted(c for c in CHART_IDS if c != "judge-agreement")
    assert 'data-not-built="judge_agreement_summary"' in text
    assert "meta.warehouse_build_info is not built" in text
    # the near-duplicate section does not need meta.warehouse_build_info
    section = section_html(text, "near-duplicates")
    assert 'id="table-near-duplicate-settings"' in section and 'id="table-near-duplicate-matrix"' in section
    section = section_html(text, "pii")
    assert 'data-not-built="pii_summary"' in section and 'id="table-pii-summary"' not in section


def test_warehouse_without_marts_is_refused(tmp_path):
    """A new, empty DuckDB file, and one with tables but none in schema main (the marts), are
    refused like a missing warehouse: one line, exit code 2, saying to run `make build`, no file."""
    empty = tmp_path / "empty.duckdb"
    duckdb.connect(str(empty)).close()
    no_marts = tmp_path / "no_marts.duckdb"
    with duckdb.connect(str(no_marts)) as con:
        con.execute("create schema meta")
        con.execute("create table meta.warehouse_build_info as select 'x' as invocation_id")
        con.execute("create schema staging")
        con.execute("create view staging.stg_x as select 1 as n")
    for path in (empty, no_marts):
        out = tmp_path / f"{path.stem}.html"
        proc = run_report(path, out)
        assert proc.returncode == 2, (path.name, proc.stdout, proc.stderr)
        assert proc.stderr.count("\n") == 1, proc.stderr
        assert proc.stderr.startswith("report: error: no tables in schema main of "), proc.stderr
        assert str(path) in proc.stderr and "run `make build` first" in proc.stderr
        assert proc.stdout == ""
        assert not out.exists()


def test_missing_warehouse_is_one_line(tmp_path):
    proc = run_report(tmp_path / "nope.duckdb", tmp_path / "r.html")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "no warehouse at" in proc.stderr
    assert not (tmp_path / "r.html").exists()


# --------------------------------------------------------------------------------------------
# rendering in headless Chromium


def test_report_renders_in_chromium(report, tmp_path):
    from PIL import Image, ImageStat

    out, _, _ = report
    png = tmp_path / "report.png"
    proc = chromium([f"--screenshot={png}", out.resolve().as_uri()], tmp_path)
    assert png.exists() and png.stat().st_size > 0, proc.stderr[-2000:]
    with Image.open(png) as image:
        gray = image.convert("L")
        assert gray.size == (1400, 3000)
        stddev = ImageStat.Stat(gray).stddev[0]
        colours = len(image.convert("RGB").getcolors(maxcolors=1 << 20) or [])
    assert stddev > 10, f"screenshot looks blank (pixel standard deviation {stddev:.1f})"
    assert colours > 50, f"screenshot has only {colours} colours: no chart was drawn"

    dom = chromium(["--dump-dom", out.resolve().as_uri()], tmp_path).stdout
    page = parse_page(dom)
    rendered = {attrs["id"].removeprefix("chart-") for tag, attrs in page.tags
                if tag == "div" and attrs.get("id", "").startswith("chart-") and attrs.get("data-rendered") == "true"}
    errors = [attrs for tag, attrs in page.tags if attrs.get("data-error")]
    assert not errors, errors
    assert rendered == set(chart_specs(report[2])) and set(CHART_IDS) <= rendered
    # vega-embed drew SVG marks for every chart
    assert sum(1 for tag, attrs in page.tags if tag == "svg" and "marks" in (attrs.get("class") or "")) >= len(CHART_IDS)
    mark_groups = [attrs["class"] for tag, attrs in page.tags if tag == "g" and "role-mark" in (attrs.get("class") or "")]
    assert len(mark_groups) >= len(CHART_IDS), mark_groups
    assert sum(1 for tag, _ in page.tags if tag == "path") > 100
