"""The chapter's claims judged in the order their gates need (chapter ``gpt_mechanism``).

The four hypotheses asked over the seeds (:func:`~icdl.gpt_icl.mechanism.seeds.judge_seeds`) are decided only where
the positive control passed (gate ``control``, :func:`~icdl.gpt_icl.mechanism.judge.judge_control`), where the
planted GD, ridge and kernel-smoother models were told apart on the same task by the claim's own measure (gate
``power``, :func:`~icdl.gpt_icl.mechanism.power.judge`) and where the main study's models learned the task (gate
``learned``, :func:`~icdl.gpt_icl.core.main_study.learning_gate`): so the control and the planted models are judged
first, and their entries feed the seeds' gates.

===================  ==========================================================================================
:func:`judge_icdl`   the control, the planted models (both tasks) and the hypotheses at ICDL's inputs
:func:`judge_n01`    the hypotheses asked again of the models trained at x ~ N(0, I) (profile ``seeds-n01``)
===================  ==========================================================================================
"""

from __future__ import annotations

import pandas as pd

from icdl.gpt_icl.core import main_study
from icdl.gpt_icl.mechanism import judge, seeds


def judge_icdl(result: dict | None, cfg, control: dict | None, power_blocks: pd.DataFrame | None
               ) -> dict[str, list[dict]]:
    """The ledger entries of the claims at ICDL's inputs, by what they judge: ``control`` (the positive control,
    from ``control``: profile ``control``'s committed result, None while it waits), ``power`` (the planted models
    on both tasks, from ``power_blocks``: :func:`~icdl.gpt_icl.mechanism.power.committed`) and ``seeds`` (the four
    hypotheses over the seeds of ``result``, profile ``seeds`` resolved as ``cfg``), the last behind the gates the
    first two and the reference run's learning gate set."""
    from icdl.gpt_icl.mechanism import power  # by name: its own command (the package does not import it)

    train = cfg["train_examples"]
    control_entries = judge.judge_control(None if control is None else control["blocks"], train)
    power_entries = power.judge(power_blocks, train, power.COMMAND.format(profile="seeds"))
    seeds_entries = seeds.judge_seeds(result, cfg, train, control_entries[0]["passed"] is True,
                                      main_study.learning_gate("reference"), power=power.gates(power_entries, "icdl"))
    return {"control": control_entries, "power": power_entries, "seeds": seeds_entries}


def judge_n01(result: dict | None, cfg, judged: dict[str, list[dict]]) -> list[dict]:
    """The ledger entries of the four hypotheses asked of the models of main-study profile ``n01`` (``result``:
    profile ``seeds-n01``'s committed result, resolved as ``cfg``), behind the positive control and the planted
    models of ``judged`` (:func:`judge_icdl`; the power on inputs from N(0, I)) and the n01 run's learning gate
    (None while that run is not committed)."""
    from icdl.gpt_icl.mechanism import power

    committed = (main_study.PROFILES.folder() / "icl.n01.json").is_file()
    learned = main_study.learning_gate("n01") if committed else None
    return seeds.judge_seeds(result, cfg, cfg["train_examples"], judged["control"][0]["passed"] is True, learned,
                             power=power.gates(judged["power"], "n01"), suffix="-n01")
