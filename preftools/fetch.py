"""`python -m preftools.fetch`, the same as `preftools fetch` (preftools/inputs/fetch.py)."""
from preftools.inputs.fetch import main, run

if __name__ == "__main__":
    raise SystemExit(run("fetch", main))
