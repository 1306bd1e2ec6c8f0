"""The base of the package's own refusals (a result file, a checkpoint, a profile, a prompt that cannot be
used): one line naming what is wrong and what to do. The commands print that line alone; in a notebook --
a chapter executed by papermill, a reader's Jupyter -- IPython shows it alone too (:meth:`_render_traceback_`,
which IPython asks of an exception before it formats a traceback), instead of a traceback through the
package's code around it."""

from __future__ import annotations


class OneLineError(ValueError):
    """A refusal whose message says all there is to say: shown as ``<class>: <message>``, with no traceback."""

    def _render_traceback_(self) -> list[str]:
        return [f"{type(self).__name__}: {self}"]
