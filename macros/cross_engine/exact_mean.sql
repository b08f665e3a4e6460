{#- The mean of a numeric expression, the same whatever the row order (thread count, scheduling,
    engine). A float sum depends on the order it adds in; this adds exact decimals instead (each
    value rounded once to 12 decimal places, far below any figure the marts report), then
    divides: same inputs, bit-identical result. NULLs are skipped, as avg() skips them; NULL when
    there is no value. Use it for every mean of non-integer values in a mart. -#}
{% macro exact_mean(expr) -%}
    {{ return(adapter.dispatch('exact_mean', 'preference_warehouse')(expr)) }}
{%- endmacro %}
{% macro default__exact_mean(expr) -%}
    cast(sum(cast({{ expr }} as decimal(38, 12))) as double) / nullif(count({{ expr }}), 0)
{%- endmacro %}
{% macro spark__exact_mean(expr) -%}
    cast(sum(cast({{ expr }} as decimal(38, 12))) as double) / nullif(count({{ expr }}), 0)
{%- endmacro %}
