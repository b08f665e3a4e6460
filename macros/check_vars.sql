{#- The vars this project reads, given in dbt_project.yml's `vars:` or with --vars (docs/configuration.md).
    tests/python/test_vars.py holds this list to the var('...') calls of the project. -#}
{% macro known_vars() %}
    {{ return([
        'contamination', 'datasets', 'eval_sets', 'extra_datasets', 'mixture', 'mixture_length_balanced',
        'mixture_max_pairs_per_prompt_cluster', 'near_duplicates', 'pii_flag_personal', 'pii_scan', 'random_seed',
        'reuse_unchanged', 'tokenizer_file', 'train_on_flagged_pairs', 'truncation_budgets',
    ]) }}
{% endmacro %}

{#- The first check of a build (on-run-start): every var is a known one, and every structured var
    passes its macro's check (extra_datasets, eval_sets, contamination, mixture, near_duplicates,
    datasets). All problems are reported together, one line each, before any model runs; a name
    that is not known is shown with the closest known one. -#}
{% macro check_vars() %}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set problems = [] -%}
    {%- for name in cli_vars() if name not in known_vars() -%}
        {%- do problems.append('unknown var ' ~ name ~ did_you_mean(name, known_vars(), 'vars')) -%}
    {%- endfor -%}
    {%- for name in project_file_vars() if name not in known_vars() -%}
        {%- do problems.append('unknown var ' ~ name ~ ' in dbt_project.yml' ~ did_you_mean(name, known_vars(), 'vars')) -%}
    {%- endfor -%}
    {%- set groups = var('datasets', builtin_dataset_names()) -%}
    {%- if groups is string or groups is mapping or groups is not iterable -%}
        {%- do problems.append('var datasets is a list of dataset groups, e.g. datasets: [ultrafeedback, rever]; got: ' ~ groups) -%}
    {%- else -%}
        {%- for group in groups if group not in builtin_dataset_names() -%}
            {%- do problems.append('var datasets: unknown dataset group ' ~ group ~ did_you_mean(group, builtin_dataset_names(), 'groups')) -%}
        {%- endfor -%}
    {%- endif -%}
    {%- for found in [extra_datasets(report=true), eval_sets(report=true), contamination_settings(report=true),
                      mixture_fractions(report=true), mixture_max_pairs_per_prompt_cluster(report=true),
                      near_duplicate_settings(report=true)] if found is string -%}
        {%- do problems.append(found) -%}
    {%- endfor -%}
    {%- if problems -%}{{ exceptions.raise_compiler_error(problems | join('\n')) }}{%- endif -%}
    {{ return('') }}
{% endmacro %}

{#- The names given with --vars (dbt passes them parsed; YAML text is read as such). -#}
{% macro cli_vars() %}
    {%- set given = invocation_args_dict.get('vars') or {} -%}
    {{ return((fromyaml(given) if given is string else given) or {}) }}
{% endmacro %}

{#- The names under `vars:` in dbt_project.yml (those scoped to this project too), which dbt gives
    no list of: the file as DuckDB reads it. None on another engine. -#}
{% macro project_file_vars() %}
    {%- if target.type != 'duckdb' -%}{{ return([]) }}{%- endif -%}
    {%- set text = run_query('select content from read_text(' ~ sql_string(project_path('dbt_project.yml')) ~ ')').columns[0].values()[0] -%}
    {%- set given = fromyaml(text).get('vars') or {} -%}
    {%- set names = given.keys() | reject('equalto', project_name) | list -%}
    {%- do names.extend((given.get(project_name) or {}).keys()) -%}
    {{ return(names) }}
{% endmacro %}

{#- A var's value as its macro checked it (`found`: the value, or the line saying what is wrong):
    the value; with `report` the line (check_vars collects them); else the line stops dbt. While a
    command that runs on-run-start parses, `parsed` stands in for a wrong value, so that
    check_vars reports the line before any model runs (not a parse error of whichever model
    read the var first). -#}
{% macro checked_var(found, report, parsed) %}
    {%- if found is not string or report -%}{{ return(found) }}{%- endif -%}
    {%- if not execute and runs_start_checks() -%}{{ return(parsed) }}{%- endif -%}
    {{ exceptions.raise_compiler_error(found) }}
{% endmacro %}

{#- A var of settings, `name`: `given` (a mapping) over `defaults`, as checked_var gives it. A key
    that is not one of `defaults`' is the line; else what `problem(given, settings)` says, if anything. -#}
{% macro checked_settings(name, given, defaults, problem, report) %}
    {%- set settings = dict(defaults) -%}
    {%- if given is mapping -%}
        {%- for key in given.keys() | reject('in', defaults.keys() | list) -%}
            {{ return(checked_var('var ' ~ name ~ ': unknown key ' ~ key ~ did_you_mean(key, defaults.keys() | list, 'keys'), report, defaults)) }}
        {%- endfor -%}
        {%- do settings.update(given) -%}
    {%- endif -%}
    {{ return(checked_var(problem(given, settings) or settings, report, defaults)) }}
{% endmacro %}

{#- The end of a line about a `name` that is none of `known` (its `kind`: vars, keys, ...):
    ": did you mean <closest>?", or " -- the <kind> are <known>" when none is close. -#}
{% macro did_you_mean(name, known, kind) %}
    {%- set closest = closest_name(name, known) -%}
    {%- if closest -%}{{ return(': did you mean ' ~ closest ~ '?') }}{%- endif -%}
    {{ return(' -- the ' ~ kind ~ ' are ' ~ (known | join(', ')) if known else '') }}
{% endmacro %}

{#- The name of `known` fewest single-character edits (insert, delete, replace) from `name`, the
    first of equals, when at most a third of `name`'s length (at least 1) away; else none.
    preftools/inputs/registry.py closest_name is the same rule. -#}
{% macro closest_name(name, known) %}
    {%- set name = name | string -%}
    {%- set best = {'name': none, 'edits': [1, (name | length) // 3] | max + 1} -%}
    {%- for candidate in known -%}
        {%- set edits = edit_distance(name, candidate) -%}
        {%- if edits < best.edits -%}{%- do best.update({'name': candidate, 'edits': edits}) -%}{%- endif -%}
    {%- endfor -%}
    {{ return(best.name) }}
{% endmacro %}

{#- Levenshtein distance: row by row, each cell the fewest edits from a prefix of `a` to one of `b`. -#}
{% macro edit_distance(a, b) %}
    {%- set rows = [range(b | length + 1) | list] -%}
    {%- for ca in a -%}
        {%- set above = rows[-1] -%}
        {%- set row = [loop.index] -%}
        {%- for cb in b -%}
            {%- do row.append([above[loop.index] + 1, row[-1] + 1, above[loop.index0] + (0 if ca == cb else 1)] | min) -%}
        {%- endfor -%}
        {%- do rows.append(row) -%}
    {%- endfor -%}
    {{ return(rows[-1][-1]) }}
{% endmacro %}
