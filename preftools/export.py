"""`python -m preftools.export`, the same as `preftools export` (preftools/outputs/export.py)."""
from preftools.outputs.export import main

if __name__ == "__main__":
    raise SystemExit(main())
