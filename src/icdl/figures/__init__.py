"""The book's figures: one style (:mod:`~icdl.figures.style`) and the plotting functions of the chapters.

Chapters call :func:`use_style` once (through :func:`icdl.repro.chapter.start`), compute their numbers
with a function of the package, and pass them to a ``plot_*`` function here; the same functions are
what the pixel tests (pytest-mpl) draw. Captions and figure numbers are set in the notebook cell's
``mystnb: figure:`` metadata, not here.

* :mod:`~icdl.figures.theory` -- ICDL's constructions (Lemmas 1–6, Theorems 1–2, sums of ReLUs);
* :mod:`~icdl.figures.experiments` -- trained transformers (sec. 5, and which algorithm they run) and the
  diffusion score (App. G);
* :mod:`~icdl.figures.lsa` -- Hagiwara's constructions and training study.
"""

from .experiments import (
    plot_alignment,
    plot_dsm_targets,
    plot_gd_scan,
    plot_icl_depth,
    plot_icl_length,
    plot_icl_methods,
    plot_icl_mixtures,
    plot_icl_param_shift,
    plot_icl_switch,
    plot_icl_training,
    plot_plateau,
    plot_scale_forecast,
    plot_scale_trend,
    plot_scale_width,
    plot_score_errors,
    plot_sensitivity_examples,
)
from .lsa import (
    plot_l1_scan,
    plot_lsa_construction_errors,
    plot_lsa_fitted_curves,
    plot_lsa_gd_two_steps,
    plot_lsa_validation,
    plot_lsa_weights,
)
from .style import PALETTE, RC, SINGLE, WIDE, style, use_style
from .theory import (
    plot_fit_curves,
    plot_fitted_steps,
    plot_icgd_paths,
    plot_icgd_predictions,
    plot_icgd_transformer_paths,
    plot_layer_gradient_norms,
    plot_layer_weights,
    plot_lemma1_recursion,
    plot_lemma2_errors,
    plot_quantiser_and_error,
    plot_relu_sum_errors,
    plot_token_layout,
    plot_train_comparison,
)

__all__ = [
    "PALETTE", "RC", "SINGLE", "WIDE", "style", "use_style", "plot_icl_depth", "plot_icl_switch", "plot_plateau",
    "plot_dsm_targets", "plot_icl_methods",
    "plot_icl_mixtures", "plot_icl_length", "plot_icl_param_shift", "plot_icl_training", "plot_score_errors",
    "plot_l1_scan", "plot_lsa_construction_errors", "plot_lsa_fitted_curves", "plot_lsa_gd_two_steps",
    "plot_lsa_validation", "plot_lsa_weights", "plot_fit_curves", "plot_fitted_steps", "plot_icgd_paths",
    "plot_icgd_predictions",
    "plot_icgd_transformer_paths", "plot_layer_gradient_norms", "plot_layer_weights", "plot_lemma1_recursion",
    "plot_lemma2_errors", "plot_quantiser_and_error", "plot_relu_sum_errors", "plot_token_layout",
    "plot_train_comparison", "plot_alignment", "plot_gd_scan", "plot_sensitivity_examples", "plot_scale_trend",
    "plot_scale_forecast", "plot_scale_width",
]
