"""The DAG as a picture: a Mermaid flowchart of the manifest's sources, seeds and models, one
subgraph per layer (sources -> staging -> intermediate -> marts -> audits, reporting ->
exposures), tests left out.

    python -m preftools.dag [--manifest target/manifest.json] [--write CONTRIBUTING.md]

prints the diagram (a ```mermaid block), or with --write replaces the block between
``<!-- dag:start -->`` and ``<!-- dag:end -->`` in that file. `make dag` parses the project and
rewrites CONTRIBUTING.md's; tests/python/test_dag_rules.py checks it is not stale.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path, PurePosixPath
from typing import Mapping

from preftools.cli import EXIT_ERROR, error, run
from preftools.dag_rules import DEFAULT_MANIFEST, Project, Resource, load_manifest

PROG = "python -m preftools.dag"
START, END = "<!-- dag:start -->", "<!-- dag:end -->"

# (layer, label), left to right; a model's layer is its first folder under models/
LAYERS: tuple[tuple[str, str], ...] = (
    ("sources", "sources"),
    ("seeds", "seeds"),
    ("staging", "staging"),
    ("intermediate", "intermediate"),
    ("spark", "spark (Spark target only)"),
    ("marts", "marts"),
    ("meta", "meta"),
    ("audits", "audits"),
    ("reporting", "reporting"),
    ("analyses", "analyses"),
    ("exposures", "exposures"),
)
SHOWN = ("source", "seed", "model", "snapshot", "analysis", "exposure")


def layer(r: Resource) -> str:
    if r.type == "source":
        return "sources"
    if r.type == "seed":
        return "seeds"
    if r.type == "exposure":
        return "exposures"
    if r.type == "analysis":
        return "analyses"
    parts = PurePosixPath(r.path).parts
    return parts[1] if len(parts) > 2 and parts[0] == "models" else "other"


def node_id(r: Resource) -> str:
    return {"source": "src", "seed": "seed", "exposure": "exp"}.get(r.type, "m") + "_" + re.sub(r"\W", "_", r.name)


def node(r: Resource) -> str:
    shape = {"source": '[("{}")]', "seed": '[/"{}"/]', "exposure": '>"{}"]'}.get(r.type, '["{}"]')
    return node_id(r) + shape.format(r.name)


def mermaid(manifest: Mapping) -> str:
    """The diagram as a fenced ```mermaid block (stable: sorted, no paths or ids from the run)."""
    p = Project(manifest)
    shown = {uid: r for uid, r in p.resources.items() if r.type in SHOWN}
    by_layer: dict[str, list[Resource]] = {}
    for r in shown.values():
        by_layer.setdefault(layer(r), []).append(r)
    order = [name for name, _ in LAYERS] + sorted(set(by_layer) - {name for name, _ in LAYERS})
    labels = dict(LAYERS)
    lines = ["```mermaid", "flowchart LR"]
    for name in order:
        if name not in by_layer:
            continue
        lines.append(f'  subgraph layer_{name}["{labels.get(name, name)}"]')
        lines += [f"    {node(r)}" for r in sorted(by_layer[name], key=lambda r: r.name)]
        lines.append("  end")
    edges = sorted({(node_id(shown[parent]), node_id(r)) for r in shown.values()
                    for parent in p.parents[r.uid] if parent in shown})
    lines += [f"  {a} --> {b}" for a, b in edges]
    lines.append("```")
    return "\n".join(lines) + "\n"


def replace_block(text: str, block: str) -> str:
    """``text`` with what lies between the dag markers replaced by ``block``."""
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"no {START} ... {END} markers")
    return text[: start + len(START)] + "\n" + block + text[end:]


def current_block(text: str) -> str:
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"no {START} ... {END} markers")
    return text[start + len(START): end].removeprefix("\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST,
                    help="dbt's manifest.json (default: target/manifest.json; `dbt parse` writes it)")
    ap.add_argument("--write", type=Path, metavar="FILE",
                    help=f"replace the diagram between {START} and {END} in FILE instead of printing it")
    args = ap.parse_args(argv)
    try:
        block = mermaid(load_manifest(args.manifest))
    except (OSError, ValueError) as exc:
        error(PROG, f"cannot read {args.manifest}: {exc} (run `dbt parse` first)")
        return EXIT_ERROR
    if not args.write:
        sys.stdout.write(block)
        return 0
    try:
        text = args.write.read_text(encoding="utf-8")
        new = replace_block(text, block)
    except (OSError, ValueError) as exc:
        error(PROG, f"{args.write}: {exc}")
        return EXIT_ERROR
    if new != text:
        args.write.write_text(new, encoding="utf-8")
        print(f"{args.write}: DAG diagram updated", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(run(PROG, main))
