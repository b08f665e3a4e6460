{#- The registry of extra datasets: the var `extra_datasets` (dbt_project.yml or --vars), one entry
    per Hub dataset of a known shape (docs/extra-datasets.md):

      - name: h4_ultrafeedback                 # the `dataset` value and the export split
        hub_id: HuggingFaceH4/ultrafeedback_binarized
        shape: preference                      # preference | rated_completions | transcript
        splits: [train_prefs]                  # default: every split
        config: default                        # where the repo has several
        columns: {prompt: prompt, chosen: chosen, rejected: rejected,
                  chosen_score: score_chosen, rejected_score: score_rejected}
        score_range: [1, 10]                   # margin = score difference / width
        license: mit

    extra_datasets() -> the entries, checked, with defaults filled in; a wrong entry stops the
    build with one line naming the entry, the key and the fix (check_vars, before any model). -#}

{% macro builtin_dataset_names() %}
    {{ return(['ultrafeedback', 'code_ultrafeedback', 'rever']) }}
{% endmacro %}

{#- The built-in datasets' score scales, as an entry's `score_range` gives a registered one's
    (macros/margin.sql). ReVeR's rubric score has no fixed scale: each pair's runs from 0 to the
    highest score its rubric allows (int_rever__pairs.max_possible_score). -#}
{% macro builtin_score_ranges() %}
    {{ return({
        'ultrafeedback': {'score_min': 1, 'score_max': 5, 'score_kind': 'average_rating_1_5'},
        'code_ultrafeedback': {'score_min': 1, 'score_max': 5, 'score_kind': 'rating_1_5'},
        'rever': {'score_min': 0, 'score_max': 'max_possible_score', 'score_kind': 'rubric_score'},
    }) }}
{% endmacro %}

{#- canonical column keys per shape: (required, optional) -#}
{% macro extra_shape_columns() %}
    {{ return({
        'preference': (['chosen', 'rejected'],
                       ['prompt', 'chosen_score', 'rejected_score', 'chosen_model', 'rejected_model', 'source']),
        'transcript': (['chosen', 'rejected'], ['source']),
        'rated_completions': (['prompt', 'completions', 'response', 'rating'], ['model', 'source']),
    }) }}
{% endmacro %}

{% macro extra_datasets(raw=none, report=false) %}
    {{ return(checked_var(extra_datasets_checked((var('extra_datasets', []) if raw is none else raw) or []), report, [])) }}
{% endmacro %}

{#- The entries with defaults filled in, or the line saying what is wrong with the first wrong one. -#}
{% macro extra_datasets_checked(raw) %}
    {%- set shapes = extra_shape_columns() -%}
    {%- set entries = [] -%}
    {%- set names = [] -%}
    {%- if raw is string or raw is mapping -%}
        {{ return("var extra_datasets must be a list of entries (`extra_datasets: [{name: ..., hub_id: ..., shape: ..., columns: {...}}]`), got: " ~ raw) }}
    {%- endif -%}
    {%- for e in raw -%}
        {%- set where = 'extra_datasets entry ' ~ loop.index ~ ((' (' ~ e.get('name') ~ ')') if e is mapping and e.get('name') else '') -%}
        {%- if e is not mapping -%}
            {{ return(where ~ ': an entry is a mapping with name, hub_id, shape and columns, got: ' ~ e) }}
        {%- endif -%}
        {%- set keys = ['name', 'hub_id', 'shape', 'splits', 'config', 'columns', 'score_range', 'pairing', 'license'] -%}
        {%- for key in e.keys() | reject('in', keys) -%}
            {{ return(where ~ ': unknown key ' ~ key ~ did_you_mean(key, keys, 'keys')) }}
        {%- endfor -%}
        {%- if not (e.get('name') is string and modules.re.fullmatch('[a-z][a-z0-9_]*', e.get('name'))) -%}
            {{ return(where ~ ': `name` must be snake_case (lower-case letters, digits, _), e.g. name: h4_ultrafeedback; got: ' ~ e.get('name')) }}
        {%- endif -%}
        {%- if e.get('name').endswith('_flagged') -%}
            {{ return(where ~ ': a name may not end in _flagged (the export names a dataset\'s flagged split `<name>_flagged`) -- pick another name') }}
        {%- endif -%}
        {%- if e.get('name') in names or e.get('name') in builtin_dataset_names() or e.get('name') in raw_contract().keys() | list -%}
            {{ return(where ~ ': name ' ~ e.get('name') ~ ' is already taken (a built-in dataset or an earlier entry) -- pick another name') }}
        {%- endif -%}
        {%- if not (e.get('hub_id') is string and modules.re.fullmatch('[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*', e.get('hub_id'))) -%}
            {{ return(where ~ ': `hub_id` must be <org>/<dataset> as on the Hub, e.g. hub_id: Anthropic/hh-rlhf; got: ' ~ e.get('hub_id')) }}
        {%- endif -%}
        {%- if e.get('shape') not in shapes -%}
            {{ return(where ~ ': `shape` must be one of preference, rated_completions, transcript; got: ' ~ e.get('shape')) }}
        {%- endif -%}
        {%- set required, optional = shapes[e.get('shape')] -%}
        {%- set columns = e.get('columns') if e.get('columns') is mapping else {} -%}
        {%- for key in columns.keys() | reject('in', required + optional) -%}
            {{ return(where ~ ': `columns` maps ' ~ key ~ ', not a canonical name of shape ' ~ e.get('shape')
                ~ did_you_mean(key, required + optional, 'canonical names')) }}
        {%- endfor -%}
        {%- set missing = required | reject('in', columns.keys() | list) | list -%}
        {%- if missing -%}
            {{ return(where ~ ': `columns` maps the canonical names of shape ' ~ e.get('shape') ~ ' (required: '
                ~ (required | join(', ')) ~ '; optional: ' ~ (optional | join(', ')) ~ ') to the dataset\'s column names; missing: '
                ~ (missing | join(', '))) }}
        {%- endif -%}
        {%- for key, column in columns.items() -%}
            {%- set paths = column if key == 'rating' and column is sequence and column is not string else [column] -%}
            {%- if not paths or paths | reject('string') | list or '' in paths -%}
                {{ return(where ~ ': `columns` maps ' ~ key ~ ' to ' ~ column ~ ' -- give a column name' ~ (' or a list of field paths' if key == 'rating' else '')) }}
            {%- endif -%}
        {%- endfor -%}
        {%- set ratings = ([columns.rating] if columns.rating is string else columns.rating) if e.get('shape') == 'rated_completions' else [] -%}
        {%- if e.get('shape') == 'rated_completions' and not (ratings and ratings | reject('string') | list | length == 0) -%}
            {{ return(where ~ ': `columns.rating` is a field path inside a completion (e.g. annotations.helpfulness.Rating) or a list of them') }}
        {%- endif -%}
        {%- set scored = e.get('shape') == 'rated_completions' or 'chosen_score' in columns or 'rejected_score' in columns -%}
        {%- if e.get('shape') == 'preference' and scored and not ('chosen_score' in columns and 'rejected_score' in columns) -%}
            {{ return(where ~ ': map both chosen_score and rejected_score, or neither') }}
        {%- endif -%}
        {%- set score_range = e.get('score_range') -%}
        {%- if (scored or score_range is not none) and not (score_range is sequence and score_range is not string and score_range | length == 2
                and score_range | select('number') | reject('boolean') | list | length == 2 and score_range[0] < score_range[1]) -%}
            {{ return(where ~ ': a scored dataset needs `score_range: [lowest, highest]` (numbers, lowest < highest), e.g. score_range: [1, 10]; got: ' ~ score_range) }}
        {%- endif -%}
        {%- set splits = e.get('splits') -%}
        {%- if splits is not none and not (splits is sequence and splits is not string and splits | length > 0 and splits | reject('string') | list | length == 0 and '' not in splits) -%}
            {{ return(where ~ ': `splits` is a list of split names, e.g. splits: [train]; got: ' ~ splits) }}
        {%- endif -%}
        {%- if e.get('config') is not none and not (e.get('config') is string and e.get('config')) -%}
            {{ return(where ~ ': `config` is the name of one of the repo\'s configs (subsets), e.g. config: helpful-base; got: ' ~ e.get('config')) }}
        {%- endif -%}
        {%- set pairing = e.get('pairing') or ('best_vs_lower' if e.get('shape') == 'rated_completions' else none) -%}
        {%- if e.get('shape') == 'rated_completions' and pairing not in ['best_vs_lower', 'all_pairs'] or e.get('shape') != 'rated_completions' and e.get('pairing') -%}
            {{ return(where ~ ': `pairing` is best_vs_lower (default) or all_pairs, for shape rated_completions only; got: ' ~ e.get('pairing')) }}
        {%- endif -%}
        {%- do names.append(e.get('name')) -%}
        {%- do entries.append({
            'name': e.get('name'), 'hub_id': e.get('hub_id'), 'shape': e.get('shape'), 'splits': splits, 'config': e.get('config'),
            'columns': columns, 'ratings': ratings, 'scored': scored,
            'score_min': score_range[0] if scored else none, 'score_max': score_range[1] if scored else none,
            'pairing': pairing, 'license': e.get('license') or 'not stated', 'order': loop.index0,
        }) -%}
    {%- endfor -%}
    {{ return(entries) }}
{% endmacro %}

{#- `dbt run-operation extra_datasets_cases --args '{cases: [[entry, ...], ...]}'` logs each
    registry's verdict, one line each (`registry case <i>: ok` or the problem);
    tests/python/test_extra_datasets.py holds them to preftools.inputs.registry's. -#}
{% macro extra_datasets_cases(cases) %}
    {%- for case in cases -%}
        {%- set found = extra_datasets(case, report=true) -%}
        {%- do log('registry case ' ~ loop.index0 ~ ': ' ~ (found if found is string else 'ok'), info=True) -%}
    {%- endfor -%}
{% endmacro %}

{#- The entries of some shapes. -#}
{% macro extra_datasets_of(shapes) %}
    {{ return(extra_datasets() | selectattr('shape', 'in', shapes) | list) }}
{% endmacro %}

{#- An entry's data files: the Hub's rule with its config, only the files of its splits. -#}
{% macro extra_dataset_files(entry) %}
    {%- set files = [] -%}
    {%- for f in raw_dataset_files(entry.hub_id, entry.config) if entry.splits is none or f.split in entry.splits -%}
        {%- do files.append(f) -%}
    {%- endfor -%}
    {{ return(files) }}
{% endmacro %}

{#- The top-level columns an entry reads (a rated_completions entry's response, model and rating
    are fields inside its completions). -#}
{% macro extra_raw_columns(entry) %}
    {%- set keys = ['prompt', 'completions', 'source'] if entry.shape == 'rated_completions' else entry.columns.keys() | list -%}
    {%- set columns = [] -%}
    {%- for key in keys if key in entry.columns -%}{%- do columns.append(entry.columns[key]) -%}{%- endfor -%}
    {{ return(columns) }}
{% endmacro %}

{#- Every row of an entry's files, as source() gives a built-in dataset's (macros/raw_files.sql). -#}
{% macro extra_dataset_relation(entry) %}
    {%- if not execute -%}{{ return('(select 1 as parsed_only)') }}{%- endif -%}
    {%- set files = extra_dataset_files(entry) -%}
    {%- if not files -%}
        {{ exceptions.raise_compiler_error('no data file for ' ~ entry.hub_id ~ ' (extra_datasets entry ' ~ entry.name ~ ') under '
            ~ raw_data_dir() ~ '/' ~ entry.hub_id ~ ' -- fetch it with `make fetch FETCH_ARGS="--vars ..."` (docs/extra-datasets.md)') }}
    {%- endif -%}
    {%- set spec = {'columns': {}} -%}
    {%- for column in extra_raw_columns(entry) -%}{%- do spec.columns.update({column: none}) -%}{%- endfor -%}
    {%- set selects = adapter.dispatch('raw_files_selects', 'preference_warehouse')(files, spec) -%}
    {{ return('(\n' ~ (selects | join('\n' ~ adapter.dispatch('union_all_by_name', 'preference_warehouse')() ~ '\n')) ~ '\n)') }}
{% endmacro %}

{#- The column an entry maps canonical `key` to, quoted (names may hold hyphens or spaces), or
    `fallback` where the entry does not map it. -#}
{% macro extra_column(entry, key, fallback='null') %}
    {%- if key in entry.columns -%}{{ return(adapter.quote(entry.columns[key])) }}{%- endif -%}
    {{ return(fallback) }}
{% endmacro %}

{#- A dotted field path inside a struct expression: annotations.helpfulness.Rating ->
    c."annotations"."helpfulness"."Rating". -#}
{% macro struct_path(expr, path) %}
    {%- set parts = [expr] -%}
    {%- for p in path.split('.') -%}{%- do parts.append(adapter.quote(p)) -%}{%- endfor -%}
    {{ return(parts | join('.')) }}
{% endmacro %}

{#- The kind of each column of an entry's rows: {column: 'string' | 'list' | 'number' | 'other'},
    from the types the reader gives (DuckDB's DESCRIBE, Spark's DESCRIBE QUERY). -#}
{% macro extra_column_kinds(entry) %}
    {%- set kinds = {} -%}
    {%- if not execute -%}{{ return(kinds) }}{%- endif -%}
    {%- set described = run_query(adapter.dispatch('describe_query', 'preference_warehouse')('select * from ' ~ extra_dataset_relation(entry) ~ ' as rows')) -%}
    {%- for row in described.rows -%}
        {%- do kinds.update({row[0]: sql_type_kind(row[1])}) -%}
    {%- endfor -%}
    {{ return(kinds) }}
{% endmacro %}

{% macro default__describe_query(sql) %}{{ return('describe ' ~ sql) }}{% endmacro %}
{% macro spark__describe_query(sql) %}{{ return('describe query ' ~ sql) }}{% endmacro %}

{% macro sql_type_kind(type) %}
    {%- set t = type | trim | lower -%}
    {%- if t in ['varchar', 'string', 'text'] -%}{{ return('string') }}{%- endif -%}
    {%- if t.endswith('[]') or t.startswith('array<') -%}{{ return('list') }}{%- endif -%}
    {%- if modules.re.match('(tinyint|smallint|integer|int|bigint|hugeint|utinyint|usmallint|uinteger|ubigint|uhugeint|float|real|double|decimal)\\b', t) -%}
        {{ return('number') }}
    {%- endif -%}
    {{ return('other') }}
{% endmacro %}

{#- The datasets of this build in dataset order: the enabled built-in groups, then the
    `extra_datasets` entries in order. -#}
{% macro build_dataset_names() %}
    {%- set names = [] -%}
    {%- for name in builtin_dataset_names() if name in enabled_dataset_groups() -%}{%- do names.append(name) -%}{%- endfor -%}
    {%- for e in extra_datasets() -%}{%- do names.append(e.name) -%}{%- endfor -%}
    {{ return(names) }}
{% endmacro %}

{#- The var `mixture`, {dataset: fraction}, checked: every name a dataset this build has (an
    enabled built-in group or an `extra_datasets` entry), every fraction a number in [0, 1]. -#}
{% macro mixture_fractions(report=false) %}
    {%- set mixture = var('mixture', {}) or {} -%}
    {{ return(checked_var(mixture_problem(mixture) or mixture, report, {})) }}
{% endmacro %}

{% macro mixture_problem(mixture) %}
    {%- if mixture is not mapping -%}
        {{ return('var mixture must map dataset names to fractions, e.g. mixture: {ultrafeedback: 0.5, hh_helpful: 1.0}; got: ' ~ mixture) }}
    {%- endif -%}
    {%- if extra_datasets(report=true) is string -%}{{ return('') }}{%- endif -%}  {#- (no names to check against: its own line says why) -#}
    {%- set known = build_dataset_names() -%}
    {%- for name, fraction in mixture.items() -%}
        {%- if name not in known -%}
            {{ return('var mixture: unknown dataset ' ~ name ~ did_you_mean(name, known, 'datasets of this build')
                ~ ('' if closest_name(name, known) else ' (register it in extra_datasets, or enable its group in the datasets var)')) }}
        {%- endif -%}
        {%- if not (fraction is number and fraction is not boolean and 0 <= fraction <= 1) -%}
            {{ return('var mixture: the fraction of ' ~ name ~ ' must be a number from 0 to 1 (the share of its clean pairs to take); got: ' ~ fraction) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return('') }}
{% endmacro %}

{#- The var `mixture_max_pairs_per_prompt_cluster`, checked: none (no cap) or a whole number >= 1. -#}
{% macro mixture_max_pairs_per_prompt_cluster(report=false) %}
    {%- set k = var('mixture_max_pairs_per_prompt_cluster', none) -%}
    {%- if k is not none and not (k is integer and k is not boolean and k >= 1) -%}
        {{ return(checked_var('var mixture_max_pairs_per_prompt_cluster: the most pairs training_mixture takes from one prompt cluster, a whole number >= 1 (or leave it out for no cap), e.g. mixture_max_pairs_per_prompt_cluster: 2; got: ' ~ k, report, none)) }}
    {%- endif -%}
    {{ return(k) }}
{% endmacro %}

{#- The input check of the registry's entries (called by check_raw_inputs, DuckDB): each entry has
    data files, and each file has the mapped columns in a type the shape can read. One line per
    problem, naming the entry, the file, the column and the fix. -#}
{% macro extra_input_problems() %}
    {%- set problems = [] -%}
    {%- set raw_arg = shell_quote(raw_data_dir()) -%}
    {%- for e in extra_datasets() -%}
        {%- set where = 'extra_datasets entry ' ~ e.name ~ ' (' ~ e.hub_id ~ ')' -%}
        {%- set files = extra_dataset_files(e) -%}
        {%- if not files -%}
            {%- set all_files = raw_dataset_files(e.hub_id, e.config) -%}
            {%- if all_files and e.splits -%}
                {%- do problems.append(where ~ ': no data file of split(s) ' ~ (e.splits | join(', ')) ~ ' under ' ~ raw_data_dir() ~ '/' ~ e.hub_id
                    ~ ' (its splits: ' ~ (all_files | map(attribute='split') | unique | join(', ')) ~ ') -- fix `splits` in the entry') -%}
            {%- else -%}
                {%- do problems.append(where ~ ': no data file (Parquet, JSON or CSV in a Hub layout' ~ (', config ' ~ e.config if e.config else '') ~ ') under '
                    ~ raw_data_dir() ~ '/' ~ e.hub_id ~ ' -- fetch it with `preftools fetch --raw-data-dir ' ~ raw_arg
                    ~ ' --vars <the file with your extra_datasets>`, or remove the entry') -%}
            {%- endif -%}
        {%- else -%}
            {%- set basenames = [] -%}
            {%- for f in files -%}{%- do basenames.append(f.path.split('/')[-1]) -%}{%- endfor -%}
            {%- if basenames | unique | list | length < basenames | length -%}
                {%- do problems.append(where ~ ': two data files share a file name (' ~ (files | map(attribute='path') | join(', '))
                    ~ ') -- each row\'s provenance (source_file, source_row) names its file by file name; pick one split or config with `splits` or `config`') -%}
            {%- endif -%}
            {%- set kinds_seen = {} -%}
            {%- for f in files -%}
                {%- set found = {} -%}
                {%- for row in run_query('describe select * from ' ~ raw_file_reader(f)).rows -%}
                    {%- do found.update({row[0]: raw_type_tree(row[1])}) -%}
                {%- endfor -%}
                {%- for problem in extra_file_problems(e, found) -%}
                    {%- do problems.append(where ~ ', file ' ~ f.full ~ ', ' ~ problem) -%}
                {%- endfor -%}
                {%- for key in ['prompt', 'chosen', 'rejected'] if key in e.columns and e.columns[key] in found -%}
                    {%- set kind = found[e.columns[key]].kind -%}
                    {%- if kinds_seen.get(key, kind) != kind -%}
                        {%- do problems.append(where ~ ', file ' ~ f.full ~ ', column `' ~ e.columns[key] ~ '`: is a ' ~ kind
                            ~ ' here but a ' ~ kinds_seen[key] ~ ' in an earlier file -- every file of a dataset must give a column the same form') -%}
                    {%- endif -%}
                    {%- do kinds_seen.update({key: kind}) -%}
                {%- endfor -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(problems) }}
{% endmacro %}

{#- What is wrong with one file's columns (`found`: {column: type tree}) for an entry: a list of
    "column `c`: <problem> -- <fix>" texts. -#}
{% macro extra_file_problems(e, found) %}
    {%- set problems = [] -%}
    {%- set text = ['VARCHAR'] -%}
    {%- set numbers = ['TINYINT', 'SMALLINT', 'INTEGER', 'BIGINT', 'HUGEINT', 'UTINYINT', 'USMALLINT', 'UINTEGER', 'UBIGINT', 'FLOAT', 'DOUBLE'] -%}
    {%- for key, column in e.columns.items() if key not in ['response', 'model', 'rating'] or e.shape != 'rated_completions' -%}
        {%- set fix = ' -- map `columns.' ~ key ~ '` of the entry to the right column, or convert the file' -%}
        {%- if column not in found -%}
            {%- do problems.append('column `' ~ column ~ '` (`columns.' ~ key ~ '`) is missing; the file has: ' ~ (found.keys() | join(', ')) ~ fix) -%}
        {%- else -%}
            {%- set t = found[column] -%}
            {%- set is_text = t.kind == 'leaf' and t.type in text -%}
            {%- set is_number = t.kind == 'leaf' and (t.type in numbers or t.type.startswith('DECIMAL')) -%}
            {%- set is_messages = t.kind == 'list' and t.element.kind == 'struct' and 'role' in t.element.names and 'content' in t.element.names -%}
            {%- if key in ['prompt', 'chosen', 'rejected'] and e.shape == 'preference' and not (is_text or is_messages) -%}
                {%- do problems.append('column `' ~ column ~ '`: ' ~ t.type ~ '; a preference dataset\'s ' ~ key ~ ' is a string or a list of {role, content} messages' ~ fix) -%}
            {%- elif key in ['chosen', 'rejected'] and e.shape == 'transcript' and not is_text -%}
                {%- do problems.append('column `' ~ column ~ '`: ' ~ t.type ~ '; a transcript\'s ' ~ key ~ ' is a string ("\\n\\nHuman: ...\\n\\nAssistant: ...")' ~ fix) -%}
            {%- elif key == 'prompt' and e.shape == 'rated_completions' and not is_text -%}
                {%- do problems.append('column `' ~ column ~ '`: ' ~ t.type ~ '; a rated_completions prompt is a string' ~ fix) -%}
            {%- elif key in ['chosen_score', 'rejected_score'] and not (is_text or is_number) -%}
                {%- do problems.append('column `' ~ column ~ '`: ' ~ t.type ~ '; a score is a number or a string holding one' ~ fix) -%}
            {%- elif key in ['chosen_model', 'rejected_model', 'source'] and not (is_text or is_number) -%}
                {%- do problems.append('column `' ~ column ~ '`: ' ~ t.type ~ '; ' ~ key ~ ' is a string' ~ fix) -%}
            {%- elif key == 'completions' -%}
                {%- if not (t.kind == 'list' and t.element.kind == 'struct') -%}
                    {%- do problems.append('column `' ~ column ~ '`: ' ~ t.type ~ '; completions is a list of structs (one per completion)' ~ fix) -%}
                {%- else -%}
                    {%- set paths = [('response', e.columns.response)] + ([('model', e.columns.model)] if 'model' in e.columns else []) -%}
                    {%- for path in e.ratings -%}{%- do paths.append(('rating', path)) -%}{%- endfor -%}
                    {%- for key2, path in paths -%}
                        {%- set node = {'t': t.element} -%}
                        {%- for part in path.split('.') -%}
                            {%- if node.t is not none and node.t.kind == 'struct' and part in node.t.names -%}
                                {%- do node.update({'t': node.t.fields[part]}) -%}
                            {%- else -%}
                                {%- do node.update({'t': none}) -%}
                            {%- endif -%}
                        {%- endfor -%}
                        {%- if node.t is none -%}
                            {%- do problems.append('column `' ~ column ~ '`: a completion has no field `' ~ path ~ '` (`columns.' ~ key2
                                ~ '`) -- give the path inside a completion, dot-separated (e.g. annotations.helpfulness.Rating)') -%}
                        {%- elif not (node.t.kind == 'leaf' and (node.t.type in text or node.t.type in numbers or node.t.type.startswith('DECIMAL'))) -%}
                            {%- do problems.append('column `' ~ column ~ '`: a completion\'s `' ~ path ~ '` is ' ~ node.t.type ~ '; `columns.' ~ key2
                                ~ '` must lead to a string' ~ (' or a number' if key2 == 'rating' else '')) -%}
                        {%- endif -%}
                    {%- endfor -%}
                {%- endif -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(problems) }}
{% endmacro %}
