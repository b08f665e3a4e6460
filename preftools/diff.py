"""`python -m preftools.diff`, the same as `preftools diff` (preftools/outputs/diff.py)."""
from preftools.outputs.diff import main, run

if __name__ == "__main__":
    raise SystemExit(run("preftools diff", main))
