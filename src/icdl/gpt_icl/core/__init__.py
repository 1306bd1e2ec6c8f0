"""The shared core of ICDL sec. 5's experiments: what every question below it trains, scores and judges with.

=================  =================================================================================
``model``          a GPT-2-style transformer in plain torch; attention softmax or ICDL Def. 7's ReLU
``tasks``          prompts of random N-layer target networks, x from mixtures of N(±2, I)
``training``       the training loop; checkpoints that resume exactly; data-parallel under torchrun
``schedule``       the settings every study shares; the warm phase and the softmax-to-ReLU warm start
``baselines``      context mean, least squares, nearest neighbours, the per-prompt MLP (batched); R²
``algorithms``     candidate in-context algorithms (GD on an N-layer network, ridge, …), sensitivities
``evaluation``     the seeded test prompts; R² per position; the sums per block of prompts
``intervals``      intervals over seeds and prompts from those sums
``verdicts``       the numbers objectives 1–3 are judged on, and :func:`~verdicts.decide` on an interval
``learning``       the learning gate: a claim about trained models passes only where every model learned
``main_study``     the main study: every model of every target depth and seed, its runs and result files
``measure``        FLOP counts and the machine's rates
``jobs``           independent commands as single-threaded jobs on N cores
``shapes``         the shapes of the result files, registered with :mod:`icdl.repro.schema`
=================  =================================================================================

The core imports only the machinery (:mod:`icdl.repro`) and never a question package.
"""
