"""The scale study's verdicts (chapter ``gpt_scale``, :mod:`~icdl.gpt_icl.scale`): the ledger entries of the
claims about longer training, and the wider models (profile ``wide``) beside the reference's, at the same steps
and at the same training FLOPs.

=============================  ======================================================================================
:func:`context_mean_leads`     each longest-trained model's lead over the context mean (the learning gate's input)
:func:`judge`                  the ledger entries of the scale claims (:data:`icdl.repro.claims.CRITERIA`), each
                               behind the learning gate, as every entry of this module
:func:`training_flops`         FLOPs of training a model of a profile to a given step
:func:`width_comparison`       the ``wide`` profile's models beside the reference's: at the same steps, and at the
                               reference's snapshot of the nearest training FLOPs
:func:`judge_wider`            the ledger entries of the wider models
:func:`judge_tuned_width`      the entries of the width claims that ask for the wider models' learning rate tuned
=============================  ======================================================================================
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd

from icdl.gpt_icl.core import main_study
from icdl.gpt_icl.core.intervals import point, prompt_only
from icdl.gpt_icl.core.learning import KEY, gate, gated
from icdl.gpt_icl.core.model import ATTENTIONS
from icdl.gpt_icl.core.schedule import configs
from icdl.gpt_icl.scale.models import COMMAND
from icdl.gpt_icl.scale.trend import PAPER_STEPS, band, fit_from
from icdl.repro.claims import CRITERIA, criterion_verdict
from icdl.repro.typeset import count

# ---- the ledger ---------------------------------------------------------------------------------------


def extreme_words(which: str, value: str, lo: str, hi: str) -> str:
    """The number a claim about every model judges -- the largest or smallest over the models -- with its interval,
    said as what it is: the interval of that extreme with every model resampled together, which is not the band
    the same model's own row gives (the bug: "+0.0008 (−0.0052 to +0.0064)" on a model's row, then "the largest,
    +0.0008 (90 % interval −0.0031 to +0.0103)", one number with two intervals and the reason far below)."""
    return (f"the {which} over the models, {value}; the claim's 90 % interval is that of the {which} with every "
            f"model resampled together, {lo} to {hi}, not the band of one model's row")

def obj3_drop(shift: pd.DataFrame) -> pd.DataFrame:
    """Objective 3 on the longest-trained models: per target depth and attention, the largest fall of R² at
    the training length from μ = 0 to a shifted μ (as :func:`icdl.gpt_icl.core.main_study.verdict_tables`)."""
    rows = []
    for (depth, attention), g in shift.groupby(["depth", "attention"]):
        at0 = float(g.loc[g["mu"] == 0, "r2"].iloc[0])
        rows.append({"depth": depth, "attention": attention, "max_drop": at0 - float(g.loc[g["mu"] != 0, "r2"].min())})
    return pd.DataFrame(rows)


#: the level of the claims' intervals: the experiments' protocol (icdl.gpt_icl.core.intervals.LEVEL)
LEVEL = 0.90


def lead_knn_resamples(points: pd.DataFrame, boot: dict[str, dict[str, list]]) -> np.ndarray:
    """The smallest lead over 3-NN over the models at their last snapshot, on every bootstrap resample of the
    test prompts (``boot`` of the scale result: R² on each resample, paired within a target depth; the depths'
    resamples are independent, so taking the minimum across them resample by resample is itself a resample)."""
    tf = points[points["method"] == "transformer"]
    last = tf.loc[tf.groupby(["depth", "attention"])["step"].idxmax()]
    leads = [np.asarray(boot[str(r.depth)][f"{r.attention}:{r.step}@all"], dtype=float)
             - np.asarray(boot[str(r.depth)]["knn@all"], dtype=float) for r in last.itertuples()]
    return np.min(leads, axis=0)


def context_mean_leads(points: pd.DataFrame, boot: dict[str, dict[str, list]] | None) -> dict[str, np.ndarray]:
    """``{model: rows}``: each model's R² at its last snapshot minus the context mean's at the training length, row 0
    on all the test prompts, then on every bootstrap resample of ``boot`` (paired within a target depth; one seed:
    no seed rows, :func:`~icdl.gpt_icl.core.intervals.prompt_only`); without ``boot``, the point alone. The learning
    gate's input (:func:`icdl.gpt_icl.core.learning.gate`): the claims are about the longest-trained models."""
    tf = points[points["method"] == "transformer"]
    last = tf.loc[tf.groupby(["depth", "attention"])["step"].idxmax()]
    out = {}
    for r in last.itertuples():
        cm = points[(points["method"] == "context_mean") & (points["depth"] == r.depth)]["r2_all"].iloc[0]
        lead = float(r.r2_all - cm)
        if boot is None:
            out[f"target depth {r.depth}, {r.attention}, step {count(r.step)}"] = point(lead)
            continue
        b = boot[str(r.depth)]
        resampled = np.asarray(b[f"{r.attention}:{r.step}@all"], float) - np.asarray(b["context_mean@all"], float)
        out[f"target depth {r.depth}, {r.attention}, step {count(r.step)}"] = prompt_only(lead, resampled)
    return out


#: the seeds of every model of this study: the main study's seed 0, trained on (the registry's gate
#: :data:`icdl.repro.claims.base.SEEDED` asks a claim about trained models for three)
SEEDS_TRAINED = 1


def seeded(entries: list[dict]) -> list[dict]:
    """``entries`` with the number of seeds their models were trained on among the recorded numbers, and the
    registry's verdict on all of them: with one seed, the gate :data:`icdl.repro.claims.base.SEEDED` is unmet and a
    judged claim is inconclusive, its reason in ``ours``."""
    out = []
    for e in entries:
        values = {**e.get("values", {}), "trained_seeds": float(SEEDS_TRAINED)}
        e = {**e, "values": values}
        if e.get("value") is not None and e["value"] == e["value"]:  # judged (not waiting for its run)
            e["passed"] = criterion_verdict(e["claim"], {"value": e["value"], **values})
            need = next(c.threshold for c in CRITERIA[e["claim"]] if c.key == "trained_seeds")
            if SEEDS_TRAINED < need:
                e["ours"] = (f"{e['ours']}; not decided: the models were trained on {SEEDS_TRAINED} seed, the "
                             f"registered gate asks for {need:g}")
        out.append(e)
    return out


def judge(fits: pd.DataFrame, tr: pd.DataFrame, points: pd.DataFrame, shift: pd.DataFrame,
          boot: dict[str, dict[str, list]] | None = None, draws: dict | None = None) -> list[dict]:
    """The ledger entries of the scale claims: the shortfall falls with training (the largest change per
    doubling of the target steps and the largest upper end of its band, both below 0), objective 1 on the
    longest-trained models (``objective1``: :func:`icdl.gpt_icl.core.main_study` value, the largest shortfall over
    MLP positions), the lead over 3-NN at the last snapshot (smallest over models, above 0), the forecast of
    objective 1's number within the paper's steps (the largest forecast over models at most
    :data:`PAPER_STEPS`), objective 3 on the longest-trained models (the largest fall at most objective 3's
    bound). With ``boot`` (the result's bootstrap resamples) the lead over 3-NN, and with ``draws``
    (:func:`~icdl.gpt_icl.scale.trend.fit_trend`'s) the largest slope, the largest forecast and objective 1's
    largest number at the last snapshot (moved by the snapshots' scatter), carry their
    :data:`LEVEL` interval -- of the largest (smallest) over the models, draw by draw -- and are decided on it,
    as every interval-judged claim of sec. 5 is: a margin inside the noise is inconclusive."""
    tolerance, max_drop = main_study.CRITERIA["obj1_tolerance"], main_study.CRITERIA["obj3_max_drop"]
    last = tr.loc[tr.groupby(["depth", "attention"])["step"].idxmax()]
    tf = points[points["method"] == "transformer"]
    final = tf.loc[tf.groupby(["depth", "attention"])["step"].idxmax()]
    objective1 = float(final["obj1"].max())
    drops = obj3_drop(shift)
    objective3 = float(drops["max_drop"].max())
    q = 1 - LEVEL

    def listing(t, col, fmt):
        return "; ".join(f"depth {r.depth} {r.attention}: {fmt(getattr(r, col))}" for r in t.itertuples())

    slope, slope_hi = float(fits["per_doubling"].max()), float(fits["per_doubling_hi"].max())
    lead = float(last["lead_knn"].min())
    forecast = float(fits["forecast"].max())
    knn = {"passed": lead > 0, "value": lead, "criterion": "above 0 for every model",
           "ours": "R² over 3-NN's at the training length after the longest training: "
                   + listing(last, "lead_knn", lambda v: f"{v:+.4f}")}
    if boot is not None:
        lo, hi = band(lead_knn_resamples(points, boot), q)
        knn |= {"passed": True if lo > 0 else False if hi <= 0 else None,
                "values": {"value_lo": float(lo), "value_hi": float(hi)},
                "criterion": "above 0 for every model, on the whole 90 % interval over the test prompts",
                "ours": f"{knn['ours']}; {extreme_words('smallest', f'{lead:+.4f}', f'{lo:+.4f}', f'{hi:+.4f}')}"}
    obj1 = {"value": objective1, "criterion": f"at most {tolerance} (objective 1's tolerance)",
            "ours": f"largest shortfall below the MLP at its positions up to the training length, longest-trained "
                    f"models: {objective1:.3f}"}
    falls = {"value": slope, "values": {"slope_hi": slope_hi},
             "ours": "change of the shortfall below the MLP per doubling of the steps on the target family (90 % "
                     "band over the prompts and the snapshots' scatter): "
                     + "; ".join(f"depth {r.depth} {r.attention}: {r.per_doubling:+.4f} ({r.per_doubling_lo:+.4f} "
                                 f"to {r.per_doubling_hi:+.4f})" for r in fits.itertuples()),
             "criterion": "below 0 for every model, the upper end of the band too"}
    ahead = {"value": forecast,
             "ours": "target steps from which the line of objective 1's number, extended to "
                     f"{count(PAPER_STEPS)}, stays within its tolerance: " + "; ".join(
                         f"depth {r.depth} {r.attention}: " + ("never" if np.isinf(r.forecast) else count(r.forecast))
                         + (f" (the line at {count(PAPER_STEPS)}: {r.obj1_at_horizon:.3f})"
                            if "obj1_at_horizon" in fits else "") for r in fits.itertuples()),
             "criterion": f"at most the paper's {count(PAPER_STEPS)} steps for every model"}
    if draws:
        lo, hi = band(np.max([d["slope"] for d in draws.values()], axis=0), q)
        falls["values"] |= {"value_lo": lo, "value_hi": hi}
        falls["ours"] += "; " + extreme_words("largest", f"{slope:+.4f}", f"{lo:+.4f}", f"{hi:+.4f}")
        flo, fhi = band(np.max([d["forecast"] for d in draws.values()], axis=0), q)
        ahead["values"] = {"value_lo": flo, "value_hi": fhi}
        ahead["ours"] += "; " + extreme_words("largest", *("never" if np.isinf(v) else count(v)
                                                          for v in (forecast, flo, fhi)))
        ahead["criterion"] += ", on the whole 90 % interval over the snapshots' scatter"
        olo, ohi = band(np.max([d["obj1_last"] for d in draws.values()], axis=0), q)
        obj1 |= {"values": {"value_lo": olo, "value_hi": ohi},
                 "criterion": obj1["criterion"] + ", on the whole 90 % interval over the snapshots' scatter",
                 "ours": obj1["ours"] + f" (90 % interval {olo:.3f} to {ohi:.3f}, from the scatter of each "
                                        "model's snapshots about its line)"}
    falls["passed"] = criterion_verdict("scale-shortfall-falls", {"value": slope, **falls["values"]})
    obj1["passed"] = criterion_verdict("icdl-obj1-longer", {"value": objective1, **obj1.get("values", {})})
    ahead["passed"] = criterion_verdict("scale-forecast", {"value": forecast, **ahead.get("values", {})})
    learned = gate(context_mean_leads(points, boot))
    return seeded([gated(e, learned) for e in (
        {"claim": "scale-shortfall-falls", **falls},
        {"claim": "icdl-obj1-longer", **obj1},
        {"claim": "scale-beats-knn", **knn},
        {"claim": "scale-forecast", **ahead},
        {"claim": "icdl-obj3-longer", "passed": objective3 <= max_drop, "value": objective3,
         "ours": "largest fall of R² at the training length when μ moves to ±0.5, longest-trained models: "
                 + listing(drops, "max_drop", lambda v: f"{v:.3f}"),
         "criterion": f"at most {max_drop} (objective 3's bound)"},
    )])


# ---- the wider models (profile ``wide``) beside the reference's ------------------------------------------

#: the profile of the wider models, and the one they are compared with
WIDER, NARROWER = "wide", "reference"
#: a reference snapshot is compute-matched to a wider model when their training FLOPs differ by at most this
#: factor (half a doubling either way)
MATCH_WITHIN = 2 ** 0.5


def training_flops(cfg, attention: str, step: int) -> float:
    """FLOPs of training a model of the profile to ``step`` of its own steps (forward and backward,
    :func:`icdl.gpt_icl.core.measure.flops_per_step`); a ReLU model that starts from the softmax model at the main
    study's length counts that model's steps too."""
    model = configs(cfg, cfg["depths"][0], attention, cfg["n_layer"])[0]
    start = cfg["steps"] if attention == "relu" and cfg["relu_init"] == "softmax" else 0
    return float(_flops_per_step(model, cfg["batch"], cfg["train_examples"]) * (start + step))


@functools.lru_cache(maxsize=32)
def _flops_per_step(model, batch: int, examples: int) -> int:
    """:func:`icdl.gpt_icl.core.measure.flops_per_step`, counted once per model settings (a count runs a step)."""
    from icdl.gpt_icl.core.measure import flops_per_step

    return flops_per_step(model, batch, examples)


def _shortfall_samples(boot: dict, attention: str, step: int) -> np.ndarray:
    b = {k: np.asarray(v) for k, v in boot.items()}
    return b["mlp@mlp"] - b[f"{attention}:{step}@mlp"]


def _r2_at(points: pd.DataFrame, depth: int, attention: str, step: int) -> float:
    """A transformer's R² on the MLP's prompts at one snapshot."""
    at = points[(points["depth"] == depth) & (points["attention"] == attention) & (points["step"] == step)]
    return float(at["r2_mlp_prompts"].iloc[0])


def width_comparison(narrow: dict, wide: dict, ncfg, wcfg, q: float = 0.1) -> pd.DataFrame:
    """Per target depth and attention, the wider models (``wide``: the ``wide`` profile's result) beside the
    reference's (``narrow``): the shortfall below the MLP of each at the main study's length and the change
    from the narrow to the wide model (``delta``, below 0: the wider model is closer to the MLP), and the
    narrow model's snapshot whose training FLOPs are nearest the wide model's (within :data:`MATCH_WITHIN`;
    none for a model whose narrow run never reaches them) with the change from it (``delta_matched``). The
    bands (``q/2`` … ``1 − q/2``) are paired: both studies score the same test prompts with the same bootstrap
    resamples -- refused where their least-squares resamples differ."""
    rows = []
    for depth in sorted({int(d) for d in wide["points"]["depth"]}):
        bn, bw = narrow["boot"][str(depth)], wide["boot"][str(depth)]
        if not np.allclose(bn["least_squares@mlp"], bw["least_squares@mlp"]):
            raise ValueError(f"target depth {depth}: the two studies' bootstrap resamples differ, so their "
                             f"differences cannot be paired; score both with the same prompts and resamples")
        for attention in ATTENTIONS:
            step = fit_from(wcfg)[attention]
            if f"{attention}:{step}@mlp" not in bw:
                continue
            wide_s, narrow_s = _shortfall_samples(bw, attention, step), _shortfall_samples(bn, attention, step)
            mlp_n = narrow["points"][(narrow["points"]["depth"] == depth)
                                     & (narrow["points"]["method"] == "mlp")]["r2_mlp_prompts"].iloc[0]
            mlp_w = wide["points"][(wide["points"]["depth"] == depth)
                                   & (wide["points"]["method"] == "mlp")]["r2_mlp_prompts"].iloc[0]

            short_w = mlp_w - _r2_at(wide["points"], depth, attention, step)
            short_n = mlp_n - _r2_at(narrow["points"], depth, attention, step)
            lo, hi = np.quantile(wide_s - narrow_s, [q / 2, 1 - q / 2])
            flops = training_flops(wcfg, attention, step)
            mine = narrow["points"][(narrow["points"]["depth"] == depth) & (narrow["points"]["attention"] == attention)]
            steps = sorted(int(s) for s in mine["step"])
            ratio = {s: training_flops(ncfg, attention, s) / flops for s in steps}
            best = min(steps, key=lambda s: abs(math.log(ratio[s])))
            matched = best if 1 / MATCH_WITHIN <= ratio[best] <= MATCH_WITHIN else None
            row = {"depth": depth, "attention": attention, "step": step, "width_narrow": ncfg["n_embd"],
                   "width_wide": wcfg["n_embd"], "shortfall_narrow": short_n,
                   "shortfall_wide": short_w, "delta": short_w - short_n, "delta_lo": float(lo), "delta_hi": float(hi),
                   "flops_wide": flops, "matched_step": matched, "flops_ratio": ratio[best] if matched else np.nan,
                   "shortfall_matched": np.nan, "delta_matched": np.nan, "delta_matched_lo": np.nan,
                   "delta_matched_hi": np.nan}
            if matched is not None:
                short_m = mlp_n - _r2_at(narrow["points"], depth, attention, matched)
                mlo, mhi = np.quantile(wide_s - _shortfall_samples(bn, attention, matched), [q / 2, 1 - q / 2])
                row |= {"shortfall_matched": short_m, "delta_matched": short_w - short_m,
                        "delta_matched_lo": float(mlo), "delta_matched_hi": float(mhi)}
            rows.append(row)
    return pd.DataFrame(rows)


#: the least number of learning rates a scan at the wider models' width must try before the tuned width claims
#: count (``scale-wider-tuned-closer``, ``scale-width-tuned-over-steps``: their gate ``tuned``)
SCAN_RATES = 3


def rates_scanned(cfg) -> int:
    """How many learning rates the wider profile ``cfg`` tried at its width (``lr_scan``, where a profile has
    one; otherwise its one rate)."""
    return len(set(cfg.get("lr_scan", ()) or (cfg["lr"],)))


def delta_resamples(cmp: pd.DataFrame, narrow: dict, wide: dict, matched: bool = False) -> np.ndarray:
    """The largest over the models of the change of the shortfall from the narrow to the wide model, on every
    bootstrap resample of the test prompts (paired within a target depth: both studies score the same prompts
    with the same resamples; the depths' resamples are independent, so the largest across them, resample by
    resample, is itself a resample). ``matched``: against the narrow model's compute-matched snapshot (models
    without one are left out)."""
    rows = cmp.dropna(subset=["delta_matched"]) if matched else cmp
    out = [_shortfall_samples(wide["boot"][str(r.depth)], r.attention, r.step)
           - _shortfall_samples(narrow["boot"][str(r.depth)], r.attention, int(r.matched_step) if matched else r.step)
           for r in rows.itertuples()]
    return np.max(out, axis=0) if out else np.array([np.nan])


def judge_tuned_width(cmp: pd.DataFrame | None, narrow: dict | None, wide: dict | None, wcfg) -> list[dict]:
    """The ledger entries of the width claims with the wider models' learning rate tuned: the same numbers as
    :func:`judge_wider`'s, each with the :data:`LEVEL` interval of the largest over the models
    (:func:`delta_resamples`), and the gate ``tuned`` (:func:`rates_scanned` at least :data:`SCAN_RATES`).
    Unmet, the registry leaves them inconclusive: an untuned wider model cannot say whether width helps."""
    n = rates_scanned(wcfg)
    note = f"; the wider models' learning rate: {n} rate{'s' if n > 1 else ''} tried at their width " \
           f"(a scan needs {SCAN_RATES})"
    criteria = {"scale-wider-tuned-closer": "below 0 for every model on the whole 90 % interval, the wider "
                                            "models' learning rate chosen by a scan",
                "scale-width-tuned-over-steps": "below 0 for every compute-matched model on the whole 90 % "
                                                "interval, the wider models' learning rate chosen by a scan"}
    if cmp is None or wide is None or narrow is None:
        return [{"claim": c, "passed": None, "value": None, "criterion": t,
                 "ours": f"not run: {COMMAND.format(profile=WIDER)}"} for c, t in criteria.items()]
    learned = gate(context_mean_leads(wide["points"], wide.get("boot")))
    out = []
    for claim, matched, col in (("scale-wider-tuned-closer", False, "delta"),
                                ("scale-width-tuned-over-steps", True, "delta_matched")):
        value = float(cmp[col].max())
        lo, hi = band(delta_resamples(cmp, narrow, wide, matched), 1 - LEVEL)
        values = {"value_lo": lo, "value_hi": hi, "tuned": float(n >= SCAN_RATES), KEY: learned[KEY]}
        where = "at equal training FLOPs" if matched else "at the main study's length"
        out.append({"claim": claim, "value": value, "values": values, "criterion": criteria[claim],
                    "passed": criterion_verdict(claim, {"value": value, **values}),
                    "ours": f"largest change of the shortfall from width {cmp['width_narrow'].iloc[0]} to "
                            f"{cmp['width_wide'].iloc[0]} {where}: {value:+.4f} (90 % interval {lo:+.4f} to "
                            f"{hi:+.4f}){note}"})
    return seeded([gated(e, learned) for e in out])


def judge_wider(cmp: pd.DataFrame | None, wide: dict | None) -> list[dict]:
    """The ledger entries of objectives 1 and 3 on the wider models (:data:`icdl.repro.claims.CRITERIA`). Whether
    width brings the models closer is asked with the wider models' learning rate tuned
    (:func:`judge_tuned_width`); the same question on the main study's rate is a replaced design
    (``icdl.repro.claims.REPLACED``). Without a result (the run has not been made) the entries carry no number
    and hold nothing."""
    tolerance, max_drop = main_study.CRITERIA["obj1_tolerance"], main_study.CRITERIA["obj3_max_drop"]
    criteria = {"icdl-obj1-wider": f"at most {tolerance} (objective 1's tolerance)",
                "icdl-obj3-wider": f"at most {max_drop} (objective 3's bound)"}
    if cmp is None or wide is None:
        return [{"claim": c, "passed": None, "value": float("nan"), "criterion": t,
                 "ours": f"not run: {COMMAND.format(profile=WIDER)}"} for c, t in criteria.items()]
    tf = wide["points"][wide["points"]["method"] == "transformer"]
    final = tf.loc[tf.groupby(["depth", "attention"])["step"].idxmax()]
    objective1 = float(final["obj1"].max())
    drops = obj3_drop(wide["shift"])
    objective3 = float(drops["max_drop"].max())
    learned = gate(context_mean_leads(wide["points"], wide.get("boot")))
    return seeded([gated(e, learned) for e in (
        {"claim": "icdl-obj1-wider", "passed": objective1 <= tolerance, "value": objective1,
         "ours": f"largest shortfall below the MLP at its positions up to the training length, wider models: "
                 f"{objective1:.3f}",
         "criterion": criteria["icdl-obj1-wider"]},
        {"claim": "icdl-obj3-wider", "passed": objective3 <= max_drop, "value": objective3,
         "ours": "largest fall of R² at the training length when μ moves to ±0.5, wider models: "
                 + "; ".join(f"depth {r.depth} {r.attention}: {r.max_drop:.3f}" for r in drops.itertuples()),
         "criterion": criteria["icdl-obj3-wider"]},
    )])
