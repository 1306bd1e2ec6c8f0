"""The verdict of ICDL's objective 4 (chapter ``gpt_depth``) on intervals over seeds and prompts.

Objective 4 says that a deeper transformer is a better in-context learner. Its number is the **smallest gain**
of R² from the shallowest to the deepest model, over both attentions and the evaluation points (examples
before the query); the claim holds if that gain is above 0. Each R² is the mean over the seeds of a model,
and every row of one :class:`~icdl.gpt_icl.core.intervals.Draws` -- one seed alone, or every seed on resampled
prompt blocks, alike for every model (paired: the deepest and the shallowest model are scored on the same prompts)
-- gives the gain again, so it comes with a 90 % interval over seeds and prompts (each attention and point on its
own, :func:`~icdl.gpt_icl.core.intervals.extreme`) and a claim whose interval straddles 0 is ``inconclusive``. A
one-seed result without sums per block (the runs before the seeds) is judged on its point value, as it was.

==========================  ===========================================================================
:func:`r2_table`            R² (mean over seeds) of every model depth, attention and evaluation point, with
                            its 90 % interval over seeds and prompts
:func:`gains`               the gain from the shallowest to the deepest model per attention and point
:func:`gains_shown`         :func:`gains` as the chapter shows it
:func:`seed_table`          R² of every seed, to show the spread that the intervals carry
:func:`context_mean_leads`  every model's lead over the context mean (the learning gate's input)
:func:`judge`               the ledger entry of objective 4, behind the learning gate
==========================  ===========================================================================
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from icdl.gpt_icl.core import baselines as bl
from icdl.gpt_icl.core.intervals import Draws, extreme, point, summary
from icdl.gpt_icl.core.learning import gate, gated, learned_keys, margin
from icdl.gpt_icl.core.verdicts import decide


def _minus(text: str) -> str:
    """A number's sign as a typographic minus; the hyphens of words (attention-and-point) stay hyphens."""
    from icdl.repro.typeset import typeset_minus

    return typeset_minus(text)


class DepthSums:
    """A depth result's stored sums (``blocks``, ``labels``), indexed: :meth:`r2` of a model depth and
    attention (mean over its seeds) or of a baseline (``n_layer`` 0), on every resample of one
    :class:`~icdl.gpt_icl.core.intervals.Draws`."""

    def __init__(self, blocks: list[dict], labels: list[dict]):
        self.sse: dict[tuple[int, str], dict[int, dict[int, list]]] = {}
        for b in blocks:
            self.sse.setdefault((int(b["n_layer"]), b["model"]), {}).setdefault(int(b["seed"]), {})[
                int(b["examples"])] = b["sse"]
        self.labels = {int(r["examples"]): r for r in labels}
        seeds = sorted({s for per in self.sse.values() for s in per if s >= 0})
        if not seeds:
            raise ValueError("the result holds no model's sums per block: nothing to judge")
        self.seeds = seeds
        for key, per in self.sse.items():
            if key[0] > 0 and sorted(per) != seeds:
                raise ValueError(f"{key[1]} with {key[0]} layers has seeds {sorted(per)}, the result {seeds}: "
                                 "every model needs every seed")
        self.draws = Draws(len(seeds), blocks=len(blocks[0]["sse"]))

    def r2(self, n_layer: int, model: str, examples: list[int]) -> np.ndarray:
        """``(resamples + 1, len(examples))``: R² of one model (mean over its seeds) or baseline."""
        per_seed = self.sse[(n_layer, model)]
        sse = np.array([[per_seed[s][p] for p in examples] for s in sorted(per_seed)])
        labels = {"n": np.array(self.labels[examples[0]]["n"]),
                  "sy": np.array([self.labels[p]["sy"] for p in examples]),
                  "syy": np.array([self.labels[p]["syy"] for p in examples])}
        return self.draws.r2(sse, labels)

    def models(self) -> list[tuple[int, str]]:
        return sorted(k for k in self.sse if k[0] > 0)


def _has_sums(res: dict) -> bool:
    return len(res.get("blocks", [])) > 0


def r2_table(res: dict) -> pd.DataFrame:
    """One row per attention, model depth and evaluation point: ``r2`` the mean over seeds on all the test
    prompts, ``lo`` and ``hi`` its 90 % interval over seeds and prompts (a one-seed result without sums: the
    stored bootstrap band over prompts), ``seeds`` how many seeds."""
    table = res["table"]
    if not _has_sums(res):
        t = table.copy()
        return t.assign(seeds=1)[["attention", "n_layer", "examples", "r2", "lo", "hi", "seeds"]]
    sums = DepthSums(res["blocks"], res["labels"])
    examples = sorted(int(p) for p in table["examples"].unique())
    rows = []
    for n_layer, att in sums.models():
        r2 = sums.r2(n_layer, att, examples)
        for i, p in enumerate(examples):
            s = summary(r2[:, i])
            rows.append({"attention": att, "n_layer": n_layer, "examples": p, "r2": s["value"], "lo": s["lo"],
                         "hi": s["hi"], "seeds": len(sums.seeds)})
    return pd.DataFrame(rows)


def _gain_stats(res: dict) -> dict[tuple[str, int], np.ndarray]:
    """``{(attention, examples): (resamples + 1,)}``: R² of the deepest minus the shallowest model on every
    resample (row 0: all the data)."""
    sums = DepthSums(res["blocks"], res["labels"])
    examples = sorted(int(p) for p in res["table"]["examples"].unique())
    out = {}
    for att in sorted({a for _, a in sums.models()}):
        depths = sorted(n for n, a in sums.models() if a == att)
        gain = sums.r2(depths[-1], att, examples) - sums.r2(depths[0], att, examples)
        out |= {(att, p): gain[:, i] for i, p in enumerate(examples)}
    return out


def gains(res: dict) -> pd.DataFrame:
    """Per attention and evaluation point: R² (mean over seeds) of the shallowest and the deepest model, the
    ``gain`` from one to the other with its 90 % interval (``gain_lo``, ``gain_hi``; the gain itself where a
    result has no sums per block), and ``deeper_better``, whether the deepest model's R² exceeds the
    shallowest's on all the data. The depths are found from the layer counts, not from the rows' order."""
    table = res["table"].groupby(["attention", "n_layer", "examples"], as_index=False)["r2"].mean()
    stats = _gain_stats(res) if _has_sums(res) else {}
    rows = []
    for (attention, examples), g in table.groupby(["attention", "examples"]):
        g = g.sort_values("n_layer")
        shallow, deep = float(g["r2"].iloc[0]), float(g["r2"].iloc[-1])
        lo = hi = deep - shallow
        if stats:
            s = summary(stats[(attention, int(examples))])
            lo, hi = s["lo"], s["hi"]
        rows.append({"attention": attention, "examples": int(examples), "shallowest": shallow, "deepest": deep,
                     "gain": deep - shallow, "gain_lo": lo, "gain_hi": hi, "deeper_better": deep > shallow})
    return pd.DataFrame(rows)


def gains_shown(res: dict) -> pd.DataFrame:
    """:func:`gains` as the chapter shows it, narrow enough for a phone: the signed gain with its interval
    right after the evaluation point it is at, then the two R² it is the difference of, headed by their
    depths."""
    g = gains(res)
    lo, hi = int(res["table"]["n_layer"].min()), int(res["table"]["n_layer"].max())
    interval = _has_sums(res)
    return pd.DataFrame({
        "attention": g["attention"], "examples": g["examples"],
        "gain": [_minus(f"{v:+.3f}" + (f" ({a:+.3f} to {b:+.3f})" if interval else ""))
                 for v, a, b in zip(g["gain"], g["gain_lo"], g["gain_hi"])],
        f"R², {lo} layers": g["shallowest"].map("{:.3f}".format),
        f"R², {hi} layers": g["deepest"].map("{:.3f}".format)})


def seed_table(table: pd.DataFrame, examples: int) -> pd.DataFrame:
    """R² at ``examples`` examples of every model depth and attention, one column per seed, and the spread
    (highest minus lowest seed)."""
    t = table[table["examples"] == examples]
    wide = t.pivot_table(index=["attention", "n_layer"], columns="seed", values="r2")
    wide.columns = [f"seed {int(s)}" for s in wide.columns]
    wide["spread"] = wide.max(axis=1) - wide.min(axis=1)
    return wide.reset_index().round(3)


def context_mean_leads(res: dict) -> dict[str, np.ndarray]:
    """``{model: (rows,)}``: each model's R² (mean over its seeds) minus the context mean's on the same
    prompts at the last evaluation point (the learning gate's input, :func:`icdl.gpt_icl.core.learning.gate`);
    a result without sums per block gives each lead as a point (:func:`~icdl.gpt_icl.core.intervals.point`)."""
    at = int(res["table"]["examples"].max())
    if not _has_sums(res):
        t = res["table"][res["table"]["examples"] == at].groupby(["attention", "n_layer"])["r2"].mean()
        cm = res["baselines"]
        cm = float(pd.DataFrame(cm).query("examples == @at and method == @bl.CONTEXT_MEAN")["r2"].iloc[0])
        return {f"{n} layers, {att}": point(v - cm) for (att, n), v in t.items()}
    sums = DepthSums(res["blocks"], res["labels"])
    cm = sums.r2(0, bl.CONTEXT_MEAN, [at])[:, 0]
    return {f"{n} layers, {att}": sums.r2(n, att, [at])[:, 0] - cm for n, att in sums.models()}


def compared(res: dict) -> dict[str, list[str]]:
    """Per attention, the names (as :func:`context_mean_leads` gives them) of the two models objective 4 compares:
    the shallowest and the deepest -- the models its claim is about, and so the ones its learning gate asks."""
    layers = res["table"].groupby("attention")["n_layer"]
    return {att: [f"{int(layers.min()[att])} layers, {att}", f"{int(layers.max()[att])} layers, {att}"]
            for att in sorted(res["table"]["attention"].unique())}


def judge(res: dict) -> list[dict]:
    """The ledger entry of objective 4 for a depth result (``table``, and ``blocks`` and ``labels`` where it
    has seeds): the smallest gain from the shallowest to the deepest model over both attentions and every
    evaluation point, with its interval in ``values``; the verdict (pass, fail, inconclusive) is the
    registry's (:func:`icdl.repro.claims.criterion_verdict`) on that interval. The learning gate asks the models
    the claim compares (:func:`compared`), not the depths between them, which it says nothing about."""
    g = gains(res)
    criterion = ("for both attentions, the deepest model's R² (mean over seeds) exceeds the shallowest's at every "
                 "evaluation point (the whole interval)")
    each = "; ".join(f"{r.attention} @{r.examples}: {r.gain:+.3f}" for r in g.itertuples())
    pairs = compared(res)
    leads = context_mean_leads(res)
    learned = gate({name: leads[name] for names in pairs.values() for name in names})
    if not _has_sums(res):
        return [gated({"claim": "icdl-obj4", "passed": bool(g["deeper_better"].all()), "value": float(g["gain"].min()),
                       "ours": _minus("R² gain from the shallowest to the deepest model (one seed): " + each),
                       "criterion": criterion}, learned)]
    stats = _gain_stats(res)
    smallest = extreme(stats, largest=False)
    lo, hi = smallest["lo"], smallest["hi"]
    values = {"value_lo": lo, "value_hi": hi}
    ok = learned_keys(learned, margin("icdl-obj4"), {key: pairs[key[0]] for key in stats})
    if 0 < len(ok) < len(stats):  # some compared model missed the gate: the learned ones' numbers decide a fail
        sub = extreme({k: v for k, v in stats.items() if k in ok}, largest=False)
        values |= {"value_learned": sub["value"], "value_learned_lo": sub["lo"], "value_learned_hi": sub["hi"]}
    return [gated({"claim": "icdl-obj4", "value": smallest["value"], "values": values,
             "passed": decide(lo, hi, ">", 0.0),
             "ours": _minus(f"smallest R² gain from the shallowest to the deepest model: {smallest['value']:+.3f} "
                            f"(90 % interval {lo:+.3f} to {hi:+.3f}, over seeds and prompts, each of "
                            f"{smallest['models']} attention-and-point pairs on its own interval); per attention and "
                            f"point: {each}"),
             "criterion": criterion}, learned)]
