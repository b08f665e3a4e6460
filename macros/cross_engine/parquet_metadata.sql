{#- Rows per raw Parquet file of a source, from outside the staging path (the balance of
    row_accounting compares them with what the marts kept and rejected): one row per file,
    (source_file = the file's name without folder, n_rows).
    DuckDB reads the count from each file's footer (parquet_file_metadata: no data page is read);
    Spark has no footer function in SQL, so it counts the rows of each file. A file with no
    rows gives n_rows = 0 on DuckDB and no row on Spark: the same sum either way. -#}
{% macro raw_file_row_counts(source_name, table_name) -%}
    {#- the source's glob is read from the graph, which parsing does not have yet -#}
    {%- if not execute -%}
        {{ return('select cast(null as ' ~ dbt.type_string() ~ ') as source_file, cast(null as bigint) as n_rows') }}
    {%- endif -%}
    {{ return(adapter.dispatch('raw_file_row_counts', 'preference_warehouse')(source_name, table_name)) }}
{%- endmacro %}

{% macro default__raw_file_row_counts(source_name, table_name) -%}
    select
        {{ file_basename('file_name') }} as source_file,
        cast(num_rows as bigint) as n_rows
    from parquet_file_metadata({{ sql_string(spark_source_glob(source_name, table_name)) }})
{%- endmacro %}

{% macro spark__raw_file_row_counts(source_name, table_name) -%}
    {%- set glob = spark_source_glob(source_name, table_name) -%}
    select
        {{ file_basename('_metadata.file_path') }} as source_file,
        cast(count(*) as bigint) as n_rows
    from parquet.`{{ glob | replace('`', '``') }}`
    group by _metadata.file_path
{%- endmacro %}
