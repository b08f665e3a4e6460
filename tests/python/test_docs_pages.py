"""The README and the pages of docs/: the README stays a first screen that links every page, the
user docs (with CONTRIBUTING.md, the benchmark's page, and the descriptions `dbt docs` and the
warehouse's comments show) carry no project history (issue numbers, commit ids), and every relative
link lands on a file that exists (and, for a Markdown page, on a heading it has)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import REPO, make_targets

README = REPO / "README.md"
DOCS = REPO / "docs"
MAX_README_LINES = 160

# [text](target) and [text](target "title"); images too. Code spans and fenced blocks are removed first.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.DOTALL | re.MULTILINE)
CODE_SPAN = re.compile(r"`+[^`\n]*`+")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
ISSUE_REF = re.compile(r"\bissues?\s+#?\d+\b|(?<![\w&/#])#\d+\b", re.IGNORECASE)
# 7 to 40 hex digits with at least one digit and one letter (a plain number or word is no commit id)
COMMIT_ID = re.compile(r"(?<![\w-])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w-])")


def pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def other_pages() -> list[Path]:
    """Pages for contributors and for users of the benchmark, held to the same rules."""
    return [REPO / "CONTRIBUTING.md", REPO / "benchmarks" / "README.md"]


def descriptions() -> list[Path]:
    """Where the models', columns' and seeds' descriptions are written: the schema files and the
    docs blocks (dbt docs shows them; the build stores them as the warehouse's comments)."""
    models = REPO / "models"
    return sorted([*models.rglob("*.yml"), *models.rglob("*.md"), *(REPO / "seeds").rglob("*.yml")])


def prose(text: str) -> str:
    """The Markdown without fenced blocks and code spans (where links are not links)."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, code ticks and punctuation dropped, spaces as '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {slug(h) for h in HEADING.findall(FENCE.sub("", path.read_text(encoding="utf-8")))}


def relative_links(path: Path) -> list[str]:
    return [t for t in LINK.findall(prose(path.read_text(encoding="utf-8")))
            if not re.match(r"^[a-z][a-z0-9+.-]*:", t, re.IGNORECASE)]


def test_docs_pages_exist_and_are_linked_from_the_readme():
    docs = sorted(DOCS.glob("*.md"))
    assert docs, "no docs/*.md"
    linked = {(README.parent / t.split("#")[0]).resolve() for t in relative_links(README) if t.split("#")[0]}
    assert [p.name for p in docs if p.resolve() not in linked] == []


def test_readme_is_a_first_screen():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_README_LINES, (
        f"README.md has {len(lines)} lines (at most {MAX_README_LINES}): move reference text to docs/")


@pytest.mark.parametrize("path", pages() + other_pages() + descriptions(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_project_history(path):
    """User docs describe the project as it is: no issue numbers, no commit ids."""
    text = path.read_text(encoding="utf-8")
    found = [(n, m.group(0)) for n, line in enumerate(text.splitlines(), 1)
             for rx in (ISSUE_REF, COMMIT_ID) for m in rx.finditer(line)]
    assert found == [], f"{path.relative_to(REPO)}: {found}"


@pytest.mark.parametrize("path", pages() + other_pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_point_to_existing_files(path):
    broken = []
    for target in relative_links(path):
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target} (no such heading)")
    assert broken == [], f"{path.relative_to(REPO)}: {broken}"


def test_the_checks_see_what_they_look_for():
    """The patterns on made-up text: history and links are found, look-alikes are not."""
    assert ISSUE_REF.findall("as issue " + "14 asks (#16)") == ["issue " + "14", "#16"]
    assert not ISSUE_REF.search("see [x](#train-with-trl), &#8212; and step 2")
    assert COMMIT_ID.findall("commit " + "21503ed, then 631b4280d3") == ["21503ed", "631b4280d3"]
    assert not COMMIT_ID.search("63967 rows, 1000000 rows, a deadbeef-free accede, train-00000-of-00004")
    text = "[a](docs/x.md#y) [b](https://example.org) `[c](not/a/link.md)` [d](#local)"
    assert LINK.findall(prose(text)) == ["docs/x.md#y", "https://example.org", "#local"]
    assert slug("dbt-project-evaluator's rules") == "dbt-project-evaluators-rules"
    assert slug("Train with `TRL`") == "train-with-trl"


# ============================================================================ the README's journeys

def readme_prose() -> str:
    """The README's prose: no fenced blocks, code spans or link targets (where digits are no figures)."""
    return re.sub(r"\]\([^)]*\)", "]", prose(README.read_text(encoding="utf-8")))


def _yaml(path: Path):
    import yaml
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _upstream_bug_in_the_sample() -> bool:
    """UltraFeedback's raw completions hold overall_score 10 on responses whose fine-grained
    score (the aspect ratings' mean) is at most 2."""
    import duckdb
    files = str(REPO / "sample_data" / "openbmb" / "UltraFeedback" / "*.jsonl")
    with duckdb.connect() as con:
        (n,) = con.execute("select count(*) from (select unnest(completions) as c from read_json_auto(?))"
                           " where c.overall_score = 10 and c.\"fine-grained_score\" <= 2", [files]).fetchone()
    return n > 0


def _secret_kinds() -> int:
    import csv
    with open(REPO / "seeds" / "pii_patterns.csv", newline="") as f:
        return sum(row["category"] == "secret" for row in csv.DictReader(f))


def _supported_pythons() -> list[str]:
    (line,) = [x for x in (REPO / "Makefile").read_text().splitlines() if x.startswith("SUPPORTED_PYTHONS :=")]
    return line.split(":=")[1].split()


# Every figure in the README's prose (a number, or a count from three up), with what keeps it true:
# the phrase as the README says it, and a check against the code, the examples or the bundled
# sample. A figure the README gains needs its line here; one the README loses fails until its line goes.
def _figures() -> dict[str, callable]:
    from contamination_reference import DEFAULTS as CONTAMINATION
    from near_duplicates_reference import DEFAULTS as NEAR

    from benchmarks.reference import ASPECTS
    project = _yaml(REPO / "dbt_project.yml")
    extra = _yaml(REPO / "examples" / "extra_datasets.yml")["extra_datasets"]
    return {
        "three public preference": lambda: len(project["vars"]["datasets"]) == 3,
        "a critique score of 1 as 10": _upstream_bug_in_the_sample,
        "the four aspect ratings": lambda: len(ASPECTS) == 4,
        "Python 3.11-3.13": lambda: _supported_pythons() == ["3.11", "3.12", "3.13"],
        "five entries, one per shape": lambda: len(extra) == 5 and {e["shape"] for e in extra} == {
            "preference", "rated_completions", "transcript"},
        "shared 8-grams": lambda: CONTAMINATION["ngram"] == 8,
        "seven benchmarks": lambda: len(_yaml(REPO / "examples" / "eval_sets.yml")["eval_sets"]) == 7,
        "word 5-gram Jaccard >= 0.8": lambda: (NEAR["ngram"], NEAR["threshold"]) == (5, 0.8),
        "seven formats": lambda: _secret_kinds() == 7,
    }


FIGURE = re.compile(r"(?<![\w.-])(\d+(?:[.,]\d+)*|three|four|five|six|seven|eight|nine|ten|eleven|twelve)(?!\w)",
                    re.IGNORECASE)


def test_every_readme_figure_is_kept_true():
    text = " ".join(readme_prose().split())
    figures = _figures()
    covered = [(m.start(), m.end()) for phrase in figures for m in re.finditer(re.escape(phrase), text)]
    loose = [text[max(0, m.start() - 30):m.end() + 20] for m in FIGURE.finditer(text)
             if not any(a <= m.start() < b for a, b in covered)]
    assert loose == [], f"README figures no test keeps true (add each to _figures()): {loose}"
    assert [p for p in figures if p not in text] == [], "figures the README no longer says"
    assert [p for p, check in figures.items() if not check()] == []


def readme_sections() -> dict[str, str]:
    """The README's text by `## ` heading."""
    parts = re.split(r"^## (.+)$", README.read_text(encoding="utf-8"), flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2]))


def shell_lines(text: str) -> list[str]:
    return [line.split("#")[0].strip() for block in re.findall(r"^```bash\n(.*?)^```", text, re.DOTALL | re.MULTILINE)
            for line in block.splitlines() if line.strip()]


def test_readme_commands_exist():
    """Every `make <target>` and `preftools <command>` the README names is one."""
    from preftools.__main__ import COMMANDS

    readme = README.read_text(encoding="utf-8")
    text = " ".join([m.group(0) for m in FENCE.finditer(readme)] + CODE_SPAN.findall(readme))  # code, not prose
    targets = make_targets()
    assert sorted(set(re.findall(r"\bmake ([a-z][\w-]*)", text)) - targets) == []
    assert sorted(set(re.findall(r"\bpreftools ([a-z][\w-]*)", text)) - set(COMMANDS)) == []


def test_readme_journeys_carry_their_steps():
    """The journeys a new user follows from the README: the audit report has its command; the
    example registry builds first offline, on the bundled sample, which holds every entry's
    files; the TRL snippet says which install it needs."""
    from extra_reference import entry_files

    sections = readme_sections()
    commands = [line for section in sections.values() for line in shell_lines(section)]
    assert any(re.match(r"(preftools|make) report\b", c) for c in commands), commands

    registry = shell_lines(sections["Add your own datasets"])
    assert registry[0] == 'dbt build --vars "$(cat examples/extra_datasets.yml)"', registry
    for entry in _yaml(REPO / "examples" / "extra_datasets.yml")["extra_datasets"]:
        assert entry_files(entry, REPO / "sample_data"), f"sample_data/ has no files of the entry {entry['name']}"

    trl = sections["Train with TRL"]
    assert "make install-clients" in trl[:trl.index("from trl import")], trl
