"""The book's code pages (``book/_ext/code_pages.py``): which file and line a name of code in the text links to."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))

import code_pages  # noqa: E402


@pytest.fixture(scope="module")
def idx():
    return code_pages.index(ROOT)


def _line(file: str, text: str) -> int:
    return next(i for i, line in enumerate((ROOT / file).read_text().splitlines(), 1) if line.startswith(text))


def test_a_module_links_to_its_own_file_not_a_parent_package(idx):
    """The longest dotted prefix that is a module wins (the bug: ``icdl.gpt_icl.objectives.n01`` sent to the
    package ``icdl.gpt_icl`` with ``objectives.n01`` looked up as a definition, found nowhere)."""
    assert code_pages.target("icdl.gpt_icl.objectives.n01", idx) == ("src/icdl/gpt_icl/objectives/n01.py", None)
    assert code_pages.target("icdl.gpt_icl", idx) == ("src/icdl/gpt_icl/__init__.py", None)


def test_a_function_links_to_the_line_that_defines_it(idx):
    file = "src/icdl/gpt_icl/core/learning.py"
    assert code_pages.target("icdl.gpt_icl.core.learning.gate", idx) == (file, _line(file, "def gate("))
    file = "src/icdl/repro/glance.py"
    assert code_pages.target("icdl.repro.glance.RESULTS", idx) == (file, _line(file, "RESULTS"))


def test_a_command_links_to_the_packages_main_and_a_test_to_its_def(idx):
    """``python -m icdl.gpt_icl`` runs ``__main__.py``, not ``__init__.py`` (the bug: the command's link showing
    the package's imports); a test id finds its ``def`` line, a test file alone its top."""
    assert code_pages.target("python -m icdl.gpt_icl --profile n01 --part main", idx) == \
        ("src/icdl/gpt_icl/__main__.py", None)
    test = "tests/test_code_pages.py::test_a_command_links_to_the_packages_main_and_a_test_to_its_def"
    assert code_pages.target(test, idx) == ("tests/test_code_pages.py",
                                            _line("tests/test_code_pages.py", "def test_a_command_links"))
    assert code_pages.target("tests/test_ledger.py", idx) == ("tests/test_ledger.py", None)


def test_what_is_not_code_of_the_book_is_not_linked(idx):
    """A name outside the package, a module that does not exist, or a path inside another word stays text."""
    for text in ("numpy.linalg.lstsq", "icdl_other.x", "my/tests/test_ledger.py", "tests/test_missing.py",
                 "results/gpt_icl/icl.n01.json"):
        assert code_pages.target(text, idx) is None, text
    assert code_pages.target("icdl.no_such_module", idx) is None


def test_every_source_file_has_a_page_name_of_its_own(idx):
    pages = [code_pages.page_of(f) for f in idx["defs"]]
    assert len(pages) == len(set(pages)) and len(pages) > 100
    assert code_pages.page_of("src/icdl/lsa/__main__.py") == "_code/src/icdl/lsa/__main__"
