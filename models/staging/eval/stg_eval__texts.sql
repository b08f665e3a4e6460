-- One row per eval text of every `eval_sets` entry (macros/eval_sets.sql): each named field of
-- each raw row, a list field one row per element (`turn` its 0-based index), a string field one
-- row (`turn` 0); a NULL field or an empty list one row with a NULL text, so every raw row is
-- here. item_id: the row's 0-based position in the eval set, its files in path order, rows in
-- file order. Each entry's files are read once (its CTE), whatever the number of its fields.
{%- set entries = eval_sets() %}
{%- set string = dbt.type_string() %}
{%- set kinds = {} %}

{% if entries %}
with

{% for e in entries %}
{%- set read = eval_set_relation(e) %}
{%- do kinds.update({e.name: read.kinds}) %}
eval_set_{{ e.order }} as (

    select
        *,
        row_number() over (order by filename, file_row_number) - 1 as item_id
    from {{ read.relation }} as read_rows

){% if not loop.last %},{% endif %}

{% endfor %}
{% for e in entries %}
{%- set rows = 'eval_set_' ~ e.order %}
{%- for field in e.fields %}
{%- set column = adapter.quote(field) %}
{%- if execute and eval_field_kind(kinds[e.name][field]) == 'list' %}
select
    '{{ e.name }}' as eval_set,
    item_id,
    '{{ field }}' as field,
    turn,
    cast(text as {{ string }}) as text
from (
    select
        item_id,
        {{ explode_with_index(column, 'turn', 'text') }}
    from {{ rows }}
) as listed
union all
-- a NULL field or an empty list: one row with a NULL text
select
    '{{ e.name }}' as eval_set,
    item_id,
    '{{ field }}' as field,
    cast(0 as bigint) as turn,
    cast(null as {{ string }}) as text
from {{ rows }}
where {{ column }} is null or {{ list_size(column) }} = 0
{%- else %}
select
    '{{ e.name }}' as eval_set,
    item_id,
    '{{ field }}' as field,
    cast(0 as bigint) as turn,
    cast({{ column }} as {{ string }}) as text
from {{ rows }}
{%- endif %}
{% if not loop.last %}union all{% endif %}
{%- endfor %}
{% if not loop.last %}union all{% endif %}
{% endfor %}
{% else %}
-- no entry: no row, the same columns
select
    cast(null as {{ string }}) as eval_set, cast(null as bigint) as item_id, cast(null as {{ string }}) as field,
    cast(null as bigint) as turn, cast(null as {{ string }}) as text
where false
{% endif %}
