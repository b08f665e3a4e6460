{#- a = b where NULL equals NULL (IS NOT DISTINCT FROM), spelled in plain SQL so it reads the
    same on every engine and in sqlfluff. -#}
{% macro ultrafeedback_null_safe_equal(a, b) -%}
    coalesce(({{ a }}) = ({{ b }}), ({{ a }}) is null and ({{ b }}) is null)
{%- endmacro %}
