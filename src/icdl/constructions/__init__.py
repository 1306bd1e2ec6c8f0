"""Transformers whose weights are set by the papers' formulas, not trained.
Chapters ``icgd_linear``, ``attention_passes``, ``icgd_transformer`` and ``softmax`` check them.

* :mod:`~icdl.constructions.linear` -- one ReLU-attention layer = one GD step of linear regression
  (the warm-up of ICDL Problem 1);
* :mod:`~icdl.constructions.lemmas` -- ICDL Lemmas 2–5: the token layout of a block and the layers that
  write the forward pass, the activation's derivative, the loss derivative and the backward pass;
* :mod:`~icdl.constructions.theorem1` -- ICDL Theorem 1: the gradient-step and projection layers and the
  whole (2N + 4)L-layer :class:`~icdl.constructions.theorem1.ICGDTransformer`;
* :mod:`~icdl.constructions.bounds` -- the a-priori error bounds of Lemmas 2–6, Theorem 1 and Corollary 1.1;
* :mod:`~icdl.constructions.softmax` -- ICDL Lemmas 16–17 executed: the feed-forward quantiser and the
  contextual mapping of softmax attention.

Hagiwara's constructions (TF(4, 2, 2) and the two GD steps of Appendix B) are in :mod:`icdl.lsa.constructions`.
"""
