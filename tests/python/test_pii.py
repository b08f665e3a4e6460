"""The PII scan against an independent Python reference written from the rule
(tests/python/pii_reference.py): pii_findings and pii_summary row for row, the flag
`contains_secret` (and, with the var `pii_flag_personal: true`, `contains_personal_data`) in
preference_pairs and out of every training split, training table filter and the mixture, the view
audits.pii_findings, and the generator's planted cases (manifest `pii`).

The reference itself is checked first, on small hand-made texts whose findings are written out by
hand. The tests that run dbt have `warehouse` in their names, so that `-k "not warehouse"` runs the
pure-Python ones only: those on the session build (the `warehouse` fixture: generated data with
the example registry, default settings), on a copy of it whose scan input is the hand-made texts
(`hand_warehouse`: the SQL on the same edge cases as the reference) and on a copy built again with
`pii_flag_personal: true` (`personal_warehouse`: one rebuild of preference_pairs and everything
downstream).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter

import pii_reference as ref
import pytest
from conftest import Warehouse, copy_warehouse, run_dbt

BUILTIN = ("ultrafeedback", "code_ultrafeedback", "rever")

# One value of each kind, each exactly at its pattern's length where the pattern fixes one.
AWS = "AKIAIOSFODNN7EXAMPLE"  # AKIA + 16 upper-case letters and digits
AWS_SESSION = "ASIAY34FZKBOKMUTVV7A"
GITHUB = "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"  # ghp_ + 36
OPENAI = "sk-abcdefghijklmnopqrstuvwxyzABCDEF"  # sk- + 32, the fewest
OPENAI_PROJECT = "sk-proj-0123456789abcdefghijABCDEFGHIJ0123456789"  # sk-proj- + 40
HUGGINGFACE = "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"  # hf_ + 34 letters
SLACK = "xoxb-1234567890"  # xoxb- + 10, the fewest
GOOGLE = "AIzaSyA1b2C3d4E5f6G7h8I9j0K_L-mNoPqRsTu"  # AIza + 35
PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----"
EMAIL = "jane.doe+news@mail.example.org"
IP = "8.8.4.4"


def md5(value: str) -> str:
    return hashlib.md5(value.encode("utf-8")).hexdigest()


def user(*contents: str) -> list[dict]:
    return [{"role": "user", "content": c} for c in contents]


def assistant(*contents: str) -> list[dict]:
    return [{"role": "assistant", "content": c} for c in contents]


def row(pair_id: str, prompt: str | list = "", chosen: str | list = "", rejected: str | list = "",
        dataset: str = "d") -> dict:
    """A preference_pairs row; a text is one message, a list the messages."""
    def messages(x, make):
        return x if isinstance(x, list) else make(x)
    return {"dataset": dataset, "pair_id": pair_id, "prompt": messages(prompt, user),
            "chosen": messages(chosen, assistant), "rejected": messages(rejected, assistant)}


def found(text: str) -> dict[str, list[str]]:
    """kind -> its findings in ``text`` (the kinds with some)."""
    return {kind: values for kind in ref.KINDS if (values := ref.matches(kind, text))}


# ============================================================================ the reference, by hand

# (text, kind -> its findings in the text), each written out by hand; the reference is held to
# these below, and the SQL to the reference on the same texts (test_warehouse_hand_made_texts_...).
EACH_KIND = [
    (f"mail {EMAIL}, host {IP}; keys {AWS} {AWS_SESSION} {GITHUB} {OPENAI} {OPENAI_PROJECT} "
     f"{HUGGINGFACE} {SLACK} {GOOGLE}\n{PRIVATE_KEY}\nb3BlbnNzaC1rZXktdjEAAAAA",
     {"email": [EMAIL], "ip_address": [IP], "aws_access_key_id": [AWS, AWS_SESSION], "github_token": [GITHUB],
      "openai_api_key": [OPENAI, OPENAI_PROJECT], "huggingface_token": [HUGGINGFACE], "slack_token": [SLACK],
      "google_api_key": [GOOGLE], "private_key": [PRIVATE_KEY]}),
    *[(f"x{header}x", {"private_key": [header]}) for header in (
        "-----BEGIN PRIVATE KEY-----", "-----BEGIN RSA PRIVATE KEY-----", "-----BEGIN EC PRIVATE KEY-----",
        "-----BEGIN DSA PRIVATE KEY-----", "-----BEGIN PGP PRIVATE KEY-----", "-----BEGIN ENCRYPTED PRIVATE KEY-----")],
    *[(token + GITHUB[4:], {"github_token": [token + GITHUB[4:]]}) for token in ("gho_", "ghu_", "ghs_", "ghr_")],
    *[(token + "12-34-5678", {"slack_token": [token + "12-34-5678"]}) for token in ("xoxa-", "xoxp-", "xoxr-", "xoxs-")],
]
# each in "see <it> here": no finding of any kind
NEAR_MISSES = [
    AWS[:-1], AWS + "X", "AKIA" + "iosfodnn7example",  # a character short, one too many, lower case
    GITHUB[:-1], GITHUB + "x", "ghx_" + GITHUB[4:],
    "sk-" + "a" * 31, "sk-learn", "sk-proj-" + "a" * 31,
    HUGGINGFACE[:-1], HUGGINGFACE + "x", "hf_" + "a" * 33 + "1",  # hf_ takes letters only
    "xoxb-123456789", "xoxz-1234567890",
    GOOGLE[:-1],
    "-----BEGIN PUBLIC KEY-----", "-----BEGIN CERTIFICATE-----", "-----BEGIN  RSA PRIVATE KEY-----",
    "-----BEGIN RSA PRIVATE KEY----",
    "user@localhost", "user@host.c", "user@mail.c0m", "@example.org", "user at example.org",
    "10.1.2.3", "192.168.0.1", "172.16.0.1", "172.31.255.255", "127.0.0.1", "0.1.2.3", "169.254.10.1",
    "100.64.0.1", "100.127.255.255", "192.0.0.8", "198.18.0.1", "198.19.255.255",
    "192.0.2.1", "198.51.100.7", "203.0.113.9",  # documentation
    "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",  # multicast and reserved
    "256.1.1.1", "1.2.3.256", "999.1.1.1", "1.2.3", "1.2.3.4567", "v1.2.3.4", "1.2.3.4a",
]
# the first and last addresses just outside the reserved networks: public
PUBLIC_EDGES = [
    "1.0.0.0", "9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "126.255.255.255", "128.0.0.0",
    "169.253.255.255", "172.15.255.255", "172.32.0.0", "192.0.1.255", "192.0.3.0", "192.167.255.255",
    "192.169.0.0", "198.17.255.255", "198.20.0.0", "198.51.99.255", "203.0.114.0", "223.255.255.255",
]
LONGER = [
    # google_api_key and openai_api_key do not end on \b: a longer run gives its prefix / all of it
    (GOOGLE + "x", {"google_api_key": [GOOGLE]}),
    (OPENAI + "0123456789", {"openai_api_key": [OPENAI + "0123456789"]}),
    # sk-proj- followed by fewer than 32: sk- then "proj" stops at the "-"
    ("sk-proj-" + "a" * 31, {}),
    # slack takes dashes: the run goes on to the first other character
    ("xoxp-12-34-56-78.rest", {"slack_token": ["xoxp-12-34-56-78"]}),
]
OVERLAPS = [
    # 1.2.3.4 is taken, the scan goes on at ".5.6.7.8": two findings
    ("1.2.3.4.5.6.7.8", {"ip_address": ["1.2.3.4", "5.6.7.8"]}),
    # the first match is private and left out, but its text is taken all the same
    ("10.2.3.4.5.6.7.8", {"ip_address": ["5.6.7.8"]}),
    # the first email ends at the second @: the rest has no local part before its @
    ("a@b.cc@d.ee", {"email": ["a@b.cc"]}),
    ("a@b.co,c@d.io", {"email": ["a@b.co", "c@d.io"]}),
    # nothing anchors the end: a domain's first dot and two letters make the match
    ("user@mail.example.c0m", {"email": ["user@mail.example"]}),
    # two keys run together: no boundary between them, neither is found; a space apart, both
    (AWS + AWS, {}),
    (AWS + " " + AWS, {"aws_access_key_id": [AWS, AWS]}),
    # an address in the domain of an email is its own kind's finding too: each kind scans alone
    ("root@8.8.8.8.example.com", {"email": ["root@8.8.8.8.example.com"], "ip_address": ["8.8.8.8"]}),
]
LEADING_ZEROS = [
    # "008" is 8: a public address, the value as written; "010" is 10 (not octal 8): private
    ("ping 008.008.008.008", {"ip_address": ["008.008.008.008"]}),
    ("ping 010.0.0.1", {}),
    ("ping 192.168.001.001", {}),
    ("ping 1.2.3.0255", {}),  # four digits: no match at all
]
ARABIC = "\u0661\u0662\u0663.\u0664\u0665.\u0666\u0667.\u0668\u0669"  # 123.45.67.89 in Arabic-Indic digits
ASCII = [
    (f"clé{AWS}", {"aws_access_key_id": [AWS]}),
    (f"{AWS}é", {"aws_access_key_id": [AWS]}),
    (f"ü{HUGGINGFACE}", {"huggingface_token": [HUGGINGFACE]}),
    (ARABIC, {}),
    (f"ip {ARABIC} or 123.45.67.89", {"ip_address": ["123.45.67.89"]}),
]
HAND_TEXTS = [*EACH_KIND, *[(f"see {miss} here", {}) for miss in NEAR_MISSES],
              *[(ip, {"ip_address": [ip]}) for ip in PUBLIC_EDGES], *LONGER, *OVERLAPS, *LEADING_ZEROS, *ASCII]

# a pair whose turns would run into findings if they were not joined with "\n"
JOINED = row("joined", [{"role": "system", "content": "Reply to ops@example.com"},
                        {"role": "user", "content": "Mail user@example"},
                        {"role": "assistant", "content": ".com is it?"}, {"role": "user", "content": AWS}],
             [{"role": "assistant", "content": "call 8.8.8."}, {"role": "assistant", "content": "8"}], [])
# a pair repeating values within a text and across sides
REPEATED = row("repeated", f"{EMAIL} {EMAIL} {EMAIL}", f"write to {EMAIL}", f"or {IP}, {IP} or 8.8.8.8")


def check(cases: list[tuple[str, dict]]) -> None:
    wrong = [(text, found(text), want) for text, want in cases if found(text) != want]
    assert not wrong, wrong


def test_the_hand_values_have_the_lengths_the_patterns_ask():
    assert [len(v) for v in (AWS, AWS_SESSION, GITHUB, OPENAI, OPENAI_PROJECT, HUGGINGFACE, SLACK, GOOGLE)] == [
        4 + 16, 4 + 16, 4 + 36, 3 + 32, 8 + 40, 3 + 34, 5 + 10, 4 + 35]


def test_each_kind_is_found_with_its_category():
    check(EACH_KIND)
    assert ref.CATEGORY == {"email": "personal", "ip_address": "personal", "aws_access_key_id": "secret",
                            "github_token": "secret", "openai_api_key": "secret", "huggingface_token": "secret",
                            "slack_token": "secret", "google_api_key": "secret", "private_key": "secret"}


def test_a_finding_row_has_the_md5_the_mask_and_the_count():
    assert ref.pair_findings(row("p1", f"my key is {AWS}, again: {AWS}", "", "")) == [{
        "dataset": "d", "pair_id": "p1", "side": "prompt", "kind": "aws_access_key_id",
        "value_md5": hashlib.md5(b"AKIAIOSFODNN7EXAMPLE").hexdigest(), "n_occurrences": 2,
        "value_masked": "AKIA\u2026", "category": "secret"}]
    assert ref.pair_findings(row("p1")) == []


def test_near_misses_are_not_findings():
    check([(f"see {miss} here", {}) for miss in NEAR_MISSES])


def test_the_edges_of_the_ranges_are_public():
    check([(ip, {"ip_address": [ip]}) for ip in PUBLIC_EDGES])


def test_a_key_longer_than_the_pattern_is_found_only_without_a_closing_boundary():
    check(LONGER)


def test_matches_do_not_overlap_and_run_left_to_right():
    check(OVERLAPS)


def test_repeated_values_count_their_occurrences_per_side():
    got = [(f["side"], f["kind"], f["value_masked"], f["n_occurrences"]) for f in ref.pair_findings(REPEATED)]
    assert sorted(got) == [("chosen", "email", "jane\u2026", 1), ("prompt", "email", "jane\u2026", 3),
                           ("rejected", "ip_address", "8.8.\u2026", 1), ("rejected", "ip_address", "8.8.\u2026", 2)]
    by_md5 = {f["value_md5"]: f["n_occurrences"] for f in ref.pair_findings(REPEATED) if f["side"] == "rejected"}
    assert by_md5 == {md5(IP): 2, md5("8.8.8.8"): 1}


def test_leading_zeros_are_decimal_and_the_value_is_the_text_as_written():
    check(LEADING_ZEROS)
    assert ref.pair_findings(row("p", "008.008.008.008"))[0]["value_md5"] == md5("008.008.008.008")


def test_boundaries_and_digits_are_ascii():
    """`\\b` and `\\d` as RE2 has them (DuckDB): an accented letter is not a word character, so a
    key right after or before one is found; Arabic-Indic digits are not digits, so they make no
    address. Python's Unicode default would decide both the other way."""
    check(ASCII)
    assert re.findall(ref.KINDS["aws_access_key_id"][1], f"clé{AWS}") == []
    assert re.findall(ref.KINDS["ip_address"][1], ARABIC) == [ARABIC]


def test_texts_join_every_turn_with_a_newline():
    assert ref.texts(JOINED) == {"prompt": f"Reply to ops@example.com\nMail user@example\n.com is it?\n{AWS}",
                                 "chosen": "call 8.8.8.\n8", "rejected": ""}
    # every role counts (the system turn's address); the turns do not run into each other
    # ("user@example" + ".com" would be an address, "8.8.8." + "8" one too)
    got = {(f["side"], f["kind"], f["value_md5"]) for f in ref.pair_findings(JOINED)}
    assert got == {("prompt", "email", md5("ops@example.com")), ("prompt", "aws_access_key_id", md5(AWS))}


def test_secrets_flag_personal_data_only_with_the_var():
    pairs = [row("secret", GITHUB), row("personal", "", EMAIL), row("both", IP, "", PRIVATE_KEY), row("clean", "hi")]
    findings = ref.expected_findings(pairs)
    ids = [p["pair_id"] for p in pairs]
    assert ref.flags(findings, ids) == {"secret": {"contains_secret"}, "personal": set(),
                                        "both": {"contains_secret"}, "clean": set()}
    assert ref.flags(findings, ids, flag_personal=True) == {
        "secret": {"contains_secret"}, "personal": {"contains_personal_data"},
        "both": {"contains_secret", "contains_personal_data"}, "clean": set()}
    assert ref.pair_flags(pairs[2]) == {"contains_secret"}
    assert ref.pair_flags(pairs[2], flag_personal=True) == {"contains_secret", "contains_personal_data"}


def test_summary_has_every_dataset_and_kind_zeros_included():
    pairs = [row("a1", f"{EMAIL} {EMAIL}", f"{EMAIL} 1.1.1.1", "", dataset="a"),
             row("a2", "", "", f"{EMAIL} {AWS}", dataset="a"),
             row("b1", GITHUB, GITHUB, "", dataset="b")]
    findings = ref.expected_findings(pairs)
    ids = [p["pair_id"] for p in pairs]
    got = ref.summary(findings, ref.flags(findings, ids), ["a", "b", "c"])
    assert len(got) == 3 * 9
    nonzero = {(r["dataset"], r["kind"]): (r["category"], r["n_findings"], r["n_pairs"], r["n_pairs_flagged"])
               for r in got if r["n_findings"]}
    assert nonzero == {("a", "email"): ("personal", 4, 2, 0), ("a", "ip_address"): ("personal", 1, 1, 0),
                       ("a", "aws_access_key_id"): ("secret", 1, 1, 1), ("b", "github_token"): ("secret", 2, 1, 1)}
    assert all(r["n_pairs"] == r["n_pairs_flagged"] == 0 for r in got if not r["n_findings"])
    assert {r["category"] for r in got if r["kind"] == "private_key"} == {"secret"}
    personal = ref.summary(findings, ref.flags(findings, ids, flag_personal=True), ["a", "b", "c"])
    assert [(r["kind"], r["n_pairs_flagged"]) for r in personal if r["dataset"] == "a" and r["n_findings"]] == [
        ("aws_access_key_id", 1), ("email", 2), ("ip_address", 1)]


# ============================================================================ the warehouse

def _diff(got: list[dict], want: list[dict], key: tuple, columns: tuple, limit: int = 20) -> list[str]:
    """Lines naming each key missing, unexpected or differing in a column (exact comparison)."""
    g = {tuple(r[k] for k in key): r for r in got}
    w = {tuple(r[k] for k in key): r for r in want}
    assert len(g) == len(got), "repeated keys in the warehouse"
    out = [f"missing {k}: want { {c: w[k][c] for c in columns if c not in key} }"
           for k in sorted(w.keys() - g.keys(), key=str)]
    out += [f"unexpected {k}: { {c: g[k][c] for c in columns if c not in key} }"
            for k in sorted(g.keys() - w.keys(), key=str)]
    for k in sorted(g.keys() & w.keys(), key=str):
        out += [f"{k} {c}: got {g[k][c]!r}, want {w[k][c]!r}" for c in columns if g[k][c] != w[k][c]]
    return out[:limit] + ([f"... {len(out) - limit} more"] if len(out) > limit else [])


def build_datasets(wh: Warehouse) -> list[str]:
    """The datasets of a build: the built-in groups it enabled, then its registry's entries."""
    enabled = set(wh.scalar("select datasets from meta.warehouse_build_info").split(","))
    entries = [r["dataset"] for r in wh.rows("select dataset from meta.extra_datasets order by registry_order")]
    return [d for d in BUILTIN if d in enabled] + entries


PAIR_COLUMNS = "dataset, pair_id, prompt, chosen, rejected, split, integrity_flags, is_flagged"


@pytest.fixture(scope="module")
def pairs(warehouse: Warehouse) -> list[dict]:
    return warehouse.rows(f"select {PAIR_COLUMNS} from main.preference_pairs")


@pytest.fixture(scope="module")
def findings(pairs) -> list[dict]:
    return ref.expected_findings(pairs)


@pytest.fixture(scope="module")
def reference_flags(pairs, findings) -> dict[str, set[str]]:
    return ref.flags(findings, [p["pair_id"] for p in pairs])


def flagged_by_reference(flags: dict[str, set[str]], flag: str) -> set[str]:
    return {pid for pid, f in flags.items() if flag in f}


@pytest.mark.slow
def test_warehouse_reference_is_not_vacuous(findings, pairs):
    """The generated data has a finding of every kind, findings on every side."""
    kinds = Counter(f["kind"] for f in findings)
    assert set(kinds) == set(ref.KINDS), kinds
    assert {f["side"] for f in findings} == set(ref.SIDES)


@pytest.mark.slow
def test_warehouse_pii_findings_equal_the_reference(warehouse, findings):
    got = warehouse.rows(f"select {', '.join(ref.FINDING_COLUMNS)} from main.pii_findings")
    diffs = _diff(got, findings, ref.FINDING_KEY, ref.FINDING_COLUMNS)
    assert not diffs, f"{len(got)} rows, {len(findings)} expected:\n" + "\n".join(diffs)


@pytest.mark.slow
def test_warehouse_pii_summary_equals_the_reference(warehouse, findings, reference_flags):
    datasets = build_datasets(warehouse)
    got = warehouse.rows(f"select {', '.join(ref.SUMMARY_COLUMNS)} from main.pii_summary")
    want = ref.summary(findings, reference_flags, datasets)
    assert len(want) == len(datasets) * len(ref.KINDS)
    diffs = _diff(got, want, ref.SUMMARY_KEY, ref.SUMMARY_COLUMNS, limit=40)
    assert not diffs, "\n".join(diffs)


# (dataset, its training table, the key preference_pairs' pair_id is md5('<dataset>:' || key) of,
# "is a pair" (the rows that are preference_pairs' pairs), the documented training filter: docs/training.md)
TRAINING_TABLES = [
    ("ultrafeedback", "ultrafeedback_curated", "prompt_id", "has_pair", "has_pair and not is_flagged"),
    ("code_ultrafeedback", "code_ultrafeedback_pairs", "pair_id", "true", "not is_flagged"),
    ("rever", "rever_pairs", "id", "kept", "kept and not is_flagged"),
]


def check_flag(wh: Warehouse, pairs: list[dict], want: set[str], flag: str) -> None:
    """``flag`` is on exactly the pairs ``want`` in preference_pairs; each of them is flagged, in
    its dataset's _flagged split, carries the flag in its dataset's training table and is left out
    by that table's training filter, and is not in training_mixture."""
    wrong = []
    for p in pairs:
        flags = list(p["integrity_flags"] or [])
        assert flags == sorted(flags), (p["pair_id"], flags)
        if (flag in flags) != (p["pair_id"] in want):
            wrong.append(f"{p['dataset']} {p['pair_id']}: {flag} {flag in flags}, want {p['pair_id'] in want}; "
                         f"{[(f['side'], f['kind'], f['value_masked']) for f in ref.pair_findings(p)]}")
        elif p["pair_id"] in want:
            assert p["is_flagged"] and p["split"] == p["dataset"] + "_flagged", (p["dataset"], p["pair_id"], p["split"])
    assert not wrong, f"{len(wrong)} pairs:\n" + "\n".join(wrong[:20])
    reached = 0
    for dataset, table, key, is_pair, train_filter in TRAINING_TABLES:
        of_dataset = {p["pair_id"] for p in pairs if p["dataset"] == dataset} & want
        if not of_dataset:
            continue
        rows = wh.rows(f"select {key} as key, ({is_pair}) as is_pair, ({train_filter}) as in_training,"
                       f" integrity_flags, is_flagged from main.{table}")
        by_pair = {md5(f"{dataset}:{r['key']}"): r for r in rows if r["is_pair"]}
        for pid in of_dataset:
            r = by_pair[pid]
            assert flag in (r["integrity_flags"] or []) and r["is_flagged"] and not r["in_training"], (table, pid)
            reached += 1
    assert reached, f"no pair flagged {flag} in a built-in training table"
    mixture = {r["pair_id"] for r in wh.rows("select pair_id from main.training_mixture")}
    assert mixture, "training_mixture is empty"
    assert not mixture & want, sorted(mixture & want)[:10]


@pytest.mark.slow
def test_warehouse_contains_secret_is_on_the_pairs_with_a_secret(warehouse, pairs, reference_flags):
    """contains_secret on exactly the pairs with a secret finding, out of every training split,
    filter and the mixture; no pair contains_personal_data without the var."""
    secret = flagged_by_reference(reference_flags, "contains_secret")
    check_flag(warehouse, pairs, secret, "contains_secret")
    assert not [p["pair_id"] for p in pairs if "contains_personal_data" in (p["integrity_flags"] or [])]


@pytest.mark.slow
def test_warehouse_audit_view_has_each_finding_with_its_texts(warehouse, pairs, findings):
    """audits.pii_findings: one row per finding, with the pair's integrity_flags, prompt, chosen
    and rejected."""
    columns = [r["column_name"] for r in warehouse.rows(
        "select column_name from information_schema.columns where table_schema = 'audits' and table_name = 'pii_findings'"
        " order by ordinal_position")]
    assert {*ref.FINDING_KEY, "integrity_flags", *ref.SIDES} <= set(columns), columns
    got = warehouse.rows(f"select {', '.join(ref.FINDING_KEY)}, integrity_flags, prompt, chosen, rejected"
                         " from audits.pii_findings")
    keys = Counter(tuple(r[k] for k in ref.FINDING_KEY) for r in got)
    assert max(keys.values()) == 1, keys.most_common(3)
    assert set(keys) == {tuple(f[k] for k in ref.FINDING_KEY) for f in findings}
    by_id = {p["pair_id"]: p for p in pairs}
    for r in got:
        p = by_id[r["pair_id"]]
        assert all(r[c] == p[c] for c in ("integrity_flags", *ref.SIDES)), r["pair_id"]


# ============================================================================ the hand-made texts through the SQL

HAND_DATASET = "ultrafeedback"


def hand_pairs() -> list[dict]:
    """The hand-made texts above as pairs of one dataset of the build: each text as a prompt, and
    the pairs JOINED and REPEATED."""
    pairs = [row(f"hand-{i:03d}", text, dataset=HAND_DATASET) for i, (text, _) in enumerate(HAND_TEXTS)]
    return [*pairs, *({**p, "dataset": HAND_DATASET} for p in (JOINED, REPEATED))]


@pytest.fixture(scope="module")
def hand_warehouse(warehouse, tmp_path_factory) -> Warehouse:
    """A copy of the session build whose unioned pairs (the scan's input) are the hand-made pairs
    only, with int_pii__findings and pii_findings built again on them (not reused: their inputs'
    record does not see the view replaced)."""
    import duckdb
    import pyarrow as pa

    folder = tmp_path_factory.mktemp("pii_hand")
    db = copy_warehouse(warehouse, folder / "warehouse.duckdb")
    messages = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
    table = pa.Table.from_pylist(hand_pairs(), schema=pa.schema([
        ("dataset", pa.string()), ("pair_id", pa.string()), ("prompt", messages), ("chosen", messages),
        ("rejected", messages)]))
    with duckdb.connect(str(db)) as con:
        con.execute("create table main.pii_hand_pairs as select * from intermediate.int_preference_pairs__unioned limit 0")
        con.register("hand", table)
        con.execute("insert into main.pii_hand_pairs by name select * from hand")
        con.execute("create or replace view intermediate.int_preference_pairs__unioned as select * from main.pii_hand_pairs")
    run_dbt(["run", "-s", "int_pii__findings", "pii_findings", "--vars", json.dumps({"reuse_unchanged": False})],
            warehouse.raw_dir, db, folder / "work")
    return Warehouse(db, warehouse.raw_dir, folder / "work")


@pytest.mark.slow
def test_warehouse_hand_made_texts_equal_the_reference(hand_warehouse):
    """pii_findings of the hand-made pairs (every kind, every near miss, the range edges, overlaps,
    leading zeros, ASCII boundaries and digits, joined turns, repeats) equals the reference's, row
    for row."""
    pairs = hand_pairs()
    want = ref.expected_findings(pairs)
    assert len(want) > len(HAND_TEXTS) / 2
    got = hand_warehouse.rows(f"select {', '.join(ref.FINDING_COLUMNS)} from main.pii_findings")
    g = {tuple(r[k] for k in ref.FINDING_KEY): r for r in got}
    w = {tuple(r[k] for k in ref.FINDING_KEY): r for r in want}
    assert len(g) == len(got), "repeated keys in the warehouse"
    texts = {p["pair_id"]: ref.texts(p) for p in pairs}

    def shown(r):
        return r and (r["value_masked"], r["n_occurrences"], r["category"])

    wrong = []
    for k in sorted(g.keys() | w.keys()):
        if g.get(k) != w.get(k):
            _, pid, side, kind, _ = k
            wrong.append(f"{pid} {side} {kind} in {texts[pid][side][:80]!r}: got {shown(g.get(k))}, want {shown(w.get(k))}")
    assert not wrong, f"{len(got)} rows, {len(want)} expected:\n" + "\n".join(wrong[:60])


# ============================================================================ pii_flag_personal: true

def _build_personal(warehouse: Warehouse, folder) -> Warehouse:
    db = copy_warehouse(warehouse, folder / "warehouse.duckdb")
    run_dbt(["build", "-s", "preference_pairs+", "--exclude-resource-type", "unit_test",
             "--vars", json.dumps({"pii_flag_personal": True})], warehouse.raw_dir, db, folder / "work")
    return Warehouse(db, warehouse.raw_dir, folder / "work")


@pytest.fixture(scope="module")
def personal_warehouse(warehouse, tmp_path_factory) -> Warehouse:
    """The session build with `pii_flag_personal: true`: preference_pairs and everything downstream
    built again on a copy."""
    return _build_personal(warehouse, tmp_path_factory.mktemp("pii_personal"))


@pytest.mark.slow
def test_warehouse_flag_personal_flags_the_pairs_with_personal_data(personal_warehouse, pairs, findings):
    """contains_personal_data on exactly the pairs with a personal finding, out of training;
    contains_secret as before; pii_summary counts the personal kinds' pairs as flagged."""
    wh = personal_warehouse
    after = wh.rows(f"select {PAIR_COLUMNS} from main.preference_pairs")
    assert {p["pair_id"] for p in after} == {p["pair_id"] for p in pairs}
    flags = ref.flags(findings, [p["pair_id"] for p in after], flag_personal=True)
    personal = flagged_by_reference(flags, "contains_personal_data")
    assert personal - flagged_by_reference(flags, "contains_secret"), "no pair with personal data alone"
    check_flag(wh, after, personal, "contains_personal_data")
    check_flag(wh, after, flagged_by_reference(flags, "contains_secret"), "contains_secret")
    got = wh.rows(f"select {', '.join(ref.SUMMARY_COLUMNS)} from main.pii_summary")
    want = ref.summary(findings, flags, build_datasets(wh))
    assert any(r["n_pairs_flagged"] for r in want if r["category"] == "personal")
    diffs = _diff(got, want, ref.SUMMARY_KEY, ref.SUMMARY_COLUMNS, limit=40)
    assert not diffs, "\n".join(diffs)


# ============================================================================ the planted cases

@pytest.mark.slow
def test_warehouse_planted_cases_get_their_verdict(warehouse):
    """The generator's planted cases (manifest `pii`: dataset, file, row, side, kind, value,
    variant, verdict): a case with a verdict is a finding of that kind (md5 of its value) in its
    dataset, on its side when given; a near miss (verdict null) is no finding. The reference agrees
    with each verdict on the value alone."""
    manifest = json.loads((warehouse.raw_dir / "_generator_manifest.json").read_text(encoding="utf-8"))
    if "pii" not in manifest:
        pytest.skip("the generator's manifest has no `pii` key yet")
    cases = manifest["pii"]
    assert {c["verdict"] for c in cases if c["verdict"]} == set(ref.KINDS), "a kind without a planted case"
    assert any(c["verdict"] is None for c in cases), "no planted near miss"
    found_in = {}
    for r in warehouse.rows("select dataset, side, kind, value_md5 from main.pii_findings"):
        found_in.setdefault((r["dataset"], r["value_md5"]), set()).add((r["side"], r["kind"]))
    wrong = []
    for c in cases:
        label = (f"{c['dataset']} {c['file']} row {c.get('row')} {c.get('side')} {c['kind']} {c.get('variant')} "
                 f"{c['value']!r} (verdict {c['verdict']})")
        alone = [k for k in ref.KINDS if ref.matches(k, c["value"]) == [c["value"]]]
        if alone != ([c["verdict"]] if c["verdict"] else []):
            wrong.append(f"{label}: the reference finds the value alone as {alone}")
        got = {(side, kind) for side, kind in found_in.get((c["dataset"], md5(c["value"])), set())
               if not c.get("side") or side == c["side"]}
        if c["verdict"] is None and got:
            wrong.append(f"{label}: found as {sorted(got)}")
        elif c["verdict"] is not None and c["verdict"] not in {kind for _, kind in got}:
            wrong.append(f"{label}: not found (found as {sorted(got)})")
    assert not wrong, f"{len(wrong)} of {len(cases)} cases:\n" + "\n".join(wrong[:30])
