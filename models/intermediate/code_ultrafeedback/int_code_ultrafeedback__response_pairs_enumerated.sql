-- One row per raw coseal row x unordered pair of response positions (a < b): both the
-- script's combinations and the corrected pairs are filters of this set. The pair_id depends
-- only on (prompt_id, a, b), so the same two responses carry the same pair_id in
-- code_ultrafeedback_pairs_published_logic and code_ultrafeedback_pairs.
with

responses as (

    select * from {{ ref('int_code_ultrafeedback__responses_rated') }}

),

paired as (

    select
        ---------- keys
        {{ stable_hash(['a.prompt_id', 'a.response_index', 'b.response_index']) }} as pair_id,
        a.prompt_id,
        a.response_index as response_index_a,
        b.response_index as response_index_b,

        ---------- the two responses
        a.model as model_a,
        b.model as model_b,
        a.is_null_entry as is_null_entry_a,
        b.is_null_entry as is_null_entry_b,
        a.is_first_of_model and b.is_first_of_model as is_script_combination,
        a.model_last_response_index as script_text_index_a,
        b.model_last_response_index as script_text_index_b,
        a.has_annotation as has_annotation_a,
        b.has_annotation as has_annotation_b,
        a.rating_raw as rating_raw_a,
        b.rating_raw as rating_raw_b,
        a.rating as rating_a,
        b.rating as rating_b

    from responses as a
    inner join responses as b
        on a.prompt_id = b.prompt_id
        and a.response_index < b.response_index

)

select * from paired
