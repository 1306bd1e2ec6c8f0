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
# **What we find**: the smallest R² gain from the shallowest to the deepest
# model, over both attentions and the three evaluation points, is
# {glue:text}`depth_min_gain` ({glue:text}`depth_seeds_words`); objective 4 is
# **{glue:text}`status_icdl_obj4`**. Like every claim about trained models
# here, it passes only where the models it is about learned the task -- the
# shallowest and the deepest of each attention, which it compares -- and
# {glue:text}`gate_met`: the weakest of them, {glue:text}`gate_worst`, leads the
# context mean by {glue:text}`gate_lead` at the last evaluation point, and the
# gate asks the lower end of that interval to reach {glue:text}`gate_margin`.
# Its models train at the main study's schedule
# ({doc}`gpt_icl`), which departs from the paper's, so its verdict is a
# deviation.
#
# Code: `icdl.gpt_icl.depth` (profiles, study, result file) and
# `icdl.gpt_icl.depth.judge` (intervals, tables, verdict), on the modules of
# {doc}`gpt_icl`.

# %% [markdown]
# **What this chapter checks, and what we found**:
#
# ```{glue:} claims_box
# ```

# %% tags=["parameters", "remove-cell"]
profile = "quick"
overrides = {}

# %% tags=["hide-cell", "remove-output"]
import pandas as pd
import torch

from icdl import figures
from icdl.gpt_icl import depth
from icdl.gpt_icl.core import learning
from icdl.gpt_icl.depth import judge as depth_judge
from icdl.repro import chapter
from icdl.repro.results import took
from icdl.repro.words import run_words

torch.set_num_threads(1)  # small tensors: one thread is as fast and leaves the other core to long runs
cfg, ledger = chapter.start(depth.study.PROFILES, profile, overrides)
rcfg = depth.study.PROFILES.resolve("reference")

# %% [markdown]
# ## The study
#
# The claim is judged on the reference run when it is complete, on the live run
# of this page's profile otherwise:

# %%
data, depth_on = chapter.reference_or_live(depth.study.PROFILES, ("depth",), depth.study.load,
                                           lambda: depth.study.depth_study(cfg, progress=False), profile)
print("the claims below are judged on", run_words(depth_on).removeprefix("on "))

# %% tags=["remove-cell"]
chapter.glue(**depth.study.settings_glue(rcfg if depth_on == "reference" else cfg),
             depth_train_time=took(float(pd.DataFrame(data['training'])['seconds'].sum())))

# %% [markdown]
# In that run: targets of depth {glue:text}`depth_target`, prompts of
# {glue:text}`depth_train` examples in training (so that the last evaluation
# point lies inside the training length), the two schedules of {doc}`gpt_icl` at
# the {term}`main study`'s lengths -- {glue:text}`depth_steps` softmax steps, the first
# {glue:text}`depth_warm` on tanh targets, then {glue:text}`depth_relu` ReLU
# steps from the softmax weights -- the same for every depth, so that the
# deeper models are judged on the budget of the models they are compared with.
# Training took {glue:text}`depth_train_time` of one core in all (one call
# per model depth and seed, `--layers` and `--seeds`, each scoring its two models
# as soon as they are trained). Each model is scored on {glue:text}`depth_prompts`
# prompts of the pretraining mixture.
# Criterion, fixed before the run: for both attentions, the deepest model's R²
# (the mean over seeds) exceeds the shallowest's at every evaluation point, over
# the whole 90 % interval; an interval that straddles 0 is `inconclusive`.

# %% tags=["remove-cell"]
r2 = depth_judge.r2_table(data)

# %% mystnb={"figure": {"caption": "Objective 4 (cf. ICDL Fig. 7): $R^2$ (mean over seeds) against the number of transformer layers at 15, 30 and 45 examples before the query (side by side at each depth), with its interval as an error bar (90 % over seeds and prompts where there are several seeds; a one-seed run: 95 % bootstrap over prompts; its part past $R^2 = 1$ not drawn), beside least squares (dash-dot) and the context mean (dotted) on the same prompts.", "name": "fig-icl-depth"}}
fig = figures.gpt.plot_icl_depth(r2, data["baselines"])

# %% tags=["NBVAL_CHECK_OUTPUT"]
gains = depth_judge.gains(data)
chapter.table(depth_judge.gains_shown(data))

# %% tags=["remove-cell"]
seeds = int(r2["seeds"].max())
by_depth = r2.groupby(["attention", "n_layer"])["r2"].mean()
chapter.glue(depth_min_gain=f"{gains['gain'].min():+.3f}".replace("-", "−"),
             depth_seeds_words=(f"mean over {seeds} seeds; the table gives each gain's 90 % interval over seeds "
                                "and prompts") if seeds > 1 else
             "one seed per model: the interval over seeds is still to come",
             **{f"depth_gain_{a}": f"{g['gain'].min():+.3f} to {g['gain'].max():+.3f}".replace("-", "−")
                for a, g in gains.groupby("attention")},
             **{f"depth_weakest_{a}": str(int(by_depth[a].idxmin())) for a in ("relu", "softmax")})

# %% [markdown]
# The gain is the deepest model's R² minus the shallowest's at the same number of
# examples: {glue:text}`depth_gain_relu` for ReLU attention and
# {glue:text}`depth_gain_softmax` for softmax. Depth need not help step by step
# either: the weakest ReLU model has {glue:text}`depth_weakest_relu` layers and
# the weakest softmax model {glue:text}`depth_weakest_softmax`. Each interval
# resamples the seeds of every model and, on the same draws, the blocks of test
# prompts for every model alike, so that the two models of a gain are compared
# on the same prompts. The reason registered with this claim's {term}`mismatch band` is a
# hypothesis, not a finding: at $d = 5$ a 4-layer model already sits near least
# squares (the dash-dot lines), so extra layers have little to add in the same
# training budget.
#
# Did the models learn the task? Each model's lead over the {term}`context mean` at the
# last evaluation point, with its 90 % interval over seeds and prompts (the
# {term}`learning gate` of {doc}`gpt_icl`; objective 4 asks it of the shallowest
# and the deepest models, the ones it compares):

# %% tags=["NBVAL_CHECK_OUTPUT"]
leads = depth_judge.context_mean_leads(data)
need = learning.margin("icdl-obj4")
chapter.table(learning.leads_table(leads, need))

# %% tags=["remove-cell"]
chapter.glue(**learning.words(learning.gate({m: leads[m] for ms in depth_judge.compared(data).values() for m in ms}),
                              need))

# %% [markdown]
# R² of each seed at the longest evaluation point, and the spread between seeds:

# %% tags=["NBVAL_CHECK_OUTPUT"]
chapter.table(depth_judge.seed_table(data["table"], int(data["table"]["examples"].max())))

# %% [markdown]
# ## The claims, judged

# %% tags=["NBVAL_CHECK_OUTPUT", "remove-input"]
ledger.record_all(depth_judge.judge(data), judged_on=depth_on, covered=depth_on == "reference")
ledger.save()
ledger.judged()

# %% tags=["remove-cell"]
chapter.glue(claims_box=ledger.box(), status_icdl_obj4=ledger.records[0].status)
chapter.show_glued()
