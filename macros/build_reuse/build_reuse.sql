{#- Reuse of unchanged nodes: a `dbt build` on unchanged inputs does not recompute
    what it built before. DuckDB only: on Spark none of these macros is called (the hooks in
    dbt_project.yml test target.type first; the materialization overrides in
    materializations.sql are declared for adapter='duckdb').

    The rule. Every node gets a fingerprint:
      - a source: the raw data files it reads (the Hub's rule, macros/raw_files.sql): for each
        file, its path, size and modification time (read_blob projected to those columns reads
        no content; DuckDB gives the time in microseconds) and, for Parquet, its footer (parquet_file_metadata: rows, row groups, writer, footer size;
        parquet_metadata: each column chunk's sizes, value counts and min/max statistics). The
        footer part is there because a file rewritten within the file system's timestamp
        granularity (a few ms) with the same size would otherwise look unchanged; a rewrite
        that also keeps every chunk's sizes and statistics is not detected. Computed by the
        on-run-start hook (a file rewritten while the build runs is seen by the next build).
        The paths hold RAW_DATA_DIR, which is also in the staging SQL: a build on another
        folder rebuilds everything downstream of the sources, whatever the files hold.
      - a model, seed, data test or unit test: md5 of (its compiled code - SQL or Python - with the
        warehouse's database name taken out, so a copied/renamed warehouse file still matches;
        its whole config; its columns and description (persist_docs writes them as comments);
        for a seed the CSV's checksum; the fingerprints of its direct parents; and of every
        source one of whose files appears literally in its compiled code - stg_raw__files reads the
        raw footers without a source() on purpose). A unit test's: of its compiled code (the
        model's SQL over its fixtures) and config; it has no parents.
      A parent's fingerprint is the one recorded for it in the state table: the one of the
      build that made the relation as it is now (this run's, when the parent ran before it,
      or an earlier run's when the parent is not selected: `dbt build -s x+` stays correct).
      A parent without a recorded fingerprint makes the child's unknown: it is built.

    A table model, view model or seed is reused (not run at all; the run result says REUSED,
    the log says "build_reuse: reused <id> (unchanged inputs)") when reuse is on, its config
    does not say meta.build_reuse: false, its fingerprint equals the recorded one and its
    relation exists, of its kind, with a signature an on-run-end has recorded
    (build_reuse_storage_signatures: a table's storage, a view's columns).
    Relations changed outside dbt: the on-run-start hook compares every table's and view's
    signature with the one recorded after its build; one whose signature moved (an insert,
    delete or update of a table, a view replaced by one with other columns) gets a new
    fingerprint ("changed outside dbt"), so it is built again when selected and its children
    (and their tests) are built again even when it is not. A view's fingerprint keeps the
    database name where its SQL names it (DuckDB stores a view's SQL as written): such a view
    is recreated in a renamed warehouse file.
    A data test or unit test is reused, reported as passing, when its fingerprint equals the
    recorded one and the recorded status is pass; warn, fail and error always run again.
    Reuse is off with --full-refresh or --vars '{reuse_unchanged: false}'; fingerprints are
    recorded either way.

    The state: table meta.dbt_build_reuse in the warehouse itself (copy the file and it
    travels; drop it and everything is rebuilt), one row appended per node built (rows are
    only appended while nodes run, so dbt's threads never conflict), the latest row per node
    wins; the on-run-end hook (single-threaded) deletes older rows, checkpoints and writes the
    storage signatures of the tables and views the run built. If meta.warehouse_build_info
    (rebuilt by every full build) names an invocation the state does not know, a build ran
    without recording (older code, reuse macros missing): the state is cleared and everything
    is rebuilt. So it is when the state was recorded by another DuckDB or dbt version (its
    `engine` row).

    Why not dbt's own state selection. `dbt source freshness` (each source's loaded_at_query:
    max(last_modified) of its raw files, read_blob) then
    `dbt build --select "state:modified+ source_status:fresher+" --state <last good run>` skips as
    much on unchanged inputs (scale 1.0: 8.8 s for both commands against 9.1 s for a build that
    reuses everything) and, after a changed raw file, gives the tables a clean build gives (35 s
    here, 38 s there). It misses two changes users make: a var (`--vars '{random_seed: 7}'`
    selects no node, where 145 nodes read the seed; dbt documents that state:modified does not
    see var or env_var values) and a deleted shard (the newest modification time does not move:
    no node selected). Both leave stale tables, so the fingerprints above stay. -#}

{% macro build_reuse_relation() -%}
    {{ return(api.Relation.create(database=target.database, schema='meta', identifier='dbt_build_reuse', type='table')) }}
{%- endmacro %}

{#- Reuse allowed in this invocation (fingerprints are recorded even when it is not). -#}
{% macro build_reuse_active() -%}
    {%- set setting = var('reuse_unchanged', true) -%}
    {%- set off = setting in [false, 0, 'false', 'False', 'FALSE', '0', 'no', 'off'] -%}
    {{ return(target.type == 'duckdb' and not off and not flags.FULL_REFRESH) }}
{%- endmacro %}

{% macro build_reuse_commands() -%}
    {{ return(['build', 'run', 'test', 'seed', 'snapshot', 'retry']) }}
{%- endmacro %}

{#- The raw data files a source reads (raw_dataset_files), [] for a source outside the contract. -#}
{% macro build_reuse_source_files(source_node) -%}
    {%- for key, spec in raw_contract().items()
            if spec.source_name == source_node.source_name and spec.table_name == source_node.name -%}
        {{ return(raw_dataset_files(spec.hub_id)) }}
    {%- endfor -%}
    {{ return([]) }}
{%- endmacro %}

{#- The fingerprint of a source's raw data files (see the header). -#}
{% macro build_reuse_files_fingerprint(files) -%}
    {%- if files | length == 0 -%}{{ return('no files') }}{%- endif -%}
    {%- set quoted = [] -%}
    {%- set parquet = [] -%}
    {%- for f in files -%}
        {%- do quoted.append(sql_string(f.full)) -%}
        {%- if f.format == 'parquet' -%}{%- do parquet.append(sql_string(f.full)) -%}{%- endif -%}
    {%- endfor -%}
    {%- set file_list = '[' ~ (quoted | join(', ')) ~ ']' -%}
    {%- set query -%}
        select string_agg(concat_ws('|', filename, size, epoch_us(last_modified)), chr(10) order by filename)
        from read_blob({{ file_list }})
    {%- endset -%}
    {%- set parts = [run_query(query).columns[0].values()[0]] -%}
    {%- if parquet -%}
        {%- set parquet_list = '[' ~ (parquet | join(', ')) ~ ']' -%}
        {%- set query -%}
            with footers as (
                select file_name, num_rows, num_row_groups, created_by, footer_size, file_size_bytes
                from parquet_file_metadata({{ parquet_list }})
            ),
            chunks as (
                select
                    file_name,
                    string_agg(
                        concat_ws(':', row_group_id, column_id, row_group_num_rows, num_values,
                                  total_compressed_size, total_uncompressed_size,
                                  coalesce(stats_min, ''), coalesce(stats_max, ''), coalesce(stats_null_count, -1)),
                        ';' order by row_group_id, column_id
                    ) as chunk_list
                from parquet_metadata({{ parquet_list }})
                group by file_name
            )
            select string_agg(
                concat_ws('|', f.file_name, f.num_rows, f.num_row_groups, f.created_by,
                          f.footer_size, f.file_size_bytes, c.chunk_list),
                chr(10) order by f.file_name
            )
            from footers as f
            left join chunks as c on c.file_name = f.file_name
        {%- endset -%}
        {%- do parts.append(run_query(query).columns[0].values()[0]) -%}
    {%- endif -%}
    {{ return(local_md5(parts | join('|'))) }}
{%- endmacro %}

{#- unique_id -> "schema"."name" of every table model, view model and seed of the project. -#}
{% macro build_reuse_relation_nodes() -%}
    {%- set out = {} -%}
    {%- for uid, node in graph.nodes.items() -%}
        {%- if node.resource_type == 'seed' or (node.resource_type == 'model' and node.config.materialized in ('table', 'view')) -%}
            {%- do out.update({uid: adapter.quote(node.schema) ~ '.' ~ adapter.quote(node.alias or node.name)}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(out) }}
{%- endmacro %}

{#- unique_id -> signature, for those of `relations` (unique_id -> "schema"."name") that exist.
    A view's: md5 of its columns' names and types (not of its SQL: DuckDB prints a view's SQL
    differently once the file is reopened, e.g. TEXT as VARCHAR). A table's: md5 of its storage
    layout (pragma_storage_info: row groups, segments of each column path - validity and nested
    columns share a column_id, so column_path is part of the key and of the order -, their row
    counts, blocks and offsets, pending updates) and the table's row count (a delete is kept as
    deletion info beside unchanged segments: only the count shows it). Metadata and the row
    count only, no column data read. Unchanged while the table is (another table built or
    dropped beside it does not move its blocks), changed by any insert, delete or update of it
    once checkpointed (and by one still in memory: its segments show has_updates / are not
    persistent). -#}
{% macro build_reuse_storage_signatures(relations) -%}
    {%- set out = {} -%}
    {#- "schema"."name" -> 'table', or a view's signature -#}
    {%- set existing = {} -%}
    {%- for row in run_query(
            "select schema_name, table_name, 'table' from duckdb_tables() where database_name = current_database()"
            ~ " union all select c.schema_name, c.table_name,"
            ~ " md5(string_agg(c.column_name || ' ' || c.data_type, ', ' order by c.column_index))"
            ~ " from duckdb_columns() as c join duckdb_views() as v on v.database_name = c.database_name"
            ~ " and v.schema_name = c.schema_name and v.view_name = c.table_name"
            ~ " where c.database_name = current_database() and not v.internal group by all").rows -%}
        {%- do existing.update({adapter.quote(row[0]) ~ '.' ~ adapter.quote(row[1]): row[2]}) -%}
    {%- endfor -%}
    {%- set parts = [] -%}
    {%- for uid, rel in relations.items() if rel in existing -%}
        {%- if existing[rel] != 'table' -%}
            {%- do out.update({uid: existing[rel]}) -%}
        {%- else -%}
            {%- do parts.append(
                'select ' ~ sql_string(uid) ~ ' as unique_id, md5(coalesce(string_agg(concat_ws(\':\', row_group_id, column_id, column_path,'
                ~ ' segment_id, start, count, block_id, block_offset, has_updates, persistent), \';\''
                ~ ' order by row_group_id, column_id, column_path, segment_id), \'\')'
                ~ ' || \':rows:\' || (select count(*) from ' ~ rel ~ '))'
                ~ ' as storage from pragma_storage_info(' ~ sql_string(rel) ~ ')') -%}
        {%- endif -%}
    {%- endfor -%}
    {%- for batch in parts | batch(50) -%}
        {%- for row in run_query(batch | join(' union all ')).rows -%}
            {%- do out.update({row[0]: row[1]}) -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return(out) }}
{%- endmacro %}

{#- on-run-start: the state table, the reset check, the sources' fingerprints. -#}
{% macro build_reuse_on_run_start() %}
    {%- if not execute or flags.WHICH not in build_reuse_commands() -%}{{ return('') }}{%- endif -%}
    {%- set state = build_reuse_relation() -%}
    {%- call statement('build_reuse_create', auto_begin=False) -%}
        create schema if not exists {{ state.include(database=False).schema }};
        create table if not exists {{ state }} (
            unique_id varchar,
            fingerprint varchar,
            status varchar,
            storage varchar,
            invocation_id varchar,
            recorded_at timestamp
        )
    {%- endcall -%}
    {#- a build that did not record (meta.warehouse_build_info from an unknown invocation) -#}
    {%- set info = adapter.get_relation(database=target.database, schema='meta', identifier='warehouse_build_info') -%}
    {%- if info is not none -%}
        {%- set unknown = run_query(
            'select count(*) from ' ~ info ~ ' as i where not exists (select 1 from ' ~ state
            ~ ' as s where s.invocation_id = i.invocation_id)').columns[0].values()[0] -%}
        {%- if unknown > 0 -%}
            {%- do log('build_reuse: meta.warehouse_build_info comes from a build that recorded no fingerprints: nothing is reused', info=True) -%}
            {%- do run_query('delete from ' ~ state) -%}
        {%- endif -%}
    {%- endif -%}
    {#- another DuckDB or dbt version than the one that recorded the state: nothing is reused -#}
    {%- set engine = 'duckdb ' ~ run_query('select version()').columns[0].values()[0] ~ ', dbt ' ~ dbt_version -%}
    {%- set recorded_engine = build_reuse_lookup(['engine']).get('engine', {}).get('fingerprint') -%}
    {%- if recorded_engine != engine -%}
        {%- if recorded_engine is not none -%}
            {%- do log('build_reuse: the warehouse was built with ' ~ recorded_engine ~ ', this is ' ~ engine ~ ': nothing is reused', info=True) -%}
            {%- do run_query('delete from ' ~ state) -%}
        {%- endif -%}
        {%- do build_reuse_record('engine', engine, 'engine', none) -%}
    {%- endif -%}
    {#- tables and views changed outside dbt since their signature was recorded: a new
        fingerprint, so they and everything downstream are built again (or, when not selected,
        their children) -#}
    {%- set relations = build_reuse_relation_nodes() -%}
    {%- set latest = build_reuse_lookup(relations.keys() | list) -%}
    {%- set current = build_reuse_storage_signatures(relations) -%}
    {%- for uid, row in latest.items() -%}
        {%- if row.storage is not none and uid in current and current[uid] != row.storage -%}
            {%- do log('build_reuse: ' ~ relations[uid] ~ ' was changed outside dbt: it and its descendants are rebuilt', info=True) -%}
            {%- do build_reuse_record(uid, 'changed outside dbt: ' ~ invocation_id, 'changed', current[uid]) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set latest = build_reuse_lookup(graph.sources.keys() | list) -%}
    {%- for source_id, source_node in graph.sources.items() -%}
        {%- set fingerprint = build_reuse_files_fingerprint(build_reuse_source_files(source_node)) -%}
        {%- if latest.get(source_id, {}).get('fingerprint') != fingerprint -%}
            {%- do build_reuse_record(source_id, fingerprint, 'source', none) -%}
        {%- endif -%}
    {%- endfor -%}
    {#- the `extra_datasets` entries' files, as a source's (they have no source node) -#}
    {%- set extra_ids = [] -%}
    {%- for e in extra_datasets() -%}{%- do extra_ids.append('extra_dataset.' ~ e.name) -%}{%- endfor -%}
    {%- set latest = build_reuse_lookup(extra_ids) -%}
    {%- for e in extra_datasets() -%}
        {%- set fingerprint = build_reuse_files_fingerprint(extra_dataset_files(e)) -%}
        {%- if latest.get('extra_dataset.' ~ e.name, {}).get('fingerprint') != fingerprint -%}
            {%- do build_reuse_record('extra_dataset.' ~ e.name, fingerprint, 'source', none) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return('') }}
{% endmacro %}

{#- on-run-end: drop superseded rows, say what was reused. -#}
{% macro build_reuse_on_run_end(results) %}
    {%- if not execute or flags.WHICH not in build_reuse_commands() -%}{{ return('') }}{%- endif -%}
    {%- set state = build_reuse_relation() -%}
    {%- do run_query(
        'delete from ' ~ state ~ ' as s using (select unique_id, max(recorded_at) as last_at from ' ~ state
        ~ ' group by unique_id) as l where s.unique_id = l.unique_id and s.recorded_at < l.last_at') -%}
    {#- the unit tests that ran and passed dbt's comparison -#}
    {%- set passed = [] -%}
    {%- for r in results if r.node.resource_type == 'unit_test' and (r.status | string) == 'pass' -%}
        {%- do passed.append(sql_string(r.node.unique_id)) -%}
    {%- endfor -%}
    {%- if passed -%}
        {%- do run_query('update ' ~ state ~ " set status = 'pass' where status = 'ran' and invocation_id = "
            ~ sql_string(invocation_id) ~ ' and unique_id in (' ~ (passed | join(', ')) ~ ')') -%}
    {%- endif -%}
    {#- the signatures of the tables and views this run built, after a checkpoint (so that they
        are the blocks the next run finds; a reused one keeps the signature it was checked
        against at on-run-start) -#}
    {%- set relations = build_reuse_relation_nodes() -%}
    {%- set done = {} -%}
    {%- for r in results if r.node.unique_id in relations and (r.status | string) == 'success'
            and (r.adapter_response or {}).get('code') != 'REUSED' -%}
        {%- do done.update({r.node.unique_id: relations[r.node.unique_id]}) -%}
    {%- endfor -%}
    {%- if done -%}
        {%- do run_query('checkpoint') -%}
        {%- set values = [] -%}
        {%- for uid, sig in build_reuse_storage_signatures(done).items() -%}
            {%- do values.append('(' ~ sql_string(uid) ~ ', ' ~ sql_string(sig) ~ ')') -%}
        {%- endfor -%}
        {%- if values -%}
            {%- do run_query(
                'update ' ~ state ~ ' as s set storage = v.sig from (values ' ~ (values | join(', ')) ~ ') as v(uid, sig)'
                ~ ' where s.unique_id = v.uid and s.storage is null') -%}
        {%- endif -%}
    {%- endif -%}
    {%- set counts = {'model': 0, 'seed': 0, 'test': 0, 'run': 0} -%}
    {%- for r in results -%}
        {%- set kind = 'test' if (r.node.resource_type | string) == 'unit_test' else (r.node.resource_type | string) -%}
        {%- if (r.adapter_response or {}).get('code') == 'REUSED' and kind in counts -%}
            {%- do counts.update({kind: counts[kind] + 1}) -%}
        {%- elif kind in ('model', 'seed', 'test') -%}
            {%- do counts.update({'run': counts.run + 1}) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- do log('build_reuse: reused ' ~ counts.model ~ ' models, ' ~ counts.seed ~ ' seeds, ' ~ counts.test
        ~ ' passing tests (unchanged inputs); ' ~ counts.run ~ ' models/seeds/tests ran'
        ~ ('' if build_reuse_active() else ' (reuse off)'), info=True) -%}
    {{ return('') }}
{% endmacro %}

{#- unique_id -> {fingerprint, status, storage, invocation_id} of the latest row of each id. -#}
{% macro build_reuse_lookup(unique_ids) -%}
    {%- set out = {} -%}
    {%- if not unique_ids -%}{{ return(out) }}{%- endif -%}
    {%- set ids = [] -%}
    {%- for u in unique_ids -%}{%- do ids.append(sql_string(u)) -%}{%- endfor -%}
    {%- set rows = run_query(
        'select unique_id, fingerprint, status, storage, invocation_id from ' ~ build_reuse_relation()
        ~ ' where unique_id in (' ~ (ids | join(', ')) ~ ')'
        ~ ' qualify row_number() over (partition by unique_id order by recorded_at desc) = 1').rows -%}
    {%- for row in rows -%}
        {%- do out.update({row[0]: {'fingerprint': row[1], 'status': row[2], 'storage': row[3], 'invocation_id': row[4]}}) -%}
    {%- endfor -%}
    {{ return(out) }}
{%- endmacro %}

{% macro build_reuse_record(unique_id, fingerprint, status, storage=none) -%}
    {%- if fingerprint is none -%}{{ return('') }}{%- endif -%}
    {#- in the node's transaction if one is open (a test's), else a new one; committed here -#}
    {%- call statement('build_reuse_record', auto_begin=True) -%}
        insert into {{ build_reuse_relation() }} values ({{ sql_string(unique_id) }}, {{ sql_string(fingerprint) }},
            {{ sql_string(status) }}, {{ sql_string(storage) if storage is not none else 'null' }}, {{ sql_string(invocation_id) }}, now())
    {%- endcall -%}
    {%- do adapter.commit() -%}
{%- endmacro %}

{#- The sources whose files the code reads without source() (e.g. parquet_file_metadata): the code
    names a file in the source's folder, RAW_DATA_DIR/<hub_id>/ (no file listing: this runs for
    every node). -#}
{% macro build_reuse_sources_in_code(code) -%}
    {%- set found = [] -%}
    {%- set folder = "'" ~ (raw_data_dir() ~ '/') | replace("'", "''") -%}
    {#- most code names no raw file at all: then nothing more to look for -#}
    {%- if folder not in code -%}{{ return(found) }}{%- endif -%}
    {%- set contract = raw_contract() -%}
    {%- for source_id, source_node in graph.sources.items() -%}
        {%- for key, spec in contract.items()
                if spec.source_name == source_node.source_name and spec.table_name == source_node.name
                and (folder ~ (spec.hub_id ~ '/') | replace("'", "''")) in code -%}
            {%- do found.append(source_id) -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- for e in extra_datasets() if (folder ~ (e.hub_id ~ '/') | replace("'", "''")) in code -%}
        {%- do found.append('extra_dataset.' ~ e.name) -%}
    {%- endfor -%}
    {{ return(found) }}
{%- endmacro %}

{#- What a materialization needs: {fingerprint (none: unknown), reuse (bool), reason, recorded}.
    `relation`: the node's table or view, of its type (checked to exist as that), or none (a test). -#}
{% macro build_reuse_decide(node, relation) -%}
    {#- the database name (the warehouse file's stem) as a quoted identifier, in SQL and in a
        Python model's generated preamble (database = "w", refs as \"w\".\"schema\"...), taken
        out; kept in a view's: DuckDB stores the view's SQL as written -#}
    {%- set code = node.get('compiled_code') or '' -%}
    {%- if node.config.materialized != 'view' -%}
        {%- set code = code | replace('\\"' ~ target.database ~ '\\"', '<database>')
            | replace('"' ~ target.database ~ '"', '<database>') -%}
    {%- endif -%}
    {#- a unit test reads fixtures, not its parents: its compiled code (the model's SQL over the
        fixtures) is all it depends on -#}
    {%- set parents = [] if node.resource_type == 'unit_test'
        else (node.depends_on.nodes | list) + build_reuse_sources_in_code(code) -%}
    {%- set parents = parents | unique | sort -%}
    {%- set recorded = build_reuse_lookup(parents + [node.unique_id]) -%}
    {%- set parent_fingerprints = [] -%}
    {%- set missing = [] -%}
    {%- for p in parents -%}
        {%- if p in recorded -%}
            {%- do parent_fingerprints.append([p, recorded[p].fingerprint]) -%}
        {%- else -%}
            {%- do missing.append(p) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- set payload = {
        'rule': 1,
        'unique_id': node.unique_id,
        'code': code,
        'config': node.config,
        'columns': node.get('columns', {}),
        'description': node.get('description', ''),
        'checksum': node.checksum.checksum if node.resource_type == 'seed' else '',
        'parents': parent_fingerprints,
    } -%}
    {%- set serialized = tojson(payload, sort_keys=True) -%}
    {%- set fingerprint = none if (missing or serialized is none) else local_md5(serialized) -%}
    {%- set own = recorded.get(node.unique_id) -%}
    {%- set decision = {'fingerprint': fingerprint, 'reuse': false, 'reason': '', 'recorded': own} -%}
    {%- if not build_reuse_active() -%}
        {%- do decision.update({'reason': 'reuse off'}) -%}
    {%- elif (node.config.get('meta') or {}).get('build_reuse', true) in [false, 'false', 'never'] -%}
        {%- do decision.update({'reason': 'always built (meta.build_reuse: false)'}) -%}
    {%- elif fingerprint is none -%}
        {%- do decision.update({'reason': 'no recorded fingerprint for ' ~ (missing | join(', '))}) -%}
    {%- elif own is none or own.fingerprint != fingerprint -%}
        {%- do decision.update({'reason': 'inputs changed'}) -%}
    {%- elif node.resource_type in ('test', 'unit_test') -%}
        {%- do decision.update({'reuse': own.status == 'pass', 'reason': 'last status ' ~ own.status}) -%}
    {%- else -%}
        {%- set existing = load_cached_relation(relation) -%}
        {%- if existing is none or existing.type != relation.type -%}
            {%- do decision.update({'reason': 'relation missing'}) -%}
        {%- elif own.storage is none -%}
            {#- recorded, but no on-run-end has signed it since (a killed build) -#}
            {%- do decision.update({'reason': 'storage not verified'}) -%}
        {%- else -%}
            {%- do decision.update({'reuse': true}) -%}
        {%- endif -%}
    {%- endif -%}
    {%- if not decision.reuse -%}
        {%- do log('build_reuse: building ' ~ node.unique_id ~ ' (' ~ decision.reason ~ ')') -%}
    {%- endif -%}
    {{ return(decision) }}
{%- endmacro %}

{% macro build_reuse_log_reused(node) -%}
    {%- do log('build_reuse: reused ' ~ node.unique_id ~ ' (unchanged inputs)', info=True) -%}
{%- endmacro %}
