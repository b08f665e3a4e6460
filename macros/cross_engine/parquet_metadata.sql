{#- Rows per raw Parquet file matching `glob`, from outside the staging path (the balance of
    row_accounting compares them with what the marts kept and rejected): one row per file,
    (source_file = the file's name without folder, n_rows).
    DuckDB reads the count from each file's footer (parquet_file_metadata: no data page is read);
    Spark has no footer function in SQL, so it counts the rows of each file. A file with no
    rows gives n_rows = 0 on DuckDB and no row on Spark: the same sum either way. -#}
{% macro raw_file_row_counts(glob) -%}
    {{ return(adapter.dispatch('raw_file_row_counts', 'preference_warehouse')(glob)) }}
{%- endmacro %}

{% macro default__raw_file_row_counts(glob) -%}
    select
        {{ file_basename('file_name') }} as source_file,
        cast(num_rows as bigint) as n_rows
    from parquet_file_metadata({{ sql_string(glob) }})
{%- endmacro %}

{% macro spark__raw_file_row_counts(glob) -%}
    select
        {{ file_basename('_metadata.file_path') }} as source_file,
        cast(count(*) as bigint) as n_rows
    from parquet.`{{ glob | replace('`', '``') }}`
    group by _metadata.file_path
{%- endmacro %}
