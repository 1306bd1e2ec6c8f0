"""icdl: the constructions and experiments of three documents on in-context learning, as running code.

ICDL is Wu et al., *In-Context Deep Learning via Transformer Models* (arXiv 2411.16549); REB the
authors' answers to its reviewers; LSA Hagiwara, *In-context learning of closed form solution to simple
linear regression task using transformer with linear self-attention* (arXiv 2607.15819).

The package has four kinds of module; a chapter of the book (``notebooks/<chapter id>.py``) imports
the mathematics it explains and the study that computes its numbers.

The papers' mathematics (reusable, no chapter logic):

* :mod:`icdl.prompts` -- the prompt matrix H of ICDL eq. 2.1;
* :mod:`icdl.networks` -- N-layer networks (Defs. 1, 2, 10), Lemma 1's gradient, projected GD;
* :mod:`icdl.relu_sums` -- sums of ReLUs in the sense of ICDL Def. 4 (Lemma 7);
* :mod:`icdl.layers` -- every layer type: ReLU attention (Def. 7), MLP (Def. 8), element-wise
  multiplication (Defs. 5–6), softmax attention (E.1) and the feed-forward block (Def. 11);
* :mod:`icdl.constructions` -- weights set by formulas: one linear GD step (``linear``), Lemmas 2–5
  (``lemmas``), Theorem 1 (``theorem1``), the a-priori bounds (``bounds``), Lemmas 16–17 (``softmax``).

Chapter studies (the numbers behind one chapter each, with its ``PROFILES``): :mod:`icdl.studies`.

Experiment families with their own training code and command line:

* :mod:`icdl.gpt_icl` -- ICDL sec. 5: GPT-2-style transformers trained to learn deep networks in
  context (``python -m icdl.gpt_icl``);
* :mod:`icdl.lsa` -- Hagiwara's TF(D, L, K): constructions and training study (``python -m icdl.lsa``).

The book's machinery: :mod:`icdl.repro` (profiles, result files with provenance, the claims registry,
the ledger and report, chapter execution), :mod:`icdl.figures` (one style, every plot) and
:mod:`icdl.errors` (the base of the package's one-line refusals).
"""

__version__ = "0.1.0"
