"""ICDL's objectives 1–3 (chapter ``gpt_icl``): does a transformer trained on prompts of random deep networks
predict in context about as well as a network trained on the prompt? Asked of the main study's models
(:mod:`icdl.gpt_icl.core.main_study`), at ICDL's inputs and at x ~ N(0, I) (profile ``n01``).

================  ===================================================================================
``judge``         the tables behind the claims and the ledger's judge of objectives 1–3
``n01``           the same questions where the task needs a deep network (profile ``n01``)
``fitted``        the same questions at the schedule fitted to ICDL's task (profile ``fitted``)
``task_content``  how much of a prompt needs a deep network: the variance split of the task
``yardstick``     least squares as the yardstick, and Garg et al.'s error
``errata``        REB's statement about the baselines' inputs, with its evidence
================  ===================================================================================
"""

from . import errata, fitted, judge, n01, task_content, yardstick

__all__ = ["errata", "fitted", "judge", "n01", "task_content", "yardstick"]
