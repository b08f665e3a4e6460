{#- The known-bias measures of pair_bias_profile and truncation_collapse, defined once. -#}

{#- Format patterns a judge is known to favour: name -> regex (RE2; translated for Spark by
    regex_contains). A list item, a header: at the start of a line. -#}
{% macro format_patterns() -%}
    {{ return({
        'list': '(^|\\n) *(- |\\* |[0-9]+\\. )',
        'bold': '\\*\\*[^\\n]+\\*\\*',
        'header': '(^|\\n)#{1,6} ',
        'code': '```',
        'link': 'https?://',
        'emoji': '[\\x{1F300}-\\x{1FAFF}\\x{2600}-\\x{27BF}]',
    }) }}
{%- endmacro %}

{#- The var truncation_budgets (tokens), checked: a non-empty list of positive integers, ascending. -#}
{% macro truncation_budgets() -%}
    {%- set budgets = var('truncation_budgets', [512, 1024, 2048, 4096]) -%}
    {%- if budgets is string or budgets is mapping or budgets is not iterable or budgets | length == 0 -%}
        {{ exceptions.raise_compiler_error('var truncation_budgets must be a list of token budgets, e.g. [512, 1024, 2048, 4096]; got: ' ~ budgets) }}
    {%- endif -%}
    {%- for b in budgets -%}
        {%- if not (b is number and b is not boolean and b == (b | int) and b > 0) -%}
            {{ exceptions.raise_compiler_error('var truncation_budgets: each budget must be a positive whole number of tokens; got: ' ~ b) }}
        {%- endif -%}
    {%- endfor -%}
    {{ return(budgets | map('int') | unique | sort | list) }}
{%- endmacro %}

{#- Characters per token of the approximation truncation_collapse uses. -#}
{% macro chars_per_token() -%}4{%- endmacro %}

{#- The var tokenizer_file: a local tokenizer.json whose tokens truncation_collapse counts (with
    the `tokenizers` library, int_preference_pairs__token_counts), or none (characters / 4). -#}
{% macro tokenizer_file() -%}
    {%- set path = var('tokenizer_file', none) -%}
    {%- if path and target.type == 'spark' -%}
        {{ exceptions.raise_compiler_error('var tokenizer_file counts tokens in a Python model, which runs on DuckDB only: build without it on Spark (truncation_collapse then counts 4 characters a token)') }}
    {%- endif -%}
    {{ return(path or none) }}
{%- endmacro %}

{#- How truncation_collapse counted tokens, as its counted_with column says. -#}
{% macro truncation_counted_with() -%}
    {%- set path = tokenizer_file() -%}
    {{ return('tokenizer: ' ~ path.split('/')[-1] if path else 'characters / ' ~ chars_per_token()) }}
{%- endmacro %}
