-- One row per (dataset, prompt, eval text) where one of the prompt's user turns matches the eval
-- text under the decontamination rule (docs/decontamination.md): the best coverage over the
-- prompt's user turns, `exact` when some user turn has exactly the eval text's tokens, and the
-- longest run of the eval text's tokens covered against one user turn, as text (ties: the first
-- user turn, the earliest run).
{%- set settings = contamination_settings() %}

with

per_text as (

    select
        dataset,
        prompt_id,
        eval_set,
        item_id,
        field,
        turn,
        n_tokens,
        max(coverage) over (partition by dataset, prompt_id, eval_set, item_id, field, turn) as coverage,
        max(case when is_exact then 1 else 0 end) over (partition by dataset, prompt_id, eval_set, item_id, field, turn) = 1 as is_exact,
        run_text,
        run_length,
        row_number() over (
            partition by dataset, prompt_id, eval_set, item_id, field, turn
            order by run_length desc, turn_index asc
        ) as run_rank
    from {{ ref('int_contamination__turn_matches') }}

),

matched as (

    select *
    from per_text
    where
        run_rank = 1
        and (
            (n_tokens >= {{ settings.ngram }} and coverage > cast({{ settings.threshold }} as double))
            or (n_tokens < {{ settings.ngram }} and coverage = 1)
        )

)

select
    dataset,
    prompt_id,
    eval_set,
    item_id,
    field,
    turn,
    case when is_exact then 'exact' else 'ngram' end as match_kind,
    coverage,
    run_text as longest_shared_run
from matched
