"""ICDL's objectives asked again at the schedule fitted to its own task (chapter ``gpt_n01``, on profile ``fitted``
of the main study).

The scan of :mod:`icdl.gpt_icl.schedules` chooses, on validation prompts, a schedule for ICDL's task (x ~ N(−2, I))
as it does for x ~ N(0, I). Profile ``fitted`` of :data:`icdl.gpt_icl.core.main_study.PROFILES` trains the main
study's models, seeds and evaluation at that schedule (:data:`~icdl.gpt_icl.core.main_study.FITTED`: both attentions
from scratch, no warm phase), and this module judges it on claims registered before its run: the main study's own
(:func:`icdl.gpt_icl.core.verdicts.judge`, the same numbers, intervals and lines, behind the learning gate), each
under its name with the suffix ``-fitted`` (:data:`icdl.repro.claims.gpt_n01.FITTED_CLAIMS`). A claim judged on
models a schedule left on the context-mean plateau is the schedule's verdict; these ask the same question of models
trained as the task needs.
"""

from __future__ import annotations

from icdl.gpt_icl.core import verdicts
from icdl.repro.claims.gpt_n01 import FITTED_CLAIMS
from icdl.repro.typeset import count, rate

#: the main study's profile that asks the questions at the fitted schedule, and the command that produces it
PROFILE = "fitted"
COMMAND = "python -m icdl.gpt_icl --profile fitted --part main --part shift"


def state_words(cfg, done: bool, trained: int = 0) -> str:
    """What the chapter can say of profile ``fitted``'s run (``cfg``, resolved): how many models of how many steps,
    and whether their result is committed (``done``) or the claims wait, with how many of the models are trained
    and committed so far (``trained``: :data:`icdl.repro.required.FITTED_DONE`; the section that shows the run
    names :data:`COMMAND`; a first screen does not)."""
    from icdl.gpt_icl.core.main_study import models_words
    from icdl.gpt_icl.core.model import ATTENTIONS

    what = f"{models_words(cfg)} at lr {rate(cfg['lr'])}, batch {cfg['batch']}, {count(cfg['steps'])} steps each"
    if done:
        return f"{what}, trained and scored"
    models = len(cfg["depths"]) * len(ATTENTIONS) * cfg["seeds"]
    if not 0 <= trained <= models:
        raise ValueError(f"{trained} models trained of a run of {models}: repro.required.FITTED_DONE names models "
                         "the profile does not have")
    so_far = f"{trained} of {models} trained so far" if trained else "not trained yet"
    return f"{what}, {so_far}: until all are trained and scored, those claims are not yet covered"


def judge(icl: dict | None, shift: dict | None, train_examples: int, test_examples: int, criteria: dict,
          command: str = COMMAND) -> list[dict]:
    """The ledger entries of :data:`FITTED_CLAIMS`: the main study's entries
    (:func:`icdl.gpt_icl.core.verdicts.judge`, with its learning gate) on a result of profile ``fitted`` (``icl`` and
    ``shift``; None while that run waits: nothing judged, ``command`` named), each under its ``-fitted`` name."""
    if icl is None or shift is None:
        from icdl.repro.claims import get_claim

        return [{"claim": ours, "value": None, "passed": None, "ours": f"not run yet: {command}",
                 "criterion": f"the main study's criterion of {theirs} ({get_claim(theirs).source}), on the models "
                              "trained at the schedule fitted to ICDL's task"}
                for theirs, ours in FITTED_CLAIMS.items()]
    entries = {e["claim"]: e for e in verdicts.judge(icl, shift, train_examples, test_examples, criteria)}
    return [{**entries[theirs], "claim": ours} for theirs, ours in FITTED_CLAIMS.items()]
