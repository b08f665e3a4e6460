{#- An exact-match key over several text columns: md5 of the parts' own md5s joined with ':'.
    Unlike stable_hash it cannot be fooled by a ':' inside a part, and tells NULL from ''
    (a NULL part hashes as the literal 'null', which no md5 hex digest equals). -#}
{% macro code_ultrafeedback_match_key(parts) -%}
    md5(concat_ws(':', {% for p in parts %}coalesce(md5({{ p }}), 'null'){{ ", " if not loop.last }}{% endfor %}))
{%- endmacro %}
