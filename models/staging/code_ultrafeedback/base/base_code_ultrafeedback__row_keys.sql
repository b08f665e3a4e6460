-- Each raw row's key, from what the row is about: its preference, instruction, models and
-- responses, not their ratings (macros/cross_engine/text.sql, raw_row_keys). A table: its window
-- runs once per build instead of once in each of the models that read
-- stg_code_ultrafeedback__prompts.
{{ config(materialized='table') }}

{{ raw_row_keys(source('code_ultrafeedback', 'code_ultrafeedback'), 'code_ultrafeedback', 'prompt_id',
    ['preference', 'instruction', list_exact_key('models'), list_exact_key('responses', ['x.model', 'x.response'])], contract_key='code_ultrafeedback') }}
