-- One row per eval text of the registered eval sets, with its number of tokens under the
-- decontamination rule (docs/decontamination.md).
select
    eval_set,
    item_id,
    field,
    turn,
    text,
    cast({{ list_size(text_tokens('text')) }} as bigint) as n_tokens
from {{ ref('stg_eval__texts') }}
