-- Every published-logic pair has chosen_score > rejected_score as Python compares str
-- (codepoint order), and they differ (ties are skipped).
select *
from {{ ref('code_ultrafeedback_pairs_published_logic') }}
where not coalesce({{ binary_string('chosen_score') }} > {{ binary_string('rejected_score') }}, false)
