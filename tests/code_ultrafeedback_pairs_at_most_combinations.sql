-- No prompt yields more than C(n, 2) pairs under either logic, and only processed prompts
-- yield published-logic pairs.
select
    prompt_id,
    n_responses,
    script_outcome,
    n_published_logic_pairs,
    n_corrected_pairs
from {{ ref('code_ultrafeedback_prompts') }}
where
    n_published_logic_pairs > coalesce(n_responses * (n_responses - 1) / 2, 0)
    or n_corrected_pairs > coalesce(n_responses * (n_responses - 1) / 2, 0)
    or (script_outcome != 'processed' and n_published_logic_pairs > 0)
