"""ICDL sec. 5 and Appendix F: trained transformers that learn deep networks in context (chapter ``gpt_icl``).

* :mod:`~icdl.gpt_icl.model` -- a GPT-2-style transformer in plain torch, attention activation (softmax or
  ReLU) a constructor argument;
* :mod:`~icdl.gpt_icl.tasks` -- prompts from random N-layer target networks, x from mixtures of N(±2, I);
* :mod:`~icdl.gpt_icl.training` -- the training loop, checkpoints that resume;
* :mod:`~icdl.gpt_icl.baselines` -- context mean, least squares, nearest neighbours, the per-prompt MLP
  (batched over prompts), R² per position;
* :mod:`~icdl.gpt_icl.study` -- the profiles, evaluation on the four mixtures and shifted parameters, the
  judgement of the claims;
* :mod:`~icdl.gpt_icl.speed` -- the cost comparison of REB, FLOP/s, the baseline benchmark;
* ``python -m icdl.gpt_icl --profile reference`` -- the resumable reference run (:mod:`icdl.gpt_icl.__main__`).
"""
