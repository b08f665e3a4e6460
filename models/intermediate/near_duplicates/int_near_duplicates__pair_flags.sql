-- One row per pair of preference_pairs that a near-duplicate check flags (docs/near-duplicates.md),
-- read by preference_pairs, the one model that computes flags:
-- - near_duplicate_pair: in a connected component of same-comparison relations, every pair but
--   the component's first in dataset order, then pair_id (with near_duplicates.keep none, every pair);
-- - label_conflict: both pairs of a label conflict;
-- - near_identical_responses: the pair's chosen and rejected are near.
{%- set settings = near_duplicate_settings() %}

with

pairs as (

    select
        pair_id,
        registry_order,
        coalesce(responses_jaccard >= cast({{ settings.threshold }} as double), false) as has_near_identical_responses
    from {{ ref('int_near_duplicates__pair_responses') }}

),

pair_matches as (

    select * from {{ ref('int_near_duplicates__pair_matches') }}

),

-- the pairs in a same-comparison relation, numbered in dataset order, then pair_id
members as (

    select
        pairs.pair_id,
        row_number() over (order by pairs.registry_order, pairs.pair_id) as node
    from pairs
    where pairs.pair_id in (
        select pair_id_a from pair_matches where relation = 'same_comparison'
        union all
        select pair_id_b from pair_matches where relation = 'same_comparison'
    )

),

links as (

    select
        members_a.node as node_a,
        members_b.node as node_b
    from pair_matches
    inner join members as members_a
        on pair_matches.pair_id_a = members_a.pair_id
    inner join members as members_b
        on pair_matches.pair_id_b = members_b.pair_id
    where pair_matches.relation = 'same_comparison'

),

components as (

    select * from {{ connected_components('links') }} as components

),

near_duplicate as (

    select members.pair_id
    from members
    inner join components
        on members.node = components.node
    {%- if settings.keep == 'one' %}
    where components.component < members.node
    {%- endif %}

),

conflicting as (

    select pair_id_a as pair_id from pair_matches where relation = 'label_conflict'
    union
    select pair_id_b as pair_id from pair_matches where relation = 'label_conflict'

),

final as (

    select
        pairs.pair_id,
        near_duplicate.pair_id is not null as is_near_duplicate_pair,
        conflicting.pair_id is not null as is_label_conflict,
        pairs.has_near_identical_responses
    from pairs
    left join near_duplicate
        on pairs.pair_id = near_duplicate.pair_id
    left join conflicting
        on pairs.pair_id = conflicting.pair_id
    where near_duplicate.pair_id is not null
        or conflicting.pair_id is not null
        or pairs.has_near_identical_responses

)

select * from final
