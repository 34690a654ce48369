"""No two modules of fzn_gpu import each other, directly or through others, wherever the import
stands (module level, inside a function, under TYPE_CHECKING): shared types live in modules of
their own (engine/incumbent.py, engine/faults.py, engine/interface.py, model.py), and what a
lower layer needs of a higher one is handed to it (an engine gets how to join a Ray cluster,
interface.JoinCluster, from SolveRun, since cluster/ runs the engines on its workers). The
graph is read from every import statement of the sources."""

import ast
from pathlib import Path

from helpers import ROOT

PACKAGE = ROOT / "fzn_gpu"


def modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that `name` imports, wherever the import stands."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            prefix = ".".join(base + ([node.module] if node.module else [])) if node.level else node.module
            for alias in node.names:
                full = f"{prefix}.{alias.name}"
                out.add(full if full in known else prefix)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return {m for m in out if m in known and m != name}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    found, state, stack = [], {}, []

    def visit(u: str) -> None:
        state[u] = 1
        stack.append(u)
        for v in sorted(graph[u]):
            if state.get(v) == 1:
                found.append(stack[stack.index(v) :] + [v])
            elif v not in state:
                visit(v)
        stack.pop()
        state[u] = 2

    for u in sorted(graph):
        if u not in state:
            visit(u)
    return found


def test_no_module_imports_itself_back():
    known = modules()
    graph = {name: imported(name, path, known) for name, path in known.items()}
    assert sum(len(v) for v in graph.values()) > 100  # the reader sees the imports
    assert not cycles(graph), cycles(graph)


# The layers, lowest first: each package may import the package's shared modules (errors,
# settings, resources, ...) and the layers below it, never one above (docs/ARCHITECTURE.md,
# "Layers"). The front (cli, server, launch, and the run itself, engine/__init__.py's
# SolveRun, which hands an engine the cluster's driver) is above them all.
LAYERS = (
    ("fzn_gpu.flatzinc",),
    ("fzn_gpu.runtime",),
    ("fzn_gpu.engine", "fzn_gpu.local", "fzn_gpu.bucket", "fzn_gpu.relax"),
    ("fzn_gpu.cluster", "fzn_gpu.bench"),
)


def layer_of(module: str) -> int | None:
    if module == "fzn_gpu.engine":  # SolveRun: the front
        return None
    for i, packages in enumerate(LAYERS):
        if any(module == p or module.startswith(p + ".") for p in packages):
            return i
    return None


def test_no_layer_imports_one_above_it():
    known = modules()
    climbs = []
    for name, path in known.items():
        mine = layer_of(name)
        if mine is None:
            continue
        for dep in imported(name, path, known):
            theirs = layer_of(dep)
            if theirs is not None and theirs > mine:
                climbs.append(f"{name} imports {dep}")
    assert not climbs, climbs
    assert layer_of("fzn_gpu.runtime.device") == 1 and layer_of("fzn_gpu.engine.lns") == 2
    assert layer_of("fzn_gpu.cli") is None


def test_the_reader_sees_imports_inside_functions_and_type_checking_blocks(tmp_path):
    source = tmp_path / "a.py"
    source.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n"
        "def f():\n    from . import c\n    import fzn_gpu.d\n"
    )
    known = {name: source for name in ("fzn_gpu.a", "fzn_gpu.b", "fzn_gpu.c", "fzn_gpu.d")}
    assert imported("fzn_gpu.a", source, known) == {"fzn_gpu.b", "fzn_gpu.c", "fzn_gpu.d"}


def test_the_reader_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c", "a"]]
