"""Each chapter's .py source and its committed, executed .ipynb are one notebook."""

from pathlib import Path

import jupytext
import nbformat
import pytest

from icdl.repro.execute import chapters

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = [ROOT / "notebooks" / f"{name}.py" for name in chapters(ROOT)]


@pytest.mark.parametrize("src", CHAPTERS, ids=lambda p: p.stem)
def test_pair_is_in_sync_and_executed(src):
    nb_path = src.with_suffix(".ipynb")
    assert nb_path.is_file(), f"{src.name} has no paired {nb_path.name}; run make book"
    text = jupytext.read(src)
    executed = nbformat.read(nb_path, as_version=4)
    assert [(c.cell_type, c.source) for c in text.cells] == [(c.cell_type, c.source) for c in executed.cells], (
        f"{nb_path.name} is out of date with {src.name}: run `python -m icdl.repro.execute {src.stem}`")
    code = [c for c in executed.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), f"{nb_path.name} is not fully executed"
    assert not any(o.output_type == "error" for c in code for o in c.outputs)
    assert executed.metadata["kernelspec"]["name"] == "python3"
    assert any("parameters" in c.metadata.get("tags", []) for c in code), "no cell tagged 'parameters'"
    # deterministic cell ids: re-executing with the same outputs leaves no diff
    assert [c.get("id") for c in executed.cells] == [f"{src.stem}-{i}" for i in range(len(executed.cells))]


def test_strip_volatile_numbers_cells_and_drops_timings():
    from icdl.repro.execute import _strip_volatile

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1"), nbformat.v4.new_markdown_cell("x")])
    nb.metadata["papermill"] = {"duration": 1.0}
    nb.cells[0].metadata["execution"] = {"t": 1}
    _strip_volatile(nb, "demo")
    assert [c.id for c in nb.cells] == ["demo-0", "demo-1"]
    assert "papermill" not in nb.metadata and "execution" not in nb.cells[0].metadata
    nbformat.validate(nb)


def test_every_notebook_is_a_chapter_of_the_toc():
    """The TOC is the one list of chapters: a notebook it does not name would never be executed or built,
    and a name it lists must exist."""
    on_disk = {p.stem for p in (ROOT / "notebooks").glob("*.py")}
    assert on_disk == {p.stem for p in CHAPTERS}
    assert all(p.is_file() for p in CHAPTERS)


def test_chapter_ids_are_slugs_and_shadow_no_module():
    """Chapter ids are topic slugs (the order lives in _toc.yml alone), and none shadows an importable
    module for the kernel, which starts in notebooks/ with that folder first on sys.path."""
    import importlib.util
    import re

    for src in CHAPTERS:
        assert re.fullmatch(r"[a-z][a-z0-9_]*", src.stem), src.stem
        assert not re.match(r"\d", src.stem), f"{src.stem}: no numbers in chapter ids; order them in _toc.yml"
        assert importlib.util.find_spec(src.stem) is None, f"notebooks/{src.stem}.py shadows a module"


def test_no_prose_names_a_chapter_by_number():
    """Chapters are renamed and reordered in _toc.yml alone: prose links to them ({doc}) instead."""
    import re

    pattern = re.compile(r"\b[Cc]hapters? \d")
    for path in [*CHAPTERS, *(ROOT / "book").glob("*.md"), *(ROOT / "src").rglob("*.py")]:
        hits = [line for line in path.read_text(encoding="utf-8").splitlines() if pattern.search(line)]
        assert not hits, f"{path.relative_to(ROOT)} names a chapter by number: {hits[:3]}"
