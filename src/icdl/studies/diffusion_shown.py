"""The diffusion chapter's tables as a reader reads them (chapter ``diffusion_score``; the numbers come from
:mod:`icdl.studies.diffusion`): the live run and the reference alike.

=========================  =====================================================================================
:func:`identity_shown`     the DSM identity: each function's two risks and their difference, with its standard error
:func:`final_errors_shown` the relative score error after the last step, one row per method
:func:`theorem1_shown`     Theorem 1's check per width H, and one line for whether every step holds
:func:`queries_shown`      the score at each prompt's query: the truth, GD and the transformer
=========================  =====================================================================================
"""

from __future__ import annotations

import pandas as pd


def identity_shown(identity: pd.DataFrame) -> pd.DataFrame:
    """:func:`~icdl.studies.diffusion.dsm_identity` rounded to three decimals, its columns in words (the risks
    named as in the text, the Monte-Carlo standard error spelled out, not ``se``); the analytic constant, the same
    in every row, is said once under the table."""
    return identity.round(3).rename(columns={"f": "function f", "se": "Monte-Carlo standard error",
                                             "constant": "analytic constant"})


def final_errors_shown(last: pd.DataFrame, steps: int) -> pd.DataFrame:
    """The per-method mean errors (``method``, ``H``, ``score_error``: a result file's ``final_errors``) as the
    chapter shows them: one row per method as a reader names it, GD without a width."""
    names = [f"transformer, H = {int(h)}" if m == "transformer" else m for m, h in zip(last["method"], last["H"])]
    return pd.DataFrame({"method": names, f"relative score error after {steps} steps": last["score_error"]})


def theorem1_shown(theorem1: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    """Theorem 1's check per width H (a run's or a result file's ``theorem1``) as the chapter shows it, the live
    run and the reference alike: a line saying whether every one-step deviation is within η ε, and the table
    without the column that line replaces, each distance written as a power of ten."""
    within = "yes" if pd.Series(theorem1["within"]).astype(bool).all() else "no"
    distances = ("step_deviation", "eta_eps", "final_distance_to_gd")  # in this order, whatever the file's
    shown = theorem1[["H", *distances]].assign(**{c: theorem1[c].map("{:.1e}".format) for c in distances})
    return (f"every one-step deviation within η ε: {within}",
            shown.rename(columns={"step_deviation": "largest one-step deviation"}))


def queries_shown(queries: pd.DataFrame) -> pd.DataFrame:
    """The score at each prompt's query (a run's ``queries``) to two decimals: the true score ∇log p_t, the network
    after GD and the transformer's read-out, named as the figures name them (not the run's keys ``score``,
    ``gd``)."""
    return queries.round(2).rename(columns={"x_query": "query $x_t$", "score": "true score", "gd": "GD",
                                            "transformer": "transformer"})
