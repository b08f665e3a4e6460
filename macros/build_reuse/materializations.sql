{#- The materializations of this project on DuckDB, wrapping dbt's own so that a node whose
    inputs did not change is not recomputed (the rule: build_reuse.sql). Each override decides,
    then either reports the node as REUSED without running anything against the data, or calls
    the original materialization unchanged (dbt-duckdb's table, dbt's view/seed/test; all
    reachable through the `dbt` namespace, which holds the adapter's internal macros too) and
    records the new fingerprint after it succeeded. Declared for adapter='duckdb' only: on Spark
    dbt picks its own materializations and nothing here runs. -#}

{#- A reused table, view or seed: the `main` result says REUSED, nothing runs against the data. -#}
{% macro build_reuse_keep(model, decision, relation) -%}
    {%- do build_reuse_log_reused(model) -%}
    {%- call noop_statement('main', 'REUSED', 'REUSED', 0) -%}
        -- build_reuse: unchanged inputs, {{ relation }} kept as built by invocation {{ decision.recorded.invocation_id }}
    {%- endcall -%}
{%- endmacro %}

{% materialization table, adapter='duckdb', supported_languages=['sql', 'python'] %}
    {%- set decision = build_reuse_decide(model, this.incorporate(type='table')) -%}
    {%- if decision.reuse -%}
        {%- do build_reuse_keep(model, decision, this) -%}
        {{ return({'relations': [this.incorporate(type='table')]}) }}
    {%- endif -%}
    {%- if model.language != 'python' -%}
        {%- set result = dbt.materialization_table_duckdb() -%}
    {%- else -%}
        {#- dbt lets a Python job be submitted only by a `statement` called directly from the
            materialization (submit_python_job checks for a macro call stack of depth 2), so
            dbt-duckdb's materialization cannot be called from here for a Python model. Its
            steps for a Python table without foreign keys, partitioning, sorting or DuckLake
            (dbt/include/duckdb/macros/materializations/table.sql), inline: build beside the
            old table (the VADER model reads its previous scores from it meanwhile), swap,
            drop the old one after the commit. -#}
        {%- set existing_relation = load_cached_relation(this) -%}
        {%- set target_relation = this.incorporate(type='table') -%}
        {%- set intermediate_relation = make_intermediate_relation(target_relation) -%}
        {%- set backup_relation = make_backup_relation(target_relation, 'table' if existing_relation is none else existing_relation.type) -%}
        {{ drop_relation_if_exists(load_cached_relation(intermediate_relation)) }}
        {{ drop_relation_if_exists(load_cached_relation(backup_relation)) }}
        {{ run_hooks(pre_hooks, inside_transaction=False) }}
        {{ run_hooks(pre_hooks, inside_transaction=True) }}
        {% call statement('main', language='python') -%}
            {{- create_table_as(False, intermediate_relation, compiled_code, 'python') }}
        {%- endcall %}
        {% if existing_relation is not none %}
            {{ adapter.rename_relation(existing_relation, backup_relation) }}
        {% endif %}
        {{ adapter.rename_relation(intermediate_relation, target_relation) }}
        {{ run_hooks(post_hooks, inside_transaction=True) }}
        {% do persist_docs(target_relation, model) %}
        {{ adapter.commit() }}
        {{ drop_relation_if_exists(backup_relation) }}
        {{ run_hooks(post_hooks, inside_transaction=False) }}
        {%- set result = {'relations': [target_relation]} -%}
    {%- endif -%}
    {#- its fingerprint (the signature follows at on-run-end) -#}
    {%- do build_reuse_record(model.unique_id, decision.fingerprint, 'success') -%}
    {{ return(result) }}
{% endmaterialization %}

{% materialization view, adapter='duckdb' %}
    {%- set decision = build_reuse_decide(model, this.incorporate(type='view')) -%}
    {%- if decision.reuse -%}
        {%- do build_reuse_keep(model, decision, this) -%}
        {{ return({'relations': [this.incorporate(type='view')]}) }}
    {%- endif -%}
    {%- set result = dbt.materialization_view_default() -%}
    {#- its fingerprint (the signature follows at on-run-end) -#}
    {%- do build_reuse_record(model.unique_id, decision.fingerprint, 'success') -%}
    {{ return(result) }}
{% endmaterialization %}

{% materialization seed, adapter='duckdb' %}
    {%- set decision = build_reuse_decide(model, this.incorporate(type='table')) -%}
    {%- if decision.reuse -%}
        {%- do build_reuse_keep(model, decision, this) -%}
        {#- dbt's SeedRunner reads the CSV's table from this result (`dbt seed --show`) -#}
        {%- do store_result('agate_table', response='OK', agate_table=load_agate_table()) -%}
        {{ return({'relations': [this.incorporate(type='table')]}) }}
    {%- endif -%}
    {%- set result = dbt.materialization_seed_default() -%}
    {#- its fingerprint (the signature follows at on-run-end) -#}
    {%- do build_reuse_record(model.unique_id, decision.fingerprint, 'success') -%}
    {{ return(result) }}
{% endmaterialization %}

{#- A reused passing test or unit test: the `main` result is `passing_result` (a query giving what
    dbt's runner reads as a pass), its adapter response says REUSED. -#}
{% macro build_reuse_pass(model, passing_result) -%}
    {%- do build_reuse_log_reused(model) -%}
    {%- do store_raw_result('main', message='REUSED', code='REUSED', rows_affected=0, agate_table=run_query(passing_result)) -%}
{%- endmacro %}

{#- dbt's TestRunner reads one row (failures, should_warn, should_error) from the `main` result:
    a reused passing test gives 0, false, false. Tests that store their failures are never
    reused (their table would have to be rebuilt anyway). -#}
{% materialization test, adapter='duckdb' %}
    {%- set decision = build_reuse_decide(model, none) -%}
    {%- if decision.reuse and not should_store_failures() -%}
        {%- do build_reuse_pass(model, 'select 0 as failures, false as should_warn, false as should_error') -%}
        {{ return({'relations': []}) }}
    {%- endif -%}
    {%- set result = dbt.materialization_test_default() -%}
    {%- set row = load_result('main').table.rows[0] -%}
    {%- set status = 'fail' if row[2] else ('warn' if row[1] else 'pass') -%}
    {%- do build_reuse_record(model.unique_id, decision.fingerprint, status, none) -%}
    {{ return(result) }}
{% endmaterialization %}

{#- dbt's UnitTestRunner reads the `main` result's rows, split into actual and expected by the
    column actual_or_expected, and compares them in Python: a reused passing unit test gives
    none of either (nothing to compare: it passes). Its fingerprint is recorded as 'ran'; the
    on-run-end hook marks it 'pass' when dbt's comparison passed (only dbt knows that, after
    this materialization). -#}
{% materialization unit, adapter='duckdb' %}
    {%- set decision = build_reuse_decide(model, none) -%}
    {%- if decision.reuse -%}
        {%- do build_reuse_pass(model, "select 'actual' as actual_or_expected where false") -%}
        {{ return({'relations': []}) }}
    {%- endif -%}
    {%- set result = dbt.materialization_unit_default() -%}
    {%- do build_reuse_record(model.unique_id, decision.fingerprint, 'ran', none) -%}
    {{ return(result) }}
{% endmaterialization %}
