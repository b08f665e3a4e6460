{#- The file name without its folder, from the reader's `filename` column. -#}
{% macro file_basename(path_expr) -%}
    {{ return(adapter.dispatch('file_basename', 'preference_warehouse')(path_expr)) }}
{%- endmacro %}
{% macro default__file_basename(path_expr) -%} regexp_extract({{ path_expr }}, '[^/]+$', 0) {%- endmacro %}

{#- First capture group of a regex, '' when there is no match (same on both engines). -#}
{% macro regex_group(expr, pattern, group=1) -%}
    {{ return(adapter.dispatch('regex_group', 'preference_warehouse')(expr, pattern, group)) }}
{%- endmacro %}
{% macro default__regex_group(expr, pattern, group) -%} regexp_extract({{ expr }}, '{{ pattern }}', {{ group }}) {%- endmacro %}

{#- A stable text key: md5 hex of the parts joined with ':' (md5 exists on both engines, so
    keys and random draws agree across engines). NULL parts become ''. -#}
{% macro stable_hash(parts) -%}
    md5(concat_ws(':', {% for p in parts %}coalesce(cast({{ p }} as {{ dbt.type_string() }}), ''){{ ", " if not loop.last }}{% endfor %}))
{%- endmacro %}
