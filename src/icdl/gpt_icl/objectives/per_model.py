"""Each trained model on its own (chapter ``gpt_n01``'s first screen): what every model shows, read on its own
90 % interval over seeds and prompts, beside whether it learned the task.

The registered claims of :mod:`~icdl.gpt_icl.objectives.n01` are about every model at once (an every-model claim:
one model decides a fail, all of them a pass). A reader also wants the models one by one -- which of them beat
least squares, and by how much -- and that is a description of the run, not a verdict of a claim registered for
it: the table and the sentence below say on which side of a line each model's *whole* interval lies and name the
models whose interval straddles it, and they never use the words of a verdict.

==========================  =====================================================================================
:func:`model_rows`          per model: its lead over the context mean (the learning gate), its error relative to
                            least squares, its share of the MLP's gain, its shortfall below the MLP -- each a
                            value with its interval, at the MLP's last position up to the training length
:func:`table`               those rows for people, one cell per number ("+0.43 (0.39 to 0.47)")
:func:`plain_sentence`      the run in one sentence: which models beat least squares on their whole interval and
                            by how much, how many do on ICDL's own inputs, how far every model stays below the MLP
==========================  =====================================================================================
"""

from __future__ import annotations

import pandas as pd

from icdl.gpt_icl.core.intervals import summary
from icdl.gpt_icl.core.model import ATTENTIONS
from icdl.gpt_icl.core.verdicts import Sums, context_mean_leads, model_name
from icdl.gpt_icl.objectives.n01 import nonlinear_share, shortfall_at_last, versus_least_squares
from icdl.repro.typeset import attention_name

#: the numbers of a row, in the table's order, with the column each is shown under
COLUMNS = {"lead": "lead over the context mean", "vs_ls": "error relative to least squares",
           "share": "share of the MLP's gain", "shortfall": "R² shortfall below the MLP"}


def model_rows(icl: dict, train_examples: int, need: float) -> pd.DataFrame:
    """One row per target depth and attention of a result (``icl``: its ``blocks`` and ``labels``): ``learned``
    (the lower end of its lead over the context mean at least ``need``, the learning gate), and for each key of
    :data:`COLUMNS` its value, ``_lo`` and ``_hi`` (:func:`~icdl.gpt_icl.core.intervals.summary`: seeds and
    prompts, this model alone). The lead is at the training length on the pretraining mixture, as the gate reads
    it; the others at the MLP's last position up to the training length on the MLP's prompts."""
    sums = Sums(icl["blocks"], icl["labels"])
    leads = context_mean_leads(sums, train_examples)
    stats = {"vs_ls": versus_least_squares(sums, train_examples), "share": nonlinear_share(sums, train_examples),
             "shortfall": shortfall_at_last(sums, train_examples)}
    rows = []
    for depth in sums.depths():
        for att in ATTENTIONS:
            row = {"depth": depth, "attention": att}
            for key, rows_of in (("lead", leads[model_name(depth, att)]),
                                 *((k, v[(depth, att)]) for k, v in stats.items())):
                s = summary(rows_of)
                row |= {key: s["value"], f"{key}_lo": s["lo"], f"{key}_hi": s["hi"]}
            row["learned"] = bool(row["lead_lo"] >= need)
            rows.append(row)
    return pd.DataFrame(rows)


def _cell(row, key: str, sign: str = "") -> str:
    return (f"{row[key]:{sign}.2f} ({row[key + '_lo']:{sign}.2f} to {row[key + '_hi']:{sign}.2f})"
            .replace("-", "−"))


def table(rows: pd.DataFrame) -> pd.DataFrame:
    """:func:`model_rows` for people: the model, whether it learned, and each number with its 90 % interval."""
    out = pd.DataFrame({"target depth": rows["depth"], "attention": rows["attention"].map(attention_name),
                        "learned the task": rows["learned"].map({True: "yes", False: "no"})})
    for key, name in COLUMNS.items():
        out[name] = [_cell(r, key, "+" if key == "vs_ls" else "") for _, r in rows.iterrows()]
    return out


def _named(rows: pd.DataFrame) -> str:
    """The models of ``rows`` with their error relative to least squares: "depth-3 softmax +0.49 (0.45 to 0.53)"."""
    return "; ".join(f"depth-{r['depth']} {attention_name(r['attention'])} {_cell(r, 'vs_ls', '+')}"
                     for _, r in rows.iterrows())


def plain_sentence(rows: pd.DataFrame, icdl_rows: pd.DataFrame | None) -> str:
    """The run in one sentence, from :func:`model_rows` of the N(0, I) run (``rows``) and of the judged run on
    ICDL's inputs (``icdl_rows``, None while it waits): the models whose error relative to least squares is above
    0 on its whole interval, by how much; how many on ICDL's inputs; the range of every model's shortfall below
    the MLP. No model is left out: the ones whose interval straddles 0 are counted as such."""
    n = len(rows)
    above = rows[rows["vs_ls_lo"] > 0]
    below = rows[rows["vs_ls_hi"] < 0]
    straddle = n - len(above) - len(below)
    if len(above):
        first = (f"{len(above)} of the {n} models predict better than least squares on their whole interval "
                 f"(error relative to least squares: {_named(above)})")
    else:
        first = f"none of the {n} models predicts better than least squares on its whole interval"
    rest = f"{len(below)} worse on its whole interval, {straddle} with an interval across 0"
    icdl = ""
    if icdl_rows is not None:
        k = int((icdl_rows["vs_ls_lo"] > 0).sum())
        icdl = (f"; on ICDL's own inputs {'none' if k == 0 else k} of the {len(icdl_rows)} models of the judged run "
                f"{'does' if k <= 1 else 'do'}")
    gap = f"{rows['shortfall'].min():.2f} to {rows['shortfall'].max():.2f}".replace("-", "−")
    return (f"At x ~ N(0, I), {first}; {rest}{icdl}. Every model stays below the MLP trained on the prompt: its R² "
            f"falls short of the MLP's by {gap} at the MLP's last position.")
