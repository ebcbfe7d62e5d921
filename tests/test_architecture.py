"""The package reads as the pipeline: phases as subpackages, imports flowing one way, no cycles.

The phases, lowest first. A module may import from its own phase and from lower ones, never from a
higher one; the root ``topogen`` package (``__version__``) is below everything. Every subpackage and
top-level module must be listed here: a new phase is placed deliberately, not by accident.
Function-local imports are allowed only to keep a heavy import out of start-up, and say so on the
line (a comment with "start-up").
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent / "topogen"

PHASES = [
    "util",  # errors, input files, output directories, resources, text escaping
    "spec",  # the cluster spec, the hardware catalog and the closed form
    "fabric",  # the generated wiring and its views
    "checks",  # validation
    "layout",  # racks, positions, cable lengths
    "bom",  # media, bill of materials, comparison
    "config",  # addressing, switch and host configuration
    "asbuilt",  # reading discovered wiring back, diff
    "traffic",  # traffic routed over the wiring
    "analysis",  # closed-form training analyses bound to a spec
    "exports",  # every output format
    "pipeline",  # spec -> model -> validate -> BOM -> analyses -> exports
    "search",  # design-space search over whole pipelines
    "growth",  # the next phase of an installed cluster: its wiring planned around the installed cables
    "cli",  # the command line
    "__main__",  # the program: signals, memory policy, then the CLI
]


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _phase(module: str, pkg: str) -> int:
    """Index of a module's phase; -1 for the root package."""
    parts = module.split(".")
    if parts == [pkg]:
        return -1
    return PHASES.index(parts[1])


def scan(root: Path) -> tuple[list[tuple[str, str, int, bool, str]], set[str]]:
    """Every import of the package by the package: (importer, imported module, line, function-local, line text)."""
    pkg = root.name
    modules = {_module_name(p, root) for p in root.rglob("*.py")}
    found = []
    for path in sorted(root.rglob("*.py")):
        me = _module_name(path, root)
        is_pkg = path.name == "__init__.py"
        text = path.read_text()
        lines = text.splitlines()
        tree = ast.parse(text)
        local_nodes = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) for n in ast.walk(f)}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = me.split(".") if is_pkg else me.split(".")[:-1]
                    base = base[: len(base) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                if target != pkg and not target.startswith(pkg + "."):
                    continue
                targets = [f"{target}.{a.name}" if f"{target}.{a.name}" in modules else target for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name == pkg or a.name.startswith(pkg + ".")]
            else:
                continue
            context = " ".join(lines[max(0, node.lineno - 2) : node.end_lineno])
            for t in dict.fromkeys(targets):
                found.append((me, t, node.lineno, id(node) in local_nodes, context))
    return found, modules


def problems(root: Path) -> list[str]:
    """Upward imports, unexplained function-local imports and import cycles, as readable lines."""
    pkg = root.name
    found, modules = scan(root)
    out = []
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for me, target, line, local, context in found:
        where = f"{me} line {line}"
        try:
            mine, theirs = _phase(me, pkg), _phase(target, pkg)
        except ValueError:
            out.append(f"{where}: {me if me.split('.')[1:2] and me.split('.')[1] not in PHASES else target} is in no phase of PHASES")
            continue
        if theirs > mine:
            out.append(f"{where}: imports {target} ({PHASES[theirs]}) from the lower phase {PHASES[mine]}")
        if local and "start-up" not in context:
            out.append(f"{where}: function-local import of {target} without a comment saying which start-up cost it avoids")
        if not local:
            # importing a.b.c runs a/__init__ and a/b/__init__ too: those are edges as well
            parts = target.split(".")
            for i in range(2, len(parts) + 1):
                dep = ".".join(parts[:i])
                if dep != me and dep in modules and not me.startswith(dep + "."):
                    graph.add_edge(me, dep)
    for scc in nx.strongly_connected_components(graph):
        if len(scc) > 1:
            cycle = nx.find_cycle(graph.subgraph(scc))
            out.append("import cycle: " + " -> ".join([a for a, _ in cycle] + [cycle[0][0]]))
    return out


def test_imports_follow_the_phases_without_cycles():
    assert problems(ROOT) == []


def test_every_subpackage_is_a_phase_and_only_entry_points_lie_loose():
    loose = sorted(p.name for p in ROOT.glob("*.py"))
    assert loose == ["__init__.py", "__main__.py", "cli.py", "pipeline.py"]
    packages = sorted(p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file())
    assert set(packages) <= set(PHASES), set(packages) - set(PHASES)


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "topogen"
    for rel, text in {"__init__.py": "", **files}.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


@pytest.mark.parametrize(
    "files, expected",
    [
        ({"util/__init__.py": "", "util/a.py": "from topogen.spec import b\n", "spec/__init__.py": "", "spec/b.py": ""}, "from the lower phase util"),
        ({"spec/__init__.py": "", "spec/a.py": "from . import b\n", "spec/b.py": "from .a import x\n"}, "import cycle"),
        ({"spec/__init__.py": "from topogen.spec.a import x\n", "spec/a.py": "from topogen.fabric import m\n", "fabric/__init__.py": "", "fabric/m.py": "from topogen.spec import a\n"}, "from the lower phase spec"),
        ({"fabric/__init__.py": "", "fabric/m.py": "def f():\n    from topogen.spec import a\n", "spec/__init__.py": "", "spec/a.py": ""}, "without a comment"),
        ({"gadgets/__init__.py": "", "gadgets/a.py": "from topogen.spec import b\n", "spec/__init__.py": "", "spec/b.py": ""}, "in no phase"),
    ],
    ids=["upward", "cycle", "upward-through-package", "unexplained-local", "unplaced-package"],
)
def test_the_check_catches(tmp_path, files, expected):
    """The checker itself fails on each kind of violation (so the real test can fail)."""
    found = problems(_tree(tmp_path, files))
    assert any(expected in line for line in found), found


def test_an_explained_local_import_and_a_downward_import_pass(tmp_path):
    files = {
        "spec/__init__.py": "",
        "spec/a.py": "",
        "fabric/__init__.py": "",
        "fabric/m.py": "from topogen.spec import a\n\ndef f():\n    from topogen.spec import a  # keeps numpy out of start-up\n",
    }
    assert problems(_tree(tmp_path, files)) == []
