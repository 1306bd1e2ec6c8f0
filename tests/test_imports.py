"""The package's import graph has no cycle -- counting imports inside functions, where a cycle hides
until the day a module is imported in another order."""

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def module_name(path: Path, src: Path = SRC) -> str:
    parts = path.relative_to(src).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(src: Path = SRC) -> dict[str, set[str]]:
    """``{module: modules of the package it imports}`` from every ``import`` statement, nested ones included."""
    files = {module_name(p, src): p for p in src.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in files}
    for mod, path in files.items():
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
            graph[mod] |= {t for t in targets if t in files and t != mod}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of ``graph`` as a list of nodes (first = last), or ``[]``."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_cycle_finder_finds_a_cycle_and_only_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_the_graph_sees_relative_and_nested_imports():
    g = import_graph()
    assert "icdl.gpt_icl.tasks" in g["icdl.gpt_icl.baselines"]          # from .tasks import …
    assert "icdl.gpt_icl.baselines" in g["icdl.gpt_icl.evaluation"]     # from . import baselines as bl
    assert "icdl.studies.computation" in g["icdl.gpt_icl.speed"]        # an import inside a function


def test_no_import_cycle_in_the_package():
    cycle = find_cycle(import_graph())
    assert not cycle, "import cycle: " + " -> ".join(cycle)


#: what the machinery (icdl.repro) may import from the rest of the package: errors and the figures' style
MACHINERY_MAY_IMPORT = ("icdl.repro", "icdl.errors", "icdl.figures")


def test_the_machinery_imports_no_study():
    """``icdl.repro`` renders, judges and records; the studies register with it (their claims are data, their
    errata entry points), never the other way round: an import of a study from ``icdl.repro`` -- even inside a
    function, as the errata page once had -- fails here."""
    graph = import_graph()
    leaks = {m: sorted(t for t in targets if not t.startswith(MACHINERY_MAY_IMPORT))
             for m, targets in graph.items() if m.startswith("icdl.repro")}
    assert {m: t for m, t in leaks.items() if t} == {}
