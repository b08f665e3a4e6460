{#- Checks run before anything is built (on-run-start): every enabled dataset has files under
    RAW_DATA_DIR in the Hub layout, and every file carries the contract's columns with
    compatible types. All problems are collected and reported together, one line each,
    naming the dataset, the file, the column and what to do; nothing is built until they pass. -#}

{% macro raw_data_dir() -%}
    {{ return(env_var('RAW_DATA_DIR', 'sample_data').rstrip('/')) }}
{%- endmacro %}

{#- A SQL string literal; a quote in a path cannot change the statement. -#}
{% macro sql_string(value) -%}
    '{{ value | string | replace("'", "''") }}'
{%- endmacro %}

{% macro enabled_dataset_groups() -%}
    {{ return(var('datasets', ['ultrafeedback', 'code_ultrafeedback', 'rever'])) }}
{%- endmacro %}

{% macro check_raw_inputs() %}
    {% if execute and flags.WHICH in ('build', 'run', 'test', 'seed', 'snapshot', 'show') %}
        {% do adapter.dispatch('check_raw_inputs', 'preference_warehouse')() %}
    {% endif %}
    {{ return('select 1') }}
{% endmacro %}

{#- Spark reads the same layout; its reader reports missing paths itself. -#}
{% macro spark__check_raw_inputs() %}{% endmacro %}

{% macro default__check_raw_inputs() %}
    {%- set raw_dir = raw_data_dir() -%}
    {%- set groups = enabled_dataset_groups() -%}
    {%- set problems = [] -%}
    {%- for key, spec in raw_contract().items() if spec.group in groups -%}
        {%- set pattern = raw_dir ~ '/' ~ spec.hub_id ~ '/data/*.parquet' -%}
        {%- set files = run_query('select file from glob(' ~ sql_string(pattern) ~ ') order by file').columns[0].values() -%}
        {%- if files | length == 0 -%}
            {%- do problems.append(
                'missing dataset ' ~ spec.hub_id ~ ' (group ' ~ spec.group ~ '): no file matches ' ~ pattern
                ~ ' -- generate sample data with `python -m preftools.generate --out ' ~ raw_dir ~ '`'
                ~ ', fetch the real data with `RAW_DATA_DIR=' ~ raw_dir ~ ' make fetch`'
                ~ ', or build without it: --vars "{datasets: [' ~ (groups | reject('equalto', spec.group) | join(', ')) ~ ']}"'
            ) -%}
        {%- else -%}
            {%- for file in files -%}
                {%- set described = run_query('describe select * from read_parquet(' ~ sql_string(file) ~ ')') -%}
                {%- set found = {} -%}
                {%- for row in described.rows -%}{%- do found.update({row[0]: row[1]}) -%}{%- endfor -%}
                {%- for column, expected in spec.columns.items() -%}
                    {%- if column not in found -%}
                        {%- do problems.append(
                            'schema mismatch in dataset ' ~ spec.hub_id ~ ', file ' ~ file ~ ': required column `'
                            ~ column ~ '` is missing (expected ' ~ expected ~ ') -- re-export the file with the upstream schema (README: "Raw data contract")'
                        ) -%}
                    {%- else -%}
                        {%- set difference = raw_type_difference(expected, found[column]) -%}
                        {%- if difference -%}
                            {%- do problems.append(
                                'schema mismatch in dataset ' ~ spec.hub_id ~ ', file ' ~ file ~ ', column `' ~ column ~ '`: '
                                ~ difference ~ ' -- cast it back to the upstream type when writing the file (README: "Raw data contract")'
                            ) -%}
                        {%- endif -%}
                    {%- endif -%}
                {%- endfor -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {%- if problems -%}
        {{ exceptions.raise_compiler_error(
            'RAW_DATA_DIR=' ~ raw_dir ~ ' cannot be built (' ~ (problems | length) ~ ' problem(s)):\n  - '
            ~ (problems | join('\n  - '))
        ) }}
    {%- endif -%}
{% endmacro %}

{#- '' when `found` (a DuckDB type as DESCRIBE prints it) can stand for `expected`, else a
    sentence naming the first nested field that differs. Struct fields are compared by name
    (order and extra fields don't matter); any numeric type stands for DOUBLE. -#}
{% macro raw_type_difference(expected, found) %}
    {%- if expected == found -%}{{ return('') }}{%- endif -%}
    {%- set numeric = ['DOUBLE', 'FLOAT', 'REAL', 'BIGINT', 'INTEGER', 'SMALLINT', 'TINYINT', 'HUGEINT', 'UBIGINT', 'UINTEGER', 'USMALLINT', 'UTINYINT'] -%}
    {%- if expected == 'DOUBLE' and (found in numeric or found.startswith('DECIMAL')) -%}{{ return('') }}{%- endif -%}
    {%- set leaf = '("[^"]*"|\\w+) ((?:\\w+)(?:\\[\\])*)(?=\\s*[,)])' -%}
    {%- set expected_leaves = modules.re.findall(leaf, expected) -%}
    {%- set found_leaves = modules.re.findall(leaf, found) -%}
    {%- set shape = modules.re.compile('"[^"]*"|\\w+') -%}
    {%- if expected_leaves | length == 0 or found_leaves | length == 0
          or expected.endswith('[]') != found.endswith('[]')
          or expected.startswith('STRUCT') != found.startswith('STRUCT') -%}
        {{ return('expected ' ~ expected ~ ', found ' ~ found) }}
    {%- endif -%}
    {%- set found_by_name = {} -%}
    {%- for name, type in found_leaves -%}
        {%- do found_by_name.setdefault(name.strip('"'), []).append(type) -%}
    {%- endfor -%}
    {%- for name, type in expected_leaves -%}
        {%- set bare = name.strip('"') -%}
        {%- if bare not in found_by_name -%}
            {{ return('nested field `' ~ bare ~ '` (' ~ type ~ ') is missing; expected ' ~ expected ~ ', found ' ~ found) }}
        {%- elif type not in found_by_name[bare] -%}
            {{ return('nested field `' ~ bare ~ '` expected ' ~ type ~ ', found ' ~ (found_by_name[bare] | join(' / '))) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return('') }}
{% endmacro %}
