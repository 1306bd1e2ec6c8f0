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
    assert "icdl.gpt_icl.core.tasks" in g["icdl.gpt_icl.core.baselines"]          # from .tasks import …
    assert "icdl.gpt_icl.core.baselines" in g["icdl.gpt_icl.core.evaluation"]     # from . import baselines as bl
    assert "icdl.studies.computation" in g["icdl.gpt_icl.compute.speed"]        # an import inside a function


def test_no_import_cycle_in_the_package():
    cycle = find_cycle(import_graph())
    assert not cycle, "import cycle: " + " -> ".join(cycle)


#: the layers of the package, lowest first (README, "Architecture"): a module may import its own layer or a
#: lower one, never a higher one. ``checks`` and ``errors`` are the machinery's small helpers.
LAYERS = (
    ("machinery", ("icdl.repro", "icdl.errors", "icdl.checks")),
    ("theory", ("icdl.networks", "icdl.layers", "icdl.prompts", "icdl.relu_sums", "icdl.constructions")),
    ("core", ("icdl.gpt_icl.core",)),
    ("studies", ("icdl.studies", "icdl.lsa", "icdl.gpt_icl.objectives", "icdl.gpt_icl.depth",
                 "icdl.gpt_icl.plateau", "icdl.gpt_icl.scale", "icdl.gpt_icl.mechanism", "icdl.gpt_icl.compute",
                 "icdl.gpt_icl.schedules", "icdl.gpt_icl.recipes")),
    ("commands", ("icdl.gpt_icl",)),
    ("figures", ("icdl.figures",)),
)
#: the question packages of the sec.-5 experiments: each may import the core, never another question
QUESTIONS = tuple(p for p in LAYERS[3][1] if p.startswith("icdl.gpt_icl."))


def layer_of(module: str) -> int:
    """The index in :data:`LAYERS` of the longest package prefix that holds ``module`` (``icdl`` itself, the
    package's ``__init__``, sits above everything)."""
    best, depth = len(LAYERS), -1
    for i, (_, packages) in enumerate(LAYERS):
        for pkg in packages:
            if (module == pkg or module.startswith(pkg + ".")) and len(pkg) > depth:
                best, depth = i, len(pkg)
    return best


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import that goes up a layer, or from one question package into another."""
    def question(m):
        return next((q for q in QUESTIONS if m == q or m.startswith(q + ".")), None)

    bad = []
    for mod, targets in sorted(graph.items()):
        for t in sorted(targets):
            if layer_of(t) > layer_of(mod):
                bad.append(f"{mod} ({LAYERS[layer_of(mod)][0] if layer_of(mod) < len(LAYERS) else 'top'}) "
                           f"imports {t} ({LAYERS[layer_of(t)][0] if layer_of(t) < len(LAYERS) else 'top'})")
            elif question(mod) and question(t) and question(mod) != question(t):
                bad.append(f"{mod} imports {t}: one question package into another")
    return bad


def test_every_module_has_a_layer():
    """A new top-level module or package must be placed in :data:`LAYERS` (the README's table) before it can
    pass the arrow check; ``icdl`` itself is the only module above them."""
    unplaced = [m for m in import_graph() if layer_of(m) == len(LAYERS) and m != "icdl"]
    assert unplaced == []


def test_the_layer_check_catches_an_upward_and_a_sideways_import():
    """The check itself, on planted graphs: the core importing a question (the bug it guards: a shared trainer
    that reaches into one study), the machinery importing the figures, one question importing another --
    each caught; downward and same-package imports pass."""
    planted = {"icdl.gpt_icl.core.model": {"icdl.gpt_icl.mechanism.measures"},
               "icdl.repro.chapter": {"icdl.figures.style"},
               "icdl.gpt_icl.mechanism.study": {"icdl.gpt_icl.scale.judge", "icdl.gpt_icl.core.main_study"},
               "icdl.gpt_icl.scale.show": {"icdl.gpt_icl.scale.judge", "icdl.repro.ledger"},
               "icdl.figures.gpt": {"icdl.gpt_icl.core.tasks"}}
    bad = upward_imports(planted)
    assert len(bad) == 3, bad
    assert any("core.model" in b for b in bad) and any("repro.chapter" in b for b in bad)
    assert any("one question package into another" in b for b in bad)


def test_arrows_run_downwards_only():
    """Questions → core → theory → machinery, never up, and no question package into another (the README's
    "Architecture"): read from every import of ``src``, nested ones included."""
    assert upward_imports(import_graph()) == []
