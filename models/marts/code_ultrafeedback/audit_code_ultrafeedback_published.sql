-- The raw RLHFlow rows matched to the reproduction of the script, one row per published row
-- and/or reproduced pair. Matched on the prompt, both responses and both scores (exact
-- equality, NULL matching NULL); identical pairs are matched in order of occurrence.
with

published as (

    select
        published_pair_id,
        source_file,
        source_row,
        chosen_score,
        rejected_score,
        {{ exact_key(['prompt', 'chosen_response', 'rejected_response',
                                         'chosen_score', 'rejected_score']) }} as match_key,
        -- the published shape: two messages each, user then assistant, the same prompt
        coalesce(
            n_chosen_messages = 2
            and n_rejected_messages = 2
            and {{ list_at('chosen', 0) }}.role = 'user'
            and {{ list_at('chosen', 1) }}.role = 'assistant'
            and {{ list_at('rejected', 0) }}.role = 'user'
            and {{ list_at('rejected', 1) }}.role = 'assistant'
            and prompt is not distinct from rejected_prompt,
            false
        ) as is_well_formed,
        -- two messages per side: the row is read as a pair (row_accounting counts it kept)
        coalesce(n_chosen_messages = 2 and n_rejected_messages = 2, false) as is_pair_shaped
    from {{ ref('stg_code_ultrafeedback__published_pairs') }}

),

reproduced as (

    select
        pair_id,
        prompt_id,
        pair_order,
        chosen_score,
        rejected_score,
        {{ exact_key([list_at('chosen', 0) ~ '.content', list_at('chosen', 1) ~ '.content',
                                         list_at('rejected', 1) ~ '.content',
                                         'chosen_score', 'rejected_score']) }} as match_key
    from {{ ref('code_ultrafeedback_pairs_published_logic') }}

),

published_numbered as (

    select
        *,
        row_number() over (order by source_file, source_row) - 1 as published_order,
        row_number() over (partition by match_key order by source_file, source_row) as match_occurrence
    from published

),

reproduced_numbered as (

    select
        *,
        row_number() over (partition by match_key order by pair_order) as match_occurrence
    from reproduced

),

matched as (

    select
        ---------- keys
        {{ stable_hash(['published_numbered.published_pair_id', 'reproduced_numbered.pair_id']) }} as audit_id,
        published_numbered.published_pair_id,
        reproduced_numbered.pair_id,

        ---------- status
        case
            when published_numbered.published_pair_id is null then 'only_in_reproduction'
            when reproduced_numbered.pair_id is null then 'only_in_published'
            else 'reproduced'
        end as status,

        ---------- the published row
        published_numbered.source_file,
        published_numbered.source_row,
        published_numbered.published_order,
        published_numbered.is_well_formed,
        published_numbered.is_pair_shaped,

        ---------- the reproduced pair
        reproduced_numbered.prompt_id,
        reproduced_numbered.pair_order,

        ---------- shared
        coalesce(published_numbered.chosen_score, reproduced_numbered.chosen_score) as chosen_score,
        coalesce(published_numbered.rejected_score, reproduced_numbered.rejected_score) as rejected_score,
        coalesce(published_numbered.match_occurrence, reproduced_numbered.match_occurrence) as match_occurrence,
        published_numbered.published_order = reproduced_numbered.pair_order as is_at_script_position

    from published_numbered
    full outer join reproduced_numbered
        on published_numbered.match_key = reproduced_numbered.match_key
        and published_numbered.match_occurrence = reproduced_numbered.match_occurrence

)

select * from matched
