# Preference-data warehouse: dbt on DuckDB.
#   make build   venv + pinned install + `dbt build` on the bundled sample into warehouse.duckdb
#   make test    the whole test suite (pytest: generator, dbt build on fresh generated data, audits, lint...)
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin

export DBT_PROFILES_DIR := $(CURDIR)
export RAW_DATA_DIR ?= $(CURDIR)/sample_data
export DUCKDB_PATH ?= $(CURDIR)/warehouse.duckdb
export EXPORT_DIR ?= $(CURDIR)/exports

.PHONY: install build test lint docs generate fetch export report bench clean

$(BIN)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

install: $(BIN)/.installed

build: install
	$(BIN)/dbt build

test: install lint
	$(BIN)/python -m pytest -m "not spark and not clients"

lint: install
	$(BIN)/sqlfluff lint models analyses tests

docs: install
	$(BIN)/dbt docs generate

generate: install
	$(BIN)/python -m preftools.generate --seed 42 --scale $(or $(SCALE),1.0) --out $(RAW_DATA_DIR)

# Real data goes to data/raw unless RAW_DATA_DIR is set in the environment (never into the sample).
FETCH_DIR := $(if $(filter environment command line,$(origin RAW_DATA_DIR)),$(RAW_DATA_DIR),$(CURDIR)/data/raw)
fetch: install
	$(BIN)/python -m preftools.fetch --raw-data-dir $(FETCH_DIR)

# Full-scale benchmark (issue 7): generates seed 42 at SCALE (default 1.0) once into benchmarks/cache/,
# then times the scan floor, `dbt build`, the plain-Python reference and a build at memory_limit 2GB,
# checks the reference's outputs equal the marts, prints a table, writes benchmarks/results/*.json.
bench: install
	$(BIN)/python -m benchmarks.run --seed 42 --scale $(or $(SCALE),1.0)

# Every mart (tables of schema main) to Parquet in the Hub layout under $(EXPORT_DIR), plus manifest.json.
export: install
	$(BIN)/python -m preftools.export

# The audit report: one self-contained HTML file (charts inline, opens offline) from the marts of
# $(DUCKDB_PATH), read-only; a mart that was not built shows as "not built". OUT overrides the path.
report: install
	$(BIN)/python -m preftools.report --out $(or $(OUT),reports/audit_report.html)

# Apache Spark (issue 10): the same models through dbt-spark's session method (a local Spark in
# the dbt process; needs Java 17). test-spark builds the bundled sample on DuckDB and with
# --target spark, then compares every mart row for row (tests/python/test_spark.py).
.PHONY: install-spark test-spark
$(BIN)/.installed-spark: requirements-spark.txt $(BIN)/.installed
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-spark.txt
	touch $@

install-spark: $(BIN)/.installed-spark

test-spark: install-spark
	PYSPARK_PYTHON=$(CURDIR)/$(BIN)/python $(BIN)/python -m pytest tests/python/test_spark.py -m spark -v -s

clean:
	rm -rf target logs dbt_packages warehouse.duckdb warehouse.duckdb.wal

# The real clients on the exports (issue 13): datasets + TRL's DPOTrainer and RewardTrainer on a
# tiny random model. TRL pulls torch (several GB): its own requirements file, never in make build.
.PHONY: install-clients test-clients
$(BIN)/.installed-clients: requirements-clients.txt $(BIN)/.installed
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-clients.txt -c requirements.txt
	touch $@

install-clients: $(BIN)/.installed-clients

test-clients: install-clients
	$(BIN)/python -m pytest tests/python/test_clients.py -m clients -v
