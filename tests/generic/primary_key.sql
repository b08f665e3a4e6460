{#- `columns` identify a row: fails for each key that is NULL (in any part) or occurs more than
    once. One scan of the model, where `unique` + `not_null` make two (it matters on the audit
    views, whose query each test runs again). -#}
{% test primary_key(model, columns) %}

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
