"""Which candidate is nearest each model, and the positive control (chapter ``gpt_mechanism``): before the
measures' "no" for GD can mean anything, they must say "yes" where the answer is known -- transformers of the main
study's architecture and schedule trained on linear targets (``python -m icdl.gpt_icl.mechanism --profile
control``), whose nearest candidate must be a linear fit.

=====================  ================================================================================================
:func:`nearest`        per model, mixture and position: the candidate nearest the model
:func:`control`        the positive control's three numbers per model and over both, each on every resample of prompts
:func:`judge_control`  its ledger entry (``mech-control-linear``)
=====================  ================================================================================================
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from icdl.gpt_icl.core import baselines as bl
from icdl.gpt_icl.core.intervals import Draws
from icdl.gpt_icl.core.tasks import PRETRAINING
from icdl.gpt_icl.core.verdicts import decide
from icdl.gpt_icl.mechanism.measures import ADAM_MLP, AT_DEPTH_ONE, GD_NETWORK, RIDGE
from icdl.gpt_icl.mechanism.numbers import every_model


def nearest(alignment: pd.DataFrame) -> pd.DataFrame:
    """Per model, mixture and position: the candidate with the smallest ``pred_diff`` and its value."""
    a = alignment[alignment["candidate"] != "model"]
    idx = a.groupby(["depth", "attention", "mixture", "position"])["pred_diff"].idxmin()
    return a.loc[idx, ["depth", "attention", "mixture", "position", "candidate", "pred_diff"]].reset_index(drop=True)


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


#: the control's ratio, summarised on the log scale (:func:`~icdl.gpt_icl.mechanism.numbers.every_model`); its
#: sensitivity difference is a distance (to the model's own), not a ratio of two candidates', its cosine no ratio
CONTROL_RATIO = "the control's prediction ratio (nearest linear fit to nearest local rule)"


def control_intervals(c: dict) -> dict[str, dict]:
    """The control's three numbers (``c``: :func:`control`) as the judge decides them: the largest ratio and
    sensitivity difference and the smallest cosine over the models, each interval read off every model's own
    (:func:`~icdl.gpt_icl.mechanism.numbers.every_model`; the ratio's on the log scale: one seed's prompt rows, so
    its ends move only by the quantiles' interpolation)."""
    per_model = {"value": "ratio", "sens": "sens", "cosine": "cosine"}
    return {k: every_model({m: v[per_model[k]] for m, v in c["models"].items()}, largest=k != "cosine",
                           ratio=CONTROL_RATIO if k == "value" else None)
            for k in per_model}


def judge_control(blocks: pd.DataFrame | None, train_examples: int) -> list[dict]:
    """The ledger entry of the positive control (``mech-control-linear``): its three numbers with their 90 %
    intervals over the test prompts (:func:`control_intervals`), and the registry's verdict on them (pass only if
    every interval lies on the passing side; inconclusive if one straddles). Without ``blocks`` (the run has not
    been made) the entry carries no number."""
    if blocks is None:
        return [{"claim": "mech-control-linear", "passed": False, "value": float("nan"),
                 "criterion": CONTROL_CRITERION,
                 "ours": "not run: python -m icdl.gpt_icl.mechanism --profile control"}]
    c = control(blocks, train_examples)
    s = control_intervals(c)
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
                     f"prompts, each model's own): largest ratio {shown('value')}, largest sensitivity difference "
                     f"{shown('sens')}, smallest cosine {shown('cosine')}; {each}",
             "criterion": CONTROL_CRITERION}]
