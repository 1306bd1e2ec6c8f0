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
# to predict the mean of the labels seen so far -- the {term}`context mean` -- and
# on bias-free ReLU targets of width $2d$ they stay there; on tanh targets the
# same code leaves the plateau. This is why the reference run of the main
# study -- the models of {doc}`gpt_depth`, {doc}`gpt_scale` and
# {doc}`gpt_mechanism` -- starts with a tanh phase. The schedule a scan later
# fitted to the task without one ({doc}`gpt_n01`, at a larger batch and a
# smaller learning rate) is the one {doc}`gpt_icl` judges its claims on; there
# {glue:text}`fitted_gate_count` meet the {term}`learning gate`, so the plateau
# is not escaped by that schedule alone.
#
# **What we find** (shown: {glue:text}`plateau_on`): when the runs left the
# plateau -- {glue:text}`left_steps`. On the ReLU-2d targets only
# {glue:text}`relu_within` % of the label variance lies within prompts, and a
# cheap shortcut (below) explains the plateaued model's predictions nearly as
# well as the model itself does. This is consistent with the plateau being that
# shortcut; it does not show that the shortcut is what holds training there.
# In the reference run, the softmax weights run under ReLU attention before any
# ReLU training lead the context mean by {glue:text}`switch_range` (negative:
# below it), and after their own training by {glue:text}`relu_lead_range`.
#
# Code: `icdl.gpt_icl.plateau` (profiles, study, result file). There is no
# paper claim to judge, so the chapter judges no claim.

# %% tags=["parameters", "remove-cell"]
profile = "quick"
overrides = {}

# %% tags=["hide-cell", "remove-output"]
import pandas as pd
import torch

from icdl import figures
from icdl.gpt_icl import objectives, plateau
from icdl.gpt_icl.core import main_study
from icdl.repro import chapter
from icdl.repro.results import show_reference
from icdl.repro.typeset import count
from icdl.repro.words import run_words

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
chapter.table(plateau.study.summary_shown(pl["summary"]))

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
fitted = show_reference(main_study.PROFILES, "icl", "fitted")
if fitted is not None:  # the judged run of gpt_icl: how many of its models left the plateau by the gate's margin
    from icdl.gpt_icl.core import learning, verdicts

    fitted_leads = verdicts.context_mean_leads(verdicts.Sums(fitted["data"]["blocks"], fitted["data"]["labels"]),
                                               main_study.PROFILES.resolve("fitted")["train_examples"])
    fitted_gate = learning.met_count(fitted_leads, learning.margin("icdl-obj1-fitted"))
else:
    fitted_gate = "—"  # its run is not committed yet
chapter.glue(plateau_on=plateau_on, fitted_gate_count=fitted_gate,
             **plateau.study.glue_values(pl["summary"], pl["shortcut"]))

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

# %% [markdown]
# ## The warm phase and the switch to ReLU attention
#
# The reference run trains the softmax model first on tanh targets, which it
# learns, and then on the ReLU targets, which it then learns too -- provided the
# tanh phase lasts until the model has left the plateau *on the tanh targets*,
# which above takes thousands of steps; the reference's lasts
# {glue:text}`warm_steps` steps. Its ReLU-attention model starts from the trained
# softmax weights and trains on the ReLU targets with its own attention (a
# deviation from ICDL, which trains each from scratch). How much of the softmax
# model carries over, from the committed reference run:

# %%
ref = show_reference(main_study.PROFILES, "icl", "reference")
ref_curves = main_study.mean_curves(pd.DataFrame(ref["data"]["curves"]))
ref_baselines, ref_len = pd.DataFrame(ref["data"]["baselines"]), main_study.PROFILES.resolve("reference")["train_examples"]

# %% mystnb={"figure": {"caption": "The reference run's switch from softmax to ReLU attention, pretraining mixture, as the normalised error $1 - R^2$ on a log axis (lower is better; 1 is the error of predicting the mean label): the trained softmax model (blue), the same weights run with ReLU attention before any ReLU training (dashed) and the ReLU model after its own training (orange); dash-dot: least squares; grey dotted: context mean; shaded: beyond the training length.", "name": "fig-icl-switch"}}
fig = figures.gpt.plot_icl_switch(ref_curves, ref_baselines, ref_len)

# %% tags=["NBVAL_CHECK_OUTPUT"]
kept = objectives.judge.switch_table(ref_curves, ref_baselines, ref_len)
chapter.table(kept.round(3))

# %% tags=["remove-cell"]
chapter.glue(warm_steps=count(main_study.PROFILES.resolve("reference")["warm_steps"]),
             **objectives.judge.switch_glue(kept))

# %% [markdown]
# The table gives, per target depth at the training length, each model's lead
# in R² over the context mean: the softmax model's, the same weights' under
# ReLU attention before any ReLU training, and the ReLU model's after its own.
# Run under ReLU attention, the softmax weights lead the context mean by
# {glue:text}`switch_range` (negative: below it); after their own training the
# ReLU models lead it by {glue:text}`relu_lead_range`.

# %% tags=["remove-cell"]
chapter.show_glued()
