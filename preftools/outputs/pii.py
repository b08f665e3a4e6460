"""Secrets and personal data in exported text: the rule, its redaction, and the scan ``publish`` runs.

The rule is two seeds, the one list the dbt models (``pii_findings``, ``pii_summary``), the export
and the publish check read (docs/pii.md):

- ``seeds/pii_patterns.csv``: ``kind, category, pattern, replacement``, one row per kind; category
  ``secret`` (keys and tokens) or ``personal`` (``email``, ``ip_address``). The patterns are valid
  in RE2, Java and Python; Python compiles them with ``re.ASCII`` so that ``\\b`` and ``\\d`` are
  ASCII, as in RE2.
- ``seeds/pii_reserved_networks.csv``: ``network, description``, the IPv4 networks whose addresses
  are not personal data. An ``ip_address`` match is personal data only when every octet is at most
  255 and the address is in none of them (a public address).

A finding is one match, scanning left to right without overlaps. :func:`redact_text` replaces the
secrets kind by kind in the seed's order, then (asked for) the emails, then the public IP addresses;
an IP match that is not public stays as it is. :func:`redact_table` does the same to every string of
an Arrow table, nested lists and structs included, in Python only for the rows one vectorised RE2
test (the union of the patterns) picks. :func:`scan_parquet` and :func:`scan_text` count the secret
matches of a file about to be published.
"""

from __future__ import annotations

import csv
import functools
import ipaddress
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from preftools.cli import PROJECT_ROOT

PATTERNS_FILE = PROJECT_ROOT / "seeds" / "pii_patterns.csv"
NETWORKS_FILE = PROJECT_ROOT / "seeds" / "pii_reserved_networks.csv"
SECRET, PERSONAL = "secret", "personal"
IP_KIND = "ip_address"  # the kind whose matches count only when the address is public


class RuleError(Exception):
    """A seed of the rule that cannot be used: one line naming the file, the column and the fix."""


@dataclass(frozen=True)
class Pattern:
    kind: str
    category: str  # SECRET or PERSONAL
    pattern: str  # as in the seed: RE2, Java and Python
    replacement: str
    regex: re.Pattern


@dataclass(frozen=True)
class Rule:
    patterns: tuple[Pattern, ...]  # in the seed's order
    reserved: tuple[ipaddress.IPv4Network, ...]

    @property
    def kinds(self) -> list[str]:
        return [p.kind for p in self.patterns]

    def applied(self, secrets: bool = True, personal: bool = False) -> list[Pattern]:
        """The patterns a redaction applies, in its order: the secrets, then the personal kinds."""
        return ([p for p in self.patterns if secrets and p.category == SECRET]
                + [p for p in self.patterns if personal and p.category == PERSONAL])

    def union(self, secrets: bool = True, personal: bool = False) -> str:
        """One pattern (RE2 and Python) matching where any of the applied ones does."""
        return "|".join(f"(?:{p.pattern})" for p in self.applied(secrets, personal))

    def is_public_ip(self, text: str) -> bool:
        """An ``ip_address`` match as personal data: every octet at most 255 (leading zeros
        allowed: the octets' values count) and in none of the reserved networks."""
        octets = [int(part) for part in text.split(".")]
        if len(octets) != 4 or any(o > 255 for o in octets):
            return False
        address = ipaddress.IPv4Address(bytes(octets))
        return not any(address in network for network in self.reserved)

    def record(self) -> list[dict]:
        """The patterns as manifest.json lists them."""
        return [{"kind": p.kind, "category": p.category, "pattern": p.pattern, "replacement": p.replacement}
                for p in self.patterns]


def _read_csv(path: Path, columns: tuple[str, ...]) -> list[dict]:
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            missing = [c for c in columns if c not in (reader.fieldnames or [])]
            if missing:
                raise RuleError(f"{path} has no column {missing[0]}: its header must be {','.join(columns)}; fix the seed")
            return [{c: (row[c] or "") for c in columns} for row in reader]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise RuleError(f"cannot read {path}: {exc}; restore the seed from the project") from None


def _check_re2(pattern: str) -> str | None:
    """RE2's complaint about ``pattern`` (pyarrow's regex engine), or None."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        pc.match_substring_regex(pa.array([""]), pattern)
    except pa.ArrowInvalid as exc:
        return str(exc)
    return None


@functools.cache
def load_rule(patterns_file: Path = PATTERNS_FILE, networks_file: Path = NETWORKS_FILE) -> Rule:
    """The rule from its two seeds; RuleError on a row that cannot be used."""
    patterns = []
    for n, row in enumerate(_read_csv(patterns_file, ("kind", "category", "pattern", "replacement")), start=2):
        where = f"{patterns_file} line {n}"
        if not row["kind"] or row["kind"] in {p.kind for p in patterns}:
            raise RuleError(f"{where}, column kind: {row['kind']!r} is empty or repeated; give each kind one row")
        if row["category"] not in (SECRET, PERSONAL):
            raise RuleError(f"{where}, column category: {row['category']!r} is neither {SECRET} nor {PERSONAL}; fix the seed")
        try:
            regex = re.compile(row["pattern"], re.ASCII)
        except re.error as exc:
            raise RuleError(f"{where}, column pattern: not a Python regular expression ({exc}); fix the pattern") from None
        problem = _check_re2(row["pattern"])
        if problem:
            raise RuleError(f"{where}, column pattern: not an RE2 regular expression ({problem}); fix the pattern")
        if not row["replacement"]:
            raise RuleError(f"{where}, column replacement: empty; give the text that replaces a match, e.g. [REDACTED]")
        patterns.append(Pattern(row["kind"], row["category"], row["pattern"], row["replacement"], regex))
    if not patterns:
        raise RuleError(f"{patterns_file} has no rows; restore the seed from the project")
    for p in patterns:
        matched = [q.kind for q in patterns if q.regex.search(p.replacement)]
        if matched:
            raise RuleError(f"{patterns_file}, column replacement: {p.replacement!r} (kind {p.kind}) matches the "
                            f"pattern of {matched[0]}, so it would be redacted again; change the replacement")
    reserved = []
    for n, row in enumerate(_read_csv(networks_file, ("network", "description")), start=2):
        try:
            reserved.append(ipaddress.IPv4Network(row["network"]))
        except ValueError as exc:
            raise RuleError(f"{networks_file} line {n}, column network: {exc}; give an IPv4 network as a.b.c.d/n") from None
    return Rule(tuple(patterns), tuple(reserved))


# --------------------------------------------------------------------------------------------
# text


def redact_text(text: str, personal: bool = False, *, secrets: bool = True, rule: Rule | None = None) -> tuple[str, Counter]:
    """``text`` with every secret (and, with ``personal``, every email and public IP address)
    replaced by its kind's replacement, and the replacements made per kind.

    A replacement can make a new match (a key glued after another one starts at a word boundary
    once that one is replaced), so the passes repeat until one replaces nothing."""
    rule = rule or load_rule()
    counts: Counter = Counter()
    for _ in range(len(text) + 1):  # a bound, should a seed's replacements keep making matches
        before = text
        for p in rule.applied(secrets, personal):
            def replace(match: re.Match, p: Pattern = p) -> str:
                if p.kind == IP_KIND and not rule.is_public_ip(match.group(0)):
                    return match.group(0)  # not personal data: stays
                counts[p.kind] += 1
                return p.replacement
            text = p.regex.sub(replace, text)
        if text == before:
            break
    return text, +counts


def scan_text(text: str, rule: Rule | None = None) -> int:
    """The secret matches in ``text`` (the union of the secret patterns, left to right)."""
    rule = rule or load_rule()
    return len(re.findall(rule.union(secrets=True), text, re.ASCII))


# --------------------------------------------------------------------------------------------
# Arrow


def _is_string(t) -> bool:
    import pyarrow as pa

    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def map_strings(array, fn: Callable):
    """``array`` with each string array inside it (itself, or nested in lists, maps and structs)
    replaced by ``fn(strings)``; the same object where ``fn`` returned its argument everywhere."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = array.type
    if _is_string(t):
        return fn(array)

    def nulls():
        return array.is_null() if array.null_count else None

    if pa.types.is_struct(t):
        children = [array.field(i) for i in range(t.num_fields)]  # already cut to the struct's slice
        new = [map_strings(c, fn) for c in children]
        if all(a is b for a, b in zip(new, children)):
            return array
        return pa.StructArray.from_arrays(new, fields=list(t), mask=nulls())
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
        # only the part of the child the (maybe sliced) array uses, re-based to offset 0
        offsets = array.offsets
        first = offsets[0].as_py()
        values = array.values.slice(first, offsets[-1].as_py() - first)
        new = map_strings(values, fn)
        if new is values:
            return array
        offsets = pc.subtract(offsets, pa.scalar(first, offsets.type))
        if pa.types.is_map(t):
            return pa.MapArray.from_arrays(offsets, new.field(0), new.field(1), type=t, mask=nulls())
        return type(array).from_arrays(offsets, new, type=t, mask=nulls())
    if pa.types.is_fixed_size_list(t):
        values = array.values.slice(array.offset * t.list_size, len(array) * t.list_size)
        new = map_strings(values, fn)
        return array if new is values else pa.FixedSizeListArray.from_arrays(new, type=t, mask=nulls())
    if pa.types.is_dictionary(t):  # a DuckDB ENUM: its values are the strings
        values = array.dictionary
        new = map_strings(values, fn)
        return array if new is values else pa.DictionaryArray.from_arrays(array.indices, new, ordered=t.ordered)
    return array


def redact_table(table, personal: bool = False, *, secrets: bool = True, rule: Rule | None = None):
    """``table`` (pyarrow) with :func:`redact_text` applied to every string, nested ones included,
    and the replacements made per (column, kind). The same schema and chunking; a column without
    a match is the same array. Python runs only on the strings the union of the applied patterns
    (RE2, vectorised) matches."""
    import pyarrow as pa
    import pyarrow.compute as pc

    rule = rule or load_rule()
    union = rule.union(secrets, personal)
    counts: Counter = Counter()
    if not union:
        return table, counts

    def redact(strings, column: str):
        mask = pc.match_substring_regex(strings, union)
        if not pc.any(mask).as_py():
            return strings
        mask = mask.fill_null(False)
        new = []
        for text in strings.filter(mask).to_pylist():
            text, found = redact_text(text, personal, secrets=secrets, rule=rule)
            new.append(text)
            counts.update({(column, kind): n for kind, n in found.items()})
        return pc.replace_with_mask(strings, mask, pa.array(new, type=strings.type))

    columns = []
    for name, column in zip(table.column_names, table.columns):
        chunks = [map_strings(chunk, lambda s, name=name: redact(s, name)) for chunk in column.chunks]
        columns.append(pa.chunked_array(chunks, type=column.type))
    return pa.Table.from_arrays(columns, schema=table.schema), counts


def scan_parquet(path: Path | str, rule: Rule | None = None) -> dict[str, int]:
    """Column -> secret matches (the union of the secret patterns, left to right) in a Parquet
    file, every string of every column included (nested in lists, maps and structs); only the
    columns with a match, in the file's column order. Read one row group at a time."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    rule = rule or load_rule()
    union = rule.union(secrets=True)
    counts: Counter = Counter()
    pf = pq.ParquetFile(path)
    names = [f.name for f in pf.schema_arrow if _has_strings(f.type)]
    if not names:
        return {}

    def count(strings, column: str):
        counts[column] += pc.sum(pc.count_substring_regex(strings, union)).as_py() or 0
        return strings

    for group in range(pf.num_row_groups):
        table = pf.read_row_group(group, columns=names)
        for name, column in zip(table.column_names, table.columns):
            for chunk in column.chunks:
                map_strings(chunk, lambda s, name=name: count(s, name))
    return {name: counts[name] for name in names if counts[name]}


def _has_strings(t) -> bool:
    import pyarrow as pa

    if _is_string(t):
        return True
    if pa.types.is_dictionary(t):
        return _has_strings(t.value_type)
    return any(_has_strings(t.field(i).type) for i in range(t.num_fields))
