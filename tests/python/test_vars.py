"""Every dbt var checked before any model runs (macros/check_vars.sql): a var the project does not
read, given with --vars or in dbt_project.yml, and an unknown key or name inside a structured var,
each stop `dbt build`, `dbt run` and `make build` with one line naming it and the closest known
name. The registries' rules themselves: test_extra_datasets.py, test_fetch.py, test_contamination.py."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REGISTRY_VARS, REPO, run_dbt
from preftools.inputs.registry import closest_name

ANSI = re.compile(r"\x1b\[[0-9;]*m")
# a model, seed or test that dbt started ("1 of 280 START sql table model ...")
STARTED = re.compile(r"\d+ of \d+ START ")


def known_vars() -> set[str]:
    """The names of macros/check_vars.sql's known_vars()."""
    text = (REPO / "macros" / "check_vars.sql").read_text()
    body = re.search(r"{% macro known_vars\(\) %}(.*?){% endmacro %}", text, re.S).group(1)
    return set(re.findall(r"'(\w+)'", body))


def vars_read() -> dict[str, list[str]]:
    """Every var the project reads, with the files that read it: `var('name'` in the SQL and YAML
    dbt reads (models, macros, tests, analyses, seeds, snapshots, dbt_project.yml), and the names
    dbt_project.yml gives under `vars:`."""
    call = re.compile(r"(?<![\w.])var\(\s*['\"](\w+)['\"]")
    found: dict[str, list[str]] = {}
    files = [REPO / "dbt_project.yml"]
    for folder in ("models", "macros", "tests", "analyses", "seeds", "snapshots"):
        files += [p for p in (REPO / folder).rglob("*") if p.suffix in (".sql", ".yml", ".yaml", ".py")
                  and "python" not in p.relative_to(REPO).parts[:2]]
    for path in files:
        for name in call.findall(path.read_text(encoding="utf-8")):
            found.setdefault(name, []).append(str(path.relative_to(REPO)))
    for name in yaml.safe_load((REPO / "dbt_project.yml").read_text())["vars"]:
        found.setdefault(name, []).append("dbt_project.yml vars:")
    return found


def test_the_known_vars_are_the_vars_the_project_reads():
    read = vars_read()
    assert "extra_datasets" in read and "random_seed" in read, read  # the grep finds calls and declarations
    assert {n: where for n, where in read.items() if n not in known_vars()} == {}, \
        "read but not in known_vars() (macros/check_vars.sql): a build given it would stop"
    assert known_vars() - set(read) == set(), "in known_vars() but read nowhere"
    for example in (REPO / "examples").glob("*.yml"):  # what the docs pass with --vars
        assert set(yaml.safe_load(example.read_text())) <= known_vars(), example.name


def test_the_configuration_page_lists_the_known_vars():
    """docs/configuration.md says a var not in its table stops the build: the table is the list."""
    text = (REPO / "docs" / "configuration.md").read_text()
    section = text.split("\n## dbt vars\n", 1)[1].split("\n## ", 1)[0]
    assert set(re.findall(r"^\| `(\w+)` \|", section, re.M)) == known_vars()


@pytest.mark.parametrize("name, known, want", [
    ("extra_dataset", ["datasets", "extra_datasets"], "extra_datasets"),
    ("colums", ["name", "columns"], "columns"),
    ("treshold", ["ngram", "threshold"], "threshold"),
    ("seed", ["random_seed"], None),  # 7 edits: too far
    ("shape", ["name", "hub_id", "config", "splits", "fields"], None),
    ("ab", ["b", "a"], "b"),  # equals: the first
])
def test_closest_name(name, known, want):
    assert closest_name(name, known) == want


def _problem_lines(out: str) -> list[str]:
    """The lines of the on-run-start error, between its heading and dbt's `> in macro` trail."""
    out = ANSI.sub("", out)
    head = out.find("Compilation Error in operation preference_warehouse-on-run-start")
    lines = []
    for line in out[head:].splitlines()[1:] if head >= 0 else []:
        if not line.strip() or line.strip().startswith(">"):
            break
        lines.append(line.strip())
    return lines


def _with_typo(entries: list[dict], name: str, key: str, typo: str) -> list[dict]:
    return [{(typo if k == key and e["name"] == name else k): v for k, v in e.items()} for e in entries]


CASES = {
    # the example registry with a misspelled key in one entry, and misspelled keys and names
    # in the other structured vars
    "build": ({"extra_dataset": [], "extra_datasets": _with_typo(REGISTRY_VARS["extra_datasets"], "hh_helpful", "columns", "colums"),
               "datasets": ["ultrafeedback", "code_ultrafedback", "rever"],
               "near_duplicates": {"treshold": 0.9}, "contamination": {"ngrams": 5}},
              ["unknown var extra_dataset: did you mean extra_datasets?",
               "var datasets: unknown dataset group code_ultrafedback: did you mean code_ultrafeedback?",
               "extra_datasets entry 5 (hh_helpful): unknown key colums: did you mean columns?",
               "var contamination: unknown key ngrams: did you mean ngram?",
               "var near_duplicates: unknown key treshold: did you mean threshold?"]),
    "run": ({"extra_dataset": [], "mixture": {"hh_helpfull": 1.0},
             "eval_sets": [{"name": "bench", "hub_id": "org/bench", "feilds": ["question"]}]},
            ["unknown var extra_dataset: did you mean extra_datasets?",
             "eval_sets entry 1 (bench): unknown key feilds: did you mean fields?",
             "var mixture: unknown dataset hh_helpfull: did you mean hh_helpful?"]),
}


@pytest.mark.parametrize("command", sorted(CASES))
def test_a_misspelled_var_or_key_stops_dbt_before_any_model(command, tmp_path):
    """On the bundled sample (the example registry's datasets are there): one line per problem,
    from the on-run-start check, not a parse error of a model that reads the var; no model
    started, no warehouse file left."""
    given, want = CASES[command]
    db = tmp_path / "w.duckdb"
    result = run_dbt([command, "--vars", json.dumps(given)], REPO / "sample_data", db, tmp_path / "work", check=False)
    out = ANSI.sub("", result.output)
    assert result.returncode == 2, out[-3000:]
    assert _problem_lines(out) == want, out[-3000:]
    assert "in model" not in out and not STARTED.search(out), out[-3000:]
    assert not db.exists()


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_build_stops_on_an_unknown_var_in_dbt_project_yml(tmp_path):
    """make passes no vars to dbt: its vars are dbt_project.yml's. A copy of the project (without
    the sample: the check comes first) whose vars: has a misspelled name; `make build` stops with
    the one line."""
    root = tmp_path / "project"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, map(os.fsdecode, listed)):
        if not name.startswith(("sample_data/", "benchmarks/", "docs/")) and (REPO / name).is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, root / name)
    project = root / "dbt_project.yml"
    text = project.read_text()
    assert "\nvars:\n" in text
    project.write_text(text.replace("\nvars:\n", "\nvars:\n  extra_dataset: []\n", 1))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("DBT_") and k not in ("RAW_DATA_DIR", "DUCKDB_PATH", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    venv = Path(sys.executable).parent.parent
    made = subprocess.run(["make", "-s", "--no-print-directory", "-o", "install", "build", f"VENV={venv}"], cwd=root,
                          env={**env, "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}, capture_output=True, text=True, timeout=600)
    out = ANSI.sub("", made.stdout + made.stderr)
    assert made.returncode != 0, out[-3000:]
    assert _problem_lines(out) == ["unknown var extra_dataset in dbt_project.yml: did you mean extra_datasets?"], out[-3000:]
    assert not STARTED.search(out) and not (root / "warehouse.duckdb").exists(), out[-3000:]
