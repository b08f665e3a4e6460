-- One row per (eval text, training user turn) that share an n-gram, or where the eval text is
-- found whole (docs/decontamination.md): the share of the eval text's tokens covered, whether the
-- turn is exact, and the longest run of covered positions. Hash joins on n-gram strings, eval side
-- first: a turn's n-grams are kept only where an eval text has them, and a short eval text (fewer
-- than n tokens) is looked up among the turn's k-grams that start with a short text's first token.
-- Empty without eval sets.
{%- set n = contamination_settings().ngram %}
{%- set offsets = [] %}
{%- for i in range(n) %}{%- do offsets.append(i ~ '') %}{%- endfor %}

with

-- the eval texts with a token, tokenized as eval_items counts them (macro text_tokens)
eval_texts as (

    select
        eval_set,
        item_id,
        field,
        turn,
        {{ list_size('tokens') }} as n_tokens,
        tokens
    from (
        select
            eval_set,
            item_id,
            field,
            turn,
            {{ text_tokens('text') }} as tokens
        from {{ ref('stg_eval__texts') }}
    ) as tokenized
    where {{ list_size('tokens') }} > 0

),

-- the n-grams of the eval texts of n or more tokens, with their 0-based start positions
eval_grams as (

    select
        eval_set,
        item_id,
        field,
        turn,
        n_tokens,
        {{ explode_with_index(token_ngrams('tokens', n), 'start_position', 'gram') }}
    from eval_texts
    where n_tokens >= {{ n }}

),

-- each eval text whole: its tokens joined by single spaces
eval_wholes as (

    select
        eval_set,
        item_id,
        field,
        turn,
        n_tokens,
        {{ list_join('tokens', "' '") }} as whole
    from eval_texts

),

-- the user turns of each distinct (dataset, prompt_id) of preference_pairs
turns as (

    select
        dataset,
        prompt_id,
        turn_index,
        {{ text_tokens('message.content') }} as tokens
    from (
        select
            dataset,
            prompt_id,
            {{ explode_with_index('prompt', 'turn_index', 'message') }}
        from (
            select distinct
                dataset,
                prompt_id,
                prompt
            from {{ ref('int_preference_pairs__unioned') }}
            {%- if not eval_sets() %}
            where false
            {%- endif %}
        ) as prompts
    ) as messages
    where message.role = 'user'

),

-- the turns' n-grams that some eval text has
turn_grams as (

    select distinct
        grams.dataset,
        grams.prompt_id,
        grams.turn_index,
        grams.gram
    from (
        select
            dataset,
            prompt_id,
            turn_index,
            {{ explode_with_index(token_ngrams('tokens', n), 'start_position', 'gram') }}
        from turns
    ) as grams
    where grams.gram in (select eval_grams.gram from eval_grams)

),

-- the positions of each eval text covered by an n-gram the turn has
covered as (

    select distinct
        hits.dataset,
        hits.prompt_id,
        hits.turn_index,
        hits.eval_set,
        hits.item_id,
        hits.field,
        hits.turn,
        hits.n_tokens,
        hits.start_position + offsets.offset_in_gram as token_position
    from (
        select
            turn_grams.dataset,
            turn_grams.prompt_id,
            turn_grams.turn_index,
            eval_grams.eval_set,
            eval_grams.item_id,
            eval_grams.field,
            eval_grams.turn,
            eval_grams.n_tokens,
            eval_grams.start_position
        from eval_grams
        inner join turn_grams
            on eval_grams.gram = turn_grams.gram
    ) as hits
    cross join (
        select {{ explode_with_index(make_list(offsets), 'offset_in_gram', 'unused') }}
    ) as offsets

),

-- runs of consecutive covered positions (a position minus its rank is constant along a run)
runs as (

    select
        dataset,
        prompt_id,
        turn_index,
        eval_set,
        item_id,
        field,
        turn,
        n_tokens,
        min(token_position) as run_start,
        count(*) as run_length
    from (
        select
            *,
            token_position - row_number() over (
                partition by dataset, prompt_id, turn_index, eval_set, item_id, field, turn
                order by token_position
            ) as run_key
        from covered
    ) as keyed
    group by dataset, prompt_id, turn_index, eval_set, item_id, field, turn, n_tokens, run_key

),

gram_matches as (

    select
        dataset,
        prompt_id,
        turn_index,
        eval_set,
        item_id,
        field,
        turn,
        n_tokens,
        cast(sum(run_length) over (
            partition by dataset, prompt_id, turn_index, eval_set, item_id, field, turn
        ) as double) / n_tokens as coverage,
        false as is_exact,
        run_start,
        run_length
    from runs

),

-- the short eval texts' first tokens and lengths
short_starts as (

    select
        {{ sorted_distinct_list_agg(list_at('tokens', 0)) }} as first_tokens,
        {{ sorted_distinct_list_agg('n_tokens') }} as lengths
    from eval_texts
    where n_tokens < {{ n }}

),

-- short eval texts found whole inside a turn (a turn's k-grams of the short texts' lengths k, only
-- where a short text's first token stands), and turns equal to an eval text
whole_matches as (

    select distinct
        pieces.dataset,
        pieces.prompt_id,
        pieces.turn_index,
        eval_wholes.eval_set,
        eval_wholes.item_id,
        eval_wholes.field,
        eval_wholes.turn,
        eval_wholes.n_tokens,
        pieces.is_exact
    from (
        select dataset, prompt_id, turn_index, false as is_exact, piece
        from (
            select
                turns.dataset,
                turns.prompt_id,
                turns.turn_index,
                {{ explode_with_index(
                    'flatten(' ~ list_transform(
                        positions_where(list_size('turns.tokens'), list_has('short_starts.first_tokens', list_at('turns.tokens', 'i'))),
                        'i',
                        list_transform('short_starts.lengths', 'k', list_join(list_slice0('turns.tokens', 'i', 'i + k'), "' '"))) ~ ')',
                    'piece_index', 'piece') }}
            from turns
            cross join short_starts
        ) as short_pieces

        union all

        select
            dataset,
            prompt_id,
            turn_index,
            true as is_exact,
            {{ list_join('tokens', "' '") }} as piece
        from turns
        where {{ list_size('tokens') }} in (select eval_wholes.n_tokens from eval_wholes)
    ) as pieces
    inner join eval_wholes
        on pieces.piece = eval_wholes.whole
        and (pieces.is_exact or eval_wholes.n_tokens < {{ n }})

),

-- per turn: the best coverage, exact or not, and the longest run (ties: the earliest)
combined as (

    select dataset, prompt_id, turn_index, eval_set, item_id, field, turn, n_tokens, coverage, is_exact, run_start, run_length
    from gram_matches

    union all

    -- a whole match covers every position
    select
        dataset, prompt_id, turn_index, eval_set, item_id, field, turn, n_tokens, 1.0 as coverage, is_exact,
        cast(0 as bigint) as run_start, n_tokens as run_length
    from whole_matches

),

ranked as (

    select
        *,
        max(coverage) over (partition by dataset, prompt_id, turn_index, eval_set, item_id, field, turn) as best_coverage,
        max(case when is_exact then 1 else 0 end) over (partition by dataset, prompt_id, turn_index, eval_set, item_id, field, turn) = 1 as turn_is_exact,
        row_number() over (partition by dataset, prompt_id, turn_index, eval_set, item_id, field, turn order by run_length desc, run_start asc) as run_rank
    from combined

)

select
    ranked.dataset,
    ranked.prompt_id,
    ranked.turn_index,
    ranked.eval_set,
    ranked.item_id,
    ranked.field,
    ranked.turn,
    ranked.n_tokens,
    ranked.best_coverage as coverage,
    ranked.turn_is_exact as is_exact,
    ranked.run_start,
    ranked.run_length,
    {{ list_join(list_slice0('eval_texts.tokens', 'ranked.run_start', 'ranked.run_start + ranked.run_length'), "' '") }} as run_text
from ranked
inner join eval_texts
    on
        ranked.eval_set = eval_texts.eval_set
        and ranked.item_id = eval_texts.item_id
        and ranked.field = eval_texts.field
        and ranked.turn = eval_texts.turn
where ranked.run_rank = 1
