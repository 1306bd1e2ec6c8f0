"""The learning gate of every trained-model claim of ICDL sec. 5: a claim about how well a transformer learns in
context says nothing of a model that never left the context-mean plateau, so such a model cannot decide it.

A model **learned** its task when its R² at the training length leads the context mean's on the same prompts by at
least the registered margin on the whole of the lead's 90 % interval (over seeds and prompts, paired:
:class:`~icdl.gpt_icl.core.intervals.Draws`). A claim's gate is met when every model it is about learned; its
recorded number ``learned`` is the smallest lower end of the models' leads, and the registry's condition
``("learned", "refutable", margin)`` (:data:`icdl.repro.claims.base.LEARNED`) is asymmetric: where some model falls
short, the claim is decided by the models that learned, and only against it -- it *fails* where one of them fails
it on its whole interval (adjusted for their count; recorded as ``value_learned`` and its ends), and is
``inconclusive`` otherwise, naming each model short of the gate and how (its lead below the margin: the plateau;
its lead above but its interval reaching below: the seeds or prompts disagree). It *passes* only where every model
learned. A verdict on a model that did not learn is its schedule's; a fail by one that did is the claim's.

==========================  ======================================================================================
:func:`margin`              the registered margin (read from the registry: one number, one place)
:func:`gate`                the gate of a set of models from their leads on every resample
:func:`learned_keys`        which numbers of a claim rest only on models that learned
:func:`gated`               a judge's ledger entry with its gate applied (a pass withheld, a learned fail kept)
:func:`missed`              each model short of the gate, with its lead and how it missed
:func:`leads_table`         the leads per model, as the chapters show them
:func:`words`               the prose's numbers of a gate
:func:`late_fall`           per model, how much its training loss still fell over the last quarter of its steps
:func:`late_words`          those falls as the prose lists them
==========================  ======================================================================================
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from icdl.gpt_icl.core.intervals import FIRST_PROMPT_ROW, LEVEL, SEED_ROWS, summary, t_quantile
from icdl.repro.claims import CRITERIA, GATE_OPS, criterion_verdict

#: the key of the gate in a claim's criterion and in its recorded numbers
KEY = "learned"


def margin(claim: str) -> float:
    """The margin registered in ``claim``'s criterion (its condition on :data:`KEY`); an error where the claim
    has no learning gate."""
    found = [c.threshold for c in CRITERIA.get(claim, ()) if c.key == KEY and c.op in GATE_OPS]
    if not found:
        raise KeyError(f"claim {claim!r} has no learning gate in its registered criterion")
    return float(found[0])


def gate(leads: dict[str, np.ndarray]) -> dict:
    """``leads``: per model (a name), its R² minus the context mean's at the training length on every resample
    (row 0: all the data). Returns ``{"learned"}`` (the smallest lower end of the 90 % intervals), ``"worst"``
    (that model) and its ``"lead"``, ``"lo"``, ``"hi"``."""
    if not leads:
        raise ValueError("the learning gate needs the lead of at least one model")
    stats = {name: {**summary(lead), **_terms(lead)} for name, lead in leads.items()}
    worst = min(stats, key=lambda name: stats[name]["lo"])
    s = stats[worst]
    return {KEY: s["lo"], "worst": worst, "lead": s["value"], "lo": s["lo"], "hi": s["hi"], "models": stats}


def _terms(rows: np.ndarray) -> dict[str, float]:
    """The two parts of a lead's interval (:func:`~icdl.gpt_icl.core.intervals.summary`): ``seed_term``, the seeds'
    t half-width, and ``prompt_term``, the larger half of the prompt rows' central interval about the value."""
    rows = np.asarray(rows, dtype=float)
    seeds, prompts = rows[SEED_ROWS], rows[FIRST_PROMPT_ROW:]
    seeds = seeds[np.isfinite(seeds)]
    seed = (t_quantile((1 + LEVEL) / 2, len(seeds) - 1) * seeds.std(ddof=1) / np.sqrt(len(seeds))
            if len(seeds) >= 2 else 0.0)
    lo, hi = np.quantile(prompts, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return {"seed_term": float(seed), "prompt_term": float(max(rows[0] - lo, hi - rows[0], 0.0))}


def learned_keys(g: dict, need: float, behind: dict) -> set:
    """The keys of a claim's numbers (``behind``: key -> the names of the models that number is about) whose
    models all met the gate ``g`` (:func:`gate`) at margin ``need``."""
    ok = {name for name, s in g["models"].items() if s["lo"] >= need}
    return {key for key, names in behind.items() if set(names) <= ok}


def missed(g: dict, need: float) -> list[str]:
    """Each model short of the gate, as the prose names it: "target depth 4, relu leads by 0.130 (90 % interval
    0.020 to 0.240): its seeds disagree" where its lead clears ``need`` but its interval does not and the seeds'
    term of the interval is the larger ("its prompts are too few" where the prompts' is), "…: near the plateau"
    where the lead itself falls short."""
    out = []
    for name, s in g["models"].items():
        if s["lo"] < need:
            how = ("near the plateau, its lead below the margin" if s["value"] < need else
                   "its seeds disagree" if s["seed_term"] >= s["prompt_term"] else "its prompts are too few")
            out.append(f"{name} leads by {_lead(s)}: {how}")
    return out


def gated(entry: dict, g: dict) -> dict:
    """``entry`` (a judge's ledger entry) with ``g`` (:func:`gate`) applied: ``learned`` among its recorded
    numbers, and the verdict the registry's on all of them (:func:`icdl.repro.claims.criterion_verdict`): where
    the gate is unmet, a fail only if the models that learned fail by themselves (``value_learned`` and its ends,
    which the judge records where some model missed), else withheld; the reason in ``ours``, every model short of
    the gate named."""
    need = margin(entry["claim"])
    short = missed(g, need)
    # how many of the claim's models met the gate, recorded beside its number: the reason a reader is given
    # (icdl.repro.glance.why_inconclusive) counts them instead of saying "not every model"
    out = {**entry, "values": {**entry.get("values", {}), KEY: g[KEY], "models": float(len(g["models"])),
                               "models_learned": float(len(g["models"]) - len(short))}}
    # the registry decides on every recorded number, the gate's included (a judge that asked it before the gate's
    # number was there got an undecided gate)
    out["passed"] = criterion_verdict(entry["claim"], {"value": entry["value"], **out["values"]})
    if g[KEY] >= need:
        return out
    gate_words = f"{len(short)} of {len(g['models'])} models missed the learning gate ({need:g}): {'; '.join(short)}"
    if out["passed"] is False:
        v = out["values"]
        out["ours"] = (f"{entry['ours']}; fails on the models that learned alone: {_lead(_ends(v))}; {gate_words}")
    else:
        out["ours"] = f"{entry['ours']}; not decided: {gate_words}"
    return out


def _ends(values: dict) -> dict:
    return {"value": values["value_learned"], "lo": values["value_learned_lo"], "hi": values["value_learned_hi"]}


def _lead(g: dict) -> str:
    """A gate's weakest lead (or a summary's value) as the prose writes it: "0.067 (90 % interval 0.048 to
    0.088)"."""
    value = g["lead"] if "lead" in g else g["value"]
    return f"{value:.3f} (90 % interval {g['lo']:.3f} to {g['hi']:.3f})".replace("-", "−")


def leads_table(leads: dict[str, np.ndarray], need: float) -> pd.DataFrame:
    """For the reader, one row per model: its lead over the context mean at the training length with its 90 %
    interval ("0.067 (0.048 to 0.088)"), and whether it learned (the whole interval at least ``need``)."""
    rows = []
    for name, lead in leads.items():
        s = summary(lead)
        cell = f"{s['value']:.3f} ({s['lo']:.3f} to {s['hi']:.3f})".replace("-", "−")
        rows.append({"model": name, "lead over the context mean": cell,
                     f"learned (lower end ≥ {need:g})": "yes" if s["lo"] >= need else "no"})
    return pd.DataFrame(rows)


def met_count(leads: dict[str, np.ndarray], need: float) -> str:
    """How many of the models ``leads`` holds meet the gate (the lower end of the 90 % interval of its lead at least
    ``need``), as the prose counts them: "none of the 6 models", "4 of the 6 models", "all 6 models"."""
    return _count_words(sum(summary(lead)["lo"] >= need for lead in leads.values()), len(leads))


def gate_count(g: dict, need: float) -> str:
    """:func:`met_count` of a gate already computed (:func:`gate`, e.g. a committed run's,
    :func:`icdl.gpt_icl.core.main_study.learning_gate`): the models whose interval's lower end is at least ``need``."""
    return _count_words(sum(m["lo"] >= need for m in g["models"].values()), len(g["models"]))


def _count_words(met: int, n: int) -> str:
    return f"none of the {n} models" if met == 0 else f"all {n} models" if met == n else f"{met} of the {n} models"


def words(g: dict, need: float, prefix: str = "gate") -> dict[str, str]:
    """The prose's numbers of a gate (:func:`gate`): ``<prefix>_worst`` (the model nearest the context mean),
    ``<prefix>_lead`` ("0.067 (90 % interval 0.048 to 0.088)"), ``<prefix>_margin`` and ``<prefix>_met`` ("every
    model learned the task by the registered margin", or "not every model …")."""
    met = ("every model learned the task by the registered margin" if g[KEY] >= need else
           "not every model learned the task by the registered margin")
    return {f"{prefix}_worst": g["worst"], f"{prefix}_lead": _lead(g), f"{prefix}_margin": f"{need:g}",
            f"{prefix}_met": met}


def late_fall(history: pd.DataFrame, quarter: float = 0.25) -> pd.Series:
    """Per model (target ``depth``, ``attention``): how much its training loss, the mean over its seeds, still fell
    over the last ``quarter`` of its steps -- (median over the quarter before it − median over the last quarter) /
    the first, from the logged losses of ``history`` (``step``, ``loss``, a row per seed and log). Well above 0: it
    was still learning, and the budget, not the model, ended it. About 0: the curve was flat when the budget ended --
    which does not show that more steps would not help (a plateau can give way after thousands of flat steps, as
    the schedule scan saw). Medians over a quarter,
    not the last logs: one log is one batch's loss, noisy by several per cent and now and then far off."""
    out = {}
    for key, g in history.groupby(["depth", "attention"]):
        curve = g.groupby("step")["loss"].mean()
        last = float(curve.index.max())
        late = curve[curve.index > last * (1 - quarter)].median()
        before = curve[(curve.index > last * (1 - 2 * quarter)) & (curve.index <= last * (1 - quarter))].median()
        out[(int(key[0]), str(key[1]))] = float((before - late) / before)
    return pd.Series(out, name="late fall").rename_axis(["depth", "attention"])


def late_words(fall: pd.Series) -> str:
    """:func:`late_fall` as the prose lists it, per target depth: "3-layer targets: softmax 8 %, relu 23 %; …"."""
    parts = []
    for depth, g in fall.groupby(level="depth"):
        each = ", ".join(f"{att} {100 * v:.0f} %" for (_, att), v in sorted(g.items(), key=lambda kv: kv[0][1],
                                                                              reverse=True))
        parts.append(f"{depth}-layer targets: {each}")
    return "; ".join(parts)
