"""The decontamination rule (docs/decontamination.md) in plain Python: tokens, and one eval text
against one user turn. Written from the doc, not from the SQL: the tests' reference
(tests/python/contamination_reference.py) and the generator's planted cases
(preftools/generate/contamination.py) use it, and the tests hold the SQL to it."""

from __future__ import annotations

import re
import sys
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable


def is_word_char(c: str) -> bool:
    """A Unicode letter or digit (``[\\p{L}\\p{N}]``): general category L* or N*."""
    return unicodedata.category(c)[0] in "LN"


@lru_cache(maxsize=1)
def _word_runs() -> re.Pattern:
    """A regex of maximal runs of :func:`is_word_char` characters: the class lists every code point
    whose category is L* or N* (as ranges), so it is exactly the per-character rule, only faster."""
    ranges, start = [], None
    for cp in range(sys.maxunicode + 2):
        ok = cp <= sys.maxunicode and is_word_char(chr(cp))
        if ok and start is None:
            start = cp
        elif not ok and start is not None:
            ranges.append((start, cp - 1))
            start = None
    cls = "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)
    return re.compile(f"[{cls}]+")


def simple_lower(token: str) -> str:
    """Unicode's simple lower-case mapping, character by character: str.lower() of one character
    gives its full mapping, whose first character is the simple one (U+0130 -> "i"), and no
    context applies (a final capital sigma -> "σ")."""
    return "".join(c.lower()[0] for c in token)


def tokens(text: str | None) -> list[str]:
    """Maximal runs of Unicode letters and digits, each lower-cased character by character with
    Unicode's simple case mapping (one character to one, no context); [] for NULL."""
    if text is None:
        return []
    return [simple_lower(t) for t in _word_runs().findall(text)]


def tokens_slow(text: str | None) -> list[str]:
    """:func:`tokens` character by character (the tests check the two agree)."""
    out, run = [], []
    for c in text or "":
        if is_word_char(c):
            run.append(c)
        elif run:
            out.append(simple_lower("".join(run)))
            run = []
    if run:
        out.append(simple_lower("".join(run)))
    return out



# ------------------------------------------------------------------------------ one eval text, one user turn

@dataclass(frozen=True)
class Verdict:
    """One eval text against one user turn."""

    exact: bool
    matched: bool
    coverage: float  # covered / m (m >= n); 1.0 or 0.0 for a shorter text; 0.0 for m = 0
    run: tuple[int, int] | None  # (start, length) of the longest covered run, earliest on ties; None if nothing covered


def ngram_windows(eval_tokens: list[str], turn_tokens: list[str], n: int) -> list[int]:
    """The start positions i of the eval text's n-grams (tokens i..i+n-1) that occur in the turn."""
    turn_grams = {tuple(turn_tokens[j:j + n]) for j in range(len(turn_tokens) - n + 1)}
    return [i for i in range(len(eval_tokens) - n + 1) if tuple(eval_tokens[i:i + n]) in turn_grams]


def covered_positions(windows: Iterable[int], n: int) -> list[int]:
    """The token positions inside at least one of the n-grams starting at ``windows``, sorted."""
    return sorted({p for i in windows for p in range(i, i + n)})


def longest_run(positions: list[int]) -> tuple[int, int] | None:
    """(start, length) of the longest run of consecutive positions (sorted input), the earliest of
    the longest; None for no position."""
    best, start, prev = None, None, None
    for p in positions + [None]:
        if p is not None and prev is not None and p == prev + 1:
            prev = p
            continue
        if start is not None:
            length = prev - start + 1
            if best is None or length > best[1]:
                best = (start, length)
        start, prev = p, p
    return best


def contains(turn_tokens: list[str], eval_tokens: list[str]) -> bool:
    """The eval tokens occur contiguously in the turn's tokens."""
    k = len(eval_tokens)
    return any(turn_tokens[j:j + k] == eval_tokens for j in range(len(turn_tokens) - k + 1))


def compare(eval_tokens: list[str], turn_tokens: list[str], n: int, threshold: float) -> Verdict:
    """The doc's rule for an eval text of m tokens against one user turn:
    exact when the tokens are equal; m >= n: coverage = the share of the m positions inside an
    n-gram of the eval text that also occurs in the turn, a match when coverage > threshold;
    0 < m < n: a match (coverage 1) when the tokens occur contiguously in the turn; m = 0: never.
    An exact text is a match (its coverage is 1 at any length)."""
    m = len(eval_tokens)
    if m == 0:
        return Verdict(False, False, 0.0, None)
    exact = eval_tokens == turn_tokens
    if m < n:
        hit = exact or contains(turn_tokens, eval_tokens)
        return Verdict(exact, hit, 1.0 if hit else 0.0, (0, m) if hit else None)
    positions = covered_positions(ngram_windows(eval_tokens, turn_tokens, n), n)
    coverage = len(positions) / m
    return Verdict(exact, exact or coverage > threshold, coverage, longest_run(positions))
