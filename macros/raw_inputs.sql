{#- Checks run before anything is built (on-run-start): every enabled dataset has data files under
    RAW_DATA_DIR in a Hub layout (Parquet, JSON or CSV, macros/raw_files.sql), and every file carries the contract's columns in types that
    hold the same values (the rule of preftools/inputs/contract.py, raw_type_problem below; staging
    casts them back with raw_columns_as_contract). All problems are collected and reported
    together, one line each, naming the dataset, the file, the column and what to do; nothing
    is built until they pass. Every command a line suggests runs as printed (paths absolute and
    shell-quoted). -#}

{#- RAW_DATA_DIR (default sample_data); a relative path is relative to the project directory,
    whatever the current directory. -#}
{% macro raw_data_dir() -%}
    {{ return(project_path(env_var('RAW_DATA_DIR', 'sample_data').rstrip('/'))) }}
{%- endmacro %}

{#- `path` as dbt and the tools read it: absolute, a URI (hf://, file://, s3a://) or ~ as given; a
    relative path joined to the project directory (project_dir). -#}
{% macro project_path(path) -%}
    {%- if path.startswith('/') or path.startswith('~') or '://' in path -%}{{ return(path) }}{%- endif -%}
    {%- set relative = modules.re.sub('^(\\./)+', '', path) -%}
    {{ return(project_dir() ~ ('/' ~ relative if relative not in ('', '.') else '')) }}
{%- endmacro %}

{#- The project directory, absolute: --project-dir / DBT_PROJECT_DIR, else the folder of
    dbt_project.yml that dbt found from the current directory. dbt keeps a given one as typed,
    relative to the current directory, which Jinja cannot see; the plugin, which can, sets DuckDB's
    file_search_path to it (preftools/dbt_runtime/lock_check.py). As typed while dbt parses and on
    Spark (dbt never changes the current directory, so it still names the project). -#}
{% macro project_dir() -%}
    {%- set root = (invocation_args_dict.get('project_dir') or '.') | string -%}
    {%- if not root.startswith('/') and execute and target.type == 'duckdb' -%}
        {%- set root = run_query("select current_setting('file_search_path')").rows[0][0] or root -%}
    {%- endif -%}
    {{ return(root.rstrip('/') or '/') }}
{%- endmacro %}

{#- `value` as one shell word (as Python's shlex.quote): unchanged when it needs no quotes. -#}
{% macro shell_quote(value) -%}
    {%- set value = value | string -%}
    {%- if modules.re.fullmatch('[A-Za-z0-9_@%+=:,./-]+', value) -%}{{ return(value) }}{%- endif -%}
    {{ return("'" ~ value.replace("'", "'\"'\"'") ~ "'") }}
{%- endmacro %}

{#- A SQL string literal; a quote in a path cannot change the statement. -#}
{% macro sql_string(value) -%}
    '{{ value | string | replace("'", "''") }}'
{%- endmacro %}

{% macro enabled_dataset_groups() -%}
    {{ return(var('datasets', ['ultrafeedback', 'code_ultrafeedback', 'rever'])) }}
{%- endmacro %}

{#- Whether this dbt command runs the on-run-start hooks, the checks before any model (compile,
    show, run-operation and docs run none). -#}
{% macro runs_start_checks() %}
    {{ return(flags.WHICH in ['build', 'run', 'test', 'seed', 'snapshot', 'retry']) }}
{% endmacro %}

{% macro check_raw_inputs() %}
    {% if execute and runs_start_checks() %}
        {% do adapter.dispatch('check_raw_inputs', 'preference_warehouse')() %}
    {% endif %}
    {{ return('select 1') }}
{% endmacro %}

{#- Spark reads the same layout; its reader reports missing paths itself. -#}
{% macro spark__check_raw_inputs() %}{% endmacro %}

{% macro default__check_raw_inputs() %}
    {%- set raw_dir = raw_data_dir() -%}
    {%- set groups = enabled_dataset_groups() -%}
    {%- set rule = raw_type_rule() -%}
    {%- set contract = raw_contract() -%}
    {%- set problems = [] -%}
    {%- set files_of = {} -%}
    {%- for key, spec in contract.items() if spec.group in groups -%}
        {%- do files_of.update({key: raw_dataset_files(spec.hub_id)}) -%}
    {%- endfor -%}
    {%- set missing = [] -%}
    {%- set missing_groups = [] -%}
    {%- for key, files in files_of.items() if not files -%}
        {%- do missing.append(key) -%}
        {%- do missing_groups.append(contract[key].group) -%}
    {%- endfor -%}
    {#- the commands the lines suggest; RAW_DATA_DIR as resolved, quoted for a shell -#}
    {%- set raw_arg = shell_quote(raw_dir) -%}
    {%- set local = '://' not in raw_dir -%}
    {%- if missing and missing | length == files_of | length -%}
        {#- not one dataset there: the path is the likely fault, so one line instead of one per dataset -#}
        {%- set hub_ids = [] -%}
        {%- for key in missing -%}{%- do hub_ids.append(contract[key].hub_id) -%}{%- endfor -%}
        {%- set subset = (' --datasets ' ~ (missing | join(','))) if missing | length < contract | length else '' -%}
        {%- set put_data = 'generate sample data with `preftools generate --out ' ~ raw_arg ~ subset
            ~ '`, or fetch the real data with `preftools fetch --raw-data-dir ' ~ raw_arg ~ subset ~ '`' -%}
        {%- if local and not run_query('select preftools_is_dir(' ~ sql_string(raw_dir) ~ ')').rows[0][0] -%}
            {{ exceptions.raise_compiler_error(
                'RAW_DATA_DIR=' ~ raw_dir ~ ' does not exist: point RAW_DATA_DIR at the folder holding the datasets\' Hub'
                ~ ' folders, <org>/<name>/ (a relative path is the project\'s, under ' ~ project_dir() ~ '), or put data there: '
                ~ put_data) }}
        {%- endif -%}
        {%- do problems.append(
            'nothing found under RAW_DATA_DIR=' ~ raw_dir ~ ': none of the datasets (' ~ (hub_ids | join(', '))
            ~ ') has a data file there -- is the path right? It must be the folder holding their Hub folders,'
            ~ ' <org>/<name>/ (README "Raw data contract")' ~ ('. To put data there: ' ~ put_data if local else '')
        ) -%}
    {%- elif missing -%}
        {%- set complete = [] -%}
        {%- for group in groups if group not in missing_groups and group not in complete
                and group in contract.values() | map(attribute='group') | list -%}
            {%- do complete.append(group) -%}
        {%- endfor -%}
        {%- set fetch = ('fetch the missing data with `preftools fetch --raw-data-dir ' ~ raw_arg
            ~ ' --datasets ' ~ (missing | join(',')) ~ '`') if local else 'check the URI' -%}
        {%- set build = (', or build only the groups that are complete there: `RAW_DATA_DIR=' ~ raw_arg
            ~ " dbt build --vars '{datasets: [" ~ (complete | join(', ')) ~ "]}'`")
            if complete else ' (no dataset group is complete there)' -%}
        {%- for key in missing -%}
            {%- do problems.append(
                'missing dataset ' ~ contract[key].hub_id ~ ' (group ' ~ contract[key].group ~ '): no data file (Parquet, JSON or CSV in a Hub layout) under '
                ~ raw_dir ~ '/' ~ contract[key].hub_id ~ ' -- ' ~ fetch ~ build
            ) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- for key, files in files_of.items() if files -%}
        {%- set spec = contract[key] -%}
        {%- set names = files | map(attribute='path') | list -%}
        {%- set basenames = [] -%}
        {%- for f in files -%}{%- do basenames.append(f.path.split('/')[-1]) -%}{%- endfor -%}
        {%- if basenames | unique | list | length < basenames | length -%}
            {%- do problems.append(
                'dataset ' ~ spec.hub_id ~ ': two data files share a file name (' ~ (names | join(', '))
                ~ ') -- each row\'s provenance (source_file, source_row) names its file by file name; read one split or config at a time'
            ) -%}
        {%- else -%}
            {%- set expected_trees = {} -%}
            {%- for f in files -%}
                {%- set file = f.full -%}
                {%- set described = run_query('describe select * from ' ~ raw_file_reader(f)) -%}
                {%- set found = {} -%}
                {%- for row in described.rows -%}{%- do found.update({row[0]: row[1]}) -%}{%- endfor -%}
                {%- for column, expected in spec.columns.items() -%}
                    {%- if column not in found -%}
                        {%- do problems.append(
                            'schema mismatch in dataset ' ~ spec.hub_id ~ ', file ' ~ file ~ ': required column `'
                            ~ column ~ '` is missing (expected ' ~ expected ~ ') -- re-export the file with the upstream schema (README: "Raw data contract")'
                        ) -%}
                    {%- elif found[column] != expected -%}
                        {#- (a column in the contract's own type needs no check: the common case) -#}
                        {%- if column not in expected_trees -%}
                            {%- do expected_trees.update({column: raw_type_tree(expected)}) -%}
                        {%- endif -%}
                        {%- set problem = raw_type_problem(expected_trees[column], raw_type_tree(found[column]), column, column, rule) -%}
                        {%- if problem -%}
                            {%- do problems.append(
                                'schema mismatch in dataset ' ~ spec.hub_id ~ ', file ' ~ file ~ ', column `' ~ column ~ '`: '
                                ~ problem ~ ' (README: "Raw data contract")'
                            ) -%}
                        {%- endif -%}
                    {%- endif -%}
                {%- endfor -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {%- do problems.extend(extra_input_problems()) -%}
    {%- if problems -%}
        {{ exceptions.raise_compiler_error(
            'RAW_DATA_DIR=' ~ raw_dir ~ ' cannot be built (' ~ (problems | length) ~ ' problem(s)):\n  - '
            ~ (problems | join('\n  - '))
        ) }}
    {%- endif -%}
{% endmacro %}

{#- The representation rule (stated in preftools/inputs/contract.py, which generates raw_type_rule()
    in macros/raw_contract.sql). '' when a file's column of type `found` carries the values of
    the contract type `expected` unchanged (both trees from raw_type_tree), else the first
    problem and its fix, naming the nested field at `path`:
      - the null type (an all-null column or field) stands for any type;
      - a scalar stands for a contract scalar when it is in rule.accepted[contract type];
      - a list when its element does; a struct when it has every contract field (by name),
        each standing for it: field order and extra fields don't matter. -#}
{% macro raw_type_problem(expected, found, path, column, rule) %}
    {%- if found.kind == 'leaf' and found.type == rule.null_type -%}{{ return('') }}{%- endif -%}
    {%- set where = ('nested field `' ~ path ~ '` ') if path != column else '' -%}
    {%- if expected.kind == 'leaf' -%}
        {%- set accepted = rule.accepted.get(expected.type, [expected.type]) -%}
        {%- if found.kind == 'leaf' and found.type in accepted -%}{{ return('') }}{%- endif -%}
        {%- set fix = 'write it as ' ~ rule.pyarrow.get(expected.type, expected.type) ~ ' (pyarrow)' -%}
        {%- if accepted | length > 1 -%}
            {%- set fix = fix ~ ' or as a type whose values ' ~ expected.type ~ ' holds exactly ('
                ~ (accepted[1:] | join(', ')) ~ ')' -%}
        {%- endif -%}
        {{ return(where ~ 'expected ' ~ expected.type ~ ', found ' ~ found.type ~ ' -- ' ~ fix) }}
    {%- elif expected.kind != found.kind -%}
        {{ return(where ~ 'expected ' ~ expected.type ~ ', found ' ~ found.type
            ~ ' -- cast it back to the upstream type when writing the file') }}
    {%- elif expected.kind == 'list' -%}
        {{ return(raw_type_problem(expected.element, found.element, path ~ '[]', column, rule)) }}
    {%- else -%}
        {%- for name in expected.names -%}
            {%- if name not in found.fields -%}
                {{ return('nested field `' ~ path ~ '.' ~ name ~ '` (' ~ expected.fields[name].type ~ ') is missing'
                    ~ ' -- write the field, NULL where there is no value') }}
            {%- endif -%}
            {%- set problem = raw_type_problem(expected.fields[name], found.fields[name], path ~ '.' ~ name, column, rule) -%}
            {%- if problem -%}{{ return(problem) }}{%- endif -%}
        {%- endfor -%}
        {{ return('') }}
    {%- endif -%}
{% endmacro %}

{#- A DuckDB type as DESCRIBE prints it, as a tree: {kind: 'list', type, element},
    {kind: 'struct', type, names, fields: {name: tree}} (names unquoted), or {kind: 'leaf', type}
    for anything else, compared as a whole (VARCHAR, "NULL", DECIMAL(18,3), MAP(...), T[2], ...). -#}
{% macro raw_type_tree(type) %}
    {%- set type = type | trim -%}
    {%- if type.endswith('[]') -%}
        {{ return({'kind': 'list', 'type': type, 'element': raw_type_tree(type[:-2])}) }}
    {%- elif type.startswith('STRUCT(') and type.endswith(')') -%}
        {%- set names = [] -%}
        {%- set fields = {} -%}
        {%- for field in raw_type_struct_fields(type[7:-1]) -%}
            {%- set parts = modules.re.match('\\s*("(?:[^"]|"")*"|[^\\s"]+)\\s+(.*)$', field, modules.re.S) -%}
            {%- set name = parts.group(1) -%}
            {%- if name.startswith('"') -%}{%- set name = name[1:-1] | replace('""', '"') -%}{%- endif -%}
            {%- do names.append(name) -%}
            {%- do fields.update({name: raw_type_tree(parts.group(2))}) -%}
        {%- endfor -%}
        {{ return({'kind': 'struct', 'type': type, 'names': names, 'fields': fields}) }}
    {%- else -%}
        {{ return({'kind': 'leaf', 'type': type}) }}
    {%- endif -%}
{% endmacro %}

{#- The `name TYPE` members of STRUCT(...): split at the commas outside parentheses and quotes. -#}
{% macro raw_type_struct_fields(inner) %}
    {%- set members = [] -%}
    {%- set state = {'depth': 0, 'current': ''} -%}
    {%- for token in modules.re.findall('"(?:[^"]|"")*"|[(),]|[^"(),]+', inner) -%}
        {%- if token == ',' and state.depth == 0 -%}
            {%- do members.append(state.current) -%}
            {%- do state.update({'current': ''}) -%}
        {%- else -%}
            {%- if token == '(' -%}{%- do state.update({'depth': state.depth + 1}) -%}{%- endif -%}
            {%- if token == ')' -%}{%- do state.update({'depth': state.depth - 1}) -%}{%- endif -%}
            {%- do state.update({'current': state.current ~ token}) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- do members.append(state.current) -%}
    {{ return(members) }}
{% endmacro %}

{#- `dbt run-operation raw_type_cases --args '{cases: [[expected, found], ...]}'` logs the
    rule's verdict on each pair of DuckDB types, one line each (`raw type case <i>: ok` or the
    problem); tests/python/test_raw_contract.py uses it. -#}
{% macro raw_type_cases(cases) %}
    {%- set rule = raw_type_rule() -%}
    {%- for case in cases -%}
        {%- set problem = raw_type_problem(raw_type_tree(case[0]), raw_type_tree(case[1]), 'c', 'c', rule) -%}
        {%- do log('raw type case ' ~ loop.index0 ~ ': ' ~ (problem or 'ok'), info=True) -%}
    {%- endfor -%}
{% endmacro %}

{#- The select list that gives a raw dataset's columns their contract types, whatever the
    representation its files use (README: "Raw data contract"): `cast(col as <contract type>)`.
    DuckDB casts a struct by field name (other order, extra fields dropped), a list element by
    element, the null type to NULL; on files in the contract's types each cast is a no-op. The
    input check has rejected every type that such a cast would change values of. On Spark the
    columns pass through as its reader merged them (no input check runs there). -#}
{% macro raw_columns_as_contract(dataset_key) %}
    {{ return(adapter.dispatch('raw_columns_as_contract', 'preference_warehouse')(dataset_key)) }}
{% endmacro %}

{% macro default__raw_columns_as_contract(dataset_key) -%}
    {%- for column, type in raw_contract()[dataset_key].columns.items() %}
        cast({{ adapter.quote(column) }} as {{ type }}) as {{ adapter.quote(column) }}{{ ',' if not loop.last }}
    {%- endfor -%}
{%- endmacro %}

{% macro spark__raw_columns_as_contract(dataset_key) -%}
    {%- for column in raw_contract()[dataset_key].columns %}
        {{ column }}{{ ',' if not loop.last }}
    {%- endfor -%}
{%- endmacro %}
