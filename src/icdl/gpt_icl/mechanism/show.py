"""What the chapter ``gpt_mechanism`` shows of the mechanism study (:mod:`~icdl.gpt_icl.mechanism`): its
tables, readable headers, and the numbers its prose quotes, formatted.

=======================  ==============================================================================================
:func:`nearest_table`    the nearest candidate per model and prompt position on one mixture
:func:`verdict_display`  :func:`~icdl.gpt_icl.mechanism.judge.verdict_table` with readable headers
:func:`sensitivity_table` per model, GD's sensitivity difference and cosine beside least squares' and ridge's
:func:`chosen_table`     the settings chosen per model
:func:`flow_table`       whether GD's chosen setting is an optimum of the scan or an edge of its grid
:func:`glue_values`      the numbers of the chapter's prose
:func:`longer_table`,    the main study's models beside the ones trained four times longer
:func:`longer_glue`
:func:`control_table`,   the positive control: every candidate's three measures at the training length, and the
:func:`control_glue`     numbers the prose quotes
=======================  ==============================================================================================
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from icdl.gpt_icl.core import algorithms as al
from icdl.gpt_icl.core import baselines as bl
from icdl.gpt_icl.core.tasks import PRETRAINING
from icdl.gpt_icl.mechanism.judge import LINEAR_FITS, LOCAL_RULES, control, judge_longer, nearest, verdict_table
from icdl.gpt_icl.mechanism.measures import ADAM_MLP, AT_DEPTH_ONE, GD_NETWORK, RIDGE, SHIFTED

# ---- what the chapter shows ---------------------------------------------------------------------------------


def _counted(counts, total: int) -> str:
    """Candidates with the number of models each is nearest, as prose: "ridge for 3 of 6 models, the MLP (Adam,
    last epoch) for 3" -- a name that holds parentheses of its own is not followed by a second pair."""
    parts = [f"{name} for {n} of {total} models" if i == 0 else f"{name} for {n}"
             for i, (name, n) in enumerate(counts.items())]
    return ", ".join(parts)


def _named_at_depth(frame: pd.DataFrame, column: str = "candidate") -> pd.DataFrame:
    """Candidate names as the reader should read them: at target depth 1 (the positive control) the N-layer
    network GD and the MLP train is a one-layer, linear network, and says so."""
    if "depth" not in frame or not (frame["depth"] == 1).any():
        return frame
    return frame.assign(**{column: frame[column].where(frame["depth"] != 1, frame[column].replace(AT_DEPTH_ONE))})


def nearest_table(alignment: pd.DataFrame, mixture: str) -> pd.DataFrame:
    """The nearest candidate per model (rows) and prompt position (columns) on one mixture."""
    n = _named_at_depth(nearest(alignment))
    n = n[n["mixture"] == mixture]
    t = n.pivot(index=["depth", "attention"], columns="position", values="candidate")
    t.columns = [f"k = {c}" for c in t.columns]
    return t.reset_index().rename(columns={"depth": "target depth"})


def longer_table(main: pd.DataFrame, longer: pd.DataFrame, train_examples: int) -> pd.DataFrame:
    """Per model at the training length (pretraining mixture), the main study's models beside the ones trained
    four times longer: the nearest simple rule, GD's ratio to it, and the cosine of GD's sensitivity."""
    def at(alignment):
        v = verdict_table(alignment, train_examples)
        return v[v["mixture"] == PRETRAINING].set_index(["depth", "attention"])

    a, b = at(main), at(longer)
    return pd.DataFrame({
        "nearest simple rule (main)": a["nearest_simple"], "nearest simple rule (4×)": b["nearest_simple"],
        "GD / nearest (main)": a["ratio"].map("{:.2f}".format), "GD / nearest (4×)": b["ratio"].map("{:.2f}".format),
        "GD cosine (main)": a["gd_cosine"].map("{:.2f}".format), "GD cosine (4×)": b["gd_cosine"].map("{:.2f}".format),
    }).reset_index().rename(columns={"depth": "target depth"})


def longer_glue(main: pd.DataFrame, longer: pd.DataFrame | None, train_examples: int) -> dict[str, str]:
    """The prose's numbers about the longer-trained models: the range of GD's ratio and cosine over them, and
    which candidate is nearest each (dashes where the run has not been made)."""
    if longer is None:
        return {k: "—" for k in ("mech_longer_ratio", "mech_longer_cosine", "mech_longer_nearest",
                                 "mech_longer_rises")}
    v = verdict_table(longer, train_examples)
    pre = v[v["mixture"] == PRETRAINING]
    near = nearest(longer)
    near = near[(near["mixture"] == PRETRAINING) & (near["position"] == train_examples)]
    counts = near["candidate"].value_counts()
    change = next(e for e in judge_longer(main, longer, train_examples) if e["claim"] == "mech-longer-toward-gd")
    before = verdict_table(main, train_examples)
    before = before[before["mixture"] == PRETRAINING].set_index(["depth", "attention"])["ratio"]
    rises = int((pre.set_index(["depth", "attention"])["ratio"] > before).sum())
    return {"mech_longer_rises": f"{rises} of {len(pre)}" if change["value"] == change["value"] else "—",
            "mech_longer_ratio": f"{pre['ratio'].min():.2f} to {pre['ratio'].max():.2f}",
            "mech_longer_cosine": f"{pre['gd_cosine'].min():.2f} to {pre['gd_cosine'].max():.2f}",
            "mech_longer_nearest": _counted(counts, len(near))}


def chosen_table(chosen: pd.DataFrame) -> pd.DataFrame:
    """The settings chosen per model, as the chapter's table shows them."""
    return chosen.rename(columns={"depth": "target depth", "gd_init_scale": "GD: start scale", "gd_eta": "GD: η",
                                  "gd_steps": "GD: L", "gd_pred_diff": "GD: difference (scan)",
                                  "ridge_lambda": "ridge: λ", "ridge_pred_diff": "ridge: difference (scan)"})


def flow_table(gd_scan: pd.DataFrame, chosen: pd.DataFrame) -> pd.DataFrame:
    """Whether GD's chosen setting is a real optimum of the scan or an edge of its grid: per model, the scan's
    difference at the chosen (η, L), at (2η, L/2) -- the same time ηL of gradient flow -- and at (2η, L), twice
    the time, and at (η, L/2), half of it (NaN where the grid has no such cell). Equal first two and larger
    last two: the chosen time ηL is an interior optimum, and smaller η with more steps would only repeat it."""
    rows = []
    for r in chosen.itertuples():
        g = gd_scan[(gd_scan["depth"] == r.depth) & (gd_scan["attention"] == r.attention)
                    & (gd_scan["init_scale"] == r.gd_init_scale)].set_index(["eta", "steps"])["pred_diff"]
        eta, L = r.gd_eta, r.gd_steps
        cells = {"chosen": (eta, L), "2η, L/2 (same ηL)": (2 * eta, L // 2), "2η, L (twice ηL)": (2 * eta, L),
                 "η, L/2 (half ηL)": (eta, L // 2)}
        rows.append({"target depth": r.depth, "attention": r.attention, "η": eta, "L": L,
                     **{name: float(g.get(cell, np.nan)) for name, cell in cells.items()}})
    return pd.DataFrame(rows)


def verdict_display(verdicts: pd.DataFrame) -> pd.DataFrame:
    """:func:`verdict_table` as the chapter shows it: readable headers, the mixture as the inputs' weights."""
    return verdicts.rename(columns={
        "depth": "target depth", "mixture": "inputs ω", "position": "k", "gd_pred_diff": "GD: difference",
        "gd_cosine": "GD: cosine", "nearest_simple": "nearest simple rule", "simple_pred_diff": "its difference",
        "ratio": "GD / nearest simple", "gd_r2": "GD: R²", "model_r2": "model: R²"})


def sensitivity_table(alignment: pd.DataFrame, train_examples: int, mixture: str = PRETRAINING) -> pd.DataFrame:
    """Per model at the training length on one mixture: the two sensitivity measures -- the L2 difference
    ``sens_diff`` (0: the same sensitivity; 1: as far as a candidate with none) and the mean cosine -- for GD
    on the network beside least squares and ridge (3-NN and the context mean have no sensitivity), and which of
    the three is nearest by each measure."""
    at = alignment[(alignment["mixture"] == mixture) & (alignment["position"] == train_examples)]
    names = {GD_NETWORK: "GD", bl.LEAST_SQUARES: "LS", RIDGE: "ridge"}
    rows = []
    for (depth, att), g in at.groupby(["depth", "attention"]):
        g = g.set_index("candidate").loc[list(names)]
        rows.append({"target depth": depth, "attention": att,
                     **{f"L2: {short}": g.loc[c, "sens_diff"] for c, short in names.items()},
                     **{f"cos: {short}": g.loc[c, "cosine"] for c, short in names.items()},
                     "nearest by L2": names[g["sens_diff"].idxmin()], "nearest by cosine": names[g["cosine"].idxmax()]})
    return pd.DataFrame(rows)


def glue_values(alignment: pd.DataFrame, cfg) -> dict[str, str]:
    """The numbers the chapter's prose quotes, as text: which candidate is nearest each model at the training
    length (pretraining mixture), the range of the ratio and of the cosine over the models, and the sizes."""
    v = verdict_table(alignment, cfg["train_examples"])
    pre = v[v["mixture"] == PRETRAINING]
    near = nearest(alignment)
    near = near[(near["mixture"] == PRETRAINING) & (near["position"] == cfg["train_examples"])]
    counts = near["candidate"].value_counts()
    return {"mech_nearest": _counted(counts, len(near)),
            "mech_ratio": f"{pre['ratio'].min():.2f} to {pre['ratio'].max():.2f}",
            "mech_cosine": f"{pre['gd_cosine'].min():.2f} to {pre['gd_cosine'].max():.2f}",
            "mech_train": str(cfg["train_examples"]), "mech_scan": str(cfg["scan_prompts"]),
            "mech_measure": str(cfg["measure_prompts"]), "mech_max_steps": str(cfg["gd_steps"]),
            "mech_grid": str(len(cfg["etas"]) * len(cfg["init_scales"]) * len(al.recorded_steps(cfg["gd_steps"])))}



def fairness_glue(alignment: pd.DataFrame, chosen: pd.DataFrame, cfg) -> dict[str, str]:
    """Whether GD had a fair chance, as the chapter's prose quotes it: how many models' chosen GD member sits in
    the grid's corner (its smallest step size and its largest number of steps), and GD's own R² at the training
    length against the models' (pretraining mixture)."""
    v = verdict_table(alignment, cfg["train_examples"])
    pre = v[v["mixture"] == PRETRAINING]
    corner = int(((chosen["gd_eta"] == min(cfg["etas"])) & (chosen["gd_steps"] == cfg["gd_steps"])).sum())
    return {"mech_corner": f"{corner} of {len(chosen)}",
            "mech_gd_r2": f"{pre['gd_r2'].min():.2f} to {pre['gd_r2'].max():.2f}",
            "mech_model_r2": f"{pre['model_r2'].min():.2f} to {pre['model_r2'].max():.2f}",
            "mech_gd_weaker": f"{int((pre['gd_r2'] < pre['model_r2']).sum())} of {len(pre)}"}


# ---- the positive control ----------------------------------------------------------------------------------


def control_table(alignment: pd.DataFrame, train_examples: int) -> pd.DataFrame:
    """The positive control's models at the training length (pretraining mixture): per model and candidate, the
    three measures and the candidate's own R², linear fits first, the model's own R² in its own row."""
    at = alignment[(alignment["mixture"] == PRETRAINING) & (alignment["position"] == train_examples)]
    order = {c: i for i, c in enumerate(("model",) + LINEAR_FITS + LOCAL_RULES)}
    at = at.assign(order=at["candidate"].map(order)).sort_values(["attention", "order"], ascending=[False, True])
    named = _named_at_depth(at)["candidate"]
    out = pd.DataFrame({
        "model": at["attention"], "candidate": named.where(at["candidate"] != "model", "the model itself"),
        "kind": at["candidate"].map(lambda c: "linear fit" if c in LINEAR_FITS else "local rule" if c in LOCAL_RULES
                                    else "—"),
        "prediction difference": at["pred_diff"].where(at["candidate"] != "model"),
        "sensitivity difference": at["sens_diff"].where(at["candidate"] != "model"),
        "cosine": at["cosine"].where(at["candidate"] != "model"), "R²": at["r2_candidate"]})
    return out.reset_index(drop=True)


def control_glue(control_data: dict | None, train_examples: int) -> dict[str, str]:
    """The prose's numbers of the positive control (``control_data``: its result, :func:`~icdl.gpt_icl.mechanism.load`):
    the largest ratio, the largest sensitivity difference and the smallest cosine over its models, each with
    its 90 % interval, the linear fit nearest each model, the models' own R² and the Adam-trained MLP's at the
    training length (dashes where the run has not been made)."""
    keys = ("mech_control_ratio", "mech_control_sens", "mech_control_cosine", "mech_control_fits",
            "mech_control_model_r2", "mech_control_mlp_r2", "mech_control_gd_ls", "mech_control_gd_ridge")
    if control_data is None:
        return {k: "—" for k in keys}
    blocks, a = control_data["blocks"], control_data["alignment"]
    at = a[(a["mixture"] == PRETRAINING) & (a["position"] == train_examples)]
    model_r2 = at[at["candidate"] == "model"]["r2_candidate"]
    from icdl.gpt_icl.core.intervals import summary

    c = control(blocks, train_examples)

    def shown(k):
        s = summary(c[k])
        return f"{s['value']:.3f} (90 % interval {s['lo']:.3f} to {s['hi']:.3f})"

    fits = "; ".join(f"{att}: {AT_DEPTH_ONE.get(m['fit'], m['fit'])}"
                     for (_, att), m in sorted(c["models"].items(), key=lambda kv: kv[0][1], reverse=True))
    mlp_r2 = float(at[at["candidate"] == ADAM_MLP]["r2_candidate"].max())

    def versus(other):  # GD's prediction difference over another fit's, per model, with its interval
        return "; ".join(f"{att}: {s['value']:.2f} ({s['lo']:.2f} to {s['hi']:.2f})" for (_, att), m in
                         sorted(c["models"].items(), key=lambda kv: kv[0][1], reverse=True)
                         for s in [summary(m["versus"][other])])

    return dict(zip(keys, (shown("value"), shown("sens"), shown("cosine"), fits,
                           f"{model_r2.min():.3f} to {model_r2.max():.3f}", f"{mlp_r2:.3f}",
                           versus(bl.LEAST_SQUARES), versus(RIDGE))))


def shift_glue(alignment: pd.DataFrame, train_examples: int) -> dict[str, str]:
    """The prose's numbers on the shifted mixture at the training length: the models' R², GD's R² and the mean
    cosine of GD's sensitivity with the model's, each as a range over the models."""
    v = verdict_table(alignment, train_examples)
    v = v[v["mixture"] == SHIFTED]

    def span(col):
        return f"{v[col].min():.2f} to {v[col].max():.2f}".replace("-", "−")

    return {"shift_model_r2": span("model_r2"), "shift_gd_r2": span("gd_r2"), "shift_gd_cos": span("gd_cosine")}
