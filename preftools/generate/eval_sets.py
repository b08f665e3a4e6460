"""Stand-ins of the seven eval sets of examples/eval_sets.yml (docs/decontamination.md): TruthfulQA,
HumanEval, GSM8K, MT-Bench, AlpacaEval, IFEval and RewardBench, each in the layout, column names and
types of its Hub repo (its card's ``configs:`` where the real card has them), with the real row
counts times the scale (at least :data:`MIN_ITEMS` rows in the files an entry reads).

The texts look like their benchmark's (questions with a topic clause, math word problems, Python
signatures with a docstring, two-turn prompts, prompts with verifiable instructions) and a few
are short questions of fewer than 8 tokens ("What is the capital of Peru?", each with a name no
training text has). Every set draws from its own random stream (``rng_for(seed, "eval", name)``),
and the clause of every eval text is a run of sentences of a text bank of its own
(``stream="eval-textbank"``) that no other eval text uses; the templates around the clauses have
no run of 8 fixed tokens (but IFEval's instruction sentences and HumanEval's doctest lines, as
upstream). So no eval text shares an 8-gram with a training text by chance: the only matches are
the cases :mod:`.contamination` plants (which takes an item only when its planted text matches
no other eval text).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from preftools.generate.common import WORDS, TextBank, rng_for
from preftools.generate.extra_common import card
from preftools.generate.writer import COMPRESSION, remove_data_files

# in the order of examples/eval_sets.yml (the names of its entries)
EVAL_SETS = ("truthfulqa", "humaneval", "gsm8k", "mt_bench", "alpaca_eval", "ifeval", "rewardbench")
MIN_ITEMS = 5
BANK_STREAM = "eval-textbank"
STAND_IN = "A generated stand-in (preftools.generate) in the layout and types of the Hub dataset."


@dataclass(frozen=True)
class EvalSet:
    """One eval set's Hub repo: its files (repo path -> rows: a table, or JSON objects for a JSON
    file), the files its entry reads, and its eval texts."""

    name: str  # the entry's name in examples/eval_sets.yml
    hub_id: str
    card: str
    files: dict[str, pa.Table | list[dict]]
    entry_files: tuple[str, ...]
    items: list[list[str]]  # per eval item (the entry files' rows in path order): its texts, one per turn

    def rows(self) -> dict[str, int]:
        return {path: len(rows) for path, rows in self.files.items()}

    def write(self, out_dir: Path) -> None:
        """The card and the files (Parquet, JSON Lines, or one indented JSON array), old data files
        of the repo folder removed first."""
        repo = Path(out_dir) / self.hub_id
        repo.mkdir(parents=True, exist_ok=True)
        remove_data_files(repo)
        (repo / "README.md").write_text(self.card, encoding="utf-8")
        for path, rows in self.files.items():
            target = repo / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if path.endswith(".parquet"):
                pq.write_table(rows, target, compression=COMPRESSION)
            elif path.endswith(".jsonl"):
                target.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
            else:
                target.write_text(json.dumps(rows, ensure_ascii=False, indent=4) + "\n", encoding="utf-8")


def items_at_scale(real: int, scale: float) -> int:
    return max(MIN_ITEMS, int(round(real * scale)))


class SentenceRuns:
    """Runs of consecutive sentences of a bank, each handed out once."""

    def __init__(self, bank: TextBank):
        self.bank = bank
        self.next = 0

    def take(self, counts: np.ndarray) -> list[str]:
        counts = np.asarray(counts, np.int64)
        first = self.next + np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        self.next += int(counts.sum())
        return self.bank.runs(first, counts).to_pylist()


def _clause(sentences: str) -> str:
    """A bank text as a clause: lower case, without its final period."""
    return sentences.lower().rstrip(".")


def _pick(rng: np.random.Generator, options: tuple, n: int) -> list:
    return [options[k] for k in rng.integers(0, len(options), n)]


def _blocks(n: int, counts: tuple[int, ...]) -> np.ndarray:
    """Block index of each of ``n`` rows: blocks in order, sized as ``counts`` (largest remainder)."""
    share = np.array(counts) / sum(counts) * n
    sizes = np.floor(share).astype(np.int64)
    sizes[np.argsort(-(share - sizes), kind="stable")[: n - sizes.sum()]] += 1
    return np.repeat(np.arange(len(counts)), sizes)


def _short_questions(rng: np.random.Generator, templates: tuple[str, ...], names: tuple[str, ...], n: int,
                     share: float) -> dict[int, str]:
    """Short questions (fewer than 8 tokens, each a name no training text has) for ``share`` of
    ``n`` items (at least one, at most one per template and name), by item."""
    count = min(len(templates) * len(names), max(1, int(round(share * n))))
    rows = np.sort(rng.choice(n, count, replace=False))
    combos = rng.choice(len(templates) * len(names), count, replace=False)
    return {int(r): templates[c // len(names)].format(names[c % len(names)]) for r, c in zip(rows, combos)}


# ======================================================================================
# truthfulqa/truthful_qa
# ======================================================================================
TQA_TEMPLATES = (
    "What happens if you {}?", "Is it true that {}?", "Why do people believe that {}?",
    "What is the real reason that {}?", "Can you really say that {}?", "Where does the idea that {} come from?",
    "What do experts say about whether {}?", "Who first claimed that {}?",
)
TQA_SHORT = ("What is the capital of {}?", "What language is spoken in {}?", "Where is {} located?",
             "How big is {}?")
COUNTRIES = ("France", "Peru", "Kenya", "Norway", "Vietnam", "Chile", "Egypt", "Canada", "Iceland", "Portugal",
             "Mongolia", "Ghana", "Bolivia", "Finland", "Nepal", "Morocco", "Uruguay", "Latvia", "Jordan", "Zambia")
TQA_CATEGORIES = ("Misconceptions", "Law", "Health", "Sociology", "Economics", "Fiction", "Paranormal",
                  "Conspiracies", "Stereotypes", "History", "Superstitions", "Proverbs", "Nutrition", "Psychology",
                  "Language", "Weather", "Religion", "Education", "Finance", "Politics", "Science")
TARGETS = pa.struct([("choices", pa.list_(pa.string())), ("labels", pa.list_(pa.int32()))])
TQA_GENERATION = pa.schema([
    ("type", pa.string()), ("category", pa.string()), ("question", pa.string()), ("best_answer", pa.string()),
    ("correct_answers", pa.list_(pa.string())), ("incorrect_answers", pa.list_(pa.string())), ("source", pa.string()),
])
TQA_MULTIPLE_CHOICE = pa.schema([("question", pa.string()), ("mc1_targets", TARGETS), ("mc2_targets", TARGETS)])
TQA_FILE = "generation/validation-00000-of-00001.parquet"
TQA_MC_FILE = "multiple_choice/validation-00000-of-00001.parquet"


def _truthfulqa(rng, bank: TextBank, runs: SentenceRuns, scale: float, factor: float) -> EvalSet:
    n = items_at_scale(817, scale)
    short = _short_questions(rng, TQA_SHORT, COUNTRIES, n, 0.05)
    clauses = runs.take(np.ones(n))
    templates = _pick(rng, TQA_TEMPLATES, n)
    questions = [short.get(i) or templates[i].format(_clause(clauses[i])) for i in range(n)]
    answers = bank.sentences(rng, 8 * n, 1, 2, factor).to_pylist()
    n_correct, n_incorrect = rng.integers(1, 4, n), rng.integers(1, 5, n)
    no_comment = rng.random(n) < 0.3
    correct = [answers[8 * i: 8 * i + n_correct[i]] + ["I have no comment."] * int(no_comment[i]) for i in range(n)]
    incorrect = [answers[8 * i + 4: 8 * i + 4 + n_incorrect[i]] for i in range(n)]
    generation = pa.table({
        "type": np.where(rng.random(n) < 0.54, "Adversarial", "Non-Adversarial").tolist(),
        "category": _pick(rng, TQA_CATEGORIES, n),
        "question": questions,
        "best_answer": [c[0] for c in correct],
        "correct_answers": correct,
        "incorrect_answers": incorrect,
        "source": ["https://en.wikipedia.org/wiki/" + w.capitalize() for w in _pick(rng, tuple(WORDS), n)],
    }, schema=TQA_GENERATION)

    def targets(good: list[list[str]]) -> list[dict]:
        return [{"choices": g + bad, "labels": [1] * len(g) + [0] * len(bad)} for g, bad in zip(good, incorrect)]

    multiple_choice = pa.table({"question": questions, "mc1_targets": targets([[c[0]] for c in correct]),
                                "mc2_targets": targets(correct)}, schema=TQA_MULTIPLE_CHOICE)
    configs = [{"config_name": "generation", "data_files": [{"split": "validation", "path": TQA_FILE}]},
               {"config_name": "multiple_choice", "data_files": [{"split": "validation", "path": TQA_MC_FILE}]}]
    return EvalSet("truthfulqa", "truthfulqa/truthful_qa", card("TruthfulQA", "apache-2.0", STAND_IN, configs),
                   {TQA_FILE: generation, TQA_MC_FILE: multiple_choice}, (TQA_FILE,), [[q] for q in questions])


# ======================================================================================
# openai/openai_humaneval
# ======================================================================================
HE_VERBS = ("sort", "count", "filter", "parse", "find", "sum", "merge", "split", "reverse", "check", "rotate",
            "encode", "decode", "compress", "flatten", "group", "select", "match", "remove", "pad", "shift",
            "swap", "truncate", "collect")
HE_NOUNS = ("numbers", "words", "pairs", "digits", "vowels", "primes", "intervals", "brackets", "tokens",
            "strings", "elements", "values", "items", "keys", "rows", "columns", "paths", "nodes", "edges",
            "letters", "spaces", "groups", "bits", "factors", "divisors", "fractions", "triples", "prefixes",
            "suffixes", "palindromes", "anagrams", "squares", "cubes", "coins", "steps", "scores")
# (parameters, return type, doctest arguments, doctest result, body)
HE_SIGNATURES = (
    ("numbers: List[float], threshold: float", "bool", "[1.0, 2.0, 3.0], 0.5", "False",
     "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n"),
    ("string: str", "str", "'abc'", "'cba'", "    return string[::-1]\n"),
    ("n: int", "int", "5", "15", "    return sum(range(n + 1))\n"),
    ("values: List[int]", "List[int]", "[3, 1, 2]", "[1, 2, 3]", "    return sorted(values)\n"),
    ("a: int, b: int", "int", "12, 18", "6", "    while b:\n        a, b = b, a % b\n    return a\n"),
    ("text: str", "int", "'hello world'", "2", "    return len(text.split())\n"),
    ("strings: List[str], prefix: str", "List[str]", "['abc', 'bcd', 'array'], 'a'", "['abc', 'array']",
     "    return [s for s in strings if s.startswith(prefix)]\n"),
)
HE_SCHEMA = pa.schema([("task_id", pa.string()), ("prompt", pa.string()), ("canonical_solution", pa.string()),
                       ("test", pa.string()), ("entry_point", pa.string())])
HE_FILE = "openai_humaneval/test-00000-of-00001.parquet"


def _humaneval(rng, bank: TextBank, runs: SentenceRuns, scale: float, factor: float) -> EvalSet:
    n = items_at_scale(164, scale)
    docs = runs.take(rng.integers(1, 3, n))
    combos = len(HE_VERBS) * len(HE_NOUNS)
    order = rng.permutation(combos)
    signature = rng.integers(0, len(HE_SIGNATURES), n)
    rows = []
    for i in range(n):
        combo = order[i % combos]
        name = f"{HE_VERBS[combo // len(HE_NOUNS)]}_{HE_NOUNS[combo % len(HE_NOUNS)]}"
        name += f"_{i // combos + 1}" if i >= combos else ""
        params, returns, args, result, body = HE_SIGNATURES[signature[i]]
        imports = "from typing import List\n\n\n" if "List" in params + returns else ""
        prompt = (f'{imports}def {name}({params}) -> {returns}:\n    """ {docs[i]}\n    >>> {name}({args})\n'
                  f'    {result}\n    """\n')
        test = (f"\n\nMETADATA = {{\n    'author': 'jt',\n    'dataset': 'test'\n}}\n\n\ndef check(candidate):\n"
                f"    assert candidate({args}) == {result}\n")
        rows.append({"task_id": f"HumanEval/{i}", "prompt": prompt, "canonical_solution": body, "test": test,
                     "entry_point": name})
    configs = [{"config_name": "openai_humaneval",
                "data_files": [{"split": "test", "path": "openai_humaneval/test-*"}]}]
    return EvalSet("humaneval", "openai/openai_humaneval", card("OpenAI HumanEval", "mit", STAND_IN, configs),
                   {HE_FILE: pa.Table.from_pylist(rows, schema=HE_SCHEMA)}, (HE_FILE,), [[r["prompt"]] for r in rows])


# ======================================================================================
# openai/gsm8k
# ======================================================================================
NAMES = ("Natalia", "Weng", "Betty", "Julie", "James", "Albert", "Ken", "Alexis", "Tina", "Mark", "Randy", "Joy",
         "Tobias", "Carla", "Marie", "Greta", "Brandon", "Jasmine", "Rosa", "Darrell")
THINGS = ("apples", "pencils", "stickers", "cupcakes", "marbles", "cookies", "seashells", "crayons", "muffins",
          "tickets", "stamps", "balloons")
GSM_SCHEMA = pa.schema([("question", pa.string()), ("answer", pa.string())])
GSM_FILES = ("main/test-00000-of-00001.parquet", "main/train-00000-of-00001.parquet",
             "socratic/test-00000-of-00001.parquet", "socratic/train-00000-of-00001.parquet")


def _gsm8k_problem(kind: int, a: int, b: int, c: int, who: str, other: str, thing: str,
                   context: str) -> tuple[str, list[tuple[str, str]], int]:
    """A word problem of one of four shapes: its question, its steps (sub-question, worked line)
    and its answer."""
    if kind == 0:
        total, left = a + b, a + b - c
        question = (f"{who} has {a} {thing}. {context} {who} buys {b} more {thing} and gives {c} of them to "
                    f"{other}. How many {thing} does {who} have now?")
        steps = [(f"How many {thing} does {who} have after buying?",
                  f"{who} has {a} + {b} = <<{a}+{b}={total}>>{total} {thing} after buying."),
                 (f"How many {thing} are left after giving some away?",
                  f"After giving {c} away, {who} has {total} - {c} = <<{total}-{c}={left}>>{left} {thing}.")]
        return question, steps, left
    if kind == 1:
        pay, left = a * b, a * b - c
        question = (f"{who} earns ${a} an hour. {context} Yesterday, {who} worked {b} hours and spent ${c} on "
                    f"lunch. How much money does {who} have left from yesterday's work?")
        steps = [(f"How much did {who} earn?", f"{who} earned {a} * {b} = $<<{a}*{b}={pay}>>{pay}."),
                 ("How much is left after lunch?", f"{who} has {pay} - {c} = $<<{pay}-{c}={left}>>{left} left.")]
        return question, steps, left
    if kind == 2:
        filled, left = a * b, a * b - c
        question = (f"A box holds {a} {thing}. {context} {who} fills {b} boxes and then sells {c} {thing} to "
                    f"{other}. How many {thing} are left?")
        steps = [(f"How many {thing} are in the boxes?",
                  f"The boxes hold {a} * {b} = <<{a}*{b}={filled}>>{filled} {thing}."),
                 (f"How many {thing} are left?", f"{filled} - {c} = <<{filled}-{c}={left}>>{left} {thing} are left.")]
        return question, steps, left
    pages, read = 3 * a + b + c, 3 * a
    question = (f"{who} reads {a} pages on Monday. On Tuesday, {who} reads twice as many pages. {context} If the "
                f"book has {pages} pages, how many pages remain?")
    steps = [("How many pages did they read in two days?",
              f"{who} read {a} + {a} * 2 = <<{a}+{a}*2={read}>>{read} pages."),
             ("How many pages are left?", f"{pages} - {read} = <<{pages}-{read}={b + c}>>{b + c} pages are left.")]
    return question, steps, b + c


def _gsm8k_rows(rng, contexts: list[str]) -> tuple[list[dict], list[dict]]:
    """Main and socratic rows of problems with these context sentences."""
    n = len(contexts)
    kind = rng.integers(0, 4, n)
    a, b = rng.integers(2, 40, n), rng.integers(2, 12, n)
    c = np.maximum(1, (rng.random(n) * a).astype(np.int64))
    who, other, thing = _pick(rng, NAMES, n), _pick(rng, NAMES, n), _pick(rng, THINGS, n)
    main, socratic = [], []
    for i in range(n):
        question, steps, answer = _gsm8k_problem(int(kind[i]), int(a[i]), int(b[i]), int(c[i]), who[i], other[i],
                                                 thing[i], contexts[i])
        main.append({"question": question, "answer": "\n".join(line for _, line in steps) + f"\n#### {answer}"})
        socratic.append({"question": question,
                         "answer": "\n".join(f"{q} ** {line}" for q, line in steps) + f"\n#### {answer}"})
    return main, socratic


def _gsm8k(rng, bank: TextBank, runs: SentenceRuns, scale: float, factor: float) -> EvalSet:
    n, n_train = items_at_scale(1319, scale), items_at_scale(7473, scale)
    test, test_socratic = _gsm8k_rows(rng, runs.take(np.ones(n)))
    train, train_socratic = _gsm8k_rows(rng, bank.sentences(rng, n_train, 1, 1).to_pylist())
    files = {path: pa.Table.from_pylist(rows, schema=GSM_SCHEMA)
             for path, rows in zip(GSM_FILES, (test, train, test_socratic, train_socratic))}
    configs = [{"config_name": config, "data_files": [{"split": "train", "path": f"{config}/train-*"},
                                                      {"split": "test", "path": f"{config}/test-*"}]}
               for config in ("main", "socratic")]
    return EvalSet("gsm8k", "openai/gsm8k", card("GSM8K", "mit", STAND_IN, configs), files, (GSM_FILES[0],),
                   [[r["question"]] for r in test])


# ======================================================================================
# HuggingFaceH4/mt_bench_prompts
# ======================================================================================
MT_CATEGORIES = ("writing", "roleplay", "reasoning", "math", "coding", "extraction", "stem", "humanities")
# (no run of 8 fixed tokens in a template: two items share no 8-gram, see the module docstring)
MT_FIRST = {
    "writing": "Write a travel blog post where {c}.",
    "roleplay": "As a tour guide, describe how {c}.",
    "reasoning": "Imagine you are in a race and {c}. What is your position now?",
    "math": "Given that {c}, what is the area of a {a} by {b} rectangle?",
    "coding": "Write a Python program that {c}.",
    "extraction": "Extract the key facts as JSON: {c}.",
    "stem": "In quantum physics, explain simply why {c}.",
    "humanities": "Discuss how {c}, with two historical examples.",
}
MT_SECOND = ("Now rewrite it so that {}.", "Explain it again, assuming that {}.", "Can you revise it so that {}?",
             "Now do the same, but {}.")
MT_SCHEMA = pa.schema([("prompt", pa.list_(pa.string())), ("category", pa.string()),
                       ("reference", pa.list_(pa.string())), ("prompt_id", pa.int64())])
MT_FILE = "data/train-00000-of-00001.parquet"


def _mt_bench(rng, bank: TextBank, runs: SentenceRuns, scale: float, factor: float) -> EvalSet:
    n = items_at_scale(80, scale)
    category = [MT_CATEGORIES[k] for k in _blocks(n, (1,) * len(MT_CATEGORIES))]
    first, second = runs.take(np.ones(n)), runs.take(np.ones(n))
    follow_ups = _pick(rng, MT_SECOND, n)
    sides = rng.integers(2, 30, (n, 2))
    references = bank.sentences(rng, 2 * n, 1, 3, factor).to_pylist()
    rows = [{"prompt": [MT_FIRST[category[i]].format(c=_clause(first[i]), a=sides[i, 0], b=sides[i, 1]),
                        follow_ups[i].format(_clause(second[i]))],
             "category": category[i],
             "reference": references[2 * i: 2 * i + 2] if category[i] in ("reasoning", "math", "coding") else [],
             "prompt_id": 81 + i} for i in range(n)]
    configs = [{"config_name": "default", "data_files": [{"split": "train", "path": "data/train-*"}]}]
    return EvalSet("mt_bench", "HuggingFaceH4/mt_bench_prompts",
                   card("MT Bench prompts", "apache-2.0", STAND_IN, configs),
                   {MT_FILE: pa.Table.from_pylist(rows, schema=MT_SCHEMA)}, (MT_FILE,), [r["prompt"] for r in rows])


# ======================================================================================
# tatsu-lab/alpaca_eval
# ======================================================================================
ALPACA_TEMPLATES = ("Name some famous people who {}.", "List some ways in which {}.", "How can I make sure that {}?",
                    "Write a short poem about how {}.", "Explain in simple terms why {}.",
                    "I want to understand how {}. Where should I begin?", "Write a friendly email explaining that {}.")
ALPACA_SHORT = ("How do I cook {}?", "What is {} made of?", "Where does {} come from?")
DISHES = ("tiramisu", "paella", "ramen", "goulash", "lasagna", "falafel", "risotto", "baklava", "ceviche", "pierogi",
          "moussaka", "biryani", "gazpacho", "pavlova", "kimchi", "hummus")
ALPACA_DATASETS = ("helpful_base", "koala", "oasst", "selfinstruct", "vicuna")
ALPACA_DATASET_ROWS = (129, 156, 188, 252, 80)
ALPACA_FILE = "alpaca_eval.json"


def _alpaca_eval(rng, bank: TextBank, runs: SentenceRuns, scale: float, factor: float) -> EvalSet:
    n = items_at_scale(805, scale)
    short = _short_questions(rng, ALPACA_SHORT, DISHES, n, 0.04)
    clauses = runs.take(np.ones(n))
    templates = _pick(rng, ALPACA_TEMPLATES, n)
    outputs = bank.long_text(rng, n, 3, 8, factor).to_pylist()
    dataset = _blocks(n, ALPACA_DATASET_ROWS)
    rows = [{"instruction": short.get(i) or templates[i].format(_clause(clauses[i])), "output": outputs[i],
             "generator": "text_davinci_003", "dataset": ALPACA_DATASETS[dataset[i]]} for i in range(n)]
    configs = [{"config_name": "alpaca_eval", "data_files": [{"split": "eval", "path": ALPACA_FILE}]}]
    return EvalSet("alpaca_eval", "tatsu-lab/alpaca_eval", card("AlpacaEval", "cc-by-nc-4.0", STAND_IN, configs),
                   {ALPACA_FILE: rows}, (ALPACA_FILE,), [[r["instruction"]] for r in rows])


# ======================================================================================
# google/IFEval
# ======================================================================================
IFEVAL_TASKS = ("Write an essay about how {}.", "Write a short blog post about a day when {}.",
                "Write a letter to a friend explaining that {}.", "Write a poem about the fact that {}.",
                "Write a product description for a tool that {}.", "Write a story in which {}.")
KEYWORDS = ("lantern", "compass", "harvest", "orbit", "canvas", "melody", "summit", "harbor")


def _ifeval_instruction(rng) -> tuple[str, dict, str]:
    """One verifiable instruction: its id, kwargs and sentence."""
    kind = int(rng.integers(0, 7))
    number = int(rng.integers(2, 6))
    if kind == 0:
        return "punctuation:no_comma", {}, "Do not use any commas in your response."
    if kind == 1:
        words = 50 * number
        return ("length_constraints:number_words", {"relation": "at least", "num_words": words},
                f"Answer with at least {words} words.")
    if kind == 2:
        return ("detectable_format:number_bullet_lists", {"num_bullets": number},
                f"Your answer must contain exactly {number} bullet points in markdown format.")
    if kind == 3:
        return ("change_case:english_lowercase", {},
                "Your entire response should be in English, and in all lowercase letters.")
    if kind == 4:
        words = [KEYWORDS[k] for k in rng.choice(len(KEYWORDS), 2, replace=False)]
        return ("keywords:existence", {"keywords": words},
                f"Include the keywords {words[0]} and {words[1]} in the response.")
    if kind == 5:
        return ("detectable_format:title", {},
                "Your answer must contain a title, wrapped in double angular brackets, such as <<poem of joy>>.")
    return ("detectable_format:number_highlighted_sections", {"num_highlights": number},
            f"Highlight at least {number} sections in your answer with markdown, i.e. *highlighted section*.")


def _ifeval(rng, bank: TextBank, runs: SentenceRuns, scale: float, factor: float) -> EvalSet:
    n = items_at_scale(541, scale)
    clauses = runs.take(np.ones(n))
    tasks = _pick(rng, IFEVAL_TASKS, n)
    keys = 1000 + np.sort(rng.choice(5 * n, n, replace=False))
    n_instructions = rng.integers(1, 4, n)
    rows = []
    for i in range(n):
        instructions = {}
        for _ in range(n_instructions[i]):
            instruction_id, kwargs, sentence = _ifeval_instruction(rng)
            instructions.setdefault(instruction_id, (kwargs, sentence))  # one of each kind
        prompt = " ".join([tasks[i].format(_clause(clauses[i]))] + [s for _, s in instructions.values()])
        rows.append({"key": int(keys[i]), "prompt": prompt, "instruction_id_list": list(instructions),
                     "kwargs": [k for k, _ in instructions.values()]})
    # as upstream: no `configs:`; the Hub's default patterns read the file at the root as split train
    return EvalSet("ifeval", "google/IFEval", card("IFEval", "apache-2.0", STAND_IN), {"ifeval_input_data.jsonl": rows},
                   ("ifeval_input_data.jsonl",), [[r["prompt"]] for r in rows])


# ======================================================================================
# allenai/reward-bench
# ======================================================================================
# the subsets of the filtered split, their real row counts, and the template of their prompts
RB_SUBSETS = (
    ("alpacaeval-easy", 100), ("alpacaeval-length", 95), ("alpacaeval-hard", 95), ("mt-bench-easy", 28),
    ("mt-bench-med", 40), ("mt-bench-hard", 37), ("refusals-dangerous", 100), ("refusals-offensive", 100),
    ("llmbar-natural", 100), ("llmbar-adver-neighbor", 134), ("llmbar-adver-GPTInst", 92),
    ("llmbar-adver-GPTOut", 47), ("llmbar-adver-manual", 46), ("xstest-should-refuse", 154),
    ("xstest-should-respond", 250), ("donotanswer", 136), ("hep-cpp", 164), ("hep-go", 164), ("hep-java", 164),
    ("hep-js", 164), ("hep-python", 164), ("hep-rust", 164), ("math-prm", 447),
)
RB_TEMPLATES = {
    "alpacaeval": "How can I make sure that {}?",
    "mt-bench": "Describe a situation in which {}, and what you would do.",
    "refusals": "Tell me how to secretly arrange that {}.",
    "llmbar": "Rewrite this sentence more formally: {}.",
    "xstest": "How do I kill a process when {}?",
    "donotanswer": "Why is it that {}?",
    "hep": "Write a function that checks whether {}.",
    "math": "Find the number of ways in which {}. Express your answer as a whole number.",
}
RB_MODELS = ("GPT4-Turbo", "gpt-3.5-turbo-0125", "Llama-2-70b-chat-hf", "tulu-2-dpo-70b", "Mixtral-8x7B-Instruct-v0.1",
             "zephyr-7b-beta", "human", "GPT-4", "claude-2", "dolphin-2.0-mistral-7b")
RB_SCHEMA = pa.schema([("prompt", pa.string()), ("chosen", pa.string()), ("chosen_model", pa.string()),
                       ("rejected", pa.string()), ("rejected_model", pa.string()), ("subset", pa.string()),
                       ("id", pa.int64())])
RB_FILE = "data/filtered-00000-of-00001.parquet"


def _rewardbench(rng, bank: TextBank, runs: SentenceRuns, scale: float, factor: float) -> EvalSet:
    n = items_at_scale(2985, scale)
    subset = [RB_SUBSETS[k][0] for k in _blocks(n, tuple(count for _, count in RB_SUBSETS))]
    clauses = runs.take(rng.integers(1, 3, n))
    responses = bank.long_text(rng, 2 * n, 2, 6, factor).to_pylist()
    models = _pick(rng, RB_MODELS, 2 * n)
    ids = np.sort(rng.choice(2 * n + 100, n, replace=False))
    template = [RB_TEMPLATES[next(k for k in RB_TEMPLATES if s.startswith(k))] for s in subset]
    rows = [{"prompt": template[i].format(_clause(clauses[i])),
             "chosen": responses[2 * i], "chosen_model": models[2 * i], "rejected": responses[2 * i + 1],
             "rejected_model": models[2 * i + 1], "subset": subset[i], "id": int(ids[i])} for i in range(n)]
    configs = [{"config_name": "default", "data_files": [{"split": "filtered", "path": "data/filtered-*"}]}]
    return EvalSet("rewardbench", "allenai/reward-bench", card("RewardBench", "odc-by", STAND_IN, configs),
                   {RB_FILE: pa.Table.from_pylist(rows, schema=RB_SCHEMA)}, (RB_FILE,), [[r["prompt"]] for r in rows])


# ======================================================================================
BUILDERS = {"truthfulqa": _truthfulqa, "humaneval": _humaneval, "gsm8k": _gsm8k, "mt_bench": _mt_bench,
            "alpaca_eval": _alpaca_eval, "ifeval": _ifeval, "rewardbench": _rewardbench}
REAL_ITEMS = {"truthfulqa": 817, "humaneval": 164, "gsm8k": 1319, "mt_bench": 80, "alpaca_eval": 805, "ifeval": 541,
              "rewardbench": 2985}
TURNS = {"mt_bench": 2}


def build_eval_sets(seed: int, scale: float, text_factor: float) -> dict[str, EvalSet]:
    """Every eval set's stand-in, in memory (small: ~7,000 items at scale 1), in :data:`EVAL_SETS` order."""
    texts = sum(items_at_scale(n, scale) * TURNS.get(name, 1) for name, n in REAL_ITEMS.items())
    bank = TextBank(seed, n_sentences=2 * texts + 2000, stream=BANK_STREAM)  # eval texts take 1-2 sentences each
    runs = SentenceRuns(bank)
    return {name: BUILDERS[name](rng_for(seed, "eval", name), bank, runs, scale, text_factor) for name in EVAL_SETS}


def write_eval_sets(out_dir: Path, eval_sets: dict[str, EvalSet], wanted: set[str], manifest: dict) -> None:
    """Write the wanted stand-ins; the manifest's ``eval_sets`` notes each one's files, rows, the files
    its entry reads and its number of items."""
    for name in EVAL_SETS:
        if name not in wanted:
            continue
        eval_set = eval_sets[name]
        eval_set.write(out_dir)
        manifest.setdefault("eval_sets", {})[name] = {
            "hub_id": eval_set.hub_id,
            "files": [PurePosixPath(eval_set.hub_id, p).as_posix() for p in eval_set.files],
            "rows": eval_set.rows(),
            "entry_files": list(eval_set.entry_files),
            "items": len(eval_set.items),
        }
