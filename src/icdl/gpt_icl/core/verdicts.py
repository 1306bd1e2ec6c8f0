"""The verdicts of ICDL's objectives 1–3 (chapter ``gpt_icl``) on intervals over seeds and prompts.

Every number a claim is judged on is computed from the sums per block of prompts that the run stores
(``blocks``, ``labels``: :func:`icdl.gpt_icl.core.evaluation.judged_sets`) on every resample of one
:class:`~icdl.gpt_icl.core.intervals.Draws` -- the same resampled prompts for every model and baseline (paired),
the seeds of every model resampled -- so each comes with a 90 % interval, and a claim whose interval straddles
its threshold is ``inconclusive`` (:meth:`icdl.repro.claims.Condition.verdict`).

===========================  ===========================================================================
objective 1 (``icdl-obj1``)  the largest shortfall of a model's R² (mean over seeds) below the MLP's, on the
                             MLP's own prompts, at its positions up to the training length
objective 2, mixtures        the smallest fall of R² at the training length from one mixture to the next
objective 2, length          the smallest margin, over target depths, of the ReLU model's mean change of
                             R² past the training length over its softmax twin's (the same steps from the
                             same weights: :data:`~icdl.gpt_icl.core.schedule.SOFTMAX_ON`)
objective 3 (``icdl-obj3``)  objective 1's shortfall on the shifted targets (μ = ±0.5), MLP beside
our ``gpt-obj3-drop``        the largest fall of R² at the training length from μ = 0 to μ = ±0.5
===========================  ===========================================================================

Every one of these claims is about the trained models, so each carries the learning gate
(:mod:`~icdl.gpt_icl.core.learning`, on :func:`context_mean_leads`): a pass only where every model learned the task,
a fail where a model that learned fails it by itself.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from icdl.gpt_icl.core import baselines as bl
from icdl.gpt_icl.core.evaluation import PAIRED
from icdl.gpt_icl.core.intervals import Draws, extreme, summary
from icdl.gpt_icl.core.learning import gate, gated, learned_keys
from icdl.gpt_icl.core.learning import margin as gate_margin
from icdl.gpt_icl.core.model import ATTENTIONS
from icdl.gpt_icl.core.schedule import SOFTMAX_ON
from icdl.gpt_icl.core.tasks import MIXTURES, PRETRAINING


class Sums:
    """The stored sums of one result, indexed: :meth:`r2` of a model or baseline on a set, on every resample
    of one :class:`~icdl.gpt_icl.core.intervals.Draws` (built for the result's number of seeds)."""

    def __init__(self, blocks: list[dict], labels: list[dict]):
        self.sse: dict[tuple, dict[int, dict[int, list]]] = {}
        for b in blocks:
            self.sse.setdefault((int(b["depth"]), b["model"], b["set"]), {}).setdefault(
                int(b["seed"]), {})[int(b["position"])] = b["sse"]
        self.labels: dict[tuple, dict[int, dict]] = {}
        for r in labels:
            self.labels.setdefault((int(r["depth"]), r["set"]), {})[int(r["position"])] = r
        seeds = {s for per in self.sse.values() for s in per if s >= 0}
        if not seeds:
            raise ValueError("the result holds no model's sums per block: nothing to judge")
        self.seeds = sorted(seeds)
        if self.seeds != list(range(len(self.seeds))):
            raise ValueError(f"the result's seeds must be 0, 1, …; got {self.seeds}")
        self.draws = Draws(len(self.seeds), blocks=len(blocks[0]["sse"]))

    def has(self, depth: int, model: str, set_name: str) -> bool:
        return (depth, model, set_name) in self.sse

    def _inputs(self, depth: int, model: str, set_name: str, positions: list[int]) -> tuple[np.ndarray, dict]:
        per_seed = self.sse[(depth, model, set_name)]
        seeds = sorted(per_seed)
        if seeds != [-1] and seeds != self.seeds:
            raise ValueError(f"{model} at target depth {depth} on {set_name!r} has seeds {seeds}, the result "
                             f"{self.seeds}")
        sse = np.array([[per_seed[s][p] for p in positions] for s in seeds])
        return sse, self.label_sums(depth, set_name, positions)

    def label_sums(self, depth: int, set_name: str, positions: list[int]) -> dict[str, np.ndarray]:
        lab = self.labels[(depth, set_name)]
        return {"n": np.array(lab[positions[0]]["n"]), "sy": np.array([lab[p]["sy"] for p in positions]),
                "syy": np.array([lab[p]["syy"] for p in positions])}

    def r2(self, depth: int, model: str, set_name: str, positions: list[int]) -> np.ndarray:
        """``(resamples + 1, len(positions))``: R² of ``model`` (a model, mean over its seeds, or a baseline)."""
        return self.draws.r2(*self._inputs(depth, model, set_name, positions))

    def mse(self, depth: int, model: str, set_name: str, positions: list[int]) -> np.ndarray:
        """``(resamples + 1, len(positions))``: its mean squared error, likewise."""
        return self.draws.mse(*self._inputs(depth, model, set_name, positions))

    def depths(self) -> list[int]:
        return sorted({k[0] for k in self.sse})


def _paired_positions(sums: Sums, depth: int, set_name: str, train_examples: int) -> list[int]:
    return sorted(p for p in sums.sse[(depth, bl.mlp_method(depth), set_name)][-1] if p <= train_examples)


def shortfall_points(sums: Sums, set_names: list[str], train_examples: int) -> dict[tuple, np.ndarray]:
    """``{(depth, attention, set, position): (rows,)}``: the shortfall of the model's R² below the MLP's at each of
    the MLP's positions up to the training length, on each paired set -- what a claim about every model *and*
    position reads, each on its own interval (:func:`~icdl.gpt_icl.core.intervals.extreme`)."""
    out = {}
    for depth in sums.depths():
        for name in set_names:
            pos = _paired_positions(sums, depth, name, train_examples)
            mlp = sums.r2(depth, bl.mlp_method(depth), name, pos)
            for att in ATTENTIONS:
                gap = mlp - sums.r2(depth, att, name, pos)
                out |= {(depth, att, name, p): gap[:, j] for j, p in enumerate(pos)}
    return out


def shortfalls(sums: Sums, set_names: list[str], train_examples: int) -> dict[tuple, np.ndarray]:
    """``{(depth, attention, set): (rows,)}``: the largest shortfall of the model's R² below the MLP's over the MLP's
    positions up to the training length, on each paired set (objectives 1 and 3; for the tables)."""
    out: dict[tuple, list] = {}
    for (depth, att, name, _), gap in shortfall_points(sums, set_names, train_examples).items():
        out.setdefault((depth, att, name), []).append(gap)
    return {k: np.max(v, axis=0) for k, v in out.items()}


def shortfall_frame(sums: Sums, train_examples: int, set_name: str = PAIRED) -> pd.DataFrame:
    """Objective 1's judged numbers for a figure: one row per target depth, attention and MLP position up to the
    training length, the shortfall of the model's R² below the MLP's (``value``) with its 90 % interval
    (``lo``, ``hi``) -- the numbers :func:`judge` reads, each on its own interval."""
    rows = [{"depth": d, "attention": a, "position": p, "value": s["value"], "lo": s["lo"], "hi": s["hi"]}
            for (d, a, _, p), stat in shortfall_points(sums, [set_name], train_examples).items()
            for s in [summary(stat)]]
    return pd.DataFrame(rows).sort_values(["depth", "attention", "position"], ignore_index=True)


def mixture_fall_points(sums: Sums, train_examples: int) -> dict[tuple, np.ndarray]:
    """``{(depth, attention, step): (rows,)}``: the fall of R² at the training length from one mixture to the next
    (``step`` 0, 1, … in the order of MIXTURES; positive: R² falls), each on its own interval in the claim."""
    out = {}
    for depth in sums.depths():
        for att in ATTENTIONS:
            r2 = np.stack([sums.r2(depth, att, m, [train_examples])[:, 0] for m in MIXTURES], axis=1)
            out |= {(depth, att, step): r2[:, step] - r2[:, step + 1] for step in range(len(MIXTURES) - 1)}
    return out


def mixture_falls(sums: Sums, train_examples: int) -> dict[tuple, np.ndarray]:
    """``{(depth, attention): (rows,)}``: the smallest of :func:`mixture_fall_points` over the steps (the tables)."""
    out: dict[tuple, list] = {}
    for (depth, att, _), fall in mixture_fall_points(sums, train_examples).items():
        out.setdefault((depth, att), []).append(fall)
    return {k: np.min(v, axis=0) for k, v in out.items()}


def length_drops(sums: Sums, train_examples: int, test_examples: int) -> dict[tuple, np.ndarray]:
    """``{(depth, model): (resamples + 1,)}``: mean R² over the positions past the training length minus R² at
    it, pretraining mixture (negative where R² falls), for every model the result holds."""
    pos = list(range(train_examples, test_examples + 1))
    out = {}
    for depth in sums.depths():
        for model in (*ATTENTIONS, SOFTMAX_ON):
            if sums.has(depth, model, PRETRAINING):
                r2 = sums.r2(depth, model, PRETRAINING, pos)
                out[(depth, model)] = r2[:, 1:].mean(axis=1) - r2[:, 0]
    return out


def shift_drop_points(sums: Sums, train_examples: int, mus=(-0.5, 0.5)) -> dict[tuple, np.ndarray]:
    """``{(depth, attention, μ): (rows,)}``: the fall of R² at the training length from μ = 0 to a shifted μ (all
    test prompts; objective 3 in our absolute form), each on its own interval in the claim."""
    out = {}
    for depth in sums.depths():
        for att in ATTENTIONS:
            base = sums.r2(depth, att, "μ=0", [train_examples])[:, 0]
            out |= {(depth, att, mu): base - sums.r2(depth, att, f"μ={mu:g}", [train_examples])[:, 0] for mu in mus}
    return out


def shift_drops(sums: Sums, train_examples: int, mus=(-0.5, 0.5)) -> dict[tuple, np.ndarray]:
    """``{(depth, attention): (rows,)}``: the largest of :func:`shift_drop_points` over the shifts (the tables)."""
    out: dict[tuple, list] = {}
    for (depth, att, _), drop in shift_drop_points(sums, train_examples, mus).items():
        out.setdefault((depth, att), []).append(drop)
    return {k: np.max(v, axis=0) for k, v in out.items()}


def context_mean_leads(sums: Sums, train_examples: int) -> dict[str, np.ndarray]:
    """``{model: (resamples + 1,)}``: each trained model's R² (mean over its seeds) minus the context mean's at the
    training length on the pretraining mixture, the same resampled prompts for both (the learning gate's input,
    :func:`icdl.gpt_icl.core.learning.gate`)."""
    out = {}
    for depth in sums.depths():
        cm = sums.r2(depth, bl.CONTEXT_MEAN, PRETRAINING, [train_examples])[:, 0]
        for att in ATTENTIONS:
            out[model_name(depth, att)] = sums.r2(depth, att, PRETRAINING, [train_examples])[:, 0] - cm
    return out


def decide(lo: float, hi: float, op: str, threshold: float) -> bool | None:
    """The judge's own verdict on an interval: True if every point of ``[lo, hi]`` satisfies ``op threshold``
    (``"<"``, ``"<="``, ``">"`` or ``">="``), False if none does, None (inconclusive) if the interval straddles
    the threshold. Every judge of an interval in sec. 5 decides through this one function."""
    holds = {"<": lambda v: v < threshold, "<=": lambda v: v <= threshold, ">": lambda v: v > threshold,
             ">=": lambda v: v >= threshold}[op]
    return True if holds(lo) and holds(hi) else False if not holds(lo) and not holds(hi) else None


def model_name(depth: int, attention: str) -> str:
    """A trained model as the learning gate names it (:func:`context_mean_leads`)."""
    return f"target depth {depth}, {attention}"


def behind(stat: dict, depths: list[int] | None = None) -> dict:
    """``{key: [model names]}``: the models each number of a claim is about -- a key ``(depth, attention, …)`` one
    model; a key ``depth`` (a margin between the attentions) both models there; a key ``attention`` (a gap between
    ``depths``) that attention at each."""
    out = {}
    for key in stat:
        if isinstance(key, tuple):
            out[key] = [model_name(key[0], key[1])]
        elif isinstance(key, str):
            out[key] = [model_name(d, key) for d in depths]
        else:
            out[key] = [model_name(key, a) for a in ATTENTIONS]
    return out


def _entry(claim: str, stat: np.ndarray | dict, ours: str, criterion: str, op: str, threshold: float,
           fmt: str = ".3f", learned: set | None = None) -> dict:
    """A ledger entry from a statistic's rows (one number), or from ``{key: rows}`` for a claim about every model (and
    position, step or shift: each key one number the claim ranges over, :func:`~icdl.gpt_icl.core.intervals.extreme`:
    each on its own interval, the fail side adjusted for their number; the largest for an upper bound, ``op``
    ``<``/``<=``, else the smallest). ``learned``: the keys whose models met the learning gate
    (:func:`~icdl.gpt_icl.core.learning.learned_keys`); where some but not all did, the same extreme over theirs
    alone, adjusted for their count, is recorded as ``value_learned`` with its ends -- what decides a fail when the
    gate is unmet (:class:`icdl.repro.claims.base.Condition`, ``refutable``)."""
    largest = op in ("<", "<=")
    if isinstance(stat, dict):
        s = extreme(stat, largest=largest)
        how = f"over seeds and prompts, each of the {s['models']} numbers it ranges over on its own interval"
    else:
        s, how = summary(stat), "over seeds and prompts"
    value, lo, hi = (f"{s[k]:{fmt}}".replace("-", "−") for k in ("value", "lo", "hi"))  # a typographic minus
    values = {"value_lo": s["lo"], "value_hi": s["hi"]}
    if isinstance(stat, dict) and learned is not None and 0 < len(learned & set(stat)) < len(stat):
        sub = extreme({k: v for k, v in stat.items() if k in learned}, largest=largest)
        values |= {"value_learned": sub["value"], "value_learned_lo": sub["lo"], "value_learned_hi": sub["hi"]}
    return {"claim": claim, "value": s["value"], "values": values,
            "passed": decide(s["lo"], s["hi"], op, threshold),
            "ours": f"{ours}: {value} (90 % interval {lo} to {hi}, {how})", "criterion": criterion}


def judge(icl: dict, shift: dict, train_examples: int, test_examples: int, criteria: dict,
          names: dict[str, str]) -> list[dict]:
    """The ledger entries of objectives 1–3 from the sums of a result (``icl`` and ``shift`` each with
    ``blocks`` and ``labels``): the value of each claim on all the data, its interval in ``values``; the
    verdict (pass, fail, inconclusive) is the registry's (:func:`icdl.repro.claims.criterion_verdict`) and the
    learning gate's. ``names`` maps the objectives' numbers (by the ids of the reference-run claims that first
    asked them: ``icdl-obj1`` ...) to the live claims that ask them of this result, in the order wanted; a number
    not named is not judged."""
    main, shifted = Sums(icl["blocks"], icl["labels"]), Sums(shift["blocks"], shift["labels"])
    tol, max_drop = criteria["obj1_tolerance"], criteria["obj3_max_drop"]
    obj1 = shortfall_points(main, [PAIRED], train_examples)
    falls = mixture_fall_points(main, train_examples)
    drops = length_drops(main, train_examples, test_examples)
    twin = SOFTMAX_ON if all((d, SOFTMAX_ON) in drops for d in main.depths()) else "softmax"
    margin = {d: drops[(d, "relu")] - drops[(d, twin)] for d in main.depths()}
    paired_shift = [n for n in {k[2] for k in shifted.sse} if n.startswith(PAIRED)]
    obj3 = shortfall_points(shifted, sorted(paired_shift), train_examples)
    absolute = shift_drop_points(shifted, train_examples)
    first, last = list(MIXTURES)[0], list(MIXTURES)[-1]
    twin_words = ("its softmax twin's (the same steps from the same weights)" if twin == SOFTMAX_ON else
                  "the softmax model's (both trained from scratch at one schedule)")
    learned = gate(context_mean_leads(main, train_examples))
    need = gate_margin(next(iter(names.values())))

    def ok(stat: dict) -> set:  # the keys of a claim's numbers whose models learned
        return learned_keys(learned, need, behind(stat))

    entries = {e["claim"]: e for e in (
        _entry("icdl-obj1", obj1, "largest shortfall below the MLP up to the training length, same prompts",
               f"transformer R² ≥ MLP R² − {tol:g} at every MLP position ≤ training length on the MLP's prompts, "
               f"mixture {PRETRAINING}, every depth and attention (the whole interval)", "<=", tol, learned=ok(obj1)),
        _entry("icdl-obj2-shift", falls, f"smallest fall of R² at the training length from one mixture to the next "
               f"({first} → {last})", "R² falls at every step from one mixture to the next, every model "
               "(smallest fall > 0, the whole interval)", ">", 0.0, learned=ok(falls)),
        _entry("icdl-obj2-length", margin, "smallest margin over depths of the ReLU model's change past the "
               f"training length over {twin_words}",
               "softmax loses more R² past the training length than ReLU at every depth (margin > 0, the whole "
               "interval)", ">", 0.0, learned=ok(margin)),
        _entry("icdl-obj3", obj3, "largest shortfall below the MLP on shifted targets (μ = ±0.5), same prompts",
               f"on targets with μ = ±0.5, transformer R² ≥ MLP R² − {tol:g} at every MLP position ≤ training "
               "length, every depth and attention (the whole interval)", "<=", tol, learned=ok(obj3)),
        _entry("gpt-obj3-drop", absolute, "largest R² drop at the training length for μ = ±0.5",
               f"R² at the training length drops by at most {max_drop:g} when μ moves to ±0.5, every model (the "
               "whole interval)", "<=", max_drop, learned=ok(absolute)),
    )}
    return [gated({**entries[theirs], "claim": ours}, learned) for theirs, ours in names.items()]


def interval_table(icl: dict, shift: dict, train_examples: int, test_examples: int) -> pd.DataFrame:
    """Per target depth and attention: each claim's number for that model with its 90 % interval (the rows
    behind the chapter's verdict table; ``length_margin`` is per depth, repeated on both rows)."""
    main, shifted = Sums(icl["blocks"], icl["labels"]), Sums(shift["blocks"], shift["labels"])
    paired_shift = sorted(n for n in {k[2] for k in shifted.sse} if n.startswith(PAIRED))
    o1 = shortfalls(main, [PAIRED], train_examples)
    o3 = shortfalls(shifted, paired_shift, train_examples)
    falls = mixture_falls(main, train_examples)
    drops = length_drops(main, train_examples, test_examples)
    absolute = shift_drops(shifted, train_examples)
    rows = []
    for depth in main.depths():
        twin = drops.get((depth, SOFTMAX_ON), drops[(depth, "softmax")])
        for att in ATTENTIONS:
            cells = {"obj1_shortfall": o1[(depth, att, PAIRED)],
                     "obj3_shortfall": np.max([o3[(depth, att, n)] for n in paired_shift], axis=0),
                     "mixture_fall": falls[(depth, att)], "length_margin": drops[(depth, "relu")] - twin,
                     "shift_drop": absolute[(depth, att)]}
            row = {"depth": depth, "attention": att}
            for name, stat in cells.items():
                s = summary(stat)
                row |= {name: s["value"], f"{name}_lo": s["lo"], f"{name}_hi": s["hi"]}
            rows.append(row)
    return pd.DataFrame(rows)


def r2_at(sums_of: dict, set_names: list[str], position: int) -> pd.DataFrame:
    """R² on all the data (the mean over seeds for a model) of every model and baseline the sums hold, at one
    query ``position`` of each named set: one row per target depth, set and model (the chapter's table of
    objective 3's baselines)."""
    sums = Sums(sums_of["blocks"], sums_of["labels"])
    rows = []
    for (depth, model, name), per_seed in sorted(sums.sse.items()):
        if name in set_names and position in next(iter(per_seed.values())):
            rows.append({"depth": depth, "set": name, "model": model,
                         "r2": float(sums.r2(depth, model, name, [position])[0, 0])})
    return pd.DataFrame(rows)


#: the columns of :func:`interval_table` as the chapter names them
INTERVAL_COLUMNS = {"obj1_shortfall": "largest shortfall below the MLP", "mixture_fall": "smallest fall, mixtures",
                    "length_margin": "length margin, ReLU − softmax",
                    "obj3_shortfall": "largest shortfall, μ = ±0.5", "shift_drop": "R² drop, μ = ±0.5"}


def with_intervals(table: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """:func:`interval_table` for people: each number with its 90 % interval in one cell, "0.031 (0.020 to
    0.045)", under the names of :data:`INTERVAL_COLUMNS`."""
    out = table[["depth", "attention"]].copy()
    for key, name in INTERVAL_COLUMNS.items():
        out[name] = [f"{v:.{digits}f} ({lo:.{digits}f} to {hi:.{digits}f})".replace("-", "−")
                     for v, lo, hi in zip(table[key], table[f"{key}_lo"], table[f"{key}_hi"])]
    return out


def seed_table(seed_curves: pd.DataFrame, train_examples: int) -> pd.DataFrame:
    """R² at the training length, pretraining mixture, of every trained model and seed: one row per target depth
    and model, one column per seed, and the spread (highest minus lowest seed)."""
    c = seed_curves[(seed_curves["mixture"] == PRETRAINING) & (seed_curves["position"] == train_examples)
                    & seed_curves["attention"].isin((*ATTENTIONS, SOFTMAX_ON))]
    wide = c.pivot_table(index=["depth", "attention"], columns="seed", values="r2")
    wide.columns = [f"seed {int(s)}" for s in wide.columns]
    wide["spread"] = wide.max(axis=1) - wide.min(axis=1)
    return wide.reset_index().round(3)
