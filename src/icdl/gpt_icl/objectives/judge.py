"""ICDL's objectives 1–3 judged on the main study (chapter ``gpt_icl``): the tables behind the claims, the
ledger's judge, and the levels the chapter reads the models by.

The models, their runs and files are the main study's (:mod:`icdl.gpt_icl.core.main_study`); the numbers a
claim is judged on, with their intervals over seeds and prompts, are :mod:`icdl.gpt_icl.core.verdicts`'.

===========================  ================================================================================
:func:`assumptions`          a profile's choices beside ICDL's, as the chapter's table shows them
:func:`verdict_tables`       per model, the point values behind objectives 1–3
:func:`judge`                the ledger entries of objectives 1–3, each with its interval
:func:`shortfall`            objective 1 as judged: each model's shortfall below the MLP, with its interval
:func:`levels_at`            R² at one position beside the context mean and least squares
:func:`levels_glue`          its ranges over the models, as the prose reads them
:func:`gate_glue`            those ranges with the learning gate's words, of the judged run and the reference
:func:`switch_table`         what the softmax-to-ReLU switch keeps of the softmax model's lead
:func:`switch_glue`          its ranges, as the prose reads them
:func:`mlp_last`             the MLP's last position up to the training length, where objective 3 is tabled
:func:`shifted_r2`           objective 3 beside its yardsticks: R² on the shifted prompts, per depth and μ
:func:`shifted_glue`         its lowest R² of the MLP, of least squares and of the transformers
:func:`least_squares_shift`  least squares on the shifted prompts of every target depth of a run
===========================  ================================================================================
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from icdl.gpt_icl.core import baselines as bl
from icdl.gpt_icl.core import learning, verdicts
from icdl.gpt_icl.core.main_study import CRITERIA
from icdl.gpt_icl.core.model import ATTENTIONS
from icdl.gpt_icl.core.schedule import AT_SWITCH
from icdl.gpt_icl.core.tasks import MIXTURES, PRETRAINING
from icdl.repro.typeset import count, rate, span

_steps = count  # thousands as the prose writes them


def assumptions(cfg) -> pd.DataFrame:
    """The choices of a profile beside ICDL's, as the chapter's table shows them (text)."""
    return pd.DataFrame([
        ("target networks", f"{cfg['target_family']} hidden layers, K = 2d units, no biases, linear output",
         "not stated"),
        ("target parameters", "entries ~ N(0, 1), each layer divided by √fan-in", "N(0, I), no scaling stated"),
        ("label scale", "y divided by its standard deviation under training draws", "not stated"),
        ("input size d", f"{cfg['d']} (CPU profiles), 20 (paper profile)", "20"),
        ("model", f"{cfg['n_layer']} layers, {cfg['n_head']} heads, width {cfg['n_embd']}", "12, 8, 256"),
        ("ReLU attention", "σ(qᵀk/√dₕ)/nᵢ, nᵢ the positions token i attends to (causal); the 1/√dₕ is a "
                           "rescaled value map, the same functions", "σ(qᵀk)/n (Def. 7)"),
        ("seeds", f"{cfg['seeds']} per model (initial weights and training prompts)", "not stated"),
        ("optimiser", f"Adam, lr {rate(cfg['lr'])}, batch {cfg['batch']}, {cfg['train_examples']} examples per prompt",
         "batch 64, 500 000 steps, 50 examples + query"),
        ("softmax schedule", f"{_steps(cfg['steps'])} steps, the first {_steps(cfg['warm_steps'])} on "
                             f"{cfg['warm_family']} targets of width {cfg['warm_width']}"
         if cfg["warm_steps"] else f"{_steps(cfg['steps'])} steps from scratch on the target family", "not stated"),
        ("ReLU-attention schedule", f"{_steps(cfg['relu_steps'])} steps from the trained softmax weights"
         if cfg["relu_init"] == "softmax" else "as softmax, from scratch", "not stated (trained like softmax)"),
        ("curriculum", "none" if cfg["curriculum_interval"] == 0 else f"every {cfg['curriculum_interval']} steps",
         "not stated (Garg et al. use one)"),
        ("R²", f"per prompt position, across {count(cfg['test_prompts'])} test prompts", "'mean R² over prompts'"),
        ("MLP baseline", f"depth of the target, width {cfg['mlp_width']}, Adam lr 1e-3, full batch, "
                         f"{cfg['mlp_epochs']} epochs, best epoch; first {cfg['mlp_prompts']} test prompts",
         "width 200, MSE, 100 epochs, best R² over epochs"),
], columns=["choice", f"ours ({cfg['profile']} run)", "ICDL"])


def _trained(curves: pd.DataFrame) -> pd.DataFrame:
    return curves[curves["attention"].isin(ATTENTIONS)]  # the trained models, not the switch curves


def verdict_tables(curves: pd.DataFrame, baselines: pd.DataFrame, shift: pd.DataFrame,
                   train_examples: int) -> dict[str, pd.DataFrame]:
    """Per target depth and attention (the trained models), the numbers the claims are judged on:

    * ``obj1``: the largest shortfall of the transformer's R² below the MLP baseline's at the MLP's
      positions up to the training length, pretraining mixture (NaN without MLP rows);
    * ``mixtures``: R² at the training length on each mixture, one column per mixture in MIXTURES' order;
    * ``length``: R² at the training length and the mean R² over the positions beyond it minus that
      (``drop_beyond``, negative when R² falls), pretraining mixture;
    * ``param_shift``: R² at the training length for each μ, and ``max_drop``, the largest fall from μ = 0."""
    trained = _trained(curves)
    ref = trained[trained["mixture"] == PRETRAINING]
    obj1, length = [], []
    for (depth, att), g in ref.groupby(["depth", "attention"]):
        mlp = baselines[(baselines["depth"] == depth) & (baselines["mixture"] == PRETRAINING)
                        & bl.is_mlp(baselines["method"])]
        mlp = mlp[mlp["position"] <= train_examples]
        tf = g.set_index("position")["r2"]
        gaps = [float(row.r2 - tf[row.position]) for row in mlp.itertuples()]
        obj1.append({"depth": depth, "attention": att, "max_shortfall": max(gaps) if gaps else np.nan})
        at_len = tf[min(train_examples, tf.index.max())]
        beyond = tf[tf.index > train_examples]
        length.append({"depth": depth, "attention": att, "r2_at_train_length": float(at_len),
                       "drop_beyond": float(beyond.mean() - at_len) if len(beyond) else np.nan})
    mixtures = []
    for (depth, att), g in trained[trained["position"] == train_examples].groupby(["depth", "attention"]):
        r = g.set_index("mixture")["r2"]
        mixtures.append({"depth": depth, "attention": att, **{m: float(r[m]) for m in MIXTURES}})
    at = shift[shift["position"] == train_examples]
    ps = at.pivot_table(index=["depth", "attention"], columns="mu", values="r2").reset_index()
    ps["max_drop"] = ps[0.0] - ps[[m for m in ps.columns if m not in ("depth", "attention", 0.0)]].min(axis=1)
    return {"obj1": pd.DataFrame(obj1), "mixtures": pd.DataFrame(mixtures), "length": pd.DataFrame(length),
            "param_shift": ps}


def judge(data: dict, train_examples: int, names: dict[str, str]) -> list[dict]:
    """The ledger entries of objectives 1–3 for a result of :func:`load` (or of :func:`run` with
    :func:`param_shift` as ``shift``), each number with its interval over seeds and prompts
    (:func:`icdl.gpt_icl.core.verdicts.judge`, by :data:`CRITERIA`), under the claims ``names`` gives them.
    Whether a claim passes, fails or is inconclusive is decided by the registry
    (:func:`icdl.repro.claims.criterion_verdict`), not here."""
    test_examples = int(data["curves"]["position"].max())
    return verdicts.judge(data["sums"], data["shift_sums"], train_examples, test_examples, CRITERIA, names)


def shortfall(data: dict, train_examples: int) -> pd.DataFrame:
    """Objective 1 as judged, per model: its R² shortfall below the MLP at the MLP's positions up to
    ``train_examples``, with its 90 % interval over seeds and prompts
    (:func:`~icdl.gpt_icl.core.verdicts.shortfall_frame` of the sums per block of a run's ``data``): what the
    chapter's shortfall figure draws against the tolerance."""
    return verdicts.shortfall_frame(verdicts.Sums(**data["sums"]), train_examples)


def levels_at(curves: pd.DataFrame, baselines: pd.DataFrame, position: int) -> pd.DataFrame:
    """Per target depth and attention (the trained models): R² at query ``position`` on the pretraining
    mixture, beside the context mean and least squares there, and the lead over the context mean."""
    c = _trained(curves)
    c = c[(c["mixture"] == PRETRAINING) & (c["position"] == position)]
    b = baselines[(baselines["mixture"] == PRETRAINING) & (baselines["position"] == position)]
    rows = []
    for r in c.itertuples():
        bd = b[b["depth"] == r.depth].set_index("method")["r2"]
        rows.append({"depth": int(r.depth), "attention": r.attention, "r2": float(r.r2),
                     "context_mean": float(bd[bl.CONTEXT_MEAN]), "least_squares": float(bd[bl.LEAST_SQUARES]),
                     "above_context_mean": float(r.r2 - bd[bl.CONTEXT_MEAN])})
    return pd.DataFrame(rows)


def switch_table(curves: pd.DataFrame, baselines: pd.DataFrame, position: int) -> pd.DataFrame:
    """Per target depth, at query ``position`` on the pretraining mixture: the lead over the context mean of
    the softmax model, of its weights under ReLU attention before ReLU training (:data:`AT_SWITCH`), and of
    the trained ReLU model (no ratios of them: a lead of −5.6 over one of 0.15 is not a share of anything)."""
    c = curves[(curves["mixture"] == PRETRAINING) & (curves["position"] == position)]
    b = baselines[(baselines["mixture"] == PRETRAINING) & (baselines["position"] == position)
                  & (baselines["method"] == bl.CONTEXT_MEAN)].set_index("depth")["r2"]
    rows = []
    for depth, g in c.groupby("depth"):
        r = g.set_index("attention")["r2"] - float(b[depth])
        if AT_SWITCH not in r:
            continue
        rows.append({"depth": int(depth), "softmax_lead": float(r["softmax"]), "lead_at_switch": float(r[AT_SWITCH]),
                     "relu_lead": float(r["relu"])})
    return pd.DataFrame(rows)


def levels_glue(levels: pd.DataFrame) -> dict[str, str]:
    """The prose's ranges over the models of :func:`levels_at`, as :func:`~icdl.repro.typeset.span` writes them (one
    value where both ends print alike, never "0.97 to 0.97"): R² (``r2_range``), the lead over the context mean
    (``lead_range``) and least squares' R² on the same prompts (``ls_range``)."""
    return {"r2_range": span(levels["r2"], ".2f", widen=1),
            "lead_range": span(levels["above_context_mean"], ".2f", widen=1),
            "ls_range": span(levels["least_squares"], ".2f", widen=1)}


def gate_glue(levels: pd.DataFrame, leads: dict[str, np.ndarray], need: float, reference: dict) -> dict[str, str]:
    """The prose's numbers of how well the judged run's models learned: how many meet the learning gate
    (``gate_count``; ``leads``: :func:`~icdl.gpt_icl.core.verdicts.context_mean_leads`, ``need``: the registered
    margin), the ranges of :func:`levels_glue` (``levels``: :func:`levels_at`), the gate's words (``gate_*``) and
    those of the reference run's gate (``ref_gate_*``; ``reference``:
    :func:`~icdl.gpt_icl.core.main_study.learning_gate`)."""
    return {"gate_count": learning.met_count(leads, need), **levels_glue(levels),
            **learning.words(learning.gate(leads), need), **learning.words(reference, need, prefix="ref_gate")}


def switch_glue(kept: pd.DataFrame) -> dict[str, str]:
    """The prose's ranges over the target depths of :func:`switch_table`: the lead over the context mean of the
    softmax weights run under ReLU attention before any ReLU training (``switch_range``; negative: below the context
    mean) and of the ReLU models after their own training (``relu_lead_range``)."""
    return {"switch_range": span(kept["lead_at_switch"], ".2f", widen=1),
            "relu_lead_range": span(kept["relu_lead"], ".2f", widen=1)}


def shifted_r2(shift_sums: dict, position: int) -> pd.DataFrame:
    """Objective 3 beside its yardsticks: R² at ``position`` on the paired shifted prompts (the MLP's own), one
    row per target depth and set (μ), one column per model -- the transformers, least squares, the MLP."""
    sets = sorted(s for s in {b["set"] for b in shift_sums["blocks"]} if s.startswith("paired"))
    r2 = verdicts.r2_at(shift_sums, sets, position)
    r2 = r2.assign(model=r2["model"].where(~r2["model"].str.startswith("MLP"), "MLP"),
                   set=r2["set"].str.removeprefix("paired").str.strip().str.replace("μ=", "μ = ", regex=False))
    table = r2.pivot_table(index=["depth", "set"], columns="model", values="r2").reset_index().round(3)
    return table.rename(columns={"set": "target parameters"})  # "μ = −0.5", not the set's key "paired μ=−0.5"


def mlp_last(cfg, train_examples: int) -> int:
    """The MLP baseline's last position up to ``train_examples`` (``cfg``: the judged run's profile, resolved): the
    position objective 3's table (:func:`shifted_r2`) is read at, the last one where the MLP has a score."""
    return max(p + 1 for p in cfg["mlp_positions"] if p + 1 <= train_examples)


def shifted_glue(shifted: pd.DataFrame) -> dict[str, str]:
    """The prose's numbers of :func:`shifted_r2`: the lowest R² over its rows of the MLP (``shift_mlp_min``), of
    least squares (``shift_ls_min``) and of the two transformers (``shift_tf_min``)."""
    return {"shift_mlp_min": f"{shifted['MLP'].min():.2f}", "shift_ls_min": f"{shifted['least squares'].min():.2f}",
            "shift_tf_min": f"{shifted[['softmax', 'relu']].min().min():.2f}"}


def least_squares_shift(cfg, shift: pd.DataFrame) -> pd.DataFrame:
    """Least squares' R² on objective 3's shifted prompts
    (:func:`~icdl.gpt_icl.core.evaluation.least_squares_param_shift`) at every target depth of ``shift`` (a run's
    curves on those prompts; ``cfg``: its profile, resolved): the yardstick drawn beside them."""
    from icdl.gpt_icl.core.evaluation import least_squares_param_shift

    return least_squares_param_shift(cfg, sorted(int(d) for d in shift["depth"].unique()))
