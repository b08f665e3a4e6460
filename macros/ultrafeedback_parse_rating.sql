{#- UltraFeedback aspect Rating string -> INTEGER: exactly one of "1".."5" is cast, anything
    else ("N/A", "0", "10", "", " 4", NULL, free text) becomes NULL. Plain SQL, same on every
    engine. -#}
{% macro ultrafeedback_parse_rating(rating_expr) -%}
    case when {{ rating_expr }} in ('1', '2', '3', '4', '5') then cast({{ rating_expr }} as integer) end
{%- endmacro %}
