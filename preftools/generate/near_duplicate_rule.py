"""The near-duplicate rule (docs/near-duplicates.md) in plain Python: the texts compared, their
shingles and the Jaccard similarity of two texts. Written from the doc, not from the SQL: the
generator's planted cases (preftools/generate/near_duplicates.py) and the tests' reference
(tests/python/near_duplicates_reference.py) use it, and the tests hold the SQL to it."""

from __future__ import annotations

from typing import Iterable

from preftools.generate.contamination_rule import tokens

DEFAULTS = {"enabled": True, "ngram": 5, "threshold": 0.8, "keep": "one"}


def prompt_text(prompt: Iterable[dict] | None) -> str:
    """A prompt's text: the contents of its user turns joined with "\\n", in order."""
    return "\n".join(m["content"] for m in prompt or [] if m.get("role") == "user" and m.get("content") is not None)


def response_text(messages: Iterable[dict] | None) -> str:
    """A response's text: the contents of its messages joined with "\\n"."""
    return "\n".join(m["content"] for m in messages or [] if m.get("content") is not None)


def shingles(text: str | None, n: int = DEFAULTS["ngram"]) -> frozenset[tuple[str, ...]]:
    """The set of word n-grams of the text's tokens; a text of 1 <= m < n tokens has one shingle,
    its whole token sequence; a text without tokens has none."""
    toks = tokens(text)
    if not toks:
        return frozenset()
    if len(toks) < n:
        return frozenset([tuple(toks)])
    return frozenset(tuple(toks[i:i + n]) for i in range(len(toks) - n + 1))


def jaccard(a: frozenset, b: frozenset) -> float:
    """|a & b| / |a | b|; 0.0 when either set is empty (a text without tokens is never near)."""
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


def near(a: frozenset, b: frozenset, threshold: float = DEFAULTS["threshold"]) -> bool:
    """Jaccard >= threshold, both texts having tokens."""
    return bool(a) and bool(b) and jaccard(a, b) >= threshold
