-- One row describing the dbt invocation that built the warehouse: which seed, which raw
-- data (and where it came from: macros/raw_provenance.sql), which dataset groups. Exports copy
-- it into their manifest.json.
select
    '{{ invocation_id }}' as invocation_id,
    '{{ dbt_version }}' as dbt_version,
    '{{ target.name }}' as target_name,
    cast({{ var('random_seed') }} as bigint) as random_seed,
    {{ sql_string(raw_data_dir()) }} as raw_data_dir,
    {{ sql_string(raw_revisions()) }} as raw_revisions,
    {{ sql_string(enabled_dataset_groups() | join(',')) }} as datasets,
    cast('{{ run_started_at.strftime("%Y-%m-%d %H:%M:%S") }}' as timestamp) as built_at
