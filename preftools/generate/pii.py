"""Personal data and secrets planted in the generated pairs, with near misses (the PII/secret scan).

The rule, as the warehouse applies it to every text of ``preference_pairs`` (a prompt's turns, a
response's messages, each joined with "\\n"), is the seeds' (seeds/pii_patterns.csv,
seeds/pii_reserved_networks.csv, read by :func:`preftools.outputs.pii.load_rule`, as the export
reads them): a finding is a non-overlapping match, left to right, of a kind's pattern, an
``ip_address`` only when it is a public address. :func:`findings` applies it to a text.

:func:`plan_pii` writes every case: one row of a pair, one side of it (the prompt, the chosen or
the rejected response) holding a value of a kind, in code (a fenced snippet: a Python assignment,
a config file, a shell export, a PEM block) or in prose (a sentence), between sentences of random
words of the text bank's vocabulary; the row's other texts are random words only. Of each kind,
``per_kind`` values the rule reports (random but of the kind's format; e-mail addresses at the
reserved example domains) and as many near misses (at least one of each of :data:`NEAR_MISSES`):
a key one character short or long, a token with a wrong prefix, ``sk-learn``, a private, a
documentation or another reserved address, an octet above 255, an address without a dot after
the @, a public key's PEM header. A case is kept only when the rule finds in its row exactly its
value, of its kind, on its side (nothing at all, for a near miss), so the verdict the manifest
gives (:func:`verdict`) is the rule's.

The cases go to the rows of the registry's preference stand-ins (:data:`.near_duplicates.TARGETS`,
where the side is the one recorded), and those in the prompt in code also to the instructions of
coseal/CodeUltraFeedback (the prompt of every pair the warehouse makes of the row). The
generators (:mod:`.extra_pairs`, :mod:`.code_ultrafeedback`) put each case in a row free of any
other planted case or quirk that forms a pair, and tell the plan where (:meth:`PiiPlan.place`);
:func:`record` lists the placed cases in the manifest under ``pii``.
"""

from __future__ import annotations

import ipaddress
import string
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from preftools.generate.common import WORDS, n_planted, rng_for
from preftools.generate.near_duplicates import ARGILLA, H4, RLHFLOW, TARGETS, draft
from preftools.outputs.pii import IP_KIND, load_rule

# ======================================================================================
# the rule
# ======================================================================================
def findings(text: str) -> list[tuple[str, str]]:
    """(kind, matched text) of every finding of the rule in ``text``, kind by kind, left to right."""
    rule = load_rule()
    return [(p.kind, m.group()) for p in rule.patterns for m in p.regex.finditer(text)
            if p.kind != IP_KIND or rule.is_public_ip(m.group())]


def verdict(text: str, value: str) -> str | None:
    """The kind of the rule's finding in ``text`` that is ``value`` (None when there is none)."""
    return next((kind for kind, found in findings(text) if found == value), None)


# ======================================================================================
# values
# ======================================================================================
UPPER_DIGITS = string.ascii_uppercase + string.digits
LETTERS = string.ascii_letters
ALNUM = LETTERS + string.digits
BASE64 = ALNUM + "+/"
EMAIL_DOMAINS = ("example.com", "example.org", "example.net", "mail.example.com")
KEY_TYPES = ("RSA ", "EC ", "DSA ", "OPENSSH ", "ENCRYPTED ", "")


def _pick(rng: np.random.Generator, options):
    return options[int(rng.integers(0, len(options)))]


def _chars(rng: np.random.Generator, alphabet: str, n: int) -> str:
    return "".join(alphabet[i] for i in rng.integers(0, len(alphabet), n))


def _local_part(rng: np.random.Generator) -> str:
    return f"{_pick(rng, WORDS)}.{_pick(rng, WORDS)}{int(rng.integers(10, 100))}"


def _octet(rng: np.random.Generator) -> int:
    return int(rng.integers(0, 256))


def _public_address(rng: np.random.Generator) -> str:
    while True:
        octets = [int(rng.integers(1, 224)), _octet(rng), _octet(rng), int(rng.integers(1, 255))]
        address = ".".join(str(o) for o in octets)
        if load_rule().is_public_ip(address):
            return address


def _octet_over_255(rng: np.random.Generator) -> str:
    octets = _public_address(rng).split(".")
    octets[int(rng.integers(0, 4))] = str(int(rng.integers(256, 1000)))
    return ".".join(octets)


def _reserved_address(rng: np.random.Generator, networks: tuple[str, ...]) -> str:
    network = ipaddress.IPv4Network(_pick(rng, networks))
    return str(network[int(rng.integers(1, network.num_addresses - 1))])


def _aws(length: int) -> Callable[[np.random.Generator], str]:
    return lambda rng: _pick(rng, ("AKIA", "ASIA")) + _chars(rng, UPPER_DIGITS, length)


def _github(letters: str, length: int) -> Callable[[np.random.Generator], str]:
    return lambda rng: f"gh{_pick(rng, letters)}_" + _chars(rng, ALNUM, length)


def _huggingface(length: int, digit: bool = False) -> Callable[[np.random.Generator], str]:
    def value(rng: np.random.Generator) -> str:
        token = _chars(rng, LETTERS, length)
        if digit:
            at = int(rng.integers(1, length - 1))
            token = token[:at] + _pick(rng, string.digits) + token[at + 1:]
        return "hf_" + token
    return value


def _slack(letters: str, length: int | None) -> Callable[[np.random.Generator], str]:
    def value(rng: np.random.Generator) -> str:
        prefix = f"xox{_pick(rng, letters)}-"
        if length is not None:
            return prefix + _chars(rng, ALNUM, length)
        return prefix + "-".join((_chars(rng, string.digits, int(rng.integers(10, 13))),
                                  _chars(rng, string.digits, int(rng.integers(10, 14))), _chars(rng, ALNUM, 24)))
    return value


def _private_key_header(rng: np.random.Generator) -> str:
    return f"-----BEGIN {_pick(rng, KEY_TYPES)}PRIVATE KEY-----"


# per kind: the values the rule reports (MATCH) and its near misses, each a function of a random stream
MATCH = "match"
VALUES: dict[str, dict[str, Callable[[np.random.Generator], str]]] = {
    "email": {
        MATCH: lambda rng: f"{_local_part(rng)}@{_pick(rng, EMAIL_DOMAINS)}",
        "no_dot_after_at": lambda rng: f"{_local_part(rng)}@{_pick(rng, ('localhost', 'intranet', 'mailhost'))}",
        "one_letter_tld": lambda rng: f"{_local_part(rng)}@example.{_pick(rng, string.ascii_lowercase)}",
    },
    "ip_address": {
        MATCH: _public_address,
        "private": lambda rng: _reserved_address(rng, ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")),
        "documentation": lambda rng: _reserved_address(rng, ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")),
        "reserved": lambda rng: _reserved_address(rng, ("127.0.0.0/8", "169.254.0.0/16", "100.64.0.0/10",
                                                        "224.0.0.0/3")),
        "octet_over_255": _octet_over_255,
    },
    "aws_access_key_id": {MATCH: _aws(16), "one_short": _aws(15), "one_long": _aws(17)},
    "github_token": {MATCH: _github("pousr", 36), "one_short": _github("pousr", 35),
                     "wrong_prefix": _github("axz", 36)},
    "openai_api_key": {
        MATCH: lambda rng: _pick(rng, ("sk-", "sk-proj-")) + _chars(rng, ALNUM, int(rng.integers(32, 49))),
        "sk_learn": lambda rng: "sk-learn",
        "one_short": lambda rng: "sk-" + _chars(rng, ALNUM, 31),
    },
    "huggingface_token": {MATCH: _huggingface(34), "one_short": _huggingface(33),
                          "digit_inside": _huggingface(34, digit=True)},
    "slack_token": {MATCH: _slack("baprs", None), "too_short": _slack("baprs", 9),
                    "wrong_prefix": _slack("qwz", None)},
    "google_api_key": {
        MATCH: lambda rng: "AIza" + _chars(rng, ALNUM + "_-", 35),
        "one_short": lambda rng: "AIza" + _chars(rng, ALNUM + "_-", 34),
    },
    "private_key": {
        MATCH: _private_key_header,
        "public_key": lambda rng: _pick(rng, ("-----BEGIN PUBLIC KEY-----", "-----BEGIN RSA PUBLIC KEY-----",
                                              "-----BEGIN CERTIFICATE-----")),
        "one_short": lambda rng: _private_key_header(rng)[:-1],
    },
}
NEAR_MISSES = {kind: tuple(v for v in values if v != MATCH) for kind, values in VALUES.items()}

# ======================================================================================
# texts
# ======================================================================================
# where a value is planted: "{v}" the value; in a PEM block "{body}" its base64 lines, "{end}" its END line
CODE = {
    "email": ('```python\nSUPPORT_EMAIL = "{v}"\nsend_report(to=SUPPORT_EMAIL)\n```',
              "```yaml\nalerts:\n  notify: {v}\n  level: warning\n```"),
    "ip_address": ('```python\nHOST = "{v}"\nPORT = 8080\nsock.connect((HOST, PORT))\n```',
                   "```\nserver {\n    listen 80;\n    location / { proxy_pass http://{v}:8000; }\n}\n```"),
    "aws_access_key_id": ('```python\nimport boto3\n\nclient = boto3.client("s3", aws_access_key_id="{v}",\n'
                          '                      aws_secret_access_key=secret)\n```',
                          "```ini\n[default]\naws_access_key_id = {v}\nregion = us-east-1\n```"),
    "github_token": ('```python\nheaders = {"Authorization": "token {v}"}\n'
                     'response = requests.get(url, headers=headers)\n```',
                     "```bash\nexport GITHUB_TOKEN={v}\ngh repo list\n```"),
    "openai_api_key": ('```python\nfrom openai import OpenAI\n\nclient = OpenAI(api_key="{v}")\n```',
                       "```bash\nexport OPENAI_API_KEY={v}\npython app.py\n```"),
    "huggingface_token": ('```python\nfrom huggingface_hub import login\n\nlogin(token="{v}")\n```',
                          "```bash\nexport HF_TOKEN={v}\nhuggingface-cli whoami\n```"),
    "slack_token": ('```python\nfrom slack_sdk import WebClient\n\nclient = WebClient(token="{v}")\n```',
                    '```bash\ncurl -H "Authorization: Bearer {v}" https://slack.com/api/auth.test\n```'),
    "google_api_key": ('```python\nGOOGLE_API_KEY = "{v}"\nurl = BASE_URL + "?key=" + GOOGLE_API_KEY\n```',
                       '```javascript\nconst apiKey = "{v}";\nloadMap(apiKey);\n```'),
    "private_key": ("```\n{v}\n{body}\n{end}\n```", '```python\nKEY = """{v}\n{body}\n{end}"""\n```'),
}
PROSE = {
    "email": ("You can reach me at {v} if anything in the report is unclear.",
              "Please send the final version to {v} before the review."),
    "ip_address": ("The server at {v} stopped answering after the last update.",
                   "Our logs show many requests from {v} during the night."),
    "aws_access_key_id": ("My access key id is {v} and the upload still fails.",
                          "I rotated the key {v} last week, could that be the cause?"),
    "github_token": ("The token {v} worked yesterday but now every push is refused.",
                     "I added {v} to the secrets of the repository."),
    "openai_api_key": ("I set my key to {v} and still get an authentication error.",
                       "The script reads {v} from the environment."),
    "huggingface_token": ("I logged in with {v} but the download is still refused.",
                          "Our notebook uses the token {v} for the private model."),
    "slack_token": ("The bot uses {v} and the messages never arrive.",
                    "After I pasted {v} into the settings the app stopped posting."),
    "google_api_key": ("The map loads with the key {v} only on my laptop.",
                       "Requests signed with {v} return a quota error."),
    "private_key": ("The file starts with {v} and the server still rejects it.",
                    "I copied everything after {v} into the deploy settings."),
}
SIDES = ("prompt", "chosen", "rejected")
# (side, context) of the i-th case of the kind at position `offset` of the rule's kinds: COMBOS[(i + offset) % 6];
# two cases in a row differ in both
COMBOS = (("prompt", "code"), ("chosen", "prose"), ("rejected", "code"), ("prompt", "prose"), ("chosen", "code"),
          ("rejected", "prose"))
CODE_ULTRAFEEDBACK = "code_ultrafeedback"
# where the cases of a (side, context) go, in turn: a prompt in code also to coseal's instructions
ROUTES = {("prompt", "code"): (CODE_ULTRAFEEDBACK, H4, ARGILLA, RLHFLOW)}
RATE = 0.0005  # values the rule reports, of each kind, per row of H4's train_prefs (at least 2)
ATTEMPTS = 20  # draws of one case before giving up on it


def cases_per_kind(h4_rows: int) -> int:
    """Values of each kind the rule reports, for a stand-in of H4 with ``h4_rows`` train_prefs rows
    (31 at scale 1.0, 2 at 0.01); as many near misses (at least one of each)."""
    return n_planted(h4_rows, RATE, 2)


def _snippet(rng: np.random.Generator, kind: str, context: str, value: str) -> str:
    template = _pick(rng, (CODE if context == "code" else PROSE)[kind])
    body = "\n".join(_chars(rng, BASE64, 64) for _ in range(int(rng.integers(3, 6))))
    end = value.replace("-----BEGIN ", "-----END ", 1)
    return template.replace("{body}", body).replace("{end}", end).replace("{v}", value)


def _texts(rng: np.random.Generator, side: str, context: str, snippet: str) -> dict[str, str]:
    """The row's prompt, chosen and rejected: random words, the snippet amid them on ``side``."""
    def words(lo: int, hi: int) -> str:
        return draft(rng, int(rng.integers(lo, hi + 1))).text()

    texts = {s: words(20, 40) for s in SIDES}
    between = "\n\n" if context == "code" else " "
    texts[side] = words(8, 20) + between + snippet + between + words(8, 20)
    return texts


# ======================================================================================
# the plan
# ======================================================================================
@dataclass(frozen=True)
class Case:
    kind: str  # the kind the value is, or imitates
    variant: str  # MATCH, or the near miss's name (NEAR_MISSES)
    side: str
    context: str  # "code" or "prose"
    value: str
    verdict: str | None  # the rule's: the kind it reports for the value in its text, None for a near miss
    dataset: str  # where the case goes: an entry of TARGETS or CODE_ULTRAFEEDBACK
    prompt: str
    chosen: str
    rejected: str


@dataclass
class PiiPlan:
    """The cases, and the rows they were written to (filled in by the generators)."""

    cases: list[Case] = field(default_factory=list)
    # case index -> (dataset, hub_id, file relative to the repo, 0-based row)
    placed: dict[int, tuple[str, str, str, int]] = field(default_factory=dict)

    def slots(self, dataset: str) -> list[int]:
        """The indices of the cases that go to rows of ``dataset``, in order."""
        return [c for c, case in enumerate(self.cases) if case.dataset == dataset]

    def place(self, dataset: str, hub_id: str, file: str, slots: list[int], rows) -> None:
        """Note that case ``slots[k]`` was written to row ``rows[k]`` of ``file``."""
        for c, row in zip(slots, rows):
            self.placed[c] = (dataset, hub_id, file, int(row))


def _intended(texts: dict[str, str], case_side: str, kind: str, value: str, positive: bool) -> bool:
    """The rule finds in the row's texts exactly the value, of its kind, on its side (nothing, for a near miss)."""
    return all(findings(text) == ([(kind, value)] if positive and side == case_side else [])
               for side, text in texts.items())


def plan_pii(seed: int, per_kind: int) -> PiiPlan:
    """Of each kind of the rule, ``per_kind`` values the rule reports and ``max(per_kind, n)``
    near misses (its n :data:`NEAR_MISSES` in turn), each drawn (from its own random stream) until
    the rule's verdict on its row is the intended one."""
    plan = PiiPlan()
    routed: Counter = Counter()
    for offset, kind in enumerate(load_rule().kinds):
        near = NEAR_MISSES[kind]
        variants = [MATCH] * per_kind + [near[j % len(near)] for j in range(max(per_kind, len(near)))]
        for i, variant in enumerate(variants):
            side, context = COMBOS[(i + offset) % len(COMBOS)]
            routes = ROUTES.get((side, context), TARGETS)
            dataset = routes[routed[side, context] % len(routes)]
            routed[side, context] += 1
            rng = rng_for(seed, "pii", kind, i)
            for _ in range(ATTEMPTS):
                value = VALUES[kind][variant](rng)
                texts = _texts(rng, side, context, _snippet(rng, kind, context, value))
                if _intended(texts, side, kind, value, variant == MATCH):
                    plan.cases.append(Case(kind, variant, side, context, value, verdict(texts[side], value), dataset,
                                           **texts))
                    break
    return plan


def record(manifest: dict, plan: PiiPlan | None) -> None:
    """List in the manifest (``pii``) every case that was written: where (dataset, hub_id, file
    relative to the raw data folder, 0-based row), its side and context, the kind it is or imitates,
    the near miss it is (variant), the planted value and the rule's verdict on it."""
    if plan is None:
        return
    for c, case in enumerate(plan.cases):
        if c not in plan.placed:
            continue
        dataset, hub_id, file, row = plan.placed[c]
        manifest.setdefault("pii", []).append({
            "dataset": dataset, "hub_id": hub_id, "file": f"{hub_id}/{file}", "row": row, "side": case.side,
            "context": case.context, "kind": case.kind, "variant": case.variant, "value": case.value,
            "verdict": case.verdict,
        })
