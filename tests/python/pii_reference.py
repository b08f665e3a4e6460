"""The expected contents of the PII scan (``pii_findings``, ``pii_summary``) and its flags
(``contains_secret``, ``contains_personal_data`` in ``preference_pairs.integrity_flags``), computed
in plain Python (``re``, ``ipaddress``) from the rule restated below; never from the SQL.

The rule:

- Texts: every pair of ``preference_pairs`` has three, by ``side``: ``prompt`` (the contents of its
  turns joined with "\\n", every role), ``chosen`` and ``rejected`` (the contents of their messages
  joined with "\\n").
- Each kind's pattern is scanned over each text on its own: a finding is one non-overlapping match,
  left to right (``regexp_extract_all``). ``\\b`` and ``\\d`` are ASCII, as in RE2 (DuckDB), and
  here with ``re.ASCII`` (Python's default is Unicode): an accented letter or an Arabic-Indic digit
  is neither a word character nor a digit.
- ``ip_address`` keeps a match only when every octet (a decimal number, leading zeros allowed) is at
  most 255 and the address is public: in none of :data:`RESERVED_NETWORKS`. A match left out still
  took its text: the scan goes on after it.
- ``pii_findings``: a row per (dataset, pair_id, side, kind, value_md5), ``value_md5`` the md5 (hex)
  of the matched text in UTF-8, ``n_occurrences`` its matches in that text, ``value_masked`` its
  first 4 characters and "\u2026", ``category`` the kind's.
- Flags: ``contains_secret`` on every pair with a finding of a secret kind;
  ``contains_personal_data`` on every pair with a finding of a personal kind, only with the var
  ``pii_flag_personal: true``.
- ``pii_summary``: a row per (dataset, kind), every dataset of the build and every kind, zeros
  included: ``n_findings`` (the sum of n_occurrences), ``n_pairs`` (pairs with a finding of the kind)
  and ``n_pairs_flagged`` (those of them carrying the flag of the kind's category).

:func:`pair_findings` (one row of preference_pairs), :func:`expected_findings` (many),
:func:`flags`, :func:`summary` and :func:`warehouse_flags` (a built warehouse's pairs, for the
tests of other rules) are the entry points.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from collections import Counter, defaultdict
from collections.abc import Iterable

SIDES = ("prompt", "chosen", "rejected")
MASK = "\u2026"

# kind -> (category, pattern), the rule's order
KINDS: dict[str, tuple[str, str]] = {
    "email": ("personal", r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}"),
    "ip_address": ("personal", r"\b(?:\d{1,3}\.){3}\d{1,3}\b"),
    "aws_access_key_id": ("secret", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    "github_token": ("secret", r"\bgh[pousr]_[A-Za-z0-9]{36}\b"),
    "openai_api_key": ("secret", r"\bsk-(?:proj-)?[A-Za-z0-9]{32,}"),
    "huggingface_token": ("secret", r"\bhf_[A-Za-z]{34}\b"),
    "slack_token": ("secret", r"\bxox[baprs]-[A-Za-z0-9-]{10,}"),
    "google_api_key": ("secret", r"\bAIza[0-9A-Za-z_-]{35}"),
    "private_key": ("secret", r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY-----"),
}
CATEGORY = {kind: category for kind, (category, _) in KINDS.items()}
PATTERNS = {kind: re.compile(pattern, re.ASCII) for kind, (_, pattern) in KINDS.items()}
FLAG_OF = {"secret": "contains_secret", "personal": "contains_personal_data"}
FLAGS = tuple(FLAG_OF.values())

# not public: current network, private, shared (carrier-grade NAT), loopback, link-local, IETF
# protocol assignments, the three documentation ranges, benchmarking, multicast and reserved
RESERVED_NETWORKS = tuple(ipaddress.ip_network(n) for n in (
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
    "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24",
    "224.0.0.0/3"))

FINDING_COLUMNS = ("dataset", "pair_id", "side", "kind", "value_md5", "n_occurrences", "value_masked", "category")
FINDING_KEY = ("dataset", "pair_id", "side", "kind", "value_md5")
SUMMARY_COLUMNS = ("dataset", "kind", "category", "n_findings", "n_pairs", "n_pairs_flagged")
SUMMARY_KEY = ("dataset", "kind")


def joined(messages: Iterable[dict] | None) -> str:
    """The contents of the messages joined with "\\n", every role, in order."""
    return "\n".join(m["content"] for m in messages or [] if m.get("content") is not None)


def texts(row: dict) -> dict[str, str]:
    """side -> text of a preference_pairs row (its prompt, chosen and rejected message lists)."""
    return {side: joined(row[side]) for side in SIDES}


def is_public_ip(value: str) -> bool:
    """A dotted quad whose octets (decimal, leading zeros allowed) are each <= 255, outside every
    reserved network."""
    octets = [int(o, 10) for o in value.split(".")]
    if len(octets) != 4 or any(o > 255 for o in octets):
        return False
    address = ipaddress.IPv4Address(bytes(octets))
    return not any(address in net for net in RESERVED_NETWORKS)


def matches(kind: str, text: str | None) -> list[str]:
    """The kind's findings in one text: its pattern's non-overlapping matches, left to right (for
    ip_address those that are public addresses)."""
    found = [m.group(0) for m in PATTERNS[kind].finditer(text or "")]
    return [v for v in found if is_public_ip(v)] if kind == "ip_address" else found


def md5(value: str) -> str:
    return hashlib.md5(value.encode("utf-8")).hexdigest()


def mask(value: str) -> str:
    return value[:4] + MASK


def pair_findings(row: dict) -> list[dict]:
    """The pii_findings rows of one preference_pairs row (dataset, pair_id, prompt, chosen,
    rejected), sorted by FINDING_KEY."""
    out = []
    for side, text in texts(row).items():
        for kind in KINDS:
            for value, n in Counter(matches(kind, text)).items():
                out.append({"dataset": row["dataset"], "pair_id": row["pair_id"], "side": side, "kind": kind,
                            "value_md5": md5(value), "n_occurrences": n, "value_masked": mask(value),
                            "category": CATEGORY[kind]})
    return sort_rows(out, FINDING_KEY)


def expected_findings(rows: Iterable[dict]) -> list[dict]:
    """pii_findings for rows of preference_pairs, sorted by FINDING_KEY."""
    return sort_rows([f for r in rows for f in pair_findings(r)], FINDING_KEY)


def flags(findings: Iterable[dict], pair_ids: Iterable[str], flag_personal: bool = False) -> dict[str, set[str]]:
    """pair_id -> its PII flags (an empty set for none), for every pair of ``pair_ids``."""
    out: dict[str, set[str]] = {pid: set() for pid in pair_ids}
    for f in findings:
        if f["category"] == "secret" or flag_personal:
            out[f["pair_id"]].add(FLAG_OF[f["category"]])
    return out


def pair_flags(row: dict, flag_personal: bool = False) -> set[str]:
    """The PII flags of one preference_pairs row."""
    return flags(pair_findings(row), [row["pair_id"]], flag_personal)[row["pair_id"]]


def summary(findings: Iterable[dict], flags_of: dict[str, set[str]], datasets: Iterable[str]) -> list[dict]:
    """pii_summary: a row per (dataset, kind) for every dataset of ``datasets`` and every kind;
    ``flags_of``: pair_id -> the pair's flags (its PII flags at least)."""
    n_findings: Counter = Counter()
    pairs: dict[tuple, set] = defaultdict(set)
    for f in findings:
        n_findings[(f["dataset"], f["kind"])] += f["n_occurrences"]
        pairs[(f["dataset"], f["kind"])].add(f["pair_id"])
    out = []
    for dataset in datasets:
        for kind in KINDS:
            found = pairs[(dataset, kind)]
            flag = FLAG_OF[CATEGORY[kind]]
            out.append({"dataset": dataset, "kind": kind, "category": CATEGORY[kind],
                        "n_findings": n_findings[(dataset, kind)], "n_pairs": len(found),
                        "n_pairs_flagged": sum(flag in flags_of.get(pid, ()) for pid in found)})
    return sort_rows(out, SUMMARY_KEY)


def sort_rows(rows: list[dict], key: tuple) -> list[dict]:
    return sorted(rows, key=lambda r: tuple(r[k] for k in key))


def warehouse_flags(wh, flag_personal: bool = False) -> dict[str, set[str]]:
    """The PII flags of every pair of a built warehouse (``wh``: conftest.Warehouse), from its
    preference_pairs rows: for the tests of other flags, which take these from here."""
    rows = wh.rows("select dataset, pair_id, prompt, chosen, rejected from main.preference_pairs")
    return flags(expected_findings(rows), [r["pair_id"] for r in rows], flag_personal)
