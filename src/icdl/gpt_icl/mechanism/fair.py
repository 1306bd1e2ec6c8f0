"""GD given a fair chance (chapter ``gpt_mechanism``, profile ``fair`` of :mod:`~icdl.gpt_icl.mechanism`):
whether the grid let GD's chosen member sit inside it, the three measures of GD against the simple rules with
their intervals, and the ledger entries of the hypotheses asked again on that run.

The first grid chose its smallest step size and its largest number of steps for every model, so a ratio above
1 there could mean a GD the grid held back. Profile ``fair`` moves the grid (η down, L and the start scale
out, ridge's λ out) and this module checks, per model, what the registry asks of it before any verdict counts
(``icdl.repro.claims.CRITERIA``, ``mech-fair-*``):

* the chosen η and start scale are *interior* -- neither the grid's smallest nor its largest;
* the chosen L is below the grid's largest, or the scan is flat there: the model's prediction difference to
  that (η, scale) changes by less than :data:`FLAT` over the last doubling of L;
* ridge's chosen λ is interior.

============================  ======================================================================================
:func:`grid_edges`            per model: which of the chosen settings sit at an edge that matters
:func:`paired_measures`       per model and over the models, on every resample of the test prompts: GD's prediction
                              and sensitivity differences over the nearest simple rule's, and its mean cosine
:func:`per_model_verdicts`    per model and measure: which side of the line its own interval lies on
:func:`same_member_drift`     the models whose GD member two runs share, and GD's difference in each
:func:`largest_block`         per model: the share of GD's squared difference in its largest block of prompts, and
                              the ratio without that block
:func:`fit_table`             GD's own fit per member: its loss on the examples and its R², where each model chose
:func:`fair_table`            per model, for the reader: the chosen member, its edges, the three measures, the R²s
:func:`judge_fair`            the ledger entries of ``mech-fair-nearest-gd``, ``mech-fair-sens-gd`` and
                              ``mech-fair-cosine-gd``
============================  ======================================================================================
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from icdl.gpt_icl.core.intervals import Draws, summary
from icdl.gpt_icl.core.tasks import PRETRAINING
from icdl.gpt_icl.mechanism.measures import GD_NETWORK, SIMPLE_RULES
from icdl.repro.claims import criterion_verdict
from icdl.repro.ledger import count

#: the largest relative change of the scan over the last doubling of L at which a chosen L on the grid's edge
#: still counts as converged (registered with the claims)
FLAT = 0.05
#: the settings whose edge :func:`grid_edges` checks, as the reader names them
EDGES = {"eta_edge": "η", "scale_edge": "start scale", "steps_edge": "L", "lambda_edge": "ridge's λ"}
#: the registered thresholds (icdl.repro.claims.CRITERIA), for the words
THRESHOLDS = {"mech-fair-nearest-gd": ("<", 1.0), "mech-fair-sens-gd": ("<", 1.0), "mech-fair-cosine-gd": (">=", 0.8)}


def grid_edges(chosen: pd.DataFrame, scan: pd.DataFrame, cfg) -> pd.DataFrame:
    """One row per model: its chosen (η, L, start scale, λ), whether each sits at an edge of ``cfg``'s grid
    that matters (``eta_edge``, ``scale_edge``, ``lambda_edge``: the grid's smallest or largest value;
    ``steps_edge``: the largest L with the scan still moving by :data:`FLAT` or more over its last doubling,
    ``steps_change`` that change), and ``fair`` (no such edge)."""
    etas, scales, lambdas = (sorted(cfg[k]) for k in ("etas", "init_scales", "lambdas"))
    top = int(cfg["gd_steps"])
    rows = []
    for r in chosen.itertuples():
        mine = scan[(scan["depth"] == r.depth) & (scan["attention"] == r.attention)
                    & np.isclose(scan["eta"], r.gd_eta) & np.isclose(scan["init_scale"], r.gd_init_scale)]
        at = mine.set_index("steps")["pred_diff"]
        half = max(s for s in at.index if s < r.gd_steps) if r.gd_steps == top else None
        change = abs(at[top] - at[half]) / at[half] if half is not None and at[half] > 0 else 0.0
        row = {"depth": r.depth, "attention": r.attention, "eta": r.gd_eta, "steps": int(r.gd_steps),
               "init_scale": r.gd_init_scale, "lambda": r.ridge_lambda,
               "eta_edge": r.gd_eta in (etas[0], etas[-1]), "scale_edge": r.gd_init_scale in (scales[0], scales[-1]),
               "steps_edge": bool(r.gd_steps == top and change >= FLAT), "steps_change": float(change),
               "lambda_edge": r.ridge_lambda in (lambdas[0], lambdas[-1])}
        row["fair"] = not any(row[k] for k in ("eta_edge", "scale_edge", "steps_edge", "lambda_edge"))
        rows.append(row)
    return pd.DataFrame(rows)


def paired_measures(blocks: pd.DataFrame, train_examples: int, draws: Draws | None = None) -> dict:
    """The three registered numbers on every resample of one :class:`~icdl.gpt_icl.core.intervals.Draws` (row 0: all
    prompts; the same resampled prompts for every candidate and model: paired), from the measures' sums per
    block (``blocks`` of :func:`icdl.gpt_icl.mechanism.study`) at the training length on the pretraining
    mixture. Per model ``(depth, attention)``: ``pred`` (GD's prediction difference over the nearest simple
    rule's), ``sens`` (GD's sensitivity L2 difference over the smallest simple rule's; a rule without a slope
    counts the model's own, 1), ``cosine`` (GD's mean cosine); over the models the largest two ratios and the
    smallest cosine, each ``(resamples + 1,)``."""
    at = blocks[(blocks["mixture"] == PRETRAINING) & (blocks["position"] == train_examples)]
    if at.empty:
        raise ValueError(f"the result holds no sums per block at the training length (position {train_examples}) "
                         "on the pretraining mixture: rerun python -m icdl.gpt_icl.mechanism --profile fair")
    per_model = {}
    for key, g in at.groupby(["depth", "attention"]):
        rules = [c for c in SIMPLE_RULES if c in set(g["candidate"])]
        if GD_NETWORK not in set(g["candidate"]) or not rules:
            raise ValueError(f"the sums of model {key} lack GD or every simple rule")
        w = (draws or Draws(1, blocks=int(g["block"].nunique()))).weights          # (R, blocks)
        col = {c: {k: w @ part.sort_values("block")[k].to_numpy(dtype=float)
                   for k in ("pred", "sens", "cos", "own", "n")} for c, part in g.groupby("candidate")}
        gd = col[GD_NETWORK]
        per_model[key] = {"pred": gd["pred"] / np.min([col[c]["pred"] for c in rules], axis=0),
                          "sens": gd["sens"] / np.min([col[c]["sens"] for c in rules], axis=0),
                          "cosine": gd["cos"] / gd["n"]}
    return {"models": per_model,
            "pred": np.max([m["pred"] for m in per_model.values()], axis=0),
            "sens": np.max([m["sens"] for m in per_model.values()], axis=0),
            "cosine": np.min([m["cosine"] for m in per_model.values()], axis=0)}


def largest_block(blocks: pd.DataFrame, train_examples: int) -> pd.DataFrame:
    """Per model, at the training length on the pretraining mixture: the share of GD's summed squared
    difference from the model that its largest block of test prompts holds (``share``), and GD's prediction
    ratio to the nearest simple rule on all prompts and with that block left out of every candidate's sum
    (``ratio``, ``ratio_without``) -- whether a ratio is the prompts' or a few prompts' on which GD's network
    fits badly (a sum of squares is not robust to them)."""
    at = blocks[(blocks["mixture"] == PRETRAINING) & (blocks["position"] == train_examples)]
    rows = []
    for (depth, att), g in at.groupby(["depth", "attention"]):
        col = {c: part.sort_values("block")["pred"].to_numpy(dtype=float) for c, part in g.groupby("candidate")}
        gd, rules = col[GD_NETWORK], [col[c] for c in SIMPLE_RULES if c in col]
        k = int(gd.argmax())
        keep = np.arange(len(gd)) != k
        rows.append({"depth": depth, "attention": att, "share": float(gd[k] / gd.sum()),
                     "ratio": float(gd.sum() / min(r.sum() for r in rules)),
                     "ratio_without": float(gd[keep].sum() / min(r[keep].sum() for r in rules))})
    return pd.DataFrame(rows)


def per_model_verdicts(result: dict, cfg, train_examples: int) -> pd.DataFrame:
    """Per model and measure: which side of the hypothesis' line its own 90 % interval lies on (``nearer``: GD
    nearer than every simple rule on the whole interval -- ratio below 1, cosine at least 0.8 --; ``farther``:
    the whole interval on the other side; ``straddles``), and whether the model's chosen members lie inside the
    grid (``interior``). A claim about every model is decided by its worst model; this says how the others
    lie."""
    edges = grid_edges(result["chosen"], result["gd_scan"], cfg).set_index(["depth", "attention"])
    rows = []
    for (depth, att), v in paired_measures(result["blocks"], train_examples)["models"].items():
        for key, claim in (("pred", "mech-fair-nearest-gd"), ("sens", "mech-fair-sens-gd"),
                           ("cosine", "mech-fair-cosine-gd")):
            s = summary(v[key])
            op, t = THRESHOLDS[claim]
            near = [s["lo"] < t, s["hi"] < t] if op == "<" else [s["lo"] >= t, s["hi"] >= t]
            rows.append({"depth": depth, "attention": att, "measure": key, "value": s["value"],
                         "side": "nearer" if all(near) else "farther" if not any(near) else "straddles",
                         "interior": bool(edges.loc[(depth, att), "fair"])})
    return pd.DataFrame(rows)


def same_member_drift(first: dict, fair: dict, train_examples: int) -> pd.DataFrame:
    """The models whose GD member is the same in the first grid's run and the fair one (η, L and start
    scale), with GD's prediction difference from the model at the training length (pretraining mixture) in
    each: the same computation on the same prompts, run twice -- what is left is floating-point rounding acting
    on prompts where GD's run is unstable."""
    keys = ["depth", "attention", "gd_eta", "gd_steps", "gd_init_scale"]
    same = first["chosen"][keys].merge(fair["chosen"][keys], on=keys)

    def gd(result):
        a = result["alignment"]
        a = a[(a["mixture"] == PRETRAINING) & (a["position"] == train_examples) & (a["candidate"] == GD_NETWORK)]
        return a.set_index(["depth", "attention"])["pred_diff"]

    g1, g2 = gd(first), gd(fair)
    return same.assign(first=[float(g1[(r.depth, r.attention)]) for r in same.itertuples()],
                       fair=[float(g2[(r.depth, r.attention)]) for r in same.itertuples()])


def block_shown(blocks: pd.DataFrame, train_examples: int) -> pd.DataFrame:
    """:func:`largest_block` as the chapter shows it."""
    t = largest_block(blocks, train_examples)
    return pd.DataFrame({"target depth": t["depth"], "attention": t["attention"],
                         "largest block's share of GD's difference": (100 * t["share"]).map(lambda v: f"{v:.0f} %"),
                         "ratio, all prompts": t["ratio"], "ratio without that block": t["ratio_without"]})


def fit_table(fit: pd.DataFrame, chosen: pd.DataFrame, cfg) -> pd.DataFrame:
    """Per model: GD's own fit at the member it chose (its loss on the prompt's examples at L and at L/2, and
    its R² on the scan prompts) beside the most accurate member of the grid (the largest R²) -- whether the GD
    the models are held against has converged, and whether it could have been more accurate."""
    rows = []
    for r in chosen.itertuples():
        mine = fit[fit["depth"] == r.depth]
        member = mine[np.isclose(mine["eta"], r.gd_eta) & np.isclose(mine["init_scale"], r.gd_init_scale)]
        member = member.set_index("steps")
        half = max(s for s in member.index if s < r.gd_steps)
        best = mine.loc[mine["r2"].idxmax()]
        rows.append({"depth": r.depth, "attention": r.attention, "chosen": f"η = {r.gd_eta:g}, L = {r.gd_steps}, "
                     f"scale {r.gd_init_scale:g}", "fit loss at L": float(member.loc[r.gd_steps, "fit_loss"]),
                     "fit loss at L/2": float(member.loc[half, "fit_loss"]),
                     "GD's R², scan prompts": float(member.loc[r.gd_steps, "r2"]),
                     "grid's best R², scan prompts": float(best["r2"]),
                     "best member": f"η = {best['eta']:g}, L = {int(best['steps'])}, scale {best['init_scale']:g}"})
    return pd.DataFrame(rows)


def interval_cell(stat) -> str:
    """A number over resamples as a table cell: "value (lo to hi)", its 90 % interval."""
    s = summary(stat)
    return f"{s['value']:.3f} ({s['lo']:.3f} to {s['hi']:.3f})"


def fair_table(result: dict, cfg, train_examples: int) -> pd.DataFrame:
    """Per model, for the reader: GD's chosen member and whether it sits at an edge that matters, the three
    measures of GD against the simple rules at the training length (each "value (90 % interval)"), and GD's
    own R² beside the model's on the same test prompts."""
    edges = grid_edges(result["chosen"], result["gd_scan"], cfg).set_index(["depth", "attention"])
    m = paired_measures(result["blocks"], train_examples)["models"]
    r2 = _r2s(result["alignment"], train_examples)

    rows = []
    for (depth, att), v in m.items():
        e = edges.loc[(depth, att)]
        rows.append({"depth": depth, "attention": att,
                     "GD chosen": f"η = {e['eta']:g}, L = {int(e['steps'])}, scale {e['init_scale']:g}",
                     "at an edge": ", ".join(word for k, word in EDGES.items() if e[k]) or "none",
                     "prediction ratio": interval_cell(v["pred"]), "sensitivity ratio": interval_cell(v["sens"]),
                     "cosine": interval_cell(v["cosine"]),
                     "GD's R², test prompts": float(r2.loc[(depth, att), GD_NETWORK]),
                     "model's R², test prompts": float(r2.loc[(depth, att), "model"])})
    return pd.DataFrame(rows)


def _r2s(alignment: pd.DataFrame, train_examples: int) -> pd.DataFrame:
    at = alignment[(alignment["mixture"] == PRETRAINING) & (alignment["position"] == train_examples)]
    return at.pivot_table(index=["depth", "attention"], columns="candidate", values="r2_candidate")


def judge_fair(result: dict | None, cfg, train_examples: int, control_passed: bool) -> list[dict]:
    """The ledger entries of the three hypotheses asked on profile ``fair`` (``result``: its
    :func:`~icdl.gpt_icl.mechanism.load` frames, None while the run waits), each with its 90 % interval over
    blocks of the test prompts and the two gates the registry reads: ``control`` (``control_passed``: the
    positive control passed) and ``fair`` (:func:`grid_edges` finds no edge that matters). The registry's
    criterion decides each verdict; a gate not met leaves it inconclusive."""
    names = {"mech-fair-nearest-gd": "pred", "mech-fair-sens-gd": "sens", "mech-fair-cosine-gd": "cosine"}
    words = {"pred": "largest ratio of GD's prediction difference to the nearest simple rule's",
             "sens": "largest ratio of GD's sensitivity L2 difference to the smallest simple rule's",
             "cosine": "smallest mean cosine of the model's sensitivity with GD's"}
    criteria = {c: f"{'below' if op == '<' else 'at least'} {t:g} for every model on the whole 90 % interval, with "
                   "GD's grid interior and the positive control passed" for c, (op, t) in THRESHOLDS.items()}
    if result is None:
        return [{"claim": c, "passed": None, "value": None, "criterion": criteria[c],  # nothing decided
                 "ours": "not run: python -m icdl.gpt_icl.mechanism --profile fair"} for c in names]
    edges = grid_edges(result["chosen"], result["gd_scan"], cfg)
    fair = bool(edges["fair"].all())
    m = paired_measures(result["blocks"], train_examples)
    at_edge = int((~edges["fair"]).sum())
    grid = "interior for every model" if fair else f"at an edge that matters for {at_edge} of {len(edges)} models"
    tail = f"; GD's grid {grid}" + gate_note(result, train_examples, control_passed)
    return gated_entries(names, words, m, {"control": float(control_passed), "fair": float(fair)}, tail, criteria)


def gate_note(result: dict, train_examples: int, control_passed: bool, r2: str = "R²") -> str:
    """The end of a gated entry's text: whether the positive control passed, and for how many models GD's own R²
    is below the model's (a "farther" that may be GD's inaccuracy, not another algorithm; ``r2``: what the R²
    is called, e.g. "seed-mean R²" where the alignment table holds several seeds per model)."""
    at = _r2s(result["alignment"], train_examples)
    weaker = int((at[GD_NETWORK] < at["model"]).sum())
    return (f"; positive control {'passed' if control_passed else 'not passed'}"
            + (f"; GD's own {r2} below the model's for {weaker} of {len(at)} models" if weaker else ""))


def gated_entries(names: dict[str, str], words: dict[str, str], numbers: dict, gates: dict[str, float], tail: str,
                  criteria: dict[str, str], over: str = "the test prompts") -> list[dict]:
    """Ledger entries of claims decided on the interval of a number over the models (``numbers[key]``: its
    value on every resample, row 0 on all prompts; ``numbers["models"]``: per model) with the registry's
    ``gates``: per claim (``names``: claim → key) the value, its 90 % interval, each model's value and
    ``tail``; the verdict is the registry's. ``over``: what the interval resamples."""
    out = []
    for claim, key in names.items():
        s = summary(numbers[key])
        per = "; ".join(f"depth {d} {a}: {v[key][0]:.3f}" for (d, a), v in numbers["models"].items())
        shown = (f"{s['value']:.3f} (90 % interval of this {'smallest' if key == 'cosine' else 'largest'} over the "
                 f"models, {s['lo']:.3f} to {s['hi']:.3f}, over resamples of {over})")
        values = {"value_lo": s["lo"], "value_hi": s["hi"], **gates}
        out.append({"claim": claim, "value": s["value"], "values": values,
                    "passed": criterion_verdict(claim, {"value": s["value"], **values}),
                    "ours": f"{words[key]}: {shown}; {per}{tail}", "criterion": criteria[claim]})
    return out


def _spread(values) -> str:
    """A range of numbers as the prose gives it: one number when they agree to the digit shown."""
    lo, hi = f"{min(values):.0f}", f"{max(values):.0f}"
    return lo if lo == hi else f"{lo} to {hi}"


def fair_glue(result: dict | None, cfg, train_examples: int, entries: list[dict],
              first: dict | None = None) -> dict[str, str]:
    """The prose's numbers of the fair run: its grid, the three judged numbers with their intervals (from the
    judge's own ``entries``), how many models chose a member at an edge that matters, GD's R² (chosen and best
    on the grid) against the models'; dashes while the run waits."""
    grid = {"fair_etas": ", ".join(f"{e:g}" for e in cfg["etas"]), "fair_steps": count(cfg["gd_steps"]),
            "fair_scales": ", ".join(f"{e:g}" for e in cfg["init_scales"]),
            "fair_lambdas": f"{min(cfg['lambdas']):g} to {max(cfg['lambdas']):g}"}
    keys = {"mech-fair-nearest-gd": "fair_pred", "mech-fair-sens-gd": "fair_sens", "mech-fair-cosine-gd": "fair_cos"}
    if result is None:
        return grid | {k: "—" for k in (*keys.values(), "fair_edges", "fair_gd_r2", "fair_best_r2", "fair_model_r2",
                                        "fair_edge_model", "fair_block_share", "fair_ratio_without", "fair_deepest",
                                        "fair_sens_nearer", "fair_sens_point_nearer", "fair_pred_straddles",
                                        "fair_inner", "fair_inner_pred_far", "fair_inner_sens_far",
                                        "fair_inner_cos_far", "fair_drift", "fair_moved", "fair_time",
                                        "fair_drift_same")}
    out = dict(grid)
    for e in entries:
        v = e["values"]
        out[keys[e["claim"]]] = f"{e['value']:.3f} (90 % interval {v['value_lo']:.3f} to {v['value_hi']:.3f})"
    edges = grid_edges(result["chosen"], result["gd_scan"], cfg)
    fits = fit_table(result["gd_fit"], result["chosen"], cfg)
    r2 = _r2s(result["alignment"], train_examples)

    def span(x):
        return f"{min(x):.2f} to {max(x):.2f}"

    sides = per_model_verdicts(result, cfg, train_examples)
    inner = sides[sides["interior"]]

    def n(frame, measure, side):
        return int(((frame["measure"] == measure) & (frame["side"] == side)).sum())

    models = len(edges)
    drift = same_member_drift(first, result, train_examples) if first is not None else None
    moved = None if drift is None else ~np.isclose(drift["first"], drift["fair"], rtol=1e-3)
    out |= {"fair_sens_nearer": f"{n(sides, 'sens', 'nearer')} of {models}",
            "fair_sens_point_nearer": f"{int(((sides['measure'] == 'sens') & (sides['value'] < 1)).sum())} of {models}",
            "fair_pred_straddles": f"{n(sides, 'pred', 'straddles')} of {models}",
            "fair_inner": f"{int(edges['fair'].sum())}",
            "fair_inner_pred_far": f"{n(inner, 'pred', 'farther')}",
            "fair_inner_sens_far": f"{n(inner, 'sens', 'farther')}",
            "fair_inner_cos_far": f"{n(inner, 'cosine', 'farther')}",
            "fair_moved": "—" if drift is None else f"{models - len(drift)} of {models}",
            "fair_time": _spread(pd.concat([c["gd_eta"] * c["gd_steps"] for c in
                                            (result["chosen"], *(() if first is None else (first["chosen"],)))])),
            "fair_drift_same": "—" if drift is None else f"{int((~moved).sum())} of {len(drift)}",
            "fair_drift": "—" if drift is None or not moved.any() else "; ".join(
                f"depth {r.depth} {r.attention}: {r.first:.3f} then {r.fair:.3f}"
                for r in drift[moved].itertuples())}
    worst = largest_block(result["blocks"], train_examples)
    deep = worst[worst["depth"] == worst["depth"].max()]
    at_edge = edges[~edges["fair"]]
    return out | {"fair_edges": f"{int((~edges['fair']).sum())} of {len(edges)}",
                  "fair_edge_model": "; ".join(
                      f"depth {r.depth} {r.attention}: η = {r.eta:g} and L = {count(r.steps)}, the scan still "
                      f"changing by {100 * r.steps_change:.1f} % over the last doubling" if r.steps_edge else
                      f"depth {r.depth} {r.attention}: η = {r.eta:g}, L = {count(r.steps)}"
                      for r in at_edge.itertuples()) or "none",
                  "fair_block_share": f"{100 * deep['share'].min():.0f} % to {100 * deep['share'].max():.0f} %",
                  "fair_ratio_without": span(worst["ratio_without"]),
                  "fair_deepest": f"{int(worst['depth'].max())}",
                  "fair_gd_r2": span(r2[GD_NETWORK]), "fair_model_r2": span(r2["model"]),
                  "fair_best_r2": span(fits["grid's best R², scan prompts"])}

