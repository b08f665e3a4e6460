-- One row describing the dbt invocation that built the warehouse: which seed, which raw
-- data (and where it came from: macros/raw_provenance.sql), which dataset groups, and the
-- near-duplicate rule's settings (the var near_duplicates with its defaults filled in:
-- macros/near_duplicates.sql; the optional var mixture_max_pairs_per_prompt_cluster) and whether
-- texts were scanned for secrets and personal data and pairs with personal data flagged (the vars
-- pii_scan, pii_flag_personal). Exports copy it into their manifest.json; the dataset cards read
-- the settings here.
{%- set near_duplicates = near_duplicate_settings() %}
{%- set max_per_cluster = mixture_max_pairs_per_prompt_cluster() %}
select
    '{{ invocation_id }}' as invocation_id,
    '{{ dbt_version }}' as dbt_version,
    '{{ target.name }}' as target_name,
    cast({{ var('random_seed') }} as bigint) as random_seed,
    {{ sql_string(raw_data_dir()) }} as raw_data_dir,
    {{ sql_string(raw_revisions()) }} as raw_revisions,
    {{ sql_string(enabled_dataset_groups() | join(',')) }} as datasets,
    cast('{{ run_started_at.strftime("%Y-%m-%d %H:%M:%S") }}' as timestamp) as built_at,
    {{ 'true' if near_duplicates.enabled else 'false' }} as near_duplicates_enabled,
    cast({{ near_duplicates.ngram }} as integer) as near_duplicates_ngram,
    cast({{ near_duplicates.threshold }} as double) as near_duplicates_threshold,
    {{ sql_string(near_duplicates.keep) }} as near_duplicates_keep,
    cast({{ near_duplicates.bands }} as integer) as near_duplicates_bands,
    cast({{ near_duplicates.rows }} as integer) as near_duplicates_rows,
    cast({{ max_per_cluster if max_per_cluster is not none else 'null' }} as integer) as mixture_max_pairs_per_prompt_cluster,
    {{ 'true' if pii_scan_enabled() else 'false' }} as pii_scan,
    {{ 'true' if pii_flag_personal() else 'false' }} as pii_flag_personal
