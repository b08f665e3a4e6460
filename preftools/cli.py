"""What the command-line tools share: exit codes, one-line messages and the entry point that
turns any unexpected exception into one line (a traceback only with PREFTOOLS_DEBUG=1)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

EXIT_ERROR = 2
EXIT_INTERRUPTED = 130

# how to give huggingface_hub a token (fetch of gated datasets, publish)
HF_LOGIN_HINT = "run `hf auth login` (older huggingface_hub: `huggingface-cli login`) or set HF_TOKEN"


def one_line(text: object, limit: int = 400) -> str:
    """``text`` on one line (white space folded), cut to ``limit`` characters."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def error(prog: str, message: str) -> None:
    print(f"{prog}: error: {one_line(message, 1000)}", file=sys.stderr, flush=True)


def run(prog: str, main: Callable[[], int], interrupted: str = "interrupted") -> int:
    """``main()``'s exit code; Ctrl-C and unexpected exceptions become one line on stderr."""
    try:
        return main()
    except KeyboardInterrupt:
        print(f"{prog}: {interrupted}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - never a traceback for users
        if os.environ.get("PREFTOOLS_DEBUG"):
            raise
        error(prog, f"unexpected {type(exc).__name__}: {one_line(exc)} (set PREFTOOLS_DEBUG=1 for a traceback)")
        return EXIT_ERROR
