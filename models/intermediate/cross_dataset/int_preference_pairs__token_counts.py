"""Token counts for truncation_collapse when the var tokenizer_file names a local tokenizer.json:
per pair of int_preference_pairs__unioned, the tokens of the prompt text and the number of leading
tokens the chosen and rejected texts share (texts as in pair_bias_features: messages' contents
joined by a newline; no special tokens added). Built only with that var, on DuckDB; counted with
the `tokenizers` library."""

import os

import pyarrow as pa

BATCH_ROWS = 10_000


def text(column: str) -> str:
    return f"array_to_string(list_transform({column}, lambda m: m.content), chr(10))"


def shared_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def model(dbt, session):
    dbt.config(materialized="table")
    path = dbt.config.get("tokenizer_file")
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise RuntimeError("var tokenizer_file needs the tokenizers library: .venv/bin/pip install tokenizers") from None
    if not path or not os.path.isfile(path):
        raise RuntimeError(
            f"var tokenizer_file: {path!r} is not a file; give the path of a tokenizer.json "
            "(the one of the model you train, e.g. from its Hub repo), or leave the var out to count 4 characters a token"
        )
    tokenizer = Tokenizer.from_file(path)
    pairs = dbt.ref("int_preference_pairs__unioned").project(
        f"pair_id, {text('prompt')} as prompt_text, {text('chosen')} as chosen_text, {text('rejected')} as rejected_text"
    )
    ids, prompt_tokens, shared_tokens = [], [], []
    for batch in pairs.fetch_record_batch(BATCH_ROWS):
        columns = batch.to_pydict()
        prompts = tokenizer.encode_batch(columns["prompt_text"], add_special_tokens=False)
        chosen = tokenizer.encode_batch(columns["chosen_text"], add_special_tokens=False)
        rejected = tokenizer.encode_batch(columns["rejected_text"], add_special_tokens=False)
        ids += columns["pair_id"]
        prompt_tokens += [len(p.ids) for p in prompts]
        shared_tokens += [shared_prefix(c.ids, r.ids) for c, r in zip(chosen, rejected)]
    return pa.table({
        "pair_id": pa.array(ids, pa.string()),
        "n_prompt_tokens": pa.array(prompt_tokens, pa.int64()),
        "n_shared_tokens": pa.array(shared_tokens, pa.int64()),
    })
