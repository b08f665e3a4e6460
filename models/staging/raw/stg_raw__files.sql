-- One row per raw Parquet file of every enabled dataset, with its row count read from the file
-- itself (DuckDB: the footer; Spark: a count), not through the staging models. row_accounting
-- takes each dataset's raw rows from here, so its balance test compares what the marts kept and
-- rejected with the files, and fails on a raw row lost or counted twice on the way.
{%- set datasets = [] %}
{%- for key, spec in raw_contract().items() if spec.group in enabled_dataset_groups() %}
    {%- do datasets.append((key, spec)) %}
    {#- lineage: the file is read here as a source (the row counts bypass the source's reader) #}
    {%- do source(spec.source_name, spec.table_name) %}
{%- endfor %}

with

{% for key, spec in datasets %}
{{ key }}_files as (

    select
        '{{ key }}' as dataset_key,
        '{{ spec.hub_id }}' as hub_id,
        source_file,
        n_rows
    from ({{ raw_file_row_counts(spec.source_name, spec.table_name) }}) as counts

),

{% endfor %}
unioned as (

    {% for key, spec in datasets %}
    select * from {{ key }}_files
    {% if not loop.last %}union all{% endif %}
    {% endfor %}
    {% if not datasets %}
    select
        cast(null as {{ dbt.type_string() }}) as dataset_key, cast(null as {{ dbt.type_string() }}) as hub_id,
        cast(null as {{ dbt.type_string() }}) as source_file, cast(null as bigint) as n_rows
    where false
    {% endif %}

)

select * from unioned
