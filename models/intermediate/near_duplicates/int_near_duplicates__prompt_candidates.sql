-- One row per candidate pair of distinct shingle sets of prompts (docs/near-duplicates.md): MinHash
-- LSH, bands x rows hash functions of each shingle hash, each keeping its least value over the
-- set; two sets whose values agree on every row of a band are candidates. Each candidate's exact
-- Jaccard, where the sizes allow the threshold (Jaccard <= smaller / larger; else NULL).
{%- set settings = near_duplicate_settings() %}
{%- set constants = minhash_constants(settings.bands * settings.rows) %}
{%- set band_columns = [] %}
{%- for band in range(settings.bands) %}{% do band_columns.append('band_' ~ band) %}{% endfor %}

with

shingle_sets as (

    select * from (
        select
            set_key,
            any_value(shingles) as shingles,
            any_value(n_shingles) as n_shingles
        from {{ ref('int_near_duplicates__prompt_shingles') }}
        group by set_key
    ) as sets
    where n_shingles > 0

),

set_shingles as (

    select
        set_key,
        {{ explode_with_index('shingles', 'shingle_index', 'shingle') }}
    from shingle_sets

),

signatures as (

    select
        set_key,
        {%- for constant in constants %}
        min({{ minhash_value('shingle', constant) }}) as minhash_{{ loop.index0 }}{{ ',' if not loop.last }}
        {%- endfor %}
    from set_shingles
    group by set_key

),

bands as (

    select
        set_key,
        {{ explode_with_index(make_list(band_columns), 'band', 'band_key') }}
    from (
        select
            set_key,
            {%- for band in range(settings.bands) %}
            {%- set values = [] %}
            {%- for row in range(settings.rows) %}{% do values.append('minhash_' ~ (band * settings.rows + row)) %}{% endfor %}
            {{ hash_values(values) }} as band_{{ band }}{{ ',' if not loop.last }}
            {%- endfor %}
        from signatures
    ) as banded

),

candidates as (

    select distinct
        bands_a.set_key as set_key_a,
        bands_b.set_key as set_key_b
    from bands as bands_a
    inner join bands as bands_b
        on bands_a.band = bands_b.band
        and bands_a.band_key = bands_b.band_key
        and bands_a.set_key < bands_b.set_key

),

final as (

    select
        candidates.set_key_a,
        candidates.set_key_b,
        sets_a.n_shingles as n_shingles_a,
        sets_b.n_shingles as n_shingles_b,
        case
            when {{ size_ratio('sets_a.n_shingles', 'sets_b.n_shingles') }} >= cast({{ settings.threshold }} as double)
                then {{ shared_count('sets_a.shingles', 'sets_b.shingles', 'sets_a.n_shingles', 'sets_b.n_shingles') }}
        end as n_shared_shingles
    from candidates
    inner join shingle_sets as sets_a
        on candidates.set_key_a = sets_a.set_key
    inner join shingle_sets as sets_b
        on candidates.set_key_b = sets_b.set_key

)

select
    *,
    {{ jaccard('n_shared_shingles', 'n_shingles_a', 'n_shingles_b') }} as jaccard
from final
