"""`python -m preftools.publish`, the same as `preftools publish` (preftools/outputs/publish.py)."""
from preftools.outputs.publish import main, run

if __name__ == "__main__":
    raise SystemExit(run("publish", main))
