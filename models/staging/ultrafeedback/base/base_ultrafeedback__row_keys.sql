-- Each raw row's key, from what the row is about: its source, instruction and completions' models
-- and responses, not their ratings (macros/cross_engine/text.sql, raw_row_keys). A table: its
-- window runs once per build instead of once in each of the models that read
-- stg_ultrafeedback__prompts.
{{ config(materialized='table') }}

{{ raw_row_keys(source('ultrafeedback', 'ultrafeedback_binarized_curation'), 'ultrafeedback', 'prompt_id',
    ['source', 'instruction', list_exact_key('completions', ['x.model', 'x.response'])], contract_key='ultrafeedback') }}
