"""What the chapter ``gpt_mechanism`` shows of the mechanism study: its tables, readable headers, and the
numbers its prose quotes, formatted.

=======================  ==============================================================================================
:func:`seed_mean`        the measures per position as the mean over each model's seeds (the chapter's figures)
:func:`nearest_table`    the nearest candidate per model and prompt position on one mixture
:func:`chosen_table`     the settings chosen per model
:func:`design_glue`      the design's sizes, the chosen steps and the layers Theorem 1 would need for them
:func:`hypotheses_glue`  the numbers of one task's four hypotheses over the seeds, and the gates they leave unmet
:func:`control_table`,   the positive control: every candidate's three measures at the training length, and the
:func:`control_glue`     numbers the prose quotes
=======================  ==============================================================================================
"""

from __future__ import annotations

import pandas as pd

from icdl.gpt_icl.core import baselines as bl
from icdl.gpt_icl.core.tasks import PRETRAINING
from icdl.gpt_icl.mechanism import seeds
from icdl.gpt_icl.mechanism.judge import LINEAR_FITS, LOCAL_RULES, control, control_intervals, nearest
from icdl.gpt_icl.mechanism.measures import ADAM_MLP, AT_DEPTH_ONE, RIDGE
from icdl.gpt_icl.mechanism.numbers import summarised

#: the measures a seed mean is taken of (the alignment table's numbers)
MEASURES = ("pred_diff", "sens_diff", "cosine", "r2_candidate")


def seed_mean(alignment: pd.DataFrame) -> pd.DataFrame:
    """The alignment table of a run over seeds (a column ``seed``) as one row per model, candidate, mixture and
    position: each measure the mean over the model's seeds (NaN only where every seed's is: 3-NN's and the
    context mean's cosine). A table without seeds is returned as it is."""
    if "seed" not in alignment:
        return alignment
    keys = ["depth", "attention", "candidate", "mixture", "position"]
    return alignment.groupby(keys, sort=False)[list(MEASURES)].mean().reset_index()


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


def chosen_table(chosen: pd.DataFrame) -> pd.DataFrame:
    """The settings chosen per model, as the chapter's table shows them."""
    return chosen.rename(columns={"depth": "target depth", "gd_init_scale": "GD: start scale", "gd_eta": "GD: η",
                                  "gd_steps": "GD: L", "gd_pred_diff": "GD: difference (scan)",
                                  "ridge_lambda": "ridge: λ", "ridge_pred_diff": "ridge: difference (scan)"})


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
    c = control(blocks, train_examples)
    intervals = control_intervals(c)

    def shown(k):
        s = intervals[k]
        return f"{s['value']:.3f} (90 % interval {s['lo']:.3f} to {s['hi']:.3f})"

    fits = "; ".join(f"{att}: {AT_DEPTH_ONE.get(m['fit'], m['fit'])}"
                     for (_, att), m in sorted(c["models"].items(), key=lambda kv: kv[0][1], reverse=True))
    mlp_r2 = float(at[at["candidate"] == ADAM_MLP]["r2_candidate"].max())

    def versus(other):  # GD's prediction difference over another fit's, per model, with its interval
        return "; ".join(f"{att}: {s['value']:.2f} ({s['lo']:.2f} to {s['hi']:.2f})" for (_, att), m in
                         sorted(c["models"].items(), key=lambda kv: kv[0][1], reverse=True)
                         for s in [summarised(m["versus"][other], f"GD's prediction difference over {other}'s")])

    return dict(zip(keys, (shown("value"), shown("sens"), shown("cosine"), fits,
                           f"{model_r2.min():.3f} to {model_r2.max():.3f}", f"{mlp_r2:.3f}",
                           versus(bl.LEAST_SQUARES), versus(RIDGE))))




def design_glue(cfg, chosen: pd.DataFrame | None) -> dict[str, str]:
    """The design's sizes as the prose gives them (scan and measured prompts, GD's grid, its largest L) and, from
    the members the seeds' models chose (``chosen``; None while the run waits), the range of their steps L and the
    fewest layers Theorem 1's construction would need to run them: (2N + 4)·L for a target of N layers (ICDL
    Theorem 1), which a 3-layer model is far from."""
    from icdl.gpt_icl.core.algorithms import recorded_steps
    from icdl.repro.typeset import count

    out = {"mech_scan": count(cfg["scan_prompts"]), "mech_measure": count(cfg["measure_prompts"]),
           "mech_max_steps": count(cfg["gd_steps"]),
           "mech_grid": count(len(cfg["etas"]) * len(cfg["init_scales"]) * len(recorded_steps(cfg["gd_steps"]))),
           "mech_etas": ", ".join(f"{e:g}" for e in cfg["etas"]),
           "mech_scales": ", ".join(f"{s:g}" for s in cfg["init_scales"])}
    if chosen is None or chosen.empty:
        return out | {"mech_chosen_steps": "—", "mech_thm1_layers": "—"}
    steps = chosen["gd_steps"].astype(int)
    layers = int(((2 * chosen["depth"] + 4) * steps).min())
    lo, hi = count(int(steps.min())), count(int(steps.max()))
    return out | {"mech_chosen_steps": lo if lo == hi else f"{lo} to {hi}", "mech_thm1_layers": count(layers)}


def hypotheses_glue(result: dict | None, cfg, entries: list[dict], suffix: str = "") -> dict[str, str]:
    """The prose's numbers of one task's seeds run (``result``, None while it waits; ``cfg``: its profile,
    resolved; ``entries``: :func:`~icdl.gpt_icl.mechanism.seeds.judge_seeds` of the claims of ``suffix``):
    :func:`~icdl.gpt_icl.mechanism.seeds.seeds_glue`, then the registered gates its entries leave unmet
    (``seeds_unmet``, ``seeds_n01_unmet``: :func:`~icdl.gpt_icl.mechanism.seeds.unmet_words`)."""
    tag = suffix.replace("-", "_")
    return {**seeds.seeds_glue(result, cfg["train_examples"], entries, cfg, suffix=suffix),
            f"seeds{tag}_unmet": seeds.unmet_words(entries)}
