"""What the chapter ``gpt_scale`` shows of the scale study (:mod:`~icdl.gpt_icl.scale`): its tables and the
numbers its prose quotes, formatted, with each verdict word from the ledger's own judge
(:mod:`~icdl.gpt_icl.scale.judge`).

====================  ==========================================================================================
:func:`fits_table`    the fitted trend per model: shortfall, change per doubling, forecast, with their bands
:func:`end_table`     per model R² at the main study's length and at the end, beside the baselines
:func:`glue_values`   the numbers of the chapter's prose
:func:`flops_curve`   a study's trend with each snapshot's training FLOPs (the figure of shortfall against compute)
:func:`width_shown`   :func:`~icdl.gpt_icl.scale.judge.width_comparison` as the chapter shows it
:func:`width_glue`    the numbers of the prose about the wider models
====================  ==========================================================================================
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from icdl.gpt_icl.core import main_study
from icdl.gpt_icl.core.model import ATTENTIONS, InContextGPT
from icdl.gpt_icl.core.schedule import configs
from icdl.gpt_icl.scale.judge import (
    SCAN_RATES,
    WIDER,
    judge,
    judge_tuned_width,
    judge_wider,
    rates_scanned,
    training_flops,
)
from icdl.gpt_icl.scale.models import COMMAND, model_snapshots
from icdl.gpt_icl.scale.trend import PAPER_STEPS, fit_from, target_offset
from icdl.repro.typeset import count, fixed, span

# ---- what the chapter shows -----------------------------------------------------------------------------


def _rng(values, fmt: str) -> str:
    """The range of ``values`` (:func:`icdl.repro.typeset.span`): ``0.031–0.052``, ``−0.016 to −0.009`` where an
    end is negative, one value where both ends print alike."""
    return span(values, fmt)


def _num(v: float, fmt: str) -> str:
    """``v`` in ``fmt``, without the sign of a value that rounds to zero (``-0.000`` reads as a fall)."""
    return fixed(v, fmt)


def _in_book_order(shown: pd.DataFrame) -> pd.DataFrame:
    """A table of this chapter's models in the book's order: by target depth, then the attentions as every other
    table and legend lists them (:data:`~icdl.gpt_icl.core.model.ATTENTIONS`: softmax, relu), not alphabetically in
    one table and the other way round in the next."""
    rank = shown["attention"].map({a: i for i, a in enumerate(ATTENTIONS)})
    return shown.assign(_rank=rank).sort_values(["target depth", "_rank"], kind="stable").drop(columns="_rank")


def fits_table(fits: pd.DataFrame) -> pd.DataFrame:
    """The fitted lines per model as the chapter shows them: the target steps they span; the training length's
    shortfall (on the MLP's prompts) at both ends and its change per doubling of the target steps with its 90 %
    band (prompts and the snapshots' scatter), beside the band of the prompts alone and the change per doubling
    of the model's own steps (the warm phase counted). Objective 1's line is :func:`forecast_table` (one table of
    both was wider than the page)."""
    return _in_book_order(pd.DataFrame({
        "target depth": fits["depth"], "attention": fits["attention"],
        "steps fitted": [f"{count(r.first_target)} to {count(r.last_target)}" for r in fits.itertuples()],
        "shortfall at k = 40": [f"{r.shortfall_first:.3f} → {r.shortfall_last:.3f}"
                                              for r in fits.itertuples()],
        "per doubling (90 % band)": [f"{_num(r.per_doubling, '+.4f')} ({_num(r.per_doubling_lo, '+.4f')} "
                                            f"to {_num(r.per_doubling_hi, '+.4f')})" for r in fits.itertuples()],
        "prompts' band alone": [f"{_num(r.prompt_only_lo, '+.4f')} to {_num(r.prompt_only_hi, '+.4f')}"
                                        for r in fits.itertuples()],
        "with the warm phase": [_num(v, "+.4f") for v in fits["per_doubling_own_clock"]],
    }))


def forecast_table(fits: pd.DataFrame) -> pd.DataFrame:
    """Objective 1's number per model at the last snapshot and its fitted line extended to the paper's steps, with
    its band. (The forecast the claim records, the target step from which that line stays within the tolerance,
    says no more than whether the line ends within it.)"""
    return _in_book_order(pd.DataFrame({
        "target depth": fits["depth"], "attention": fits["attention"],
        "objective 1, last snapshot": fits["obj1_last"].map("{:.3f}".format),
        f"its line at {count(PAPER_STEPS)} steps (band)": [
            f"{_num(r.obj1_at_horizon, '.3f')} ({_num(r.obj1_at_horizon_lo, '.3f')} to "
            f"{_num(r.obj1_at_horizon_hi, '.3f')})" for r in fits.itertuples()],
    }))


def leave_first_table(t: pd.DataFrame) -> pd.DataFrame:
    """:func:`~icdl.gpt_icl.scale.trend.leave_first_out` as the chapter shows it: per model the change per
    doubling of the shortfall with its 90 % band over every fitted snapshot and without the first."""
    def cell(v, lo, hi):
        return f"{_num(v, '+.4f')} ({_num(lo, '+.4f')} to {_num(hi, '+.4f')})"

    return _in_book_order(pd.DataFrame({
        "target depth": t["depth"], "attention": t["attention"],
        "per doubling, fitted snapshots": [cell(r.per_doubling, r.lo, r.hi) for r in t.itertuples()],
        "without the first": [cell(r.without_first, r.without_lo, r.without_hi) for r in t.itertuples()]}))


def leave_first_glue(t: pd.DataFrame) -> dict[str, str]:
    """The prose's numbers of the leave-first-out lines: the model whose slope moves most and its two slopes,
    how many slopes change sign, and how many bands lie wholly below 0 with and without the first snapshot."""
    r = t.loc[(t["per_doubling"] - t["without_first"]).abs().idxmax()]
    return {"lfo_model": f"target depth {int(r['depth'])}, {r['attention']} attention",
            "lfo_from": _num(r["per_doubling"], "+.4f"), "lfo_to": _num(r["without_first"], "+.4f"),
            "lfo_flips": f"{int((~t['sign_kept']).sum())} of {len(t)}",
            "lfo_below": f"{int((t['hi'] < 0).sum())} of {len(t)}",
            "lfo_below_without": f"{int((t['without_hi'] < 0).sum())} of {len(t)}"}


def end_table(points: pd.DataFrame, cfg) -> pd.DataFrame:
    """Per model: R² at the training length at the main study's length (1×) and after the longest training,
    beside the MLP (on its own prompts), least squares, 3-NN and the context mean on the same prompts."""
    tf = points[points["method"] == "transformer"]
    start = fit_from(cfg)
    rows = []
    for (depth, att), g in tf.groupby(["depth", "attention"]):
        base = points[(points["depth"] == depth) & (points["method"] != "transformer")].set_index("method")
        r = g.set_index("step")["r2_all"]
        rows.append({"target depth": depth, "attention": att, "R² at the main study's steps": r[start[att]],
                     "R² at the end": r[r.index.max()],
                     "MLP": base.loc["mlp", "r2_mlp_prompts"], "least squares": base.loc["least_squares", "r2_all"],
                     "3-NN": base.loc["knn", "r2_all"], "context mean": base.loc["context_mean", "r2_all"]})
    return _in_book_order(pd.DataFrame(rows))


def _forecast_words(fits: pd.DataFrame, tolerance: float) -> str:
    """Objective 1's lines at the paper's steps in words: how many end within the tolerance on their whole band,
    how many above it on their whole band, how many straddle it."""
    within = int((fits["obj1_at_horizon_hi"] <= tolerance).sum())
    above = int((fits["obj1_at_horizon_lo"] > tolerance).sum())
    parts = [f"{n} of {len(fits)} {what}" for n, what in (
        (within, "within it on their whole band"), (above, "above it on their whole band"),
        (len(fits) - within - above, "with a band that straddles it")) if n]
    return "; ".join(parts)


def _model_at(fits: pd.DataFrame, col: str) -> str:
    """The model with the largest ``col``, as the prose names it."""
    r = fits.loc[fits[col].idxmax()]
    return f"target depth {r['depth']}, {r['attention']} attention"


def _straddlers(fits: pd.DataFrame, tolerance: float) -> str:
    """The models whose line's band at the paper's steps straddles objective 1's tolerance, with its upper end."""
    s = fits[(fits["obj1_at_horizon_lo"] <= tolerance) & (fits["obj1_at_horizon_hi"] > tolerance)]
    return "; ".join(f"target depth {r.depth} {r.attention} (up to {r.obj1_at_horizon_hi:.3f})"
                     for r in s.itertuples()) or "none"


def _with_interval(entries: list[dict], claim: str) -> str:
    """A judged number as the prose gives it: "value (90 % interval lo to hi)", or the value alone."""
    e = next(e for e in entries if e["claim"] == claim)
    v = e.get("values", {})
    if "value_lo" not in v:
        return f"{e['value']:.3f}"
    return f"{e['value']:.3f} (90 % interval {v['value_lo']:.3f} to {v['value_hi']:.3f})"


#: a judge's verdict in the prose's words, the statuses' own (None: undecided, as the ledger says it: inconclusive)
VERDICT_WORDS = {True: "passes", False: "fails", None: "is inconclusive"}


def verdict_word(entry: dict) -> str:
    """A judged claim's verdict as the prose says it, from its registered criterion on the entry's numbers -- gates
    and intervals included, as the ledger decides it (a judge's own ``passed`` knows neither)."""
    from icdl.repro.claims import criterion_verdict

    if entry.get("value") is None:
        return "is not judged yet"
    return VERDICT_WORDS[criterion_verdict(entry["claim"], {"value": entry["value"], **(entry.get("values") or {})})]


def glue_values(res: dict, cfg) -> dict[str, str]:
    """The numbers the chapter's prose quotes, formatted."""
    fits, tr = res["fits"], res["trend"]
    last = tr.loc[tr.groupby(["depth", "attention"])["step"].idxmax()]
    judged = judge(fits, tr, res["points"], res["shift"], res.get("boot"), res.get("fit_draws"))
    verdicts = {e["claim"]: e["value"] for e in judged}
    holds = {e["claim"]: verdict_word(e) for e in judged}
    return {
        "scale_factor": f"{cfg['factor']}", "scale_steps": count(cfg['factor'] * cfg['steps']),
        "scale_relu_steps": count(cfg['factor'] * cfg['relu_steps']), "scale_main_steps": count(cfg['steps']),
        "scale_snapshots": f"{len(model_snapshots(cfg, 'softmax'))}",
        "scale_fitted_snapshots": _rng(fits["snapshots"], ".0f"),
        "scale_fitted_later": _rng(fits["snapshots"] - 1, ".0f"),
        "scale_short_first": _rng(fits["shortfall_first"], ".3f"),
        "scale_short_last": _rng(fits["shortfall_last"], ".3f"),
        "scale_per_doubling": _rng(fits["per_doubling"], "+.4f"),
        "scale_lead_knn": _rng(last["lead_knn"], "+.3f"), "scale_lead_ls": _rng(last["lead_ls"], "+.3f"),
        "scale_forecast": _forecast_words(fits, main_study.CRITERIA["obj1_tolerance"]),
        "scale_horizon": count(PAPER_STEPS),
        "scale_at_horizon": _rng(fits["obj1_at_horizon"], ".3f"),
        "scale_target_first": _rng(fits["first_target"], ",.0f").replace(",", " "),
        "scale_target_last": _rng(fits["last_target"], ",.0f").replace(",", " "),
        "scale_prompt_band_hi": _num(fits["prompt_only_hi"].max(), "+.4f"),
        "scale_slope_hi_max": _num(fits["per_doubling_hi"].max(), "+.4f"),
        "scale_warm_steps": count(target_offset(cfg)["softmax"]),
        "scale_inherited_steps": count(-target_offset(cfg)["relu"]),
        "scale_target_growth_softmax": _rng((fits["last_target"] / fits["first_target"])[
            fits["attention"] == "softmax"], ".0f"),
        "scale_target_doublings": _rng(np.log2(fits["last_target"] / fits["first_target"]), ".1f"),
        "scale_target_growth_relu": _rng((fits["last_target"] / fits["first_target"])[
            fits["attention"] == "relu"], ".1f"),
        "scale_own_clock_softmax": _rng(fits.loc[fits["attention"] == "softmax", "per_doubling_own_clock"], "+.4f"),
        "scale_straddle_models": _straddlers(fits, main_study.CRITERIA["obj1_tolerance"]),
        "scale_slope_max": _num(fits["per_doubling"].max(), "+.4f"),
        "scale_slope_max_model": _model_at(fits, "per_doubling"),
        "scale_bands_above": f"{int((fits['per_doubling_hi'] > 0).sum())} of {len(fits)}",
        "scale_within_count": f"{int((fits['obj1_at_horizon_hi'] <= main_study.CRITERIA['obj1_tolerance']).sum())} "
                              f"of {len(fits)} models",
        "scale_band_hi_model": _model_at(fits, "per_doubling_hi"),
        "scale_prompt_hi_model": _model_at(fits, "prompt_only_hi"),
        "scale_doublings_ahead": _rng(np.log2(PAPER_STEPS / fits["last_target"]), ".1f"),
        **{f"scale_{name}_{att}": _rng(frame.loc[frame["attention"] == att, col], fmt)
           for att in ATTENTIONS for name, frame, col, fmt in (
               ("per_doubling", fits, "per_doubling", "+.4f"), ("short_first", fits, "shortfall_first", ".3f"),
               ("short_last", fits, "shortfall_last", ".3f"), ("lead_ls", last, "lead_ls", "+.3f"),
               ("lead_knn", last, "lead_knn", "+.3f"))
           if (frame["attention"] == att).any()},
        "scale_obj1": f"{verdicts['icdl-obj1-longer']:.3f}", "scale_obj3": f"{verdicts['icdl-obj3-longer']:.2f}",
        "scale_obj1_interval": _with_interval(judged, "icdl-obj1-longer"),
        "scale_obj1_floor": _rng(res["points"].loc[res["points"]["method"] == "mlp", "r2_mlp_prompts"] - 1, "+.3f"),
        "scale_obj1_margin": f"{main_study.CRITERIA['obj1_tolerance'] - verdicts['icdl-obj1-longer']:.3f}",
        "scale_obj1_tolerance": f"{main_study.CRITERIA['obj1_tolerance']:g}",
        "scale_obj3_max_drop": f"{main_study.CRITERIA['obj3_max_drop']:g}",
        # each claim's verdict as a word, from the same judge as the ledger (the prose cannot contradict it)
        **{f"scale_verdict_{claim.replace('-', '_')}": word for claim, word in holds.items()},
        "scale_minutes": f"{sum(j['seconds'] for j in res['jobs']) / 60:.0f}" if res["jobs"] else
                         f"{res['seconds'] / 60:.1f}",  # a run in one process: its own time
    }


# ---- what the chapter shows of the wider models -----------------------------------------------------------


def model_size(cfg) -> int:
    """Parameters of a profile's model (the softmax and the ReLU model have the same)."""
    return InContextGPT(configs(cfg, cfg["depths"][0], "softmax", cfg["n_layer"])[0]).num_params()


def flops_curve(res: dict, cfg) -> pd.DataFrame:
    """The trend of a study (:func:`trend`) with each snapshot's training FLOPs (:func:`training_flops`),
    for the figure of shortfall against compute."""
    tr = res["trend"].copy()
    per = {a: training_flops(cfg, a, 0) for a in ATTENTIONS}
    unit = {a: training_flops(cfg, a, 1) - per[a] for a in ATTENTIONS}
    tr["flops"] = [per[a] + unit[a] * s for a, s in zip(tr["attention"], tr["step"])]
    tr["width"] = cfg["n_embd"]
    return tr


def width_shown(cmp: pd.DataFrame) -> pd.DataFrame:
    """:func:`width_comparison` as the chapter shows it: per model the two widths' shortfalls at the main
    study's length and the change with its 90 % band, then the narrow model's compute-matched snapshot (``—``
    where there is none), its shortfall and the change from it."""
    narrow, wide = int(cmp["width_narrow"].iloc[0]), int(cmp["width_wide"].iloc[0])

    def band(v, lo, hi):
        return "—" if v != v else f"{_num(v, '+.3f')} ({_num(lo, '+.3f')} to {_num(hi, '+.3f')})"

    return _in_book_order(pd.DataFrame({
        "target depth": cmp["depth"], "attention": cmp["attention"],
        f"shortfall, width {narrow}": cmp["shortfall_narrow"].map("{:.3f}".format),
        f"shortfall, width {wide}": cmp["shortfall_wide"].map("{:.3f}".format),
        "change (90 % band)": [band(r.delta, r.delta_lo, r.delta_hi) for r in cmp.itertuples()],
        f"width {narrow} at the same FLOPs": ["—" if r.matched_step != r.matched_step or r.matched_step is None
                                              else f"{count(r.matched_step)} steps: {r.shortfall_matched:.3f}"
                                              for r in cmp.itertuples()],
        "change from it (90 % band)": [band(r.delta_matched, r.delta_matched_lo, r.delta_matched_hi)
                                       for r in cmp.itertuples()],
    }))


def width_glue(cmp: pd.DataFrame | None, wide: dict | None, ncfg, wcfg, narrow: dict | None = None
               ) -> dict[str, str]:
    """The numbers the chapter's prose quotes about the wider models (the sizes even where the run has not been
    made; its results and verdict words from :func:`judge_wider` and :func:`judge_tuned_width`, the ledger's
    judges, where it has)."""
    def per_step(cfg):
        return training_flops(cfg, "softmax", 1)

    out = {"width_narrow": f"{ncfg['n_embd']}", "width_wide": f"{wcfg['n_embd']}",
           "width_heads_narrow": f"{ncfg['n_head']}", "width_heads_wide": f"{wcfg['n_head']}",
           "width_params_narrow": count(model_size(ncfg)), "width_params_wide": count(model_size(wcfg)),
           "width_params_ratio": f"{model_size(wcfg) / model_size(ncfg):.1f}",
           "width_flops_ratio": f"{per_step(wcfg) / per_step(ncfg):.2f}", "width_steps": count(wcfg['steps']),
           "width_command": COMMAND.format(profile=WIDER), "width_scan_rates": f"{SCAN_RATES}"}
    judged = judge_wider(cmp, wide)
    out |= {f"width_verdict_{e['claim'].replace('-', '_')}": "is not judged yet" if cmp is None or wide is None
            else verdict_word(e) for e in (*judged, *judge_tuned_width(cmp, narrow, wide, wcfg))}
    out["width_rates"] = f"{rates_scanned(wcfg)}"
    if cmp is None or wide is None:
        return out | {k: "not run" for k in ("width_delta", "width_delta_softmax", "width_delta_relu",
                                              "width_matched", "width_obj1", "width_obj3", "width_minutes")}
    values = {e["claim"]: e["value"] for e in judged}
    matched = cmp.dropna(subset=["delta_matched"])
    out |= {"width_delta": _rng(cmp["delta"], "+.3f"),
            **{f"width_delta_{a}": _rng(cmp.loc[cmp["attention"] == a, "delta"], "+.3f") for a in ATTENTIONS},
            "width_matched": (f"{_rng(matched['delta_matched'], '+.3f')} for the {len(matched)} "
                              f"{'model' if len(matched) == 1 else 'models'} with one" if len(matched)
                              else "no model has one"),
            "width_obj1": f"{values['icdl-obj1-wider']:.3f}", "width_obj3": f"{values['icdl-obj3-wider']:.2f}",
            "width_minutes": f"{sum(j['seconds'] for j in wide['jobs']) / 60:.0f}" if wide.get("jobs") else
                             f"{wide.get('seconds', 0.0) / 60:.1f}"}  # a run in one process: its own time
    return out
