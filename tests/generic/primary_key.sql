{#- `columns` identify a row: fails for each key that is NULL (in any part) or occurs more than
    once. One scan of the model, where `unique` + `not_null` make two nodes and two scans. On a
    column (`data_tests: [primary_key]`) the key is that column. -#}
{% test primary_key(model, columns=none, column_name=none) %}
{%- set columns = columns or [column_name] %}

select
    {{ columns | join(', ') }},
    count(*) as n_rows
from {{ model }}
group by {{ columns | join(', ') }}
having
    count(*) > 1
    {%- for column in columns %}
    or {{ column }} is null
    {%- endfor %}

{% endtest %}
