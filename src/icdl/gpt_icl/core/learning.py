"""The learning gate of every trained-model claim of ICDL sec. 5: a claim about how well a transformer learns in
context says nothing when its models never left the context-mean plateau, so it is decided only where they did.

A model **learned** its task when its R² at the training length leads the context mean's on the same prompts by at
least the registered margin on the whole of the lead's 90 % interval (over seeds and prompts, paired:
:class:`~icdl.gpt_icl.core.intervals.Draws`). A claim's gate is met when every model it is about learned; its
recorded number ``learned`` is the smallest lower end of the models' leads, and the registry's condition
``("learned", "gate", margin)`` (:data:`icdl.repro.claims.base.LEARNED`) leaves the claim ``inconclusive`` where
it falls short -- never ``pass``, never ``fail``: a verdict on a model that did not learn is its schedule's.

==========================  ======================================================================================
:func:`margin`              the registered margin (read from the registry: one number, one place)
:func:`gate`                the gate of a set of models from their leads on every resample
:func:`gated`               a judge's ledger entry with its gate applied (the number, and the verdict withheld)
:func:`leads_table`         the leads per model, as the chapters show them
:func:`words`               the prose's numbers of a gate
:func:`late_fall`           per model, how much its training loss still fell over the last quarter of its steps
:func:`late_words`          those falls as the prose lists them
==========================  ======================================================================================
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from icdl.gpt_icl.core.intervals import summary
from icdl.repro.claims import CRITERIA, criterion_verdict

#: the key of the gate in a claim's criterion and in its recorded numbers
KEY = "learned"


def margin(claim: str) -> float:
    """The margin registered in ``claim``'s criterion (its condition on :data:`KEY`); an error where the claim
    has no learning gate."""
    found = [c.threshold for c in CRITERIA.get(claim, ()) if c.key == KEY and c.op == "gate"]
    if not found:
        raise KeyError(f"claim {claim!r} has no learning gate in its registered criterion")
    return float(found[0])


def gate(leads: dict[str, np.ndarray]) -> dict:
    """``leads``: per model (a name), its R² minus the context mean's at the training length on every resample
    (row 0: all the data). Returns ``{"learned"}`` (the smallest lower end of the 90 % intervals), ``"worst"``
    (that model) and its ``"lead"``, ``"lo"``, ``"hi"``."""
    if not leads:
        raise ValueError("the learning gate needs the lead of at least one model")
    stats = {name: summary(lead) for name, lead in leads.items()}
    worst = min(stats, key=lambda name: stats[name]["lo"])
    s = stats[worst]
    return {KEY: s["lo"], "worst": worst, "lead": s["value"], "lo": s["lo"], "hi": s["hi"]}


def gated(entry: dict, g: dict) -> dict:
    """``entry`` (a judge's ledger entry) with ``g`` (:func:`gate`) applied: ``learned`` among its recorded
    numbers, the verdict the registry's on all of them (so, where the gate is unmet, withheld: ``passed`` None)
    and then the reason in ``ours``."""
    need = margin(entry["claim"])
    out = {**entry, "values": {**entry.get("values", {}), KEY: g[KEY]}}
    # the registry decides on every recorded number, the gate's included (a judge that asked it before the gate's
    # number was there got an undecided gate)
    out["passed"] = criterion_verdict(entry["claim"], {"value": entry["value"], **out["values"]})
    if not g[KEY] >= need:
        out["passed"] = None
        out["ours"] = (f"{entry['ours']}; not decided: the models did not all learn the task ({g['worst']} leads "
                       f"the context mean by {_lead(g)}, the registered margin {need:g})")
    return out


def _lead(g: dict) -> str:
    """A gate's weakest lead as the prose writes it: "0.067 (90 % interval 0.048 to 0.088)"."""
    return f"{g['lead']:.3f} (90 % interval {g['lo']:.3f} to {g['hi']:.3f})".replace("-", "−")


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
    met = sum(summary(lead)["lo"] >= need for lead in leads.values())
    n = len(leads)
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
    the first, from the logged losses of ``history`` (``step``, ``loss``, a row per seed and log). About 0: the curve
    was flat when the budget ended, and a model short of the gate would not have met it with a few more steps at this
    schedule; well above 0: it was still learning, and the budget, not the model, ended it. Medians over a quarter,
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
