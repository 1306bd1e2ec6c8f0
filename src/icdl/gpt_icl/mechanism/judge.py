"""The mechanism study's verdicts (chapter ``gpt_mechanism``, :mod:`~icdl.gpt_icl.mechanism`): which candidate
is nearest each model, GD's prediction difference against the nearest simple rule's, and the ledger entries of
the hypotheses.

=====================  ================================================================================================
:func:`nearest`        per model, mixture and position: the candidate nearest the model
:func:`verdict_table`  per model and mixture at the training length: GD beside the nearest simple rule, their ratio
:func:`judge`          the ledger entries of the hypotheses (:data:`icdl.repro.claims.CRITERIA`)
:func:`judge_longer`   the entries of the hypotheses about the longer-trained models against the main ones
:func:`control`        the positive control's three numbers per model and over both, each on every resample of prompts
:func:`judge_control`  its ledger entry (``mech-control-linear``)
=====================  ================================================================================================
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from icdl.gpt_icl.core import baselines as bl
from icdl.gpt_icl.core.intervals import Draws, summary
from icdl.gpt_icl.core.tasks import PRETRAINING
from icdl.gpt_icl.core.verdicts import decide
from icdl.gpt_icl.mechanism.measures import ADAM_MLP, AT_DEPTH_ONE, GD_NETWORK, RIDGE, SHIFTED, SIMPLE_RULES

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



# ---- the positive control ----------------------------------------------------------------------------------

#: the control's answer: on linear targets the rules that fit a linear function to the examples (GD and the
#: Adam-trained MLP are fits of a one-layer, linear network there) ...
LINEAR_FITS = (bl.LEAST_SQUARES, RIDGE, GD_NETWORK, ADAM_MLP)
#: ... against the rules that fit nothing: a local average and the prompt's mean label
LOCAL_RULES = (bl.NEAREST_NEIGHBOURS, bl.CONTEXT_MEAN)
#: the control's registered thresholds (icdl.repro.claims.CRITERIA["mech-control-linear"]), for the words
CONTROL_CRITERION = ("at the training length, for both attentions: the nearest linear fit's prediction difference "
                     "below the nearest local rule's (ratio < 1), its sensitivity L2 difference below 0.25, and a "
                     "mean cosine of at least 0.9 with a linear fit; each on its whole 90 % interval over the "
                     "test prompts")


def control(blocks: pd.DataFrame, train_examples: int, draws: Draws | None = None) -> dict:
    """The positive control's numbers at the training length on the pretraining mixture, from the measures'
    sums per block (``blocks`` of :func:`icdl.gpt_icl.mechanism.study`), on every resample of one
    :class:`~icdl.gpt_icl.core.intervals.Draws` (row 0: all prompts; the same resampled prompts for every model and
    candidate: paired). Per model ``(depth, attention)``: ``ratio`` (the nearest linear fit's prediction
    difference over the nearest local rule's), ``sens`` (that same fit's sensitivity L2 difference: the fit
    nearest by prediction difference on each resample), ``cosine`` (the largest mean cosine with any linear
    fit) -- each as registered with the claim (icdl.repro.claims, ``mech-control-linear``) --
    ``fit`` (the linear fit nearest by prediction difference on all prompts) and ``versus`` (GD's prediction
    difference over least squares' and over ridge's: whether the measures tell the linear fits apart); and
    over the models ``value`` (the largest ratio), ``sens`` (the largest) and ``cosine`` (the smallest), each
    ``(resamples + 1,)``."""
    at = blocks[(blocks["mixture"] == PRETRAINING) & (blocks["position"] == train_examples)]
    if at.empty:
        raise ValueError(f"the result holds no sums per block at the training length (position {train_examples}) "
                         "on the pretraining mixture: rerun the control (python -m icdl.gpt_icl.mechanism --profile "
                         "control)")
    per_model = {}
    for key, g in at.groupby(["depth", "attention"]):
        g = g.sort_values("block")
        missing = set(LINEAR_FITS + LOCAL_RULES) - set(g["candidate"])
        if missing:
            raise ValueError(f"the control's sums lack the candidates {sorted(missing)} for model {key}")
        w = (draws or Draws(1, blocks=int(g["block"].nunique()))).weights          # (R, blocks)
        col = {c: {k: part[k].to_numpy(dtype=float) for k in ("pred", "sens", "cos", "own", "n")}
               for c, part in g.groupby("candidate")}

        def over(c, k, w=w, col=col):  # the resamples' sums of one candidate's column
            return w @ col[c][k]

        pred = {c: over(c, "pred") for c in LINEAR_FITS + LOCAL_RULES}
        own, n = over(LINEAR_FITS[0], "own"), over(LINEAR_FITS[0], "n")
        fits = np.stack([pred[c] for c in LINEAR_FITS])                       # (fits, R)
        nearest_fit = fits.argmin(0)                                            # per resample
        pick = np.arange(fits.shape[1])
        per_model[key] = {
            "ratio": fits.min(0) / np.stack([pred[c] for c in LOCAL_RULES]).min(0),
            "sens": np.stack([over(c, "sens") / own for c in LINEAR_FITS])[nearest_fit, pick],
            "cosine": np.stack([over(c, "cos") / n for c in LINEAR_FITS]).max(0),
            "fit": LINEAR_FITS[int(nearest_fit[0])],
            "versus": {other: pred[GD_NETWORK] / pred[other] for other in (bl.LEAST_SQUARES, RIDGE)}}
    return {"models": per_model,
            "value": np.max([m["ratio"] for m in per_model.values()], axis=0),
            "sens": np.max([m["sens"] for m in per_model.values()], axis=0),
            "cosine": np.min([m["cosine"] for m in per_model.values()], axis=0)}


def judge_control(blocks: pd.DataFrame | None, train_examples: int) -> list[dict]:
    """The ledger entry of the positive control (``mech-control-linear``): its three numbers with their 90 %
    intervals over the test prompts, and the registry's verdict on them (pass only if every interval lies on
    the passing side; inconclusive if one straddles). Without ``blocks`` (the run has not been made) the entry
    carries no number."""
    if blocks is None:
        return [{"claim": "mech-control-linear", "passed": False, "value": float("nan"),
                 "criterion": CONTROL_CRITERION,
                 "ours": "not run: python -m icdl.gpt_icl.mechanism --profile control"}]
    c = control(blocks, train_examples)
    s = {k: summary(c[k]) for k in ("value", "sens", "cosine")}
    verdicts = [decide(s[k]["lo"], s[k]["hi"], op, t) for k, op, t in (("value", "<", 1.0), ("sens", "<", 0.25),
                                                                          ("cosine", ">=", 0.9))]
    passed = False if False in verdicts else None if None in verdicts else True
    each = "; ".join(f"{att}: nearest fit {AT_DEPTH_ONE.get(m['fit'], m['fit'])}, ratio {m['ratio'][0]:.3f}, "
                     f"sensitivity {m['sens'][0]:.3f}, cosine {m['cosine'][0]:.3f}"
                     for (_, att), m in c["models"].items())

    def shown(k, fmt=".3f"):
        return f"{s[k]['value']:{fmt}} ({s[k]['lo']:{fmt}} to {s[k]['hi']:{fmt}})"

    return [{"claim": "mech-control-linear", "passed": passed, "value": s["value"]["value"],
             "values": {"value_lo": s["value"]["lo"], "value_hi": s["value"]["hi"],
                        **{f"{k}{e}": s[k][v] for k in ("sens", "cosine")
                           for e, v in (("", "value"), ("_lo", "lo"), ("_hi", "hi"))}},
             "ours": f"transformers trained on linear targets, at the training length (90 % intervals over the test "
                     f"prompts): largest ratio {shown('value')}, largest sensitivity difference {shown('sens')}, "
                     f"smallest cosine {shown('cosine')}; {each}",
             "criterion": CONTROL_CRITERION}]
