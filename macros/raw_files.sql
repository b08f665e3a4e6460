{#- Which files of a raw dataset the build reads, and how it reads them.

    A dataset is a local copy of its Hub repo, RAW_DATA_DIR/<org>/<dataset>/, laid out as on the
    Hub. Its data files are Parquet, JSON (JSON Lines or one JSON array per file; .json, .jsonl) or
    CSV (.csv, a header row first), JSON and CSV optionally .gz or .zst, chosen as the Hub chooses them: the card's `configs:` / `data_files`
    (README.md front matter) when it has them, else the Hub's default patterns
    (macros/hub_patterns.sql), the first that match: data/<split>-0000k-of-0000n.parquet,
    <config>/<split>-*.parquet, default/<split>/0000.parquet, <split>.jsonl, ...
    preftools/inputs/hub_layout.py applies the same rule in Python with the datasets library (the fetcher
    uses it), and reads a file with the same DuckDB call (raw_file_reader, duckdb_reader there);
    tests/python/test_hub_layout.py checks that the two agree.

    raw_dataset_files(hub_id) -> [{path: repo path, full: path to read, split, format}] (RAW_DATA_DIR,
                                 or the folder `raw_dir`)
    raw_files_relation(key)   -> a subquery of every row of dataset `key` (preftools/inputs/contract.py):
                                 the file's columns plus filename (the file's repo path) and
                                 file_row_number (0-based row in the file), the same for Parquet,
                                 JSON and CSV. source() returns it for the raw sources. -#}

{% macro raw_dataset_files(hub_id, config=none, raw_dir=none) %}
    {%- set repo = (raw_dir or raw_data_dir()) ~ '/' ~ hub_id -%}
    {%- set paths = adapter.dispatch('raw_list_files', 'preference_warehouse')(repo) -%}
    {%- set card = adapter.dispatch('raw_read_text', 'preference_warehouse')(repo ~ '/README.md')
        if 'README.md' in paths else none -%}
    {%- set files = [] -%}
    {%- for f in hub_resolve_config(paths, card, config, hub_id) -%}
        {%- do files.append({'path': f.path, 'full': repo ~ '/' ~ f.path, 'split': f.split, 'format': f.format}) -%}
    {%- endfor -%}
    {{ return(files) }}
{% endmacro %}

{#- The data files among a repo's `paths` for `config`: the card's config, or, for a repo whose card
    declares no configs, a folder of it (as `data_dir` does for load_dataset, e.g. Anthropic/hh-rlhf's
    helpful-base/), the Hub's rule applied inside it; `default` is the whole repo
    (preftools/inputs/registry.py resolve_files, the same rule). -#}
{% macro hub_resolve_config(paths, card, config, hub_id) %}
    {%- set prefix = (config ~ '/') if config and config != 'default' and not hub_card_configs(card, hub_id) else '' -%}
    {%- set inner = [] -%}
    {%- for p in paths if p.startswith(prefix) -%}{%- do inner.append(p[prefix | length:]) -%}{%- endfor -%}
    {%- set found = [] -%}
    {%- for f in hub_resolve(inner, card if not prefix else none, none if prefix else config, hub_id) -%}
        {%- do found.append({'path': prefix ~ f.path, 'split': f.split, 'format': f.format}) -%}
    {%- endfor -%}
    {{ return(found) }}
{% endmacro %}

{#- "parquet", "json", "csv", or none for a file the build does not read. -#}
{% macro hub_file_format(path) %}
    {%- set name = path | lower -%}
    {%- if name.endswith('.parquet') -%}{{ return('parquet') }}{%- endif -%}
    {%- for suffix in ['.json', '.jsonl', '.json.gz', '.jsonl.gz', '.json.zst', '.jsonl.zst'] -%}
        {%- if name.endswith(suffix) -%}{{ return('json') }}{%- endif -%}
    {%- endfor -%}
    {%- for suffix in ['.csv', '.csv.gz', '.csv.zst'] -%}
        {%- if name.endswith(suffix) -%}{{ return('csv') }}{%- endif -%}
    {%- endfor -%}
    {{ return(none) }}
{% endmacro %}

{#- The DuckDB call that reads data file `f` ({full, format}): read_parquet, read_json, or
    read_csv with the first row as the column names and every column as text; `options` (e.g.
    'filename = true') are added to the call. -#}
{% macro raw_file_reader(f, options=none) %}
    {%- set settings = {'parquet': [], 'json': [], 'csv': ['header = true', 'all_varchar = true']}[f.format] -%}
    {{ return('read_' ~ f.format ~ '(' ~ ([sql_string(f.full)] + settings + ([options] if options else [])) | join(', ') ~ ')') }}
{% endmacro %}

{#- Spark: the path-based source of data file `f`, ``parquet.`<file>` ``, ``json.`<file>` `` or
    ``csv.`<file>` `` with the options that read it as DuckDB does (a header row, quoted fields
    over several lines, "" for a quote inside one; every column a string). A JSON file whose first
    line starts with `[` is one array of records (read whole, `multiLine`); else JSON Lines. -#}
{% macro spark_file_source(f) %}
    {%- set options = '' -%}
    {%- if f.format == 'csv' -%}
        {%- set options = " with ('header' = 'true', 'multiLine' = 'true', 'escape' = '\"')" -%}
    {%- elif f.format == 'json' and execute -%}
        {%- set first = run_query('select trim(value) from text.' ~ spark_path(f.full) ~ " where trim(value) != '' limit 1").rows -%}
        {%- if first and first[0][0].startswith('[') -%}{%- set options = " with ('multiLine' = 'true')" -%}{%- endif -%}
    {%- endif -%}
    {{ return(f.format ~ '.' ~ spark_path(f.full) ~ options) }}
{% endmacro %}

{#- The data files among `paths` (repo paths, sorted), split by split in the order the card or the
    default patterns list them, sorted within a split: [{path, split, format}]. -#}
{% macro hub_resolve(paths, card_text, config, hub_id) %}
    {%- set configs = hub_card_configs(card_text, hub_id) -%}
    {%- set chosen = hub_choose_config(configs, config, hub_id) -%}
    {%- if chosen is not none and configs[chosen].get('data_files') -%}
        {%- set patterns = hub_sanitize_patterns(configs[chosen]['data_files'], hub_id) -%}
    {%- else -%}
        {%- set patterns = hub_default_patterns(paths) -%}
    {%- endif -%}
    {%- set found = [] -%}
    {%- set seen = [] -%}
    {%- for split, split_patterns in patterns -%}
        {%- for pattern in split_patterns -%}
            {%- set regex = hub_glob_regex(pattern) -%}
            {%- for path in paths if path not in seen and modules.re.fullmatch(regex, path)
                    and hub_is_visible(path, pattern) and hub_file_format(path) -%}
                {%- do seen.append(path) -%}
                {%- do found.append({'path': path, 'split': split, 'format': hub_file_format(path)}) -%}
            {%- endfor -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return(found) }}
{% endmacro %}

{#- The card's configs: {config_name: {data_files, default, ...}}; {} without front matter. -#}
{% macro hub_card_configs(card_text, hub_id) %}
    {%- if not card_text -%}{{ return({}) }}{%- endif -%}
    {%- set front = modules.re.match('\\A\\ufeff?---[ \\t]*\\r?\\n(.*?)\\r?\\n---[ \\t]*(\\r?\\n|\\Z)', card_text, modules.re.S) -%}
    {%- if not front -%}{{ return({}) }}{%- endif -%}
    {%- set meta = fromyaml(front.group(1)) -%}
    {%- set listed = meta.get('configs') if meta is mapping else none -%}
    {%- if not listed -%}{{ return({}) }}{%- endif -%}
    {%- set configs = {} -%}
    {%- for c in listed -%}
        {%- if c is not mapping or 'config_name' not in c -%}
            {{ exceptions.raise_compiler_error(hub_id ~ ': README.md `configs:` has an entry without `config_name` -- give each config a config_name (Hub dataset card docs)') }}
        {%- endif -%}
        {%- do configs.update({c['config_name'] | string: c}) -%}
    {%- endfor -%}
    {{ return(configs) }}
{% endmacro %}

{#- `config` when given, else the card's default: `default: true`, else the only one, else the
    one named "default"; none when the card has no configs. -#}
{% macro hub_choose_config(configs, config, hub_id) %}
    {%- if not configs -%}{{ return(none) }}{%- endif -%}
    {%- if config is not none -%}
        {%- if config not in configs -%}
            {{ exceptions.raise_compiler_error(hub_id ~ ': config ' ~ config ~ ' is not in README.md `configs:` (' ~ (configs.keys() | join(', ')) ~ ')') }}
        {%- endif -%}
        {{ return(config) }}
    {%- endif -%}
    {%- for name, c in configs.items() if c.get('default') -%}{{ return(name) }}{%- endfor -%}
    {%- if configs | length == 1 -%}{{ return(configs.keys() | first) }}{%- endif -%}
    {%- if 'default' in configs -%}{{ return('default') }}{%- endif -%}
    {{ exceptions.raise_compiler_error(hub_id ~ ': README.md declares several configs (' ~ (configs.keys() | join(', '))
        ~ ') and none is the default -- mark one `default: true` in the card') }}
{% endmacro %}

{#- A card's data_files as [(split, [pattern, ...])]: a pattern or a list of patterns is the train
    split; a list of {split, path} names the splits (path: a pattern or a list of them). -#}
{% macro hub_sanitize_patterns(data_files, hub_id) %}
    {%- if data_files is string -%}{{ return([('train', [data_files])]) }}{%- endif -%}
    {%- if data_files is not mapping and data_files is iterable -%}
        {%- if data_files | select('mapping') | list | length == 0 -%}{{ return([('train', data_files | list)]) }}{%- endif -%}
        {%- set out = [] -%}
        {%- for entry in data_files if entry is mapping and entry.get('path') -%}
            {%- set paths = entry['path'] -%}
            {%- do out.append((entry.get('split', 'train') | string, [paths] if paths is string else paths | list)) -%}
        {%- endfor -%}
        {%- if out | length == data_files | length -%}{{ return(out) }}{%- endif -%}
    {%- endif -%}
    {{ exceptions.raise_compiler_error(hub_id ~ ': README.md `configs:` cannot be read -- write data_files as a path pattern, '
        ~ 'a list of them, or a list of {split, path} (Hub dataset card docs)') }}
{% endmacro %}

{#- The first group of the Hub's default patterns that matches a data file, as [(split, [pattern])];
    [] when none matches. The sharded pattern takes the split from each file's name. -#}
{% macro hub_default_patterns(paths) %}
    {%- for group in hub_default_pattern_groups() -%}
        {%- if '{split}' in group -%}
            {%- set pattern = group['{split}'][0] -%}
            {%- set regex = hub_glob_regex(pattern | replace('{split}', '*')) -%}
            {%- set splits = [] -%}
            {%- for path in paths if modules.re.fullmatch(regex, path) and hub_is_visible(path, pattern) -%}
                {%- set name = modules.re.fullmatch(hub_glob_regex(pattern.split('/')[-1]) | replace('\\{split\\}', '(.+)'), path.split('/')[-1]) -%}
                {%- if name and name.group(1) not in splits -%}{%- do splits.append(name.group(1)) -%}{%- endif -%}
            {%- endfor -%}
            {%- if splits -%}
                {%- set ordered = [] -%}
                {%- for s in ['train', 'validation', 'test'] if s in splits -%}{%- do ordered.append(s) -%}{%- endfor -%}
                {%- for s in splits | sort if s not in ordered -%}{%- do ordered.append(s) -%}{%- endfor -%}
                {%- set out = [] -%}
                {%- for s in ordered -%}{%- do out.append((s, [pattern | replace('{split}', s)])) -%}{%- endfor -%}
                {{ return(out) }}
            {%- endif -%}
        {%- else -%}
            {%- set out = [] -%}
            {%- for split, patterns in group.items() -%}
                {%- set hits = [] -%}
                {%- for pattern in patterns -%}
                    {%- set regex = hub_glob_regex(pattern) -%}
                    {%- for path in paths if modules.re.fullmatch(regex, path) and hub_is_visible(path, pattern) -%}
                        {%- do hits.append(path) -%}
                    {%- endfor -%}
                {%- endfor -%}
                {%- if hits -%}{%- do out.append((split, patterns)) -%}{%- endif -%}
            {%- endfor -%}
            {%- if out -%}{{ return(out) }}{%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return([]) }}
{% endmacro %}

{#- A glob as the Hub's file system reads it, as a regex: `*` and `?` within one path segment,
    `**` across segments (`**/` also matches no folder), [...] a character class. -#}
{% macro hub_glob_regex(pattern) %}
    {%- set out = [] -%}
    {%- for token in modules.re.findall('\\*\\*/|/\\*\\*$|\\*\\*|\\*|\\?|\\[!?[^\\]]*\\]|[^*?\\[]+|\\[', pattern) -%}
        {%- if token == '**/' -%}{%- do out.append('(?:.*/)?') -%}
        {%- elif token == '/**' -%}{%- do out.append('(?:/.*)?') -%}
        {%- elif token == '**' -%}{%- do out.append('.*') -%}
        {%- elif token == '*' -%}{%- do out.append('[^/]*') -%}
        {%- elif token == '?' -%}{%- do out.append('[^/]') -%}
        {%- elif token.startswith('[') and token.endswith(']') and token | length > 2 -%}
            {%- do out.append('[' ~ ('^' ~ token[2:-1] if token.startswith('[!') else token[1:-1]) ~ ']') -%}
        {%- else -%}{%- do out.append(modules.re.escape(token)) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(out | join('')) }}
{% endmacro %}

{#- As the Hub: a hidden file, or a file inside a hidden (.x) or special (__x) folder, is not data
    unless the pattern has as many such parts; nor is a repo metadata file (README.md,
    dataset_info.json, ...) unless the pattern names it. -#}
{% macro hub_is_visible(path, pattern) %}
    {%- set parts = path.split('/') -%}
    {%- set asked = pattern.split('/') -%}
    {%- for prefix, path_parts, pattern_parts in [('.', parts, asked), ('__', parts[:-1], asked[:-1])] -%}
        {%- set n_path = [] -%}{%- set n_pattern = [] -%}
        {%- for part in path_parts if part.startswith(prefix) and part.strip('.') -%}{%- do n_path.append(part) -%}{%- endfor -%}
        {%- for part in pattern_parts if part.startswith(prefix) and part.strip('.') -%}{%- do n_pattern.append(part) -%}{%- endfor -%}
        {%- if n_path | length != n_pattern | length -%}{{ return(false) }}{%- endif -%}
    {%- endfor -%}
    {%- if parts[-1] in ['README.md', 'config.json', 'dataset_info.json', 'dataset_infos.json', 'dummy_data.zip', 'dataset_dict.json']
            and asked[-1] != parts[-1] -%}
        {{ return(false) }}
    {%- endif -%}
    {{ return(true) }}
{% endmacro %}

{#- Every file below `repo` as a repo path (relative, '/'-separated), sorted; [] without the folder. -#}
{% macro default__raw_list_files(repo) %}
    {%- set prefix = repo ~ '/' -%}
    {%- set paths = [] -%}
    {%- for f in run_query('select file from glob(' ~ sql_string(prefix ~ '**') ~ ') order by file').columns[0].values() -%}
        {%- if f.startswith(prefix) -%}{%- do paths.append(f[prefix | length:]) -%}{%- endif -%}
    {%- endfor -%}
    {{ return(paths | sort) }}
{% endmacro %}

{#- Spark lists a folder through its binaryFile reader (file names and sizes; no content read). -#}
{% macro spark__raw_list_files(repo) %}
    {%- set view = 'preftools_files_' ~ local_md5(repo) -%}
    {%- do run_query('create or replace temporary view ' ~ view ~ ' using binaryFile options (path ' ~ sql_string(repo)
        ~ ', recursiveFileLookup ' ~ sql_string('true') ~ ')') -%}
    {#- Spark gives file:/... URIs; RAW_DATA_DIR may be a path or a file:// URI -#}
    {%- set prefix = modules.re.sub('^file:(//)?', '', repo) ~ '/' -%}
    {%- set paths = [] -%}
    {%- for f in run_query('select path from ' ~ view).columns[0].values() -%}
        {%- set local = modules.re.sub('^file:(//)?', '', f) -%}
        {%- if local.startswith(prefix) -%}{%- do paths.append(local[prefix | length:]) -%}{%- endif -%}
    {%- endfor -%}
    {{ return(paths | sort) }}
{% endmacro %}

{#- The text of a small file (a card, a lock), none when it is absent.
    DuckDB: read_text gives no rows (not an error) for a path that matches no file. -#}
{% macro default__raw_read_text(path) %}
    {%- set rows = run_query('select content from read_text(' ~ sql_string(path) ~ ')').rows -%}
    {{ return(rows[0][0] if rows | length > 0 else none) }}
{% endmacro %}

{#- Spark: a missing path is an error for its file sources, so the file is looked for with a
    name filter over its folder (no match: no rows), through a view named for the path (threads
    read several cards at once). Spark skips names starting with `_` or `.`, so the generator's
    manifest cannot be read there: generated data shows as "unknown". -#}
{% macro spark__raw_read_text(path) %}
    {%- set folder, name = path.rsplit('/', 1) -%}
    {%- if name.startswith('_') or name.startswith('.') -%}{{ return(none) }}{%- endif -%}
    {%- set view = 'preftools_text_' ~ local_md5(path) -%}
    {%- do run_query(
        'create or replace temporary view ' ~ view ~ ' using binaryFile options (path ' ~ sql_string(folder)
        ~ ', pathGlobFilter ' ~ sql_string(name) ~ ', recursiveFileLookup ' ~ sql_string('false') ~ ')') -%}
    {%- set rows = run_query('select cast(content as string) from ' ~ view ~ ' where path like ' ~ sql_string('%/' ~ name)).rows -%}
    {{ return(rows[0][0] if rows | length > 0 else none) }}
{% endmacro %}

{#- A path in backticks, as Spark's `format.`path`` syntax takes it (a backtick doubled). -#}
{% macro spark_path(path) -%}
    `{{ path | replace('`', '``') }}`
{%- endmacro %}

{#- Every row of raw dataset `key`: the selects of raw_files_selects, unioned by column name. -#}
{% macro raw_files_relation(key) %}
    {%- set spec = raw_contract()[key] -%}
    {%- set files = raw_dataset_files(spec.hub_id) -%}
    {%- if not files -%}
        {{ exceptions.raise_compiler_error('no data file for ' ~ spec.hub_id ~ ' under ' ~ raw_data_dir() ~ '/' ~ spec.hub_id
            ~ ' (Parquet, JSON or CSV in a Hub layout; docs/raw-data.md)') }}
    {%- endif -%}
    {%- set selects = adapter.dispatch('raw_files_selects', 'preference_warehouse')(files, spec) -%}
    {{ return('(\n' ~ (selects | join('\n' ~ adapter.dispatch('union_all_by_name', 'preference_warehouse')() ~ '\n')) ~ '\n)') }}
{% endmacro %}

{% macro default__union_all_by_name() %}{{ return('union all by name') }}{% endmacro %}
{#- Spark has no UNION BY NAME: each file's select lists the contract's columns in one order. -#}
{% macro spark__union_all_by_name() %}{{ return('union all') }}{% endmacro %}

{#- DuckDB: all Parquet files in one read_parquet (one scan keeps DuckDB's pushdown of the struct
    fields a model reads: through a UNION it would read whole structs), file_row_number from the
    reader; a JSON or CSV file's rows numbered in file order by WITH ORDINALITY (read_json and
    read_csv have no file_row_number), one select per file. `filename` is the file's repo path (the
    path read without RAW_DATA_DIR/<org>/<dataset>/), so no table depends on where the raw folder is. -#}
{% macro default__raw_files_selects(files, spec) %}
    {%- set parquet = [] -%}
    {%- set selects = [] -%}
    {%- set repo_path = 'substr(filename, ' ~ ((files[0].full | length) - (files[0].path | length) + 1) ~ ') as filename' if files else '' -%}
    {%- for f in files if f.format == 'parquet' -%}{%- do parquet.append(sql_string(f.full)) -%}{%- endfor -%}
    {%- if parquet -%}
        {%- do selects.append('select * replace (' ~ repo_path ~ ') from read_parquet([' ~ (parquet | join(', '))
            ~ '], filename = true, file_row_number = true, union_by_name = true)') -%}
    {%- endif -%}
    {%- for f in files if f.format != 'parquet' -%}
        {%- do selects.append('select * exclude (ordinality) replace (' ~ repo_path ~ '), ordinality - 1 as file_row_number from '
            ~ raw_file_reader(f, 'filename = true') ~ ' with ordinality') -%}
    {%- endfor -%}
    {{ return(selects) }}
{% endmacro %}

{% macro spark__raw_files_selects(files, spec) %}
    {%- set selects = [] -%}
    {%- for f in files -%}{%- do selects.append(spark_raw_file_select(f, spec)) -%}{%- endfor -%}
    {{ return(selects) }}
{% endmacro %}

{#- Spark: `filename` the file's repo path, as on DuckDB; `_metadata.row_index` for Parquet; JSON
    and CSV rows numbered in the order Spark reads them (one file's splits in file order). -#}
{% macro spark_raw_file_select(f, spec) %}
    {%- set name = "'" ~ (f.path | replace("'", "\\'")) ~ "'" -%}
    {%- set quoted = [] -%}
    {%- for c in spec.columns.keys() -%}{%- do quoted.append('`' ~ (c | replace('`', '``')) ~ '`') -%}{%- endfor -%}
    {%- set columns = quoted | join(', ') -%}
    {%- if f.format == 'parquet' -%}
        {{ return('select ' ~ columns ~ ', ' ~ name ~ ' as filename, _metadata.row_index as file_row_number from ' ~ spark_file_source(f)) }}
    {%- else -%}
        {{ return('select ' ~ columns ~ ', ' ~ name ~ ' as filename, row_number() over (order by _read_order) - 1 as file_row_number'
            ~ ' from (select *, monotonically_increasing_id() as _read_order from ' ~ spark_file_source(f) ~ ')') }}
    {%- endif -%}
{% endmacro %}

{#- `dbt run-operation hub_layout_cases --args '{cases: [{paths: [...], card: "..."}, ...]}'` logs
    the files the rule picks for each case, each with the DuckDB call that reads it (its repo path
    as the path), one JSON line each (`hub layout case <i>: [...]`);
    tests/python/test_hub_layout.py holds them against preftools.inputs.hub_layout. -#}
{% macro hub_layout_cases(cases) %}
    {%- for case in cases -%}
        {%- set picked = [] -%}
        {%- for f in hub_resolve(case.paths | sort, case.get('card'), case.get('config'), 'case ' ~ loop.index0) -%}
            {%- do picked.append({'path': f.path, 'split': f.split, 'format': f.format,
                                  'reader': raw_file_reader({'full': f.path, 'format': f.format})}) -%}
        {%- endfor -%}
        {%- do log('hub layout case ' ~ loop.index0 ~ ': ' ~ tojson(picked), info=True) -%}
    {%- endfor -%}
{% endmacro %}
