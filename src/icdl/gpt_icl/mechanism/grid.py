"""Where GD's chosen member sits in its grid, read in gradient-flow time (chapter ``gpt_mechanism``; the gate
``flow`` of the registered claims ``mech-seeds-*``).

At a small enough step size, GD with step ``η`` for ``L`` steps follows the gradient flow of its loss to time
``T = ηL``, and members of one ``T`` make almost the same predictions. So a member at the grid's smallest η is
not GD held back if halving η at the same T changes nothing; what must lie inside the grid is T. Per model, the
gate asks:

* the chosen start scale is interior -- neither the grid's smallest nor its largest;
* the chosen ``T = ηL`` is neither the smallest nor the largest flow time of the grid at that start scale;
* a chosen η at an edge of the grid has its neighbouring η on the grid at the same T and start scale, with a
  scan (the model's prediction difference to GD) within :data:`FLAT` of the chosen one's (relative);
* ridge's chosen λ is interior.

======================  ==============================================================================================
:func:`flow_edges`      per model: the chosen member's flow time, and which edge of the grid matters
:func:`flow_along_time` one model's scan along its start scale, by flow time and step size
:func:`along_time_shown` the same as the chapter shows it
======================  ==============================================================================================
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: the largest relative change of the scan between neighbouring step sizes at the same flow time at which a
#: chosen η on the grid's edge still counts (registered with the claims)
FLAT = 0.05

def _scan_at(mine: pd.DataFrame, eta: float, steps: float) -> float | None:
    hit = mine[np.isclose(mine["eta"], eta) & np.isclose(mine["steps"], steps)]
    return float(hit["pred_diff"].iloc[0]) if len(hit) else None

def flow_edges(chosen: pd.DataFrame, scan: pd.DataFrame, cfg) -> pd.DataFrame:
    """One row per model: its chosen (η, L, start scale, λ) and flow time ``T = ηL``; ``scale_edge``,
    ``time_edge`` (T the smallest or largest of the grid at that start scale), ``eta_edge`` (η at the grid's
    edge without a neighbouring η at the same T within :data:`FLAT`; ``eta_change``: that neighbour's relative
    change, NaN where η is interior or the neighbour is not on the grid), ``lambda_edge``; and ``flow`` (no
    such edge: the gate)."""
    etas, scales, lambdas = (sorted(cfg[k]) for k in ("etas", "init_scales", "lambdas"))
    rows = []
    for r in chosen.itertuples():
        mine = scan[(scan["depth"] == r.depth) & (scan["attention"] == r.attention)
                    & np.isclose(scan["init_scale"], r.gd_init_scale)]
        time = r.gd_eta * r.gd_steps
        times = (mine["eta"] * mine["steps"])[mine["steps"] > 0]
        change = np.nan
        at_edge = r.gd_eta in (etas[0], etas[-1])
        if at_edge:
            nb = etas[1] if r.gd_eta == etas[0] else etas[-2]
            there = _scan_at(mine, nb, time / nb)
            if there is not None and r.gd_pred_diff > 0:
                change = abs(there - r.gd_pred_diff) / r.gd_pred_diff
        row = {"depth": r.depth, "attention": r.attention, "eta": r.gd_eta, "steps": int(r.gd_steps),
               "time": float(time), "init_scale": r.gd_init_scale, "lambda": r.ridge_lambda,
               "scale_edge": r.gd_init_scale in (scales[0], scales[-1]),
               "time_edge": bool(np.isclose(time, times.min()) or np.isclose(time, times.max())),
               "eta_edge": bool(at_edge and not change < FLAT), "eta_change": float(change),
               "lambda_edge": r.ridge_lambda in (lambdas[0], lambdas[-1])}
        row["flow"] = not any(row[k] for k in ("scale_edge", "time_edge", "eta_edge", "lambda_edge"))
        rows.append(row)
    return pd.DataFrame(rows)

def flow_along_time(result: dict, depth: int, attention: str) -> pd.DataFrame:
    """One model's scan at its chosen start scale, by flow time ``T = ηL`` (rows) and step size (columns): the
    model's prediction difference to each GD member -- how flat the scan is along T across step sizes."""
    ch = result["chosen"]
    r = ch[(ch["depth"] == depth) & (ch["attention"] == attention)].iloc[0]
    s = result["gd_scan"]
    mine = s[(s["depth"] == depth) & (s["attention"] == attention) & np.isclose(s["init_scale"], r["gd_init_scale"])
             & (s["steps"] > 0)].assign(time=lambda f: (f["eta"] * f["steps"]).round(4))
    return mine.pivot_table(index="time", columns="eta", values="pred_diff")

def along_time_shown(result: dict, depth: int, attention: str, digits: int = 4) -> pd.DataFrame:
    """:func:`flow_along_time` as the chapter shows it: one row per flow time ηL from the first that every step
    size reaches, one column per step size, a dash where that (η, ηL) is not on the grid."""
    t = flow_along_time(result, depth, attention)
    complete = t.index[t.notna().all(axis=1)]
    t = t[t.index >= complete.min()] if len(complete) else t
    shown = t.apply(lambda col: col.map(lambda v: "—" if v != v else f"{v:.{digits}f}"))
    shown.columns = [f"η = {e:g}" for e in t.columns]
    return shown.rename_axis(None).reset_index(names="ηL").assign(ηL=lambda f: f["ηL"].map(lambda v: f"{v:g}"))
