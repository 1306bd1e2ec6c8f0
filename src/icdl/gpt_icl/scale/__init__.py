"""ICDL sec. 5 with more training (chapter ``gpt_scale``): how far is the shortfall of the CPU models below
the trained MLP a matter of training, and how much training would close it?

==========  =========================================================================================
``models``  the profiles (the main study's lengths times a factor), the snapshot steps, training one model
``trend``   every snapshot's scores beside the baselines, the line through the shortfall, its forecast
``judge``   the ledger's judge, and the wider models against the reference at equal steps and FLOPs
``show``    what the chapter shows: tables and the numbers its prose quotes
``study``   the study over every model, its result file, the command ``python -m icdl.gpt_icl.scale``
==========  =========================================================================================
"""

from . import judge, models, show, study, trend

__all__ = ["judge", "models", "show", "study", "trend"]
