"""``python -m preftools.generate``: the command line of :func:`preftools.generate.generate`."""

from __future__ import annotations

import argparse
import json
import sys

import preftools.generate
from preftools.generate import generate
from preftools.inputs import contract


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="preftools generate",
                                 description=preftools.generate.__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--scale", type=float, default=0.01, help="1.0 = upstream row counts")
    ap.add_argument("--out", required=True, help="output directory (the RAW_DATA_DIR)")
    ap.add_argument("--datasets", default=None,
                    help="comma-separated subset of: " + ",".join(contract.DATASETS_BY_KEY)
                    + " and the stand-ins of the extra datasets of examples/extra_datasets.yml: "
                    + ",".join(preftools.generate.EXTRA_DATASETS) + " and the stand-ins of the eval sets of "
                    "examples/eval_sets.yml: " + ",".join(preftools.generate.EVAL_SETS))
    ap.add_argument("--text-length", type=float, default=1.0, help="factor on the length of free texts")
    ap.add_argument("--format", default=None, dest="formats",
                    help="file format per dataset, one of " + ", ".join(preftools.generate.FORMATS)
                    + ": one for all (--format parquet) or per dataset key, comma-separated "
                    "(--format rever_rubric=jsonl,ultrafeedback=jsonl.gz); default: "
                    + ",".join(f"{k}={v}" for k, v in preftools.generate.DEFAULT_FORMATS.items()))
    ap.add_argument("--ultrafeedback-revision", default="original", choices=preftools.generate.ULTRAFEEDBACK_REVISIONS,
                    help="fixed: UltraFeedback with openbmb's overall_score fix applied (completions scored 10 "
                    "whose mean rating is <= 2 get 1, above 4 keep 10, the rest a seeded new score); every other "
                    "file as with original. Diff the two builds with `preftools diff`")
    ap.add_argument("--no-progress", action="store_true")
    ap.add_argument("--bad-rate", type=float, default=0.0,
                    help="plant every kind of bad value (preftools/generate/bad_values.py) on this share of rows, e.g. 0.01")
    args = ap.parse_args(argv)
    datasets = [s.strip() for s in args.datasets.split(",") if s.strip()] if args.datasets else None
    try:
        formats = preftools.generate.parse_formats(args.formats)
    except ValueError as exc:
        ap.error(f"--format: {exc}")
    manifest = generate(args.out, seed=args.seed, scale=args.scale, progress=not args.no_progress, datasets=datasets,
                        text_length=args.text_length, bad_rate=args.bad_rate, formats=formats,
                        ultrafeedback_revision=args.ultrafeedback_revision)
    extra_rows = {key: sum(extra["rows"].values()) for key, extra in manifest.get("extra_datasets", {}).items()}
    eval_rows = {key: section["items"] for key, section in manifest.get("eval_sets", {}).items()}
    print(json.dumps({"rows": manifest["rows"], "extra_dataset_rows": extra_rows, "eval_set_items": eval_rows,
                      "contamination_cases": len(manifest.get("contamination", [])),
                      "near_duplicate_cases": len(manifest.get("near_duplicates", [])),
                      "pii_cases": len(manifest.get("pii", [])),
                      "rever_integrity_breaks": len(manifest["rever_integrity_breaks"]),
                      "seconds": manifest["seconds"]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
