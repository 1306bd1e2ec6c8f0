"""A validation curve's flatness: the rule of the recipe scan (:mod:`icdl.gpt_icl.recipes.scan`) and of the models
trained until flat (:mod:`icdl.gpt_icl.objectives.flat`), on the curves :func:`icdl.gpt_icl.core.training.train`
records (``step``, ``val_r2``, one row per evaluation).

==================  ==============================================================================================
:data:`FLAT`        the margin: a curve that gained less over the last quarter of its steps is flat
:func:`gain`        what a curve gained over the last quarter of its steps
:func:`flat`        whether it gained less than :data:`FLAT`
==================  ==============================================================================================
"""

from __future__ import annotations

import pandas as pd

#: a run's validation curve is flat where it gained less than FLAT over the last quarter of its steps (the first
#: schedule scan's flatness margin, registered with the recipe scan: icdl.gpt_icl.recipes.scan)
FLAT = 0.005


def gain(curve: pd.DataFrame) -> float:
    """What a run's validation curve (``step``, ``val_r2``, one row per evaluation) gained over the last quarter of
    its steps: its last R² minus the last evaluation's at or before three quarters of its last step."""
    c = curve.sort_values("step")
    last = c.iloc[-1]
    before = c[c["step"] <= 0.75 * last["step"]]
    if before.empty:
        raise ValueError("a curve needs an evaluation in its first three quarters to say whether it is flat")
    return float(last["val_r2"] - before["val_r2"].iloc[-1])


def flat(curve: pd.DataFrame) -> bool:
    """Whether a run's validation curve gained less than :data:`FLAT` over the last quarter of its steps
    (:func:`gain`)."""
    return gain(curve) < FLAT
