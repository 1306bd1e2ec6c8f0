"""The numbers behind chapter ``relu_sums``: the sup error of the sums of :mod:`icdl.relu_sums` against
the number H of ReLUs, the smallest H for a target accuracy (REB W1), and the fitted rate."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..relu_sums import TARGETS, fit, sup_error
from ..repro.profiles import ProfileSet

PROFILES = ProfileSet("relu_sums",
                      profiles={"quick": {"R": 4.0, "H_max": 512}, "reference": {"R": 4.0, "H_max": 4096}},
                      ranges={"R": (0.5, 100.0), "H_max": (8, 1 << 16)},
                      meanings={"R": "half-width R of the interval [−R, R]", "H_max": "largest number H of ReLUs"})


def error_curve(targets=tuple(TARGETS), R: float = 4.0, H_max: int = 512) -> pd.DataFrame:
    """Sup error and achieved C against H for every target (the chapter's log-log figure)."""
    Hs = [2**p for p in range(3, int(math.log2(H_max)) + 1)]
    rows = []
    for name in targets:
        for H in Hs:
            f = fit(name, R, H)
            rows.append({"target": name, "k": f.k, "H": f.H, "C": f.C, "eps": sup_error(f, TARGETS[name], R)})
    return pd.DataFrame(rows)


def smallest_H(target: str, eps: float, R: float = 4.0, H_max: int = 1 << 16) -> dict:
    """The smallest H (searched by doubling, then bisection) whose fit reaches sup error ≤ eps."""
    g = TARGETS[target]

    def err(H):
        return sup_error(fit(target, R, H), g, R)

    hi = 4
    while err(hi) > eps:
        hi *= 2
        if hi > H_max:
            return {"target": target, "eps_goal": eps, "H": math.nan, "C": math.nan, "eps": math.nan}
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if mid >= 3 and err(mid) <= eps:
            hi = mid
        else:
            lo = mid
    f = fit(target, R, hi)
    return {"target": target, "eps_goal": eps, "H": f.H, "C": f.C, "eps": sup_error(f, g, R)}


def accuracy_table(targets=("sigmoid", "tanh", "softplus", "sigmoid'"), eps_goals=(1e-2, 1e-3, 1e-4, 1e-5),
                   R: float = 4.0) -> pd.DataFrame:
    """(ε, H, C) reaching each accuracy goal, per target."""
    return pd.DataFrame([smallest_H(t, e, R) for t in targets for e in eps_goals])


def fitted_slope(df: pd.DataFrame) -> pd.Series:
    """Least-squares slope of log ε against log H per target (excluding exact fits)."""
    out = {}
    for name, g in df.groupby("target"):
        g = g[g["eps"] > 1e-13]
        if len(g) >= 2:
            out[name] = float(np.polyfit(np.log(g["H"]), np.log(g["eps"]), 1)[0])
    return pd.Series(out, name="slope")
