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
# # Deeper transformers (ICDL objective 4)
#
# ICDL's objective 4 (ICDL Fig. 7) is that a deeper transformer is a better
# in-context learner: trained alike, models of 4, 6, 8 and 10 layers should
# predict a prompt's query better the more layers they have
# {cite:p}`wu2025icdl`. We train a softmax and a ReLU model of each depth on the
# same targets with the schedule of {doc}`gpt_icl` and score them at 15, 30 and
# 45 examples before the query.
#
# **What we find** (judged on: {glue:text}`depth_on`): the smallest R² gain
# from the shallowest to the deepest model, over both attentions and the three
# evaluation points, is {glue:text}`depth_min_gain`; the box says whether the
# claim holds. Like every claim of sec. 5 here, it is judged under the changed
# schedule of {doc}`gpt_icl`.
#
# Code: `icdl.gpt_icl.depth` (profiles, study, judge, result file), on the
# modules of {doc}`gpt_icl`.

# %% [markdown]
# **What this chapter checks, and what we found**:
#
# ```{glue:} claims_box
# ```

# %% tags=["parameters"]
profile = "quick"
overrides = {}

# %% tags=["remove-output"]
import pandas as pd
import torch

from icdl import figures
from icdl.gpt_icl import depth
from icdl.repro import chapter

torch.set_num_threads(1)  # small tensors: one thread is as fast and leaves the other core to long runs
cfg, ledger = chapter.start(depth.PROFILES, profile, overrides)
rcfg = depth.PROFILES.resolve("reference")

# %% [markdown]
# ## The study
#
# The claim is judged on the reference run when it is complete, on the live run
# of this page's profile otherwise:

# %%
data, depth_on = chapter.reference_or_live(depth.PROFILES, ("depth",), depth.load,
                                           lambda: depth.depth_study(cfg, progress=False), profile)
print("judged on:", depth_on)

# %% tags=["remove-cell"]
chapter.glue(**depth.settings_glue(rcfg if depth_on == "reference" else cfg),
             depth_train_minutes=f"{float(pd.DataFrame(data['training'])['seconds'].sum()) / 60:.0f}")

# %% [markdown]
# In that run: targets of depth {glue:text}`depth_target`, prompts of
# {glue:text}`depth_train` examples in training (so that the last evaluation
# point lies inside the training length), the two schedules of {doc}`gpt_icl` at
# the main study's lengths -- {glue:text}`depth_steps` softmax steps, the first
# {glue:text}`depth_warm` on tanh targets, then {glue:text}`depth_relu` ReLU
# steps from the softmax weights -- the same for every depth, so that the
# deeper models are judged on the budget of the models they are compared with.
# Training took {glue:text}`depth_train_minutes` core-minutes in all (one call
# per model depth, `--layers`); the wall time in the provenance above is the
# last call's, which scored the trained models and wrote the file. Each model is
# scored on {glue:text}`depth_prompts` prompts of the pretraining mixture.
# Criterion, fixed before the run (`depth.judge`): for both attentions, the
# deepest model's R² exceeds the shallowest's at every evaluation point.

# %% mystnb={"figure": {"caption": "Objective 4 (cf. ICDL Fig. 7): $R^2$ against the number of transformer layers at 15, 30 and 45 examples before the query (the reference when complete; bands: 95 % bootstrap over prompts), with least squares (dash-dot) and the context mean (dotted) on the same prompts.", "name": "fig-icl-depth"}}
fig = figures.plot_icl_depth(data["table"], data["baselines"])

# %% tags=["NBVAL_CHECK_OUTPUT"]
gains = depth.gains(data["table"])
chapter.table(depth.gains_shown(data["table"]))

# %% tags=["remove-cell"]
by_depth = data["table"].groupby(["attention", "n_layer"])["r2"].mean()
chapter.glue(depth_on=depth_on, depth_min_gain=f"{gains['gain'].min():+.3f}",
             **{f"depth_gain_{a}": f"{g['gain'].min():+.3f} to {g['gain'].max():+.3f}"
                for a, g in gains.groupby("attention")},
             **{f"depth_weakest_{a}": str(int(by_depth[a].idxmin())) for a in ("relu", "softmax")})

# %% [markdown]
# The gain is the deepest model's R² minus the shallowest's at the same number of
# examples: {glue:text}`depth_gain_relu` for ReLU attention and
# {glue:text}`depth_gain_softmax` for softmax. Depth need not help step by step
# either: the weakest ReLU model has {glue:text}`depth_weakest_relu` layers and
# the weakest softmax model {glue:text}`depth_weakest_softmax`. Each depth is one
# training run with one seed, so the bands above (over test prompts) do not
# include the variation between seeds, and a difference of a hundredth between
# two depths may be no more than that. The reason registered with this claim's mismatch band is a hypothesis, not a
# finding: at $d = 5$ a 4-layer model already sits near least squares (the
# dash-dot lines), so extra layers have little to add in the same training
# budget.
#
# ## Ledger

# %% tags=["NBVAL_CHECK_OUTPUT"]
ledger.record_all(depth.judge(data["table"]), judged_on=depth_on, covered=depth_on == "reference")
ledger.save()
ledger.table()[["claim", "criterion", "status"]]

# %% tags=["remove-cell"]
chapter.glue(claims_box=ledger.box())
chapter.show_glued()
