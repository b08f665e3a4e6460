-- One row per raw ReVeR-Traces-Judge trajectory whose pair is not in preference_pairs, with the
-- first reason that applies (a trajectory can have several; rever_integrity lists them all).
with

trajectories as (

    select * from {{ ref('rever_trajectories') }}

),

pairs as (

    select * from {{ ref('rever_pairs') }}

),

trained as (

    select distinct prompt_id as id
    from {{ ref('preference_pairs') }}
    where dataset = 'rever'

),

without_pair as (

    select
        trajectories.*,
        pairs.kept as pair_kept,
        pairs.n_trajectories as pair_n_trajectories,
        case
            when trajectories.candidate = 'chosen' then pairs.rejected_verdict_status
            else pairs.chosen_verdict_status
        end as partner_verdict_status
    from trajectories
    left join pairs on trajectories.id = pairs.id
    left join trained on trajectories.id = trained.id and trajectories.is_pair_member
    where trained.id is null

),

final as (

    select
        trajectory_id,
        id,
        candidate,
        source_file,
        source_row,
        case
            when id is null then 'null_id'
            when candidate is null or candidate not in ('chosen', 'rejected') then 'invalid_candidate'
            when not is_pair_member then 'not_pair_member'
            when not rubric_found then 'no_rubric'
            when pair_n_trajectories != 2 then 'incomplete_pair'
            -- two trajectories, but the other one's candidate is not chosen/rejected
            when partner_verdict_status is null then 'missing_candidate'
            when verdict_status != 'ok' then 'verdict_' || verdict_status
            when partner_verdict_status != 'ok' then 'partner_verdict_' || partner_verdict_status
            when not pair_kept then 'pair_not_kept'
            else 'unexplained'
        end as reason
    from without_pair

)

select * from final
