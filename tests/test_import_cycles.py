"""No two modules of fzn_gpu import each other at module level, directly or through others:
shared types live in modules of their own (engine/incumbent.py, engine/faults.py,
engine/interface.py, model.py), and an engine that needs another at run time imports it
inside the function that needs it. The graph is read from the sources' top-level imports."""

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
    """The package's modules that `name` imports at its top level."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = set()
    for node in ast.parse(path.read_text()).body:
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


def test_the_reader_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c", "a"]]
