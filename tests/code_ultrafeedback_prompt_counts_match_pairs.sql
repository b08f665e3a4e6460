-- The per-prompt pair counts and outcomes agree with the pair marts and the quarantine.
with

prompts as (

    select * from {{ ref('code_ultrafeedback_prompts') }}

),

totals as (

    select
        (select sum(n_published_logic_pairs) from prompts) as n_prompt_published_logic,
        (select count(*) from {{ ref('code_ultrafeedback_pairs_published_logic') }}) as n_published_logic,
        (select sum(n_corrected_pairs) from prompts) as n_prompt_corrected,
        (select count(*) from {{ ref('code_ultrafeedback_pairs') }}) as n_corrected,
        (
            select count(*) from prompts
            where script_outcome = 'quarantined'
        ) as n_prompts_quarantined,
        (select count(*) from {{ ref('code_ultrafeedback_published_logic_quarantine') }}) as n_quarantined

)

select *
from totals
where
    n_prompt_published_logic != n_published_logic
    or n_prompt_corrected != n_corrected
    or n_prompts_quarantined != n_quarantined
