{#- None of `columns` is NULL: `not_null` for several columns in one scan of the model (one
    node, where a `not_null` per column makes one node and one scan each). Fails with one row
    per column that has NULLs: the column's name and how many rows. -#}
{% test not_null_columns(model, columns) %}

with null_counts as (

    select
        {%- for column in columns %}
        count(case when {{ column }} is null then 1 end) as n_{{ loop.index }}{{ ',' if not loop.last }}
        {%- endfor %}
    from {{ model }}

)

{% for column in columns -%}
select '{{ column }}' as column_name, n_{{ loop.index }} as null_rows from null_counts where n_{{ loop.index }} > 0
{% if not loop.last %}union all
{% endif -%}
{%- endfor %}

{% endtest %}
