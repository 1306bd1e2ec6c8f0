"""The numbers behind each chapter: one module per chapter id, each with the chapter's ``PROFILES``.

=====================  ==========================  ============================================
module                 chapter id                  what it measures
=====================  ==========================  ============================================
``linear_gd``          ``icgd_linear``             one attention layer = one GD step, stacked
``gradient``           ``gradient_decomposition``  Lemma 1 against autograd; its cost
``relu_sums``          ``relu_sums``               Def. 4 / Lemma 7: error against H
``attention_passes``   ``attention_passes``        Lemmas 2–6: measured errors beside the bounds
``icgd_transformer``   ``icgd_transformer``        Theorem 1 and Corollary 1.1: ŵ^(l) against GD
``icgd_accounting``    ``icgd_transformer``        sizes, norms, FLOPs, layer counts (REB)
``softmax``            ``softmax``                 Theorem 2: softmax layers fitted to a GD step
``softmax_proof``      ``softmax``                 Theorem 2's proof: eq. E.1, Lemma 17, the look-up
``diffusion``          ``diffusion_score``         App. G: the diffusion score learned in context
``computation``        ``computation``             the appendix on batching, compiling, speed
=====================  ==========================  ============================================

The trained-transformer study (ICDL sec. 5, chapter ``gpt_icl``) and Hagiwara's study (chapters
``lsa_construction`` and ``lsa_training``) are subpackages of their own: :mod:`icdl.gpt_icl`, :mod:`icdl.lsa`.
"""

from .shapes import register_shapes

register_shapes()  # every result file of this package is checked against its shape on load and save
