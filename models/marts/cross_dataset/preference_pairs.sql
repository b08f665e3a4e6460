-- One row per preference pair, the same columns for every dataset, in TRL's explicit-prompt
-- conversational form (prompt = [user turn(s)], chosen / rejected = [assistant turn(s)]), with a
-- margin comparable across datasets and the integrity checks that flag the pair. The one place
-- the flags are computed: ultrafeedback_curated, code_ultrafeedback_pairs and rever_pairs take
-- integrity_flags / is_flagged from here, so each one's training filter gives its split. `split` is what
-- the export writes: the dataset name for training pairs, `<dataset>_flagged` for flagged pairs
-- (kept out of training unless the var train_on_flagged_pairs is true). The built-in datasets
-- whose groups the `datasets` var enables come first, then the `extra_datasets` entries in order.
-- Every dataset's pairs get the same checks here, beside its own (int_preference_pairs__unioned's
-- integrity_flags; for ReVeR, the kinds of break rever_integrity records for the pair's id):
-- identical_responses, empty_response, score_not_higher, duplicate_pair (an exact copy of an
-- earlier pair of the same dataset), cross_dataset_duplicate (the same texts, lower-cased with
-- white space collapsed, in a dataset registered earlier; the first copy stays clean),
-- eval_contamination (a user turn of the prompt matches an item of a registered eval set:
-- contamination_matches) and the near-duplicate checks of int_near_duplicates__pair_flags:
-- near_duplicate_pair (the same comparison, edited or not, as an earlier pair), label_conflict
-- (the same comparison with the preference reversed) and near_identical_responses;
-- contains_secret (a text holds a secret: int_pii__findings) and, with the var pii_flag_personal
-- true, contains_personal_data.
{%- set train_on_flagged = var('train_on_flagged_pairs', false) | string | lower in ['true', '1', 'yes'] %}

with

unioned as (

    select * from {{ ref('int_preference_pairs__unioned') }}

),

-- the prompts of which a user turn matches an item of a registered eval set
contaminated_prompts as (

    select distinct
        dataset,
        prompt_id
    from {{ ref('contamination_matches') }}

),

-- the pairs a near-duplicate check flags
near_duplicate_flags as (

    select * from {{ ref('int_near_duplicates__pair_flags') }}

),

-- the pairs with a secret or personal data in a text
pii_pairs as (

    select
        pair_id,
        max(case when category = 'secret' then 1 else 0 end) = 1 as has_secret,
        max(case when category = 'personal' then 1 else 0 end) = 1 as has_personal_data
    from {{ ref('int_pii__findings') }}
    group by pair_id

),

{% if dataset_enabled('rever') -%}
-- the ReVeR pairs' own flags: every break rever_integrity records for the pair's id (not_kept
-- cannot concern a kept pair)
rever_flags as (

    select
        {{ preference_pair_id('rever', 'id') }} as pair_id,
        {{ sorted_distinct_list_agg('kind') }} as integrity_flags
    from {{ ref('rever_integrity') }}
    where id is not null and kind != 'not_kept'
    group by id

),

{% endif -%}
-- the keys of the duplicate checks, and the checks' windows, on a narrow table (pair_id is unique
-- across datasets): windows over the wide rows would sort every text. An exact copy has the same
-- prompt text, so the exact texts are hashed only for the pairs whose prompt text repeats within
-- their dataset (most prompts have one pair), and a cross-dataset duplicate has its copy's prompt
-- text, so only the responses of a prompt text that more than one dataset has are normalized
keyed as (

    select
        pair_id,
        dataset,
        registry_order,
        source_file,
        source_row,
        chosen_index,
        rejected_index,
        {{ stable_hash([messages_text_key('prompt')]) }} as prompt_text_key
    from unioned

),

prompt_shared as (

    select
        *,
        count(*) over (partition by dataset, prompt_text_key) > 1 as is_prompt_repeated,
        min(registry_order) over (partition by prompt_text_key)
            < max(registry_order) over (partition by prompt_text_key) as is_prompt_shared
    from keyed

),

pair_keys as (

    select
        unioned.pair_id,
        unioned.registry_order,
        case when prompt_shared.is_prompt_repeated then
            {{ stable_hash([messages_exact_key('unioned.prompt'), messages_exact_key('unioned.chosen'), messages_exact_key('unioned.rejected')]) }}
        end as exact_pair_key,
        case when prompt_shared.is_prompt_shared then
            {{ stable_hash([
                'prompt_shared.prompt_text_key',
                messages_text_key('unioned.chosen'),
                messages_text_key('unioned.rejected'),
            ]) }}
        end as text_pair_key
    from unioned
    inner join prompt_shared
        on unioned.pair_id = prompt_shared.pair_id
    where prompt_shared.is_prompt_repeated or prompt_shared.is_prompt_shared

),

earliest_copies as (

    select
        pair_id,
        exact_pair_key,
        min(registry_order) over (partition by text_pair_key) as first_registry_order
    from pair_keys

),

-- "earlier" within a dataset: by raw file, row and completion positions (the built-in datasets,
-- which carry none, by pair_id); "registered earlier": the built-in datasets, then the entries.
-- A pair whose prompt text repeats nowhere is its own first copy.
ranked as (

    select
        prompt_shared.pair_id,
        row_number() over (
            partition by prompt_shared.dataset, coalesce(earliest_copies.exact_pair_key, prompt_shared.pair_id)
            order by
                prompt_shared.source_file, prompt_shared.source_row,
                prompt_shared.chosen_index, prompt_shared.rejected_index, prompt_shared.pair_id
        ) as copy_number,
        case
            when prompt_shared.is_prompt_shared then earliest_copies.first_registry_order
            else prompt_shared.registry_order
        end as first_registry_order
    from prompt_shared
    left join earliest_copies
        on prompt_shared.pair_id = earliest_copies.pair_id

),

-- the dataset's own flags, and the checks every dataset gets
checked as (

    select
        unioned.*,
        {%- if dataset_enabled('rever') %}
        {{ sorted_union_lists('unioned.integrity_flags', 'rever_flags.integrity_flags') }} as dataset_flags,
        {%- else %}
        unioned.integrity_flags as dataset_flags,
        {%- endif %}
        {{ flag_list([
            ('unioned.chosen is not distinct from unioned.rejected', 'identical_responses'),
            (messages_are_empty('unioned.chosen') ~ ' or ' ~ messages_are_empty('unioned.rejected'), 'empty_response'),
            ('unioned.chosen_score <= unioned.rejected_score', 'score_not_higher'),
            ('ranked.copy_number > 1', 'duplicate_pair'),
            ('ranked.first_registry_order < unioned.registry_order', 'cross_dataset_duplicate'),
            ('contaminated_prompts.prompt_id is not null', 'eval_contamination'),
            ('near_duplicate_flags.is_near_duplicate_pair', 'near_duplicate_pair'),
            ('near_duplicate_flags.is_label_conflict', 'label_conflict'),
            ('near_duplicate_flags.has_near_identical_responses', 'near_identical_responses'),
            ('pii_pairs.has_secret', 'contains_secret'),
        ] + ([('pii_pairs.has_personal_data', 'contains_personal_data')] if pii_flag_personal() else [])) }} as shared_flags
    from unioned
    inner join ranked
        on unioned.pair_id = ranked.pair_id
    left join contaminated_prompts
        on unioned.dataset = contaminated_prompts.dataset and unioned.prompt_id = contaminated_prompts.prompt_id
    left join near_duplicate_flags
        on unioned.pair_id = near_duplicate_flags.pair_id
    left join pii_pairs
        on unioned.pair_id = pii_pairs.pair_id
    {%- if dataset_enabled('rever') %}
    left join rever_flags
        on unioned.pair_id = rever_flags.pair_id
    {%- endif %}

),

final as (

    select
        ---------- keys
        dataset,
        dataset
        {%- if not train_on_flagged %} || case when {{ list_size('all_flags') }} > 0 then '_flagged' else '' end{% endif %}
            as split,
        pair_id,
        source,
        prompt_id,

        ---------- training columns
        prompt,
        chosen,
        rejected,
        margin,

        ---------- scores
        chosen_model,
        rejected_model,
        chosen_score,
        rejected_score,
        score_kind,
        score_margin,

        ---------- integrity
        all_flags as integrity_flags,
        {{ list_size('all_flags') }} > 0 as is_flagged
    from (
        select
            *,
            {{ sorted_union_lists('dataset_flags', 'shared_flags') }} as all_flags
        from checked
    ) as flagged

)

select * from final
