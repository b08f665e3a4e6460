"""``preftools <command> [options]``: the project's tools under one command (also
``python -m preftools``). Each command runs the module COMMANDS names, in its role folder; a shim
of the command's name at the top of the package runs it alone too: ``preftools export --help`` is
``python -m preftools.export --help``."""

from __future__ import annotations

import importlib
import sys

from preftools.cli import EXIT_ERROR, error, run

# command -> (module whose main(argv) runs it, what it does)
COMMANDS = {
    "fetch": ("preftools.inputs.fetch", "download the datasets' raw files from the Hub into RAW_DATA_DIR"),
    "generate": ("preftools.generate.__main__", "write generated data in the Hub's layout (the bundled sample's generator)"),
    "export": ("preftools.outputs.export", "write the marts as Parquet with dataset cards, ready for training"),
    "publish": ("preftools.outputs.publish", "upload one exported mart to the Hugging Face Hub"),
    "report": ("preftools.outputs.report", "write the HTML audit report of the warehouse"),
    "diff": ("preftools.outputs.diff", "what changed between two warehouse builds, down to the training pairs"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [f"  {name:<{width}}  {what}" for name, (_, what) in COMMANDS.items()]
    return ("usage: preftools <command> [options]   (preftools <command> --help for its options)\n\ncommands:\n"
            + "\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(usage(), file=sys.stdout if argv else sys.stderr)
        return 0 if argv else EXIT_ERROR
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        error("preftools", f"unknown command {name!r}; the commands are: {', '.join(COMMANDS)}")
        return EXIT_ERROR
    module = importlib.import_module(COMMANDS[name][0])
    return run(f"preftools {name}", lambda: module.main(rest))


if __name__ == "__main__":
    sys.exit(main())
