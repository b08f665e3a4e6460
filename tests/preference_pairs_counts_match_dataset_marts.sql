-- preference_pairs holds exactly the pairs of the per-dataset marts: UltraFeedback prompts whose
-- best-rated completion beats its rated alternate, every corrected CodeUltraFeedback pair, every
-- kept ReVeR pair. Returns the datasets whose counts differ.
{{ config(enabled=dataset_enabled('ultrafeedback') and dataset_enabled('code_ultrafeedback') and dataset_enabled('rever')) }}

with

expected as (

    select 'ultrafeedback' as dataset, count(*) as n_pairs
    from {{ ref('ultrafeedback_curated') }}
    where score_random_response_for_best_rated is not null
        and score_best_rated > score_random_response_for_best_rated
    union all
    select 'code_ultrafeedback' as dataset, count(*) as n_pairs from {{ ref('code_ultrafeedback_pairs') }}
    union all
    select 'rever' as dataset, count(*) as n_pairs from {{ ref('rever_pairs') }} where kept

),

actual as (

    select dataset, count(*) as n_pairs
    from {{ ref('preference_pairs') }}
    group by dataset

)

select expected.dataset, expected.n_pairs as expected_pairs, actual.n_pairs as actual_pairs
from expected
left join actual on expected.dataset = actual.dataset
where actual.n_pairs is null and expected.n_pairs > 0
    or actual.n_pairs != expected.n_pairs
