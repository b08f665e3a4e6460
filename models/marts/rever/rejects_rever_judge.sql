-- One row per raw ReVeR-Traces-Judge trajectory that is not one side of a kept pair
-- (rever_pairs.kept, the upstream retention rule), with the first reason that applies: first
-- the trajectory's own record (its id, its candidate, an extra trajectory of its id), then why
-- its pair is not kept. A trajectory can have several problems; rever_integrity lists them all.
with

trajectories as (

    select * from {{ ref('rever_trajectories') }}

),

pairs as (

    select * from {{ ref('rever_pairs') }}

),

with_pair as (

    select
        trajectories.*,
        pairs.kept as pair_kept,
        pairs.n_trajectories as pair_n_trajectories,
        case
            when trajectories.candidate = 'chosen' then pairs.rejected_verdict_status
            else pairs.chosen_verdict_status
        end as partner_verdict_status
    from trajectories
    left join pairs
        on trajectories.id = pairs.id

),

reasons as (

    select
        trajectory_id,
        id,
        candidate,
        source_file,
        source_row,
        case
            ---------- the trajectory itself cannot be a pair's side
            when id is null then 'null_id'
            when candidate is null or candidate not in ('chosen', 'rejected') then 'invalid_candidate'
            when not is_pair_member then 'not_pair_member'
            ---------- a side of its id's pair: why the pair is not kept
            when coalesce(pair_kept, false) then null
            when not rubric_found then 'no_rubric'
            when pair_n_trajectories != 2 then 'incomplete_pair'
            -- two trajectories, but the other one's candidate is not chosen/rejected
            when partner_verdict_status is null then 'missing_candidate'
            when verdict_status != 'ok' then 'verdict_' || verdict_status
            when partner_verdict_status != 'ok' then 'partner_verdict_' || partner_verdict_status
            else 'pair_not_kept'
        end as reason
    from with_pair

),

final as (

    select * from reasons
    where reason is not null

)

select * from final
