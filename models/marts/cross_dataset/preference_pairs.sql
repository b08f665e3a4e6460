-- One row per preference pair, the same columns for every dataset, in TRL's explicit-prompt
-- conversational form (prompt = [user turn(s)], chosen / rejected = [assistant turn(s)]), with a
-- margin comparable across datasets and the integrity checks that flag the pair. The one place
-- the flags are computed: ultrafeedback_curated, code_ultrafeedback_pairs and rever_pairs take
-- integrity_flags / is_flagged from here, so each one's training filter gives its split. `split` is what
-- the export writes: the dataset name for training pairs, `<dataset>_flagged` for flagged pairs
-- (kept out of training unless the var train_on_flagged_pairs is true). The built-in datasets
-- whose groups the `datasets` var enables come first, then the `extra_datasets` entries in order.
-- Every dataset's pairs get the same checks here, beside its own: identical_responses,
-- empty_response, score_not_higher, duplicate_pair (an exact copy of an earlier pair of the same
-- dataset) and cross_dataset_duplicate (the same texts, lower-cased with white space collapsed, in
-- a dataset registered earlier; the first copy stays clean).
{%- set parts = [] %}
{%- set train_on_flagged = var('train_on_flagged_pairs', false) | string | lower in ['true', '1', 'yes'] %}

with

{% if dataset_enabled('ultrafeedback') -%}
{%- do parts.append('ultrafeedback_pairs') %}
-- best rated vs its random alternate, when the alternate scores strictly lower
ultrafeedback_pairs as (

    select
        'ultrafeedback' as dataset,
        {{ preference_pair_id('ultrafeedback', 'prompt_id') }} as pair_id,
        source,
        prompt_id,
        prompt,
        chosen,
        rejected,
        chosen_model,
        rejected_model,
        chosen_score,
        rejected_score,
        score_kind,
        score_margin,
        margin,
        dataset_flags as integrity_flags,
        0 as registry_order
    from {{ ref('int_ultrafeedback__pairs') }}

),

{% endif -%}
{% if dataset_enabled('code_ultrafeedback') -%}
{%- do parts.append('code_ultrafeedback_pairs') %}
-- the corrected pairs (valid integer ratings, chosen strictly higher)
code_ultrafeedback_pairs as (

    select
        'code_ultrafeedback' as dataset,
        {{ preference_pair_id('code_ultrafeedback', 'pair_id') }} as pair_id,
        preference as source,
        prompt_id,
        prompt,
        chosen,
        rejected,
        chosen_model,
        rejected_model,
        cast(chosen_rating as double) as chosen_score,
        cast(rejected_rating as double) as rejected_score,
        '{{ builtin_score_ranges()['code_ultrafeedback'].score_kind }}' as score_kind,
        cast(score_margin as double) as score_margin,
        margin,
        dataset_flags as integrity_flags,
        1 as registry_order
    from {{ ref('int_code_ultrafeedback__pairs') }}

),

{% endif -%}
{% if dataset_enabled('rever') -%}
{%- do parts.append('rever_kept_pairs') %}
rever_pairs as (

    select * from {{ ref('int_rever__pairs') }}

),

-- every break rever_integrity records for the pair's id (not_kept cannot concern a kept pair)
rever_flags as (

    select
        id,
        {{ sorted_distinct_list_agg('kind') }} as integrity_flags
    from {{ ref('rever_integrity') }}
    where id is not null and kind != 'not_kept'
    group by id

),

-- pairs the upstream retention rule keeps: the chosen response scores strictly higher
rever_kept_pairs as (

    select
        'rever' as dataset,
        {{ preference_pair_id('rever', 'rever_pairs.id') }} as pair_id,
        rever_pairs.source,
        rever_pairs.id as prompt_id,
        {{ chat_messages([('user', 'rever_pairs.instruction')]) }} as prompt,
        {{ chat_messages([('assistant', 'rever_pairs.chosen_response')]) }} as chosen,
        {{ chat_messages([('assistant', 'rever_pairs.rejected_response')]) }} as rejected,
        cast(null as {{ dbt.type_string() }}) as chosen_model,
        cast(null as {{ dbt.type_string() }}) as rejected_model,
        rever_pairs.chosen_score,
        rever_pairs.rejected_score,
        '{{ builtin_score_ranges()['rever'].score_kind }}' as score_kind,
        rever_pairs.score_margin,
        rever_pairs.margin,
        coalesce(rever_flags.integrity_flags, {{ empty_string_list() }}) as integrity_flags,
        2 as registry_order
    from rever_pairs
    left join rever_flags
        on rever_pairs.id = rever_flags.id
    where rever_pairs.kept

),

{% endif -%}
{%- do parts.append('extra_pairs') %}
-- the registry's entries (models/intermediate/extra/), after the built-in datasets
extra_pairs as (

    select
        dataset,
        pair_id,
        source,
        prompt_id,
        prompt,
        chosen,
        rejected,
        chosen_model,
        rejected_model,
        chosen_score,
        rejected_score,
        score_kind,
        score_margin,
        margin,
        dataset_flags as integrity_flags,
        3 + registry_order as registry_order,
        source_file,
        source_row,
        chosen_index,
        rejected_index
    from {{ ref('int_extra__pairs') }}

),

unioned as (

    {% for part in parts %}
    select
        *
        {%- if part != 'extra_pairs' %},
        cast(null as {{ dbt.type_string() }}) as source_file,
        cast(null as bigint) as source_row,
        cast(null as bigint) as chosen_index,
        cast(null as bigint) as rejected_index
        {%- endif %}
    from {{ part }}
    {% if not loop.last %}union all{% endif %}
    {% endfor %}

),

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

-- the checks every dataset gets
checked as (

    select
        unioned.*,
        {{ flag_list([
            ('unioned.chosen is not distinct from unioned.rejected', 'identical_responses'),
            (messages_are_empty('unioned.chosen') ~ ' or ' ~ messages_are_empty('unioned.rejected'), 'empty_response'),
            ('unioned.chosen_score <= unioned.rejected_score', 'score_not_higher'),
            ('ranked.copy_number > 1', 'duplicate_pair'),
            ('ranked.first_registry_order < unioned.registry_order', 'cross_dataset_duplicate'),
        ]) }} as shared_flags
    from unioned
    inner join ranked
        on unioned.pair_id = ranked.pair_id

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
            {{ sorted_union_lists('integrity_flags', 'shared_flags') }} as all_flags
        from checked
    ) as flagged

)

select * from final
