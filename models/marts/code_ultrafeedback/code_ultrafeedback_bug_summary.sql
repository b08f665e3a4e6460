-- The size of the published script's bugs: one row per preference (the raw aspect; scope
-- 'preference') and one over all rows (scope 'total'), each aggregated from the rows in one
-- grouping-sets pass (macros/cross_engine/summary_scopes.sql), with the headline numbers and the
-- number of pair differences per reason (see audit_code_ultrafeedback_corrections).
with

prompts as (

    select
        preference,
        script_outcome
    from {{ ref('code_ultrafeedback_prompts') }}

),

corrections as (

    select * from {{ ref('audit_code_ultrafeedback_corrections') }}

),

published_audit as (

    select
        prompt_id,
        status,
        chosen_score
    from {{ ref('audit_code_ultrafeedback_published') }}
    where status != 'only_in_reproduction'

),

prompt_preferences as (

    select
        prompt_id,
        preference
    from {{ ref('code_ultrafeedback_prompts') }}

),

prompt_counts as (

    select
        {{ summary_scope(['preference']) }} as scope,
        preference,
        count(*) as n_prompts,
        sum(case when script_outcome = 'processed' then 1 else 0 end) as n_prompts_processed,
        sum(case when script_outcome = 'dropped_by_na_rating' then 1 else 0 end) as n_prompts_dropped,
        sum(case when script_outcome = 'quarantined' then 1 else 0 end) as n_prompts_quarantined
    from prompts
    {{ summary_group_by(['preference']) }}

),

-- raw RLHFlow rows; a row that matches no reproduced pair has no known prompt (preference NULL)
published_counts as (

    select
        {{ summary_scope(['prompt_preferences.preference']) }} as scope,
        prompt_preferences.preference,
        count(*) as n_published_pairs,
        sum(case when {{ binary_string('published_audit.chosen_score') }} = {{ binary_string("'N/A'") }}
            then 1 else 0 end) as n_published_chosen_score_na,
        sum(case when published_audit.status = 'only_in_published' then 1 else 0 end) as n_published_not_reproduced
    from published_audit
    left join prompt_preferences
        on published_audit.prompt_id = prompt_preferences.prompt_id
    {{ summary_group_by(['prompt_preferences.preference']) }}

),

pair_counts as (

    select
        {{ summary_scope(['preference']) }} as scope,
        preference,
        sum(case when status != 'only_corrected' then 1 else 0 end) as n_published_logic_pairs,
        sum(case when status != 'only_published_logic' then 1 else 0 end) as n_corrected_pairs,
        sum(case when status = 'same' then 1 else 0 end) as n_pairs_unchanged,
        sum(case when status = 'flipped' then 1 else 0 end) as n_pairs_flipped,
        sum(case when reason = 'na_rated_chosen' then 1 else 0 end) as n_na_rated_chosen,
        sum(case when reason = 'na_rated_rejected' then 1 else 0 end) as n_na_rated_rejected,
        sum(case when reason = 'prompt_dropped_by_last_na' then 1 else 0 end) as n_prompt_dropped_by_last_na,
        sum(case when reason = 'string_order_inverted' then 1 else 0 end) as n_string_order_inverted,
        sum(case when reason = 'invalid_rating' then 1 else 0 end) as n_invalid_rating,
        sum(case when reason = 'prompt_quarantined' then 1 else 0 end) as n_prompt_quarantined,
        sum(case when reason = 'duplicate_model' then 1 else 0 end) as n_duplicate_model,
        sum(case when reason = 'unexplained' then 1 else 0 end) as n_unexplained
    from corrections
    {{ summary_group_by(['preference']) }}

),

-- every preference seen by any of the counts, and the total row even without rows (see
-- summary_scopes)
scopes as (

    select scope, preference from prompt_counts
    union
    select scope, preference from published_counts
    union
    select scope, preference from pair_counts
    union
    select
        'total' as scope,
        cast(null as {{ dbt.type_string() }}) as preference

),

joined as (

    select
        scopes.scope,
        scopes.preference,
        coalesce(prompt_counts.n_prompts, 0) as n_prompts,
        coalesce(prompt_counts.n_prompts_processed, 0) as n_prompts_processed,
        coalesce(prompt_counts.n_prompts_dropped, 0) as n_prompts_dropped,
        coalesce(prompt_counts.n_prompts_quarantined, 0) as n_prompts_quarantined,
        coalesce(published_counts.n_published_pairs, 0) as n_published_pairs,
        coalesce(published_counts.n_published_chosen_score_na, 0) as n_published_chosen_score_na,
        coalesce(published_counts.n_published_not_reproduced, 0) as n_published_not_reproduced,
        coalesce(pair_counts.n_published_logic_pairs, 0) as n_published_logic_pairs,
        coalesce(pair_counts.n_corrected_pairs, 0) as n_corrected_pairs,
        coalesce(pair_counts.n_pairs_unchanged, 0) as n_pairs_unchanged,
        coalesce(pair_counts.n_pairs_flipped, 0) as n_pairs_flipped,
        coalesce(pair_counts.n_na_rated_chosen, 0) as n_na_rated_chosen,
        coalesce(pair_counts.n_na_rated_rejected, 0) as n_na_rated_rejected,
        coalesce(pair_counts.n_prompt_dropped_by_last_na, 0) as n_prompt_dropped_by_last_na,
        coalesce(pair_counts.n_string_order_inverted, 0) as n_string_order_inverted,
        coalesce(pair_counts.n_invalid_rating, 0) as n_invalid_rating,
        coalesce(pair_counts.n_prompt_quarantined, 0) as n_prompt_quarantined,
        coalesce(pair_counts.n_duplicate_model, 0) as n_duplicate_model,
        coalesce(pair_counts.n_unexplained, 0) as n_unexplained
    from scopes
    left join prompt_counts
        on scopes.scope = prompt_counts.scope
        and scopes.preference is not distinct from prompt_counts.preference
    left join published_counts
        on scopes.scope = published_counts.scope
        and scopes.preference is not distinct from published_counts.preference
    left join pair_counts
        on scopes.scope = pair_counts.scope
        and scopes.preference is not distinct from pair_counts.preference

),

typed as (

    select
        scope,
        preference,
        {% for c in ['n_prompts', 'n_prompts_processed', 'n_prompts_dropped', 'n_prompts_quarantined',
                     'n_published_pairs', 'n_published_chosen_score_na', 'n_published_not_reproduced',
                     'n_published_logic_pairs', 'n_corrected_pairs', 'n_pairs_unchanged', 'n_pairs_flipped',
                     'n_na_rated_chosen', 'n_na_rated_rejected', 'n_prompt_dropped_by_last_na',
                     'n_string_order_inverted', 'n_invalid_rating', 'n_prompt_quarantined',
                     'n_duplicate_model', 'n_unexplained'] -%}
        cast({{ c }} as bigint) as {{ c }}{{ "," if not loop.last }}
        {% endfor %}
    from joined

)

select * from typed
