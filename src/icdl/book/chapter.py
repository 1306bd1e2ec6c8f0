"""What every chapter's first code cell does, in one call."""

from __future__ import annotations

from typing import Any, Mapping

from .. import figures
from .ledger import Ledger
from .profiles import ProfileSet


def table(df, digits: int = 3):
    """A DataFrame as the page shows it: rounded, without the 0, 1, 2 index, as HTML whose plain-text
    fallback is fixed (a Styler's repr carries a memory address that changes on every run)."""
    from IPython.display import HTML

    return HTML(df.round(digits).to_html(index=False, border=0, classes="dataframe"))


def _vector_figures() -> None:
    """Figures as SVG in the notebook and the book: sharp on any screen. (Outside IPython, e.g. in tests,
    there is nothing to set.)"""
    try:
        from IPython import get_ipython
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:  # pragma: no cover - IPython comes with the book's requirements
        return
    if get_ipython() is not None:
        set_matplotlib_formats("svg")


def start(profiles: ProfileSet, profile: str, overrides: Mapping[str, Any] | None = None
          ) -> tuple[Mapping[str, Any], Ledger]:
    """Apply the book's figure style, resolve (and check) the profile's settings, and open the
    chapter's ledger -- named after ``profiles.chapter``, which is the notebook's name."""
    figures.use_style()
    _vector_figures()
    cfg = profiles.resolve(profile, **dict(overrides or {}))
    return cfg, Ledger(profiles.chapter, profile, seed=cfg.get("seed"))
