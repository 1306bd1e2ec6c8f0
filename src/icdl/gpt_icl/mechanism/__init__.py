"""Which algorithm does a trained transformer run? (chapter ``gpt_mechanism``; this book's question, asked of
the main study's models after von Oswald et al. 2023 and Akyürek et al. 2023).

============  =========================================================================================
``measures``  the candidates, the three measures, the member of each family nearest a model
``judge``     the nearest candidate, GD against the nearest simple rule, the positive control
``fair``      GD's grid edges, the measures' intervals, the gates the later designs share
``flow``      GD tuned in gradient-flow time ηL, and the median block of prompts
``seeds``     the flow numbers over the main study's seeds, their judge (the live design)
``show``      what the chapter shows: tables, the prose's numbers
``study``     the profiles, the study over every model, its result file, ``python -m icdl.gpt_icl.mechanism``
============  =========================================================================================
"""

from . import fair, flow, judge, measures, seeds, show, study

__all__ = ["fair", "flow", "judge", "measures", "seeds", "show", "study"]
