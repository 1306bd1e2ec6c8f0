"""A chapter run by papermill directly ends, when the package refuses something, in the package's one line.

papermill loads every installed ``papermill.engine`` entry point when it starts; the package's (``icdl``:
``pyproject.toml``) is papermill's own nbclient engine, unchanged, and its loading also has the papermill
process print a :class:`~papermill.exceptions.PapermillExecutionError` raised by one of the package's refusals as
that refusal's line alone (exit status 1), whichever engine ran the notebook. Any other error is left to papermill
(its traceback, as before).

The bug (issue 70): ``papermill notebooks/relu_sums.ipynb out.ipynb -p profile nosuch`` -- or
``ICDL_CHAPTER_LOCK=:1``, a YAML key given twice -- printed papermill's 37 lines of traceback through click around
the package's line. A refusal of the package is an :class:`icdl.errors.OneLineError`, which IPython shows as the
one line ``<class>: <message>`` (its ``_render_traceback_``): the traceback papermill receives from the kernel is
that line alone, which no other error's is.
"""

from __future__ import annotations

import re
import sys

from papermill.engines import NBClientEngine
from papermill.exceptions import PapermillExecutionError


class OneLineEngine(NBClientEngine):
    """papermill's nbclient engine under the name ``icdl`` (``papermill --engine icdl``): the entry point that has
    papermill load this module."""


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def one_line(error: BaseException) -> str | None:
    """The package's line for ``error`` -- a papermill execution error whose cell raised one of the package's
    refusals (its whole traceback the line ``<class>: <message>``) -- else ``None``."""
    if not isinstance(error, PapermillExecutionError):
        return None
    lines = [_ANSI.sub("", line) for line in (error.traceback or []) if line.strip()]
    line = f"{error.ename}: {error.evalue}"
    return line if lines == [line] and "\n" not in line else None


def _excepthook(kind, value, tb) -> None:
    line = one_line(value)
    if line is None:
        _previous(kind, value, tb)
        return
    print(line, file=sys.stderr, flush=True)


_previous = sys.excepthook
if getattr(sys.excepthook, "__module__", None) != __name__:  # loaded once per process, hooked once
    sys.excepthook = _excepthook
