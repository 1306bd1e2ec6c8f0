"""The mechanism study's verdicts (chapter ``gpt_mechanism``, :mod:`~icdl.gpt_icl.mechanism`): which candidate
is nearest each model, GD's prediction difference against the nearest simple rule's, and the ledger entries of
the hypotheses.

=====================  ================================================================================================
:func:`nearest`        per model, mixture and position: the candidate nearest the model
:func:`verdict_table`  per model and mixture at the training length: GD beside the nearest simple rule, their ratio
:func:`judge`          the ledger entries of the hypotheses (:data:`icdl.repro.claims.CRITERIA`)
:func:`judge_longer`   the entries of the hypotheses about the longer-trained models against the main ones
=====================  ================================================================================================
"""

from __future__ import annotations

import pandas as pd

from .mechanism_measures import GD_NETWORK, SHIFTED, SIMPLE_RULES
from .tasks import PRETRAINING

# ---- the findings and their judge ------------------------------------------------------------------------


def nearest(alignment: pd.DataFrame) -> pd.DataFrame:
    """Per model, mixture and position: the candidate with the smallest ``pred_diff`` and its value."""
    a = alignment[alignment["candidate"] != "model"]
    idx = a.groupby(["depth", "attention", "mixture", "position"])["pred_diff"].idxmin()
    return a.loc[idx, ["depth", "attention", "mixture", "position", "candidate", "pred_diff"]].reset_index(drop=True)


def _r2(g: pd.DataFrame, candidate: str) -> float:
    """A candidate's own R² from its row (NaN where the measures hold none)."""
    if "r2_candidate" not in g or candidate not in g.index:
        return float("nan")
    return float(g.loc[candidate, "r2_candidate"])


def verdict_table(alignment: pd.DataFrame, train_examples: int) -> pd.DataFrame:
    """Per model and mixture at the training length (the query after ``train_examples − 1`` examples, the
    last position the model was trained on): GD's ``pred_diff`` and cosine, the nearest simple rule and its
    ``pred_diff``, and their ratio (below 1: GD on the network is the nearer); beside them GD's own R²
    (``gd_r2``) and the model's (``model_r2``) on the same prompts -- a GD member less accurate than the model
    cannot be what the model runs, so a ratio above 1 then says "not supported", not "refuted"."""
    at = alignment[alignment["position"] == train_examples]
    if at.empty:
        raise ValueError(f"no measures at the training length (position {train_examples}): the profile's positions "
                         "must include train_examples − 1")
    rows = []
    for (depth, att, mixture), g in at.groupby(["depth", "attention", "mixture"]):
        g = g.set_index("candidate")
        simple = g.loc[[c for c in SIMPLE_RULES if c in g.index], "pred_diff"]
        gd, best = float(g.loc[GD_NETWORK, "pred_diff"]), float(simple.min())
        # GD as near as a simple rule that is the model itself is not nearer: ratio 1, or inf if GD is not there
        ratio = gd / best if best > 0 else (1.0 if gd == 0 else float("inf"))
        rows.append({"depth": depth, "attention": att, "mixture": mixture, "position": int(g["position"].iloc[0]),
                     "gd_pred_diff": float(g.loc[GD_NETWORK, "pred_diff"]),
                     "gd_cosine": float(g.loc[GD_NETWORK, "cosine"]), "nearest_simple": simple.idxmin(),
                     "simple_pred_diff": float(simple.min()),
                     "ratio": ratio, "gd_r2": _r2(g, GD_NETWORK), "model_r2": _r2(g, "model")})
    return pd.DataFrame(rows)


def judge(alignment: pd.DataFrame, train_examples: int) -> list[dict]:
    """The ledger entries of the three hypotheses (criteria in :data:`icdl.repro.claims.CRITERIA`)."""
    v = verdict_table(alignment, train_examples)
    pre, shift = v[v["mixture"] == PRETRAINING], v[v["mixture"] == SHIFTED]

    def listing(t, col):
        return "; ".join(f"depth {r.depth} {r.attention}: {getattr(r, col):.2f}" for r in t.itertuples())

    ratio, cos, ratio_shift = float(pre["ratio"].max()), float(pre["gd_cosine"].min()), float(shift["ratio"].max())
    weaker = int((pre["gd_r2"] < pre["model_r2"]).sum())
    fairness = (f" (GD's own R² is below the model's for {weaker} of {len(pre)} models: for those a ratio above 1 "
                "says not supported, not refuted)") if weaker else ""
    return [
        {"claim": "mech-nearest-gd", "passed": ratio < 1, "value": ratio,
         "ours": "GD's prediction difference over the nearest simple rule's, at the training length: "
                 + listing(pre, "ratio") + fairness,
         "criterion": "below 1 for every model: each is nearer GD on the network than to least squares, ridge, "
                      "3-NN and the context mean"},
        {"claim": "mech-sensitivity-gd", "passed": cos >= 0.8, "value": cos,
         "ours": "mean cosine of $\\partial \\hat y / \\partial x_{\\mathrm{query}}$, model against GD, at the "
                 "training length: " + listing(pre, "gd_cosine"),
         "criterion": "at least 0.8 for every model"},
        {"claim": "mech-shift-gd", "passed": ratio_shift < 1, "value": ratio_shift,
         "ours": f"the same ratio on inputs from the mixture {SHIFTED}: " + listing(shift, "ratio"),
         "criterion": "below 1 for every model"},
    ]


#: what the two hypotheses about the longer-trained models ask (the criteria are in the registry)
LONGER_CRITERIA = {"mech-longer-toward-gd": "falls for every model (the largest change below 0)",
                   "mech-longer-nearest-gd": "below 1 for every model"}


def judge_longer(main: pd.DataFrame, longer: pd.DataFrame | None, train_examples: int) -> list[dict]:
    """The ledger entries of the hypotheses about the longer-trained models (``longer``: their alignment;
    ``main``: the main study's): every model moves toward GD on the network (GD's ratio to the nearest simple
    rule at the training length falls: the largest change over the models below 0), and hypothesis 1 on the
    longer-trained models (the largest ratio below 1). Pretraining mixture. Without ``longer`` (the run has
    not been made) the entries carry no number and hold nothing."""
    if longer is None:
        return [{"claim": claim, "passed": False, "value": float("nan"), "criterion": criterion,
                 "ours": "not run: python -m icdl.gpt_icl.mechanism --profile longer"}
                for claim, criterion in LONGER_CRITERIA.items()]

    def ratios(alignment):
        v = verdict_table(alignment, train_examples)
        return v[v["mixture"] == PRETRAINING].set_index(["depth", "attention"])["ratio"]

    before, after = ratios(main), ratios(longer)
    if set(before.index) != set(after.index):
        raise ValueError(f"the two studies cover other models: {sorted(before.index)} vs {sorted(after.index)}")
    change = (after - before.loc[after.index]).sort_index()
    worst, largest = float(change.max()), float(after.max())
    pairs = "; ".join(f"depth {d} {a}: {before[(d, a)]:.2f} → {after[(d, a)]:.2f}" for d, a in change.index)
    return [
        {"claim": "mech-longer-toward-gd", "passed": worst < 0, "value": worst,
         "ours": "GD's prediction difference over the nearest simple rule's at the training length, main study → "
                 "four times the training: " + pairs,
         "criterion": LONGER_CRITERIA["mech-longer-toward-gd"]},
        {"claim": "mech-longer-nearest-gd", "passed": largest < 1, "value": largest,
         "ours": f"the same ratio after four times the training: largest {largest:.2f}",
         "criterion": LONGER_CRITERIA["mech-longer-nearest-gd"]},
    ]

