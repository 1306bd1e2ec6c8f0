"""icdl: executable constructions for in-context deep learning.

Modules, in the order the book uses them:

* :mod:`icdl.prompts` -- the prompt matrix H of ICDL eq. 2.1
* :mod:`icdl.constructions` -- transformer layers with weights set by formulas
* :mod:`icdl.linear_gd` -- in-context GD on linear regression (chapter 1)
* :mod:`icdl.networks` -- N-layer networks and the explicit gradient of Lemma 1 (chapter 2)
* :mod:`icdl.gradient_checks` -- the numbers behind chapter 2
* :mod:`icdl.relu_sums` -- sums of ReLUs in the exact sense of ICDL Def. 4 (chapter 5)
* :mod:`icdl.lsa` -- Hagiwara's TF(D, L, K), its constructions and training study (chapters 3-4)
* :mod:`icdl.figures` -- the book's figure style and plotting functions
* :mod:`icdl.ledger`, :mod:`icdl.claims` -- the reproducibility ledger
* :mod:`icdl.profiles`, :mod:`icdl.results` -- run profiles and result files with provenance
* :mod:`icdl.execute` -- executes the chapters with papermill (``make book``)
"""

__version__ = "0.1.0"
