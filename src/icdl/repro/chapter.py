"""What every chapter's code cells share: the first cell's set-up (:func:`start`), the one policy for which
data a chapter judges (:func:`reference_or_live`), numbers glued into the prose (:func:`glue`), tables
for people (:func:`table`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .. import figures
from .ledger import Ledger
from .profiles import ProfileError, ProfileSet


def table(df, digits: int = 3):
    """A DataFrame as the page shows it: rounded, without the 0, 1, 2 index, as HTML whose plain-text
    fallback is fixed (a Styler's repr carries a memory address that changes on every run)."""
    from IPython.display import HTML

    return HTML(df.round(digits).to_html(index=False, border=0, classes="dataframe"))


#: how a chapter's figures are written: SVG without the date of the run (with the style's fixed hash salt,
#: a rerun that draws the same figure writes the same bytes, so a rerun leaves no diff)
SVG_OPTIONS = {"metadata": {"Date": None}}


def _vector_figures() -> None:
    """Figures as SVG in the notebook and the book: sharp on any screen. (Outside IPython, e.g. in tests,
    there is nothing to set.)"""
    try:
        from IPython import get_ipython
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:  # pragma: no cover - IPython comes with the book's requirements
        return
    if get_ipython() is not None:
        set_matplotlib_formats("svg", **SVG_OPTIONS)


def start(profiles: ProfileSet, profile: str, overrides: Mapping[str, Any] | None = None
          ) -> tuple[Mapping[str, Any], Ledger]:
    """Apply the book's figure style, resolve (and check) the profile's settings, and open the
    chapter's ledger -- named after ``profiles.chapter``, which is the notebook's name."""
    figures.use_style()
    _vector_figures()
    cfg = profiles.resolve(profile, **_overrides(overrides))
    return cfg, Ledger(profiles.chapter, profile, seed=cfg.get("seed"), overrides=cfg["overrides"])


def _overrides(overrides) -> dict:
    """The chapter's ``overrides`` parameter as a dict: a dict, or its JSON text (``papermill -p overrides
    '{"n": 64}'`` passes a string); anything else is refused in one line naming the parameter."""
    import json

    if overrides is None or overrides == "":
        return {}
    if isinstance(overrides, str):
        try:
            overrides = json.loads(overrides)
        except json.JSONDecodeError:
            raise ProfileError(f"the parameter overrides must be a dict or its JSON text, e.g. "
                               f"'{{\"n\": 64}}'; got {overrides!r}") from None
    if not isinstance(overrides, Mapping):
        raise ProfileError(f"the parameter overrides must be a dict of settings, e.g. {{'n': 64}}; got {overrides!r}")
    return dict(overrides)


def glue(**values: Any) -> None:
    """Glue each value under its name for ``{glue:text}`` in the prose (not shown where it is computed)."""
    from myst_nb import glue as _glue

    for name, value in values.items():
        _glue(name, value, display=False)


def reference_or_live(profiles: ProfileSet, stems: tuple[str, ...], load: Callable[..., Any],
                      live: Callable[[], Any], live_profile: str, profile: str = "reference") -> tuple[Any, str]:
    """The one "reference if complete, else live" policy of the book: the committed results
    ``results/<chapter>/<stem>.<profile>.json`` of every stem, read by ``load(*objects)``, if they all exist
    and all say ``complete``; otherwise ``live()`` (called only then). Returns ``(data, judged_on)``, where
    ``judged_on`` names what the claims are judged on. A file that exists but does not load is an error
    (:func:`icdl.repro.results.show_reference`), never a silent fall-back."""
    from .results import show_reference

    raws = [show_reference(profiles, stem, profile) for stem in stems]
    if all(raw is not None and raw["data"].get("complete") is True for raw in raws):
        return load(*raws), profile
    incomplete = [s for s, raw in zip(stems, raws) if raw is not None and raw["data"].get("complete") is not True]
    if incomplete:
        print(f"{profile} result(s) {incomplete} not complete: judged on the live {live_profile} run")
    return live(), f"{live_profile} (no complete {profile} result)"
