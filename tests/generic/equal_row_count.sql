{#- Fails when the model and `compare_to` (a ref() or source()) differ in row count:
    staging must keep every raw row. Returns one row describing the difference. -#}
{% test equal_row_count(model, compare_to) %}

with

model_rows as (select count(*) as n from {{ model }}),

compare_rows as (select count(*) as n from {{ compare_to }})

select
    model_rows.n as model_rows,
    compare_rows.n as compare_rows
from model_rows
cross join compare_rows
where model_rows.n != compare_rows.n

{% endtest %}
