"""The exported training tables with the real clients: Hugging Face ``datasets`` and TRL's
``DPOTrainer`` and ``RewardTrainer`` (``make test-clients``).

The session warehouse (conftest) is exported with ``python -m preftools.export``; each training
table is loaded with ``datasets`` from its Parquet files, prepared with TRL's own functions
(``maybe_extract_prompt``, ``maybe_apply_chat_template``) and checked from the rendered text: the
user turn appears exactly once in prompt+chosen and in prompt+rejected, the assistant answer is in
the rendered completion, chosen and rejected differ. Then a tiny randomly initialised Llama (built
here, nothing is downloaded) trains 2 steps with each trainer on the first rows of each table,
and the token ids the trainers actually train on are checked the same way. The registry's
entries take the user's whole path: fetched from a stand-in Hub with only
examples/extra_datasets.yml added, built, exported, loaded and trained on with DPOTrainer, one
entry of each shape and the training mixture.

The tokenizer is a byte-level BPE trained here on the tables' own texts, with a plain chat
template (``<|role|>content<|end|>``) whose role markers are special tokens, so every turn is
visible in the rendered text and is one token id. A negative control shows the checks catch the
shapes that break DPO: a plain-string prompt with [user, assistant] completions, and a [user]
prompt with [user, assistant] completions (the user turn twice).
"""

from __future__ import annotations

import copy
import math
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip(
    "trl",
    reason="TRL is not installed: `make install-clients` (requirements-clients.txt), then `make test-clients`",
)

import datasets  # noqa: E402
import duckdb  # noqa: E402
import torch  # noqa: E402
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402
from transformers import (  # noqa: E402
    LlamaConfig,
    LlamaForCausalLM,
    LlamaForSequenceClassification,
    PreTrainedTokenizerFast,
)
from trl import DPOConfig, DPOTrainer, RewardConfig, RewardTrainer  # noqa: E402
from trl.data_utils import (  # noqa: E402
    is_conversational,
    maybe_apply_chat_template,
    maybe_extract_prompt,
)

from conftest import REPO, run_dbt  # noqa: E402

pytestmark = [pytest.mark.clients, pytest.mark.slow]

# The training tables: (mart, split). preference_pairs has one split per dataset, plus
# `<dataset>_flagged` splits (pairs flagged by integrity checks, not for training); the other
# marts have one `train` split.
PAIR_SPLITS = ["ultrafeedback", "code_ultrafeedback", "rever"]
TRAINING_TABLES = {
    **{f"preference_pairs-{split}": ("preference_pairs", split) for split in PAIR_SPLITS},
    "ultrafeedback_curated": ("ultrafeedback_curated", "train"),
    "code_ultrafeedback_pairs": ("code_ultrafeedback_pairs", "train"),
}
PAIR_COLUMNS = {
    "prompt", "chosen", "rejected", "margin", "chosen_score", "rejected_score", "score_margin",
    "integrity_flags", "is_flagged", "split", "dataset", "pair_id", "source", "prompt_id",
    "chosen_model", "rejected_model", "score_kind",
}
FILE_NAME = re.compile(r"(?P<split>\w+)-\d{5}-of-\d{5}\.parquet")

N_TRAIN = 8  # rows of each table given to each trainer
SPECIAL = {"bos": "<s>", "eos": "</s>", "pad": "<pad>"}
ROLE_MARKERS = {"system": "<|system|>", "user": "<|user|>", "assistant": "<|assistant|>"}
END = "<|end|>"
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
MESSAGES = datasets.List({"role": datasets.Value("string"), "content": datasets.Value("string")})


# --------------------------------------------------------------------------------------------
# tokenizer and model, built here (no hub)


def build_tokenizer(texts: list[str], vocab_size: int = 512) -> PreTrainedTokenizerFast:
    """A byte-level BPE trained on ``texts`` (any byte can be encoded), with the role markers
    of the chat template as special tokens (one id each, never merged with the text around)."""
    specials = [SPECIAL["pad"], SPECIAL["bos"], SPECIAL["eos"], *ROLE_MARKERS.values(), END]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    bpe.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=vocab_size, special_tokens=specials, show_progress=False,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        ),
    )
    tok = PreTrainedTokenizerFast(
        tokenizer_object=bpe, bos_token=SPECIAL["bos"], eos_token=SPECIAL["eos"],
        pad_token=SPECIAL["pad"], additional_special_tokens=[*ROLE_MARKERS.values(), END],
    )
    tok.chat_template = CHAT_TEMPLATE
    return tok


def tiny_llama_config(tok: PreTrainedTokenizerFast, **extra) -> LlamaConfig:
    return LlamaConfig(
        vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=4096,
        pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
        **extra,
    )


def table_texts(ds: datasets.Dataset, limit: int = 100) -> list[str]:
    out = []
    for row in ds.select(range(min(limit, len(ds)))):
        for key in ("prompt", "chosen", "rejected"):
            out.extend(m["content"] for m in row[key] or [] if m and m["content"])
    return out


# --------------------------------------------------------------------------------------------
# the checks: what a trainer reads for one preference example


def _is_messages(value) -> bool:
    return isinstance(value, list) and all(isinstance(m, dict) and "role" in m for m in value)


def _contents(messages, role: str) -> list[str]:
    return [m["content"] for m in messages if m["role"] == role]


def user_turn_counts(example: dict, tok) -> dict[str, dict[str, int]]:
    """For prompt+chosen and prompt+rejected as TRL's trainers build them (the explicit prompt
    prepended to the completion, the whole conversation rendered with the chat template; a
    plain-string prompt stays text in front of the rendered completion), how often the user turn
    occurs: ``content`` counts the user text outside the assistant answers (the most repeated
    user turn if there are several), ``markers`` counts rendered user role markers."""
    prompt = example["prompt"]
    user_texts = [prompt] if isinstance(prompt, str) else _contents(prompt, "user")
    counts = {}
    for side in ("chosen", "rejected"):
        completion = list(example[side])
        if isinstance(prompt, str):
            text = prompt + tok.apply_chat_template(completion, tokenize=False)
        else:
            text = tok.apply_chat_template(list(prompt) + completion, tokenize=False)
        answers = "".join(_contents(completion, "assistant"))
        content = max((text.count(u) - answers.count(u) for u in user_texts if u), default=0)
        counts[side] = {"content": content, "markers": text.count(ROLE_MARKERS["user"])}
    return counts


def pair_problems(example: dict, tok) -> list[str]:
    """Everything wrong with one row of a training table, as TRL prepares it; [] if fine."""
    if not is_conversational(example):
        return ["not conversational for TRL (is_conversational is False)"]
    if not all(_is_messages(example[k]) for k in ("prompt", "chosen", "rejected")):
        types = ", ".join(f"{k}={type(example[k]).__name__}" for k in ("prompt", "chosen", "rejected"))
        return [f"prompt, chosen and rejected are not all message lists: {types}"]
    pair = {k: example[k] for k in ("prompt", "chosen", "rejected")}
    problems = []
    if [m["role"] for m in pair["prompt"]] != ["user"]:
        problems.append(f"prompt roles {[m['role'] for m in pair['prompt']]}, expected ['user']")
    for side in ("chosen", "rejected"):
        if [m["role"] for m in pair[side]] != ["assistant"]:
            problems.append(f"{side} roles {[m['role'] for m in pair[side]]}, expected ['assistant']")
    if not all(_contents(pair["prompt"], "user")):
        problems.append("empty user turn")

    # TRL's own preparation. The prompt is explicit, so maybe_extract_prompt must leave the pair
    # as it is; maybe_apply_chat_template renders the prompt (with the generation prompt) and
    # each completion as the text that follows it.
    if maybe_extract_prompt(dict(pair)) != pair:
        problems.append("maybe_extract_prompt rewrites the pair (TRL sees an implicit prompt)")
    rendered = maybe_apply_chat_template(dict(pair), tok)
    # (TRL cuts the rendered prompt to its common prefix with prompt+completion, so a completion
    # that starts with another turn leaves a prompt cut inside a role marker)
    prompt_alone = tok.apply_chat_template(pair["prompt"], add_generation_prompt=True, tokenize=False)
    if rendered["prompt"] != prompt_alone:
        problems.append("rendered prompt is not the prompt with the generation prompt")
    users = [u for u in _contents(pair["prompt"], "user") if u]
    for side in ("chosen", "rejected"):
        full = tok.apply_chat_template(pair["prompt"] + pair[side], tokenize=False)
        if rendered["prompt"] + rendered[side] != full:
            problems.append(f"rendered prompt + {side} is not the rendered conversation")
        answers = _contents(pair[side], "assistant")
        if not answers or not all(a in rendered[side] for a in answers):
            problems.append(f"assistant answer missing from the rendered {side}")
        if ROLE_MARKERS["user"] in rendered[side] or any(
            rendered[side].count(u) > "".join(answers).count(u) for u in users
        ):
            problems.append(f"a user turn inside the rendered {side} completion")
    for side, n in user_turn_counts(pair, tok).items():
        if n != {"content": 1, "markers": 1}:
            problems.append(f"user turn in prompt+{side} {n}, expected once")
    if rendered["chosen"] == rendered["rejected"]:
        problems.append("chosen and rejected render to the same text")
    return problems


def token_problems(example: dict, tok, prompt_key: str | None) -> list[str]:
    """The same check on the token ids a trainer prepared (``prompt_ids``/``chosen_ids``/
    ``rejected_ids`` for DPO, ``chosen_ids``/``rejected_ids`` with the prompt inside for the
    reward model): one user turn per sequence, none in the completion, each completion closed."""
    user, assistant, end = (
        tok.convert_tokens_to_ids(t) for t in (ROLE_MARKERS["user"], ROLE_MARKERS["assistant"], END)
    )
    problems = []
    prompt_ids = example[prompt_key] if prompt_key else []
    for side in ("chosen", "rejected"):
        ids = example[f"{side}_ids"]
        if prompt_key and user in ids:
            problems.append(f"user turn inside {side}_ids")
        if (prompt_ids + ids).count(user) != 1:
            problems.append(f"user turn {(prompt_ids + ids).count(user)} times in prompt+{side} ids")
        if (prompt_ids + ids).count(assistant) != 1 or not ids or ids[-1] != end:
            problems.append(f"{side}: not one assistant turn closed by {END}")
    return problems


def summarize(bad: dict) -> str:
    kinds = Counter(p.split(" {")[0] for problems in bad.values() for p in problems)
    sample = "\n".join(f"  {key}: {problems}" for key, problems in list(bad.items())[:5])
    return f"{len(bad)} bad row(s); problems: {dict(kinds)}\n{sample}"


# --------------------------------------------------------------------------------------------
# trainers


def dpo_trainer(ds: datasets.Dataset, tok, out_dir: Path) -> DPOTrainer:
    torch.manual_seed(0)
    model = LlamaForCausalLM(tiny_llama_config(tok))
    # the reference model is given: without one, TRL loads it by the policy's name (from the hub)
    ref_model = copy.deepcopy(model)
    # max_length=None: with a max_length, DPOTrainer drops the examples whose prompt alone fills it
    args = DPOConfig(
        output_dir=str(out_dir), max_steps=2, per_device_train_batch_size=2, max_length=None,
        learning_rate=1e-3, logging_steps=1, save_strategy="no", report_to="none", use_cpu=True,
        bf16=False, activation_checkpointing=False, disable_tqdm=True, dataloader_num_workers=0, seed=0,
    )
    return DPOTrainer(
        model=model, ref_model=ref_model, args=args, train_dataset=ds, processing_class=tok
    )


def reward_trainer(ds: datasets.Dataset, tok, out_dir: Path) -> RewardTrainer:
    torch.manual_seed(0)
    model = LlamaForSequenceClassification(tiny_llama_config(tok, num_labels=1))
    # max_length=None: RewardTrainer drops (does not truncate) pairs longer than max_length.
    args = RewardConfig(
        output_dir=str(out_dir), max_steps=2, per_device_train_batch_size=2, max_length=None,
        learning_rate=1e-3, logging_steps=1, save_strategy="no", report_to="none", use_cpu=True,
        bf16=False, activation_checkpointing=False, disable_tqdm=True, dataloader_num_workers=0, seed=0,
    )
    return RewardTrainer(model=model, args=args, train_dataset=ds, processing_class=tok)


def assert_trained(trainer) -> None:
    trainer.train()
    assert trainer.state.global_step == 2
    losses = [log["loss"] for log in trainer.state.log_history if "loss" in log]
    assert len(losses) == 2 and all(math.isfinite(x) for x in losses), trainer.state.log_history


# --------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="module")
def exports(warehouse, tmp_path_factory) -> Path:
    """The session warehouse exported with the project's exporter."""
    out = tmp_path_factory.mktemp("client_exports") / "exports"
    proc = subprocess.run(
        [sys.executable, "-m", "preftools.export", "--duckdb-path", str(warehouse.path),
         "--export-dir", str(out), "--no-progress"],
        cwd=REPO, capture_output=True, text=True,
    )
    assert proc.returncode == 0, f"export failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return out


@pytest.fixture(scope="module")
def hf_cache(tmp_path_factory) -> Path:
    """datasets' cache for this module (never ~/.cache)."""
    return tmp_path_factory.mktemp("hf_datasets_cache")


def split_files(exports: Path, mart: str) -> dict[str, list[Path]]:
    files: dict[str, list[Path]] = {}
    for f in sorted((exports / mart / "data").glob("*.parquet")):
        m = FILE_NAME.fullmatch(f.name)
        assert m, f"unexpected file name {f}"
        files.setdefault(m["split"], []).append(f)
    return files


def load_split(exports: Path, mart: str, split: str, cache_dir: Path) -> datasets.Dataset:
    files = split_files(exports, mart).get(split)
    assert files, f"no {split}-*.parquet in {exports / mart / 'data'}"
    return datasets.load_dataset(
        "parquet", data_files={split: [str(f) for f in files]}, split=split, cache_dir=str(cache_dir)
    )


def has_pair(row) -> bool:
    return row["chosen"] is not None and row["rejected"] is not None


def trainable(row) -> bool:
    """What the README tells users to keep: a pair no integrity check flags."""
    return has_pair(row) and not row["is_flagged"]


@pytest.fixture(scope="module")
def tables(exports, hf_cache) -> dict[str, datasets.Dataset]:
    """Each training table as datasets loads it; ultrafeedback_curated and code_ultrafeedback_pairs
    without their rows that have no pair (NULL prompt/chosen/rejected) or are flagged (the
    preference_pairs export does the same with its `_flagged` splits)."""
    out = {}
    for name, (mart, split) in TRAINING_TABLES.items():
        ds = load_split(exports, mart, split, hf_cache)
        if mart in ("ultrafeedback_curated", "code_ultrafeedback_pairs"):
            ds = ds.filter(trainable)
        assert len(ds) > 0, f"{name}: no trainable row"
        out[name] = ds
    return out


@pytest.fixture(scope="module")
def tokenizer(tables) -> PreTrainedTokenizerFast:
    return build_tokenizer([t for ds in tables.values() for t in table_texts(ds)])


# --------------------------------------------------------------------------------------------
# negative control: no warehouse, no training


def test_checks_flag_broken_shapes(tmp_path):
    """The checks catch the shapes that break DPO; the canonical shape passes."""
    q, a, b = "What colour is the sky on Mars?", "Butterscotch by day.", "Blue."
    tok = build_tokenizer([q, a, b, "some filler text for the merges"] * 5, vocab_size=300)
    user = {"role": "user", "content": q}
    assistant = [{"role": "assistant", "content": x} for x in (a, b)]
    once = {"content": 1, "markers": 1}

    canonical = {"prompt": [user], "chosen": [assistant[0]], "rejected": [assistant[1]]}
    assert pair_problems(canonical, tok) == []
    assert user_turn_counts(canonical, tok) == {"chosen": once, "rejected": once}

    # the old export: prompt as a string, completions as [user, assistant]
    old = {"prompt": q, "chosen": [user, assistant[0]], "rejected": [user, assistant[1]]}
    assert user_turn_counts(old, tok) == {"chosen": {"content": 2, "markers": 1},
                                          "rejected": {"content": 2, "markers": 1}}
    assert pair_problems(old, tok)
    # TRL's maybe_extract_prompt reads it as an implicit prompt and rewrites it; DPOTrainer does
    # not call it when a prompt column exists, and fails on it.
    assert maybe_extract_prompt(dict(old))["prompt"] == [user]
    with pytest.raises((TypeError, AttributeError, KeyError)):
        dpo_trainer(datasets.Dataset.from_list([old, old]), tok, tmp_path / "old")

    # prompt [user] and completions [user, assistant]: the user turn twice
    dup = {"prompt": [user], "chosen": [user, assistant[0]], "rejected": [user, assistant[1]]}
    twice = {"content": 2, "markers": 2}
    assert user_turn_counts(dup, tok) == {"chosen": twice, "rejected": twice}
    problems = pair_problems(dup, tok)
    assert "a user turn inside the rendered chosen completion" in problems
    assert any(p.startswith("user turn in prompt+chosen") for p in problems)
    # and TRL trains on it silently: the tokens it prepares carry the user turn twice
    trainer = dpo_trainer(datasets.Dataset.from_list([dup, dup]), tok, tmp_path / "dup")
    assert all(token_problems(ex, tok, "prompt_ids") for ex in trainer.train_dataset)
    trainer = dpo_trainer(datasets.Dataset.from_list([canonical, canonical]), tok, tmp_path / "ok")
    assert not any(token_problems(ex, tok, "prompt_ids") for ex in trainer.train_dataset)


# --------------------------------------------------------------------------------------------
# the exports with datasets


def test_preference_pairs_splits(exports, hf_cache, warehouse):
    """preference_pairs loads as one split per dataset (by directory, as the README shows, and
    by explicit files); training splits hold unflagged pairs, `<dataset>_flagged` splits the
    flagged ones; each split has the warehouse's rows."""
    files = split_files(exports, "preference_pairs")
    datasets_built = [r["dataset"] for r in warehouse.rows("select distinct dataset from main.preference_pairs")]
    assert set(PAIR_SPLITS) <= set(datasets_built) <= set(files), sorted(files)
    assert set(files) <= set(datasets_built) | {f"{s}_flagged" for s in datasets_built}, sorted(files)

    by_dir = datasets.load_dataset(str(exports / "preference_pairs"), cache_dir=str(hf_cache))
    assert set(by_dir) == set(files)
    for split in files:
        ds = load_split(exports, "preference_pairs", split, hf_cache)
        assert len(ds) == len(by_dir[split])
        assert PAIR_COLUMNS <= set(ds.column_names), PAIR_COLUMNS - set(ds.column_names)
        n = warehouse.scalar("select count(*) from main.preference_pairs where split = ?", [split])
        assert len(ds) == n, (split, len(ds), n)
        assert set(ds["split"]) == {split}
        assert set(ds["dataset"]) == {split.removesuffix("_flagged")}
        flagged = split.endswith("_flagged")
        assert set(ds["is_flagged"]) == {flagged}, split
        assert all(bool(f) == flagged for f in ds["integrity_flags"]), split


@pytest.mark.parametrize("name", TRAINING_TABLES)
def test_training_columns(tables, exports, hf_cache, name):
    """The canonical columns: prompt/chosen/rejected as role/content message lists, a margin in
    [0, 1] on every trainable row (RewardTrainer subtracts it from the reward difference; a
    NULL would crash its collator)."""
    ds = tables[name]
    for key in ("prompt", "chosen", "rejected"):
        assert ds.features[key] == MESSAGES, (key, ds.features[key])
    assert ds.features["margin"] == datasets.Value("float64")
    margins = ds["margin"]
    assert all(m is not None and 0.0 <= m <= 1.0 for m in margins), sorted(
        {m for m in margins if m is None or not 0.0 <= m <= 1.0}, key=str)[:10]
    if name == "ultrafeedback_curated":
        raw = load_split(exports, "ultrafeedback_curated", "train", hf_cache)
        unpaired = raw.filter(lambda r: not has_pair(r))
        flagged = raw.filter(lambda r: has_pair(r) and r["is_flagged"])
        assert len(flagged) > 0 and all(r["integrity_flags"] for r in flagged)
        assert len(raw) == len(ds) + len(unpaired) + len(flagged)
        # a row has the whole pair or none of it
        assert all(r[k] is None for r in unpaired for k in ("prompt", "chosen", "rejected"))


@pytest.mark.parametrize("name", TRAINING_TABLES)
def test_trl_renders_each_turn_once(tables, tokenizer, name):
    """TRL's data preparation on every row: the pair is conversational with an explicit prompt
    (maybe_extract_prompt leaves it as it is), and after maybe_apply_chat_template the user turn
    appears once in prompt+chosen and in prompt+rejected, the completions hold the assistant
    answers, and chosen and rejected differ."""
    ds = tables[name]
    assert is_conversational(ds[0])
    bad = {}
    for i, row in enumerate(ds):
        problems = pair_problems(row, tokenizer)
        if problems:
            bad[row.get("pair_id") or row.get("prompt_id") or i] = problems
    assert not bad, f"{name}: " + summarize(bad)

    # the same functions through datasets.map, as in TRL's docs
    rendered = ds.map(maybe_extract_prompt).map(
        maybe_apply_chat_template, fn_kwargs={"processing_class": tokenizer}
    )
    for key in ("prompt", "chosen", "rejected"):
        assert rendered.features[key] == datasets.Value("string")
    assert rendered[0]["prompt"] + rendered[0]["chosen"] == tokenizer.apply_chat_template(
        ds[0]["prompt"] + ds[0]["chosen"], tokenize=False)


# --------------------------------------------------------------------------------------------
# the trainers


# TRL 1.16's DPOTrainer reads model.is_gradient_checkpointing (trl/models/utils.py) for its
# reference forward, which transformers 5.24 deprecates: one FutureWarning per step, not ours.
@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")
@pytest.mark.parametrize("name", TRAINING_TABLES)
def test_dpo_trainer(tables, tokenizer, tmp_path, name):
    """DPOTrainer prepares the first rows without dropping any, trains on token ids with the
    user turn once and only in the prompt, and runs 2 steps with a finite loss."""
    ds = tables[name].select(range(min(N_TRAIN, len(tables[name]))))
    assert len(ds) >= 4, "too few rows for 2 steps of 2"
    trainer = dpo_trainer(ds, tokenizer, tmp_path)
    prepared = trainer.train_dataset
    assert len(prepared) == len(ds), "DPOTrainer dropped examples (prompt longer than max_length?)"
    bad = {i: p for i, ex in enumerate(prepared)
           if (p := token_problems(ex, tokenizer, "prompt_ids"))}
    assert not bad, summarize(bad)
    for ex, row in zip(prepared, ds):
        assert tokenizer.decode(ex["prompt_ids"]) == tokenizer.apply_chat_template(
            row["prompt"], add_generation_prompt=True, tokenize=False)
    assert_trained(trainer)


@pytest.mark.parametrize("name", TRAINING_TABLES)
def test_reward_trainer(tables, tokenizer, tmp_path, name):
    """RewardTrainer keeps the `margin` column through its preparation, its collator passes it,
    and the loss is -logsigmoid(r_chosen - r_rejected - margin); then 2 steps, finite loss."""
    ds = tables[name].select(range(min(N_TRAIN, len(tables[name]))))
    assert len(ds) >= 4, "too few rows for 2 steps of 2"
    trainer = reward_trainer(ds, tokenizer, tmp_path)
    prepared = trainer.train_dataset
    assert len(prepared) == len(ds)
    assert "margin" in prepared.column_names
    bad = {i: p for i, ex in enumerate(prepared) if (p := token_problems(ex, tokenizer, None))}
    assert not bad, summarize(bad)

    batch = next(iter(trainer.get_train_dataloader()))
    assert set(batch) == {"input_ids", "attention_mask", "margin"}
    margins = torch.tensor(ds["margin"], dtype=torch.float)
    assert all(torch.isclose(margins, m).any() for m in batch["margin"]), (batch["margin"], margins)
    model = trainer.model
    with torch.no_grad():
        loss = trainer.compute_loss(model, dict(batch))
        chosen, rejected = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]
                                 ).logits.squeeze(-1).chunk(2)
    expected = -torch.nn.functional.logsigmoid(chosen - rejected - batch["margin"]).mean()
    assert torch.isclose(loss, expected, atol=1e-5), (loss, expected)
    without_margin = -torch.nn.functional.logsigmoid(chosen - rejected).mean()
    if batch["margin"].abs().sum() > 0:
        assert not torch.isclose(loss, without_margin, atol=1e-6)
    assert_trained(trainer)


# --------------------------------------------------------------------------------------------
# the extra_datasets entries and the training mixture

# One entry of each shape (preference with an explicit prompt; preference with multi-turn prompts
# and system turns, implicit prompt; rated_completions; transcript) and the mixture across
# datasets: (mart, split).
EXTRA_TABLES = {
    "preference_pairs-h4_ultrafeedback": ("preference_pairs", "h4_ultrafeedback"),
    "preference_pairs-rlhflow_ultrafeedback": ("preference_pairs", "rlhflow_ultrafeedback"),
    "preference_pairs-openbmb_ultrafeedback": ("preference_pairs", "openbmb_ultrafeedback"),
    "preference_pairs-hh_helpful": ("preference_pairs", "hh_helpful"),
    "training_mixture": ("training_mixture", "training_mixture"),
}
EXTRA_ENTRIES = ("h4_ultrafeedback", "rlhflow_ultrafeedback", "openbmb_ultrafeedback", "hh_helpful")


@pytest.fixture(scope="module")
def extra_exports(raw_dir, tmp_path_factory) -> Path:
    """What a user does with only the registry's entries added: the session's generated data (the
    built-in datasets and the stand-ins of examples/extra_datasets.yml's entries, in their Hub
    layouts) served by the stand-in Hub (hub_standin.py), `python -m preftools.fetch --vars
    examples/extra_datasets.yml`, `dbt build` with those vars on the fetched folder, and the export."""
    import shutil

    from hub_standin import FakeHub, serving
    from test_fetch import EXAMPLES, host_repo, run_fetch

    from conftest import run_dbt
    from preftools.inputs import registry
    from preftools.inputs.contract import DATASETS

    work = tmp_path_factory.mktemp("client_extra")
    hub = FakeHub()
    entries = registry.extra_datasets(registry.load_vars(str(EXAMPLES)))
    for hub_id in dict.fromkeys([ds.hub_id for ds in DATASETS] + [e.hub_id for e in entries]):
        host_repo(hub, hub_id, raw_dir / hub_id)
    raw = work / "raw"
    with serving(hub):
        proc = run_fetch(work, hub.endpoint, "--raw-data-dir", str(raw), "--vars", str(EXAMPLES))
    assert proc.returncode == 0, proc.stderr[-3000:]
    for e in entries:  # the entry's config and splits only (hh-rlhf's helpful-base, H4's train_prefs)
        fetched = [p.relative_to(e.repo_dir(raw)) for p in registry.data_files(e, raw)]
        assert fetched == [p.relative_to(e.repo_dir(raw_dir)) for p in registry.data_files(e, raw_dir)], e.name
        assert all((e.repo_dir(raw) / p).read_bytes() == (e.repo_dir(raw_dir) / p).read_bytes() for p in fetched)
    db = work / "warehouse.duckdb"
    run_dbt(["build", "--vars", EXAMPLES.read_text(encoding="utf-8")], raw, db, work / "build")
    out = work / "exports"
    proc = subprocess.run(
        [sys.executable, "-m", "preftools.export", "--duckdb-path", str(db), "--export-dir", str(out),
         "--no-progress"],
        cwd=REPO, capture_output=True, text=True,
    )
    assert proc.returncode == 0, f"export failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    shutil.rmtree(raw)  # the warehouse and the export are what the tests read
    return out


@pytest.fixture(scope="module")
def extra_tables(extra_exports, hf_cache) -> dict[str, datasets.Dataset]:
    out = {}
    for name, (mart, split) in EXTRA_TABLES.items():
        ds = load_split(extra_exports, mart, split, hf_cache)
        assert len(ds) >= 4, f"{name}: {len(ds)} rows, too few for 2 steps of 2"
        out[name] = ds
    return out


@pytest.fixture(scope="module")
def extra_tokenizer(extra_tables) -> PreTrainedTokenizerFast:
    return build_tokenizer([t for ds in extra_tables.values() for t in table_texts(ds)])


def _roles(messages) -> list[str]:
    return [m["role"] for m in messages]


def conversation_problems(example: dict, tok) -> list[str]:
    """pair_problems for a prompt that may be a conversation (a system turn, earlier turns): the
    prompt ends with a user turn, each completion starts with an assistant turn (a transcript that
    differs before its last turn continues the conversation in the completions, as the implicit-
    prompt rule says), TRL keeps the prompt explicit and renders prompt + completion as the whole
    conversation, with every turn once: no prompt turn repeated in a completion."""
    pair = {k: example[k] for k in ("prompt", "chosen", "rejected")}
    if not all(_is_messages(v) and v for v in pair.values()):
        return ["prompt, chosen and rejected are not all non-empty message lists"]
    if not is_conversational(example):
        return ["not conversational for TRL (is_conversational is False)"]
    problems = []
    roles = _roles(pair["prompt"])
    if roles[-1] != "user" or "system" in roles[1:] or not set(roles) <= {"system", "user", "assistant"}:
        problems.append(f"prompt roles {roles}: expected [system] then turns ending with a user turn")
    for side in ("chosen", "rejected"):
        side_roles = _roles(pair[side])
        if side_roles[0] != "assistant" or not set(side_roles) <= {"user", "assistant"}:
            problems.append(f"{side} roles {side_roles}: expected turns starting with an assistant turn")
    if maybe_extract_prompt(dict(pair)) != pair:
        problems.append("maybe_extract_prompt rewrites the pair (TRL sees an implicit prompt)")
    rendered = maybe_apply_chat_template(dict(pair), tok)
    if rendered["prompt"] != tok.apply_chat_template(pair["prompt"], add_generation_prompt=True, tokenize=False):
        problems.append("rendered prompt is not the prompt with the generation prompt")
    for side in ("chosen", "rejected"):
        full = tok.apply_chat_template(pair["prompt"] + pair[side], tokenize=False)
        if rendered["prompt"] + rendered[side] != full:
            problems.append(f"rendered prompt + {side} is not the rendered conversation")
        if ROLE_MARKERS["system"] in rendered[side]:
            problems.append(f"a system turn inside the rendered {side} completion")
        n_user = roles.count("user") + _roles(pair[side]).count("user")
        if full.count(ROLE_MARKERS["user"]) != n_user:
            problems.append(f"{full.count(ROLE_MARKERS['user'])} user turns in prompt+{side}, the messages have {n_user}")
        if rendered[side].count(ROLE_MARKERS["user"]) != _roles(pair[side]).count("user"):
            problems.append(f"a prompt turn inside the rendered {side} completion")
        if not all(m["content"] in rendered[side] for m in pair[side] if m["content"]):
            problems.append(f"a turn of {side} missing from its rendered completion")
    if rendered["chosen"] == rendered["rejected"]:
        problems.append("chosen and rejected render to the same text")
    return problems


def conversation_token_problems(example: dict, row: dict, tok) -> list[str]:
    """The token ids DPOTrainer prepared for one row: the prompt's turns and the generation prompt
    only in prompt_ids, each completion's own turns (no prompt turn) in its ids, closed."""
    user, system, assistant, end = (
        tok.convert_tokens_to_ids(t)
        for t in (ROLE_MARKERS["user"], ROLE_MARKERS["system"], ROLE_MARKERS["assistant"], END)
    )
    roles = _roles(row["prompt"])
    prompt_ids = example["prompt_ids"]
    problems = []
    if prompt_ids.count(user) != roles.count("user") or prompt_ids.count(system) != roles.count("system"):
        problems.append("prompt_ids do not hold the prompt's user and system turns")
    if prompt_ids.count(assistant) != roles.count("assistant") + 1:
        problems.append("prompt_ids do not end with the generation prompt")
    for side in ("chosen", "rejected"):
        ids, side_roles = example[f"{side}_ids"], _roles(row[side])
        if system in ids or ids.count(user) != side_roles.count("user"):
            problems.append(f"{side}_ids hold a prompt turn")
        if ids.count(assistant) != side_roles.count("assistant") - 1:  # the first one is the generation prompt
            problems.append(f"{side}_ids: not the completion's assistant turns")
        if not ids or ids[-1] != end or ids.count(end) != len(side_roles):
            problems.append(f"{side}_ids: not the completion's turns closed by {END}")
    return problems


def spread_rows(ds: datasets.Dataset, n: int = N_TRAIN) -> datasets.Dataset:
    """Up to ``n`` rows taken in turn from each dataset of ``ds`` (the export orders rows by
    dataset, so the first rows of the mixture would all come from one)."""
    by_dataset: dict[str, list[int]] = {}
    for i, name in enumerate(ds["dataset"]):
        by_dataset.setdefault(name, []).append(i)
    picked, queues = [], [list(q) for q in by_dataset.values()]
    while len(picked) < n and any(queues):
        for q in queues:
            if q and len(picked) < n:
                picked.append(q.pop(0))
    return ds.select(sorted(picked))


def test_conversation_checks_flag_broken_shapes():
    """The checks on conversational prompts catch what breaks DPO; a multi-turn prompt with a
    system turn passes."""
    tok = build_tokenizer(["Be brief.", "Hi", "Hello.", "Joke?", "Knock knock.", "No.", "filler text"] * 5,
                          vocab_size=300)
    system, hi, hello, joke = (dict(role=r, content=c) for r, c in (
        ("system", "Be brief."), ("user", "Hi"), ("assistant", "Hello."), ("user", "Joke?")))
    good, bad = {"role": "assistant", "content": "Knock knock."}, {"role": "assistant", "content": "No."}
    canonical = {"prompt": [system, hi, hello, joke], "chosen": [good], "rejected": [bad]}
    assert conversation_problems(canonical, tok) == []
    # a transcript that differs before its last turn: the completions continue the conversation
    later = {"prompt": [system, hi], "chosen": [hello, joke, good], "rejected": [hello, joke, bad]}
    assert conversation_problems(later, tok) == []
    # the last user turn repeated in the completions (TRL then cuts the rendered prompt inside a
    # role marker)
    repeated = {"prompt": [system, hi, hello, joke], "chosen": [joke, good], "rejected": [joke, bad]}
    problems = conversation_problems(repeated, tok)
    assert "chosen roles ['user', 'assistant']: expected turns starting with an assistant turn" in problems
    assert "rendered prompt is not the prompt with the generation prompt" in problems
    # an implicit prompt (the whole conversation in chosen/rejected): TRL rewrites it
    implicit = {"prompt": [], "chosen": [system, hi, hello, joke, good], "rejected": [system, hi, hello, joke, bad]}
    assert conversation_problems(implicit, tok)
    # a prompt that ends with the assistant
    assert conversation_problems({"prompt": [system, hi, hello], "chosen": [good], "rejected": [bad]}, tok)


def test_extra_splits_have_the_entries_pairs(extra_tables):
    """The entries' splits hold their own training pairs; the multi-turn entry keeps its system
    and earlier turns in the prompt; the mixture holds clean pairs of several datasets."""
    for name in EXTRA_ENTRIES:
        ds = extra_tables[f"preference_pairs-{name}"]
        assert set(ds["dataset"]) == {name} and set(ds["split"]) == {name} and not any(ds["is_flagged"])
        assert all(ds.features[k] == MESSAGES for k in ("prompt", "chosen", "rejected"))
    multi = extra_tables["preference_pairs-rlhflow_ultrafeedback"]
    assert any(p[0]["role"] == "system" and _roles(p).count("user") > 1 for p in multi["prompt"])
    transcripts = extra_tables["preference_pairs-hh_helpful"]
    assert any(_roles(p).count("user") > 1 for p in transcripts["prompt"])
    assert all(m is None for m in transcripts["margin"])  # unscored
    for name in ("h4_ultrafeedback", "openbmb_ultrafeedback"):  # scored: a margin in (0, 1]
        assert all(0 < m <= 1 for m in extra_tables[f"preference_pairs-{name}"]["margin"]), name
    mixture = extra_tables["training_mixture"]
    assert not any(mixture["is_flagged"]) and len(set(mixture["dataset"])) >= 2


@pytest.mark.parametrize("name", EXTRA_TABLES)
def test_trl_renders_extra_pairs(extra_tables, extra_tokenizer, name):
    ds = extra_tables[name]
    bad = {row["pair_id"]: p for row in ds if (p := conversation_problems(row, extra_tokenizer))}
    assert not bad, f"{name}: " + summarize(bad)


@pytest.mark.filterwarnings("ignore:`is_gradient_checkpointing` is deprecated:FutureWarning")
@pytest.mark.parametrize("name", EXTRA_TABLES)
def test_dpo_trainer_on_extra_splits(extra_tables, extra_tokenizer, tmp_path, name):
    """DPOTrainer on rows of an entry's split and of the mixture (from each of its datasets), as
    exported (every column, margin NULL for the unscored rows): none dropped, the prompt's turns
    only in the prompt ids, 2 steps with a finite loss."""
    ds = spread_rows(extra_tables[name])
    if name == "training_mixture":
        assert len(set(ds["dataset"])) >= 2
    trainer = dpo_trainer(ds, extra_tokenizer, tmp_path)
    prepared = trainer.train_dataset
    assert len(prepared) == len(ds), "DPOTrainer dropped examples"
    bad = {i: p for i, (ex, row) in enumerate(zip(prepared, ds))
           if (p := conversation_token_problems(ex, row, extra_tokenizer))}
    assert not bad, summarize(bad)
    for ex, row in zip(prepared, ds):
        assert extra_tokenizer.decode(ex["prompt_ids"]) == extra_tokenizer.apply_chat_template(
            row["prompt"], add_generation_prompt=True, tokenize=False)
    assert_trained(trainer)


# --------------------------------------------------------------------------------------------
# truncation counted by a real tokenizer (the var tokenizer_file)


def test_truncation_collapse_counts_with_a_tokenizer(warehouse, tokenizer, tmp_path):
    """With tokenizer_file, a pair collapses at budget B when the prompt's tokens plus the leading
    tokens chosen and rejected share reach B (texts: contents joined by "\\n"; no special tokens),
    counted here with the same tokenizer.json through the `tokenizers` library."""
    path = tmp_path / "tokenizer.json"
    tokenizer.backend_tokenizer.save(str(path))
    db = tmp_path / "tokens.duckdb"
    shutil.copy2(warehouse.path, db)
    budgets = [64, 256, 1024]
    run_dbt(["build", "--select", "int_preference_pairs__token_counts+", "--vars",
             f'{{"tokenizer_file": "{path}", "truncation_budgets": {budgets}}}'],
            warehouse.raw_dir, db, tmp_path / "work")

    def text(messages):
        return "\n".join(m["content"] for m in messages if m["content"] is not None)

    def count(t):
        return len(tokenizer.backend_tokenizer.encode(t, add_special_tokens=False).ids)

    expected = Counter()
    for row in warehouse.rows("select * from main.preference_pairs where split = dataset"):
        chosen = tokenizer.backend_tokenizer.encode(text(row["chosen"]), add_special_tokens=False).ids
        rejected = tokenizer.backend_tokenizer.encode(text(row["rejected"]), add_special_tokens=False).ids
        shared = next((i for i, (a, b) in enumerate(zip(chosen, rejected)) if a != b), min(len(chosen), len(rejected)))
        for budget in budgets:
            expected[(row["dataset"], budget)] += count(text(row["prompt"])) + shared >= budget
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("select dataset, budget_tokens, n_collapsed, counted_with from main.truncation_collapse").fetchall()
    assert {(d, b): n for d, b, n, _ in rows} == {k: expected[k] for k in {(d, b) for d, b, _, _ in rows}}
    assert {(d, b) for d, b, _, _ in rows} == {(d, b) for d in {k[0] for k in expected} for b in budgets}
    assert {c for *_, c in rows} == {"tokenizer: tokenizer.json"}
    assert 0 < sum(n for _, b, n, _ in rows if b == budgets[-1]) < sum(n for _, b, n, _ in rows if b == budgets[0])
