"""`python -m preftools.report`, the same as `preftools report` (preftools/outputs/report.py)."""
from preftools.outputs.report import main

if __name__ == "__main__":
    raise SystemExit(main())
