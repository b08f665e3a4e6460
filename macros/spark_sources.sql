{#- `source()` on Spark. The sources are Parquet globs under RAW_DATA_DIR, declared once in
    models/staging/*/_*__sources.yml as a DuckDB `read_parquet(...)` (config.external_location).
    On DuckDB (any target but spark) this macro is the builtin. On Spark it reads the same glob
    (the first quoted argument of that read_parquet call) with Spark's Parquet reader and adds
    the two columns DuckDB's reader adds:
      filename        the file's path (Spark gives it as a URI, `file:/...`; staging keeps
                      only the basename, which is the same on both engines);
      file_row_number 0-based row index within the file (`_metadata.row_index`, Parquet only).
    Files are unioned by column name (spark.sql.parquet.mergeSchema, set in the profile), as
    DuckDB's `union_by_name = true`. The builtin is always called too, so lineage (sources
    in the DAG, `dbt source freshness`, docs) is the same on both engines. -#}
{% macro source(source_name, table_name) %}
    {%- set relation = builtins.source(source_name, table_name) -%}
    {%- if target.type != 'spark' or not execute -%}
        {{ return(relation) }}
    {%- endif -%}
    {{ return(spark_source_subquery(source_name, table_name)) }}
{% endmacro %}

{#- The glob of a source, from its DuckDB external_location `read_parquet('<glob>', ...)`. -#}
{% macro spark_source_glob(source_name, table_name) %}
    {%- set node = graph.sources.get('source.' ~ project_name ~ '.' ~ source_name ~ '.' ~ table_name) -%}
    {%- if node is none -%}
        {{ exceptions.raise_compiler_error('spark source(): unknown source ' ~ source_name ~ '.' ~ table_name) }}
    {%- endif -%}
    {%- set location = node.config.get('external_location') or node.meta.get('external_location') or '' -%}
    {%- set found = modules.re.search("read_parquet\\(\\s*'((?:[^']|'')*)'", location) -%}
    {%- if not found -%}
        {{ exceptions.raise_compiler_error(
            'spark source(): ' ~ source_name ~ '.' ~ table_name
            ~ ' has no external_location of the form read_parquet(\'<glob>\', ...); found: ' ~ location) }}
    {%- endif -%}
    {{ return(found.group(1) | replace("''", "'")) }}
{% endmacro %}

{% macro spark_source_subquery(source_name, table_name) %}
    {%- set glob = spark_source_glob(source_name, table_name) -%}
    {#- A path in backticks: a backtick inside it is doubled. -#}
    {%- set quoted = '`' ~ (glob | replace('`', '``')) ~ '`' -%}
    {{ return(
        '(select *, _metadata.file_path as filename, _metadata.row_index as file_row_number from parquet.'
        ~ quoted ~ ')'
    ) }}
{% endmacro %}
