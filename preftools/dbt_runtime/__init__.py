"""What the dbt build itself imports: the profile's DuckDB plugin and the VADER scoring of the Python model."""
