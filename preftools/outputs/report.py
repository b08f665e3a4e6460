"""Write the audit report: one self-contained HTML file with the warehouse's audits as charts.

    python -m preftools.report [--duckdb-path PATH] [--out reports/audit_report.html]
    make report                     # the same, with DUCKDB_PATH from the Makefile

What it shows (each section reads one or two marts; a mart that was not built, because its
dataset group was left out of the `datasets` var or the model does not exist yet, gives a
"not built" note instead of a chart; a warehouse with no marts at all is refused, as the export
refuses it):

- headline numbers per dataset, and the build the warehouse came from (meta.warehouse_build_info);
- UltraFeedback: overall_score against the recomputed average_rating, per model; how often the
  best-rated and best-overall picks disagree, by source;
- CodeUltraFeedback: the published script's bugs, pair differences by reason and preference;
- ReVeR: pair score margins (rever_pairs.score_margin, not the normalised ``margin``) and
  tool-call rates by source;
- judge agreement: does the rubric judge side with the fixed ratings or with overall_score;
- the `extra_datasets` entries (meta.extra_datasets): an overview, then one section per entry with
  its pairs (in its training split, flagged), flags by kind, rejected raw rows by reason and, for a
  scored entry, a summary and a histogram of its margins;
- the training mixture: per dataset of the `mixture` var, the fraction asked, its clean pairs and
  the pairs taken;
- benchmark contamination: the eval sets the training prompts were checked against (meta.eval_sets:
  Hub id, revision, the rule's settings), per dataset and eval set the items its prompts hold and the
  pairs flagged, and one example match per eval set with its evidence.
- near duplicates and label conflicts: the settings the build used (the var near_duplicates), a
  dataset x dataset matrix of near-duplicate prompt pairs, same comparisons and label conflicts
  (near_duplicate_summary), the largest prompt clusters (prompt_clusters) and per dataset the pairs
  each near-duplicate check flags.
- secrets and personal data: what the scan looks for, whether personal data was flagged (the var
  pii_flag_personal), per kind and dataset the matches found and the pairs holding one
  (pii_summary), and the pairs flagged; kinds and counts only, never a value.

How it is built: every number is aggregated in the warehouse, by the dbt views of
models/reporting/ (schema ``reporting``, one per chart, note or headline block); this module only
selects from them and renders (the warehouse is opened read-only, so a notebook may hold it open
too). Only those small aggregates reach Altair, never a response or prompt text (the two exceptions:
the evidence of the example matches, a benchmark's own tokens, lower-cased, and the first 120
characters of the first prompt of each of the 10 largest prompt clusters). Each chart's
Vega-Lite spec, data included, sits in the page as a
``<script type="application/json" id="spec-<chart>">`` block, and the Vega, Vega-Lite and
vega-embed JavaScript is inlined once (the bundle that vl-convert-python ships, matching Altair's
Vega-Lite version). The page loads nothing from the network: no ``src=``/``href=`` to a URL, no
web fonts, vega-embed's action menu (which links to the online editor) off. Opened from disk or
mailed as an attachment, it renders the same. The same warehouse gives a byte-identical file
(nothing time-dependent is written besides the build's own time).

Errors are one line on stderr and exit code 2 (set ``PREFTOOLS_DEBUG=1`` for a traceback).
"""

from __future__ import annotations

import argparse
import contextlib
import html
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from preftools import warehouse
from preftools.cli import EXIT_ERROR, unexpected_error
from preftools.outputs import cards
from preftools.warehouse import DEFAULT_DUCKDB_PATH

DEFAULT_OUT = "reports/audit_report.html"

# The card of OpenRubrics/ReVeR-Traces-Judge states the tool-call rate over all trajectories.
REVER_CARD_TOOL_CALL_RATE = 0.589

MART_SCHEMA = "main"  # where dbt builds the marts (as preftools.outputs.export's MART_SCHEMA)


class ReportError(Exception):
    """A failure worth one line to the user (missing or empty warehouse, lock, unwritable output)."""


# --------------------------------------------------------------------------------------------
# the warehouse


def open_warehouse(path: Path) -> contextlib.AbstractContextManager:
    """The warehouse, read-only; one clear line if it is missing, not DuckDB, or locked by a writer."""
    return warehouse.open_read_only(path, then="run the report again", error=ReportError)


def existing_tables(con) -> set[str]:
    """`schema.table` of every table and view in the warehouse."""
    rows = con.execute("select table_schema, table_name from information_schema.tables").fetchall()
    return {f"{schema}.{name}" for schema, name in rows}


def require_marts(tables: set[str], duckdb_path: Path) -> None:
    """Refuse a warehouse with no marts (a new file, or a build that never got that far): a
    report of "not built" notes only would hide that nothing was built."""
    if not any(table.startswith(f"{MART_SCHEMA}.") for table in tables):
        raise ReportError(f"no tables in schema {MART_SCHEMA} of {duckdb_path}: run `make build` first")


def fetch_rows(con, sql: str) -> list[dict]:
    """Rows of a small aggregate query as JSON-ready dicts (doubles rounded to 6 places for a stable file)."""
    cur = con.execute(sql)
    names = [d[0] for d in cur.description]
    out = []
    for row in cur.fetchall():
        record = {}
        for name, value in zip(names, row):
            if isinstance(value, float):
                value = round(value, 6)
            elif value is not None and not isinstance(value, (int, str, bool)):
                value = str(value)
            record[name] = value
        out.append(record)
    return out


# --------------------------------------------------------------------------------------------
# sections


@dataclass
class Chart:
    """One chart of the report: its id (HTML anchor and spec id), Vega-Lite spec and data rows."""

    chart_id: str
    spec: dict
    rows: list[dict]


@dataclass
class Table:
    """A small table of figures: a header, rows of formatted cells; ``numeric`` columns align right."""

    table_id: str
    header: list[str]
    rows: list[list[str]]
    numeric: set[int] = field(default_factory=set)


@dataclass
class Section:
    section_id: str
    nav: str
    title: str
    intro: str
    reads: list[str]
    charts: list[Chart] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)


def _pct(value) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _num(value) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:,.3f}"
    return f"{value:,}"


def _spec(chart) -> dict:
    spec = chart.to_dict()
    spec.pop("$schema", None)  # a URL, informational only; the bundle embeds the schema's version
    return spec


def _data(rows: list[dict]):
    import altair as alt

    return alt.Data(values=rows)


# --- UltraFeedback ---------------------------------------------------------------------------
# (every query the report runs is a view in models/reporting/, schema `reporting`)


def ultrafeedback_scores_section(con, tables: set[str]) -> Section:
    import altair as alt

    section = Section(
        "ultrafeedback-scores",
        "UltraFeedback scores",
        "UltraFeedback: overall_score against the recomputed average rating, per model",
        "Each cell counts the completions of a model with that overall_score (rows) and average rating "
        "(columns, mean of the four aspect ratings, in bins of 0.5). Without the bug the counts would run "
        "along the diagonal; the critique step stored a critique score of 1 as 10, so completions rated "
        "1 to 2 show up in the top row at overall_score 10. The bars below give, per model, the share of "
        "overall_score-10 completions whose average rating is 2 or less.",
        ["ultrafeedback_completion_scores", "ultrafeedback_score_bug_summary"],
    )
    if not _require(section, tables, ["rpt_uf_score_grid", "rpt_uf_model_bug", "rpt_uf_unplotted"]):
        return section
    grid = fetch_rows(con, "select * from reporting.rpt_uf_score_grid order by model, overall_score, rating_bin_start")
    base = alt.Chart(_data(grid)).mark_rect(stroke="white", strokeWidth=0.3).encode(
        x=alt.X("rating_bin_start:Q", title="average rating (recomputed)", scale=alt.Scale(domain=[1, 5]),
                axis=alt.Axis(values=[1, 2, 3, 4, 5])),
        x2="rating_bin_end:Q",
        y=alt.Y("score_bin_start:Q", title="overall_score (published)", scale=alt.Scale(domain=[0.75, 10.25]),
                axis=alt.Axis(values=[1, 4, 7, 10])),
        y2="score_bin_end:Q",
        color=alt.Color("n_completions:Q", title="completions", scale=alt.Scale(scheme="viridis", type="log")),
        tooltip=[
            alt.Tooltip("model:N"),
            alt.Tooltip("overall_score:Q"),
            alt.Tooltip("rating_bin_start:Q", title="average rating from"),
            alt.Tooltip("rating_bin_end:Q", title="average rating to"),
            alt.Tooltip("n_completions:Q", title="completions"),
        ],
    ).properties(width=150, height=130)
    heatmap = base.facet(facet=alt.Facet("model:N", title=None), columns=5).properties(
        title="Completions by overall_score and average rating, per model"
    )
    section.charts.append(Chart("uf-score-grid", _spec(heatmap), grid))

    per_model = fetch_rows(con, "select * from reporting.rpt_uf_model_bug order by model")
    bars = alt.Chart(_data(per_model)).mark_bar().encode(
        x=alt.X("share_overall_score_10_low_rating:Q", title="share of overall_score-10 completions with average rating <= 2",
                axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("model:N", sort="-x", title=None),
        tooltip=[
            alt.Tooltip("model:N"),
            alt.Tooltip("n_completions:Q", title="completions"),
            alt.Tooltip("n_overall_score_10:Q", title="overall_score 10"),
            alt.Tooltip("n_overall_score_10_low_rating:Q", title="... with average rating <= 2"),
            alt.Tooltip("n_overall_score_10_negative_critique:Q", title="... with a negative critique"),
            alt.Tooltip("share_overall_score_10_low_rating:Q", title="share", format=".1%"),
        ],
    ).properties(width=560, title="overall_score 10 given to a weak completion, per model")
    section.charts.append(Chart("uf-model-bug", _spec(bars), per_model))

    unplotted = fetch_rows(con, "select * from reporting.rpt_uf_unplotted")[0]
    if unplotted["n_unplotted"]:
        section.notes.append(
            f"{unplotted['n_unplotted']:,} of {unplotted['n_completions']:,} completions have no overall_score "
            "or no valid aspect rating (average rating NULL) and are not in the grid."
        )
    return section


def ultrafeedback_disagreement_section(con, tables: set[str]) -> Section:
    import altair as alt

    section = Section(
        "ultrafeedback-disagreement",
        "UltraFeedback picks",
        "UltraFeedback: best-rated vs best-overall disagreement, by source",
        "Share of prompts (with completions) whose best-rated completion, ranked on the recomputed average "
        "rating, is not the best-overall one, ranked on the buggy overall_score. The dashed line is the "
        "rate over all sources.",
        ["ultrafeedback_score_bug_summary"],
    )
    if not _require(section, tables, ["rpt_uf_disagreement"]):
        return section
    rows = fetch_rows(con, "select * from reporting.rpt_uf_disagreement order by dimension, source")
    by_source = [r for r in rows if r["dimension"] == "source"]
    overall = [r for r in rows if r["dimension"] == "all"]
    bars = alt.Chart(_data(by_source)).mark_bar().encode(
        x=alt.X("share_best_rated_is_different:Q", title="best-rated differs from best-overall",
                axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("source:N", sort="-x", title=None),
        tooltip=[
            alt.Tooltip("source:N"),
            alt.Tooltip("n_best_overall_picks:Q", title="prompts with completions"),
            alt.Tooltip("n_best_rated_is_different:Q", title="picks differ"),
            alt.Tooltip("share_best_rated_is_different:Q", title="share", format=".1%"),
            alt.Tooltip("mean_average_rating_gap:Q", title="mean average-rating gap", format=".2f"),
            alt.Tooltip("mean_overall_score_gap:Q", title="mean overall_score gap", format=".2f"),
        ],
    )
    layers = [bars]
    if overall:
        layers.append(
            alt.Chart(_data(overall)).mark_rule(strokeDash=[4, 3], color="black").encode(
                x="share_best_rated_is_different:Q",
                tooltip=[alt.Tooltip("share_best_rated_is_different:Q", title="all sources", format=".1%")],
            )
        )
    chart = alt.layer(*layers).properties(width=560, title="Prompts whose two picks disagree, by source")
    section.charts.append(Chart("uf-disagreement", _spec(chart), rows))
    return section


# --- CodeUltraFeedback -----------------------------------------------------------------------

# the legend's order of the reasons (rpt_cuf_reasons has one row per preference x reason)
CUF_REASONS = [
    "na_rated_chosen", "na_rated_rejected", "prompt_dropped_by_last_na", "string_order_inverted",
    "invalid_rating", "prompt_quarantined", "duplicate_model",
]


def code_ultrafeedback_section(con, tables: set[str]) -> Section:
    import altair as alt

    section = Section(
        "code-ultrafeedback-bugs",
        "CodeUltraFeedback bugs",
        "CodeUltraFeedback: the published script's bugs, by reason and preference",
        "Every pair that differs between the script's output (RLHFlow/CodeUltraFeedback-standard, reproduced "
        "in SQL) and the corrected pairs, counted by the reason of the difference: an 'N/A'-rated response "
        "chosen (string comparison puts 'N/A' above '5'), prompts dropped because the last annotation's "
        "rating was 'N/A' (the stale variable), ratings compared as strings ('10' < '2'), invalid ratings, "
        "rows the script would crash on.",
        ["code_ultrafeedback_bug_summary"],
    )
    if not _require(section, tables, ["rpt_cuf_reasons", "rpt_cuf_pairs"]):
        return section
    reasons = fetch_rows(con, "select * from reporting.rpt_cuf_reasons order by preference, reason")
    stacked = alt.Chart(_data(reasons)).transform_filter("datum.n_pairs > 0").mark_bar().encode(
        x=alt.X("n_pairs:Q", title="pairs that differ", stack="zero"),
        y=alt.Y("preference:N", title=None),
        color=alt.Color("reason:N", title="reason", sort=CUF_REASONS),
        tooltip=[alt.Tooltip("preference:N"), alt.Tooltip("reason:N"), alt.Tooltip("n_pairs:Q", title="pairs")],
    ).properties(width=560, title="Differences between published and corrected pairs, by reason")
    section.charts.append(Chart("cuf-reasons", _spec(stacked), reasons))

    pairs = fetch_rows(con, "select * from reporting.rpt_cuf_pairs order by preference, pairs")
    grouped = alt.Chart(_data(pairs)).mark_bar().encode(
        x=alt.X("n_pairs:Q", title="pairs"),
        y=alt.Y("pairs:N", title=None),
        row=alt.Row("preference:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left")),
        color=alt.Color("pairs:N", title=None),
        tooltip=[alt.Tooltip("preference:N"), alt.Tooltip("pairs:N"), alt.Tooltip("n_pairs:Q", title="pairs")],
    ).properties(width=480, title="Published vs corrected pairs, by preference")
    section.charts.append(Chart("cuf-pairs", _spec(grouped), pairs))
    return section


# --- ReVeR -----------------------------------------------------------------------------------



def rever_section(con, tables: set[str]) -> Section:
    import altair as alt

    section = Section(
        "rever",
        "ReVeR",
        "ReVeR: pair score margins and tool-call rates, by source",
        "Score margin (rever_pairs.score_margin) = chosen response score - rejected response score, where a "
        "score is the number of satisfied Hard Rules plus the mean Principle score / 101. Pairs decided by "
        "Hard Rules have score margins of about 1 or more; pairs decided by Principles alone stay below 1; a "
        "score margin <= 0 breaks the upstream retention rule. (The margin column of rever_pairs and "
        "preference_pairs is this score margin divided by the highest score the pair's rubric allows.) "
        "Tool-call rate = share of judge trajectories with a tool call; the dashed line is the "
        f"dataset card's {REVER_CARD_TOOL_CALL_RATE:.1%}, the dotted one the rate over all sources here.",
        ["rever_pairs", "rever_summary"],
    )
    if not _require(section, tables, ["rpt_rever_margins", "rpt_rever_tool_calls", "rpt_rever_unscored"]):
        return section
    margins = fetch_rows(
        con, "select * from reporting.rpt_rever_margins order by source, decided_by, score_margin_bin_start"
    )
    hist = alt.Chart(_data(margins)).mark_bar().encode(
        x=alt.X("score_margin_bin_start:Q", title="score margin (chosen score - rejected score)", bin="binned"),
        x2="score_margin_bin_end:Q",
        y=alt.Y("sum(n_pairs):Q", title="pairs", stack="zero"),
        color=alt.Color("decided_by:N", title="decided by"),
        tooltip=[
            alt.Tooltip("source:N"),
            alt.Tooltip("decided_by:N"),
            alt.Tooltip("score_margin_bin_start:Q", title="score margin from"),
            alt.Tooltip("score_margin_bin_end:Q", title="score margin to"),
            alt.Tooltip("sum(n_pairs):Q", title="pairs"),
        ],
    ).properties(width=260, height=140)
    faceted = hist.facet(facet=alt.Facet("source:N", title=None), columns=3).properties(
        title="Score margins of the scored pairs, by source"
    )
    section.charts.append(Chart("rever-margins", _spec(faceted), margins))

    tools = fetch_rows(con, "select * from reporting.rpt_rever_tool_calls order by source")
    n_traj = sum(r["n_trajectories"] or 0 for r in tools)
    n_tool = sum(r["n_trajectories_with_tool"] or 0 for r in tools)
    reference = [
        {"reference": f"dataset card ({REVER_CARD_TOOL_CALL_RATE:.1%})", "rate": REVER_CARD_TOOL_CALL_RATE},
    ]
    if n_traj:
        reference.append({"reference": f"all sources here ({n_tool / n_traj:.1%})", "rate": round(n_tool / n_traj, 6)})
    bars = alt.Chart(_data(tools)).mark_bar().encode(
        x=alt.X("tool_call_rate:Q", title="trajectories with a tool call", axis=alt.Axis(format="%"),
                scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("source:N", sort="-x", title=None),
        tooltip=[
            alt.Tooltip("source:N"),
            alt.Tooltip("n_trajectories:Q", title="trajectories"),
            alt.Tooltip("n_trajectories_with_tool:Q", title="with a tool call"),
            alt.Tooltip("tool_call_rate:Q", title="rate", format=".1%"),
            alt.Tooltip("n_pairs:Q", title="pairs"),
            alt.Tooltip("mean_score_margin:Q", title="mean score margin", format=".3f"),
            alt.Tooltip("share_decided_by_principles:Q", title="decided by principles", format=".1%"),
        ],
    )
    rules = alt.Chart(_data(reference)).mark_rule(color="black").encode(
        x="rate:Q",
        strokeDash=alt.StrokeDash(
            "reference:N", title=None,
            scale=alt.Scale(domain=[r["reference"] for r in reference], range=[[5, 3], [1, 2]]),
        ),
        tooltip=[alt.Tooltip("reference:N"), alt.Tooltip("rate:Q", format=".1%")],
    )
    chart = alt.layer(bars, rules).properties(width=560, title="Tool-call rate of the judge trajectories, by source")
    section.charts.append(Chart("rever-tool-calls", _spec(chart), tools + reference))

    unscored = fetch_rows(con, "select * from reporting.rpt_rever_unscored")[0]
    if unscored["n_unscored"]:
        section.notes.append(
            f"{unscored['n_unscored']:,} of {unscored['n_pairs']:,} pairs have a side without a score "
            "(decided_by = unscored: a verdict that fails to parse, a missing trajectory) and are not in the histogram; "
            "see rever_integrity."
        )
    return section


# --- judge agreement -------------------------------------------------------------------------



def judge_agreement_section(con, tables: set[str]) -> Section:
    import altair as alt

    section = Section(
        "judge-agreement",
        "Judge agreement",
        "Judge agreement: does the rubric judge side with the fixed ratings or with overall_score?",
        "ReVeR pairs of source ultrafeedback matched to UltraFeedback prompts and completions. For each "
        "matched pair, the side preferred by UltraFeedback's recomputed average rating, by its buggy "
        "overall_score, and by the ReVeR rubric judge. Left: how often the judge agrees with each, among "
        "pairs where both have a strict preference. Right: among pairs where the two UltraFeedback scores "
        "prefer different responses, which one the judge sides with.",
        ["judge_agreement_summary"],
    )
    if not _require(section, tables, ["rpt_judge_agreement_rates", "rpt_judge_agreement_sides",
                                      "rpt_judge_agreement_coverage"]):
        return section
    coverage = fetch_rows(con, "select * from reporting.rpt_judge_agreement_coverage")
    if not coverage:
        section.notes.append("judge_agreement_summary is empty.")
        return section
    rates = fetch_rows(con, "select * from reporting.rpt_judge_agreement_rates order by score")
    sides = fetch_rows(con, "select judge_sides_with, n_pairs from reporting.rpt_judge_agreement_sides order by sort_order")
    left = alt.Chart(_data(rates)).mark_bar().encode(
        x=alt.X("agreement_rate:Q", title="judge agrees", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("score:N", title=None),
        color=alt.Color("score:N", legend=None),
        tooltip=[alt.Tooltip("score:N"), alt.Tooltip("n_decisive:Q", title="pairs with a strict preference"),
                 alt.Tooltip("n_agree:Q", title="judge agrees"), alt.Tooltip("agreement_rate:Q", format=".1%")],
    ).properties(width=300, title="Agreement with each UltraFeedback score")
    right = alt.Chart(_data(sides)).mark_bar().encode(
        x=alt.X("n_pairs:Q", title="pairs where the two scores disagree"),
        y=alt.Y("judge_sides_with:N", title=None, sort=[d["judge_sides_with"] for d in sides]),
        color=alt.Color("judge_sides_with:N", legend=None),
        tooltip=[alt.Tooltip("judge_sides_with:N"), alt.Tooltip("n_pairs:Q", title="pairs")],
    ).properties(width=300, title="Where the scores disagree, the judge sides with")
    chart = alt.hconcat(left, right).resolve_scale(color="independent")
    section.charts.append(Chart("judge-agreement", _spec(chart), rates + sides))
    section.notes.append(
        f"{coverage[0]['n_matched_pairs']:,} of {coverage[0]['n_rever_ultrafeedback_pairs']:,} ReVeR ultrafeedback pairs matched an "
        "UltraFeedback prompt and both its completions."
    )
    return section


# --- extra datasets and the training mixture ---------------------------------------------------

EXTRA_READS = ["preference_pairs", "row_accounting"]
EXTRA_VIEWS = ["rpt_extra_datasets", "rpt_extra_flags", "rpt_extra_rejects", "rpt_extra_margins"]
SHAPES = {
    "preference": "chosen/rejected pairs as published (the prompt mapped, or the turns chosen and rejected share)",
    "transcript": "whole Human/Assistant transcripts, split into turns; the prompt is what chosen and rejected share",
    "rated_completions": "rated completions per prompt, paired by the entry's pairing rule",
}


def _score_scale(entry: dict) -> str:
    if entry.get("score_min") is None:
        return "unscored"
    return f"scores {entry['score_min']:g} to {entry['score_max']:g}"


def extra_datasets_sections(con, tables: set[str]) -> list[Section]:
    """An overview of the `extra_datasets` entries, then one section per entry."""
    overview = Section(
        "extra-datasets",
        "Extra datasets",
        "Extra datasets: the entries of the extra_datasets registry",
        "The Hub datasets registered with the dbt var extra_datasets (meta.extra_datasets), in registry "
        "order. Each one's pairs are in preference_pairs with dataset = the entry's name: its training "
        "split has the entry's name, its flagged pairs are in <name>_flagged. A raw row that becomes no "
        "pair (a rated_completions row without a lower-rated completion, ...) is in rejects_extra_datasets "
        "and in the entry's block of row_accounting, which also counts its raw rows.",
        EXTRA_READS,
    )
    if not _require(overview, tables, EXTRA_VIEWS):
        return [overview]
    entries = fetch_rows(con, "select * from reporting.rpt_extra_datasets order by registry_order")
    if not entries:
        overview.notes.append(
            "No extra_datasets entry is registered in this build (dbt build --vars \"$(cat examples/extra_datasets.yml)\" "
            "registers five)."
        )
        return [overview]
    overview.tables.append(Table(
        "extra-datasets-overview",
        ["entry", "Hub id", "shape", "licence", "raw rows", "pairs", "training split", "flagged", "rejected rows"],
        [[e["dataset"], e["hub_id"], e["shape"], e["license"] or "not stated", _num(e["n_raw_rows"]), _num(e["n_pairs"]),
          _num(e["n_training_split"]), _num(e["n_flagged"]), _num(e["n_rejected"])] for e in entries],
        numeric={4, 5, 6, 7, 8},
    ))
    flags = fetch_rows(con, "select * from reporting.rpt_extra_flags order by dataset, flag")
    rejects = fetch_rows(con, "select * from reporting.rpt_extra_rejects order by dataset, reason")
    margins = fetch_rows(con, "select * from reporting.rpt_extra_margins order by dataset, pairs, margin_bin_start")
    return [overview] + [
        extra_dataset_section(
            e,
            [r for r in flags if r["dataset"] == e["dataset"]],
            [r for r in rejects if r["dataset"] == e["dataset"]],
            [r for r in margins if r["dataset"] == e["dataset"]],
        )
        for e in entries
    ]


def extra_dataset_section(entry: dict, flags: list[dict], rejects: list[dict], margins: list[dict]) -> Section:
    import altair as alt

    name = entry["dataset"]
    read = ", ".join(filter(None, [
        f"config {entry['config']}" if entry.get("config") else None,
        f"splits {', '.join(json.loads(entry['splits']))}" if entry.get("splits") else None,
    ])) or "every split"
    section = Section(
        f"extra-{name}",
        name,
        f"{name}: {entry['hub_id']} ({entry['shape']})",
        f"An extra_datasets entry of shape {entry['shape']}: {SHAPES.get(entry['shape'], entry['shape'])}"
        + (f", pairing {entry['pairing']}" if entry.get("pairing") else "")
        + f". Read: {read}; {_score_scale(entry)}; licence {entry['license'] or 'not stated'}. "
        f"Its training pairs are the split {name} of preference_pairs, its flagged pairs the split {name}_flagged.",
        EXTRA_READS,
    )
    rows = [
        ["raw rows", _num(entry["n_raw_rows"])],
        ["pairs (preference_pairs)", _num(entry["n_pairs"])],
        [f"... in the training split {name}", _num(entry["n_training_split"])],
        ["... flagged by an integrity check", _num(entry["n_flagged"])],
        ["raw rows rejected (no pair)", _num(entry["n_rejected"])],
    ]
    scored = entry.get("score_min") is not None
    if scored:
        rows += [
            ["pairs with both scores", _num(entry["n_scored"])],
            ["mean score margin (chosen minus rejected score)", _num(entry["mean_score_margin"])],
            ["smallest / largest score margin",
             f"{_num(entry['min_score_margin'])} / {_num(entry['max_score_margin'])}"],
            ["average margin of the clean pairs (score margin / score range)", _num(entry["mean_training_margin"])],
        ]
    section.tables.append(Table(f"extra-{name}-figures", ["measure", "value"], rows, numeric={1}))

    if flags:
        bars = alt.Chart(_data(flags)).mark_bar().encode(
            x=alt.X("n_pairs:Q", title="pairs"),
            y=alt.Y("flag:N", sort="-x", title=None),
            tooltip=[alt.Tooltip("flag:N"), alt.Tooltip("n_pairs:Q", title="pairs")],
        ).properties(width=480, title=f"{name}: flagged pairs by integrity flag")
        section.charts.append(Chart(f"extra-{name}-flags", _spec(bars), flags))
    else:
        section.notes.append("No pair is flagged by an integrity check.")
    if rejects:
        bars = alt.Chart(_data(rejects)).mark_bar().encode(
            x=alt.X("n_rows:Q", title="raw rows"),
            y=alt.Y("reason:N", sort="-x", title=None),
            tooltip=[alt.Tooltip("reason:N"), alt.Tooltip("n_rows:Q", title="raw rows")],
        ).properties(width=480, title=f"{name}: raw rows without a pair, by reason")
        section.charts.append(Chart(f"extra-{name}-rejects", _spec(bars), rejects))
    else:
        section.notes.append(
            "No raw row is rejected: every row became a pair"
            + (" (a preference or transcript row always does; a broken one is flagged)." if entry["shape"] != "rated_completions" else ".")
        )
    if scored and margins:
        hist = alt.Chart(_data(margins)).mark_bar().encode(
            x=alt.X("margin_bin_start:Q", title="margin (score margin / score range)", bin="binned"),
            x2="margin_bin_end:Q",
            y=alt.Y("sum(n_pairs):Q", title="pairs", stack="zero"),
            color=alt.Color("pairs:N", title="pairs", sort=["clean", "flagged"]),
            tooltip=[
                alt.Tooltip("pairs:N"),
                alt.Tooltip("margin_bin_start:Q", title="margin from"),
                alt.Tooltip("margin_bin_end:Q", title="margin to"),
                alt.Tooltip("sum(n_pairs):Q", title="pairs"),
            ],
        ).properties(width=480, height=160, title=f"{name}: margins of the pairs with both scores")
        section.charts.append(Chart(f"extra-{name}-margins", _spec(hist), margins))
        unscored = (entry["n_pairs"] or 0) - (entry["n_scored"] or 0)
        if unscored:
            section.notes.append(
                f"{unscored:,} of {entry['n_pairs']:,} pairs lack a score on a side (unparseable_score) and have no margin."
            )
    elif scored:
        section.notes.append("No pair has both scores: no margin to show.")
    else:
        section.notes.append("Unscored: this entry maps no scores, so its pairs have no margin.")
    return section


def training_mixture_section(con, tables: set[str]) -> Section:
    section = Section(
        "training-mixture",
        "Training mixture",
        "Training mixture: what came from where",
        "training_mixture holds, per dataset of the dbt var mixture, the first round(fraction x n) of its n "
        "clean pairs (no integrity flag) in an order drawn from random_seed. Per dataset: the fraction "
        "asked, its clean pairs in preference_pairs and the pairs taken.",
        ["training_mixture", "preference_pairs"],
    )
    if not _require(section, tables, ["rpt_training_mixture"]):
        return section
    rows = fetch_rows(con, "select * from reporting.rpt_training_mixture order by mixture_order")
    if not rows:
        section.notes.append(
            "The build set no mixture var, so training_mixture is empty "
            "(dbt build --vars '{mixture: {ultrafeedback: 0.5, hh_helpful: 1.0}}' draws one)."
        )
        return section
    table = [[r["dataset"], f"{r['fraction']:g}", _num(r["n_clean_pairs"]), _num(r["n_taken"])] for r in rows]
    table.append(["total", "", _num(sum(r["n_clean_pairs"] for r in rows)), _num(sum(r["n_taken"] for r in rows))])
    section.tables.append(Table("training-mixture", ["dataset", "fraction asked", "clean pairs", "pairs taken"],
                                table, numeric={1, 2, 3}))
    if any(r.get("length_balanced") for r in rows):
        section.notes.append(
            "Length-balanced (var mixture_length_balanced): of each dataset's draw, as many chosen-longer as "
            "rejected-longer pairs were kept: "
            + "; ".join(f"{r['dataset']} {_num(r['n_taken_chosen_longer'])} / {_num(r['n_taken_rejected_longer'])}"
                        for r in rows) + "."
        )
    return section


def contamination_section(con, tables: set[str]) -> Section:
    section = Section(
        "contamination",
        "Benchmark contamination",
        "Benchmark contamination: training prompts that hold a benchmark's items",
        "Every user turn of the training prompts is checked against the eval sets registered with the dbt var "
        "eval_sets (docs/decontamination.md): a pair whose prompt holds an item is flagged eval_contamination and "
        "leaves the training split. Per dataset and eval set with a match: the eval set's items its prompts hold and "
        "its pairs flagged; a share over max_eval_share (the var contamination) is over the limit.",
        ["contamination_summary", "contamination_matches", "eval_items"],
    )
    if not _require(section, tables, ["rpt_contamination_eval_sets", "rpt_contamination_summary",
                                      "rpt_contamination_examples"]):
        return section
    eval_sets = fetch_rows(con, "select * from reporting.rpt_contamination_eval_sets order by registry_order")
    if not eval_sets:
        section.notes.append(
            "No eval set is registered in this build, so the training prompts were not checked against any benchmark "
            "(dbt build --vars \"$(cat examples/eval_sets.yml)\" registers the benchmarks of that file)."
        )
        return section
    entries = [cards.EvalSet.from_row(e) for e in eval_sets]
    revisions = cards.raw_revisions(build_info(con, tables), entries)
    section.tables.append(Table(
        "contamination-eval-sets",
        ["eval set", "Hub id", "config", "splits", "fields", "items", "revision"],
        [[d.key, d.hub_id, d.config or "default", ", ".join(d.splits) if d.splits else "all", ", ".join(d.fields),
          _num(e["n_eval_items"]), revisions[d.hub_id]] for d, e in zip(entries, eval_sets)],
        numeric={5},
    ))
    settings = eval_sets[0]  # the var contamination, on every row
    section.intro += (
        f" The rule's settings in this build: ngram {settings['ngram']}, threshold {settings['threshold']:g} (the share "
        f"of an eval text's tokens a user turn must cover), max_eval_share {settings['max_eval_share']:g}%."
    )
    summary = fetch_rows(con, "select * from reporting.rpt_contamination_summary order by dataset, registry_order")
    matched = [r for r in summary if r["n_eval_items_matched"]]
    section.tables.append(Table(
        "contamination-summary",
        ["dataset", "eval set", "items matched", "% of the eval set", "prompts", "pairs flagged", "over max_eval_share"],
        [[r["dataset"], r["eval_set"], f"{_num(r['n_eval_items_matched'])} / {_num(r['n_eval_items'])}",
          f"{r['pct_eval_set_matched']:.1f}%", _num(r["n_prompts_matched"]), _num(r["n_pairs_flagged"]),
          f"yes (> {r['max_eval_share']:g}%)" if r["exceeds_limit"] else ""] for r in matched],
        numeric={2, 3, 4, 5},
    ))
    section.notes.append(
        f"{len(summary) - len(matched):,} of the {len(summary):,} dataset x eval set combinations match no item."
        if matched else "No training prompt holds an item of these eval sets."
    )
    order = {e["eval_set"]: e["registry_order"] for e in eval_sets}
    examples = sorted(fetch_rows(con, "select * from reporting.rpt_contamination_examples"), key=lambda r: order[r["eval_set"]])
    if examples:
        section.tables.append(Table(
            "contamination-examples",
            ["eval set", "item", "field (turn)", "dataset", "prompt_id", "match", "coverage", "longest shared run"],
            [[r["eval_set"], str(r["item_id"]), f"{r['field']} ({r['turn']})", r["dataset"], r["prompt_id"],
              r["match_kind"], f"{r['coverage']:.2f}", r["longest_shared_run"]] for r in examples],
            numeric={1, 6},
        ))
        section.notes.append(
            "Examples: per eval set, its match of highest coverage; the longest shared run is the longest run of the "
            "eval text's tokens found in the prompt. Every match is in contamination_matches, every flagged pair "
            "with its evidence in audits.contaminated_pairs."
        )
    return section


# the integrity flags of the near-duplicate checks (docs/near-duplicates.md), in the tables' column order
NEAR_DUPLICATE_FLAGS = ("near_duplicate_pair", "label_conflict", "near_identical_responses")
CLUSTER_PROMPT_CHARS = 120  # rpt_near_duplicate_clusters.prompt_start: the first prompt's first characters


def _prompt_preview(start: str | None, chars: int | None) -> str:
    """The start of a prompt on one line, with an ellipsis when the text goes on."""
    text = " ".join((start or "").split())
    return text + " …" if chars is not None and start is not None and chars > len(start) else text


def near_duplicates_section(con, tables: set[str]) -> Section:
    section = Section(
        "near-duplicates",
        "Near duplicates",
        "Near duplicates and label conflicts: the same comparison twice, or reversed",
        "Preference datasets share their sources, so a mixture can train on the same comparison twice, or on it "
        "both ways round (docs/near-duplicates.md). Two prompts are near duplicates when the word n-grams "
        "(shingles) of their texts have a Jaccard similarity at or above the threshold, in one dataset or across "
        "two. Two pairs whose prompts are the same or near make the same comparison when chosen is near chosen "
        "and rejected near rejected (every copy but the first is flagged near_duplicate_pair), a label conflict "
        "when chosen is near rejected and rejected near chosen (both are flagged label_conflict); a pair whose "
        "chosen and rejected are near is flagged near_identical_responses. Flagged pairs leave the training "
        "splits and training_mixture.",
        ["near_duplicate_summary", "prompt_clusters", "preference_pairs"],
    )
    if not _require(section, tables, ["rpt_near_duplicate_matrix", "rpt_near_duplicate_clusters",
                                      "rpt_near_duplicate_flags", "rpt_near_duplicate_settings"]):
        return section
    (settings,) = fetch_rows(con, "select * from reporting.rpt_near_duplicate_settings")  # one row
    cap = settings["mixture_max_pairs_per_prompt_cluster"]
    section.intro += (
        f" The settings of this build (the var near_duplicates): ngram {settings['ngram']}, threshold "
        f"{settings['threshold']:g}, keep {settings['keep']}."
    )
    section.tables.append(Table(
        "near-duplicate-settings",
        ["setting", "value"],
        [["enabled", "true" if settings["enabled"] else "false"],
         ["ngram (words per shingle)", str(settings["ngram"])],
         ["threshold (Jaccard)", f"{settings['threshold']:g}"],
         ["keep", settings["keep"]],
         ["MinHash LSH (bands x rows)", f"{settings['bands']} x {settings['rows']}"],
         ["mixture_max_pairs_per_prompt_cluster", "no cap" if cap is None else str(cap)]],
    ))
    if not settings["enabled"]:
        section.notes.append(
            "The check was off in this build (near_duplicates: {enabled: false}): no prompt or pair was "
            "compared, every prompt is its own cluster and no pair is flagged by it."
        )
        return section

    matrix = fetch_rows(con, "select * from reporting.rpt_near_duplicate_matrix order by dataset_order_a, dataset_order_b")
    order = {r["dataset_b"]: r["dataset_order_b"] for r in matrix}
    datasets = sorted(order, key=order.get)
    cells = {(r["dataset_a"], r["dataset_b"]): r for r in matrix}

    def cell(a: str, b: str) -> str:
        r = cells.get((a, b))
        if r is None:
            return ""
        counts = (r["n_prompt_pairs"], r["n_same_comparison"], r["n_label_conflicts"])
        return " / ".join(_num(n) for n in counts) if any(counts) else "·"

    section.tables.append(Table(
        "near-duplicate-matrix",
        ["dataset", *datasets],
        [[a, *(cell(a, b) for b in datasets)] for a in datasets],
        numeric=set(range(1, len(datasets) + 1)),
    ))
    section.notes.append(
        "The matrix: in each cell, near-duplicate prompt pairs / pairs of pairs making the same comparison / label "
        "conflicts between the row's dataset and the column's (near_duplicate_summary; on the diagonal, within one "
        "dataset; · none). audits.near_duplicate_pairs and audits.label_conflicts show the texts side by side."
    )

    clusters = fetch_rows(con, "select * from reporting.rpt_near_duplicate_clusters order by cluster_rank")
    section.notes.append(
        f"The clusters: {_num(settings['n_prompts_with_duplicates'])} of the {_num(settings['n_prompts'])} prompts of "
        f"preference_pairs have a near duplicate, in {_num(settings['n_clusters_with_duplicates'])} prompt clusters of "
        "two or more (prompt_clusters, a cluster named by its first prompt in dataset order)"
        + (f"; the table lists the {len(clusters)} largest, with their pairs and the start of the first prompt."
           if clusters else ".")
    )
    if clusters:
        section.tables.append(Table(
            "near-duplicate-clusters",
            ["cluster", "prompts", "datasets", "pairs", "first prompt"],
            [[r["cluster_id"], _num(r["cluster_size"]), r["datasets"], _num(r["n_pairs"]),
              _prompt_preview(r["prompt_start"], r["prompt_chars"])] for r in clusters],
            numeric={1, 3},
        ))

    flags = fetch_rows(con, "select * from reporting.rpt_near_duplicate_flags")
    flags.sort(key=lambda r: (order.get(r["dataset"], len(order)), r["dataset"]))
    columns = ["n_pairs", *(f"n_{f}" for f in NEAR_DUPLICATE_FLAGS), "n_flagged", "n_flagged_by_no_other_check"]
    rows = [[r["dataset"], *(_num(r[c]) for c in columns)] for r in flags]
    rows.append(["total", *(_num(sum(r[c] for r in flags)) for c in columns)])
    section.tables.append(Table(
        "near-duplicate-flags",
        ["dataset", "pairs", *NEAR_DUPLICATE_FLAGS, "any of the three", "... by no other check"],
        rows,
        numeric=set(range(1, len(columns) + 1)),
    ))
    section.notes.append(
        "The flags: per dataset, the pairs of preference_pairs each near-duplicate check flags (a pair can have "
        "several flags); by no other check: the pairs these checks alone take out of the training split."
    )
    return section


def known_biases_section(con, tables: set[str]) -> Section:
    import altair as alt

    section = Section(
        "known-biases",
        "Known biases",
        "Known biases: length and truncation, per dataset",
        "Over the clean training pairs of preference_pairs. A reward model learns length from preference data: "
        "the first chart shows how often the chosen response is the longer one (among pairs of unequal "
        "length; 50% is no bias), per dataset and per source and chosen model (slices of 20 pairs or more). "
        "The second shows the pairs that collapse when prompt + response are truncated to a token budget: "
        "chosen and rejected differ only after it, so the truncated pair teaches nothing. pair_bias_profile "
        "also has the format patterns (lists, bold, headers, code, links, emojis) of each side.",
        ["pair_bias_profile", "truncation_collapse"],
    )
    if not _require(section, tables, ["rpt_length_bias", "rpt_truncation_collapse"]):
        return section
    lengths = fetch_rows(con, "select * from reporting.rpt_length_bias order by dataset, slice_kind, slice")
    if lengths:
        bars = alt.Chart(_data(lengths)).mark_bar().encode(
            x=alt.X("pct_chosen_longer:Q", title="chosen response longer (% of pairs of unequal length)",
                    scale=alt.Scale(domain=[0, 100])),
            y=alt.Y("slice:N", title=None, sort=None),
            row=alt.Row("dataset:N", title=None, header=alt.Header(labelAngle=0, labelAlign="left")),
            color=alt.Color("slice_kind:N", title="slice"),
            tooltip=[alt.Tooltip("dataset:N"), alt.Tooltip("slice_kind:N"), alt.Tooltip("slice:N"),
                     alt.Tooltip("n_pairs:Q", title="pairs"), alt.Tooltip("pct_chosen_longer:Q", format=".1f")],
        ).properties(width=480, title="How often the longer response is the chosen one")
        section.charts.append(Chart("length-bias", _spec(bars), lengths))
    else:
        section.notes.append("No clean pair of unequal length: no length share to show.")
    collapse = fetch_rows(con, "select * from reporting.rpt_truncation_collapse order by dataset, budget_tokens")
    if collapse:
        lines = alt.Chart(_data(collapse)).mark_line(point=True).encode(
            x=alt.X("budget_tokens:O", title=f"token budget ({collapse[0]['counted_with']})"),
            y=alt.Y("pct_collapsed:Q", title="pairs collapsed (%)"),
            color=alt.Color("dataset:N", title="dataset"),
            tooltip=[alt.Tooltip("dataset:N"), alt.Tooltip("budget_tokens:O", title="budget"),
                     alt.Tooltip("n_collapsed:Q", title="collapsed"), alt.Tooltip("n_pairs:Q", title="pairs"),
                     alt.Tooltip("pct_collapsed:Q", format=".2f")],
        ).properties(width=480, title="Pairs identical after truncation, by budget")
        section.charts.append(Chart("truncation-collapse", _spec(lines), collapse))
    return section


# the categories of the seed pii_patterns, in the table's row order
PII_CATEGORIES = ("secret", "personal")


def pii_section(con, tables: set[str]) -> Section:
    section = Section(
        "pii",
        "Secrets and personal data",
        "Secrets and personal data: keys, tokens, emails and IP addresses in the texts",
        "Scraped conversations and generated code carry what people paste (docs/pii.md). Every text of "
        "preference_pairs (its prompt, chosen and rejected) is scanned for the patterns of the seed pii_patterns: "
        "keys and tokens of known formats (secrets), email addresses and public IPv4 addresses (personal data; "
        "private, loopback, documentation and other reserved networks are not public). Names, phone numbers and "
        "street addresses are not looked for: a clean scan does not mean a text holds nothing personal. A pair "
        "with a secret is flagged contains_secret and leaves every training split, training filter and "
        "training_mixture; a pair with personal data is flagged contains_personal_data only with the dbt var "
        "pii_flag_personal: true. The export redacts secrets; make export REDACT=personal also redacts emails "
        "and public IP addresses.",
        ["pii_summary", "pii_findings", "preference_pairs"],
    )
    if not _require(section, tables, ["rpt_pii_summary", "rpt_pii_settings"]):
        return section
    (settings,) = fetch_rows(con, "select * from reporting.rpt_pii_settings")  # one row
    summary = fetch_rows(con, "select * from reporting.rpt_pii_summary order by dataset_order, kind")
    category = {r["kind"]: r["category"] for r in summary}
    kinds = sorted(category, key=lambda k: (PII_CATEGORIES.index(category[k]), k))
    secrets = [k for k in kinds if category[k] == "secret"]
    personal = [k for k in kinds if category[k] == "personal"]
    section.intro += (
        f" This build looked for {len(secrets)} formats of keys and tokens ({', '.join(secrets)}) and "
        f"{len(personal)} kinds of personal data ({', '.join(personal)}); pii_flag_personal was "
        + ("true: pairs with personal data are flagged." if settings["pii_flag_personal"]
           else "false: pairs with personal data are not flagged.")
    )

    datasets = list(dict.fromkeys(r["dataset"] for r in summary))  # in dataset order
    cells = {(r["dataset"], r["kind"]): r for r in summary}

    def cell(findings: int, pairs: int) -> str:
        return f"{_num(findings)} / {_num(pairs)}" if findings else "·"

    rows = []
    for kind in kinds:
        counts = [cells[(d, kind)] for d in datasets]
        rows.append([kind, category[kind], *(cell(c["n_findings"], c["n_pairs"]) for c in counts),
                     cell(sum(c["n_findings"] for c in counts), sum(c["n_pairs"] for c in counts))])
    section.tables.append(Table(
        "pii-summary",
        ["kind", "category", *datasets, "total"],
        rows,
        numeric=set(range(2, len(datasets) + 3)),
    ))
    section.notes.append(
        "The table: in each cell, the matches of the kind in the dataset's texts / the pairs holding one "
        "(pii_summary; · none); total: over the datasets."
    )
    if not any(r["n_findings"] for r in summary):
        section.notes.append("No text of this build holds a secret or personal data of these kinds.")
    section.notes.append(
        f"Of the {_num(settings['n_pairs'])} pairs of preference_pairs, {_num(settings['n_pairs_with_secret'])} hold a "
        f"secret (flagged contains_secret) and {_num(settings['n_pairs_with_personal_data'])} personal data ("
        + ("flagged contains_personal_data" if settings["pii_flag_personal"] else "not flagged: pii_flag_personal is false")
        + f"); {_num(settings['n_pairs_flagged'])} pairs are flagged for either and leave training."
    )
    section.notes.append(
        "No value is shown here: audits.pii_findings lists each finding with its pair's texts, and pii_findings keeps "
        "only each value's md5 and first 4 characters."
    )
    return section


def _missing(marts: list[str], views: list[str], tables: set[str]) -> list[str]:
    """The marts not in the warehouse; if they all are, the reporting views that are not.

    A view whose mart's dataset group was left out is disabled with it (not built either); the
    marts are checked first because a view over a dropped mart still exists but cannot be read.
    """
    missing = [name for name in marts if f"main.{name}" not in tables]
    return missing or [f"reporting.{name}" for name in views if f"reporting.{name}" not in tables]


def _require(section: Section, tables: set[str], views: list[str]) -> bool:
    """False (and a "not built" note) when a mart the section reads, or its reporting view, is not in the warehouse."""
    section.missing = _missing(section.reads, views, tables)
    return not section.missing


# Each makes a Section, or a list of them (one per extra_datasets entry).
SECTIONS: list[Callable] = [
    ultrafeedback_scores_section,
    ultrafeedback_disagreement_section,
    code_ultrafeedback_section,
    rever_section,
    judge_agreement_section,
    extra_datasets_sections,
    known_biases_section,
    training_mixture_section,
    contamination_section,
    near_duplicates_section,
    pii_section,
]


# --------------------------------------------------------------------------------------------
# headline numbers and build info

HEADLINES: list[tuple[str, str, list[tuple[str, str, Callable]]]] = [
    # (dataset, reporting view (one row), [(label, column, formatter)])
    (
        "UltraFeedback",
        "rpt_headline_ultrafeedback",
        [
            ("prompts (raw rows)", "n_prompts", _num),
            ("rows without completions", "n_no_completions", _num),
            ("completions", "n_completions", _num),
            ("prompts whose best-rated differs from best-overall", "n_best_rated_is_different", _num),
            ("... share of prompts with completions", "share_best_rated_is_different", _pct),
            ("completions with overall_score 10", "n_overall_score_10", _num),
            ("... of which average rating <= 2", "n_overall_score_10_low_rating", _num),
        ],
    ),
    (
        "CodeUltraFeedback",
        "rpt_headline_code_ultrafeedback",
        [
            ("prompts (raw rows)", "n_prompts", _num),
            ("prompts dropped by the stale variable", "n_prompts_dropped", _num),
            ("prompts the script would crash on", "n_prompts_quarantined", _num),
            ("published pairs", "n_published_pairs", _num),
            ("... with chosen_score 'N/A'", "n_published_chosen_score_na", _num),
            ("corrected pairs", "n_corrected_pairs", _num),
            ("pairs identical in both", "n_pairs_unchanged", _num),
        ],
    ),
    (
        "ReVeR",
        "rpt_headline_rever",
        [
            ("pairs (ids)", "n_pairs", _num),
            ("pairs kept (chosen strictly higher)", "n_pairs_kept", _num),
            ("pairs without a score on one side", "n_pairs_unscored", _num),
            ("tool-call rate of the judge trajectories", "tool_call_rate", _pct),
            ("mean score margin of the scored pairs (chosen minus rejected rubric score)", "mean_score_margin", _num),
            ("integrity breaks (rever_integrity rows)", "n_integrity_breaks", _num),
        ],
    ),
    (
        "All datasets",
        "rpt_headline_all_datasets",
        [
            ("pairs in preference_pairs (every dataset, flagged ones included)", "n_pairs", _num),
            ("... in the training splits (split = dataset)", "n_training_split", _num),
            ("... flagged by an integrity check", "n_flagged", _num),
            ("... from UltraFeedback", "n_ultrafeedback", _num),
            ("... from CodeUltraFeedback", "n_code_ultrafeedback", _num),
            ("... from ReVeR", "n_rever", _num),
            ("... from the extra_datasets entries", "n_extra_datasets", _num),
            ("pairs in training_mixture", "n_training_mixture", _num),
        ],
    ),
]

HEADLINE_TABLES = {
    "UltraFeedback": ["ultrafeedback_curated", "ultrafeedback_score_bug_summary"],
    "CodeUltraFeedback": ["code_ultrafeedback_bug_summary"],
    "ReVeR": ["rever_summary", "rever_integrity"],
    "All datasets": ["preference_pairs", "training_mixture"],
}


def headline_rows(con, tables: set[str]) -> list[tuple[str, list[tuple[str, str]] | None, list[str]]]:
    """(dataset, [(measure, formatted value)] or None when not built, missing marts)."""
    out = []
    for dataset, view, measures in HEADLINES:
        missing = _missing(HEADLINE_TABLES[dataset], [view], tables)
        if missing:
            out.append((dataset, None, missing))
            continue
        rows = fetch_rows(con, f"select * from reporting.{view}")
        row = rows[0] if rows else {}
        out.append((dataset, [(label, fmt(row.get(column))) for label, column, fmt in measures], []))
    return out


def build_info(con, tables: set[str]) -> dict | None:
    if "meta.warehouse_build_info" not in tables:
        return None
    rows = fetch_rows(
        con,
        "select invocation_id, random_seed, raw_data_dir, raw_revisions, built_at, datasets, dbt_version, target_name "
        "from meta.warehouse_build_info",
    )
    return rows[0] if rows else None


# --------------------------------------------------------------------------------------------
# HTML

CSS = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; color: #222; margin: 0 auto;
       max-width: 1240px; padding: 24px 32px 64px; line-height: 1.45; }
h1 { font-size: 26px; margin-bottom: 4px; }
h2 { font-size: 19px; margin-top: 40px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
p.build { color: #555; font-size: 13px; margin-top: 0; }
code { background: #f3f3f3; padding: 0 3px; border-radius: 3px; font-size: 90%; }
table.headline { border-collapse: collapse; font-size: 14px; }
table.headline th, table.headline td { border-bottom: 1px solid #e4e4e4; padding: 4px 14px 4px 6px; text-align: left; }
table.headline td.value { text-align: right; font-variant-numeric: tabular-nums; }
table.headline th.dataset { vertical-align: top; background: #fafafa; }
table.figures { border-collapse: collapse; font-size: 13px; margin: 12px 0; }
table.figures th, table.figures td { border-bottom: 1px solid #e4e4e4; padding: 3px 12px 3px 6px; text-align: left; }
table.figures th { background: #fafafa; }
table.figures td.value { text-align: right; font-variant-numeric: tabular-nums; }
.not-built { background: #fff6e0; border-left: 4px solid #e0a400; padding: 8px 12px; }
.note { color: #555; font-size: 13px; }
.chart { margin: 16px 0 8px; }
nav a { margin-right: 14px; font-size: 14px; }
"""


def _json_for_script(value) -> str:
    """JSON safe inside <script>: no '<' (so no '</script>' or '<!--' from the data)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def render_html(
    duckdb_path: Path,
    info: dict | None,
    headlines,
    sections: list[Section],
    vega_bundle: str,
    versions: dict,
) -> str:
    e = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>Preference warehouse: audit report</title>",
        f"<style>{CSS}</style>",
        f"<!-- Vega-Lite {e(versions['vega-lite'])}, Vega {e(versions['vega'])}, vega-embed {e(versions['vega-embed'])}, "
        f"inlined from vl-convert-python {e(versions['vl-convert-python'])}: nothing is loaded from the network -->",
        f'<script type="text/javascript">{vega_bundle}</script>',
        "</head><body>",
        "<h1>Preference warehouse: audit report</h1>",
    ]
    if info:
        parts.append(
            '<p class="build" id="build-info">Made from the warehouse <code>'
            f"{e(str(duckdb_path))}</code>, dbt build <code>{e(str(info['invocation_id']))}</code> "
            f"(dbt {e(str(info['dbt_version']))}, target {e(str(info['target_name']))}), "
            f"random_seed <code>{e(str(info['random_seed']))}</code>, raw data <code>{e(str(info['raw_data_dir']))}</code>, "
            f"dataset groups <code>{e(str(info['datasets']))}</code>, built at {e(str(info['built_at']))} UTC.</p>"
        )
    else:
        parts.append(
            f'<p class="build not-built" id="build-info">Made from the warehouse <code>{e(str(duckdb_path))}</code>; '
            "meta.warehouse_build_info is not built, so the build it came from is unknown.</p>"
        )
    parts.append('<nav><a href="#headline">Headline numbers</a>'
                 + "".join(f'<a href="#{s.section_id}">{e(s.nav)}</a>' for s in sections) + "</nav>")

    parts.append('<h2 id="headline">Headline numbers</h2><table class="headline">')
    for dataset, measures, missing in headlines:
        if measures is None:
            parts.append(
                f'<tr><th class="dataset">{e(dataset)}</th><td colspan="2" class="not-built">not built: '
                f"{e(', '.join(missing))} missing from the warehouse</td></tr>"
            )
            continue
        for i, (label, value) in enumerate(measures):
            head = f'<th class="dataset" rowspan="{len(measures)}">{e(dataset)}</th>' if i == 0 else ""
            parts.append(f'<tr>{head}<td>{e(label)}</td><td class="value">{e(value)}</td></tr>')
    parts.append("</table>")

    for section in sections:
        parts.append(f'<section id="{section.section_id}"><h2>{e(section.title)}</h2>')
        parts.append(f"<p>{e(section.intro)}</p>")
        parts.append('<p class="note">Reads ' + ", ".join(f"<code>{e(r)}</code>" for r in section.reads) + ".</p>")
        if section.missing:
            parts.append(
                f'<p class="not-built" data-not-built="{e(",".join(section.missing))}">Not built: '
                f"{e(', '.join(section.missing))} is not in this warehouse (its dataset group was left out of the "
                "`datasets` var, or the model does not exist yet). Build it with `dbt build` and run the report again.</p>"
            )
        for table in section.tables:
            parts.append(f'<table class="figures" id="table-{e(table.table_id)}"><tr>'
                         + "".join(f"<th>{e(h)}</th>" for h in table.header) + "</tr>")
            for row in table.rows:
                parts.append("<tr>" + "".join(
                    f'<td class="value">{e(cell)}</td>' if i in table.numeric else f"<td>{e(cell)}</td>"
                    for i, cell in enumerate(row)) + "</tr>")
            parts.append("</table>")
        for chart in section.charts:
            parts.append(f'<div class="chart" id="chart-{chart.chart_id}"></div>')
            parts.append(
                f'<script type="application/json" id="spec-{chart.chart_id}" class="vega-spec">'
                f"{_json_for_script(chart.spec)}</script>"
            )
        for note in section.notes:
            parts.append(f'<p class="note">{e(note)}</p>')
        parts.append("</section>")

    parts.append(
        "<script type=\"text/javascript\">\n"
        "document.querySelectorAll('script.vega-spec').forEach(function (el) {\n"
        "  var id = el.id.replace(/^spec-/, '');\n"
        "  var target = document.getElementById('chart-' + id);\n"
        "  vegaEmbed(target, JSON.parse(el.textContent), {actions: false, renderer: 'svg'})\n"
        "    .then(function () { target.setAttribute('data-rendered', 'true'); })\n"
        "    .catch(function (err) { target.setAttribute('data-error', String(err)); target.textContent = 'Chart failed: ' + err; });\n"
        "});\n"
        "</script>"
    )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _bundle_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "preftools"


def vega_bundle() -> tuple[str, dict]:
    """The Vega + Vega-Lite + vega-embed JavaScript for Altair's Vega-Lite version, from vl-convert-python.

    vl-convert bundles the libraries it ships on each call (about 15 s), so the result is cached
    under ``$XDG_CACHE_HOME/preftools/`` keyed by the vl-convert and Vega-Lite versions; a cache
    that can't be read or written is simply skipped.
    """
    import altair as alt

    try:
        from altair.utils._importers import import_vl_convert, vl_version_for_vl_convert

        vlc = import_vl_convert()
        vl_version = vl_version_for_vl_convert()
    except ImportError as exc:
        raise ReportError(
            f"cannot inline the Vega JavaScript: {' '.join(str(exc).split())[:300]} "
            "(pip install -r requirements.txt installs vl-convert-python)"
        ) from None
    from importlib.metadata import version

    vlc_version = version("vl-convert-python")
    cache = _bundle_cache_dir() / f"vega-embed-bundle-vlc{vlc_version}-vl{vl_version}.js"
    bundle = None
    with contextlib.suppress(OSError, UnicodeDecodeError):
        bundle = cache.read_text(encoding="utf-8")
    if not bundle:
        bundle = vlc.javascript_bundle(vl_version=vl_version)
        with contextlib.suppress(OSError):
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_name(f".{cache.name}.{os.getpid()}.tmp")
            tmp.write_text(bundle, encoding="utf-8")
            os.replace(tmp, cache)
    if "</script" in bundle.lower():  # would end the inline <script> early
        bundle = re.sub(r"</(script)", r"<\\/\1", bundle, flags=re.IGNORECASE)
    versions = {
        "vega-lite": str(alt.VEGALITE_VERSION),
        "vega": str(alt.VEGA_VERSION),
        "vega-embed": str(alt.VEGAEMBED_VERSION),
        "vl-convert-python": vlc_version,
    }
    return bundle, versions


def build_report(duckdb_path: Path) -> tuple[str, list[Section]]:
    """The report's HTML for the warehouse at ``duckdb_path``, and its sections."""
    with open_warehouse(duckdb_path) as con:
        tables = existing_tables(con)
        require_marts(tables, duckdb_path)
        info = build_info(con, tables)
        headlines = headline_rows(con, tables)
        sections = []
        for make in SECTIONS:
            made = make(con, tables)
            sections += made if isinstance(made, list) else [made]
    bundle, versions = vega_bundle()
    return render_html(duckdb_path, info, headlines, sections, bundle, versions), sections


def write_report(duckdb_path: Path, out: Path) -> list[Section]:
    """Write the report to ``out`` through a temporary file in the same folder (never a half-written file)."""
    text, sections = build_report(duckdb_path)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    except OSError as exc:
        raise ReportError(f"cannot write to {out.parent}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes it 0600; a report is for sharing
        os.replace(tmp, out)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise ReportError(f"cannot write {out}: {exc.strerror or exc}") from None
    return sections


# --------------------------------------------------------------------------------------------
# command line


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="preftools report",
        description=(
            "Write the audit report: one self-contained HTML file (charts inline, no network needed to "
            "view it) from the marts of the DuckDB warehouse, opened read-only."
        ),
    )
    parser.add_argument(
        "--duckdb-path",
        default=None,
        help=f"the warehouse file (default: $DUCKDB_PATH, else {DEFAULT_DUCKDB_PATH})",
    )
    parser.add_argument("--out", default=DEFAULT_OUT, help=f"the HTML file to write (default: {DEFAULT_OUT})")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    duckdb_path = warehouse.duckdb_path(args.duckdb_path)
    out = Path(args.out)
    try:
        sections = write_report(duckdb_path, out)
    except ReportError as exc:
        print(f"report: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # noqa: BLE001 - one line unless debugging
        return unexpected_error("report", exc)
    n_charts = sum(len(s.charts) for s in sections)
    missing = sorted({m for s in sections for m in s.missing})
    print(f"report: wrote {out} ({out.stat().st_size / 1e6:.1f} MB, {n_charts} charts)")
    if missing:
        print(f"report: not built, noted in the report: {', '.join(missing)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
