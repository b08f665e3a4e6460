{#- `source()` for the raw datasets, on every engine: a subquery over the files the Hub's rule picks
    in RAW_DATA_DIR/<org>/<dataset>/ (macros/raw_files.sql), Parquet, JSON or CSV, each row with the
    file's repo path (`filename`) and its 0-based row number in the file (`file_row_number`).
    The builtin is always called too, so lineage (sources in the DAG, docs, exposures) is dbt's own.
    Not dbt-duckdb's `external_location`: which files a source reads is the Hub's rule (the card's
    configs, splits and shards, JSON or Parquet), not one path pattern, and Spark reads the same
    files through this macro. -#}
{% macro source(source_name, table_name) %}
    {%- set relation = builtins.source(source_name, table_name) -%}
    {%- if not execute -%}{{ return(relation) }}{%- endif -%}
    {%- for key, spec in raw_contract().items() if spec.source_name == source_name and spec.table_name == table_name -%}
        {{ return(raw_files_relation(key)) }}
    {%- endfor -%}
    {{ return(relation) }}
{% endmacro %}
