"""An exported dataset card read as its readers read it: the YAML front matter as the Hub and
``datasets`` read it, the body rendered by a CommonMark renderer with tables (markdown-it-py), and
what "written for readers" means checked on the rendered tokens, never on the code that writes
the card:

* the front matter is a YAML mapping with the keys the Hub reads, each of the type it expects;
* one title, then each section heading once, the expected ones in the expected order, none empty;
* no raw HTML (a ``<dataset>`` the renderer would take for a tag and hide) and no HTML entity
  (``&lt;``) in the text outside code: a reader of the source sees what the page shows;
* one wrapping convention: every paragraph and list item on one source line;
* nothing said twice: no paragraph, and no sentence of six words or more, repeated;
* no seam of stitched fragments: no sentence running into the next without punctuation
  ("... every dataset What goes into ..."), and no heading-like fragment of four words or fewer
  ("The corrected rule.") between the sentences of a paragraph.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import yaml
from markdown_it import MarkdownIt

# The card metadata keys the Hub documents (huggingface_hub's DatasetCardData), and their types.
HUB_KEYS = {
    "pretty_name": str, "license": (str, list), "source_datasets": list, "tags": list,
    "size_categories": list, "configs": list, "language": (str, list), "task_categories": list,
}
REQUIRED_KEYS = ("pretty_name", "tags", "size_categories", "configs")
ENTITY = re.compile(r"&(?:#\d+|#x[0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")
# A sentence ends at . ! or ? and a space, unless the . ends an abbreviation.
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
ABBREVIATIONS = ("e.g.", "i.e.", "vs.", "cf.")
WORD = re.compile(r"[A-Za-z][\w'-]*")
# A lower-case word then, with no punctuation between, a capitalised word that only starts a
# sentence: the end of one fragment and the start of the next.
RUN_ON = re.compile(r"\b[a-z0-9_]+ (?:The|A|An|What|How|Why|Which|When|Each|Every|This|These|Its|It|Training|Pairs)\b")


@dataclass
class Block:
    kind: str  # paragraph, list item, table cell
    text: str  # as rendered, without markup
    source_lines: int  # how many lines of source it spans
    section: str  # the heading above it


@dataclass
class Card:
    front: dict
    title: list[str] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)  # the level-2 headings, in order
    blocks: list[Block] = field(default_factory=list)
    rows: list[tuple[str, list[str]]] = field(default_factory=list)  # (heading above, cells) per table row
    html: list[str] = field(default_factory=list)  # raw HTML the renderer met
    entities: list[str] = field(default_factory=list)  # entities written in text outside code
    empty_sections: list[str] = field(default_factory=list)

    def section(self, heading: str) -> list[Block]:
        return [b for b in self.blocks if b.section == heading]


def split_front_matter(text: str) -> tuple[dict, str]:
    assert text.startswith("---\n"), "the card does not start with YAML front matter"
    front, sep, body = text[4:].partition("\n---\n")
    assert sep, "the card's front matter is not closed by ---"
    data = yaml.safe_load(front)
    assert isinstance(data, dict), "the front matter is not a YAML mapping"
    return data, body


def _inline_text(token) -> str:
    return "".join(c.content if c.type != "softbreak" else " " for c in token.children or [])


def read(text: str) -> Card:
    """The card's front matter and its body as markdown-it-py renders it."""
    front, body = split_front_matter(text)
    # text_join would merge an entity into the text around it: left off, an entity stays a token
    md = MarkdownIt("commonmark", {"html": True}).enable("table").disable("text_join")
    card = Card(front)
    section, kind, filled = "", "", True
    for i, token in enumerate(tokens := md.parse(body)):
        if token.type == "heading_open":
            heading = _inline_text(tokens[i + 1])
            if token.tag == "h1":
                card.title.append(heading)
            else:
                if not filled:
                    card.empty_sections.append(section)
                card.headings.append(heading)
                section, filled = heading, False
            continue
        if token.type in ("html_block", "html_inline"):
            card.html.append(token.content.strip())
        if token.type in ("paragraph_open", "td_open", "th_open", "fence", "code_block", "table_open"):
            filled = True
        if token.type == "tr_open":
            card.rows.append((section, []))
        if token.type == "list_item_open":
            kind = "list item"
        elif token.type == "list_item_close":
            kind = ""
        elif token.type == "td_open":
            kind = "table cell"
        elif token.type == "td_close":
            kind = ""
        if token.type != "inline" or tokens[i - 1].type == "heading_open":
            continue
        for child in token.children or []:
            if child.type == "html_inline":
                card.html.append(child.content)
            if child.type == "text_special" and child.info == "entity":
                card.entities.append(child.markup)
        lines = token.map[1] - token.map[0] if token.map else 1
        card.blocks.append(Block(kind or "paragraph", _inline_text(token), lines, section))
        if tokens[i - 1].type in ("td_open", "th_open"):
            card.rows[-1][1].append(_inline_text(token))
    if not filled:
        card.empty_sections.append(section)
    return card


def expected_headings(columns: set[str], described: bool) -> list[str]:
    """The sections every card has, in their order, and those of a described table (a comment in
    the catalog), a training table (prompt, chosen, rejected) and a table of pairs with integrity
    flags: what the table holds, the training format and the flags, each under its own heading."""
    return ([*(["What the table holds"] if described else []),
             *(["Training format"] if {"prompt", "chosen", "rejected"} <= columns else []),
             *(["Flagged pairs"] if "integrity_flags" in columns else []),
             "Splits", "How to use", "Columns", "Source datasets and licences", "Provenance"])


def table(card: Card, heading: str) -> list[list[str]]:
    """The rows (header row first) of the tables under ``heading``, their cells as rendered."""
    return [cells for section, cells in card.rows if section == heading]


def sentences(text: str) -> list[str]:
    out: list[str] = []
    for piece in SENTENCE_END.split(text.strip()):
        if out and out[-1].endswith(ABBREVIATIONS):
            out[-1] += " " + piece
        elif piece:
            out.append(piece)
    return out


def problems(text: str, headings: list[str]) -> list[str]:
    """What keeps the card from reading as written for its readers; ``headings``: the level-2
    headings it must have, in their order."""
    found: list[str] = []
    try:
        card = read(text)
    except (AssertionError, yaml.YAMLError) as exc:
        return [f"front matter: {exc}"]
    front = card.front
    found += [f"front matter: no {k}" for k in REQUIRED_KEYS if k not in front]
    found += [f"front matter: {k} is not a Hub card key" for k in front if k not in HUB_KEYS]
    found += [f"front matter: {k} is a {type(v).__name__}" for k, v in front.items()
              if k in HUB_KEYS and not isinstance(v, HUB_KEYS[k])]
    for config in front.get("configs") or []:
        if not (isinstance(config, dict) and config.get("config_name") and
                all(isinstance(f, dict) and f.get("split") and f.get("path") for f in config.get("data_files") or [None])):
            found.append(f"front matter: a config without a name or data_files: {config!r}")

    if len(card.title) != 1:
        found.append(f"{len(card.title)} titles (level-1 headings): {card.title}")
    repeated = sorted({h for h in card.headings if card.headings.count(h) > 1})
    found += [f"heading {h!r} {card.headings.count(h)} times" for h in repeated]
    missing = [h for h in headings if h not in card.headings]
    found += [f"no heading {h!r}" for h in missing]
    present = [h for h in card.headings if h in headings]
    if not missing and present != [h for h in headings if h in present]:
        found.append(f"headings out of order: {present}, expected {headings}")
    found += [f"section {h!r} is empty" for h in card.empty_sections]

    found += [f"raw HTML {h!r} (the renderer hides it)" for h in card.html]
    found += [f"HTML entity {e} in the text" for e in card.entities]
    found += [f"an entity written in the source: {m!r}" for b in card.blocks for m in ENTITY.findall(b.text)]

    prose = [b for b in card.blocks if b.kind != "table cell"]
    found += [f"a {b.kind} hard-wrapped over {b.source_lines} lines under {b.section!r}: {b.text[:70]!r}"
              for b in prose if b.source_lines > 1]
    texts = [" ".join(b.text.split()) for b in prose if len(b.text.split()) >= 6]
    found += [f"paragraph said twice: {t[:90]!r}" for t in sorted({t for t in texts if texts.count(t) > 1})]
    said = [s for b in prose for s in sentences(b.text) if len(WORD.findall(s)) >= 6]
    found += [f"sentence said twice: {s[:90]!r}" for s in sorted({s for s in said if said.count(s) > 1})]
    for b in card.blocks:
        found += [f"run-on fragments under {b.section!r}: {m!r}" for m in RUN_ON.findall(b.text)]
    for b in prose:
        parts = sentences(b.text)
        if len(parts) > 1:
            found += [f"heading-like fragment under {b.section!r}: {s!r}" for s in parts
                      if s[0].isalpha() and s.endswith(".") and len(WORD.findall(s)) <= 4]
    return found


def assert_written_for_readers(cards: dict[str, tuple[str, list[str]]]) -> None:
    """``cards``: name -> (the card's text, the headings it must have, in order)."""
    found = [f"{name}: {p}" for name, (text, headings) in cards.items() for p in problems(text, headings)]
    assert cards and not found, f"{len(found)} problems in the cards:\n  " + "\n  ".join(found)
