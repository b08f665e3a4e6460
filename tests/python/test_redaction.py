"""preftools.outputs.pii on hand-made texts and tables: the rule of docs/pii.md (the seeds
pii_patterns and pii_reserved_networks), its redaction of a text and of every string of an Arrow
table (nested lists, maps and structs included), the scan publish runs, and the one-line refusal
of a seed that cannot be used.

Every expected value is written by hand from the rule: the nine kinds with their patterns, a
finding is a non-overlapping match scanned left to right, ``\\b`` and ``\\d`` are ASCII, an IP
address is personal data only when every octet is at most 255 and it is in no reserved network;
secrets are replaced kind by kind, then (asked for) emails, then public IP addresses.
"""

from __future__ import annotations

from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from preftools.outputs import pii

S, E, IP = "[REDACTED_SECRET]", "[REDACTED_EMAIL]", "[REDACTED_IP]"

AWS = "AKIAIOSFODNN7EXAMPLE"  # AKIA + 16 of [0-9A-Z]
AWS_SESSION = "ASIAY34FZKBOKMUTVV7A"
GITHUB = "ghp_0123456789abcdefghijABCDEFGHIJ012345"  # ghp_ + 36
OPENAI = "sk-abcdefghijklmnopqrstuvwxyz012345"  # sk- + 32
OPENAI_PROJECT = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef0123"  # sk-proj- + 36
HUGGINGFACE = "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"  # hf_ + 34 letters
SLACK = "xoxb-123456789012-abcdefABCDEF"
GOOGLE = "AIzaSyA-1234567890abcdefghijklmnopqrs_z"  # AIza + 35 of [0-9A-Za-z_-]
PEM = "-----BEGIN RSA PRIVATE KEY-----"


def test_the_rule_is_the_seeds():
    rule = pii.load_rule()
    assert rule.kinds == ["email", "ip_address", "aws_access_key_id", "github_token", "openai_api_key",
                          "huggingface_token", "slack_token", "google_api_key", "private_key"]
    assert {p.kind: (p.category, p.replacement) for p in rule.patterns} == {
        "email": ("personal", E), "ip_address": ("personal", IP),
        **{k: ("secret", S) for k in rule.kinds[2:]},
    }
    assert [p["kind"] for p in rule.record()] == rule.kinds


@pytest.mark.parametrize("value, kind", [
    (AWS, "aws_access_key_id"), (AWS_SESSION, "aws_access_key_id"), (GITHUB, "github_token"),
    ("gho_" + GITHUB[4:], "github_token"), (OPENAI, "openai_api_key"), (OPENAI_PROJECT, "openai_api_key"),
    (HUGGINGFACE, "huggingface_token"), (SLACK, "slack_token"), ("xoxp-0000000000", "slack_token"),
    (GOOGLE, "google_api_key"), (PEM, "private_key"), ("-----BEGIN PRIVATE KEY-----", "private_key"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----", "private_key"),
])
def test_each_secret_is_replaced(value, kind):
    text = f"key = {value}\nthen more"
    assert pii.redact_text(text) == (f"key = {S}\nthen more", Counter({kind: 1}))
    assert pii.redact_text(text, personal=True) == (f"key = {S}\nthen more", Counter({kind: 1}))
    assert pii.scan_text(text) == 1


@pytest.mark.parametrize("text", [
    AWS[:-1],                         # 15 characters after AKIA
    AWS + "X",                        # 17: no word boundary after 16
    "x" + AWS,                        # no word boundary before
    AWS.lower(),                      # lower case
    "AKIB" + AWS[4:],                 # another prefix
    "ghx_" + GITHUB[4:],              # gh + a letter not in [pousr]
    GITHUB[:-1],                      # 35 after ghp_
    GITHUB + "a",                     # 37: no word boundary after 36
    "sk-" + "a" * 31,                 # 31 after sk-
    "sk-learn is a package",          # sk- and a short word
    "hf_" + "a" * 33,                 # 33 letters
    "hf_" + "a" * 33 + "1",           # a digit among the 34
    "hf_" + "a" * 35,                 # 35 letters: no word boundary after 34
    "xoxc-1234567890",                # c is not a Slack token type
    "xoxb-123456789",                 # 9 after the dash
    "AIza" + "a" * 34,                # 34 after AIza
    "-----BEGIN PUBLIC KEY-----",     # a public key
    "-----BEGIN RSA PUBLIC KEY-----",
    "----BEGIN PRIVATE KEY-----",     # four dashes
])
def test_near_misses_stay(text):
    assert pii.redact_text(text, personal=True) == (text, Counter())
    assert pii.scan_text(text) == 0


def test_word_boundaries_are_ascii():
    """An accented letter is not a word character, so a key after it starts at a word boundary;
    an ASCII letter or digit before it is, so the key there is no finding."""
    assert pii.redact_text("é" + AWS + "é") == (f"é{S}é", Counter({"aws_access_key_id": 1}))
    assert pii.redact_text("_" + AWS) == ("_" + AWS, Counter())
    assert pii.redact_text("1" + AWS) == ("1" + AWS, Counter())


def test_several_findings_left_to_right():
    text = f"{AWS} {AWS},{GITHUB};{PEM}\n{OPENAI} {SLACK}"
    assert pii.redact_text(text) == (f"{S} {S},{S};{S}\n{S} {S}", Counter(
        {"aws_access_key_id": 2, "github_token": 1, "private_key": 1, "openai_api_key": 1, "slack_token": 1}))
    assert pii.scan_text(text) == 6
    # an OpenAI key runs on over every letter and digit after 32
    assert pii.redact_text(OPENAI + "XYZ789 end") == (f"{S} end", Counter({"openai_api_key": 1}))


def test_a_key_glued_after_another_is_found_once_that_one_is_replaced():
    """The Google key takes exactly 35 characters after AIza; the AWS key right after it starts
    at no word boundary, until the Google key is replaced by text ending in `]`."""
    assert pii.redact_text(GOOGLE + AWS) == (S + S, Counter({"google_api_key": 1, "aws_access_key_id": 1}))
    assert pii.scan_text(GOOGLE + AWS) == 1  # as the file holds it: one match


def test_personal_data_only_on_request():
    text = "mail jane.doe+pref@example.co.uk from 8.8.8.8"
    assert pii.redact_text(text) == (text, Counter())
    assert pii.redact_text(text, personal=True) == (f"mail {E} from {IP}", Counter({"email": 1, "ip_address": 1}))
    assert pii.scan_text(text) == 0  # publish scans for secrets only


@pytest.mark.parametrize("address, public", [
    ("8.8.8.8", True),
    ("1.2.3.4", True),
    ("223.255.255.255", True),     # the last address below 224.0.0.0/3
    ("100.128.0.1", True),         # after 100.64.0.0/10
    ("172.32.0.1", True),          # after 172.16.0.0/12
    ("198.20.0.1", True),          # after 198.18.0.0/15
    ("008.008.008.008", True),     # leading zeros: 8.8.8.8
    ("10.1.2.3", False),           # private
    ("010.1.2.3", False),          # 10.1.2.3, private (not octal 8.1.2.3)
    ("172.31.255.255", False),
    ("192.168.0.1", False),
    ("127.0.0.1", False),          # loopback
    ("0.1.2.3", False),            # this network
    ("100.64.0.1", False),         # carrier-grade NAT
    ("169.254.1.1", False),        # link-local
    ("192.0.0.8", False),          # IETF protocol assignments
    ("192.0.2.10", False),         # documentation
    ("198.51.100.7", False),
    ("203.0.113.5", False),
    ("198.19.255.255", False),     # benchmarking
    ("224.0.0.1", False),          # multicast
    ("255.255.255.255", False),    # reserved
    ("256.1.1.1", False),          # an octet above 255
    ("1.2.3.999", False),
])
def test_only_public_ip_addresses_are_personal_data(address, public):
    text = f"host {address} port"
    expected = (f"host {IP} port", Counter({"ip_address": 1})) if public else (text, Counter())
    assert pii.redact_text(text, personal=True) == expected


def test_ip_matches_scan_left_to_right():
    # the first match is 1.2.3.4 (a word boundary before the dot), then .5 is no address
    assert pii.redact_text("1.2.3.4.5", personal=True) == (f"{IP}.5", Counter({"ip_address": 1}))
    # a private address is no finding but still a match: 10.0.0.1, then 8.8.8.8 after its dot
    assert pii.redact_text("10.0.0.1.8.8.8.8", personal=True) == (f"10.0.0.1.{IP}", Counter({"ip_address": 1}))
    assert pii.redact_text("version 1.2.3 and 1.2.3.4a", personal=True) == ("version 1.2.3 and 1.2.3.4a", Counter())


def test_emails():
    text = "a@b.co, first.last@sub.example.org; not@localhost; x@y.z; @example.com"
    assert pii.redact_text(text, personal=True) == (
        f"{E}, {E}; not@localhost; x@y.z; @example.com", Counter({"email": 2}))


def test_secrets_can_be_kept_while_personal_data_is_redacted():
    text = f"{AWS} jane@example.com 8.8.4.4"
    assert pii.redact_text(text, personal=True, secrets=False) == (
        f"{AWS} {E} {IP}", Counter({"email": 1, "ip_address": 1}))
    assert pii.redact_text(text, personal=False, secrets=False) == (text, Counter())


# --------------------------------------------------------------------------------------------
# Arrow tables

MESSAGE = pa.struct([("role", pa.string()), ("content", pa.string())])


def hand_made_table() -> pa.Table:
    """Two chunks; strings at the top, in list<struct>, list<string>, map and struct columns."""
    schema = pa.schema([
        ("id", pa.int64()),
        ("text", pa.string()),
        ("messages", pa.list_(MESSAGE)),
        ("tags", pa.list_(pa.large_string())),
        ("meta", pa.map_(pa.string(), pa.string())),
        ("source", pa.struct([("url", pa.string()), ("rank", pa.int32())])),
    ], metadata={b"note": b"kept"})
    first = pa.table({
        "id": [1, 2],
        "text": [f"use {AWS} here", "nothing to see"],
        "messages": [[{"role": "user", "content": f"token {GITHUB}"}, {"role": "assistant", "content": "ok"}],
                     [{"role": "user", "content": None}]],
        "tags": [["clean", f"mail jane@example.com {OPENAI}"], None],
        "meta": [[("key", HUGGINGFACE), ("ip", "8.8.8.8")], []],
        "source": [{"url": "https://example.com", "rank": 1}, None],
    }, schema=schema)
    second = pa.table({
        "id": [3],
        "text": [None],
        "messages": [[{"role": "assistant", "content": f"{PEM}\nabc\nhost 10.0.0.1 and 1.1.1.1"}]],
        "tags": [[]],
        "meta": [None],
        "source": [{"url": f"https://x.test/?k={GOOGLE}", "rank": 2}],
    }, schema=schema)
    return pa.concat_tables([first, second])


def test_redact_table_replaces_every_nested_string_and_keeps_schema_and_chunks():
    table = hand_made_table()
    out, counts = pii.redact_table(table)
    assert out.schema == table.schema and out.schema.metadata == {b"note": b"kept"}
    assert [c.num_chunks for c in out.columns] == [c.num_chunks for c in table.columns] == [2] * 6
    assert [len(c) for c in out.column("messages").chunks] == [2, 1]
    assert out.to_pylist() == [
        {"id": 1, "text": f"use {S} here",
         "messages": [{"role": "user", "content": f"token {S}"}, {"role": "assistant", "content": "ok"}],
         "tags": ["clean", f"mail jane@example.com {S}"], "meta": [("key", S), ("ip", "8.8.8.8")],
         "source": {"url": "https://example.com", "rank": 1}},
        {"id": 2, "text": "nothing to see", "messages": [{"role": "user", "content": None}], "tags": None,
         "meta": [], "source": None},
        {"id": 3, "text": None, "messages": [{"role": "assistant", "content": f"{S}\nabc\nhost 10.0.0.1 and 1.1.1.1"}],
         "tags": [], "meta": None, "source": {"url": f"https://x.test/?k={S}", "rank": 2}},
    ]
    assert counts == Counter({("text", "aws_access_key_id"): 1, ("messages", "github_token"): 1,
                              ("tags", "openai_api_key"): 1, ("meta", "huggingface_token"): 1,
                              ("messages", "private_key"): 1, ("source", "google_api_key"): 1})


def test_redact_table_with_personal_data():
    out, counts = pii.redact_table(hand_made_table(), personal=True)
    rows = out.to_pylist()
    assert rows[0]["tags"] == ["clean", f"mail {E} {S}"] and rows[0]["meta"] == [("key", S), ("ip", IP)]
    assert rows[2]["messages"][0]["content"] == f"{S}\nabc\nhost 10.0.0.1 and {IP}"
    assert rows[0]["source"] == {"url": "https://example.com", "rank": 1}  # a domain is no email
    assert counts[("tags", "email")] == 1 and counts[("meta", "ip_address")] == 1 and counts[("messages", "ip_address")] == 1
    assert sum(counts.values()) == 9


def test_redact_table_keeping_secrets_and_personal_data_changes_nothing():
    table = hand_made_table()
    out, counts = pii.redact_table(table, secrets=False)
    assert out.equals(table) and counts == Counter()


def test_redact_table_on_a_slice():
    """The export cuts row groups out of DuckDB's batches: slices with offsets into their lists."""
    table = hand_made_table().combine_chunks().slice(1, 2)
    out, counts = pii.redact_table(table)
    assert out.column("messages").to_pylist() == [
        [{"role": "user", "content": None}], [{"role": "assistant", "content": f"{S}\nabc\nhost 10.0.0.1 and 1.1.1.1"}]]
    assert out.column("source").to_pylist() == [None, {"url": f"https://x.test/?k={S}", "rank": 2}]
    assert counts == Counter({("messages", "private_key"): 1, ("source", "google_api_key"): 1})


def test_fixed_size_lists_and_sliced_maps():
    table = pa.table({
        "pair": pa.array([[AWS, "a"], None, ["b", GITHUB], ["c", "d"]], type=pa.list_(pa.string(), 2)),
        "meta": pa.array([[("k", AWS)], [("k", "v")], None, [("k", GOOGLE), ("l", "w")]],
                         type=pa.map_(pa.string(), pa.string())),
    })
    out, counts = pii.redact_table(table.slice(1, 3))
    assert out.to_pylist() == [
        {"pair": None, "meta": [("k", "v")]},
        {"pair": ["b", S], "meta": None},
        {"pair": ["c", "d"], "meta": [("k", S), ("l", "w")]},
    ]
    assert out.schema == table.schema
    assert counts == Counter({("pair", "github_token"): 1, ("meta", "google_api_key"): 1})


def test_python_runs_only_on_the_strings_that_match(monkeypatch):
    seen = []
    real = pii.redact_text

    def spy(text, *args, **kwargs):
        seen.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(pii, "redact_text", spy)
    pii.redact_table(hand_made_table())
    assert sorted(seen) == sorted([f"use {AWS} here", f"token {GITHUB}", f"mail jane@example.com {OPENAI}", HUGGINGFACE,
                                   f"{PEM}\nabc\nhost 10.0.0.1 and 1.1.1.1", f"https://x.test/?k={GOOGLE}"])


def test_an_enum_column_is_redacted_too():
    enum = pa.array(["a", AWS, "a", None]).dictionary_encode()
    out, counts = pii.redact_table(pa.table({"e": enum}))
    assert out.schema == pa.schema([("e", enum.type)])
    assert out.column("e").to_pylist() == ["a", S, "a", None]
    assert counts == Counter({("e", "aws_access_key_id"): 1})


def test_scan_parquet_counts_secret_matches_per_column(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(hand_made_table(), path, row_group_size=2)
    assert pq.ParquetFile(path).num_row_groups == 2
    assert pii.scan_parquet(path) == {"text": 1, "messages": 2, "tags": 1, "meta": 1, "source": 1}
    redacted, _ = pii.redact_table(hand_made_table(), personal=True)
    pq.write_table(redacted, path)
    assert pii.scan_parquet(path) == {}


# --------------------------------------------------------------------------------------------
# a seed that cannot be used: one line naming the file, the column and the fix


GOOD_NETWORKS = "network,description\n10.0.0.0/8,private\n"


@pytest.mark.parametrize("patterns, needles", [
    ("kind,category,pattern\nemail,personal,x\n", ["no column replacement", "kind,category,pattern,replacement"]),
    ("kind,category,pattern,replacement\nkey,secret,(abc,[X]\n", ["line 2, column pattern", "fix the pattern"]),
    ("kind,category,pattern,replacement\nkey,secret,a(?=b),[X]\n", ["line 2, column pattern", "RE2"]),
    ("kind,category,pattern,replacement\nkey,credential,abc,[X]\n", ["line 2, column category", "'credential'"]),
    ("kind,category,pattern,replacement\nkey,secret,abc,[X]\nkey,secret,def,[X]\n", ["line 3, column kind"]),
    ("kind,category,pattern,replacement\nkey,secret,abc,\n", ["line 2, column replacement", "empty"]),
    ("kind,category,pattern,replacement\nkey,secret,X,[X]\n", ["column replacement", "'[X]'", "matches the pattern of key"]),
])
def test_a_bad_pattern_seed_is_one_line(tmp_path, patterns, needles):
    (tmp_path / "p.csv").write_text(patterns)
    (tmp_path / "n.csv").write_text(GOOD_NETWORKS)
    with pytest.raises(pii.RuleError) as info:
        pii.load_rule(tmp_path / "p.csv", tmp_path / "n.csv")
    message = str(info.value)
    assert "\n" not in message and str(tmp_path / "p.csv") in message, message
    for needle in needles:
        assert needle in message, message


def test_a_bad_network_seed_is_one_line(tmp_path):
    (tmp_path / "p.csv").write_text("kind,category,pattern,replacement\nkey,secret,abc,[X]\n")
    (tmp_path / "n.csv").write_text("network,description\n10.0.0.0/8,private\n300.0.0.0/8,nonsense\n")
    with pytest.raises(pii.RuleError, match=r"n\.csv line 3, column network: .*a\.b\.c\.d/n"):
        pii.load_rule(tmp_path / "p.csv", tmp_path / "n.csv")
    (tmp_path / "n.csv").write_text("cidr\n10.0.0.0/8\n")
    with pytest.raises(pii.RuleError, match=r"n\.csv has no column network"):
        pii.load_rule(tmp_path / "p.csv", tmp_path / "n.csv")
