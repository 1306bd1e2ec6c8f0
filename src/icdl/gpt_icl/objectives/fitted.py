"""ICDL's objectives asked of models trained at the schedule fitted to its own task (chapter ``gpt_icl``, on profile
``fitted`` of the main study).

The scan of :mod:`icdl.gpt_icl.schedules` chooses, on validation prompts, a schedule for ICDL's task (x ~ N(−2, I))
as it does for x ~ N(0, I). Profile ``fitted`` of :data:`icdl.gpt_icl.core.main_study.PROFILES` trains the main
study's models, seeds and evaluation at that schedule (:data:`~icdl.gpt_icl.core.main_study.FITTED`: both attentions
from scratch, no warm phase), and this module judges it on claims registered before its run: the main study's
numbers, intervals and lines (:func:`icdl.gpt_icl.objectives.judge.judge`, behind the learning gate), each under its
name with the suffix ``-fitted`` (:data:`icdl.repro.claims.gpt_icl.FITTED_CLAIMS`). They replace the same questions
judged on the reference run, whose schedule left a model on the context-mean plateau: a verdict on such a model is
the schedule's.
"""

from __future__ import annotations

from icdl.gpt_icl.core.main_study import CRITERIA
from icdl.gpt_icl.objectives import judge as objectives
from icdl.repro.claims.gpt_icl import FITTED_CLAIMS
from icdl.repro.typeset import count, rate

#: the main study's profile that asks the questions at the fitted schedule, and the command that produces it
PROFILE = "fitted"
COMMAND = "python -m icdl.gpt_icl --profile fitted --part main --part shift"


def schedule_words(cfg) -> str:
    """The fitted schedule as the prose names it (``cfg``: profile ``fitted``, resolved): "Adam at lr 1e-4, batch 64,
    10 000 steps"."""
    return f"Adam at lr {rate(cfg['lr'])}, batch {cfg['batch']}, {count(cfg['steps'])} steps"


def state_words(cfg, done: bool, trained: int = 0) -> str:
    """What the chapter can say of profile ``fitted``'s run (``cfg``, resolved): how many models of how many steps,
    and whether their result is committed (``done``) or the claims wait, with how many of the models are trained
    and committed so far (``trained``: :data:`icdl.repro.required.FITTED_DONE`)."""
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
    return f"{what}, {so_far}: until all are trained and scored, the claims wait"


def pending() -> list[dict]:
    """The entries of :data:`FITTED_CLAIMS` while profile ``fitted`` has no complete result: nothing judged, the
    command that covers them named (the chapter's figures show its live run meanwhile; its numbers decide
    nothing)."""
    return [{"claim": ours, "value": None, "passed": None, "ours": f"not run yet: {COMMAND}",
             "criterion": f"the criterion of {theirs} as registered, on the models trained at the schedule fitted to "
                          "ICDL's task"} for theirs, ours in FITTED_CLAIMS.items()]


def judge(data: dict, train_examples: int) -> list[dict]:
    """The ledger entries of :data:`FITTED_CLAIMS` on a result of profile ``fitted`` (or, while it waits, the live
    run; :func:`icdl.gpt_icl.core.main_study.load` or ``from_run``): the main study's entries
    (:func:`icdl.gpt_icl.objectives.judge.judge`, with its learning gate), each under its ``-fitted`` name, in the
    order of :data:`FITTED_CLAIMS`."""
    return objectives.judge(data, train_examples, FITTED_CLAIMS)


def claims_glue(judged: dict[str, dict], cfg) -> dict[str, str]:
    """The prose's numbers of the claims at the fitted schedule (``judged``: :func:`judge`'s entries by claim;
    ``cfg``: the judged run's profile, resolved): the registered lines of objectives 1 and 3 (``obj1_tolerance``,
    ``obj3_max_drop``), the MLP's prompts (``mlp_prompts``), and objective 1's number with its 90 % interval
    (``obj1_shortfall``, ``obj1_lo``, ``obj1_hi``)."""
    obj1 = judged["icdl-obj1-fitted"]
    return {"obj1_tolerance": f"{CRITERIA['obj1_tolerance']:g}", "obj3_max_drop": f"{CRITERIA['obj3_max_drop']:g}",
            "mlp_prompts": f"{cfg['mlp_prompts']}", "obj1_shortfall": f"{obj1['value']:.3f}",
            "obj1_lo": f"{obj1['values']['value_lo']:.3f}", "obj1_hi": f"{obj1['values']['value_hi']:.3f}"}
