{#- Two nullable numbers agree: both NULL, or both set and within `tolerance` (recomputed
    means and published float64 means may differ in the last bits). Plain SQL. -#}
{% macro ultrafeedback_same_number(a, b, tolerance=1e-9) -%}
    coalesce(abs(({{ a }}) - ({{ b }})) < {{ tolerance }}, ({{ a }}) is null and ({{ b }}) is null)
{%- endmacro %}
