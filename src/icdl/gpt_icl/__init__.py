"""ICDL sec. 5 and Appendix F: trained transformers that learn deep networks in context.

A core that every question shares, one package per question (each with its study, judge and show modules and
an ``__init__`` that names them), and the commands on top. Arrows run downwards only: a command may import a
question, a question the core, the core only the machinery (:mod:`icdl.repro`); no question imports another
(``tests/test_imports.py`` reads every import).

==============  ===============================================================================================
``core``        model, tasks, training, schedule, baselines, algorithms, evaluation, intervals, verdict helpers,
                the main study whose models every question reads, FLOP counts, the job runner, result shapes
``objectives``  ICDL's objectives 1–3 (chapter ``gpt_icl``), at ICDL's inputs and at x ~ N(0, I) (``n01``)
``depth``       objective 4 (chapter ``gpt_depth``)
``plateau``     the context-mean plateau (chapter ``gpt_plateau``)
``scale``       the main study trained longer, and wider (chapter ``gpt_scale``)
``mechanism``   which algorithm the trained models run (chapter ``gpt_mechanism``)
``compute``     REB's cost comparison and the training speed (computation appendix)
``schedules``   the schedule fitted to each task on validation prompts, before any judged run (chapter ``gpt_n01``)
``reference``   the whole reference run as single-threaded jobs on N cores, and its timing (``--workers``)
``__main__``    ``python -m icdl.gpt_icl``: the resumable reference and paper runs
==============  ===============================================================================================
"""

from .core.shapes import register_shapes

register_shapes()  # every result file of these studies is checked against its shape on load and save
