{#- A one-row model (a headline, a summary over everything): fails unless it has exactly one row.
    Its primary key is the empty set, so this is its primary-key test. -#}
{% test one_row(model) %}

select n_rows
from (select count(*) as n_rows from {{ model }}) as counted
where n_rows != 1

{% endtest %}
