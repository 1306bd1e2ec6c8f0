"""ICDL sec. 5 and Appendix F: trained transformers that learn deep networks in context.

One module per idea (the README's module map lists them with the chapters that use them):

==============  ===========================================================================================
``model``       a GPT-2-style transformer in plain torch; attention softmax or ICDL Def. 7's ReLU
``tasks``       prompts of random N-layer target networks, x from mixtures of N(±2, I)
``training``    the training loop; checkpoints that resume exactly; data-parallel under torchrun
``baselines``   context mean, least squares, nearest neighbours, the per-prompt MLP (batched); R²
``schedule``    the settings every study shares; the warm phase and the softmax-to-ReLU warm start
``evaluation``  the seeded test prompts; R² per position with bootstrap bands; the baselines' curves
``objectives``  objectives 1–3 (chapter ``gpt_icl``): profiles, run, judge, result files
``depth``       objective 4 (chapter ``gpt_depth``): profiles, study, judge, result file
``plateau``     the context-mean plateau (chapter ``gpt_plateau``): profiles, study, result file
``scale``       the main study trained longer, scored at snapshots; trend, forecast, judge (``gpt_scale``); its
                parts ``scale_models`` (profiles, training), ``scale_trend`` (scores, trend, forecast),
                ``scale_judge`` (the ledger's judge, the wider models), ``scale_show`` (the chapter's tables)
``algorithms``  candidate in-context algorithms (GD on an N-layer network, ridge, …) and sensitivities
``mechanism``   which algorithm the trained models run (chapter ``gpt_mechanism``): scan, measures, judge; its
                parts ``mechanism_measures`` (candidates, measures, choosing), ``mechanism_judge`` (the nearest
                candidate, the ledger's judge), ``mechanism_show`` (the chapter's tables)
``cost``        REB's cost comparison and its judge (computation appendix)
``measure``     FLOP counts, the machine's rates, the MLP baseline against its roofline
``speed``       training steps timed against a same-run matmul and the HuggingFace GPT-2 design (``--speed``)
``pipeline``    the whole reference as single-threaded jobs on N cores, and its timing (``--workers``)
``__main__``    ``python -m icdl.gpt_icl``: the resumable reference and paper runs
==============  ===========================================================================================
"""

from . import shapes  # noqa: F401,E402  (registers the shapes of this package's result files)
