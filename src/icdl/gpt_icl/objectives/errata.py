"""REB's statement about the inputs of ICDL's network baselines, with its evidence: the same targets' nonlinear
share at the two input distributions, measured beside the task (:func:`icdl.gpt_icl.objectives.task_content.
baseline_inputs_evidence`); registered for the errata page through the ``icdl.errata`` entry points of
``pyproject.toml``.
"""

from __future__ import annotations

from icdl.gpt_icl.objectives.task_content import baseline_inputs_evidence
from icdl.repro.errata import Erratum, Evidence


def _reb_baseline_inputs() -> Evidence:
    return Evidence(*baseline_inputs_evidence())


ERRATA: tuple[Erratum, ...] = (
    Erratum("reb-baseline-inputs", "REB", "Answer to reviewer R2xK: the inputs of the network baselines",
            r"the $N$-layer network baselines of Figs. 2–4 were trained and tested on inputs $x \sim N(0, I)$, "
            r"drawn beside transformers whose prompts have $x \sim N(-2, I)$ (the figures do not say so)",
            r"every baseline on the transformers' own prompts ($x \sim N(-2, I)$ and the test mixtures), the "
            r"same prompts for both; the two input distributions' tasks measured side by side",
            "gpt_icl", "tests/test_gpt_tasks.py::test_variance_split_on_families_whose_answer_is_known",
            measure=_reb_baseline_inputs, about=("gpt-task-n01", "icdl-obj1-fitted")),
)
