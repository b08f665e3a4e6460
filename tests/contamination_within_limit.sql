-- Warns, naming each one, about the datasets whose prompts contain more than the var
-- contamination's max_eval_share percent of a registered eval set (contamination_summary).
{{ config(severity='warn') }}
{%- set summary = ref('contamination_summary') %}
{%- if execute and load_relation(summary) is not none %}
{%- set over = run_query('select dataset, eval_set, pct_eval_set_matched, n_pairs_flagged from ' ~ summary ~ ' where exceeds_limit order by dataset, eval_set').rows %}
{%- if over %}
{%- do log('contamination_within_limit: ' ~ (over | length) ~ ' (dataset, eval set) over the limit, var contamination\'s max_eval_share = '
    ~ contamination_settings().max_eval_share ~ ' percent of an eval set; read them in ' ~ summary.schema ~ '.' ~ summary.identifier
    ~ ' where exceeds_limit', info=True) %}
{%- endif %}
{%- for row in over %}
{%- do log('contamination: ' ~ row[0] ~ ' contains ' ~ ('%.1f' % row[2]) ~ '% of eval set ' ~ row[1] ~ '; its '
    ~ row[3] ~ ' pairs of those prompts are flagged eval_contamination', info=True) %}
{%- endfor %}
{%- endif %}

select
    dataset,
    eval_set,
    pct_eval_set_matched
from {{ summary }}
where exceeds_limit
