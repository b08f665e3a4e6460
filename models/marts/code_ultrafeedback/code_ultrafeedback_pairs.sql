-- The corrected pairs (int_code_ultrafeedback__pairs) with their integrity flags as
-- preference_pairs computes them, so the filter `not is_flagged` gives the `code_ultrafeedback`
-- split of preference_pairs, row for row.
with

pairs as (

    select * from {{ ref('int_code_ultrafeedback__pairs') }}

),

flags as (

    select
        pair_id,
        integrity_flags,
        is_flagged
    from {{ ref('preference_pairs') }}
    where dataset = 'code_ultrafeedback'

),

final as (

    select
        ---------- keys
        pairs.pair_id,
        pairs.prompt_id,

        ---------- pair
        pairs.preference,
        pairs.chosen_model,
        pairs.rejected_model,
        pairs.chosen_response_index,
        pairs.rejected_response_index,
        pairs.chosen_rating,
        pairs.rejected_rating,
        pairs.score_margin,
        pairs.margin,

        ---------- training format: [user] prompt, [assistant] chosen / rejected
        pairs.prompt,
        pairs.chosen,
        pairs.rejected,

        ---------- integrity of the pair
        flags.integrity_flags,
        flags.is_flagged
    from pairs
    inner join flags
        on {{ preference_pair_id('code_ultrafeedback', 'pairs.pair_id') }} = flags.pair_id

)

select * from final
