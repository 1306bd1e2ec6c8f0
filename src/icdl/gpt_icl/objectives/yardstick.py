"""Least squares as the yardstick of ICDL sec. 5 (chapter ``gpt_icl``), and Garg et al.'s error.

R² against the MLP says whether a transformer is "comparable to the trained network"; on ICDL's task, where a
linear fit within a prompt leaves little (:mod:`~icdl.gpt_icl.objectives.task_content`), least squares is the sharper
yardstick. On the paired prompts (the MLP's own, :data:`~icdl.gpt_icl.core.evaluation.PAIRED`) and from the sums
per block the run stores, every model and baseline gets

* its **error relative to least squares**, ``(MSE_LS − MSE)/MSE_LS`` on the same prompts: above 0 only if it
  predicts better than the affine fit of the prompt's examples;
* its **normalised squared error**, ``MSE / mean(y²)``, the labels' mean square standing for Garg et al.'s
  dimension ``d`` (their linear labels have ``E y² = d``): predicting 0 scores 1 under both
  {cite:p}`garg2022what`,

each with its 90 % interval over seeds and prompts (one :class:`~icdl.gpt_icl.core.intervals.Draws` for every
model and baseline, so the comparison with least squares is paired).
"""

from __future__ import annotations

import pandas as pd

from icdl.gpt_icl.core import baselines as bl
from icdl.gpt_icl.core.evaluation import PAIRED
from icdl.gpt_icl.core.intervals import summary
from icdl.gpt_icl.core.model import ATTENTIONS
from icdl.gpt_icl.core.verdicts import Sums


def methods(depth: int) -> list[str]:
    """The rows of one target depth: the baselines, then the transformers."""
    return [bl.CONTEXT_MEAN, bl.LEAST_SQUARES, bl.mlp_method(depth), *ATTENTIONS]


def yardstick_table(icl: dict, set_name: str = PAIRED) -> pd.DataFrame:
    """One row per target depth, query position of ``set_name`` and method: ``nse`` (normalised squared error)
    and ``vs_ls`` (error relative to least squares), each with ``_lo`` and ``_hi``; ``examples`` is the number
    of examples before the query."""
    sums = Sums(icl["blocks"], icl["labels"])
    rows = []
    for depth in sums.depths():
        positions = sorted(next(iter(sums.sse[(depth, bl.LEAST_SQUARES, set_name)].values())))
        ms = sums.draws.mean_square(sums.label_sums(depth, set_name, positions))
        ls = sums.mse(depth, bl.LEAST_SQUARES, set_name, positions)
        for method in methods(depth):
            if not sums.has(depth, method, set_name):
                continue
            mse = sums.mse(depth, method, set_name, positions)
            for i, p in enumerate(positions):
                row = {"depth": depth, "examples": p - 1, "method": method}
                for key, stat in (("nse", mse[:, i] / ms[:, i]), ("vs_ls", 1 - mse[:, i] / ls[:, i])):
                    s = summary(stat)
                    row |= {key: s["value"], f"{key}_lo": s["lo"], f"{key}_hi": s["hi"]}
                rows.append(row)
    return pd.DataFrame(rows)


def examples_at(table: pd.DataFrame, train_examples: int) -> int:
    """The examples before the query the chapter reads :func:`yardstick_table` at: the most it holds below the
    training length ``train_examples`` (the MLP's last position up to it)."""
    return int(table[table["examples"] < train_examples]["examples"].max())


def shown(table: pd.DataFrame, examples: int) -> pd.DataFrame:
    """The rows at ``examples`` examples before the query, for people: each number with its interval."""
    t = table[table["examples"] == examples]

    def cell(v, lo, hi, sign=""):
        return f"{v:{sign}.3f} ({lo:{sign}.3f} to {hi:{sign}.3f})".replace("-", "−")

    return pd.DataFrame({
        "target depth": t["depth"], "method": t["method"],
        "normalised squared error": [cell(*r) for r in zip(t["nse"], t["nse_lo"], t["nse_hi"])],
        "error relative to least squares": [
            "0 (the yardstick)" if m == bl.LEAST_SQUARES else cell(v, lo, hi, "+")
            for m, v, lo, hi in zip(t["method"], t["vs_ls"], t["vs_ls_lo"], t["vs_ls_hi"])]}).reset_index(drop=True)


def glue_values(table: pd.DataFrame, examples: int) -> dict[str, str]:
    """The prose's numbers at ``examples`` examples before the query: the transformers' error relative to least
    squares (its range, and how many models beat least squares over their whole interval), the MLP's, and the
    transformers' normalised squared error."""
    at = table[table["examples"] == examples]
    models, mlps = at[at["method"].isin(ATTENTIONS)], at[at["method"].str.startswith("MLP")]

    def signed(v):
        return f"{v:+.2f}".replace("-", "−")

    return {"yard_examples": str(examples), "yard_models_min": signed(models["vs_ls"].min()),
            "yard_models_max": signed(models["vs_ls"].max()),
            "yard_models_beat": str(int((models["vs_ls_lo"] > 0).sum())),
            "yard_models_n": str(len(models)), "yard_mlp_min": signed(mlps["vs_ls"].min()),
            "yard_mlp_max": signed(mlps["vs_ls"].max()), "yard_nse_min": f"{models['nse'].min():.3f}",
            "yard_nse_max": f"{models['nse'].max():.3f}"}
