-- One row per raw Parquet file of every enabled dataset, with its row count read from the file
-- itself (DuckDB: the footer; Spark: a count), not through the sources' readers or staging.
-- row_accounting takes each dataset's raw rows from here, so its balance test compares what the
-- marts kept and rejected with the files, and fails on a raw row lost or counted twice on the way.
-- The files are the ones the sources read: RAW_DATA_DIR/<hub_id>/data/*.parquet (the hub ids of
-- preftools/contract.py, as the sources' locations). It has no parent in the DAG on purpose: a
-- count through source() would be a count through the same reader it checks.
{%- set datasets = [] %}
{%- for key, spec in raw_contract().items() if spec.group in enabled_dataset_groups() %}
    {%- do datasets.append((key, raw_data_dir() ~ '/' ~ spec.hub_id ~ '/data/*.parquet')) %}
{%- endfor %}

with

{% for key, glob in datasets %}
{{ key }}_files as (

    select
        '{{ key }}' as dataset_key,
        source_file,
        n_rows
    from ({{ raw_file_row_counts(glob) }}) as counts

),

{% endfor %}
unioned as (

    {% for key, glob in datasets %}
    select * from {{ key }}_files
    {% if not loop.last %}union all{% endif %}
    {% endfor %}
    {% if not datasets %}
    select
        cast(null as {{ dbt.type_string() }}) as dataset_key,
        cast(null as {{ dbt.type_string() }}) as source_file,
        cast(null as bigint) as n_rows
    where false
    {% endif %}

)

select * from unioned
