{#- A model's rules, all checked by one test node. dbt spends about 40 ms on a test node even
    when the test is reused, and each separate test scans the model again. Every argument is
    optional:
      primary_key: [columns]                 no part of the key is NULL and no key occurs twice
      unique: [[columns], ...]               no combination occurs twice (a NULL counts as a
                                             value, as in dbt_utils' unique_combination_of_columns)
      one_row: true                          exactly one row (a headline or summary: the key is
                                             the empty set)
      not_null: [columns]                    never NULL
      accepted_values: {column: [values]}    one of the values (strings are quoted); NULL passes,
                                             as in dbt's accepted_values
      expressions: {label: SQL}              true on every row (NULL fails)
      same_row_count_as: ref() or source()   as many rows as that relation (staging keeps every
                                             raw row; a model keeps every row of its parent)
    Fails with one row per broken rule: the rule and how many rows break it (for a key, how many
    keys occur more than once). -#}
{% test checks(model, primary_key=[], unique=[], one_row=false, not_null=[], accepted_values={}, expressions={}, same_row_count_as=none) %}

{#- (label, SQL that is true on a failing row); a label or value holding a quote is refused: it
    would end its SQL string literal (and Spark and DuckDB escape quotes differently) -#}
{%- set rules = [] %}
{%- if primary_key %}
    {%- set key_nulls = [] %}
    {%- for column in primary_key %}{% do key_nulls.append(column ~ ' is null') %}{% endfor %}
    {%- do rules.append(('NULL in primary key (' ~ primary_key | join(', ') ~ ')', key_nulls | join(' or '))) %}
{%- endif %}
{%- for column in not_null %}
    {%- do rules.append(('NULL in ' ~ column, column ~ ' is null')) %}
{%- endfor %}
{%- for column, values in accepted_values.items() %}
    {%- set literals = [] %}
    {%- for value in values %}
        {%- if value is string and "'" in value %}{% do exceptions.raise_compiler_error("checks on " ~ column ~ ": an accepted value may not hold a quote: " ~ value) %}{% endif %}
        {%- do literals.append("'" ~ value ~ "'" if value is string else value | string) %}
    {%- endfor %}
    {%- do rules.append((column ~ ' not in accepted values', column ~ ' not in (' ~ literals | join(', ') ~ ')')) %}
{%- endfor %}
{%- for label, expression in expressions.items() %}
    {%- do rules.append(('not true: ' ~ label, 'not coalesce((' ~ expression ~ '), false)')) %}
{%- endfor %}
{%- for label, _ in rules %}
    {%- if "'" in label %}{% do exceptions.raise_compiler_error("checks: a label may not hold a quote: " ~ label) %}{% endif %}
{%- endfor %}
{%- set keys = ([primary_key] if primary_key else []) + unique %}
{%- set failures = [] %}
{%- if one_row %}
    {%- do failures.append("select 'not exactly one row' as failed_check, n_rows as failing_rows from row_counts where n_rows != 1") %}
{%- endif %}
{%- for label, _ in rules %}
    {%- do failures.append("select '" ~ label ~ "' as failed_check, failing_" ~ loop.index ~ " as failing_rows from row_counts where failing_" ~ loop.index ~ " > 0") %}
{%- endfor %}
{%- if same_row_count_as is not none %}
    {#- a source is read from its raw files (no table name of its own) -#}
    {%- do failures.append("select 'row count differs from " ~ (same_row_count_as.identifier or 'its raw files') ~ "' as failed_check, abs(n_rows - n_compared) as failing_rows from row_counts cross join compared_rows where n_rows != n_compared") %}
{%- endif %}
{%- for key in keys %}
    {%- do failures.append("select 'duplicate (" ~ key | join(', ') ~ ")' as failed_check, n_keys as failing_rows from duplicate_keys_" ~ loop.index ~ " where n_keys > 0") %}
{%- endfor %}
{%- if not failures %}{% do exceptions.raise_compiler_error("checks: no rule given") %}{% endif %}

with row_counts as (

    select
        count(*) as n_rows
        {%- for _, failing in rules %},
        count(case when {{ failing }} then 1 end) as failing_{{ loop.index }}
        {%- endfor %}
    from {{ model }}

){% if same_row_count_as is not none %},

compared_rows as (

    select count(*) as n_compared from {{ same_row_count_as }}

){% endif %}{% for key in keys %},

duplicate_keys_{{ loop.index }} as (

    select count(*) as n_keys
    from (
        select {{ key | join(', ') }}
        from {{ model }}
        group by {{ key | join(', ') }}
        having count(*) > 1
    ) as duplicated

){% endfor %}

{{ failures | join('\nunion all\n') }}

{% endtest %}
