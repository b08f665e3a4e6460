-- One row per eval text of every `eval_sets` entry (macros/eval_sets.sql): each named field of
-- each raw row, a list field one row per element (`turn` its 0-based index), a string field one
-- row (`turn` 0); a NULL field or an empty list one row with a NULL text, so every raw row is
-- here. item_id: the row's 0-based position in the eval set, its files in path order, rows in
-- file order.
{%- set entries = eval_sets() %}
{%- set string = dbt.type_string() %}

{% for e in entries %}
{%- set read = eval_set_relation(e) %}
{%- for field in e.fields %}
{%- set column = adapter.quote(field) %}
{%- set is_list = execute and eval_field_kind(read.kinds[field]) == 'list' %}
select
    '{{ e.name }}' as eval_set,
    raw_rows.item_id,
    '{{ field }}' as field,
    {%- if is_list %}
    coalesce(texts.turn, 0) as turn,
    cast(texts.text as {{ string }}) as text
    {%- else %}
    cast(0 as bigint) as turn,
    cast(raw_rows.{{ column }} as {{ string }}) as text
    {%- endif %}
from (
    select
        *,
        row_number() over (order by filename, file_row_number) - 1 as item_id
    from {{ read.relation }} as read_rows
) as raw_rows
{%- if is_list %}
left join (
    select
        item_id,
        {{ explode_with_index(column, 'turn', 'text') }}
    from (
        select
            {{ column }},
            row_number() over (order by filename, file_row_number) - 1 as item_id
        from {{ read.relation }} as read_rows
    ) as listed
) as texts
    on raw_rows.item_id = texts.item_id
{%- endif %}
{% if not loop.last %}union all{% endif %}
{%- endfor %}
{% if not loop.last %}union all{% endif %}
{% endfor %}
{% if not entries %}
-- no entry: no row, the same columns
select
    cast(null as {{ string }}) as eval_set, cast(null as bigint) as item_id, cast(null as {{ string }}) as field,
    cast(null as bigint) as turn, cast(null as {{ string }}) as text
where false
{% endif %}
