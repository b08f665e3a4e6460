{#- Catalog comments in plain text. persist_docs writes each model's, seed's and column's
    description into the DuckDB catalog as a COMMENT (what SQL clients show, and what the
    export's dataset cards read). The descriptions are Markdown for `dbt docs`, which keeps them
    as written; the comments get them through plain_text(). duckdb__persist_docs below overrides
    dbt-duckdb 1.11's (dbt looks in the root project first): the same comments, in one statement
    after one look at the relation's columns, where dbt's runs a statement for the relation,
    one for the columns, and looks at the columns twice. A fresh build runs it for every model,
    so the extra statements were a measurable share of a small build.
    On Spark it is not called. -#}

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

{#- dbt's persist_docs (global project, adapters/persist_docs.sql) with its rules: the relation's
    comment when it has a description, the columns' when they have any, documented columns
    missing from the relation left out with dbt's warning (validate_doc_columns). -#}
{% macro duckdb__persist_docs(relation, model, for_relation, for_columns) -%}
    {%- set statements = [] -%}
    {%- if for_relation and config.persist_relation_docs() and model.description -%}
        {%- do statements.append('comment on ' ~ relation.type ~ ' ' ~ relation ~ ' is '
                                 ~ dbt.duckdb_escape_comment(plain_text(model.description)) ~ ';') -%}
    {%- endif -%}
    {%- if for_columns and config.persist_column_docs() and model.columns -%}
        {%- set existing = adapter.get_columns_in_relation(relation) | map(attribute='name') | list -%}
        {%- for name, column in validate_doc_columns(relation, model.columns, existing).items() -%}
            {%- do statements.append('comment on column ' ~ relation ~ '.' ~ (adapter.quote(name) if column['quote'] else name)
                                     ~ ' is ' ~ dbt.duckdb_escape_comment(plain_text(column['description'])) ~ ';') -%}
        {%- endfor -%}
    {%- endif -%}
    {%- if statements -%}
        {%- do run_query(statements | join('\n')) -%}
    {%- endif -%}
{%- endmacro %}
