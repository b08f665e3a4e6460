{#- Helpers for the spark__ versions of the cross-engine macros: they turn DuckDB-dialect
    snippets (the form the models and macros are written in) into Spark SQL. -#}

{#- A regex pattern written for DuckDB (RE2) as a Spark SQL string literal that matches the
    same strings with Java's engine:
      - `(?d)` (UNIX_LINES): only '\n' ends a line for `.`, `^`, `$`, as in RE2 (Java also
        treats '\r', U+0085, U+2028, U+2029 as line ends);
      - a final `$` without multi-line mode becomes `\z`: in RE2 it matches only at the very
        end, in Java also before a final '\n';
      - backslashes and quotes escaped (Spark string literals treat '\' as an escape). -#}
{% macro spark_regex_literal(pattern) -%}
    {%- set p = pattern -%}
    {%- set leading_flags = modules.re.match('(?:\\(\\?[a-zA-Z]*\\))*', p).group(0) -%}
    {%- if 'm' not in leading_flags and modules.re.search('(^|[^\\\\])(\\\\\\\\)*\\$$', p) -%}
        {%- set p = p[:-1] ~ '\\z' -%}
    {%- endif -%}
    '{{ ('(?d)' ~ p) | replace('\\', '\\\\') | replace("'", "\\'") }}'
{%- endmacro %}

{#- A DuckDB expression with "double-quoted" identifiers, with Spark's `backticks` instead
    (Spark reads "..." as a string literal). Single-quoted literals are left as they are. -#}
{% macro spark_identifiers(expr) -%}
    {%- set parts = modules.re.split("('(?:[^']|'')*')", expr | string) -%}
    {%- set out = [] -%}
    {%- for part in parts -%}
        {%- if part.startswith("'") -%}
            {%- do out.append(part) -%}
        {%- else -%}
            {%- do out.append(modules.re.sub('"((?:[^"]|"")*)"', '`\\1`', part)) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ out | join('') }}
{%- endmacro %}
