{#- A struct from an ordered mapping {field name: SQL expression}. -#}
{% macro make_struct(fields) -%}
    {{ return(adapter.dispatch('make_struct', 'preference_warehouse')(fields)) }}
{%- endmacro %}
{% macro default__make_struct(fields) -%}
    struct_pack({% for name, expr in fields.items() %}{{ adapter.quote(name) }} := {{ expr }}{{ ", " if not loop.last }}{% endfor %})
{%- endmacro %}
{#- Field expressions may quote identifiers DuckDB-style ("Rating"): Spark gets backticks. -#}
{% macro spark__make_struct(fields) -%}
    named_struct({% for name, expr in fields.items() %}'{{ name }}', {{ preference_warehouse.spark_identifiers(expr) }}{{ ", " if not loop.last }}{% endfor %})
{%- endmacro %}

{#- A conversational message list [{role: 'user', content: prompt}, {role: 'assistant', content: response}]
    with the field order given (the published shapes differ: RLHFlow uses {content, role}). -#}
{% macro chat_pair(prompt_expr, response_expr, field_order=('role', 'content')) -%}
    {%- set user = {} -%}{%- set assistant = {} -%}
    {%- for f in field_order -%}
        {%- do user.update({f: ("'user'" if f == 'role' else prompt_expr)}) -%}
        {%- do assistant.update({f: ("'assistant'" if f == 'role' else response_expr)}) -%}
    {%- endfor -%}
    {{ preference_warehouse.make_list([preference_warehouse.make_struct(user), preference_warehouse.make_struct(assistant)]) }}
{%- endmacro %}

{#- A TRL conversational message list: `turns` is a list of (role, SQL expression) pairs, each
    becoming a {role, content} struct in that field order, e.g. the canonical training shape
    prompt = chat_messages([('user', 'instruction')]), chosen = chat_messages([('assistant', 'response')]). -#}
{% macro chat_messages(turns) -%}
    {%- set items = [] -%}
    {%- for role, content_expr in turns -%}
        {%- do items.append(preference_warehouse.make_struct({'role': "'" ~ role ~ "'", 'content': content_expr})) -%}
    {%- endfor -%}
    {{ preference_warehouse.make_list(items) }}
{%- endmacro %}

{#- An empty list of strings, typed (integrity_flags of a clean pair). -#}
{% macro empty_string_list() -%}
    {{ return(adapter.dispatch('empty_string_list', 'preference_warehouse')()) }}
{%- endmacro %}
{% macro default__empty_string_list() -%} cast([] as varchar[]) {%- endmacro %}
{% macro spark__empty_string_list() -%} cast(array() as array<string>) {%- endmacro %}
