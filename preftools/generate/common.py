"""What the three dataset generators share: reproducible random streams, the text bank
that all free texts are cut from, small Arrow string helpers, and the run settings."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from preftools.files import GENERATOR_MANIFEST as MANIFEST_NAME

try:  # progress bars are optional
    from tqdm import tqdm as _tqdm
except ImportError:  # pragma: no cover
    _tqdm = None

GENERATOR_VERSION = "1.0"

# --------------------------------------------------------------------------------------
# Vocabulary.  None of these words has a VADER valence, none is a VADER booster or
# negation; that keeps the sentiment of critiques equal to that of their templates.
# --------------------------------------------------------------------------------------
WORDS = """
the of to for and in is that it as with was on be by this are from at or an which have has had
were been their its one all also can other into these some such than then them only over time
first new used two may after between many would each about there where system data model process
order part people water world area form point example result group method level state use work
table function file step line text field case type list set name code user page report section
term year class source rate size range test output input query index record factor weight length
unit signal layer node graph matrix vector sample label token format structure element feature
network service server client request response message channel stream buffer frame window column
row key map path route region city river mountain island coast village market street building house
room door floor wall garden tree plant seed leaf flower forest animal bird fish insect horse cattle
farm crop grain bread milk cheese salt sugar coffee tea wine paper book chapter letter word
paragraph note story history museum library school student teacher lesson course subject science
physics chemistry biology geology math algebra geometry angle circle square triangle surface volume
density temperature power force motion speed distance mass metal iron copper silver stone sand clay
glass cloth wool cotton silk color shape pattern design style technique approach procedure routine
schedule calendar month week day hour minute second morning evening night season summer winter
spring autumn weather cloud rain snow wind storm ocean lake pond bridge tunnel road railway station
airport harbor ship boat train truck car engine wheel motor pump valve pipe wire cable switch panel
screen keyboard device machine tool hammer knife spoon plate bowl cup bottle box bag basket shelf
drawer cabinet chair desk bed lamp mirror clock camera phone radio computer program variable
parameter constant operator expression statement loop branch condition array string integer float
object instance module package framework interface protocol header footer title caption figure
chart diagram summary outline draft version release update patch change merge folder directory
archive backup copy describe compare explain write provide include consider follow apply measure
calculate estimate convert translate summarize classify identify select arrange organize prepare
store load read parse render display print check review verify count sort filter split combine
reduce return call define declare assign compute generate collect gather build install configure
deploy run execute start open close move turn carry bring take make give show tell find keep hold
place put send receive pass enter walk travel visit meet plan cook bake boil mix pour fold wash dry
paint draw sing given specific general common simple basic main several various every same
different typical standard current previous next final initial average daily weekly annual local
national regional central northern southern eastern western upper inner outer small large long
short wide narrow high early late recent modern ancient physical chemical digital manual automatic
linear binary numeric textual visual written spoken formal technical practical often usually
typically generally mostly sometimes always later before during within across along around through
under above below among toward upon via per
""".split()

# Rating strings shared by UltraFeedback and CodeUltraFeedback.
RATING_STR = ("1", "2", "3", "4", "5")


@dataclass(frozen=True)
class GenerationRun:
    """The settings of one ``generate()`` call that every dataset generator reads."""

    out_dir: Path
    seed: int
    text_factor: float  # factor on the length of every free text
    bank: "TextBank"
    wanted: frozenset[str]  # dataset keys to write
    progress: bool
    formats: dict[str, str]  # dataset key -> file format (preftools.generate.writer.FORMATS)
    # "original", or "fixed": UltraFeedback with openbmb's overall_score fix (ultrafeedback.overall_score_fix)
    ultrafeedback_revision: str = "original"
    # the eval items to plant in the training data (contamination.ContaminationPlan); None: none
    contamination: Any = None
    # the near-duplicate cases to plant in the stand-ins of pairs (near_duplicates.NearDuplicatePlan); None: none
    near_duplicates: Any = None
    # the personal data and secrets to plant (pii.PiiPlan); None: none
    pii: Any = None


# ======================================================================================
# random streams and planted-row counts
# ======================================================================================
def rng_for(seed: int, *path: Any) -> np.random.Generator:
    """Independent, reproducible stream for (seed, path...)."""
    words = [int(seed)]
    for part in path:
        if isinstance(part, str):
            words.extend(part.encode())
        else:
            words.append(int(part))
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(words)))


def n_planted(n: int, rate: float, minimum: int = 3) -> int:
    """How many of ``n`` rows get a planted quirk of frequency ``rate`` (at least ``minimum``)."""
    return min(n, max(minimum, int(round(rate * n))))


def progress_bar(iterable, total=None, desc=None, enabled=True):
    if enabled and _tqdm is not None:
        return _tqdm(iterable, total=total, desc=desc, leave=False, file=sys.stderr)
    return iterable


# ======================================================================================
# Arrow string helpers
# ======================================================================================
def concat(*parts: Any) -> pa.Array:
    """Element-wise concatenation of string arrays / python strings."""
    return pc.binary_join_element_wise(*parts, "")


def take_strings(options: Iterable[str | None], indices: np.ndarray) -> pa.Array:
    """``options[i]`` for every ``i`` of ``indices``, as a string array."""
    return pc.take(pa.array(list(options), pa.string()), pa.array(indices, pa.int64()))


def int_strings(values: np.ndarray) -> pa.Array:
    """Integers as decimal strings."""
    return pc.cast(pa.array(values, pa.int64()), pa.string())


def json_escape(strings: pa.Array) -> pa.Array:
    """The strings escaped for use inside a JSON string literal (backslash, quote, newline)."""
    strings = pc.replace_substring(strings, "\\", "\\\\")
    strings = pc.replace_substring(strings, '"', '\\"')
    strings = pc.replace_substring(strings, "\n", "\\n")
    return strings


def replace_at(strings: pa.Array, edits: dict[int, str]) -> pa.Array:
    """``strings`` with the entries at the positions of ``edits`` replaced by its values."""
    if not edits:
        return strings
    mask = np.zeros(len(strings), bool)
    positions = sorted(edits)
    mask[positions] = True
    return pc.replace_with_mask(strings, pa.array(mask), pa.array([edits[k] for k in positions], pa.string()))


def prefixed_by_source(rng: np.random.Generator, source_index: np.ndarray, sources: tuple[str, ...],
                       prefixes: dict[str, tuple[str, ...]]) -> pa.Array:
    """For each row, one of the instruction prefixes of its source (``sources[source_index]``)."""
    return lazy_prefixed_by_source(rng, source_index, sources, prefixes).all()


def lazy_prefixed_by_source(rng: np.random.Generator, source_index: np.ndarray, sources: tuple[str, ...],
                            prefixes: dict[str, tuple[str, ...]]) -> LazyStrings:
    """:func:`prefixed_by_source`, built when asked for (the draws are made now)."""
    options: list[str] = []
    chosen = np.zeros(len(source_index), np.int64)
    for position, source in enumerate(sources):
        first_option = len(options)
        options.extend(prefixes[source])
        rows = source_index == position
        chosen[rows] = first_option + rng.integers(0, len(prefixes[source]), rows.sum())
    return lazy_options(options, chosen)


# ======================================================================================
# lazy string columns (writing in bounded memory)
# ======================================================================================
class LazyStrings:
    """A column of ``n`` strings whose texts are only built for the positions asked for.

    The random draws that define the strings are made when the column is created (in the
    order the generator has always made them, so the output does not change), and kept as
    small numeric arrays; the texts are cut from the text bank and assembled by :meth:`at`,
    a chunk of rows at a time, so that a dataset never has to be held in memory whole.
    Every operation is element-wise: ``at(positions)`` equals ``all().take(positions)``.
    """

    def __init__(self, n: int, build: Callable[[np.ndarray], pa.Array]):
        self.n = int(n)
        self._build = build

    def __len__(self) -> int:
        return self.n

    def at(self, positions: np.ndarray) -> pa.Array:
        """The strings at ``positions`` (int array), as a string array."""
        return self._build(np.asarray(positions, np.int64))

    def all(self) -> pa.Array:
        return self.at(np.arange(self.n))

    def __getitem__(self, position: int) -> pa.Scalar:
        return self.at(np.array([int(position)]))[0]


def lazy_options(options: Iterable[str | None], indices: np.ndarray) -> LazyStrings:
    """``options[indices[i]]`` (:func:`take_strings`), lazily."""
    option_array = pa.array(list(options), pa.string())
    return LazyStrings(len(indices), lambda at: pc.take(option_array, pa.array(indices[at], pa.int64())))


def lazy_ints(values: np.ndarray) -> LazyStrings:
    """Integers as decimal strings (:func:`int_strings`), lazily."""
    return LazyStrings(len(values), lambda at: int_strings(values[at]))


def lazy_concat(*parts: LazyStrings | str) -> LazyStrings:
    """Element-wise concatenation (:func:`concat`) of lazy columns and python strings."""
    n = next(len(p) for p in parts if isinstance(p, LazyStrings))
    return LazyStrings(n, lambda at: concat(*(p.at(at) if isinstance(p, LazyStrings) else p for p in parts)))


def lazy_map(function: Callable[[pa.Array], pa.Array], strings: LazyStrings) -> LazyStrings:
    """An element-wise function of a lazy column."""
    return LazyStrings(len(strings), lambda at: function(strings.at(at)))


def lazy_gather(strings: LazyStrings, index: np.ndarray) -> LazyStrings:
    """``strings[index[i]]`` for every ``i``."""
    return LazyStrings(len(index), lambda at: strings.at(index[at]))


def lazy_select(choice: np.ndarray, parts: list[LazyStrings], index: np.ndarray | None = None) -> LazyStrings:
    """Element ``i`` is ``parts[choice[i]][index[i]]`` (``index`` defaults to ``i``); only the
    chosen part is built for each element (like ``pc.if_else`` / ``pc.choose``, same values)."""
    choice = np.asarray(choice, np.int64)

    def build(at: np.ndarray) -> pa.Array:
        chosen = choice[at]
        source = at if index is None else index[at]
        pieces, placed = [], []
        for k, part in enumerate(parts):
            rows = np.flatnonzero(chosen == k)
            pieces.append(part.at(source[rows]))
            placed.append(rows)
        inverse = np.empty(len(at), np.int64)
        inverse[np.concatenate(placed)] = np.arange(len(at))
        return pc.take(pa.concat_arrays(pieces), pa.array(inverse))

    return LazyStrings(len(choice), build)


def lazy_replaced(strings: LazyStrings, edits: dict[int, str]) -> LazyStrings:
    """``strings`` with the entries at the positions of ``edits`` replaced (:func:`replace_at`)."""
    if not edits:
        return strings
    edited = np.array(sorted(edits), np.int64)

    def build(at: np.ndarray) -> pa.Array:
        hits = np.flatnonzero(np.isin(at, edited))
        return replace_at(strings.at(at), {int(j): edits[int(at[j])] for j in hits})

    return LazyStrings(len(strings), build)


def lazy_joined(items: LazyStrings, offsets: np.ndarray, separator: str) -> LazyStrings:
    """Per owner ``i``: its items ``offsets[i] .. offsets[i + 1] - 1`` joined by ``separator``
    (``pc.binary_join`` over a list array with these offsets)."""

    def build(at: np.ndarray) -> pa.Array:
        layout = segments(offsets[at + 1] - offsets[at])
        item = offsets[at][layout.owner] + layout.position
        return pc.binary_join(pa.ListArray.from_arrays(pa.array(layout.offsets, pa.int32()), items.at(item)),
                              separator)

    return LazyStrings(len(offsets) - 1, build)


# ======================================================================================
# ragged layouts
# ======================================================================================
@dataclass(frozen=True)
class Segments:
    """A ragged layout: ``counts[i]`` members for each owner ``i``, numbered consecutively."""

    owner: np.ndarray  # owner of each member
    position: np.ndarray  # position of each member within its owner
    offsets: np.ndarray  # first member of each owner, plus the total at the end

    @property
    def total(self) -> int:
        return int(self.offsets[-1])


def segments(counts: np.ndarray) -> Segments:
    offsets = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    owner = np.repeat(np.arange(len(counts)), counts)
    position = np.arange(offsets[-1]) - offsets[owner]
    return Segments(owner, position, offsets)


# ======================================================================================
# the text bank
# ======================================================================================
class TextBank:
    """A fixed pseudo-random corpus; texts are slices of it, built without Python loops.

    ``sentences(...)`` returns texts of whole sentences ("Word word ... word. Word ...").
    ``phrases(...)`` returns lowercase word sequences without punctuation.
    ``stream`` names the random stream of the corpus: the eval sets' stand-ins cut their texts
    from a bank of their own (:mod:`.eval_sets`), so no eval text shares a sentence with a
    training text by chance.
    """

    N_PHRASE_WORDS = 400_000

    def __init__(self, seed: int, n_sentences: int = 150_000, stream: str = "textbank"):
        rng = rng_for(seed, stream)
        vocabulary = [w.encode() for w in WORDS]
        n_vocabulary = len(vocabulary)
        # token variants: 0 "w ", 1 "W ", 2 "w. "
        tokens = (
            [w + b" " for w in vocabulary]
            + [w[:1].upper() + w[1:] + b" " for w in vocabulary]
            + [w + b". " for w in vocabulary]
        )
        token_length = np.array([len(t) for t in tokens], np.int64)
        token_start = np.zeros(len(tokens), np.int64)
        token_start[1:] = np.cumsum(token_length)[:-1]
        token_bytes = np.frombuffer(b"".join(tokens), np.uint8)

        # --- sentence corpus
        sentence_length = rng.integers(6, 19, n_sentences)
        words = segments(sentence_length)
        word_id = rng.integers(0, n_vocabulary, words.total)
        is_last = words.position == sentence_length[words.owner] - 1
        variant = np.where(words.position == 0, 1, np.where(is_last, 2, 0))
        self.sent_buf, word_starts = self._gather(token_bytes, token_start, token_length,
                                                  word_id + n_vocabulary * variant)
        # byte start of each sentence, plus the end of the buffer
        self.sent_start = np.append(word_starts[words.offsets[:-1]], len(self.sent_buf))
        self.n_sent = n_sentences
        # --- phrase corpus (lowercase words only)
        phrase_word_id = rng.integers(0, n_vocabulary, self.N_PHRASE_WORDS)
        self.phr_buf, phrase_starts = self._gather(token_bytes, token_start, token_length, phrase_word_id)
        self.phr_start = np.append(phrase_starts, len(self.phr_buf))
        self.n_words = self.N_PHRASE_WORDS
        self._sent_pa = pa.py_buffer(self.sent_buf)
        self._phr_pa = pa.py_buffer(self.phr_buf)

    @staticmethod
    def _gather(token_bytes, token_start, token_length, ids):
        """The bytes of tokens ``ids`` one after the other, and the start of each in the result."""
        lengths = token_length[ids]
        out_start = np.zeros(len(ids), np.int64)
        out_start[1:] = np.cumsum(lengths)[:-1]
        total = int(lengths.sum())
        source_index = np.repeat(token_start[ids] - out_start, lengths) + np.arange(total)
        return token_bytes[source_index], out_start

    @staticmethod
    def _view(buf: np.ndarray, buf_pa: pa.Buffer, start: np.ndarray, end: np.ndarray) -> pa.Array:
        """Build string slices buf[start:end] (all longer than 12 bytes) via a string_view."""
        n = len(start)
        length = (end - start).astype(np.int64)
        assert n == 0 or length.min() > 12
        views = np.zeros((n, 4), np.int32)
        views[:, 0] = length
        prefix = buf[start[:, None] + np.arange(4)]
        views[:, 1] = np.ascontiguousarray(prefix).view(np.int32)[:, 0]
        views[:, 2] = 0
        views[:, 3] = start
        arr = pa.Array.from_buffers(pa.string_view(), n, [None, pa.py_buffer(views), buf_pa])
        return arr.cast(pa.string())

    def sentences(self, rng: np.random.Generator, n: int, lo: int, hi: int, factor: float = 1.0) -> pa.Array:
        return self.lazy_sentences(rng, n, lo, hi, factor).all()

    def lazy_sentences(self, rng: np.random.Generator, n: int, lo: int, hi: int,
                       factor: float = 1.0) -> LazyStrings:
        """:meth:`sentences`, cut out when asked for (the draws are made now)."""
        lo = max(1, int(round(lo * factor)))
        hi = max(lo, int(round(hi * factor)))
        n_sentences = rng.integers(lo, hi + 1, n)
        first = rng.integers(0, self.n_sent - hi - 1, n)
        start = self.sent_start[first]
        end = self.sent_start[first + n_sentences] - 1  # drop the trailing space
        return LazyStrings(n, lambda at: self._view(self.sent_buf, self._sent_pa, start[at], end[at]))

    def runs(self, first: np.ndarray, n_sentences: np.ndarray) -> pa.Array:
        """The texts of sentences ``first[i] .. first[i] + n_sentences[i] - 1``, one per ``i``."""
        first, n_sentences = np.asarray(first, np.int64), np.asarray(n_sentences, np.int64)
        assert len(first) == 0 or (first + n_sentences).max() <= self.n_sent
        start, end = self.sent_start[first], self.sent_start[first + n_sentences] - 1  # (no trailing space)
        return self._view(self.sent_buf, self._sent_pa, start, end)

    def long_text(self, rng: np.random.Generator, n: int, lo: int, hi: int, factor: float = 1.0) -> pa.Array:
        """Two independent slices joined by a blank line (keeps texts distinct)."""
        return self.lazy_long_text(rng, n, lo, hi, factor).all()

    def lazy_long_text(self, rng: np.random.Generator, n: int, lo: int, hi: int,
                       factor: float = 1.0) -> LazyStrings:
        first = self.lazy_sentences(rng, n, (lo + 1) // 2, (hi + 1) // 2, factor)
        second = self.lazy_sentences(rng, n, lo // 2 or 1, hi // 2 or 1, factor)
        return LazyStrings(n, lambda at: pc.binary_join_element_wise(first.at(at), second.at(at), "\n\n"))

    def phrases(self, rng: np.random.Generator, n: int, lo: int, hi: int) -> pa.Array:
        return self.lazy_phrases(rng, n, lo, hi).all()

    def lazy_phrases(self, rng: np.random.Generator, n: int, lo: int, hi: int) -> LazyStrings:
        """:meth:`phrases`, cut out when asked for (the draws are made now)."""
        n_words = rng.integers(lo, hi + 1, n)
        first = rng.integers(0, self.n_words - hi - 1, n)
        start = self.phr_start[first]
        end = self.phr_start[first + n_words] - 1
        # phrases can be shorter than 13 bytes: pad to the right by extending them a word at a time
        too_short = end - start <= 12
        while too_short.any():
            n_words = np.where(too_short, n_words + 1, n_words)
            end = self.phr_start[first + n_words] - 1
            too_short = end - start <= 12
        return LazyStrings(n, lambda at: self._view(self.phr_buf, self._phr_pa, start[at], end[at]))
