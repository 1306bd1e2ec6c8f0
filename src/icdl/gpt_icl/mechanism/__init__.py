"""Which algorithm does a trained transformer run? (chapter ``gpt_mechanism``; this book's question, asked of
the main study's models after von Oswald et al. 2023 and Akyürek et al. 2023).

============  =========================================================================================
``measures``  the candidates, the three measures, the member of each family nearest a model
``grid``      where GD's chosen member sits in its grid, read in gradient-flow time: the gate
``numbers``   the four registered numbers with paired intervals, and the gated ledger entries
``seeds``     the live design: every seed's model, the seed means, their judge
``judge``     the nearest candidate, and the positive control with its judge
``plants``    planted models that are GD, ridge or a kernel smoother, at the trained models' noise
``power``     can each measure tell the algorithms apart on the plants? (its own command,
              ``python -m icdl.gpt_icl.mechanism.power``: imported by name, not here)
``show``      what the chapter shows: seed means, tables, the prose's numbers
``verdicts``  the chapter's claims judged in the order their gates need: control and planted models, then seeds
``study``     the profiles, the study over every model, its result file, ``python -m icdl.gpt_icl.mechanism``
============  =========================================================================================
"""

from . import grid, judge, measures, numbers, seeds, show, study, verdicts

__all__ = ["grid", "judge", "measures", "numbers", "seeds", "show", "study", "verdicts"]
