{#- Where the raw data of a build came from, for meta.warehouse_build_info.raw_revisions (and so
    for the export's manifest.json). Read at compile time from two files RAW_DATA_DIR may hold:
      fetch.lock.json          written by `make fetch` (preftools.inputs.fetch): each dataset's Hub commit
                               and its files with name, size and sha256;
      _generator_manifest.json written by preftools.generate: seed, scale, text_length, files.
    Per enabled dataset: its commit when the lock file has it and the dataset's data files
    (macros/raw_files.sql) still have the recorded repo paths and sizes (a re-fetch, a regeneration or a copied-in file
    shows as a difference; sha256 is not recomputed at build time); else "generated, seed N,
    scale S" when the generator's manifest lists its files (UltraFeedback's ending ", overall_score
    fixed" when generated as openbmb's fixed revision); else "unknown". The same for each
    `extra_datasets` entry (macros/extra_datasets.sql) and each `eval_sets` entry
    (macros/eval_sets.sql), by its hub_id: its lock entry is the one under its name, compared on
    the files the entry reads (its config and splits, by the Hub's rule over the lock's paths and
    over the local ones); "generated" when the generator's manifest has a stand-in of its hub_id
    (its `extra_datasets` or `eval_sets` section). The column holds
      a JSON object {"<hub_id>": "<commit or text>", ...} when any dataset has a commit,
      else the one text they share ("generated, seed 42, scale 0.01", "unknown"),
      else (mixed) the JSON object.
    A remote RAW_DATA_DIR (hf://datasets) is read at build time at whatever the Hub serves:
    "unknown (...)". Paths only ever reach SQL as quoted literals. -#}

{#- raw_dir, groups, entries and eval_entries default to RAW_DATA_DIR, the `datasets` var, the
    `extra_datasets` entries and the `eval_sets` entries (arguments for tests). -#}
{% macro raw_revisions(raw_dir=none, groups=none, entries=none, eval_entries=none) %}
    {%- if not execute -%}{{ return('') }}{%- endif -%}
    {%- set raw_dir = raw_dir or raw_data_dir() -%}
    {%- set groups = groups or enabled_dataset_groups() -%}
    {%- set entries = extra_datasets() if entries is none else entries -%}
    {%- set eval_entries = eval_sets() if eval_entries is none else eval_entries -%}
    {%- if '://' in raw_dir -%}
        {{ return('unknown (' ~ raw_dir ~ ' is read at build time; the revision is not recorded)') }}
    {%- endif -%}

    {%- set lock = raw_provenance_json(raw_dir ~ '/fetch.lock.json') -%}
    {%- set locked = lock.get('datasets') if lock.get('datasets') is mapping else {} -%}
    {%- set manifest = raw_provenance_json(raw_dir ~ '/_generator_manifest.json') -%}
    {%- set generated_files = manifest.get('files') if manifest.get('files') is mapping else {} -%}
    {%- set generated = 'generated, seed ' ~ manifest.get('seed') ~ ', scale ' ~ manifest.get('scale')
        ~ ((', text length ' ~ manifest.get('text_length')) if manifest.get('text_length') not in (none, 1, 1.0) else '') -%}

    {#- UltraFeedback generated as openbmb's fixed revision (preftools generate --ultrafeedback-revision fixed) -#}
    {%- set planted = manifest.get('ultrafeedback_planted') if manifest.get('ultrafeedback_planted') is mapping else {} -%}
    {%- set fixed = planted.get('revision') == 'fixed' -%}
    {%- set by_hub_id = {} -%}
    {%- set any_commit = [] -%}
    {%- for key, spec in raw_contract().items() if spec.group in groups -%}
        {%- set entry = locked.get(key) -%}
        {%- if entry is mapping and entry.get('revision') and raw_files_match_lock(raw_dir, spec.hub_id, entry) -%}
            {%- do by_hub_id.update({spec.hub_id: entry.get('revision') | string}) -%}
            {%- do any_commit.append(key) -%}
        {%- elif key in generated_files -%}
            {%- do by_hub_id.update({spec.hub_id: generated ~ (', overall_score fixed' if key == 'ultrafeedback' and fixed else '')}) -%}
        {%- else -%}
            {%- do by_hub_id.update({spec.hub_id: 'unknown'}) -%}
        {%- endif -%}
    {%- endfor -%}

    {%- set generated_hub_ids = [] -%}
    {%- for kind in ['extra_datasets', 'eval_sets'] if manifest.get(kind) is mapping -%}
        {%- for section in manifest.get(kind).values() if section is mapping and section.get('files') -%}
            {%- do generated_hub_ids.append(section.get('hub_id')) -%}
        {%- endfor -%}
    {%- endfor -%}
    {%- for e in entries + eval_entries -%}
        {%- set entry = locked.get(e.name) -%}
        {%- if entry is mapping and entry.get('revision') and entry.get('hub_id', e.hub_id) == e.hub_id
                and raw_entry_files_match_lock(raw_dir, e, entry) -%}
            {%- do by_hub_id.update({e.hub_id: entry.get('revision') | string}) -%}
            {%- do any_commit.append(e.name) -%}
        {%- elif e.hub_id in generated_hub_ids -%}
            {%- do by_hub_id.update({e.hub_id: generated}) -%}
        {%- else -%}
            {%- do by_hub_id.update({e.hub_id: 'unknown'}) -%}
        {%- endif -%}
    {%- endfor -%}

    {%- set texts = by_hub_id.values() | unique | list -%}
    {%- if not any_commit and texts | length == 1 -%}
        {{ return(texts[0]) }}
    {%- endif -%}
    {{ return(tojson(by_hub_id, sort_keys=True)) }}
{% endmacro %}

{#- The JSON object in a small file, {} when it is absent or not a JSON object. -#}
{% macro raw_provenance_json(path) %}
    {%- set text = adapter.dispatch('raw_read_text', 'preference_warehouse')(path) -%}
    {%- set parsed = fromjson(text, {}) if text else {} -%}
    {{ return(parsed if parsed is mapping else {}) }}
{% endmacro %}

{#- Are the dataset's data files (raw_dataset_files) exactly the files of a lock entry, by repo
    path and size? -#}
{% macro raw_files_match_lock(raw_dir, hub_id, entry) %}
    {%- set expected = {} -%}
    {%- for f in entry.get('files') or [] if f is mapping -%}
        {%- do expected.update({f.get('path') | string: f.get('size')}) -%}
    {%- endfor -%}
    {%- set files = raw_dataset_files(hub_id, raw_dir=raw_dir) -%}
    {%- set found = adapter.dispatch('raw_provenance_sizes', 'preference_warehouse')(files) if files else {} -%}
    {{ return(expected | length > 0 and found == expected) }}
{% endmacro %}

{#- Are the files an `extra_datasets` or `eval_sets` entry reads (its config and splits) exactly
    the ones its lock entry records for them, by repo path and size? The local paths and the lock's
    go through the same rule (raw_entry_resolve), so a lock of more splits than the entry reads
    still matches. -#}
{% macro raw_entry_files_match_lock(raw_dir, e, entry) %}
    {%- set repo = raw_dir ~ '/' ~ e.hub_id -%}
    {%- set sizes = {} -%}
    {%- for f in entry.get('files') or [] if f is mapping -%}
        {%- do sizes.update({f.get('path') | string: f.get('size')}) -%}
    {%- endfor -%}
    {%- set paths = adapter.dispatch('raw_list_files', 'preference_warehouse')(repo) -%}
    {%- set card = adapter.dispatch('raw_read_text', 'preference_warehouse')(repo ~ '/README.md')
        if 'README.md' in paths else none -%}
    {%- set expected = {} -%}
    {%- for f in raw_entry_resolve(sizes.keys() | list | sort, card, e) -%}
        {%- do expected.update({f.path: sizes[f.path]}) -%}
    {%- endfor -%}
    {%- set files = [] -%}
    {%- for f in raw_entry_resolve(paths, card, e) -%}
        {%- do files.append({'path': f.path, 'full': repo ~ '/' ~ f.path}) -%}
    {%- endfor -%}
    {%- set found = adapter.dispatch('raw_provenance_sizes', 'preference_warehouse')(files) if files else {} -%}
    {{ return(expected | length > 0 and found == expected) }}
{% endmacro %}

{#- An entry's data files among repo `paths` (here: a lock's), by the rule raw_dataset_files applies
    to the local ones (hub_resolve_config), restricted to its splits. -#}
{% macro raw_entry_resolve(paths, card, e) %}
    {%- set found = [] -%}
    {%- for f in (hub_resolve_config(paths, card, e.config, e.hub_id) if paths else []) if e.splits is none or f.split in e.splits -%}
        {%- do found.append(f) -%}
    {%- endfor -%}
    {{ return(found) }}
{% endmacro %}

{#- {repo path: size} of raw_dataset_files() entries. -#}
{% macro default__raw_provenance_sizes(files) %}
    {%- set by_full = {} -%}
    {%- for f in files -%}{%- do by_full.update({f.full: f.path}) -%}{%- endfor -%}
    {%- set quoted = [] -%}
    {%- for f in files -%}{%- do quoted.append(sql_string(f.full)) -%}{%- endfor -%}
    {%- set found = {} -%}
    {%- for row in run_query('select filename, size from read_blob([' ~ (quoted | join(', ')) ~ '])').rows -%}
        {%- do found.update({by_full.get(row[0] | string, row[0] | string): row[1] | int}) -%}
    {%- endfor -%}
    {{ return(found) }}
{% endmacro %}

{% macro spark__raw_provenance_sizes(files) %}
    {%- set found = {} -%}
    {%- for f in files -%}
        {%- for row in run_query('select length from binaryFile.' ~ spark_path(f.full)).rows -%}
            {%- do found.update({f.path: row[0] | int}) -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return(found) }}
{% endmacro %}
