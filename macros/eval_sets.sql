{#- The eval sets whose prompts must not reach a training split: the var `eval_sets`, one entry per
    Hub dataset, and the var `contamination`, the rule's settings (docs/decontamination.md):

      eval_sets:
        - name: truthfulqa                 # snake_case; names the set in every table
          hub_id: truthfulqa/truthful_qa   # the folder under RAW_DATA_DIR
          config: generation
          splits: [validation]             # default: every split
          fields: [question]               # string fields, or lists of strings
      contamination: {ngram: 8, threshold: 0.5, max_eval_share: 2.0}

    eval_sets() -> the entries, checked, with defaults filled in; a wrong entry stops the build
    with one line naming the entry, the key and the fix (check_vars, before any model). -#}
{% macro eval_sets(raw=none, report=false) %}
    {{ return(checked_var(eval_sets_checked((var('eval_sets', []) if raw is none else raw) or []), report, [])) }}
{% endmacro %}

{#- The entries with defaults filled in, or the line saying what is wrong with the first wrong one
    (preftools/inputs/registry.py eval_sets says the same). -#}
{% macro eval_sets_checked(raw) %}
    {%- set entries = [] -%}
    {%- set names = [] -%}
    {%- if raw is string or raw is mapping -%}
        {{ return("var eval_sets must be a list of entries (`eval_sets: [{name: ..., hub_id: ..., fields: [...]}]`), got: " ~ raw) }}
    {%- endif -%}
    {%- for e in raw -%}
        {%- set where = 'eval_sets entry ' ~ loop.index ~ ((' (' ~ e.get('name') ~ ')') if e is mapping and e.get('name') else '') -%}
        {%- if e is not mapping -%}
            {{ return(where ~ ': an entry is a mapping with name, hub_id and fields, got: ' ~ e) }}
        {%- endif -%}
        {%- set keys = ['name', 'hub_id', 'config', 'splits', 'fields'] -%}
        {%- for key in e.keys() | reject('in', keys) -%}
            {{ return(where ~ ': unknown key ' ~ key ~ did_you_mean(key, keys, 'keys')) }}
        {%- endfor -%}
        {%- if not (e.get('name') is string and modules.re.fullmatch('[a-z][a-z0-9_]*', e.get('name'))) -%}
            {{ return(where ~ ': `name` must be snake_case (lower-case letters, digits, _), e.g. name: truthfulqa; got: ' ~ e.get('name')) }}
        {%- endif -%}
        {%- if e.get('name') in names or e.get('name') in builtin_dataset_names() or e.get('name') in raw_contract().keys() | list
                or e.get('name') in (var('extra_datasets', []) or []) | map(attribute='name') | list -%}
            {{ return(where ~ ': name ' ~ e.get('name') ~ ' is already taken (a dataset or an earlier entry: row_accounting names both) -- pick another name') }}
        {%- endif -%}
        {%- if not (e.get('hub_id') is string and modules.re.fullmatch('[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*', e.get('hub_id'))) -%}
            {{ return(where ~ ': `hub_id` must be <org>/<dataset> as on the Hub, e.g. hub_id: truthfulqa/truthful_qa; got: ' ~ e.get('hub_id')) }}
        {%- endif -%}
        {%- set fields = e.get('fields') -%}
        {%- if not (fields is sequence and fields is not string and fields | length > 0 and fields | reject('string') | list | length == 0 and '' not in fields) -%}
            {{ return(where ~ ': `fields` is a list of the column names holding the eval texts, e.g. fields: [question]; got: ' ~ fields) }}
        {%- endif -%}
        {%- set splits = e.get('splits') -%}
        {%- if splits is not none and not (splits is sequence and splits is not string and splits | length > 0 and splits | reject('string') | list | length == 0 and '' not in splits) -%}
            {{ return(where ~ ': `splits` is a list of split names, e.g. splits: [test]; got: ' ~ splits) }}
        {%- endif -%}
        {%- if e.get('config') is not none and not (e.get('config') is string and e.get('config')) -%}
            {{ return(where ~ ': `config` is the name of one of the repo\'s configs (subsets), e.g. config: main; got: ' ~ e.get('config')) }}
        {%- endif -%}
        {%- do names.append(e.get('name')) -%}
        {%- do entries.append({'name': e.get('name'), 'hub_id': e.get('hub_id'), 'config': e.get('config'), 'splits': splits,
                               'fields': fields | unique | list, 'order': loop.index0}) -%}
    {%- endfor -%}
    {{ return(entries) }}
{% endmacro %}

{#- The var `contamination` with its defaults: {ngram, threshold, max_eval_share}. -#}
{% macro contamination_settings(report=false) %}
    {{ return(checked_settings('contamination', var('contamination', {}) or {}, {'ngram': 8, 'threshold': 0.5, 'max_eval_share': 2.0},
        contamination_problem, report)) }}
{% endmacro %}

{#- What is wrong with the var contamination (`given`; `settings`: with the defaults), or ''. -#}
{% macro contamination_problem(given, settings) %}
    {%- if given is not mapping -%}
        {{ return('var contamination is a mapping, e.g. contamination: {ngram: 8, threshold: 0.5, max_eval_share: 2.0}; got: ' ~ given) }}
    {%- endif -%}
    {%- if not (settings.ngram is integer and settings.ngram is not boolean and settings.ngram >= 1) -%}
        {{ return('var contamination: `ngram` is a whole number of tokens >= 1, e.g. ngram: 8; got: ' ~ settings.ngram) }}
    {%- endif -%}
    {%- if not (settings.threshold is number and settings.threshold is not boolean and 0 <= settings.threshold < 1) -%}
        {{ return('var contamination: `threshold` is the share of an eval text\'s tokens that must be covered, from 0 to below 1, e.g. threshold: 0.5; got: ' ~ settings.threshold) }}
    {%- endif -%}
    {%- if not (settings.max_eval_share is number and settings.max_eval_share is not boolean and 0 <= settings.max_eval_share <= 100) -%}
        {{ return('var contamination: `max_eval_share` is a percentage of an eval set, from 0 to 100, e.g. max_eval_share: 2.0; got: ' ~ settings.max_eval_share) }}
    {%- endif -%}
    {{ return('') }}
{% endmacro %}

{#- `dbt run-operation eval_sets_cases --args '{cases: [[entry, ...], ...]}'` logs each
    registry's verdict, one line each (`registry case <i>: ok` or the problem);
    tests/python/test_fetch.py holds them to preftools.inputs.registry's. -#}
{% macro eval_sets_cases(cases) %}
    {%- for case in cases -%}
        {%- set found = eval_sets(case, report=true) -%}
        {%- do log('registry case ' ~ loop.index0 ~ ': ' ~ (found if found is string else 'ok'), info=True) -%}
    {%- endfor -%}
{% endmacro %}

{#- An eval set's data files: the Hub's rule with its config, only the files of its splits, in
    path order (item_id numbers the rows in that order). -#}
{% macro eval_set_files(entry) %}
    {%- set files = [] -%}
    {%- for f in raw_dataset_files(entry.hub_id, entry.config) | sort(attribute='path') if entry.splits is none or f.split in entry.splits -%}
        {%- do files.append(f) -%}
    {%- endfor -%}
    {{ return(files) }}
{% endmacro %}

{#- Every row of an eval set's files with the named fields, `filename` and `file_row_number`; a
    missing folder, a missing field or a field that is not text stops the build with one line. -#}
{% macro eval_set_relation(entry) %}
    {%- if not execute -%}{{ return('(select 1 as parsed_only)') }}{%- endif -%}
    {%- set where = 'eval_sets entry ' ~ entry.name ~ ' (' ~ entry.hub_id ~ ')' -%}
    {%- set files = eval_set_files(entry) -%}
    {%- if not files -%}
        {%- set all_files = raw_dataset_files(entry.hub_id, entry.config) -%}
        {%- if all_files and entry.splits -%}
            {{ exceptions.raise_compiler_error(where ~ ': no data file of split(s) ' ~ (entry.splits | join(', ')) ~ ' under ' ~ raw_data_dir() ~ '/' ~ entry.hub_id
                ~ ' (its splits: ' ~ (all_files | map(attribute='split') | unique | join(', ')) ~ ') -- fix `splits` in the entry') }}
        {%- endif -%}
        {{ exceptions.raise_compiler_error(where ~ ': no data file (Parquet, JSON or CSV in a Hub layout' ~ (', config ' ~ entry.config if entry.config else '')
            ~ ') under ' ~ raw_data_dir() ~ '/' ~ entry.hub_id ~ ' -- check `hub_id` (the folder under RAW_DATA_DIR), fetch it with `make fetch FETCH_ARGS="--vars <the file with your eval_sets>"`, or remove the entry') }}
    {%- endif -%}
    {%- set spec = {'columns': {}} -%}
    {%- for field in entry.fields -%}{%- do spec.columns.update({field: none}) -%}{%- endfor -%}
    {%- set relation = '(\n' ~ (adapter.dispatch('raw_files_selects', 'preference_warehouse')(files, spec)
        | join('\n' ~ adapter.dispatch('union_all_by_name', 'preference_warehouse')() ~ '\n')) ~ '\n)' -%}
    {%- set kinds = {} -%}
    {%- for row in run_query(adapter.dispatch('describe_query', 'preference_warehouse')('select * from ' ~ relation ~ ' as rows')).rows -%}
        {%- do kinds.update({row[0]: row[1]}) -%}
    {%- endfor -%}
    {%- for field in entry.fields -%}
        {%- if field not in kinds -%}
            {{ exceptions.raise_compiler_error(where ~ ': `fields` names ' ~ field ~ ', which its files do not have (they have: '
                ~ (kinds.keys() | reject('in', ['filename', 'file_row_number']) | join(', ')) ~ ') -- fix `fields` in the entry') }}
        {%- endif -%}
        {%- if eval_field_kind(kinds[field]) is none -%}
            {{ exceptions.raise_compiler_error(where ~ ': field ' ~ field ~ ' is ' ~ kinds[field]
                ~ '; an eval field is a string or a list of strings -- name another field in `fields`') }}
        {%- endif -%}
    {%- endfor -%}
    {{ return({'relation': relation, 'kinds': kinds}) }}
{% endmacro %}

{#- 'string', 'list' (of strings), or none for a column type an eval field cannot be. -#}
{% macro eval_field_kind(type) %}
    {%- set t = type | trim | lower -%}
    {%- if t in ['varchar', 'string', 'text', '"null"', 'null', 'void'] -%}{{ return('string') }}{%- endif -%}
    {%- if t in ['varchar[]', 'array<string>', '"null"[]', 'array<void>'] -%}{{ return('list') }}{%- endif -%}
    {{ return(none) }}
{% endmacro %}
