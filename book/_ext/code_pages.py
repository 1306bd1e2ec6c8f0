"""Code one click away (a Sphinx extension, loaded through ``_config.yml``'s ``local_extensions``).

The book names its code as inline literals -- a module (``icdl.gpt_icl.objectives.n01``), a function in one
(``icdl.gpt_icl.core.learning.gate``), a command (``python -m icdl.lsa --profile nol1``) -- and the report names
each claim's guarding test (``tests/test_ledger.py::test_…``). This extension

* writes one page per file of ``src/icdl`` and ``tests``: its source, highlighted, every line an anchor
  (``#L-12``), built offline with the book (no repository host needed to read the code);
* turns every such literal of every page into a link to that page, at the line that defines the function,
  class or test it names; in the report's claim blocks (raw HTML written by :mod:`icdl.repro.pages`) a
  ``<a class="code-link" data-code="tests/test_x.py::test_y">`` gets its address the same way.

Which file and line a name means is :func:`target` (tested in ``tests/test_code_pages.py``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from docutils import nodes

#: where the source pages live in the built book (``_code/src/icdl/lsa/__main__.html``)
PREFIX = "_code"
#: a dotted name of the package inside a literal (``python -m icdl.x --flag`` included)
DOTTED = re.compile(r"(?<![\w/.])icdl(?:\.\w+)+")
#: a test file, and optionally a test in it (``tests/test_x.py::test_y``)
TEST = re.compile(r"(?<![\w/.])(tests/[\w/]+\.py)(?:::(\w+))?")


def index(root: Path) -> dict:
    """What can be linked: ``{"modules": {dotted name: file}, "defs": {file: {name: line}}}`` for every
    ``.py`` file under ``src/icdl`` and ``tests`` of ``root`` (files relative to it; a package's name maps to its
    ``__init__.py``; ``defs`` holds top-level functions and classes and the methods of classes as
    ``Class.method``)."""
    modules, defs = {}, {}
    files = sorted((root / "src" / "icdl").rglob("*.py")) + sorted((root / "tests").rglob("*.py"))
    for path in files:
        rel = path.relative_to(root).as_posix()
        if "/__pycache__/" in rel:
            continue
        if rel.startswith("src/"):
            parts = path.relative_to(root / "src").with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = rel
        found = {}
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            tree = ast.Module(body=[], type_ignores=[])
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                found[node.name] = node.lineno
                if isinstance(node, ast.ClassDef):
                    found.update({f"{node.name}.{m.name}": m.lineno for m in node.body
                                  if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))})
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(t, ast.Name):
                        found.setdefault(t.id, node.lineno)
        defs[rel] = found
    return {"modules": modules, "defs": defs}


def target(text: str, idx: dict) -> tuple[str, int | None] | None:
    """The file and line a literal names, or ``None``: the longest dotted prefix that is a module (for
    ``python -m icdl.x`` its ``__main__.py`` where it has one), the rest looked up among that file's
    definitions (a name it does not define: ``None``); a test file with an optional ``::test`` likewise."""
    m = TEST.search(text)
    if m and m.group(1) in idx["defs"]:
        return m.group(1), idx["defs"][m.group(1)].get(m.group(2) or "")
    m = DOTTED.search(text)
    if not m:
        return None
    parts = m.group(0).split(".")
    for cut in range(len(parts), 0, -1):
        name = ".".join(parts[:cut])
        if name in idx["modules"]:
            file = idx["modules"][name]
            rest = ".".join(parts[cut:])
            if not rest and re.search(rf"python -m {re.escape(name)}(?![\w.])", text):
                main = file.rsplit("/", 1)[0] + "/__main__.py" if file.endswith("__init__.py") else file
                file = main if main in idx["defs"] else file
            if not rest:
                return file, None
            line = idx["defs"][file].get(rest)
            return (file, line) if line else None  # a name the module does not define is no link
    return None


def page_of(file: str) -> str:
    """The source page of a file (``src/icdl/lsa/__main__.py`` -> ``_code/src/icdl/lsa/__main__``)."""
    return f"{PREFIX}/{file.removesuffix('.py')}"


def _href(app, docname: str, found: tuple[str, int | None]) -> str:
    file, line = found
    uri = app.builder.get_relative_uri(docname, page_of(file))
    return uri + (f"#L-{line}" if line else "")


RAW_LINK = re.compile(r'<a class="code-link" data-code="([^"]+)">')


def link_literals(app, doctree, docname: str) -> None:
    """Every inline literal that names the package's code or a test becomes a link to its source page; the
    report's raw ``code-link`` anchors get their address."""
    idx = app.env.icdl_code_index
    for lit in list(doctree.findall(nodes.literal)):
        if isinstance(lit.parent, nodes.reference):
            continue
        found = target(lit.astext(), idx)
        if found is None:
            continue
        ref = nodes.reference("", "", internal=True, refuri=_href(app, docname, found),
                              classes=["code-link"])
        lit.replace_self(ref)
        ref.append(lit)
    for raw in list(doctree.findall(nodes.raw)):
        text = raw.astext()
        if 'class="code-link"' not in text:
            continue

        def fill(m):
            found = target(m.group(1), idx)
            if found is None:
                return m.group(0)
            return f'<a class="code-link" href="{_href(app, docname, found)}">'

        raw.children = [nodes.Text(RAW_LINK.sub(fill, text))]


def source_pages(app):
    """One page per indexed file: its path as the title, its source highlighted, a ``L-<n>`` anchor per line."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    root = Path(app.confdir)
    formatter = HtmlFormatter(lineanchors="L", linenos="inline", cssclass="highlight")
    for file in app.env.icdl_code_index["defs"]:
        code = (root / file).read_text(encoding="utf-8")
        body = (f"<h1>{file}</h1><p>The source of <code>{file}</code> as this book was built from it.</p>"
                f"<div class=\"code-page\">{highlight(code, PythonLexer(), formatter)}</div>")
        yield page_of(file), {"title": file, "body": body, "parents": []}, "page.html"


def _init(app) -> None:
    app.env.icdl_code_index = index(Path(app.confdir))


def setup(app):
    app.connect("builder-inited", _init)
    app.connect("doctree-resolved", link_literals)
    app.connect("html-collect-pages", source_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
