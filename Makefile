# Preference-data warehouse: dbt on DuckDB.
#   make build   venv + pinned install + `dbt build` on the bundled sample into warehouse.duckdb
#   make test    the whole test suite (pytest: generator, dbt build on fresh generated data, audits, lint...)
SHELL := /bin/bash

# Python 3.11, 3.12 or 3.13 (the pins of requirements.txt need >= 3.11: DuckDB 2.0.1, numpy 2.4,
# pandas 3, pyarrow 26). Default: python3 if it is one of them, else the newest python3.1x that
# runs; `make build PYTHON=python3.12` picks one. Only read when the venv is created.
SUPPORTED_PYTHONS := 3.11 3.12 3.13
python_if_supported = $(shell $(1) -c 'import sys; sys.exit(not (3, 11) <= sys.version_info[:2] <= (3, 13))' >/dev/null 2>&1 && echo $(1))
PYTHON ?= $(firstword $(call python_if_supported,python3) $(foreach v,3.13 3.12 3.11,$(call python_if_supported,python$(v))) python3)
VENV := .venv
BIN := $(VENV)/bin

# make passes on no setting of its own (RAW_DATA_DIR, DUCKDB_PATH, EXPORT_DIR, the thread counts):
# dbt and the tools take the same defaults under make as without it, relative paths relative to
# the repo, so `make build` and a plain `dbt` render the same profile and share dbt's parse.
export DBT_PROFILES_DIR := $(CURDIR)
# pytest workers and sqlfluff processes: one per core
NPROC := $(shell nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)

.PHONY: help install build test lint docs generate fetch export publish report diff bench clean config check-python

# `make` alone, or `make help`: every target, one line each (the text after `## ` on its line).
.DEFAULT_GOAL := help
help: ## this list
	@awk -F ':[^#]*## ' '/^[a-z][a-z-]*:[^=]*## / {printf "  make %-19s %s\n", $$1, $$2}' $(firstword $(MAKEFILE_LIST))

# One line, no traceback, when PYTHON is missing or a version the pins do not install on.
comma := ,
python_version = $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
check_python = $(if $(filter $(SUPPORTED_PYTHONS),$(1)),,$(error PYTHON=$(PYTHON) is $(if $(1),Python $(1),not a working Python); \
  this project needs Python 3.11$(comma) 3.12 or 3.13 (the pinned DuckDB 2.0.1$(comma) numpy$(comma) pandas and pyarrow need >= 3.11): \
  install one and run e.g. `make build PYTHON=python3.12`))
check-python: ## say whether PYTHON is a Python the pins install on
	$(call check_python,$(python_version))@echo "PYTHON=$(PYTHON) (Python $(python_version)) is supported"

# uv (pinned in requirements.txt, installed first by pip) installs the pins: the same packages as
# pip, about four times faster, and compiles their bytecode on every core (a run's imports need it:
# a Python that writes no .pyc would otherwise compile dbt on every run).
$(BIN)/.installed: requirements.txt
	$(call check_python,$(python_version))
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check $$(grep '^uv==' requirements.txt)
	$(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode -r requirements.txt
	touch $@

# preftools itself, editable: dbt loads its plugin (profiles.yml) and `preftools <command>` runs
# from any directory, always the code of this checkout (a copied install would go stale).
$(BIN)/.installed-preftools: pyproject.toml $(BIN)/.installed
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation --editable .
	touch $@

install: $(BIN)/.installed-preftools ## the venv (.venv) with the pinned packages and preftools

build: install ## install, then `dbt build` on $RAW_DATA_DIR (the bundled sample) into warehouse.duckdb
	$(BIN)/dbt build

# --durations: the slowest tests, printed at the end (where the suite's time goes). The suite
# runs `make lint` too (tests/python/test_lint.py), beside its other tests.
test: install ## the full test suite (pytest, one worker per core)
	$(BIN)/python -m pytest -n $(NPROC) --dist loadfile --no-loadscope-reorder -m "not spark and not clients" --durations=25

# sqlfluff's dbt templater opens the profile's DuckDB file and holds its write lock while it
# compiles (about a minute): lint on an in-memory DuckDB, never on $(DUCKDB_PATH).
LINT_PATHS ?= models analyses tests
lint: install ## sqlfluff on the models, analyses and tests
	DUCKDB_PATH=:memory: $(BIN)/sqlfluff lint --processes $(NPROC) $(LINT_PATHS)

docs: install ## `dbt docs generate` (the catalog and the DAG for `dbt docs serve`)
	$(BIN)/dbt docs generate

# Generated data (seed 42, SCALE default 1.0 = upstream sizes) goes to data/generated unless
# RAW_DATA_DIR is set in the environment or on the command line (never into the bundled sample).
GENERATE_DIR := $(if $(filter environment command line,$(origin RAW_DATA_DIR)),$(RAW_DATA_DIR),$(CURDIR)/data/generated)
generate: install ## generated raw data, SCALE=1.0 (upstream sizes), into data/generated
	$(BIN)/preftools generate --seed 42 --scale $(or $(SCALE),1.0) --out $(GENERATE_DIR)
	@echo "Build the warehouse on it with: RAW_DATA_DIR=$(GENERATE_DIR) make build"

# Real data goes to data/raw unless RAW_DATA_DIR is set in the environment (never into the sample).
FETCH_DIR := $(if $(filter environment command line,$(origin RAW_DATA_DIR)),$(RAW_DATA_DIR),$(CURDIR)/data/raw)
# Records each dataset's commit and files in $(FETCH_DIR)/fetch.lock.json; FETCH_ARGS pins, e.g.
# FETCH_ARGS="--lock other/fetch.lock.json" or FETCH_ARGS="--revision ultrafeedback=<sha>".
fetch: install ## the real datasets from the Hub into data/raw, with fetch.lock.json
	$(BIN)/preftools fetch --raw-data-dir $(FETCH_DIR) $(FETCH_ARGS)

# Full-scale benchmark: generates seed 42 at SCALE (default 1.0) once into benchmarks/cache/,
# then times the scan floor, three paired runs of a fresh `dbt build` and the writing peer
# (benchmarks/peer.sql + VADER on every core, then copying every mart into a fresh DuckDB file),
# the plain-Python reference, a rebuild, the reference's marts alone, and `make test` on a clean
# clone of HEAD; checks the reference's and the peer's outputs equal the marts, prints a table and
# the targets, writes benchmarks/results/scale<SCALE>.json. Then, at each scale of BENCH_SCALES
# (default 2.0 4.0; none when SCALE is given), three fresh `dbt build` runs alone (--build-only),
# each written to benchmarks/results/scale<scale>.json. `make bench BENCH_SCALES=` leaves them out;
# `.venv/bin/python -m benchmarks.run --skip-make-test` is the scale-1.0 part without `make test`.
BENCH_SCALES ?= $(if $(SCALE),,2.0 4.0)
bench: install ## the benchmark: the build against the writing peer, at scale 1.0 then BENCH_SCALES
	$(BIN)/python -m benchmarks.run --seed 42 --scale $(or $(SCALE),1.0)
	for scale in $(BENCH_SCALES); do $(BIN)/python -m benchmarks.run --seed 42 --scale $$scale --build-only || exit 1; done

# Every mart (tables of schema main) to Parquet in the Hub layout under $(EXPORT_DIR), plus manifest.json,
# every secret (seeds/pii_patterns.csv) replaced by [REDACTED_SECRET] (`preftools export --keep-secrets`
# keeps them; publish refuses that export). REDACT=personal: every email and public IP address too.
# CARD_NOTE=diff/diff.md: every dataset card ends with that note (`make diff`'s summary).
export: install ## every mart as Parquet + dataset card under exports/ (REDACT=personal, CARD_NOTE=diff/diff.md)
	@test -z "$(filter-out personal,$(REDACT))" || { echo "make export: REDACT=$(REDACT) is not known: REDACT=personal redacts emails and public IP addresses too (secrets are always redacted)" >&2; exit 2; }
	$(BIN)/preftools export $(if $(CARD_NOTE),--card-note "$(CARD_NOTE)") $(if $(filter personal,$(REDACT)),--redact-personal)

# One exported mart of $(EXPORT_DIR) to the Hugging Face Hub as a dataset repo (preftools/outputs/publish.py):
#   make publish REPO=org/name [MART=ultrafeedback_curated] [PRIVATE=1] [REVISION=<branch>]
publish: install ## one exported mart to the Hub: REPO=org/name [MART=...] [PRIVATE=1] [REVISION=...]
	@test -n "$(REPO)" || { echo "make publish needs REPO=org/name, the Hub dataset repo to upload to" >&2; exit 2; }
	$(BIN)/preftools publish --repo "$(REPO)" $(if $(MART),--mart "$(MART)") \
	  $(if $(filter-out 0 false no,$(PRIVATE)),--private) $(if $(REVISION),--revision "$(REVISION)")

# What changed between two builds (preftools/outputs/diff.py): OUT/diff.duckdb (every table and view of main
# and audits, row by row; the training pairs added, removed, flipped or moved between splits) and
# OUT/diff.md, the summary (also printed). Both files are opened read-only.
#   make diff OLD=old/warehouse.duckdb NEW=warehouse.duckdb [OUT=diff]
diff: install ## what changed between two builds: OLD=... NEW=... [OUT=diff]
	@test -n "$(OLD)" -a -n "$(NEW)" || { echo "make diff needs OLD=<warehouse.duckdb> NEW=<warehouse.duckdb>, the two builds to compare" >&2; exit 2; }
	$(BIN)/preftools diff "$(OLD)" "$(NEW)" --out "$(or $(OUT),diff)"

# The audit report: one self-contained HTML file (charts inline, opens offline) from the marts of
# $(DUCKDB_PATH), read-only; a mart that was not built shows as "not built". OUT overrides the path.
report: install ## the audit report, one HTML file that opens offline: reports/audit_report.html [OUT=...]
	$(BIN)/preftools report --out $(or $(OUT),reports/audit_report.html)

# Apache Spark: the same models through dbt-spark's session method (a local Spark in
# the dbt process; needs Java 17). test-spark builds the bundled sample on DuckDB and with
# --target spark, then compares every mart row for row (tests/python/test_spark.py).
.PHONY: install-spark test-spark
$(BIN)/.installed-spark: requirements-spark.txt $(BIN)/.installed
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-spark.txt
	touch $@

install-spark: $(BIN)/.installed-spark ## PySpark and dbt-spark (requirements-spark.txt)

test-spark: install-spark ## the bundled sample on Spark, every mart compared with DuckDB
	PYSPARK_PYTHON=$(CURDIR)/$(BIN)/python $(BIN)/python -m pytest tests/python/test_spark.py -m spark -v -s

# The same build on a Spark standalone cluster: a master and two workers as separate
# processes on 127.0.0.1 (pyspark's spark-class, free ports, printed), this dbt as the driver
# (--target spark_cluster), every mart compared with a DuckDB build; the cluster is stopped whatever
# happens (tests/python/test_spark_cluster.py). Sized for 2 cores / 24 GiB: per worker 1 core and
# SPARK_WORKER_MEMORY (6g), per executor SPARK_EXECUTOR_MEMORY (5g), driver SPARK_DRIVER_MEMORY (4g).
# The scale-4 comparison of the README (not in CI; data from `make generate SCALE=4 RAW_DATA_DIR=/tmp/scale4`):
#   make test-spark-cluster SPARK_TEST_RAW_DATA_DIR=/tmp/scale4 SPARK_CLUSTER_REPORT=/tmp/scale4.json
.PHONY: test-spark-cluster
test-spark-cluster: install-spark ## the same on a local Spark standalone cluster (a master, two workers)
	$(BIN)/python -m pytest tests/python/test_spark_cluster.py -m spark -v -s

clean: ## remove target/, logs/ and warehouse.duckdb
	rm -rf target logs dbt_packages warehouse.duckdb warehouse.duckdb.wal

# The real clients on the exports: datasets + TRL's DPOTrainer and RewardTrainer on a
# tiny random model. TRL pulls torch (several GB): its own requirements file, never in make build.
.PHONY: install-clients test-clients
$(BIN)/.installed-clients: requirements-clients.txt $(BIN)/.installed
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-clients.txt -c requirements.txt
	touch $@

install-clients: $(BIN)/.installed-clients ## datasets, TRL and torch for the training snippets (several GB; requirements-clients.txt)

test-clients: install-clients ## TRL and `datasets` on the exports (tests/python/test_clients.py)
	$(BIN)/python -m pytest tests/python/test_clients.py -m clients -v

# The settings dbt and the tools get (the environment's, else their defaults; relative paths are
# relative to the repo), and the Python a new venv would be made with.
config: ## the settings dbt and the tools get here (env vars, defaults, paths)
	@printf '%s\n' "PYTHON=$(PYTHON)" "VENV=$(VENV)" "RAW_DATA_DIR=$${RAW_DATA_DIR:-sample_data}" \
	  "DUCKDB_PATH=$${DUCKDB_PATH:-warehouse.duckdb}" "EXPORT_DIR=$${EXPORT_DIR:-exports}" \
	  "DUCKDB_THREADS=$${DUCKDB_THREADS:-unset (DuckDB default: every core)}" "DUCKDB_MEMORY_LIMIT=$${DUCKDB_MEMORY_LIMIT:-unset (DuckDB default: 80% of the memory)}" \
	  "DBT_THREADS=$${DBT_THREADS:-2}" "DBT_TARGET=$${DBT_TARGET:-duckdb}" "DBT_PROFILES_DIR=$$DBT_PROFILES_DIR" \
	  "FETCH_DIR=$(FETCH_DIR)" "GENERATE_DIR=$(GENERATE_DIR)"
