"""Tooling for the preference-data warehouse: sample-data generator, Hub fetcher,
raw-data contract and benchmark helpers. The warehouse itself is the dbt project."""

__version__ = "0.1.0"
