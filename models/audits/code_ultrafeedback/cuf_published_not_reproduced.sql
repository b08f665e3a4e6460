-- The published RLHFlow rows and reproduced pairs that do not match (empty on data the
-- script produced), and the matched rows that are not at the script's output position.
--   dbt show -s cuf_published_not_reproduced --limit 50
with

audit as (

    select * from {{ ref('audit_code_ultrafeedback_published').include(database=False) }}

),

listed as (

    select *
    from audit
    where
        status != 'reproduced'
        or not is_at_script_position
        or not is_well_formed

)

select * from listed
order by published_order nulls last, pair_order nulls last
