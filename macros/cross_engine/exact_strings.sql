{#- Exact (codepoint) string semantics, independent of any collation setting.
    Python compares str by codepoint; UTF-8 bytes sort in codepoint order, so comparing the
    encoded bytes reproduces Python's `==`, `<`, `>` on strings ('N/A' > '5', '10' < '2'). -#}

{#- The UTF-8 bytes of a string, for exact comparisons: `{{ binary_string('a') }} > {{ binary_string('b') }}`. -#}
{% macro binary_string(expr) -%}
    {{ return(adapter.dispatch('binary_string', 'preference_warehouse')(expr)) }}
{%- endmacro %}
{% macro default__binary_string(expr) -%} encode({{ expr }}) {%- endmacro %}
{% macro spark__binary_string(expr) -%} cast({{ expr }} as binary) {%- endmacro %}

{#- True when the string is one or more ASCII digits and nothing else (NULL for NULL). -#}
{% macro is_digit_string(expr) -%}
    {{ return(adapter.dispatch('is_digit_string', 'preference_warehouse')(expr)) }}
{%- endmacro %}
{% macro default__is_digit_string(expr) -%} regexp_full_match({{ expr }}, '[0-9]+') {%- endmacro %}
{% macro spark__is_digit_string(expr) -%} ({{ expr }} rlike '^[0-9]+$') {%- endmacro %}
