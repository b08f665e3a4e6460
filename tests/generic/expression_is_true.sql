{#- Fails on every row where `expression` is not true (NULL counts as a failure unless
    the expression handles it). Optional `where` narrows the rows checked. -#}
{% test expression_is_true(model, expression) %}

select *
from {{ model }}
where not coalesce(({{ expression }}), false)

{% endtest %}
