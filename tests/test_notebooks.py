"""Each chapter's .py source and its committed, executed .ipynb are one notebook."""

from pathlib import Path

import jupytext
import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))


@pytest.mark.parametrize("src", CHAPTERS, ids=lambda p: p.stem)
def test_pair_is_in_sync_and_executed(src):
    nb_path = src.with_suffix(".ipynb")
    assert nb_path.is_file(), f"{src.name} has no paired {nb_path.name}; run make book"
    text = jupytext.read(src)
    executed = nbformat.read(nb_path, as_version=4)
    assert [(c.cell_type, c.source) for c in text.cells] == [(c.cell_type, c.source) for c in executed.cells], (
        f"{nb_path.name} is out of date with {src.name}: run `python -m icdl.execute {src.stem}`")
    code = [c for c in executed.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), f"{nb_path.name} is not fully executed"
    assert not any(o.output_type == "error" for c in code for o in c.outputs)
    assert executed.metadata["kernelspec"]["name"] == "python3"
    assert any("parameters" in c.metadata.get("tags", []) for c in code), "no cell tagged 'parameters'"


def test_every_chapter_is_in_the_toc():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = {ch["file"] for part in toc["parts"] for ch in part["chapters"]}
    for src in CHAPTERS:
        assert f"notebooks/{src.stem}" in files


def test_no_chapter_shadows_the_package():
    assert not (ROOT / "notebooks" / "icdl.py").exists()
