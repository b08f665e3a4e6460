"""preftools has no import circle: no module imports, at any depth of the code, a module that
imports it back; and each module imports alone, in a fresh set of preftools modules."""

import ast
import subprocess
import sys
from pathlib import Path

import networkx as nx

PACKAGE = Path(__file__).resolve().parents[2] / "preftools"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imported_modules(path: Path) -> set[str]:
    """The preftools modules a file imports, in any function: `from a import b` is module a.b
    when that is a module, else module a."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in MODULES}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module in MODULES:
            subs = {f"{node.module}.{a.name}" for a in node.names} & MODULES.keys()
            found |= subs or {node.module}
            if len(subs) < len(node.names):
                found.add(node.module)
    return found


def test_no_import_circle():
    graph = nx.DiGraph()
    for name, path in MODULES.items():
        graph.add_node(name)
        graph.add_edges_from((name, other) for other in imported_modules(path) if other != name)
    assert graph.number_of_edges() > 20  # the scan sees the imports
    assert list(nx.simple_cycles(graph)) == []


def test_each_module_imports_alone():
    script = (
        "import importlib, sys\n"
        f"for name in {sorted(MODULES)!r}:\n"
        "    for loaded in [m for m in sys.modules if m == 'preftools' or m.startswith('preftools.')]:\n"
        "        del sys.modules[loaded]\n"
        "    importlib.import_module(name)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]


SHARED = {"preftools", "preftools.__main__", "preftools.cli", "preftools.files", "preftools.warehouse"}
ROLES = {"inputs", "dbt_runtime", "outputs", "generate", "devtools"}


def test_top_level_modules_are_shared_or_shims():
    """A module at the top of preftools/ is one every side shares, or the `python -m preftools.<command>`
    shim of a command, whose only import is its module in a role folder: new code goes in a role folder."""
    problems = []
    for name, path in MODULES.items():
        if name.count(".") != 1 or name in SHARED or path.name == "__init__.py":
            continue
        imports = [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, (ast.Import, ast.ImportFrom))]
        leaf = name.split(".")[1]
        targets = [n.module for n in imports if isinstance(n, ast.ImportFrom) and n.level == 0]
        if not (len(imports) == 1 and len(targets) == 1
                and targets[0] in {f"preftools.{role}.{leaf}" for role in ROLES}):
            problems.append(name)
    assert problems == [], f"not a shared module nor a one-import shim of a role folder's module: {problems}"
