{#- Contracts on Spark. The yml files spell every data_type as DuckDB prints it (VARCHAR,
    BIGINT, STRUCT("role" VARCHAR, "content" VARCHAR)[] ...), since DuckDB is the reference
    engine. On Spark, dbt checks a contract by casting NULL to each declared type and comparing
    the result with the model's own column types; these macros translate the DuckDB spelling
    into Spark's first, so the same contracts are enforced, exactly, on both engines. -#}

{#- The Spark type for a DuckDB type string: VARCHAR -> string, INTEGER -> int,
    T[] -> array<T>, STRUCT(a T, "b c" U) -> struct<`a`:T,`b c`:U>, MAP(K, V) -> map<K,V>,
    DECIMAL(p,s) -> decimal(p,s). An unknown type name is passed through, lower-cased. -#}
{% macro duckdb_type_to_spark(duckdb_type) %}
    {%- set scalar = {
        'VARCHAR': 'string', 'TEXT': 'string', 'STRING': 'string', 'JSON': 'string', 'UUID': 'string',
        'BIGINT': 'bigint', 'INT8': 'bigint', 'LONG': 'bigint',
        'INTEGER': 'int', 'INT': 'int', 'INT4': 'int', 'SMALLINT': 'smallint', 'INT2': 'smallint',
        'TINYINT': 'tinyint', 'INT1': 'tinyint', 'HUGEINT': 'decimal(38,0)',
        'DOUBLE': 'double', 'FLOAT8': 'double', 'FLOAT': 'float', 'FLOAT4': 'float', 'REAL': 'float',
        'BOOLEAN': 'boolean', 'BOOL': 'boolean', 'DATE': 'date', 'TIMESTAMP': 'timestamp',
        'TIMESTAMPTZ': 'timestamp', 'BLOB': 'binary', 'BYTEA': 'binary',
    } -%}
    {%- set tokens = modules.re.findall('"(?:[^"]|"")*"|[A-Za-z_][A-Za-z_0-9]*|[0-9]+|\\[\\]|[(),]', duckdb_type) -%}
    {#- A stack of frames: the top level, then one per open STRUCT( / MAP( / DECIMAL(.
        `cur` is the type just read in the frame; `name` the struct field awaiting its type. -#}
    {%- set stack = [{'kind': 'top', 'items': [], 'name': none, 'cur': none}] -%}
    {%- set pending = {'kind': none} -%}
    {%- for token in tokens -%}
        {%- set frame = stack[-1] -%}
        {%- if token == '(' -%}
            {%- do stack.append({'kind': pending.kind or 'group', 'items': [], 'name': none, 'cur': none}) -%}
            {%- do pending.update({'kind': none}) -%}
        {%- elif token == ')' or token == ',' -%}
            {%- if frame.kind == 'struct' -%}
                {%- do frame['items'].append('`' ~ frame.name ~ '`:' ~ frame.cur) -%}
            {%- else -%}
                {%- do frame['items'].append(frame.cur) -%}
            {%- endif -%}
            {%- do frame.update({'name': none, 'cur': none}) -%}
            {%- if token == ')' -%}
                {%- do stack.pop() -%}
                {%- if frame.kind == 'struct' -%}
                    {%- set built = 'struct<' ~ (frame['items'] | join(',')) ~ '>' -%}
                {%- elif frame.kind == 'map' -%}
                    {%- set built = 'map<' ~ (frame['items'] | join(',')) ~ '>' -%}
                {%- else -%}
                    {%- set built = stack[-1].cur ~ '(' ~ (frame['items'] | join(',')) ~ ')' -%}
                {%- endif -%}
                {%- do stack[-1].update({'cur': built}) -%}
            {%- endif -%}
        {%- elif token == '[]' -%}
            {%- do frame.update({'cur': 'array<' ~ frame.cur ~ '>'}) -%}
        {%- elif frame.kind == 'struct' and frame.name is none -%}
            {%- do frame.update({'name': (token[1:-1] | replace('""', '"')) if token.startswith('"') else token}) -%}
        {%- elif token.upper() in ('STRUCT', 'ROW', 'MAP') -%}
            {%- do pending.update({'kind': 'map' if token.upper() == 'MAP' else 'struct'}) -%}
        {%- elif token.upper() in ('DECIMAL', 'NUMERIC') -%}
            {%- do frame.update({'cur': 'decimal'}) -%}
        {%- else -%}
            {%- do frame.update({'cur': scalar.get(token.upper(), token.lower())}) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(stack[0].cur) }}
{% endmacro %}

{#- dbt's contract check on Spark: the default, with each declared type translated. -#}
{% macro spark__get_empty_schema_sql(columns) %}
    {%- set translated = {} -%}
    {%- for name in columns -%}
        {%- set column = dict(columns[name]) -%}
        {%- if column.get('data_type') -%}
            {%- do column.update({'data_type': duckdb_type_to_spark(column['data_type'])}) -%}
        {%- endif -%}
        {%- do translated.update({name: column}) -%}
    {%- endfor -%}
    {{ return(default__get_empty_schema_sql(translated)) }}
{% endmacro %}

{#- The same SQL gives a narrower integer on Spark than on DuckDB for some built-ins
    (row_number(), rank(), size(), length() are INT on Spark, BIGINT on DuckDB). The Spark
    contract check therefore accepts a column whose type equals the contract's once every
    tinyint/smallint/int in it is read as bigint (widening only, never narrowing), and the
    table is then written with the contract's exact types (spark__get_column_names casts).
    Anything else (a different name, a missing column, string vs bigint, another struct
    field) fails exactly as dbt's own check does. -#}
{% macro spark__get_assert_columns_equivalent(sql) -%}
    {%- set user_defined_columns = model['columns'] -%}
    {%- if not user_defined_columns -%}
        {{ exceptions.raise_contract_error([], []) }}
    {%- endif -%}
    {%- set sql_columns = format_columns(get_column_schema_from_query(sql, config.get('sql_header', none))) -%}
    {%- set yaml_columns = format_columns(get_column_schema_from_query(get_empty_schema_sql(user_defined_columns))) -%}
    {%- if sql_columns | length != yaml_columns | length -%}
        {%- do exceptions.raise_contract_error(yaml_columns, sql_columns) -%}
    {%- endif -%}
    {%- set yaml_by_name = {} -%}
    {%- for column in yaml_columns -%}{%- do yaml_by_name.update({column['name']: column}) -%}{%- endfor -%}
    {%- for column in sql_columns -%}
        {%- set declared = yaml_by_name.get(column['name']) -%}
        {%- if declared is none -%}
            {%- do exceptions.raise_contract_error(yaml_columns, sql_columns) -%}
        {%- endif -%}
        {%- set widened = modules.re.sub('\\b(tinyint|smallint|int)\\b', 'bigint', column['data_type']) -%}
        {%- if column['data_type'] != declared['data_type'] and widened != declared['data_type'] -%}
            {%- do exceptions.raise_contract_error(yaml_columns, sql_columns) -%}
        {%- endif -%}
    {%- endfor -%}
{%- endmacro %}

{#- The contract's columns, each cast to its declared (translated) type. -#}
{% macro spark__get_column_names() -%}
    {%- set columns = model['columns'] -%}
    {%- for name in columns -%}
        {%- set column = columns[name] -%}
        {%- set column_name = adapter.quote(column['name']) if column.get('quote') else column['name'] -%}
        cast({{ column_name }} as {{ duckdb_type_to_spark(column['data_type']) }}) as {{ column_name }}{{ ", " if not loop.last }}
    {%- endfor -%}
{%- endmacro %}
