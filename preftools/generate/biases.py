"""Known biases planted in a stand-in of pairs (argilla/ultrafeedback-binarized-preferences-cleaned),
so that pair_bias_profile, truncation_collapse and the length-balanced mixture are tested on data
that has each case:

- a chosen-longer slice: in the rows of source :data:`LONGER_SOURCE`, most chosen responses get
  more sentences (``longer_chosen``);
- each format pattern on the chosen side and on the rejected side, and a near miss of each (text
  that looks like the pattern but is not one by its definition);
- pairs that collapse at each token budget of the default ``truncation_budgets`` (chosen and
  rejected share their first ``4 x budget - len(prompt) + 10`` characters) and pairs that just do
  not (``- 10``).

The rows come from their own random stream, so the rest of the stand-in is the same as without
them; the manifest lists them under ``bias_planted`` ([file, row] per kind)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from preftools.generate.common import concat
from preftools.generate.extra_common import replace_rows

LONGER_SOURCE = "sharegpt"
LONGER_SHARE = 0.8  # of that source's rows, the share whose chosen response is lengthened
LONGER_TEXT = " " + " ".join(["More detail on this follows, with an example and a caveat."] * 8)
DEFAULT_BUDGETS = (512, 1024, 2048, 4096)  # the default of the dbt var truncation_budgets
CHARS_PER_TOKEN = 4

# One snippet per pattern, holding that pattern and no other.
PATTERNS = {
    "list": "\n\n1. First step\n2. Second step",
    "bold": " This is **important** to know.",
    "header": "\n\n## Summary\nThe answer above.",
    "code": "\n\n```python\nprint('hello')\n```",
    "link": " More at https://example.org/guide.",
    "emoji": " Hope this helps \U0001F389",
}
# One snippet per pattern that looks like it but is none of the patterns.
NEAR_MISSES = {
    "list": "\n1.5 million people\n-not an item\n*stressed*",
    "bold": " 2 ** 3 is 8\n** note",
    "header": "\n#hashtag\n####### seven",
    "code": " use `` or ` quotes",
    "link": " ftp://example.org or http:/broken",
    "emoji": " a star \u2b50 and \u00a9",
}


def plan_kinds() -> list[str]:
    """The planted kinds of one chunk, one row each."""
    kinds = []
    for name in PATTERNS:
        kinds += [f"{name}_chosen", f"{name}_chosen", f"{name}_rejected", f"{name}_near_miss"]
    for budget in DEFAULT_BUDGETS:
        kinds += [f"collapse_{budget}", f"no_collapse_{budget}"]
    return kinds


def _filler(text: str, length: int) -> str:
    """``text`` repeated and cut to ``length`` characters."""
    if length <= 0:
        return ""
    return (text * (length // max(len(text), 1) + 1))[:length]


def plant(rng: np.random.Generator, table: pa.Table, free: np.ndarray) -> tuple[pa.Table, dict[str, list[int]]]:
    """``table`` (a chunk of the stand-in: `source`, `prompt`, `chosen` and `rejected` as
    [user, assistant] lists) with the biases planted in rows where ``free`` (bool per row) is true;
    and the chunk positions of each kind."""
    rows: dict[str, list[int]] = {}
    n = table.num_rows
    # the chosen-longer slice
    source = table.column("source").to_numpy(zero_copy_only=False)
    longer = (source == LONGER_SOURCE) & free & (rng.random(n) < LONGER_SHARE)
    rows["longer_chosen"] = [int(i) for i in np.flatnonzero(longer)]
    table = _lengthen_chosen(table, longer)
    # one row per kind, among the free rows not lengthened
    candidates = np.flatnonzero(free & ~longer)
    kinds = plan_kinds()
    picked = rng.permutation(candidates)[:len(kinds)]
    changes: dict[int, dict] = {}
    for kind, position in zip(kinds, picked):
        position = int(position)
        rows.setdefault(kind, []).append(position)
        row = table.slice(position, 1).to_pylist()[0]
        chosen, rejected = row["chosen"][-1], row["rejected"][-1]
        name, _, side = kind.rpartition("_")
        if kind.endswith("_near_miss"):
            rejected["content"] += NEAR_MISSES[kind.removesuffix("_near_miss")]
        elif side in ("chosen", "rejected") and name in PATTERNS:
            (chosen if side == "chosen" else rejected)["content"] += PATTERNS[name]
        else:  # collapse_B / no_collapse_B: a shared prefix of d characters, then different texts
            budget = int(side)
            shift = 10 if kind.startswith("collapse_") else -10
            shared = _filler(chosen["content"] + " ", CHARS_PER_TOKEN * budget - len(row["prompt"]) + shift)
            chosen["content"] = shared + "Yes: " + chosen["content"]
            rejected["content"] = shared + "No: " + rejected["content"]
        changes[position] = row
    return replace_rows(table, changes), rows


def _lengthen_chosen(table: pa.Table, longer: np.ndarray) -> pa.Table:
    """``table`` with :data:`LONGER_TEXT` appended to the last chosen message of the rows where ``longer``."""
    chosen = table.column("chosen").combine_chunks()
    offsets = chosen.offsets.to_numpy()
    messages = chosen.values
    last = np.zeros(len(messages), bool)
    ends = offsets[1:][longer]
    last[ends[ends > offsets[:-1][longer]] - 1] = True  # rows with at least one message
    content = messages.field("content")
    content = pc.if_else(pa.array(last), concat(content, LONGER_TEXT), content)
    messages = pa.StructArray.from_arrays([content if f.name == "content" else messages.field(f.name)
                                           for f in messages.type], fields=list(messages.type))
    lengthened = pa.ListArray.from_arrays(chosen.offsets, messages, type=chosen.type)
    return table.set_column(table.schema.get_field_index("chosen"), "chosen", lengthened)
