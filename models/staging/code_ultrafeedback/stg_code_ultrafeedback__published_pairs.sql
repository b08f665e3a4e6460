-- One row per raw row of RLHFlow/CodeUltraFeedback-standard: a published preference pair.
-- The prompt and the two responses are lifted out of the [{content, role}] lists.
with

source as (

    select * from {{ source('code_ultrafeedback', 'code_ultrafeedback_standard') }}

),

typed as (

    -- the contract's types, whatever representation the raw files use (README: "Raw data contract")
    select
        {{ raw_columns_as_contract('code_ultrafeedback_standard') }},
        filename,
        file_row_number

    from source

),

row_keys as (

    -- each row's key, from what the row is about: its two message lists in either order, so a swapped pair keeps its key
    {{ raw_row_keys(source('code_ultrafeedback', 'code_ultrafeedback_standard'), 'code_ultrafeedback_standard', 'published_pair_id', [unordered_pair_key(list_exact_key('chosen', ['x.role', 'x.content']), list_exact_key('rejected', ['x.role', 'x.content']))], contract_key='code_ultrafeedback_standard') }}

),

keyed as (

    select
        typed.*,
        row_keys.published_pair_id

    from typed
    inner join row_keys on {{ row_keys_match('typed') }}

),

renamed as (

    select
        ---------- keys
        published_pair_id,
        {{ provenance_columns('keyed') }},

        ---------- pair, as published
        chosen,
        rejected,
        chosen_score,
        rejected_score,

        ---------- lifted out of the message lists
        {{ list_at('chosen', 0) }}.content as prompt,
        {{ list_at('rejected', 0) }}.content as rejected_prompt,
        {{ list_at('chosen', 1) }}.content as chosen_response,
        {{ list_at('rejected', 1) }}.content as rejected_response,
        {{ list_size('chosen') }} as n_chosen_messages,
        {{ list_size('rejected') }} as n_rejected_messages

    from keyed

)

select * from renamed
