"""The mutation catalogue (tests/mutation.py) stays alive through refactors: every mutant still applies to
exactly one place of the current source and compiles, and every test it names exists -- in seconds, without
running the mutants (``make mutation`` does that)."""

import ast
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import mutation  # noqa: E402 -- the catalogue is a script beside the tests, not a package module

SRC = HERE.parent / "src" / "icdl"


@pytest.mark.parametrize("m", mutation.MUTANTS, ids=lambda m: m.id)
def test_mutant_applies_once_and_compiles(m):
    text = (SRC / m.path).read_text(encoding="utf-8")
    assert text.count(m.old) == 1, f"{m.id}: its original text occurs {text.count(m.old)} times in {m.path}"
    compile(text.replace(m.old, m.new), m.path, "exec")
    assert m.new != m.old


@pytest.mark.parametrize("m", mutation.MUTANTS, ids=lambda m: m.id)
def test_mutant_names_tests_that_exist(m):
    assert m.tests
    for node in m.tests:
        path, _, name = node.partition("::")
        assert (HERE.parent / path).is_file(), f"{m.id}: no test file {path}"
        if name:
            tree = ast.parse((HERE.parent / path).read_text(encoding="utf-8"))
            assert name in {f.name for f in tree.body if isinstance(f, ast.FunctionDef)}, f"{m.id}: no {node}"


def test_mutant_ids_are_unique():
    ids = [m.id for m in mutation.MUTANTS]
    assert len(ids) == len(set(ids))
