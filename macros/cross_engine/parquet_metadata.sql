{#- Rows per raw data file, from outside the staging path (the balance of row_accounting compares
    them with what the marts kept and rejected): one row per file (source_file = the file's name,
    n_rows). `files` as raw_dataset_files() gives them.
    DuckDB reads a Parquet file's count from its footer (parquet_file_metadata: no data page is
    read) and counts a JSON or CSV file's rows with its reader (raw_file_reader; a CSV's header row
    is not a row); Spark counts the rows of each file. A file with no rows gives n_rows = 0. -#}
{% macro raw_file_row_counts(files) -%}
    {{ return(adapter.dispatch('raw_file_row_counts', 'preference_warehouse')(files)) }}
{%- endmacro %}

{% macro default__raw_file_row_counts(files) -%}
    {%- for f in files %}
    select
        {{ sql_string(f.path.split('/')[-1]) }} as source_file,
        {% if f.format == 'parquet' -%}
        (select cast(num_rows as bigint) from parquet_file_metadata({{ sql_string(f.full) }})) as n_rows
        {%- else -%}
        (select count(*) from {{ raw_file_reader(f) }}) as n_rows
        {%- endif %}
    {% if not loop.last %}union all{% endif %}
    {%- endfor %}
{%- endmacro %}

{% macro spark__raw_file_row_counts(files) -%}
    {%- for f in files %}
    select
        '{{ f.path.split('/')[-1] | replace("'", "\\'") }}' as source_file,
        cast(count(*) as bigint) as n_rows
    from {{ spark_file_source(f) }}
    {% if not loop.last %}union all{% endif %}
    {%- endfor %}
{%- endmacro %}
