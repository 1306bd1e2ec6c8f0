# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version,-jupytext.text_representation.format_version
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # The context-mean plateau
#
# A finding of ours, not a claim of ICDL: small transformers trained from
# scratch on ICDL's random ReLU targets (the task of {doc}`gpt_icl`) first learn
# to predict the mean of the labels seen so far -- the **{term}`context mean`** -- and
# on bias-free ReLU targets of width $2d$ they stay there; on tanh targets the
# same code leaves the plateau. This is why the models of {doc}`gpt_icl` start
# with a tanh phase.
#
# **What we find** (judged on: {glue:text}`plateau_on`): when the runs left the
# plateau -- {glue:text}`left_steps`. On the ReLU-2d targets only
# {glue:text}`relu_within` % of the label variance lies within prompts, and a
# cheap shortcut (below) explains the plateaued model's predictions nearly as
# well as the model itself does. This is consistent with the plateau being that
# shortcut; it does not show that the shortcut is what holds training there.
#
# Code: `icdl.gpt_icl.plateau` (profiles, study, result file). There is no
# paper claim to judge, so the chapter judges no claim.

# %% tags=["parameters", "remove-cell"]
profile = "quick"
overrides = {}

# %% tags=["hide-cell", "remove-output"]
import torch

from icdl import figures
from icdl.gpt_icl import plateau
from icdl.repro import chapter
from icdl.repro.ledger import run_words

torch.set_num_threads(1)  # small tensors: one thread is as fast and leaves the other core to long runs
cfg, _ = chapter.start(plateau.study.PROFILES, profile, overrides)

# %% [markdown]
# ## Three target families
#
# We train the softmax model of {doc}`gpt_icl` from scratch on three target
# families -- bias-free ReLU networks of width $2d$ (the task of the main
# study), ReLU networks of width 100, and tanh networks of width 100 -- and
# record its R² on fixed validation prompts as it trains, beside the context
# mean and least squares on those prompts. A run *leaves* the plateau at the
# first evaluation above the midpoint between the two.

# %%
pl, plateau_on = chapter.reference_or_live(plateau.study.PROFILES, ("plateau",), plateau.study.load,
                                           lambda: plateau.study.study(cfg, progress=False, shortcut_prompts=512), profile)
print("shown:", run_words(plateau_on).removeprefix("on "))

# %% mystnb={"figure": {"caption": "The same softmax transformer trained from scratch on three target families (the committed reference run, or the live run while it is missing): mean validation $R^2$ over positions 10 to the training length against the training step, with the context mean (dotted) and least squares (dash-dot) on the same prompts.", "name": "fig-icl-plateau"}}
fig = figures.gpt.plot_plateau(pl["history"], pl["levels"])

# %% tags=["NBVAL_CHECK_OUTPUT"]
chapter.table(pl["summary"])

# %% [markdown]
# *Share within prompts* is the part of the label variance that lies within prompts --
# all that the context mean cannot explain -- and *linear share of it* how
# much of that a least-squares fit on the prompt's own examples explains.
# *Left the plateau at step* is empty for a run that never left it.
#
# **A shortcut on the plateau?** A bias-free ReLU network is positively
# homogeneous: $f(tx) = t f(x)$ for $t > 0$. The inputs cluster around
# $-2\cdot\mathbb 1$, so to first order $y_i$ scales with the projection
# $\mathbb 1^\top x_i$, and the context mean rescaled by
# $\mathbb 1^\top x_k / \mathbb 1^\top \bar x$ is a predictor that costs nothing
# to learn (`shortcut_predictor`). Whether the plateaued model (the ReLU-2d run
# above) uses it: R² of the model, the context mean and the shortcut against the
# labels, and how much of the model's own predictions the context mean explains
# alone and together with the shortcut, at a few positions:

# %% tags=["NBVAL_CHECK_OUTPUT"]
chapter.table(plateau.study.shortcut_shown(pl["shortcut"], [0, 4, 9, 17, -1]))

# %% tags=["remove-cell"]
chapter.glue(plateau_on=plateau_on, **plateau.study.glue_values(pl["summary"], pl["shortcut"]))

# %% [markdown]
# **What the plateau study shows.** When the runs left the plateau:
# {glue:text}`left_steps`. Within-prompt variation is
# {glue:text}`relu_within` % of the label variance for the ReLU-2d targets and
# {glue:text}`tanh_within` % for the tanh ones: on the ReLU targets, most of what a
# model can predict is the per-prompt offset the context mean already gives. At
# the end of training, the lead over the context mean (validation R² averaged
# over positions 10 to the training length) is {glue:text}`relu_excess` on the ReLU-2d targets and {glue:text}`tanh_excess` on
# the tanh targets. At position {glue:text}`sc_position` the shortcut alone reaches
# R² {glue:text}`sc_short` against the labels (context mean {glue:text}`sc_cm`,
# plateaued model {glue:text}`sc_model`); the context mean explains
# {glue:text}`sc_expl_cm` % of the plateaued model's own predictions, and the
# context mean and the shortcut together {glue:text}`sc_expl_both` %. The
# plateaued model behaves like the shortcut: what the context mean leaves of its
# predictions, the shortcut nearly closes, and its R² sits beside the
# shortcut's. The tanh targets, for which no such shortcut exists (tanh is not
# positively homogeneous) and whose labels vary more within a prompt, are the
# family the same model leaves the plateau on. This is consistent with the
# hypothesis that the plateau is this cheap shortcut; it does not show that the
# shortcut is what holds training there.

# %% tags=["remove-cell"]
chapter.show_glued()
