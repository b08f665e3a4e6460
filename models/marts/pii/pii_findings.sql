-- One row per secret or piece of personal data found in a text of preference_pairs (docs/pii.md):
-- (dataset, pair_id, side, kind, value_md5), its category, a masked value and how often it occurs.
select * from {{ ref('int_pii__findings') }}
