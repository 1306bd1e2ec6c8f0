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
# without learning anything a linear learner could not. The same questions are
# asked here where the targets are far from linear: the {term}`main study`'s models,
# seeds, test prompts and baselines, with inputs from $\mathcal N(0, I)$ in
# training and in test -- the inputs of the paper's network baselines
# {cite:p}`wu2025icdlreview` -- trained at a schedule fitted to this task on
# validation prompts. The questions are this book's, registered before the run,
# each judged on the MLP's own prompts with its 90 % interval over seeds and
# prompts, behind the {term}`learning gate`: a claim about how well a model learns in
# context says nothing of a model that did not learn.
#
# **What we find.** {glue:text}`n01_plain` Each model on its own interval
# (a description of the run; the claims follow):
#
# ```{glue:} n01_models
# ```
#
# The claims, registered before the run, are about all six models at once.
# Behind the {term}`learning gate` such a claim passes only where every model
# learned, and fails where a model that learned fails it by itself; a model
# short of the gate can only leave it undecided ({glue:text}`gate_met`):
# beating least squares, **{glue:text}`status_gpt_n01_beats_ls`**; objective 1,
# **{glue:text}`status_gpt_n01_obj1`**; the share of the MLP's gain learned in
# context, **{glue:text}`status_gpt_n01_share`**; the depth gap,
# **{glue:text}`status_gpt_n01_depth_gap`**; objectives 2 and 3,
# **{glue:text}`status_gpt_n01_obj2_length`** and
# **{glue:text}`status_gpt_n01_obj3`**. Each model's own questions are
# registered for the same models trained until their validation curve is flat
# ({glue:md}`flat_state`; *Each model on its own* below).
#
# The models were trained at a schedule that a scan on validation prompts fitted
# to the depth-3 softmax model ({glue:text}`scan_n01_words`); the main study's
# optimiser reaches {glue:text}`scan_main_optimiser` on this task. The study at
# that schedule: {glue:md}`n01_state`. On ICDL's own inputs the same scan finds
# {glue:text}`scan_icdl_words`; {doc}`gpt_icl` judges ICDL's objectives on
# models trained there.
#
# Code: `icdl.gpt_icl.schedules.scan` (the scan), `icdl.gpt_icl.objectives.n01`
# (the judge, the side-by-side table, the figure's data) and
# `icdl.gpt_icl.core.learning` (the learning gate); the runs are `python -m
# icdl.gpt_icl.schedules --profile n01` (and `--profile icdl`) and `python -m
# icdl.gpt_icl --profile n01 --part main --part shift`.

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
from IPython.display import display

from icdl import figures
from icdl.gpt_icl import recipes
from icdl.gpt_icl.core import learning, main_study, verdicts
from icdl.gpt_icl.objectives import flat, n01, per_model
from icdl.gpt_icl.schedules import scan
from icdl.repro import chapter
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
# ## The questions
#
# Does every transformer predict better than least squares on the prompt's
# examples (its error relative to least squares,
# $(\mathrm{MSE}_{\text{LS}} - \mathrm{MSE})/\mathrm{MSE}_{\text{LS}}$, above
# 0)? Does it stay within objective 1's tolerance of the MLP? How much of what
# the MLP trained on the prompt gains over least squares does it learn in
# context,
# $\frac{\mathrm{MSE}_{\text{LS}} - \mathrm{MSE}}{\mathrm{MSE}_{\text{LS}} - \mathrm{MSE}_{\text{MLP}}}$?
# Does its error in excess of the MLP's,
# $(\mathrm{MSE} - \mathrm{MSE}_{\text{MLP}})/\mathrm{MSE}_{\text{MLP}}$, grow
# with the depth of the target networks? And objectives 2 (the length half:
# softmax loses more past the training length than ReLU) and 3 (shifted target
# parameters), by the main study's own measures. Objective 2's other half, the
# fall over ICDL's input mixtures, cannot be asked here: with centre 0 every
# mixture $\omega_1 \mathcal N(0, I) + \omega_2 \mathcal N(0, I)$ is the same
# distribution. A model's number pools the squared errors of its seeds, as its
# R² does. Per model, beside the same numbers at ICDL's inputs -- the run
# {doc}`gpt_icl` judges there, whose models were trained at the schedule the
# same scan fitted to that task, as these were to this one (no warm phase in
# either):

# %% tags=["NBVAL_CHECK_OUTPUT"]
n01_obj = show_reference(main_study.PROFILES, "icl", n01.PROFILE, command=n01.COMMAND)
n01_shift = show_reference(main_study.PROFILES, "shift", n01.PROFILE, command=n01.COMMAND)
n01_len, n01_test = n01_cfg["train_examples"], n01_cfg["test_examples"]
n01_done = all(r is not None and r["data"]["complete"] for r in (n01_obj, n01_shift))
fitted_path = main_study.PROFILES.folder() / "icl.fitted.json"  # the judged run on ICDL's inputs (gpt_icl)
fitted_cfg = main_study.PROFILES.resolve("fitted")
if n01_done:
    tasks = {"N(0, I)": n01_obj["data"]}
    if fitted_path.is_file() and fitted_cfg["train_examples"] == n01_len:
        tasks["N(−2, I), ICDL's"] = load_result(fitted_path)["data"]  # the same positions on both tasks
    display(chapter.table(n01.side_by_side(tasks, n01_len)))
icl, shifted = (n01_obj["data"], n01_shift["data"]) if n01_done else (None, None)
if n01_done:
    model_rows = per_model.model_rows(icl, n01_len, learning.margin("gpt-n01-obj1"))
    icdl_rows = (per_model.model_rows(load_result(fitted_path)["data"], n01_len, learning.margin("gpt-n01-obj1"))
                 if fitted_path.is_file() else None)
    chapter.glue(n01_models=chapter.table(per_model.table(model_rows)),
                 n01_plain=per_model.plain_sentence(model_rows, icdl_rows))
else:
    chapter.glue(n01_models="—", n01_plain=f"The run at x ~ N(0, I) is not committed yet ({n01.COMMAND}).")
n01_entries = ((n01.judge(icl, n01_len, tolerance) if n01_done else n01.pending(tolerance))
               + [n01.judge_share(icl, n01_len, n01.COMMAND)]
               + n01.judge_objectives_2_3(icl, shifted, n01_len, n01_test, main_study.CRITERIA))

# %% tags=["remove-cell"]
chapter.glue_md(n01_state=n01.state_words(n01_cfg, n01_done))  # its command as code ({glue:md})
chapter.glue(**n01.glue_values(n01_entries[:3]), **n01.per_model_glue(icl, n01_len),
             **n01.attention_glue(icl, n01_len))

# %% [markdown]
# ## Did the models learn the task?
#
# A model learned the task when its R² at the training length leads the context
# mean's on the same prompts by at least {glue:text}`gate_margin` on the whole
# of its 90 % interval (the learning gate, `icdl.gpt_icl.core.learning`,
# registered for every claim about trained models): {glue:text}`gate_met`; the
# weakest, {glue:text}`gate_worst`, leads by {glue:text}`gate_lead`. Per model,
# pretraining mixture:

# %% tags=["NBVAL_CHECK_OUTPUT", "hide-output"]
need = learning.margin("gpt-n01-beats-ls")
if n01_done:
    leads = verdicts.context_mean_leads(verdicts.Sums(icl["blocks"], icl["labels"]), n01_len)
    display(chapter.table(learning.leads_table(leads, need)))
    chapter.glue(**learning.words(learning.gate(leads), need))
else:
    chapter.glue(gate_met="the run has not been made", gate_worst="—", gate_lead="—", gate_margin=f"{need:g}")

# %% [markdown]
# Did the budget or the models end the learning? Each model's training loss
# over its steps, and how much it still fell over the last quarter of them (the
# median over that quarter against the quarter before, seeds pooled; `late_fall`
# of `icdl.gpt_icl.core.learning`): {glue:text}`n01_late_fall`. One still
# falling was stopped by the budget the scan fixed on the depth-3 softmax model.
# A flat loss is not evidence that more steps would not help: a plateau can
# give way after thousands of flat steps.

# %% tags=["hide-output"] mystnb={"figure": {"caption": "Training loss of the models trained at x ~ N(0, I), per target depth: each attention's mean over its seeds (thick, smoothed over five logs of 100 steps) and each seed (thin), log scale; shaded: the last quarter of the steps.", "name": "fig-n01-training"}}
if n01_done:
    fig = figures.gpt.plot_training_by_depth(pd.DataFrame(icl["history"]))
chapter.glue(n01_late_fall=learning.late_words(learning.late_fall(pd.DataFrame(icl["history"]))) if n01_done else "—")

# %% [markdown]
# The numbers of the first questions: the error relative to least squares
# (above 0: better than least squares) runs from
# {glue:text}`n01_vs_ls_best` down to {glue:text}`n01_vs_ls` over the models,
# below 0 on its whole interval for {glue:text}`n01_vs_ls_below` of them; the
# largest shortfall below the MLP is {glue:text}`n01_obj1`, against objective
# 1's tolerance of {glue:text}`obj1_tolerance`; the change of the excess error
# over the MLP from target depth 3 to 6 is {glue:text}`n01_gap`. These are
# extremes over the models (and, for objective 1, over every MLP position up to
# the training length), and their intervals are read off every model's own
# interval, one end widened for the number of models (an {term}`every-model
# claim`), so neither need appear in the per-model table above, which reads
# each model at the MLP's last position on its own interval.

# %% tags=["hide-output"] mystnb={"figure": {"caption": "The run with $x \\sim \\mathcal N(0, I)$ in training and test: the transformers (mean over seeds) against least squares, 3-NN, the context mean and the trained MLP, per target depth ($R^2$ across the test prompts, the MLP on the first 512); shaded: beyond the training length. Bottom row: the same lines from the MLP's first position to the training length, on an axis fitted to the transformers and the MLP.", "name": "fig-icl-methods-n01"}}
if n01_done:
    fig = figures.gpt.plot_icl_methods(*n01.figure_data(icl), n01_len)

# %% tags=["hide-output"] mystnb={"figure": {"caption": "Objective 1 as judged at $x \\sim \\mathcal N(0, I)$: each model's $R^2$ shortfall below the MLP at the MLP's positions up to the training length, with its 90 % interval over seeds and prompts; dashed: the tolerance.", "name": "fig-icl-shortfall-n01"}}
if n01_done:
    fig = figures.gpt.plot_shortfall(verdicts.shortfall_frame(verdicts.Sums(icl["blocks"], icl["labels"]), n01_len),
                                     tolerance)

# %% [markdown]
# ## Each model on its own, trained until flat
#
# The claims above are about all six models at once, so none of them can say
# what holds for some models only, and three of the six were still improving
# when their steps ran out. A second design asks each model its own questions
# -- beats least squares, learns over half of the MLP's gain, objective 1,
# objective 3, and objective 2 per target depth -- each on its own interval
# behind its own learning gate, plus whether *some* model beats least squares
# (`icdl.gpt_icl.objectives.flat`). Registered before its run:
# {glue:text}`flat_design`. With every test prompt, objective 1's interval at
# target depth 3 is no longer set by the prompts (on 512 prompts their term was
# four times the seeds'). Per model and question:

# %% tags=["NBVAL_CHECK_OUTPUT", "remove-input"]
flat_obj, flat_shift = (show_reference(main_study.PROFILES, stem, flat.PROFILE, command=flat.COMMAND)
                        for stem in ("icl", "shift"))
flat_done = all(r is not None and r["data"]["complete"] for r in (flat_obj, flat_shift))
flat_entries = flat.pending(tolerance)
if flat_done:
    flat_entries = flat.judged(flat_obj["data"], flat_shift["data"], n01_len, n01_test, tolerance,
                               main_study.CRITERIA)
flat_records = ledger.record_all(flat_entries, judged_on=flat.PROFILE, covered=flat_done)
display(chapter.table(flat.verdict_table({r.claim: r.status for r in flat_records})))
chapter.glue(flat_design=flat.design_words())
chapter.glue_md(flat_state=flat.state_words(flat_done))  # its command as code ({glue:md})

# %% [markdown]
# ## The claims, judged

# %% tags=["NBVAL_CHECK_OUTPUT", "remove-input"]
ledger.record_all(n01_entries, judged_on=n01.PROFILE, covered=n01_done)
ledger.save()
ledger.judged()

# %% tags=["remove-cell"]
chapter.glue(claims_box=ledger.box(), **{f"status_{r.claim.replace('-', '_')}": r.status for r in ledger.records})
chapter.show_glued()
