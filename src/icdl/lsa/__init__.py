"""Least squares by LayerNorm: Hagiwara's TF(D, L, K) (LSA, arXiv 2607.15819).

* :mod:`~icdl.lsa.model` -- the data (eqs. 4–8) and the model (eqs. 9–17), batched over runs;
* :mod:`~icdl.lsa.constructions` -- TF(4, 2, 2) of section 3, the two GD steps of Appendix B, Appendix A's pair
  (chapter ``lsa_construction``);
* :mod:`~icdl.lsa.training` -- the training protocol of section 4 (batched runs, compile, checkpoints, shards);
* :mod:`~icdl.lsa.study` -- Tables 1–2 and Figs. 2–3 from a trained model, and the judgement of the claims
  (chapter ``lsa_training``);
* :mod:`~icdl.lsa.readout` -- the run the paper analyses, and the query cells that carry the estimate;
* :mod:`~icdl.lsa.show` -- what chapter ``lsa_training`` shows of a result: its tables and the numbers its prose quotes;
* ``python -m icdl.lsa --profile reference`` -- the resumable reference run (:mod:`icdl.lsa.__main__`).
"""

from .shapes import register_shapes

register_shapes()  # every result file of this package is checked against its shape on load and save
