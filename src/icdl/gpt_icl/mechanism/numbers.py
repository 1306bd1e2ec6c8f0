"""The registered numbers of the mechanism claims, with paired intervals over the blocks of test prompts, and
the ledger entries gated as the registry asks (chapter ``gpt_mechanism``, ``mech-seeds-*``).

Per model, at the training length on the pretraining mixture, from the measures' sums per block of prompts
(``blocks`` of :func:`icdl.gpt_icl.mechanism.study.study`): GD's prediction difference over the nearest simple
rule's (``pred``), its sensitivity L2 difference over the smallest simple rule's (``sens``), its mean cosine with
the model's sensitivity (``cosine``), and the median over blocks of GD's prediction difference over that of the
rule nearest the model over all prompts (``median``: a number a few prompts cannot carry). Every number is
computed on each resample of one :class:`~icdl.gpt_icl.core.intervals.Draws`, the same resampled prompts for every
candidate and model (paired).

**Ratios on the log scale** (issue 68). The three ratios (:data:`RATIOS`) -- a distance over another, bounded below
by 0 -- are summarised by :mod:`~icdl.gpt_icl.core.intervals`' own machinery applied to their logs and reported as
the exp of its value and ends (:func:`summarised`, :func:`every_model`): the interval never crosses 0, and seeds
that disagree (3.32 / 1.30 / 1.17) widen it by a factor, not by ± 2 (the linear scale gave −0.11 to 3.98). A ratio's
mean over seeds is their geometric mean (:func:`seed_mean`), the mean of the logs the interval reads. A ratio of 0
or below has no log and is refused in one line naming it (:func:`log_ratio`). One seed's prompt-only interval is
the same on either scale but for the interpolation of the resamples' quantiles.

======================  ==============================================================================================
:data:`RATIOS`          the numbers that are ratios, by key, with the name a refusal gives
:func:`log_ratio`       a ratio's rows on the log scale, refused in one line where one is 0 or below
:func:`seed_mean`       a number per seed and row as each row's mean over its drawn seeds (a ratio's: geometric)
:func:`summarised`      a number's value and 90 % interval (a ratio's on the log scale)
:func:`every_model`     the interval of a claim about every model, likewise
:func:`paired_measures` ``pred``, ``sens``, ``cosine`` per model and over the models, on every resample
:func:`median_ratio`    the median block's ratio per model and over the models, on every resample
:func:`four_numbers`    the four together
:func:`gated_entries`   ledger entries from the numbers, with the registry's gates
:func:`gate_note`       the entries' closing words: the control, and GD less accurate than the model
:func:`interval_cell`   a number over resamples as a table cell
======================  ==============================================================================================
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from icdl.gpt_icl.core.intervals import Draws, extreme, summary
from icdl.gpt_icl.core.tasks import PRETRAINING
from icdl.gpt_icl.mechanism.measures import GD_NETWORK, SIMPLE_RULES
from icdl.repro.claims import criterion_verdict

#: the numbers that are ratios -- a distance over another, positive -- by key, with their names: every summary of
#: one is on the log scale (``summarised(stat, RATIOS[key])``); the cosine is not a ratio
RATIOS = {"pred": "prediction ratio", "sens": "sensitivity ratio", "median": "median-block ratio"}


def log_ratio(stat, ratio: str) -> np.ndarray:
    """``log(stat)`` of a ratio's rows (NaN stays NaN: a seed row past a result's seeds), refused in one line naming
    the ``ratio`` where a row is 0 or below -- a distance over a distance is positive, so such a row is a bug upstream
    (a distance not squared, a ratio of differences), never a number to clip."""
    stat = np.asarray(stat, dtype=float)
    bad = stat <= 0
    if bad.any():
        raise ValueError(f"{ratio}: {int(bad.sum())} of its {stat.size} rows are 0 or negative (smallest "
                         f"{np.nanmin(stat):.3g}); a ratio is summarised on the log scale and must be positive")
    return np.log(stat)


def seed_mean(per_seed: np.ndarray, draws: Draws, ratio: str | None = None) -> np.ndarray:
    """``(rows,)``: each row's mean over the seeds ``draws`` picks for it of a number computed per seed on every row
    (``per_seed``: ``(seeds, rows)``, NaN for a seed a model lacks, which the mean leaves out; a row none of whose
    seeds has a number is NaN). A ``ratio`` (its name) is averaged on the log scale -- the geometric mean, whose log
    is what :func:`summarised` reads -- and refused in one line if it is 0 or below."""
    drawn = np.take_along_axis(np.asarray(per_seed, dtype=float).T, draws.seeds, axis=1)  # (rows, seeds drawn)
    if ratio is not None:
        drawn = log_ratio(drawn, ratio)
    with warnings.catch_warnings():  # a row without any seed's number: NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(drawn, axis=1)
    return mean if ratio is None else np.exp(mean)


def summarised(stat, ratio: str | None = None) -> dict[str, float]:
    """:func:`~icdl.gpt_icl.core.intervals.summary` of a number's rows; a ``ratio`` (its name) the same summary of
    ``log(stat)``, reported as exp of its value and ends -- positive, multiplicative about the value."""
    if ratio is None:
        return summary(stat)
    s = summary(log_ratio(stat, ratio))
    return s | {k: float(np.exp(s[k])) for k in ("value", "lo", "hi")}


def every_model(per_model: dict, largest: bool, ratio: str | None = None) -> dict[str, float]:
    """:func:`~icdl.gpt_icl.core.intervals.extreme` of a claim about every model; a ``ratio`` (its name) read off
    each model's interval of its log, reported as exp of the value and ends (exp keeps the order: the extreme of the
    logs is the log of the extreme). A refusal names the model."""
    if ratio is None:
        return extreme(per_model, largest)
    logs = {k: log_ratio(v, f"{ratio} of {', '.join(map(str, k)) if isinstance(k, tuple) else k}")
            for k, v in per_model.items()}
    s = extreme(logs, largest)
    return s | {k: float(np.exp(s[k])) for k in ("value", "lo", "hi")}


def _at_training_length(blocks: pd.DataFrame, train_examples: int) -> pd.DataFrame:
    """The sums per block that every number reads: the training length, the pretraining mixture."""
    at = blocks[(blocks["mixture"] == PRETRAINING) & (blocks["position"] == train_examples)]
    if at.empty:
        raise ValueError(f"the result holds no sums per block at the training length (position {train_examples}) "
                         "on the pretraining mixture: rerun python -m icdl.gpt_icl.mechanism --profile seeds")
    return at


def paired_measures(blocks: pd.DataFrame, train_examples: int, draws: Draws | None = None) -> dict:
    """The three registered numbers on every resample of one :class:`~icdl.gpt_icl.core.intervals.Draws` (row 0: all
    prompts; the same resampled prompts for every candidate and model: paired), from the measures' sums per
    block (``blocks`` of :func:`icdl.gpt_icl.mechanism.study.study`) at the training length on the pretraining
    mixture. Per model ``(depth, attention)``: ``pred`` (GD's prediction difference over the nearest simple
    rule's), ``sens`` (GD's sensitivity L2 difference over the smallest simple rule's; a rule without a slope
    counts the model's own, 1), ``cosine`` (GD's mean cosine); over the models the largest two ratios and the
    smallest cosine, each ``(resamples + 1,)``."""
    at = _at_training_length(blocks, train_examples)
    per_model = {}
    for key, g in at.groupby(["depth", "attention"]):
        rules = [c for c in SIMPLE_RULES if c in set(g["candidate"])]
        if GD_NETWORK not in set(g["candidate"]) or not rules:
            raise ValueError(f"the sums of model {key} lack GD or every simple rule")
        w = (draws or Draws(1, blocks=int(g["block"].nunique()))).weights          # (R, blocks)
        col = {c: {k: w @ part.sort_values("block")[k].to_numpy(dtype=float)
                   for k in ("pred", "sens", "cos", "own", "n")} for c, part in g.groupby("candidate")}
        gd = col[GD_NETWORK]
        per_model[key] = {"pred": gd["pred"] / np.min([col[c]["pred"] for c in rules], axis=0),
                          "sens": gd["sens"] / np.min([col[c]["sens"] for c in rules], axis=0),
                          "cosine": gd["cos"] / gd["n"]}
    return {"models": per_model,
            "pred": np.max([m["pred"] for m in per_model.values()], axis=0),
            "sens": np.max([m["sens"] for m in per_model.values()], axis=0),
            "cosine": np.min([m["cosine"] for m in per_model.values()], axis=0)}


def _lower_median(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per row, the weighted lower median of ``values`` (``(R, blocks)``) with ``weights`` (``(R, blocks)``,
    block counts): the smallest value at which the cumulative weight reaches half the row's total."""
    order = np.argsort(values, axis=1)
    v = np.take_along_axis(values, order, axis=1)
    cw = np.cumsum(np.take_along_axis(weights, order, axis=1), axis=1)
    k = (cw >= cw[:, -1:] / 2).argmax(axis=1)
    out = v[np.arange(len(v)), k]
    out[np.isnan(weights).any(axis=1)] = np.nan  # a seed row past the result's seeds stays empty
    return out

def median_ratio(blocks: pd.DataFrame, train_examples: int, draws: Draws | None = None) -> dict:
    """On every resample of :class:`~icdl.gpt_icl.core.intervals.Draws` (row 0: every block once), per model: the
    simple rule nearest the model over the resampled prompts (the smallest weighted sum of its prediction
    difference), and the weighted lower median over the blocks of GD's prediction difference over that rule's
    (``(resamples + 1,)``); over the models, the largest. At the training length, pretraining mixture."""
    at = _at_training_length(blocks, train_examples)
    per_model = {}
    for key, g in at.groupby(["depth", "attention"]):
        col = {c: part.sort_values("block")["pred"].to_numpy(dtype=float) for c, part in g.groupby("candidate")}
        rules = [c for c in SIMPLE_RULES if c in col]
        if GD_NETWORK not in col or not rules:
            raise ValueError(f"the sums of model {key} lack GD or every simple rule")
        w = (draws or Draws(1, blocks=len(col[GD_NETWORK]))).weights                 # (R, blocks)
        per_rule = np.stack([col[c] for c in rules])                                 # (rules, blocks)
        nearest = np.argmin(w @ per_rule.T, axis=1)                                  # (R,)
        ratio = col[GD_NETWORK][None, :] / per_rule[nearest]                         # (R, blocks)
        per_model[key] = _lower_median(ratio, w)
    return {"models": per_model, "median": np.max(list(per_model.values()), axis=0)}

def four_numbers(result: dict, train_examples: int, draws: Draws | None = None) -> dict:
    """The four registered numbers on every resample of ``draws`` (:func:`paired_measures` and
    :func:`median_ratio`): over the models and, under ``models``, per model."""
    m = paired_measures(result["blocks"], train_examples, draws)
    med = median_ratio(result["blocks"], train_examples, draws)
    return {"pred": m["pred"], "sens": m["sens"], "cosine": m["cosine"], "median": med["median"],
            "models": {k: v | {"median": med["models"][k]} for k, v in m["models"].items()}}


def interval_cell(stat, ratio: str | None = None) -> str:
    """A number over resamples as a table cell: "value (lo to hi)", its 90 % interval (a ``ratio``'s on the log
    scale, :func:`summarised`)."""
    s = summarised(stat, ratio)
    return f"{s['value']:.3f} ({s['lo']:.3f} to {s['hi']:.3f})"

def _r2s(alignment: pd.DataFrame, train_examples: int) -> pd.DataFrame:
    at = alignment[(alignment["mixture"] == PRETRAINING) & (alignment["position"] == train_examples)]
    return at.pivot_table(index=["depth", "attention"], columns="candidate", values="r2_candidate")

def gate_note(result: dict, train_examples: int, control_passed: bool, r2: str = "R²") -> str:
    """The end of a gated entry's text: whether the positive control passed, and for how many models GD's own R²
    is below the model's (a "farther" that may be GD's inaccuracy, not another algorithm; ``r2``: what the R²
    is called, e.g. "seed-mean R²" where the alignment table holds several seeds per model)."""
    at = _r2s(result["alignment"], train_examples)
    weaker = int((at[GD_NETWORK] < at["model"]).sum())
    return (f"; positive control {'passed' if control_passed else 'not passed'}"
            + (f"; GD's own {r2} below the model's for {weaker} of {len(at)} models" if weaker else ""))

def gated_entries(names: dict[str, str], words: dict[str, str], numbers: dict, gates: dict[str, float], tail: str,
                  criteria: dict[str, str], over: str = "the test prompts") -> list[dict]:
    """Ledger entries of claims about every model (``numbers["models"]``: per model, each number on every row of a
    :class:`~icdl.gpt_icl.core.intervals.Draws`) with the registry's ``gates``: per claim (``names``: claim → key)
    the largest ratio or the smallest cosine over the models, its interval read off each model's own
    (:func:`every_model`; a ratio's on the log scale), each model's value and ``tail``;
    the verdict is the registry's. ``over``: what the interval resamples."""
    out = []
    for claim, key in names.items():
        s = every_model({m: v[key] for m, v in numbers["models"].items()}, largest=key != "cosine",
                        ratio=RATIOS.get(key))
        per = "; ".join(f"depth {d} {a}: {v[key][0]:.3f}" for (d, a), v in numbers["models"].items())
        shown = (f"{s['value']:.3f} (the {'smallest' if key == 'cosine' else 'largest'} over the models; 90 % "
                 f"interval {s['lo']:.3f} to {s['hi']:.3f} over {over}, each of {s['models']} models on its own "
                 "interval)")
        values = {"value_lo": s["lo"], "value_hi": s["hi"], **gates}
        out.append({"claim": claim, "value": s["value"], "values": values,
                    "passed": criterion_verdict(claim, {"value": s["value"], **values}),
                    "ours": f"{words[key]}: {shown}; {per}{tail}", "criterion": criteria[claim]})
    return out
