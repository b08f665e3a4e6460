{#- Which side a pair of scores prefers: 'chosen', 'rejected', 'tie', or 'unknown' when either is NULL. -#}
{% macro preference_side(chosen_expr, rejected_expr) -%}
    case
        when {{ chosen_expr }} is null or {{ rejected_expr }} is null then 'unknown'
        when {{ chosen_expr }} > {{ rejected_expr }} then 'chosen'
        when {{ chosen_expr }} < {{ rejected_expr }} then 'rejected'
        else 'tie'
    end
{%- endmacro %}
