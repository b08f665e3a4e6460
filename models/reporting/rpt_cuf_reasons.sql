-- CodeUltraFeedback: pairs that differ between the published script's output and the corrected
-- pairs, per preference and reason: the bug summary's per-preference counts, unpivoted (one row
-- per preference x reason, zeros included).
{{ config(enabled=dataset_enabled('code_ultrafeedback')) }}
{%- set reasons = [
    'na_rated_chosen', 'na_rated_rejected', 'prompt_dropped_by_last_na', 'string_order_inverted',
    'invalid_rating', 'prompt_quarantined', 'duplicate_model',
] %}

with

bug_summary as (

    select * from {{ ref('code_ultrafeedback_bug_summary').include(database=False) }}

),

by_preference as (

    select * from bug_summary
    where scope = 'preference'

),

unpivoted as (

    {% for reason in reasons -%}
    select
        coalesce(preference, '(unmatched)') as preference,
        '{{ reason }}' as reason,
        n_{{ reason }} as n_pairs
    from by_preference
    {% if not loop.last %}union all
    {% endif %}
    {%- endfor %}

)

select * from unpivoted
