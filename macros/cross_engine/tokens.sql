{#- The decontamination rule's tokens (docs/decontamination.md): maximal runs of Unicode letters
    and digits, each lower-cased, as a list of strings ([] for NULL). -#}
{% macro text_tokens(expr) -%}
    {{ return(adapter.dispatch('text_tokens', 'preference_warehouse')(expr)) }}
{%- endmacro %}
{#- DuckDB lower-cases one code point at a time (the simple mapping, which keeps a letter or digit
    one), so lower-casing the text before extracting gives the same tokens, without a call per token -#}
{% macro default__text_tokens(expr) -%}
    regexp_extract_all(lower(coalesce({{ expr }}, '')), '[\p{L}\p{N}]+')
{%- endmacro %}
{% macro spark__text_tokens(expr) -%}
    transform(regexp_extract_all(coalesce({{ expr }}, ''), '([\\p{L}\\p{N}]+)', 1), token -> lower(token))
{%- endmacro %}

{#- The k-grams of a token list (k an expression >= 1), in order, each its tokens joined by single
    spaces: [] when the list is shorter than k. -#}
{% macro token_ngrams(tokens, k) -%}
    {{ return(adapter.dispatch('token_ngrams', 'preference_warehouse')(tokens, k)) }}
{%- endmacro %}
{% macro default__token_ngrams(tokens, k) -%}
    list_transform(range(len({{ tokens }}) - ({{ k }}) + 1), lambda i: array_to_string({{ tokens }}[i + 1:i + ({{ k }})], ' '))
{%- endmacro %}
{#- sequence(0, -1) counts down in Spark: the filter keeps a too-short list's k-grams empty -#}
{% macro spark__token_ngrams(tokens, k) -%}
    transform(filter(sequence(0, greatest(size({{ tokens }}) - ({{ k }}), 0)), i -> i <= size({{ tokens }}) - ({{ k }})),
        i -> array_join(slice({{ tokens }}, i + 1, {{ k }}), ' '))
{%- endmacro %}
