-- One row per finding of the scan for secrets and personal data (docs/pii.md) and its value:
-- (dataset, pair_id, side, kind, value_md5) with the number of its matches. The texts are
-- preference_pairs' prompt (its turns' contents joined by a newline, every role), chosen and
-- rejected (their messages' contents joined by a newline); a finding is one non-overlapping match
-- of a pattern of the seed pii_patterns, scanning left to right; an ip_address match counts only when
-- every octet is at most 255 and it lies in no network of the seed pii_reserved_networks. One test of
-- all the patterns at once picks the texts worth scanning kind by kind (few hold anything).
{%- set patterns = pii_patterns() %}
{%- set any_pattern = [] %}
{%- for kind, category, pattern in patterns %}{% do any_pattern.append(pattern) %}{% endfor %}

with

patterns as (

    select * from {{ ref('pii_patterns') }}

),

reserved_networks as (

    select
        {{ ipv4_number("split_part(network, '/', 1)") }} as first_address,
        {{ ipv4_number("split_part(network, '/', 1)") }}
            + cast(power(2, 32 - cast(split_part(network, '/', 2) as int)) as bigint) - 1 as last_address
    from {{ ref('pii_reserved_networks') }}

),

-- the pairs with a match in a text, read once; then their texts, one row per side
pairs_with_matches as (

    select * from (
        select
            dataset,
            pair_id,
            {{ messages_content_text('prompt') }} as prompt_text,
            {{ messages_content_text('chosen') }} as chosen_text,
            {{ messages_content_text('rejected') }} as rejected_text
        from {{ ref('int_preference_pairs__unioned') }}
    ) as texts
    {%- if patterns %}
    where {{ regex_contains('prompt_text', any_pattern | join('|')) }}
        or {{ regex_contains('chosen_text', any_pattern | join('|')) }}
        or {{ regex_contains('rejected_text', any_pattern | join('|')) }}
    {%- else %}
    where false
    {%- endif %}

),

texts_with_matches as (

    {% for side in ['prompt', 'chosen', 'rejected'] %}
    select
        dataset,
        pair_id,
        '{{ side }}' as side,
        {{ side }}_text as text
    from pairs_with_matches
    {% if not loop.last %}union all{% endif %}
    {% endfor %}

),

matches as (

    {% for kind, category, pattern in patterns %}
    select
        dataset,
        pair_id,
        side,
        '{{ kind }}' as kind,
        value
    from (
        select
            dataset,
            pair_id,
            side,
            {{ explode_with_index(regex_extract_all('text', pattern, 0), 'match_index', 'value') }}
        from texts_with_matches
    ) as kind_matches
    {% if not loop.last %}union all{% endif %}
    {% else %}
    select
        cast(null as {{ dbt.type_string() }}) as dataset,
        cast(null as {{ dbt.type_string() }}) as pair_id,
        cast(null as {{ dbt.type_string() }}) as side,
        cast(null as {{ dbt.type_string() }}) as kind,
        cast(null as {{ dbt.type_string() }}) as value
    where false
    {% endfor %}

),

-- an address is personal data only when it is a public one
addresses as (

    select distinct value
    from matches
    where kind = 'ip_address'

),

non_public_addresses as (

    select value
    from addresses
    where not {{ ipv4_octets_valid('value') }}

    union

    select addresses.value
    from addresses
    inner join reserved_networks
        on {{ ipv4_number('addresses.value') }} between reserved_networks.first_address and reserved_networks.last_address

),

findings as (

    select matches.*
    from matches
    left join non_public_addresses
        on matches.kind = 'ip_address' and matches.value = non_public_addresses.value
    where non_public_addresses.value is null

),

final as (

    select
        findings.dataset,
        findings.pair_id,
        findings.side,
        findings.kind,
        patterns.category,
        md5(findings.value) as value_md5,
        substring(findings.value, 1, 4) || '…' as value_masked,
        count(*) as n_occurrences
    from findings
    inner join patterns
        on findings.kind = patterns.kind
    group by findings.dataset, findings.pair_id, findings.side, findings.kind, patterns.category, findings.value

)

select * from final
