-- Each relation's key as its `checks` test declares it (the `primary_key` argument; `one_row: true`
-- is the empty key), read from dbt's graph when the model compiles, so the warehouse file says
-- which columns identify a row of each table and view (it has no PRIMARY KEY constraints).
-- `preftools diff` matches rows across two builds by these keys.
{%- set keys = {} %}
{%- if execute %}
    {%- for test in graph.nodes.values() if test.resource_type == 'test' and (test.test_metadata or {}).get('name') == 'checks' %}
        {%- set kwargs = test.test_metadata.kwargs %}
        {%- set parent = graph.nodes.get(test.attached_node) if test.attached_node else none %}
        {%- if parent and (kwargs.get('primary_key') or kwargs.get('one_row')) %}
            {%- do keys.update({parent.schema ~ '.' ~ (parent.alias or parent.name): kwargs.get('primary_key') or []}) %}
        {%- endif %}
    {%- endfor %}
{%- endif %}
{%- set string = dbt.type_string() %}

{% for relation in keys | sort %}
select
    {{ sql_string(relation) }} as relation,
    {{ sql_string(tojson(keys[relation])) }} as key_columns
{% if not loop.last %}union all{% endif %}
{% endfor %}
{% if not keys %}
-- no key declared: no row, the same columns
select cast(null as {{ string }}) as relation, cast(null as {{ string }}) as key_columns
where false
{% endif %}
