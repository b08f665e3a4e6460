{#- Catalog comments in plain text. persist_docs writes each model's, seed's and column's
    description into the DuckDB catalog as a COMMENT (what SQL clients show, and what the
    export's dataset cards read). The descriptions are Markdown for `dbt docs`, which keeps them
    as written; the comments get them through plain_text(). These two macros override
    dbt-duckdb 1.11's own (dbt/include/duckdb/macros/persist_docs.sql: dbt looks in the root
    project first) and call them with the plain text. On Spark neither is called. -#}

{#- Markdown to plain text: headings' leading #s, **bold**, *emphasis* and `code` ticks removed,
    [text](url) written as "text (url)", white space around the whole trimmed (line breaks inside
    are kept). Left as written: a * or _ inside or beside a word (*_agrees, stg_x__y), which is a
    glob or a name, not emphasis; Markdown tables and list markers, which read as plain text. -#}
{% macro plain_text(markdown) -%}
    {%- set re = modules.re -%}
    {%- set text = re.sub('\\[([^\\]]*)\\]\\(([^)\\s]*)\\)', '\\1 (\\2)', markdown) -%}
    {%- set text = re.sub('(?m)^[ \\t]*#{1,6}[ \\t]+', '', text) -%}
    {%- set text = re.sub('\\*\\*(.+?)\\*\\*', '\\1', text) -%}
    {%- set text = re.sub('(?<![\\w*])\\*(?=\\S)([^*\\n]*?\\S)\\*(?![\\w*])', '\\1', text) -%}
    {{- return(text | replace('`', '') | trim) -}}
{%- endmacro %}

{% macro duckdb__alter_relation_comment(relation, comment) -%}
    {{ dbt.duckdb__alter_relation_comment(relation, plain_text(comment)) }}
{%- endmacro %}

{% macro duckdb__alter_column_comment(relation, column_dict) -%}
    {%- set plain = {} -%}
    {%- for name, column in column_dict.items() -%}
        {%- do plain.update({name: dict(column, description=plain_text(column['description']))}) -%}
    {%- endfor -%}
    {{ dbt.duckdb__alter_column_comment(relation, plain) }}
{%- endmacro %}
