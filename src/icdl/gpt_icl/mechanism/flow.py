"""GD tuned in gradient-flow time (chapter ``gpt_mechanism``, profile ``flow`` of :mod:`~icdl.gpt_icl.mechanism`):
the fair hypotheses asked on a grid read in flow time ``T = ηL``, and hypothesis 1 by a measure that a few
prompts cannot carry.

The fair run chose every model's GD member along one flow time (ηL ≈ 102): at a small enough step size, GD
with step ``η`` for ``L`` steps follows the gradient flow to time ``ηL``, and members of one ``T`` make almost
the same predictions. So a member at the grid's smallest η is not GD held back, if halving η at the same T
changes nothing; what must be interior is T. The registry (``icdl.repro.claims.CRITERIA``, ``mech-flow-*``)
asks, per model, before any verdict counts (gate ``flow``):

* the chosen start scale is interior -- neither the grid's smallest nor its largest;
* the chosen ``T = ηL`` is neither the smallest nor the largest flow time of the grid at that start scale;
* a chosen η at an edge of the grid has its neighbouring η on the grid at the same T and start scale, with a
  scan (the model's prediction difference to GD) within :data:`FLAT` of the chosen one's (relative);
* ridge's chosen λ is interior.

And, since a sum of squares over prompts can be one block's (the fair run's depth-6 ratios came 80 % from one
block of 16 prompts), hypothesis 1 again on the **median block**: per model, the median over blocks of the
test prompts of GD's prediction difference over that of the simple rule nearest the model over all prompts.

==========================  ==========================================================================================
:func:`flow_edges`          per model: the chosen member's flow time, and which edge of the grid matters
:func:`median_ratio`        per model and over the models, on every resample of the blocks: the median block's ratio
:func:`judge_flow`          the ledger entries of ``mech-flow-nearest-gd``, ``-sens-gd``, ``-cosine-gd``, ``-median-gd``
:func:`flow_table`          per model, for the reader: the member, its flow time, its edges, the four numbers
:func:`flow_along_time`     one model's scan along the chosen flow time and start scale, η by η
==========================  ==========================================================================================
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from icdl.gpt_icl.core.intervals import Draws, summary
from icdl.gpt_icl.core.tasks import PRETRAINING
from icdl.gpt_icl.mechanism.fair import _r2s, gate_note, gated_entries, grid_edges, interval_cell, paired_measures
from icdl.gpt_icl.mechanism.measures import GD_NETWORK, SIMPLE_RULES
from icdl.repro.ledger import count

#: the largest relative change of the scan between neighbouring step sizes at the same flow time at which a
#: chosen η on the grid's edge still counts (registered with the claims)
FLAT = 0.05
#: the registered claims, the number of :func:`paired_measures` (or :func:`median_ratio`) each reads, and its line
CLAIMS = {"mech-flow-nearest-gd": ("pred", "<", 1.0), "mech-flow-sens-gd": ("sens", "<", 1.0),
          "mech-flow-cosine-gd": ("cosine", ">=", 0.8), "mech-flow-median-gd": ("median", "<", 1.0)}
#: the reader's names of the numbers
WORDS = {"pred": "largest ratio of GD's prediction difference to the nearest simple rule's",
         "sens": "largest ratio of GD's sensitivity L2 difference to the smallest simple rule's",
         "cosine": "smallest mean cosine of the model's sensitivity with GD's",
         "median": "largest median-block ratio of GD's prediction difference to the nearest simple rule's"}


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


def _lower_median(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per row, the weighted lower median of ``values`` (``(R, blocks)``) with ``weights`` (``(R, blocks)``,
    block counts): the smallest value at which the cumulative weight reaches half the row's total."""
    order = np.argsort(values, axis=1)
    v = np.take_along_axis(values, order, axis=1)
    cw = np.cumsum(np.take_along_axis(weights, order, axis=1), axis=1)
    k = (cw >= cw[:, -1:] / 2).argmax(axis=1)
    return v[np.arange(len(v)), k]


def median_ratio(blocks: pd.DataFrame, train_examples: int, draws: Draws | None = None) -> dict:
    """On every resample of :class:`~icdl.gpt_icl.core.intervals.Draws` (row 0: every block once), per model: the
    simple rule nearest the model over the resampled prompts (the smallest weighted sum of its prediction
    difference), and the weighted lower median over the blocks of GD's prediction difference over that rule's
    (``(resamples + 1,)``); over the models, the largest. At the training length, pretraining mixture."""
    at = blocks[(blocks["mixture"] == PRETRAINING) & (blocks["position"] == train_examples)]
    if at.empty:
        raise ValueError(f"the result holds no sums per block at the training length (position {train_examples}) "
                         "on the pretraining mixture: rerun python -m icdl.gpt_icl.mechanism --profile flow")
    per_model = {}
    for key, g in at.groupby(["depth", "attention"]):
        col = {c: part.sort_values("block")["pred"].to_numpy(dtype=float) for c, part in g.groupby("candidate")}
        rules = [c for c in SIMPLE_RULES if c in col]
        if GD_NETWORK not in col or not rules:
            raise ValueError(f"the sums of model {key} lack GD or every simple rule")
        w = (draws or Draws(1, blocks=len(col[GD_NETWORK]))).weights                 # (R, blocks)
        per_rule = np.stack([col[c] for c in rules])                                 # (rules, blocks)
        nearest = np.argmin(w @ per_rule.T, axis=1)                                  # (R,)
        ratio = col[GD_NETWORK][None, :] / per_rule[nearest]                         # (R, blocks)
        per_model[key] = _lower_median(ratio, w)
    return {"models": per_model, "median": np.max(list(per_model.values()), axis=0)}


def flow_numbers(result: dict, train_examples: int, draws: Draws | None = None) -> dict:
    """The four numbers of the flow claims on every resample of ``draws`` (:func:`paired_measures` and
    :func:`median_ratio`): over the models and, under ``models``, per model."""
    m = paired_measures(result["blocks"], train_examples, draws)
    med = median_ratio(result["blocks"], train_examples, draws)
    return {"pred": m["pred"], "sens": m["sens"], "cosine": m["cosine"], "median": med["median"],
            "models": {k: v | {"median": med["models"][k]} for k, v in m["models"].items()}}


def judge_flow(result: dict | None, cfg, train_examples: int, control_passed: bool) -> list[dict]:
    """The ledger entries of the four hypotheses asked on profile ``flow`` (``result``: its
    :func:`~icdl.gpt_icl.mechanism.load` frames, None while the run waits), each with its 90 % interval over
    blocks of the test prompts and the gates the registry reads: ``control`` (``control_passed``) and ``flow``
    (:func:`flow_edges` finds no edge that matters)."""
    criteria = {c: f"{'below' if op == '<' else 'at least'} {t:g} for every model on the whole 90 % interval, with "
                   "GD's chosen member inside its grid in flow time and the positive control passed"
                for c, (_, op, t) in CLAIMS.items()}
    if result is None:
        return [{"claim": c, "passed": None, "value": None, "criterion": criteria[c],
                 "ours": "not run: python -m icdl.gpt_icl.mechanism --profile flow"} for c in CLAIMS]
    edges = flow_edges(result["chosen"], result["gd_scan"], cfg)
    flow = bool(edges["flow"].all())
    nums = flow_numbers(result, train_examples)
    at_edge = int((~edges["flow"]).sum())
    grid = ("inside its grid in flow time for every model" if flow
            else f"at an edge that matters for {at_edge} of {len(edges)} models")
    tail = f"; GD's chosen member {grid}" + gate_note(result, train_examples, control_passed)
    return gated_entries({c: key for c, (key, _, _) in CLAIMS.items()}, WORDS, nums,
                         {"control": float(control_passed), "flow": float(flow)}, tail, criteria)


def flow_table(result: dict, cfg, train_examples: int) -> pd.DataFrame:
    """Per model, for the reader: GD's chosen member, its flow time, the edges that matter, the four numbers at
    the training length (each "value (90 % interval)"), and GD's R² beside the model's on the test prompts."""
    edges = flow_edges(result["chosen"], result["gd_scan"], cfg).set_index(["depth", "attention"])
    nums = flow_numbers(result, train_examples)["models"]
    r2 = _r2s(result["alignment"], train_examples)
    words = {"scale_edge": "start scale", "time_edge": "ηL", "eta_edge": "η", "lambda_edge": "ridge's λ"}

    rows = []
    for (depth, att), v in nums.items():
        e = edges.loc[(depth, att)]
        rows.append({"depth": depth, "attention": att,
                     "GD chosen": f"η = {e['eta']:g}, L = {int(e['steps'])}, scale {e['init_scale']:g}",
                     "ηL": f"{e['time']:.1f}",
                     "at an edge": ", ".join(w for k, w in words.items() if e[k]) or "none",
                     "prediction ratio": interval_cell(v["pred"]), "median-block ratio": interval_cell(v["median"]),
                     "sensitivity ratio": interval_cell(v["sens"]), "cosine": interval_cell(v["cosine"]),
                     "GD's R²": float(r2.loc[(depth, att), GD_NETWORK]),
                     "model's R²": float(r2.loc[(depth, att), "model"])})
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


def _range(values, fmt: str) -> str:
    lo, hi = f"{min(values):{fmt}}", f"{max(values):{fmt}}"
    return lo if lo == hi else f"{lo} to {hi}"


def flow_glue(result: dict | None, cfg, train_examples: int, entries: list[dict], fair: dict | None = None,
              fair_cfg=None) -> dict[str, str]:
    """The prose's numbers of the flow run: its grid, the chosen flow times, how many models' members are
    inside the grid in flow time, the largest change to the neighbouring η at an edge, the four judged numbers
    with their intervals (from the judge's own ``entries``), the median-block ratios per model; and, from the
    fair run (``fair``), how flat its scan is along the chosen flow time for the model it left at its edge.
    Dashes while a run waits."""
    keys = {"mech-flow-nearest-gd": "flow_pred", "mech-flow-sens-gd": "flow_sens", "mech-flow-cosine-gd": "flow_cos",
            "mech-flow-median-gd": "flow_median"}
    out = {"flow_etas": ", ".join(f"{e:g}" for e in cfg["etas"]), "flow_steps": count(cfg["gd_steps"])}
    if fair is not None and fair_cfg is not None:
        edges = grid_edges(fair["chosen"], fair["gd_scan"], fair_cfg)
        held = edges[~edges["fair"]]
        if len(held):
            r = held.iloc[0]
            along = flow_along_time(fair, int(r["depth"]), r["attention"])
            row = along.loc[along.index[np.isclose(along.index, r["eta"] * r["steps"])][0]].dropna()
            out |= {"flow_fair_model": f"depth {int(r['depth'])} {r['attention']}",
                    "flow_fair_time": f"{r['eta'] * r['steps']:.1f}",
                    "flow_fair_along": _range(row.to_numpy(), ".4f"),
                    "flow_fair_etas": ", ".join(f"{e:g}" for e in row.index)}
    if result is None:
        return out | {k: "—" for k in (*keys.values(), *(f"{k}_far" for k in keys.values()), "flow_times",
                                       "flow_inside", "flow_eta_change", "flow_median_models", "flow_gd_r2",
                                       "flow_model_r2", "flow_median_worst", "flow_median_worst_gd_r2",
                                       "flow_median_worst_model_r2", "flow_models", "flow_median_worst_rule",
                                       "flow_sens_point_nearer", "flow_sens_nearer")}
    for e in entries:
        v = e["values"]
        out[keys[e["claim"]]] = f"{e['value']:.3f} (90 % interval {v['value_lo']:.3f} to {v['value_hi']:.3f})"
    edges = flow_edges(result["chosen"], result["gd_scan"], cfg)
    nums = flow_numbers(result, train_examples)["models"]
    r2 = _r2s(result["alignment"], train_examples)
    changes = edges["eta_change"].dropna()
    for key, (measure, op, t) in zip(keys.values(), CLAIMS.values()):  # per model: the whole interval past the line
        far = [summary(v[measure]) for v in nums.values()]
        out[f"{key}_far"] = str(sum(s["lo"] >= t if op == "<" else s["hi"] < t for s in far))
    sens = [summary(v["sens"]) for v in nums.values()]
    out |= {"flow_sens_point_nearer": f"{sum(x['value'] < 1 for x in sens)} of {len(sens)}",
            "flow_sens_nearer": f"{sum(x['hi'] < 1 for x in sens)} of {len(sens)}"}
    worst = max(nums, key=lambda k: nums[k]["median"][0])
    at = result["blocks"]
    at = at[(at["mixture"] == PRETRAINING) & (at["position"] == train_examples) & (at["depth"] == worst[0])
            & (at["attention"] == worst[1]) & at["candidate"].isin(SIMPLE_RULES)]
    out["flow_median_worst_rule"] = str(at.groupby("candidate")["pred"].sum().idxmin())
    out |= {"flow_median_worst": f"target depth {worst[0]}, {worst[1]} attention",
            "flow_median_worst_gd_r2": f"{r2.loc[worst, GD_NETWORK]:.3f}",
            "flow_median_worst_model_r2": f"{r2.loc[worst, 'model']:.3f}",
            "flow_models": f"{len(nums)}"}
    return out | {"flow_times": _range(edges["time"], ".1f"),
                  "flow_inside": f"{int(edges['flow'].sum())} of {len(edges)}",
                  "flow_eta_change": (f"{100 * changes.max():.2f} %" if len(changes) else "none at an edge"),
                  "flow_median_models": _range([v["median"][0] for v in nums.values()], ".2f"),
                  "flow_gd_r2": _range(r2[GD_NETWORK], ".2f"), "flow_model_r2": _range(r2["model"], ".2f")}


def along_time_shown(result: dict, depth: int, attention: str, digits: int = 4) -> pd.DataFrame:
    """:func:`flow_along_time` as the chapter shows it: one row per flow time ηL from the first that every step
    size reaches, one column per step size, a dash where that (η, ηL) is not on the grid."""
    t = flow_along_time(result, depth, attention)
    complete = t.index[t.notna().all(axis=1)]
    t = t[t.index >= complete.min()] if len(complete) else t
    shown = t.apply(lambda col: col.map(lambda v: "—" if v != v else f"{v:.{digits}f}"))
    shown.columns = [f"η = {e:g}" for e in t.columns]
    return shown.rename_axis(None).reset_index(names="ηL").assign(ηL=lambda f: f["ηL"].map(lambda v: f"{v:g}"))
