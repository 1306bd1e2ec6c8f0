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
# # Where the task needs a deep network: inputs from N(0, I)
#
# At ICDL's inputs, $x \sim \mathcal N(-2, I)$, a linear function fitted within
# each prompt leaves a few per cent of the label variance ({doc}`gpt_icl`,
# *What the task asks of a model*): there a transformer can meet objective 1
# without learning anything a linear learner could not. Here the same questions
# are asked where the targets are far from linear: the {term}`main study`'s
# models, seeds, test prompts and baselines with inputs from
# $\mathcal N(0, I)$, the inputs of the paper's network baselines
# {cite:p}`wu2025icdlreview`, trained at a schedule and a recipe fitted to this
# task on validation prompts, and trained on until the end of the scan's
# horizon, where each model's validation curve is checked for flatness. Each model is asked its own questions, registered before the run, on
# its own 90 % interval over its three seeds and the test prompts, behind its
# own {term}`learning gate`.
#
# **What we find.** {glue:text}`n01_plain` ICDL's first objective in
# miniature, {glue:text}`flat_obj1_d3`. Trained until flat:
# {glue:text}`flat_flatness`. Per model, each claim's status and number
# ({glue:md}`flat_state`):
#
# ```{glue:} flat_verdicts
# ```
#
# Over all six models at once (a claim about every model passes only where
# every model learned and passes, and fails on one that learned and fails):
# {glue:text}`flat_every`. Some model beats least squares:
# **{glue:text}`flat_some`**.
#
# :::{dropdown} Each model's numbers with their 90 % intervals
# The lead over the context mean is the learning gate's number; the others are
# read at the MLP's last position up to the training length.
#
# ```{glue:} n01_models
# ```
# :::
#
# Code: `icdl.gpt_icl.objectives.flat` (the design and its judge),
# `icdl.gpt_icl.objectives.n01` (the every-model judges, the side-by-side
# table), `icdl.gpt_icl.recipes` and `icdl.gpt_icl.schedules.scan` (the
# scans) and `icdl.gpt_icl.core.learning` (the learning gate); the run is
# `python -m icdl.gpt_icl --profile n01-flat --part main --part shift`, which
# continues the models of `--profile n01`.

# %% [markdown]
# <details class="claims-judged"><summary><b>Every claim this chapter checks</b>: the table above is these
# claims, one cell each; here each is said in full, with the run it is judged on and why an undecided one is
# undecided</summary>
#
# ```{glue:} claims_box
# ```
#
# </details>

# %% tags=["parameters", "remove-cell"]
profile = "quick"
overrides = {}

# %% tags=["hide-cell", "remove-output"]
import pandas as pd
from IPython.display import display

from icdl import figures
from icdl.gpt_icl import recipes
from icdl.gpt_icl.core import learning, main_study, verdicts
from icdl.gpt_icl.objectives import flat, n01, per_model
from icdl.gpt_icl.schedules import scan
from icdl.repro import chapter, claims
from icdl.repro.results import load_result, show_reference
from icdl.repro.typeset import count

cfg, ledger = chapter.start(n01.PROFILES, profile, overrides)
tolerance = main_study.CRITERIA["obj1_tolerance"]
n01_cfg = main_study.PROFILES.resolve(n01.PROFILE)
reference_cfg = main_study.PROFILES.resolve("reference")
chapter.glue(obj1_tolerance=f"{tolerance:g}")

# %% [markdown]
# ## A schedule fitted to the task
#
# Before any judged run, the reference model (the main study's depth-3 softmax
# model at its first seed, from scratch, no warm phase) is trained at every
# learning rate and batch size of a small grid, on this task and on ICDL's, and
# scored every few hundred steps on validation prompts of their own -- never the
# test prompts. The rule, committed with the grid before the runs: the run with
# the highest validation R² wins, and its step budget is the first evaluation
# within {glue:text}`scan_flat` of that run's best, where its curve has gone
# flat (a run still rising over its last quarter is marked: the budget, not the
# curve, ended it). The study below trains every model, both attentions, at the
# chosen schedule.

# %% tags=["NBVAL_CHECK_OUTPUT"]
scans = {}
for task, name in (("x ~ N(0, I)", "n01"), ("x ~ N(−2, I), ICDL's", "icdl")):
    res = show_reference(scan.PROFILES, "scan", name)
    if res is not None:
        scans[task] = {**res["data"], "history": pd.DataFrame(res["data"]["history"])}
if scans:
    display(chapter.table(scan.shown(scans)))
icdl_task = "x ~ N(−2, I), ICDL's"
chapter.glue(scan_flat=f"{scan.FLAT:g}", **scan.glue_words(scans, "x ~ N(0, I)"),
             **scan.glue_words(scans, icdl_task, profile="icdl"),
             scan_main_optimiser=(scan.run_words(scans["x ~ N(0, I)"], reference_cfg["lr"], reference_cfg["batch"])
                                  if "x ~ N(0, I)" in scans else "—"),
             scan_icdl_main_optimiser=(scan.run_words(scans[icdl_task], reference_cfg["lr"], reference_cfg["batch"])
                                       if icdl_task in scans else "—"))

# %% tags=["hide-output"] mystnb={"figure": {"caption": "The schedule scans: the reference model's $R^2$ on validation prompts (the mean over positions from 10 to the training length) against the training step, one line per learning rate (darker: larger) and batch size (solid: 64, dashed: 32); dotted: the context mean, dash-dot: least squares on the same prompts; the dot marks the chosen run at its chosen step.", "name": "fig-schedule-scan"}}
if scans:
    fig = figures.gpt.plot_schedule_scan({t: (r["history"], r["levels"], scan.choose(r["history"]))
                                          for t, r in scans.items()})

# %% [markdown]
# That scan fitted the softmax model alone, at one seed, and its rule did not
# ask whether its winner's lead was larger than the noise of its 512 validation
# prompts. A second
# scan, registered before its run, fits a recipe per attention: on two seeds of
# the depth-3 models, the incumbent recipe (the one these models were trained
# with) against a warm-up and cosine decay, each to a horizon of
# {glue:text}`recipe_horizon` steps, scored on {glue:text}`recipe_prompts`
# validation prompts. A candidate replaces the incumbent only where its score --
# the validation R² at the horizon, the mean over the seeds -- exceeds the
# incumbent's by more than the larger spread of the two over their seeds, and
# by at least {glue:text}`recipe_noise` (`icdl.gpt_icl.recipes.scan.choose`).
# {glue:md}`recipe_state`

# %% tags=["NBVAL_CHECK_OUTPUT"]
recipe_cfg = recipes.scan.PROFILES.resolve("n01")
recipe_res = show_reference(recipes.scan.PROFILES, "recipes", "n01")
if recipe_res is None:
    display(chapter.table(recipes.scan.design_shown("n01")))
    recipe_state = ("Its run has not finished: `python -m icdl.gpt_icl.recipes --profile n01` (each run's model is "
                    "committed as it finishes, and the command resumes). The candidates:")
else:
    display(chapter.table(recipes.scan.choice_shown(pd.DataFrame(recipe_res["data"]["history"]))))
    recipe_state = "Per attention and recipe:"
chapter.glue(recipe_horizon=count(recipe_cfg["horizon"]), recipe_prompts=count(recipe_cfg["eval_prompts"]),
             recipe_noise=f"{recipes.scan.MIN_NOISE:g}")
chapter.glue_md(recipe_state=recipe_state)

# %% mystnb={"figure": {"caption": "The recipe scan: each run's $R^2$ on its validation prompts (the mean over positions from 10 to the training length) against the training step, per attention; solid: the incumbent recipe, dashed: warm-up and cosine decay; lighter: the second seed; dotted: the context mean, dash-dot: least squares on the same prompts.", "name": "fig-recipe-scan"}}
if recipe_res is not None:
    recipe_history = pd.DataFrame(recipe_res["data"]["history"])
    fig = figures.recipes.plot_recipe_scan(recipe_history, pd.DataFrame(recipe_res["data"]["levels"]),
                                           recipes.scan.choose(recipe_history))

# %% [markdown]
# ## Trained until flat
#
# The models above were trained for the budget the first scan fixed, and its
# training loss says whether each was still improving when it ran out
# ({doc}`gpt_icl`'s rule, below). Registered before the run that continues
# them: {glue:text}`flat_design`. A model whose recipe the scan kept
# continues its committed checkpoint, its optimiser and random state with it,
# so that it is the model an uninterrupted run to the horizon would have
# trained. Each model's validation curve over the continued steps, judged flat
# where it gained less than {glue:text}`scan_flat` over the last quarter of
# the steps (the scan's rule):

# %% tags=["NBVAL_CHECK_OUTPUT"]
live = flat.live_profile(main_study.PROFILES.folder())
command = flat.COMMAND if live == flat.PROFILE else n01.COMMAND
run_obj, run_shift = (show_reference(main_study.PROFILES, stem, live, command=command) for stem in ("icl", "shift"))
n01_len, n01_test = n01_cfg["train_examples"], n01_cfg["test_examples"]
done = all(r is not None and r["data"]["complete"] for r in (run_obj, run_shift))
icl, shifted = (run_obj["data"], run_shift["data"]) if done else (None, None)
history = pd.DataFrame(icl["history"]) if done else None
flatness = flat.curve_flatness(history) if done else None
chapter.glue(flat_design=flat.design_words(),
             flat_flatness=(flat.flatness_words(history, flat.DESIGN["horizon"]) if done and live == flat.PROFILE
                            else "the run has not been made"))
chapter.glue_md(flat_state=flat.state_words(live == flat.PROFILE))  # its command as code ({glue:md})

# %% tags=["hide-output"] mystnb={"figure": {"caption": "The models trained until flat: each seed's $R^2$ on its validation prompts (the mean over positions from 10 to the training length) against the training step, per target depth, from the first step past profile n01's budget; dotted: the context mean on the same prompts; shaded: the last quarter of the steps, over which a flat curve gains less than 0.005.", "name": "fig-n01-flat-curves"}}
if done and "val_r2" in history:
    fig = figures.recipes.plot_flat_curves(history)

# %% [markdown]
# ## The questions
#
# Does a transformer predict better than least squares on the prompt's
# examples (its error relative to least squares,
# $(\mathrm{MSE}_{\text{LS}} - \mathrm{MSE})/\mathrm{MSE}_{\text{LS}}$, above
# 0)? Does it stay within objective 1's tolerance of the MLP trained on the
# prompt? How much of what that MLP gains over least squares does it learn in
# context,
# $\frac{\mathrm{MSE}_{\text{LS}} - \mathrm{MSE}}{\mathrm{MSE}_{\text{LS}} - \mathrm{MSE}_{\text{MLP}}}$
# (over half)? Objective 3 asks the same of targets with shifted parameters,
# and objective 2's length half whether softmax loses more past the training
# length than ReLU; its other half, the fall over ICDL's input mixtures, cannot
# be asked here: with centre 0 every mixture
# $\omega_1 \mathcal N(0, I) + \omega_2 \mathcal N(0, I)$ is the same
# distribution. The claims over every model add whether the error in excess of
# the MLP's, $(\mathrm{MSE} - \mathrm{MSE}_{\text{MLP}})/\mathrm{MSE}_{\text{MLP}}$,
# grows with the depth of the target networks. A model's number pools the
# squared errors of its seeds, as its R² does. Per model, beside the same
# numbers at ICDL's inputs -- the run {doc}`gpt_icl` judges there, trained at
# the schedule the same scan fitted to that task:

# %% tags=["NBVAL_CHECK_OUTPUT", "hide-output"]
fitted_path = main_study.PROFILES.folder() / "icl.fitted.json"  # the judged run on ICDL's inputs (gpt_icl)
fitted_cfg = main_study.PROFILES.resolve("fitted")
if done:
    tasks = {"N(0, I)": icl}
    if fitted_path.is_file() and fitted_cfg["train_examples"] == n01_len:
        tasks["N(−2, I), ICDL's"] = load_result(fitted_path)["data"]  # the same positions on both tasks
    display(chapter.table(n01.side_by_side(tasks, n01_len)))
    model_rows = per_model.model_rows(icl, n01_len, learning.margin("gpt-n01f-obj1"))
    icdl_rows = (per_model.model_rows(load_result(fitted_path)["data"], n01_len, learning.margin("gpt-n01f-obj1"))
                 if fitted_path.is_file() else None)
    chapter.glue(n01_models=chapter.table(per_model.table(model_rows)),
                 n01_plain=per_model.plain_sentence(model_rows, icdl_rows))
else:
    chapter.glue(n01_models="—", n01_plain=f"The run at x ~ N(0, I) is not committed yet ({command}).")

# %% [markdown]
# ## Did the models learn the task?
#
# A model learned the task when its R² at the training length leads the context
# mean's on the same prompts by at least {glue:text}`gate_margin` on the whole
# of its 90 % interval (the learning gate, `icdl.gpt_icl.core.learning`,
# registered for every claim about trained models): {glue:text}`gate_met`; the
# weakest, {glue:text}`gate_worst`, leads by {glue:text}`gate_lead`. A model
# short of the gate can leave its claims undecided, never decide them. Per
# model, pretraining mixture:

# %% tags=["NBVAL_CHECK_OUTPUT", "hide-output"]
need = learning.margin("gpt-n01f-beats-ls")
if done:
    leads = verdicts.context_mean_leads(verdicts.Sums(icl["blocks"], icl["labels"]), n01_len)
    display(chapter.table(learning.leads_table(leads, need)))
    chapter.glue(**learning.words(learning.gate(leads), need))
else:
    chapter.glue(gate_met="the run has not been made", gate_worst="—", gate_lead="—", gate_margin=f"{need:g}")

# %% [markdown]
# Each model's training loss over all its steps, and how much it still fell
# over the last quarter of them (the median over that quarter against the
# quarter before, seeds pooled; `late_fall` of `icdl.gpt_icl.core.learning`):
# {glue:text}`n01_late_fall`. A flat loss is not evidence that more steps would
# not help: a plateau can give way after thousands of flat steps.

# %% tags=["hide-output"] mystnb={"figure": {"caption": "Training loss of the models trained at x ~ N(0, I), per target depth: each attention's mean over its seeds (thick, smoothed over five logs of 100 steps) and each seed (thin), log scale; shaded: the last quarter of the steps.", "name": "fig-n01-training"}}
if done:
    fig = figures.gpt.plot_training_by_depth(history)
chapter.glue(n01_late_fall=learning.late_words(learning.late_fall(history)) if done else "—")

# %% [markdown]
# The numbers of the claims over every model: the error relative to least
# squares runs from {glue:text}`n01_vs_ls_best` down to {glue:text}`n01_vs_ls`
# over the models, below 0 on its whole interval for
# {glue:text}`n01_vs_ls_below` of them; the largest shortfall below the MLP is
# {glue:text}`n01_obj1`, against objective 1's tolerance of
# {glue:text}`obj1_tolerance`; the change of the excess error over the MLP from
# target depth 3 to 6 is {glue:text}`n01_gap`. These are extremes over the
# models (and, for objective 1, over every MLP position up to the training
# length), their intervals read off every model's own interval with one end
# widened for the number of models (an {term}`every-model claim`).

# %% tags=["hide-output"] mystnb={"figure": {"caption": "The models at $x \\sim \\mathcal N(0, I)$ in training and test: the transformers (mean over seeds) against least squares, 3-NN, the context mean and the trained MLP, per target depth ($R^2$ across the test prompts); shaded: beyond the training length. Bottom row: the same lines from the MLP's first position to the training length, on an axis fitted to the transformers and the MLP.", "name": "fig-icl-methods-n01"}}
if done:
    fig = figures.gpt.plot_icl_methods(*n01.figure_data(icl), n01_len)

# %% tags=["hide-output"] mystnb={"figure": {"caption": "Objective 1 at $x \\sim \\mathcal N(0, I)$: each model's $R^2$ shortfall below the MLP at the MLP's positions up to the training length, with its 90 % interval over seeds and prompts; dashed: the tolerance.", "name": "fig-icl-shortfall-n01"}}
if done:
    fig = figures.gpt.plot_shortfall(verdicts.shortfall_frame(verdicts.Sums(icl["blocks"], icl["labels"]), n01_len),
                                     tolerance)

# %% [markdown]
# ## The claims, judged

# %% tags=["NBVAL_CHECK_OUTPUT", "remove-input"]
entries = flat.judged(icl, shifted, n01_len, n01_test, tolerance, main_study.CRITERIA) if live == flat.PROFILE \
    else flat.pending(tolerance)
records = ledger.record_all(entries, judged_on=flat.PROFILE, covered=live == flat.PROFILE)
if "gpt-n01-obj1" not in claims.REPLACED:  # profile n01's every-model claims, until the design above replaces them
    n01_data = {s: load_result(main_study.PROFILES.folder() / f"{s}.{n01.PROFILE}.json")["data"]
                for s in ("icl", "shift")}
    ledger.record_all(n01.judge(n01_data["icl"], n01_len, tolerance)
                      + [n01.judge_share(n01_data["icl"], n01_len, n01.COMMAND)]
                      + n01.judge_objectives_2_3(n01_data["icl"], n01_data["shift"], n01_len, n01_test,
                                                 main_study.CRITERIA), judged_on=n01.PROFILE, covered=True)
ledger.save()
ledger.judged()

# %% tags=["remove-cell"]
status = {r.claim: r.status for r in ledger.records}
every = [e for e in entries if e["claim"] in flat.EVERY.values()]
chapter.glue(flat_verdicts=chapter.table(flat.verdict_table(entries, status, flatness)),
             flat_every=flat.every_words(entries, status), flat_some=status[flat.SOME],
             flat_obj1_d3=flat.objective1_words(entries, status, 3, tolerance),
             **n01.glue_values([e for e in every if e["claim"] in ("gpt-n01f-beats-ls", "gpt-n01f-obj1",
                                                                    "gpt-n01f-depth-gap")]),
             **n01.per_model_glue(icl, n01_len))
chapter.glue(claims_box=ledger.box(), **{f"status_{r.claim.replace('-', '_')}": r.status for r in ledger.records})
chapter.show_glued()
