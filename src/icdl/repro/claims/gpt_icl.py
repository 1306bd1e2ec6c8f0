"""The claims of chapter ``gpt_icl``: what it must reproduce, each criterion as data, and the
registrations, deviations and known failures of its claims (:mod:`icdl.repro.claims` assembles every
chapter's part)."""

from __future__ import annotations

from .base import GPT_ICL, LEARNED, SEC5, Claim, Condition, all_of, row

CLAIMS: tuple[Claim, ...] = (
    # ---- ICDL experiments ----------------------------------------------------------------
    row("icdl-obj1", "ICDL objective 1 (Figs. 2–4)", "ICL R² comparable to the trained MLP baseline up to 50 examples",
        GPT_ICL, "tests/test_gpt_verdicts.py::test_obj1_both_sides_of_the_tolerance_and_inconclusive_between"),
    row("icdl-obj2-shift", "ICDL objective 2 (Figs. 2–4)", "R² drops as the test mixture moves away from pretraining",
        GPT_ICL, "tests/test_gpt_verdicts.py::test_obj2_mixtures_need_a_fall_at_every_step"),
    row("icdl-obj2-length", "ICDL objective 2 (Figs. 3–4)", "softmax degrades past the pretraining length, ReLU less",
        GPT_ICL, "tests/test_gpt_verdicts.py::test_obj2_length_compares_relu_with_its_softmax_twin"),
    row("icdl-obj3", "ICDL objective 3 (Figs. 5–6)",
        "with shifted target parameters, ICL stays comparable to the network trained on the prompt",
        GPT_ICL, "tests/test_gpt_verdicts.py::test_obj3_is_objective_1_on_the_shifted_prompts"),
    row("gpt-obj3-drop", "ICDL objective 3 (Figs. 5–6), as an absolute fall (this book's form)",
        "not claimed by ICDL in this form: R² at the training length falls by at most 0.1 when μ moves to ±0.5",
        GPT_ICL, "tests/test_gpt_verdicts.py::test_the_shift_drop_is_the_largest_fall_from_mu_0"),
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
    # objectives 1–3 on three seeds, paired prompts and 90 % intervals (icdl.gpt_icl.core.verdicts; each number
    # recorded with value_lo and value_hi): the largest shortfall below the MLP on its prompts; the smallest fall
    # of R² from one mixture to the next; the smallest margin of the ReLU model's change past the training
    # length over its softmax twin's; objective 1's shortfall on the shifted targets; our absolute form of 3
    "icdl-obj1": all_of(("value", "<=", 0.05), LEARNED),
    "icdl-obj2-shift": all_of(("value", ">", 0), LEARNED),
    "icdl-obj2-length": all_of(("value", ">", 0), LEARNED),
    "icdl-obj3": all_of(("value", "<=", 0.05), LEARNED),
    "gpt-obj3-drop": all_of(("value", "<=", 0.1), LEARNED),
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
    "icdl-obj1": "bf39a6e",
    "icdl-obj2-shift": "bf39a6e",
    "icdl-obj2-length": "bf39a6e",
    "icdl-obj3": "bf39a6e",
    "gpt-obj3-drop": "bf39a6e",
    "gpt-task-linear": "142ad4c",
    "gpt-task-n01": "142ad4c",
}

DEVIATIONS: dict[str, str] = {
    "icdl-obj1": SEC5, "icdl-obj2-shift": SEC5, "icdl-obj2-length": SEC5, "icdl-obj3": SEC5,
    "gpt-obj3-drop": SEC5,
}

KNOWN_FAILURES: dict[str, str] = {
    # none: the claims that failed on the reference run (see git history) are now behind the learning gate, which
    # a model of that run does not meet (core.learning): they are inconclusive until asked of models that learned
}

#: the code that computes this chapter's registered values from its runs' stored numbers (``claims.JUDGED_BY``)
JUDGED_BY: tuple[str, ...] = (
    "gpt_icl/core/intervals.py",
    "gpt_icl/core/learning.py",
    "gpt_icl/core/verdicts.py",
    "gpt_icl/objectives/judge.py",
    "gpt_icl/objectives/task_content.py",
)
