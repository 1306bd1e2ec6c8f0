"""The claims of chapter ``gpt_icl``: what it must reproduce, each criterion as data, and the
registrations, deviations and known failures of its claims (:mod:`icdl.repro.claims` assembles every
chapter's part)."""

from __future__ import annotations

from .base import GPT_ICL, LEARNED, Claim, Condition, Replaced, all_of, row

CLAIMS: tuple[Claim, ...] = (
    # ---- ICDL experiments: objectives 1-3 asked of models trained at the schedule the scan of icdl.gpt_icl.schedules
    # chose on validation prompts of ICDL's task (profile fitted of the main study); they replace the same claims
    # judged on the reference run (REPLACED), whose models did not all learn the task
    row("icdl-obj1-fitted", "ICDL objective 1 (Figs. 2–4), at a schedule fitted to the task",
        "ICL R² comparable to the trained MLP baseline up to 50 examples -- asked of models trained at the schedule "
        "the scan chose on validation prompts of ICDL's task",
        GPT_ICL, "tests/test_gpt_n01.py::test_the_fitted_claims_are_the_main_study_s_judged_on_profile_fitted"),
    row("icdl-obj2-shift-fitted", "ICDL objective 2 (Figs. 2–4), at a schedule fitted to the task",
        "R² drops as the test mixture moves away from pretraining -- asked of models trained at the schedule "
        "fitted to ICDL's task",
        GPT_ICL, "tests/test_gpt_n01.py::test_the_fitted_claims_are_the_main_study_s_judged_on_profile_fitted"),
    row("icdl-obj2-length-fitted", "ICDL objective 2 (Figs. 3–4), at a schedule fitted to the task",
        "softmax degrades past the pretraining length, ReLU less -- asked of models trained at the schedule fitted "
        "to ICDL's task",
        GPT_ICL, "tests/test_gpt_n01.py::test_the_fitted_claims_are_the_main_study_s_judged_on_profile_fitted"),
    row("icdl-obj3-fitted", "ICDL objective 3 (Figs. 5–6), at a schedule fitted to the task",
        "with shifted target parameters, ICL stays comparable to the network trained on the prompt -- "
        "asked of models trained at the schedule fitted to ICDL's task",
        GPT_ICL, "tests/test_gpt_n01.py::test_the_fitted_claims_are_the_main_study_s_judged_on_profile_fitted"),
    row("gpt-obj3-drop-fitted", "ICDL objective 3 (Figs. 5–6), as an absolute fall, at a schedule fitted to the task",
        "not claimed by ICDL in this form: R² at the training length falls by at most 0.1 when μ moves to ±0.5 -- "
        "asked of models trained at the schedule fitted to ICDL's task",
        GPT_ICL, "tests/test_gpt_n01.py::test_the_fitted_claims_are_the_main_study_s_judged_on_profile_fitted"),
    row("gpt-task-linear", "ICDL sec. 5's task, measured (this book's question)",
        "not claimed by ICDL: within a prompt, ICDL's targets at x ~ N(−2, I) are almost linear (under 5 % of "
        "the label variance is left by a linear fit), so the task barely tests learning a deep network",
        GPT_ICL, "tests/test_gpt_tasks.py::test_variance_split_on_families_whose_answer_is_known"),
    row("gpt-task-n01", "ICDL sec. 5's task at the baselines' inputs, measured (this book's question)",
        "not claimed by ICDL: with x ~ N(0, I), the inputs of REB's network baselines, the same targets leave "
        "at least 15 % of the label variance to the part no linear fit within a prompt explains",
        GPT_ICL, "tests/test_gpt_tasks.py::test_variance_split_on_families_whose_answer_is_known"),
)

CRITERIA: dict[str, tuple[Condition, ...]] = {
    # registered (at dcdbd53, in chapter gpt_n01's part of the registry) before any run of its design: profile fitted
    # of the main study -- ICDL's task, x ~ N(−2, I), the reference's models, test prompts and seeds, both attentions
    # trained from scratch at the schedule the scan of icdl.gpt_icl.schedules chose on validation prompts of that
    # task (FITTED of icdl.gpt_icl.core.main_study: Adam, lr 1e-4, batch 64, 10 000 steps, no warm phase), three
    # seeds -- judged by icdl.gpt_icl.core.verdicts.judge with the main study's numbers, 90 % intervals over seeds
    # and prompts and thresholds (the lines of the claims they replace), objective 2's length margin taken over
    # the softmax model trained from scratch on the same schedule, behind the learning gate: the largest shortfall
    # below the MLP on its prompts; the smallest fall of R² from one mixture to the next; the smallest margin of the
    # ReLU model's change past the training length over the softmax model's; objective 1's shortfall on the shifted
    # targets; our absolute form of objective 3. A first start of that run (at 2c76367, before these lines) trained
    # two of its eighteen models and was stopped before any was scored or its loss read; both were discarded
    "icdl-obj1-fitted": all_of(("value", "<=", 0.05), LEARNED),
    "icdl-obj2-shift-fitted": all_of(("value", ">", 0), LEARNED),
    "icdl-obj2-length-fitted": all_of(("value", ">", 0), LEARNED),
    "icdl-obj3-fitted": all_of(("value", "<=", 0.05), LEARNED),
    "gpt-obj3-drop-fitted": all_of(("value", "<=", 0.1), LEARNED),
    # registered before the run of icdl.gpt_icl.core.tasks.task_content_table that judges them (chapter gpt_icl), but
    # after the exploratory measurement reported in the issue that asked for them (1.6–2.6 % at N(−2, I), 15–20 %
    # at N(0, I), another seed and code): the largest nonlinear share over d = 5, 20 and target depths 3, 4, 6
    # at x ~ N(−2, I), and the smallest at x ~ N(0, I), each over its whole 90 % interval over prompts
    "gpt-task-linear": all_of(("value", "<", 0.05)),
    "gpt-task-n01": all_of(("value", ">=", 0.15)),
}

WITHDRAWN: dict[str, str] = {
    "icdl-obj1": "the band (0.05, 0.20) was widened to (0.02, 0.20) at f47b8f5 after runs of "
                 "the same design had been seen; and the design changed (three seeds, paired prompts, intervals)",
    "icdl-obj2-shift": "the band (0, 0.99) on the share of models (e12d524) contained almost any "
                       "failure; the claim is now judged on the smallest fall between mixtures, with its interval",
    "icdl-obj2-length": "the band (−0.10, 0) was widened to (−0.25, 0) at f47b8f5 to contain "
                        "a failing run; and the comparison changed (the ReLU model against its softmax twin)",
    "icdl-obj3": "the band (0.10, 1.0) was about the absolute fall of R² (now this book's absolute form of "
                 "objective 3); ICDL's claim is now judged against the MLP on the shifted prompts, a design without "
                 "a band",
}

#: the commit that registered each claim's criterion as it stands (``tests/test_registered.py`` reads the
#: registry at that commit and fails where a threshold, comparison or band differs today)
REGISTERED: dict[str, str] = {
    **{c: "dcdbd53" for c in ("icdl-obj1-fitted", "icdl-obj2-shift-fitted", "icdl-obj2-length-fitted",
                              "icdl-obj3-fitted", "gpt-obj3-drop-fitted")},
    "gpt-task-linear": "142ad4c",
    "gpt-task-n01": "142ad4c",
}

#: the setting of the claims' models (profile fitted) against ICDL's
FITTED_SETTING = ("models trained at d = 5 with 3 layers × 2 heads × width 64, both attentions from scratch at the "
                  "schedule fitted to ICDL's task (Adam, lr 1e-4, batch 64, 10 000 steps); ICDL: d = 20, "
                  "12 × 8 × 256, 500 000 steps, each from scratch on ReLU targets")

#: the main study's claims asked again on profile fitted, and their names there
FITTED_CLAIMS = {c: f"{c}-fitted" for c in ("icdl-obj1", "icdl-obj2-shift", "icdl-obj2-length", "icdl-obj3",
                                            "gpt-obj3-drop")}

DEVIATIONS: dict[str, str] = {c: FITTED_SETTING for c in FITTED_CLAIMS.values()}

_REFERENCE_SCHEDULE = ("judged on the reference run, whose schedule (Adam at lr 1e-3, batch 32, a tanh warm phase, "
                       "the ReLU-attention model started from the softmax weights) left a model short of the learning "
                       "gate, so every verdict was the schedule's; asked again, on the same lines, of models trained "
                       "at the schedule a registered scan fitted to the task on validation prompts")

#: objectives 1-3 as judged on the reference run (the report's "Designs we replaced")
REPLACED: dict[str, Replaced] = {r.id: r for r in (
    Replaced("icdl-obj1", "ICDL objective 1 (Figs. 2–4)",
             "ICL R² comparable to the trained MLP baseline up to 50 examples",
             "inconclusive",
             "largest shortfall below the MLP up to the training length, same prompts: 0.086 (90 % interval "
             "−0.008 to 0.138, over seeds and prompts, each of the 18 numbers it ranges over on its own "
             "interval); not decided: the models did not all learn the task (target depth 6, relu leads the "
             "context mean by 0.067 (90 % interval 0.028 to 0.107), the registered margin 0.05)",
             "python -m icdl.gpt_icl --profile reference --part main --part shift at bf39a6e", "bf39a6e",
             ("icdl-obj1-fitted",), _REFERENCE_SCHEDULE),
    Replaced("icdl-obj2-shift", "ICDL objective 2 (Figs. 2–4)",
             "R² drops as the test mixture moves away from pretraining",
             "inconclusive",
             "smallest fall of R² at the training length from one mixture to the next ((1, 0) → (.5, .5)): "
             "0.121 (90 % interval −0.536 to 0.324, over seeds and prompts, each of the 18 numbers it ranges "
             "over on its own interval); not decided: the models did not all learn the task (target depth 6, "
             "relu leads the context mean by 0.067 (90 % interval 0.028 to 0.107), the registered margin "
             "0.05)",
             "python -m icdl.gpt_icl --profile reference --part main --part shift at bf39a6e", "bf39a6e",
             ("icdl-obj2-shift-fitted",), _REFERENCE_SCHEDULE),
    Replaced("icdl-obj2-length", "ICDL objective 2 (Figs. 3–4)",
             "softmax degrades past the pretraining length, ReLU less",
             "inconclusive",
             "smallest margin over depths of the ReLU model's change past the training length over its "
             "softmax twin's (the same steps from the same weights): −0.015 (90 % interval −0.343 to 0.087, "
             "over seeds and prompts, each of the 3 numbers it ranges over on its own interval); not decided: "
             "the models did not all learn the task (target depth 6, relu leads the context mean by 0.067 (90 "
             "% interval 0.028 to 0.107), the registered margin 0.05)",
             "python -m icdl.gpt_icl --profile reference --part main --part shift at bf39a6e", "bf39a6e",
             ("icdl-obj2-length-fitted",), _REFERENCE_SCHEDULE),
    Replaced("icdl-obj3", "ICDL objective 3 (Figs. 5–6)",
             "with shifted target parameters, ICL stays comparable to the network trained on the prompt",
             "inconclusive",
             "largest shortfall below the MLP on shifted targets (μ = ±0.5), same prompts: 0.608 (90 % "
             "interval 0.413 to 1.116, over seeds and prompts, each of the 36 numbers it ranges over on its "
             "own interval); not decided: the models did not all learn the task (target depth 6, relu leads "
             "the context mean by 0.067 (90 % interval 0.028 to 0.107), the registered margin 0.05)",
             "python -m icdl.gpt_icl --profile reference --part main --part shift at bf39a6e", "bf39a6e",
             ("icdl-obj3-fitted",), _REFERENCE_SCHEDULE),
    Replaced("gpt-obj3-drop", "ICDL objective 3 (Figs. 5–6), as an absolute fall (this book's form)",
             "not claimed by ICDL in this form: R² at the training length falls by at most 0.1 when μ moves "
             "to ±0.5",
             "inconclusive",
             "largest R² drop at the training length for μ = ±0.5: 0.618 (90 % interval 0.505 to 0.879, over "
             "seeds and prompts, each of the 12 numbers it ranges over on its own interval); not decided: the "
             "models did not all learn the task (target depth 6, relu leads the context mean by 0.067 (90 % "
             "interval 0.028 to 0.107), the registered margin 0.05)",
             "python -m icdl.gpt_icl --profile reference --part main --part shift at bf39a6e", "bf39a6e",
             ("gpt-obj3-drop-fitted",), _REFERENCE_SCHEDULE),
)}

KNOWN_FAILURES: dict[str, str] = {}

#: the code that computes this chapter's registered values from its runs' stored numbers (``claims.JUDGED_BY``)
JUDGED_BY: tuple[str, ...] = (
    "gpt_icl/core/intervals.py",
    "gpt_icl/core/learning.py",
    "gpt_icl/core/verdicts.py",
    "gpt_icl/objectives/fitted.py",
    "gpt_icl/objectives/judge.py",
    "gpt_icl/objectives/task_content.py",
)
