"""The book's figures: one style (:mod:`~icdl.figures.style`, on the theme of :mod:`icdl.repro.theme`) and the
plotting functions of the chapters, one module per part of the book.

Chapters apply the theme once (through :func:`icdl.repro.chapter.start`), compute their numbers with a
function of the package, and pass them to a ``plot_*`` function here; the same functions are what the pixel
tests (pytest-mpl) draw. Captions and figure numbers are set in the notebook cell's ``mystnb: figure:``
metadata, not here.

===============  ===========================================================================================
``style``        sizes, one colour per meaning, legends and axes shared by every figure
``theory``       ICDL's constructions (Lemmas 1–6, Theorems 1–2, sums of ReLUs)
``gpt``          trained transformers in context: objectives 1–4 and the plateau (``gpt_icl``, ``gpt_depth``,
                 ``gpt_plateau``)
``scale``        the scale study (``gpt_scale``)
``mechanism``    which algorithm the trained models run (``gpt_mechanism``)
``recipes``      the recipe scan's validation curves (``gpt_n01``)
``diffusion``    the diffusion score (``diffusion_score``, ICDL App. G)
``computation``  the reference run's stages (computation appendix)
``lsa``          Hagiwara's constructions and training study
===============  ===========================================================================================
"""

from . import computation, diffusion, gpt, lsa, mechanism, recipes, scale, style, theory

__all__ = ["computation", "diffusion", "gpt", "lsa", "mechanism", "recipes", "scale", "style", "theory"]
