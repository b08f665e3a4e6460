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

test: install
	$(BIN)/python -m pytest

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

clean:
	rm -rf target logs dbt_packages warehouse.duckdb warehouse.duckdb.wal
