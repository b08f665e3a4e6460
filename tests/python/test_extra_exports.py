"""Everything downstream of the marts includes the `extra_datasets` entries: the export
(preference_pairs' `<entry>` and `<entry>_flagged` splits, the training_mixture mart as its own
split, manifest.json listing each entry with its licence and revision), the dataset cards, the
build's record of the entries' revisions (fetch.lock.json -> meta.warehouse_build_info), the
audit report (a section per entry, the mixture) and `preftools.outputs.publish`.

The warehouse is built here, with the five entries of examples/extra_datasets.yml, on a raw
folder assembled for it: the session's generated UltraFeedback (the only built-in group built,
for speed) and small hand-made files for the entries, whose outcomes are known row by row
(EXPECTED: written from the rules of docs/extra-datasets.md, not from the models), and a
fetch.lock.json recording two of the entries at a commit and a third with a wrong size.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

import card_markdown
from conftest import REPO, SCENARIO_BUILD, Warehouse, run_dbt
from hub_standin import TOKEN, hub_env

pytestmark = pytest.mark.slow

EXAMPLES = yaml.safe_load((REPO / "examples" / "extra_datasets.yml").read_text(encoding="utf-8"))
ENTRIES = EXAMPLES["extra_datasets"]
NAMES = [e["name"] for e in ENTRIES]
ENTRY = {e["name"]: e for e in ENTRIES}
BUILTIN_HUB_ID = "argilla/ultrafeedback-binarized-curation"  # the one built-in group built here
MIXTURE = {"ultrafeedback": 0.05, "h4_ultrafeedback": 0.0, "rlhflow_ultrafeedback": 0.5,
           "openbmb_ultrafeedback": 1.0, "hh_helpful": 1.0}
BUILD_VARS = {"datasets": ["ultrafeedback"], "extra_datasets": ENTRIES, "mixture": MIXTURE}
FILE_NAME = re.compile(r"(?P<split>\w+)-\d{5}-of-\d{5}\.parquet")

# What the hand-made rows below become, from the spec (raw rows, pairs, flagged pairs by flag,
# rejected rows by reason, pairs with both scores).
EXPECTED = {
    "h4_ultrafeedback": dict(raw=6, pairs=6, flagged=3, scored=6, rejects={},
                             flags={"identical_responses": 1, "score_not_higher": 2, "score_out_of_range": 1}),
    "argilla_ultrafeedback_cleaned": dict(raw=3, pairs=3, flagged=1, scored=3, rejects={},
                                          flags={"cross_dataset_duplicate": 1}),
    "rlhflow_ultrafeedback": dict(raw=8, pairs=8, flagged=2, scored=7, rejects={},
                                  flags={"unparseable_score": 1, "score_not_higher": 1}),
    "openbmb_ultrafeedback": dict(raw=6, pairs=4, flagged=1, scored=3,
                                  rejects={"no_lower_rated_completion": 1, "no_completions": 1},
                                  flags={"unparseable_score": 1}),
    "hh_helpful": dict(raw=10, pairs=10, flagged=2, scored=0, rejects={},
                       flags={"identical_responses": 1, "duplicate_pair": 1}),
}
# fetch.lock.json: these entries' files recorded at a commit; rlhflow's with a wrong size
LOCKED = {"h4_ultrafeedback": hashlib.sha1(b"h4").hexdigest(), "hh_helpful": hashlib.sha1(b"hh").hexdigest()}
STALE_LOCK = "rlhflow_ultrafeedback"


# --------------------------------------------------------------------------------------------
# the raw folder


def msg(role: str, content: str) -> dict:
    return {"content": content, "role": role}  # the Hub files' field order


MESSAGES = pa.list_(pa.struct([("content", pa.string()), ("role", pa.string())]))


def write_parquet(path: Path, rows: list[dict], schema: pa.Schema) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def h4_rows() -> list[dict]:
    def row(q, a, b, sa, sb):
        return {"prompt": q, "prompt_id": hashlib.md5(q.encode()).hexdigest(),
                "chosen": [msg("user", q), msg("assistant", a)], "rejected": [msg("user", q), msg("assistant", b)],
                "score_chosen": sa, "score_rejected": sb}
    return [
        row("What is the capital of France?", "Paris.", "Lyon.", 8.0, 3.0),
        row("Name a prime number above ten.", "Eleven is prime.", "Twelve.", 9.0, 2.0),
        row("Describe rain in five words.", "Water falling from grey clouds.", "Wet.", 7.0, 6.0),
        row("Say hello politely.", "Good morning to you.", "Good morning to you.", 5.0, 5.0),  # identical, not higher
        row("Give a synonym of quick.", "Rapid.", "Slow.", 11.0, 4.0),  # 11 is out of [1, 10]
        row("How many legs has a spider?", "Six.", "Eight.", 2.0, 6.0),  # chosen scored lower
    ]


def argilla_rows() -> list[dict]:
    def row(q, a, b, sa, sb):
        return {"source": "evol", "prompt": q, "chosen": [msg("user", q), msg("assistant", a)], "chosen-rating": sa,
                "chosen-model": "model-a", "rejected": [msg("user", q), msg("assistant", b)],
                "rejected-rating": sb, "rejected-model": "model-b"}
    return [
        # h4's first pair again, in other case and spacing: a cross-dataset duplicate
        row("what is the capital of  France?", "PARIS.", "lyon.", 5.0, 2.0),
        row("Translate 'cat' into French.", "Chat.", "Chien.", 4.5, 1.0),
        row("Is the sea salty?", "Yes, it holds dissolved salts.", "No.", 3.0, 2.0),
    ]


def rlhflow_rows() -> list[dict]:
    system = msg("system", "You are a concise assistant.")

    def row(turns, a, b, sa, sb, with_system=True):
        shared = ([system] if with_system else []) + turns
        return {"chosen": shared + [msg("assistant", a)], "rejected": shared + [msg("assistant", b)],
                "chosen_score": sa, "rejected_score": sb}

    def chat(q1, a1, q2):
        return [msg("user", q1), msg("assistant", a1), msg("user", q2)]

    return [
        row(chat("Plan a picnic.", "Bring bread and fruit.", "And drinks?"), "Water and lemonade.", "Nothing.", "5", "2"),
        row(chat("Pick a colour.", "Blue.", "Why blue?"), "It is calm and cool.", "Because.", "4.5", "1"),
        row(chat("Count to three.", "One, two, three.", "Now backwards."), "Three, two, one.", "One, two.", "4", "3"),
        row(chat("Name a tree.", "Oak.", "Another one?"), "Birch.", "Oak.", "5", "1.5"),
        row(chat("What is tea?", "A drink.", "Hot or cold?"), "Both are common.", "Cold only.", "3", "1"),
        row(chat("Suggest a book.", "Dune.", "Who wrote it?"), "Frank Herbert.", "Tolkien.", "4", "N/A"),
        row([msg("user", "Say something kind.")], "You are doing well.", "Go away.", "4", "2"),
        row(chat("Spell cat.", "C-A-T.", "Spell dog."), "D-O-G.", "D-O-G-G.", "3", "3"),  # not higher
    ]


def openbmb_rows() -> list[dict]:
    def completion(model, response, rating):
        aspects = ("helpfulness", "honesty", "instruction_following", "truthfulness")
        return {"annotations": {a: {"Rating": rating, "Rationale": "r"} for a in aspects},
                "model": model, "response": response, "critique": "c", "overall_score": 5.0}

    def row(instruction, *completions):
        return {"source": "flan", "instruction": instruction, "models": [c["model"] for c in completions],
                "completions": list(completions)}

    return [
        row("Write a haiku about snow.", completion("m1", "White hush on the hills.", "5"),
            completion("m2", "Snow is cold.", "2"), completion("m3", "Flakes fall.", "3")),
        row("List two planets.", completion("m1", "Mars and Venus.", "4"), completion("m2", "The Sun.", "1")),
        row("Say yes.", completion("m1", "Yes.", "3"), completion("m2", "Yes!", "3"), completion("m3", "Yep.", "3")),
        row("Nothing to rate."),  # no completions
        row("Greet a friend.", completion("m1", "Hi, good to see you!", "5"), completion("m2", "Hm.", "N/A")),
        row("Name a fruit.", completion("m1", "An apple.", "3"), completion("m2", "A chair.", "2")),
    ]


def hh_text(*turns: str) -> str:
    return "".join(f"\n\n{'Human' if i % 2 == 0 else 'Assistant'}: {t}" for i, t in enumerate(turns))


def hh_rows() -> tuple[list[dict], list[dict]]:
    def row(turns, a, b):
        return {"chosen": hh_text(*turns, a), "rejected": hh_text(*turns, b)}
    train = [
        row(["How do I boil an egg?"], "Simmer it for nine minutes.", "Eggs are round."),
        row(["Hi there", "Hello! How can I help?", "Tell me a fun fact."], "Octopuses have three hearts.", "No."),
        row(["Can you help me sleep?"], "Keep a regular bedtime.", "Drink coffee late."),
        row(["What is two plus two?", "Four.", "And times three?"], "Twelve.", "Seven."),
        row(["Recommend a film."], "Try Spirited Away.", "Try Spirited Away."),  # identical
        row(["How do I boil an egg?"], "Simmer it for nine minutes.", "Eggs are round."),  # duplicate of the first
        row(["Is it going to rain?", "I cannot see the sky.", "Guess then."], "Bring an umbrella to be safe.", "Yes."),
        row(["Thanks for the help."], "You are welcome!", "Whatever."),
    ]
    test = [
        row(["What is a noun?"], "A word naming a thing.", "A verb."),
        row(["Where is Peru?"], "In South America.", "In Asia."),
    ]
    return train, test


def write_extra_raw(raw: Path) -> dict[str, list[str]]:
    """The entries' files under ``raw``; returns each entry's data files (repo paths) that the
    build reads."""
    h4 = raw / "HuggingFaceH4/ultrafeedback_binarized/data"
    h4_schema = pa.schema([("prompt", pa.string()), ("prompt_id", pa.string()), ("chosen", MESSAGES),
                           ("rejected", MESSAGES), ("score_chosen", pa.float64()), ("score_rejected", pa.float64())])
    write_parquet(h4 / "train_prefs-00000-of-00001.parquet", h4_rows(), h4_schema)
    # another split, not in the entry's `splits`: not read
    write_parquet(h4 / "test_prefs-00000-of-00001.parquet", h4_rows()[:2], h4_schema)
    write_parquet(raw / "argilla/ultrafeedback-binarized-preferences-cleaned/data/train-00000-of-00001.parquet",
                  argilla_rows(), pa.schema([
                      ("source", pa.string()), ("prompt", pa.string()), ("chosen", MESSAGES),
                      ("chosen-rating", pa.float64()), ("chosen-model", pa.string()), ("rejected", MESSAGES),
                      ("rejected-rating", pa.float64()), ("rejected-model", pa.string())]))
    write_parquet(raw / "RLHFlow/UltraFeedback-preference-standard/data/train-00000-of-00001.parquet",
                  rlhflow_rows(), pa.schema([("chosen", MESSAGES), ("rejected", MESSAGES),
                                             ("chosen_score", pa.string()), ("rejected_score", pa.string())]))
    openbmb = raw / "openbmb/UltraFeedback"
    openbmb.mkdir(parents=True)
    (openbmb / "flan.jsonl").write_text("".join(json.dumps(r) + "\n" for r in openbmb_rows()), encoding="utf-8")
    hh = raw / "Anthropic/hh-rlhf/helpful-base"
    hh.mkdir(parents=True)
    train, test = hh_rows()
    for name, rows in (("train", train), ("test", test)):
        with gzip.open(hh / f"{name}.jsonl.gz", "wt", encoding="utf-8") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)
    return {
        "h4_ultrafeedback": ["data/train_prefs-00000-of-00001.parquet", "data/test_prefs-00000-of-00001.parquet"],
        "hh_helpful": ["helpful-base/test.jsonl.gz", "helpful-base/train.jsonl.gz"],
        "rlhflow_ultrafeedback": ["data/train-00000-of-00001.parquet"],
    }


def write_lock(raw: Path, files: dict[str, list[str]]) -> None:
    """fetch.lock.json as preftools.inputs.fetch writes it, for three entries (by entry name): h4's and
    hh's files as they are (h4's lock also lists test_prefs, a split the entry does not read),
    rlhflow's with a size that differs from the file on disk."""
    datasets = {}
    for name in (*LOCKED, STALE_LOCK):
        hub_id = ENTRY[name]["hub_id"]
        records = []
        for path in files[name]:
            data = (raw / hub_id / path).read_bytes()
            records.append({"path": path, "size": len(data) + (1 if name == STALE_LOCK else 0),
                            "sha256": hashlib.sha256(data).hexdigest()})
        commit = LOCKED.get(name, hashlib.sha1(b"stale").hexdigest())
        datasets[name] = {"hub_id": hub_id, "requested_revision": "main", "requested_commit": commit,
                          "source": "repo", "revision": commit, "endpoint": "https://huggingface.co",
                          "card": None, "files": records}
    lock = {"lock_version": 2, "written_by": "python -m preftools.fetch", "datasets": datasets}
    (raw / "fetch.lock.json").write_text(json.dumps(lock, indent=2), encoding="utf-8")


def assemble_raw(session_raw: Path, raw: Path) -> Path:
    """The session's generated UltraFeedback (linked), its generator manifest (the stand-ins of the
    entries left out: the entries here are hand-made), the entries' files and the lock."""
    target = raw / BUILTIN_HUB_ID
    target.parent.mkdir(parents=True)
    target.symlink_to(session_raw / BUILTIN_HUB_ID, target_is_directory=True)
    manifest = json.loads((session_raw / "_generator_manifest.json").read_text(encoding="utf-8"))
    manifest.pop("extra_datasets", None)
    (raw / "_generator_manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    write_lock(raw, write_extra_raw(raw))
    return raw


def build_extra_warehouse(session_raw: Path, work: Path) -> Warehouse:
    """`dbt build` with the entries and the mixture on the assembled raw folder."""
    raw = assemble_raw(session_raw, work / "raw")
    db = work / "warehouse.duckdb"
    run_dbt([*SCENARIO_BUILD, "--vars", json.dumps(BUILD_VARS)], raw, db, work / "build")
    return Warehouse(db, raw, work / "build")


# --------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="module")
def wh(raw_dir, tmp_path_factory) -> Warehouse:
    return build_extra_warehouse(raw_dir, tmp_path_factory.mktemp("extra_exports"))


@pytest.fixture(scope="module")
def expected(wh) -> dict[str, dict]:
    """EXPECTED with the near-duplicate checks' flags added, from their own reference over this
    build's pairs (near_duplicates_reference: the hand-made rows hold exact copies and identical
    responses, which those checks flag too), and the PII scan's (pii_reference, none on these
    rows): per entry the flags counted, and the flagged pairs."""
    import near_duplicates_reference
    import pii_reference

    near = near_duplicates_reference.warehouse_flags(wh)
    pii = pii_reference.warehouse_flags(wh)
    other = {pid: flags | pii[pid] for pid, flags in near.items()}
    out = {}
    for name, want in EXPECTED.items():
        pairs = wh.rows("select pair_id, integrity_flags from main.preference_pairs where dataset = ?", [name])
        added = Counter(f for p in pairs for f in other[p["pair_id"]])
        # pairs these checks alone flag (the spec's flags on the others are checked apart)
        only_other = sum(bool(other[p["pair_id"]]) and set(p["integrity_flags"]) <= other[p["pair_id"]] for p in pairs)
        out[name] = {**want, "flags": dict(Counter(want["flags"]) + added), "flagged": want["flagged"] + only_other}
    return out


def run_module(module: str, *args: str, env: dict | None = None, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def export(db: Path, out: Path) -> dict:
    """`python -m preftools.export` with no argument but where to read and write."""
    proc = run_module("preftools.export", "--duckdb-path", str(db), "--export-dir", str(out), "--no-progress")
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / "manifest.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def exported(wh, tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("extra_export") / "exports"
    return out, export(wh.path, out)


def split_files(export_dir: Path, mart: str) -> dict[str, list[Path]]:
    files: dict[str, list[Path]] = {}
    for f in sorted((export_dir / mart / "data").glob("*.parquet")):
        m = FILE_NAME.fullmatch(f.name)
        assert m, f
        files.setdefault(m["split"], []).append(f)
    return files


def front_matter(card: Path) -> dict:
    text = card.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text[4:].partition("\n---\n")[0])


def card_splits(front: dict) -> list[str]:
    (config,) = front["configs"]
    return [f["split"] for f in config["data_files"]]


def taken(fraction: float, n: int) -> int:
    """The spec's count: the first floor(fraction * n + 0.5) of n clean pairs."""
    return int(fraction * n + 0.5)


# --------------------------------------------------------------------------------------------
# the build: the entries' pairs and revisions


def test_entries_become_the_expected_pairs(wh, expected):
    """The hand-made rows give the pairs, flags and rejects the spec says (so the checks below
    compare with known outcomes)."""
    for name, want in expected.items():
        pairs = wh.rows("select * from main.preference_pairs where dataset = ?", [name])
        assert len(pairs) == want["pairs"], name
        assert sum(p["is_flagged"] for p in pairs) == want["flagged"], name
        assert Counter(f for p in pairs for f in p["integrity_flags"]) == Counter(want["flags"]), name
        assert sum(p["score_margin"] is not None for p in pairs) == want["scored"], name
        assert {p["split"] for p in pairs} == {name, f"{name}_flagged"}, name
        rejects = wh.rows("select reason from main.rejects_extra_datasets where dataset = ?", [name])
        assert Counter(r["reason"] for r in rejects) == Counter(want["rejects"]), name
    # the multi-turn rows keep their system turn and earlier turns in the prompt
    prompts = [p["prompt"] for p in wh.rows(
        "select prompt from main.preference_pairs where dataset = 'rlhflow_ultrafeedback' and not is_flagged")]
    assert all(p[0]["role"] == "system" and p[-1]["role"] == "user" for p in prompts)
    assert sum(len(p) == 4 for p in prompts) >= 4


def test_build_records_each_entrys_revision_from_the_fetch_lock(wh):
    """raw_revisions names each entry by its Hub id: the lock's commit where the files the entry
    reads are the ones the lock records (a lock of more splits than the entry reads still matches),
    "unknown" where a size differs or there is no lock entry; the built-in dataset stays generated."""
    (info,) = wh.rows("select raw_revisions from meta.warehouse_build_info")
    revisions = json.loads(info["raw_revisions"])
    expected = {ENTRY[n]["hub_id"]: LOCKED.get(n, "unknown") for n in NAMES}
    assert {k: v for k, v in revisions.items() if k != BUILTIN_HUB_ID} == expected
    assert revisions[BUILTIN_HUB_ID].startswith("generated, seed ")


# --------------------------------------------------------------------------------------------
# the export


def test_export_writes_each_entrys_splits_and_the_mixture(wh, exported, hf_env, expected):
    """No argument but the paths: preference_pairs has `<entry>` and `<entry>_flagged` splits with
    the warehouse's rows, training_mixture one split `training_mixture`; `datasets` loads both
    folders as they are."""
    import datasets

    out, manifest = exported
    files = split_files(out, "preference_pairs")
    for name, want in expected.items():
        assert name in files and f"{name}_flagged" in files, sorted(files)
        ds = datasets.load_dataset("parquet", data_files={"x": [str(f) for f in files[name]]}, split="x",
                                   cache_dir=str(hf_env / "files"))
        assert len(ds) == want["pairs"] - want["flagged"]
        assert set(ds["dataset"]) == {name} and not any(ds["is_flagged"])
    assert sorted(split_files(out, "training_mixture")) == ["training_mixture"]

    pairs = datasets.load_dataset(str(out / "preference_pairs"), cache_dir=str(hf_env / "pairs"))
    counts = {r["split"]: r["n"] for r in wh.rows("select split, count(*) as n from main.preference_pairs group by split")}
    assert {s: len(pairs[s]) for s in pairs} == counts == manifest["marts"]["preference_pairs"]["splits"]

    mixture = datasets.load_dataset(str(out / "training_mixture"), cache_dir=str(hf_env / "mixture"))
    assert list(mixture) == ["training_mixture"]
    want_ids = sorted(r["pair_id"] for r in wh.rows("select pair_id from main.training_mixture"))
    assert sorted(mixture["training_mixture"]["pair_id"]) == want_ids
    assert manifest["marts"]["training_mixture"]["splits"] == {"training_mixture": len(want_ids)}
    assert "mixture_rank" in mixture["training_mixture"].column_names


def test_manifest_lists_each_entry_with_licence_and_revision(exported):
    out, manifest = exported
    listed = manifest["extra_datasets"]
    assert [e["name"] for e in listed] == NAMES
    for e in listed:
        spec = ENTRY[e["name"]]
        assert e["hub_id"] == spec["hub_id"] and e["shape"] == spec["shape"]
        assert e["license"] == spec.get("license", "not stated")  # the registry's default
        assert e["revision"] == LOCKED.get(e["name"], "unknown")
        assert e["config"] == spec.get("config") and e["splits"] == spec.get("splits")
    sources = {s["dataset"]: s for s in manifest["marts"]["preference_pairs"]["source_datasets"]}
    for name in NAMES:
        assert sources[name]["revision"] == LOCKED.get(name, "unknown")
        assert sources[name]["license"] == ENTRY[name].get("license", "not stated")
    assert sources["ultrafeedback"]["revision"].startswith("generated, seed ")
    # the rejects of the entries come from the entries
    assert [s["dataset"] for s in manifest["marts"]["rejects_extra_datasets"]["source_datasets"]] == NAMES


def test_preference_pairs_card_lists_each_entry(exported):
    out, manifest = exported
    card = out / "preference_pairs" / "README.md"
    front, body = front_matter(card), card.read_text(encoding="utf-8")
    assert sorted(card_splits(front)) == sorted(manifest["marts"]["preference_pairs"]["splits"])
    for name in NAMES:
        hub_id, licence = ENTRY[name]["hub_id"], ENTRY[name].get("license", "not stated")
        assert hub_id in front["source_datasets"]
        revision = LOCKED.get(name, "unknown")
        assert f"| {name} | [{hub_id}](https://huggingface.co/datasets/{hub_id}) | {licence} | {revision} |" in body
        config = ENTRY[name].get("config") or "default"
        splits_read = ", ".join(ENTRY[name].get("splits") or []) or "all"
        assert f"| {name} | {hub_id} | {ENTRY[name]['shape']} | {config} | {splits_read} |" in body
    # an entry without a licence makes the card's licence `other`, and the card says why
    assert "other" in front["license"] and "mit" in front["license"]
    assert "RLHFlow/UltraFeedback-preference-standard: its `extra_datasets` entry names no licence" in body


def test_training_mixture_card_says_what_came_from_where(wh, exported):
    out, manifest = exported
    card = out / "training_mixture" / "README.md"
    front, body = front_matter(card), card.read_text(encoding="utf-8")
    assert card_splits(front) == ["training_mixture"]
    assert "| dataset | fraction asked | clean pairs | pairs taken |" in body
    for name, fraction in MIXTURE.items():
        clean = wh.scalar("select count(*) from main.preference_pairs where dataset = ? and not is_flagged", [name])
        got = wh.scalar("select count(*) from main.training_mixture where dataset = ?", [name])
        assert got == taken(fraction, clean), name
        assert f"| {name} | {fraction:g} | {clean:,} | {got:,} |" in body, name
    # its sources: the datasets it took pairs from (none from h4_ultrafeedback, asked 0)
    assert "HuggingFaceH4/ultrafeedback_binarized" not in front["source_datasets"]
    assert {ENTRY[n]["hub_id"] for n in ("rlhflow_ultrafeedback", "openbmb_ultrafeedback", "hh_helpful")} \
        <= set(front["source_datasets"])
    # its splits are the training selection: the TRL block filters nothing
    assert "DPOTrainer(" in body and "train = ds['training_mixture']" in body and ".filter(" not in body


def test_every_card_reads_as_written_for_its_readers(wh, exported, no_mixture):
    """Every card of the export with the entries and a mixture (preference_pairs' entry splits,
    training_mixture's table of what came from where, rejects_extra_datasets), and the empty
    training_mixture's card of the build without a mixture, rendered with markdown-it-py, pass
    the reading test_export gives the session's cards (card_markdown)."""
    out, manifest = exported
    with wh.connect() as con:
        described = {t for t, c in con.execute("select table_name, comment from duckdb_tables() "
                                               "where schema_name = 'main'").fetchall() if c and c.strip()}
        columns: dict[str, set[str]] = {}
        for t, c in con.execute("select table_name, column_name from duckdb_columns() where schema_name = 'main'").fetchall():
            columns.setdefault(t, set()).add(c)
    assert {"preference_pairs", "training_mixture", "rejects_extra_datasets"} <= set(manifest["marts"])
    cards = {mart: (out / mart / "README.md", mart) for mart in manifest["marts"]}
    cards["training_mixture, no mixture"] = (no_mixture[1] / "training_mixture" / "README.md", "training_mixture")
    card_markdown.assert_written_for_readers({
        name: (card.read_text(encoding="utf-8"), card_markdown.expected_headings(columns[mart], mart in described))
        for name, (card, mart) in cards.items()
    })


@pytest.fixture(scope="module")
def no_mixture(wh, tmp_path_factory) -> tuple[Path, Path]:
    """The warehouse rebuilt with no mixture (training_mixture and what reads it), exported."""
    work = tmp_path_factory.mktemp("no_mixture")
    db = work / "warehouse.duckdb"
    shutil.copy(wh.path, db)
    plain = {**BUILD_VARS, "mixture": {}}  # (conftest.run_dbt would add the example mixture to a build without one)
    run_dbt(["build", "--select", "training_mixture+", "--vars", json.dumps(plain)], wh.raw_dir, db, work / "build")
    out = work / "exports"
    export(db, out)
    return db, out


def test_an_empty_training_mixture_is_exported_schema_only(no_mixture, hf_env):
    import datasets

    db, out = no_mixture
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["marts"]["training_mixture"]["num_rows"] == 0
    assert manifest["marts"]["training_mixture"]["splits"] == {"training_mixture": 0}
    (only,) = (out / "training_mixture" / "data").iterdir()
    assert only.name == "training_mixture-00000-of-00001.parquet"
    table = pq.read_table(only)
    assert table.num_rows == 0 and "mixture_rank" in table.column_names
    body = (out / "training_mixture" / "README.md").read_text(encoding="utf-8")
    assert "The build set no `mixture` var" in body
    assert card_splits(front_matter(out / "training_mixture" / "README.md")) == ["training_mixture"]
    # the other marts load as usual
    pairs = datasets.load_dataset(str(out / "preference_pairs"), cache_dir=str(hf_env / "no_mixture"))
    assert "hh_helpful" in pairs


# --------------------------------------------------------------------------------------------
# publish


def publish_env(tmp_path: Path, endpoint: str) -> dict:
    return hub_env(endpoint, tmp_path / "hf_home", token=TOKEN, unset=("EXPORT_DIR",))


@pytest.mark.parametrize("mart", ["preference_pairs", "training_mixture"])
def test_publish_uploads_the_entries_splits_and_the_mixture(hub, exported, tmp_path, hf_env, mart):
    """`make publish MART=...` uploads the mart folder byte for byte; what the Hub then holds loads
    with `datasets` into the same splits (every entry's among preference_pairs')."""
    import datasets

    out, manifest = exported
    repo = f"pref-org/{mart.replace('_', '-')}"
    proc = run_module("preftools.publish", "--export-dir", str(out), "--repo", repo, "--mart", mart,
                      env=publish_env(tmp_path, hub.endpoint), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    local = {p.relative_to(out / mart).as_posix(): p.read_bytes() for p in sorted((out / mart).rglob("*")) if p.is_file()}
    assert hub.files(repo) == local
    clone = tmp_path / "clone"
    for path, data in hub.files(repo).items():
        (clone / path).parent.mkdir(parents=True, exist_ok=True)
        (clone / path).write_bytes(data)
    loaded = datasets.load_dataset(str(clone), cache_dir=str(hf_env / f"hub-{mart}"))
    assert {s: len(loaded[s]) for s in loaded} == manifest["marts"][mart]["splits"]
    if mart == "preference_pairs":
        assert set(NAMES) <= set(loaded)


def test_publish_refuses_an_empty_training_mixture(no_mixture, tmp_path):
    """Before any request (the endpoint is a closed port): one line saying why and what to do."""
    _, out = no_mixture
    proc = run_module("preftools.publish", "--export-dir", str(out), "--repo", "pref-org/mixture",
                      "--mart", "training_mixture", env=publish_env(tmp_path, "http://127.0.0.1:9"), cwd=tmp_path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    (line,) = [x for x in proc.stderr.splitlines() if x.startswith("publish: error:")]
    assert "Traceback" not in proc.stderr
    assert "training_mixture has no rows" in line and "`mixture` var" in line


# --------------------------------------------------------------------------------------------
# the report


@pytest.fixture(scope="module")
def report(wh, tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("extra_report") / "report.html"
    proc = run_module("preftools.report", "--duckdb-path", str(wh.path), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return out.read_text(encoding="utf-8")


def spec_rows(html: str, chart_id: str) -> list[dict]:
    m = re.search(rf'<script type="application/json" id="spec-{re.escape(chart_id)}" class="vega-spec">(.*?)</script>',
                  html, re.S)
    assert m, f"no chart {chart_id}"
    spec = json.loads(m.group(1))
    rows = []

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "datasets" and isinstance(value, dict):
                    for values in value.values():
                        rows.extend(values)
                elif key == "values" and isinstance(value, list) and value and isinstance(value[0], dict):
                    rows.extend(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(spec)
    return rows


def table_cells(html: str, table_id: str) -> list[list[str]]:
    m = re.search(rf'<table class="figures" id="table-{re.escape(table_id)}">(.*?)</table>', html, re.S)
    assert m, f"no table {table_id}"
    return [[re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row)]
            for row in re.findall(r"<tr>(.*?)</tr>", m.group(1), re.S)]


def test_report_has_a_section_per_entry(report, expected):
    for name, want in expected.items():
        assert f'<section id="extra-{name}">' in report, name
        figures = dict(table_cells(report, f"extra-{name}-figures")[1:])
        assert figures["raw rows"] == str(want["raw"])
        assert figures["pairs (preference_pairs)"] == str(want["pairs"])
        assert figures[f"... in the training split {name}"] == str(want["pairs"] - want["flagged"])
        assert figures["... flagged by an integrity check"] == str(want["flagged"])
        assert figures["raw rows rejected (no pair)"] == str(sum(want["rejects"].values()))
        flags = {r["flag"]: r["n_pairs"] for r in spec_rows(report, f"extra-{name}-flags")}
        assert flags == want["flags"], name
        if want["rejects"]:
            reasons = {r["reason"]: r["n_rows"] for r in spec_rows(report, f"extra-{name}-rejects")}
            assert reasons == want["rejects"], name
        else:
            assert f'id="spec-extra-{name}-rejects"' not in report
        if ENTRY[name].get("score_range"):
            assert figures["pairs with both scores"] == str(want["scored"])
            margins = spec_rows(report, f"extra-{name}-margins")
            # every pair with both scores is in the histogram, clean and flagged apart
            assert sum(r["n_pairs"] for r in margins if "pairs" in r) == want["scored"], name
        else:
            assert "pairs with both scores" not in figures
            assert f'id="spec-extra-{name}-margins"' not in report
    overview = table_cells(report, "extra-datasets-overview")
    assert [row[0] for row in overview[1:]] == NAMES


def test_report_score_margin_summary_of_a_scored_entry(report):
    """h4_ultrafeedback's score margins, from the hand-made scores: 5, 7, 1, 0, 7, -4."""
    figures = dict(table_cells(report, "extra-h4_ultrafeedback-figures")[1:])
    margins = [8 - 3, 9 - 2, 7 - 6, 5 - 5, 11 - 4, 2 - 6]
    assert figures["mean score margin (chosen minus rejected score)"] == f"{sum(margins) / len(margins):,.3f}"
    assert figures["smallest / largest score margin"] == f"{min(margins):,.3f} / {max(margins):,.3f}"
    clean = [5, 7, 1]  # the unflagged pairs, margin = score margin / (10 - 1)
    assert figures["average margin of the clean pairs (score margin / score range)"] == f"{sum(clean) / 9 / 3:,.3f}"


def test_report_headline_and_mixture(wh, report):
    block = report[report.index(">All datasets</th>"):]
    block = block[:block.index("</table>")]
    headline = dict(re.findall(r'<td>([^<]*)</td><td class="value">([^<]*)</td></tr>', block))
    n = {r["dataset"]: r["n"] for r in wh.rows("select dataset, count(*) as n from main.preference_pairs group by 1")}
    total = sum(n.values())
    assert headline["pairs in preference_pairs (every dataset, flagged ones included)"] == f"{total:,}"
    extra = sum(want["pairs"] for want in EXPECTED.values())
    assert headline["... from the extra_datasets entries"] == f"{extra:,}"
    assert headline["... from UltraFeedback"] == f"{n['ultrafeedback']:,}"
    assert n["ultrafeedback"] + extra == total  # the parts add up

    rows = table_cells(report, "training-mixture")
    assert rows[0] == ["dataset", "fraction asked", "clean pairs", "pairs taken"]
    for (dataset, fraction, clean, got), (name, want_fraction) in zip(rows[1:], MIXTURE.items()):
        n_clean = wh.scalar("select count(*) from main.preference_pairs where dataset = ? and not is_flagged", [name])
        assert (dataset, fraction, clean, got) == (name, f"{want_fraction:g}", f"{n_clean:,}",
                                                   f"{taken(want_fraction, n_clean):,}")
