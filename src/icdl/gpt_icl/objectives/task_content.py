"""What ICDL's sec.-5 task asks of a model (chapter ``gpt_icl``): how much of a prompt needs a deep network.

A prompt's labels vary for three reasons: each prompt has its own mean (an *offset*, which the context mean
already predicts), an affine function of x within the prompt explains more (what least squares learns in
context), and the rest is what only a nonlinear learner can get (:func:`icdl.gpt_icl.core.tasks.variance_split`).
If the last part is small, "comparable to the trained network" says little about learning a deep network in
context. This module measures the three shares for ICDL's family of targets at the paper's inputs
(x ~ N(−2, I)) and at the inputs of REB's network baselines (x ~ N(0, I)), and judges the two claims about
them.

==========================  =======================================================================
:data:`DESIGN`              the families measured: d, target depth, input distribution
:func:`task_content_table`  the three shares of every family, with 90 % intervals over prompts
:func:`shown`               the table as the chapter shows it
:func:`judge`               the ledger entries ``gpt-task-linear`` and ``gpt-task-n01``
==========================  =======================================================================
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from icdl.gpt_icl.core.tasks import PARTS, TaskConfig, prompt_moments, sample_prompts, shares_of
from icdl.gpt_icl.core.verdicts import decide
from icdl.repro.typeset import count, relation

#: the families measured (ICDL's targets: bias-free ReLU networks of width 2d with N(0, 1) weights): the
#: paper's dimension and ours, the main study's target depths, and the two input distributions by their centre
DESIGN = {"d": (5, 20), "depth": (3, 4, 6), "centre": (2.0, 0.0)}

#: the input distributions by centre, as the tables name them
INPUTS = {2.0: "N(−2, I)", 0.0: "N(0, I)"}

#: prompts and inputs per prompt of every measurement, the bootstrap over prompts, and the seed
PROMPTS, INPUTS_PER_PROMPT, RESAMPLES, SEED = 2000, 200, 1000, 0


def _boot(moments: dict, idx: torch.Tensor) -> dict[str, np.ndarray]:
    """Each share on all the prompts (entry 0) and on every resample of the prompts (entries 1, …)."""
    point, boot = shares_of(moments), shares_of(moments, idx)
    return {p: np.concatenate([[float(point[p])], boot[p].numpy()]) for p in PARTS}


def measure(prompts: int = PROMPTS, inputs: int = INPUTS_PER_PROMPT, resamples: int = RESAMPLES,
            seed: int = SEED) -> dict[tuple, dict[str, np.ndarray]]:
    """``{(d, depth, centre): {share: (resamples + 1,)}}`` for every family of :data:`DESIGN` (row 0: all
    prompts), each family on its own prompts (seeded by ``seed`` and its position in the design)."""
    out = {}
    for i, (d, depth, centre) in enumerate((d, n, c) for c in DESIGN["centre"] for d in DESIGN["d"]
                                           for n in DESIGN["depth"]):
        g = torch.Generator().manual_seed(seed + i)
        xs, ys = sample_prompts(TaskConfig(d=d, depth=depth, centre=centre), prompts, inputs, g)
        idx = torch.randint(0, prompts, (resamples, prompts), generator=g)
        out[(d, depth, centre)] = _boot(prompt_moments(xs, ys), idx)
    return out


def task_content_table(stats: dict[tuple, dict[str, np.ndarray]], level: float = 0.90) -> pd.DataFrame:
    """One row per family: ``d``, ``depth``, ``inputs`` (the distribution's name), each share on all prompts
    and its ``level`` interval over prompts (``<share>_lo``, ``<share>_hi``)."""
    rows = []
    q = [(1 - level) / 2, (1 + level) / 2]
    for (d, depth, centre), shares in stats.items():
        row = {"d": d, "depth": depth, "inputs": INPUTS[centre]}
        for p in PARTS:
            lo, hi = np.quantile(shares[p][1:], q)
            row |= {p: float(shares[p][0]), f"{p}_lo": float(lo), f"{p}_hi": float(hi)}
        rows.append(row)
    return pd.DataFrame(rows)


def shown(table: pd.DataFrame) -> pd.DataFrame:
    """The table for people: percentages, the nonlinear share with its interval, one row per family."""
    def pct(v: float) -> str:
        return f"{100 * v:.1f} %"

    return pd.DataFrame({
        "inputs": table["inputs"], "d": table["d"], "target depth": table["depth"],
        "offset (across prompts)": table["offset"].map(pct), "linear within a prompt": table["linear"].map(pct),
        "nonlinear (90 % interval)": [f"{pct(v)} ({100 * a:.1f} to {100 * b:.1f})" for v, a, b in
                                      zip(table["nonlinear"], table["nonlinear_lo"], table["nonlinear_hi"])]})


def _extreme(stats: dict, centre: float, pick) -> np.ndarray:
    return pick(np.stack([s["nonlinear"] for (d, n, c), s in stats.items() if c == centre]), axis=0)


def judge(stats: dict[tuple, dict[str, np.ndarray]], level: float = 0.90) -> list[dict]:
    """``gpt-task-linear``: the largest nonlinear share at ICDL's inputs, and ``gpt-task-n01``: the smallest at
    N(0, I), each with its interval (the statistic on every resample; the families are independent samples);
    pass, fail or inconclusive on the whole interval against the registered thresholds (5 % and 15 %)."""
    q = [(1 - level) / 2, (1 + level) / 2]
    out = []
    for claim, centre, pick, op, threshold, words in (
            ("gpt-task-linear", 2.0, np.max, "<", 0.05, "largest"), ("gpt-task-n01", 0.0, np.min, ">=", 0.15,
                                                                     "smallest")):
        stat = _extreme(stats, centre, pick)
        lo, hi = (float(v) for v in np.quantile(stat[1:], q))
        out.append({"claim": claim, "value": float(stat[0]), "values": {"value_lo": lo, "value_hi": hi},
                    "passed": decide(lo, hi, op, threshold),
                    "ours": f"{words} nonlinear share of the label variance at x ~ {INPUTS[centre]} over d = 5, 20 "
                            f"and target depths 3, 4, 6: {100 * stat[0]:.1f} % (90 % interval {100 * lo:.1f} to "
                            f"{100 * hi:.1f} %, over prompts)",
                    "criterion": f"{words} nonlinear share at x ~ {INPUTS[centre]} {relation(op)} "
                                 f"{100 * threshold:g} % (the whole interval)"})
    return out


def baseline_inputs_evidence(prompts: int = 1000) -> tuple[str, bool]:
    """The errata's evidence for REB's answer that the network baselines of ICDL's figures were trained and
    tested with x ~ N(0, I) while the transformers' prompts have x ~ N(−2, I): the nonlinear share of the same
    targets (d = 20, depths 3, 4, 6) at the two inputs. Holds if it is at least three times larger at N(0, I)
    for every depth -- two different tasks, not one task measured twice."""
    share = {}
    for centre in (2.0, 0.0):
        for depth in DESIGN["depth"]:
            xs, ys = sample_prompts(TaskConfig(d=20, depth=depth, centre=centre), prompts, INPUTS_PER_PROMPT,
                                    torch.Generator().manual_seed(SEED + depth))
            share[(centre, depth)] = float(shares_of(prompt_moments(xs, ys))["nonlinear"])
    far = [share[(2.0, n)] for n in DESIGN["depth"]]
    near = [share[(0.0, n)] for n in DESIGN["depth"]]
    text = (f"for ICDL's targets at d = 20 (depths 3, 4, 6; {count(prompts)} prompts of {INPUTS_PER_PROMPT} inputs) a "
            f"linear fit within a prompt leaves {100 * min(far):.1f}–{100 * max(far):.1f} % of the label variance at "
            f"$x \\sim N(-2, I)$, the transformers' inputs, and {100 * min(near):.0f}–{100 * max(near):.0f} % at "
            f"$x \\sim N(0, I)$, the baselines'")
    return text, all(b >= 3 * a for a, b in zip(far, near))


def glue_words(table: pd.DataFrame, judged: dict[str, dict]) -> dict[str, str]:
    """The chapter's words for the task's content (``table``: :func:`task_content_table`; ``judged``: :func:`judge`'s
    entries by claim): the prompts measured, the offset's and the nonlinear part's shares at ICDL's inputs, and the
    nonlinear part's at N(0, I) -- the judged extremes from the claims' own numbers."""
    far, near = (table[table["inputs"] == INPUTS[c]] for c in (2.0, 0.0))
    return {"task_prompts": count(PROMPTS), "task_inputs": str(INPUTS_PER_PROMPT),
            "task_offset_min": f"{100 * far['offset'].min():.0f} %",
            "task_offset_max": f"{100 * far['offset'].max():.0f} %",
            "task_nonlinear_max": f"{100 * judged['gpt-task-linear']['value']:.1f} %",
            "task_nonlinear_min_far": f"{100 * far['nonlinear'].min():.1f} %",
            "task_n01_min": f"{100 * judged['gpt-task-n01']['value']:.1f} %",
            "task_n01_max": f"{100 * near['nonlinear'].max():.1f} %"}
