-- One row per raw data file (Parquet, JSON or CSV) of every enabled dataset and registry entry, with its row count read
-- from the file itself (Parquet: the footer; JSON: a count of its records), not through the
-- sources' readers or staging. row_accounting takes each dataset's raw rows from here, so its
-- balance test compares what the marts kept and rejected with the files, and fails on a raw row
-- lost or counted twice on the way. The files are the ones the sources read (the Hub's rule,
-- macros/raw_files.sql). It has no parent in the DAG on purpose: a count through source() would
-- be a count through the same reader it checks.
{%- set datasets = [] %}
{%- for key, spec in raw_contract().items() if spec.group in enabled_dataset_groups() %}
    {%- do datasets.append((key, raw_dataset_files(spec.hub_id) if execute else [])) %}
{%- endfor %}
{#- the `extra_datasets` entries, each its own dataset key (macros/extra_datasets.sql) -#}
{%- for e in extra_datasets() %}
    {%- do datasets.append((e.name, extra_dataset_files(e) if execute else [])) %}
{%- endfor %}
{#- the `eval_sets` entries (macros/eval_sets.sql), each its own key -#}
{%- for e in eval_sets() %}
    {%- do datasets.append((e.name, eval_set_files(e) if execute else [])) %}
{%- endfor %}

with

{% for key, files in datasets %}
{{ key }}_files as (

    select
        '{{ key }}' as dataset_key,
        source_file,
        n_rows
    {% if files -%}
    from ({{ raw_file_row_counts(files) }}) as counts
    {%- else -%}
    from (select cast(null as {{ dbt.type_string() }}) as source_file, cast(null as bigint) as n_rows) as counts
    where false
    {%- endif %}

),

{% endfor %}
unioned as (

    {% for key, files in datasets %}
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
