"""The README and the pages of docs/: the README stays a first screen that links every page, the
user docs (with CONTRIBUTING.md, the benchmark's page, and the descriptions `dbt docs` and the
warehouse's comments show) carry no project history (issue numbers, commit ids), and every relative
link lands on a file that exists (and, for a Markdown page, on a heading it has)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import REPO

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
