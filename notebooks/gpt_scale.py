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
# # How much of the gap is training? The main study trained longer
#
# The models of the main study's reference run ({doc}`gpt_icl`'s budget table:
# a tanh {term}`warm phase`, the ReLU-attention model started from the softmax
# weights) are far smaller and far shorter-trained than ICDL's
# {cite:p}`wu2025icdl`, and not all of them learned the task. This chapter asks
# how much of the shortfall below the MLP trained on the prompt is a matter of
# *training*: the same models, prompts,
# baselines and evaluation, trained {glue:text}`scale_factor` times longer,
# and scored at {glue:text}`scale_snapshots` snapshots per model along the
# way, {glue:text}`scale_fitted_snapshots` of them from the main study's length
# on. A line through the shortfall against the logarithm of the steps on the
# target family gives its change per doubling, and a line through objective
# 1's own number, extended to the paper's 500 000 steps, a forecast that a longer
# run on a GPU can confirm or refute. The question and its thresholds are this
# book's and were fixed before the run that judges them; how the thresholds
# are read was fixed after it (see *How the numbers are read* at the end).
#
# **What we find.** No claim of this chapter is decided: the study trained one
# seed of each model (the {term}`main study`'s first), so the seed-to-seed part of
# every interval cannot be measured, and a claim about trained models needs
# three seeds (a {term}`gate` of the experiments' protocol); every claim waits
# for the study run on three seeds. What that one seed shows (on the
# {glue:text}`scale_on` run): trained
# {glue:text}`scale_factor` times longer, the softmax models' shortfall below
# the MLP at the training length goes from {glue:text}`scale_short_first_softmax`
# to {glue:text}`scale_short_last_softmax`, the ReLU models' from
# {glue:text}`scale_short_first_relu` to {glue:text}`scale_short_last_relu`.
# The claim that every model's shortfall falls with training
# {glue:text}`scale_verdict_scale_shortfall_falls`; once three seeds are
# trained, its registered criterion will count any model's band reaching above
# 0 as a failure. With one seed the largest change per doubling is {glue:text}`scale_slope_max`
# ({glue:text}`scale_slope_max_model`), and {glue:text}`scale_bands_above`
# bands reach above 0. On the longest-trained models objective 1
# {glue:text}`scale_verdict_icdl_obj1_longer`: its largest shortfall is
# {glue:text}`scale_obj1_interval`, the interval from the scatter of that
# model's snapshots, against the tolerance {glue:text}`scale_obj1_tolerance`.
# Extended to the paper's steps, the lines of objective 1's number end within
# the tolerance on their whole band for {glue:text}`scale_within_count`, so
# the forecast {glue:text}`scale_verdict_scale_forecast`. At the end the
# models' lead over least squares runs from {glue:text}`scale_lead_ls`: at
# best level with a linear fit.
# Twice the width at the main study's steps changes the shortfall by
# {glue:text}`width_delta` (above 0: further from the MLP), with the narrow
# models' learning rate and {term}`warm phase`, not tuned for the wider ones: a
# verdict on that recipe, not on width, so the claims about a wider model
# with its own learning rate wait for a scan of it. Every model's numbers are
# in the sections below.
#
# Code: `icdl.gpt_icl.scale` (profiles, snapshots, scoring, trend, fit, judge,
# the resumable run); the models and their training are those of
# {doc}`gpt_icl` (`icdl.gpt_icl.core.schedule`, `icdl.gpt_icl.core.training`).

# %% [markdown]
# **What this chapter checks, and what we found**:
#
# ```{glue:} claims_box
# ```

# %% tags=["parameters", "remove-cell"]
profile = "quick"
overrides = {}

# %% tags=["hide-cell", "remove-output"]
import torch
from IPython.display import display

from icdl import figures
from icdl.gpt_icl import scale
from icdl.gpt_icl.core import learning, main_study
from icdl.repro import chapter
from icdl.repro.results import show_reference
from icdl.repro.words import run_words

torch.set_num_threads(1)  # small models: one thread is as fast and leaves the other core to long runs
cfg, ledger = chapter.start(scale.models.PROFILES, profile, overrides)

# %% [markdown]
# ## The runs
#
# Each softmax model trains {glue:text}`scale_steps` steps instead of
# {glue:text}`scale_main_steps`, with the same warm phase on tanh targets at
# the start; each ReLU-attention model starts, as in the reference run, from the
# softmax model at the main study's length and trains
# {glue:text}`scale_relu_steps` steps. The training stream is the main
# study's, seed for seed, so the snapshot at the main study's length is its
# model exactly (a test checks this on the quick profile, and another that the
# judged run's scores at that snapshot are those of the committed reference
# models of {doc}`gpt_icl`), and every later snapshot is the same run continued.
# Snapshots fall at every half-doubling of the steps. The judged
# run's jobs (training, then scoring, one single-threaded process per core)
# took {glue:text}`scale_minutes` core-minutes together.
#
# At each snapshot we score the model at the training length on the test
# prompts of the pretraining mixture:
#
# - the **shortfall below the MLP**, $R^2_{\text{MLP}} - R^2_{\text{model}}$,
#   on the prompts on which the MLP is trained (it trains one network per
#   prompt, so it is run on the first test prompts only), here at the training
#   length;
#   objective 1 asks it to be at most {glue:text}`scale_obj1_tolerance`, and
#   {doc}`gpt_icl` judges it at the largest shortfall over the positions at
#   which the MLP is scored, so the two chapters' numbers for one model differ;
# - the **lead over least squares** and over {term}`3-NN`,
#   $R^2_{\text{model}} - R^2_{\text{baseline}}$, on all test prompts.
#
# The bands of each snapshot resample the prompts with replacement, the same
# resample for the model and the baseline and for every snapshot, so they are
# the uncertainty of one set of test prompts, not of the training run (one seed
# per model); the scatter of one run's snapshots enters the lines' bands below.
# All bands are 90 %, the level of every claim.
#
# **The clock.** The x axes count steps *on the target family*. A softmax
# model's first {glue:text}`scale_warm_steps` steps are its warm phase on tanh
# targets, and a ReLU-attention model brings the
# {glue:text}`scale_inherited_steps` target steps of the softmax model it
# starts from. Counted this way the softmax models' training on the targets
# grows {glue:text}`scale_target_growth_softmax`-fold over the run, not
# {glue:text}`scale_factor`-fold (the ReLU models' grows
# {glue:text}`scale_target_growth_relu`-fold); ICDL's 500 000 steps are all on
# its targets.

# %% tags=["hide-input"]
data, scale_on = chapter.reference_or_live(scale.models.PROFILES, ("scale",), scale.study.from_result,
                                           lambda: scale.study.study(cfg), profile)
rcfg = scale.models.PROFILES.resolve("reference") if scale_on == "reference" else cfg
print("the claims below are judged on", run_words(scale_on).removeprefix("on "))

# %% tags=["remove-cell"]
chapter.glue(scale_on=scale_on, **scale.show.glue_values(data, rcfg))

# %% [markdown]
# ## The trend

# %% tags=["hide-input"] mystnb={"figure": {"caption": "The three differences at the training length against the steps on the target family (log scale), from the main study's length on (thin vertical lines in each attention's colour: that length, the trained transformers of ICDL sec. 5 in the book; the fit uses these snapshots), one column per target depth, 90 % bootstrap bands over the test prompts. Top: shortfall below the MLP at the training length with the fitted line (dashed). Middle and bottom: lead over least squares and over 3-NN (above 0: the transformer is better).", "name": "fig-scale-trend"}}
fig = figures.scale.plot_scale_trend(data["trend"], data["fits"], scale.trend.fit_from(rcfg), scale.trend.target_offset(rcfg))

# %% [markdown]
# R² at the training length at the main study's length and after the longest
# training, beside the baselines on the same prompts:

# %% tags=["NBVAL_CHECK_OUTPUT", "hide-input"]
chapter.table(scale.show.end_table(data["points"], rcfg))

# %% [markdown]
# ## The lines and the forecast
#
# Per model, a least-squares line through the shortfall against
# $\log_2(\text{target steps})$ over the snapshots from the main study's
# length on; its slope is the change per doubling. Its band holds two noises.
# *Prompt noise*: the line is refitted on every paired bootstrap resample of
# the test prompts. *Snapshot scatter*: several models' shortfall jumps from
# one snapshot to the next by more than the prompts' band allows, so on each
# resample we also draw slopes from the $t$ distribution of a least-squares
# slope ($n - 2$ degrees of freedom), with the standard error of the
# snapshots' scatter about the line less the part of it that the prompt
# resamples already carry (so the prompts' noise is counted once). This is the
# scatter of one run (one seed), under a constant learning rate; other seeds
# would add their own spread. The largest upper end of a band is
# {glue:text}`scale_slope_hi_max` ({glue:text}`scale_band_hi_model`); with
# the prompts alone the largest is {glue:text}`scale_prompt_band_hi`
# ({glue:text}`scale_prompt_hi_model`). Counted on the model's own steps,
# warm phase included, the softmax models' lines fall faster per doubling
# ({glue:text}`scale_own_clock_softmax`): the clock changes the slopes, and
# neither clock credits the warm phase with what it did for the targets.
#
# The forecast is of objective 1's own number, the largest shortfall over the
# positions at which the MLP is scored (not the training length's shortfall
# that the line above follows; the table gives both): its line is
# extended from the {glue:text}`scale_target_last` target steps of the runs to
# the paper's {glue:text}`scale_horizon`, where it stands at
# {glue:text}`scale_at_horizon`; {glue:text}`scale_forecast`. The claim
# records the target step from which the line stays within the tolerance up
# to {glue:text}`scale_horizon` (never, where it ends above it), which says
# whether the line ends within it. Its band is that of the line itself (its
# level and slope) from the snapshots' scatter: the run stored no prompt
# resamples of objective 1's number, so the part of the prompts' noise that
# every snapshot shares is not in it. A line through {glue:text}`scale_fitted_snapshots` snapshots over
# {glue:text}`scale_target_doublings` doublings cannot pin an extrapolation
# over {glue:text}`scale_doublings_ahead` more. The bands that straddle
# the tolerance, {glue:text}`scale_straddle_models`, leave the claim
# undecided. A straight line in log steps also falls without end, below what
# objective 1's number can reach (the MLP's R² minus 1: {glue:text}`scale_obj1_floor` by target depth): the
# lower ends below that are the line's, not the models'.

# %% tags=["NBVAL_CHECK_OUTPUT", "hide-input", "hide-output"]
display(chapter.table(scale.show.fits_table(data["fits"])))
display(chapter.table(scale.show.forecast_table(data["fits"])))

# %% tags=["hide-input"] mystnb={"figure": {"caption": "Objective 1's number (the largest shortfall below the MLP over its positions up to the training length) against the steps on the target family (log scale) over the fitted snapshots, one colour per target depth, with each fitted line (dashed) extended to the paper's training length (dotted). Bars beside that length: the 90 % band of each line's value there, from the snapshots' scatter (cut at the axis). Grey: objective 1's tolerance. A line in log steps keeps falling; objective 1's number cannot go below the MLP's $R^2$ minus 1, just below 0.", "name": "fig-scale-forecast"}}
fig = figures.scale.plot_scale_forecast(data["points"], data["fits"], main_study.CRITERIA["obj1_tolerance"],
                                  scale.trend.PAPER_STEPS, scale.trend.target_offset(rcfg))

# %% [markdown]
# Each line rests on {glue:text}`scale_fitted_snapshots` snapshots, and the first
# fitted one (the main study's length) sits where the curves still bend after the
# warm phase and the switch of attention. Left out, with its band refitted on the
# {glue:text}`scale_fitted_later` later snapshots, the slope of {glue:text}`lfo_model` moves most, from
# {glue:text}`lfo_from` to {glue:text}`lfo_to` per doubling;
# {glue:text}`lfo_flips` slopes change sign, and the bands wholly below 0 go
# from {glue:text}`lfo_below` to {glue:text}`lfo_below_without`. The lines
# describe these runs; how steep a fall they show depends on where one starts
# them.

# %% tags=["NBVAL_CHECK_OUTPUT", "hide-input", "hide-output"]
lfo = None
if len(data["fits"]) and data["fits"]["snapshots"].min() >= 4:  # a line and a band without the first snapshot
    lfo = scale.trend.leave_first_out(data["points"], data["boot"], scale.trend.fit_from(rcfg),
                                main_study.CRITERIA["obj1_tolerance"], scale.trend.target_offset(rcfg))
if lfo is not None:
    display(chapter.table(scale.show.leave_first_table(lfo)))
    chapter.glue(**scale.show.leave_first_glue(lfo))
else:
    chapter.glue(**{k: "—" for k in ("lfo_model", "lfo_from", "lfo_to", "lfo_flips", "lfo_below",
                                     "lfo_below_without")})

# %% [markdown]
# ## Twice the width
#
# Steps are one axis of scale; the model's size is the other. The `wide`
# profile trains the same schedule on the same prompts with models twice as
# wide: {glue:text}`width_heads_wide` heads of the same size over width
# {glue:text}`width_wide` instead of {glue:text}`width_heads_narrow` over
# {glue:text}`width_narrow`, three layers still, so
# {glue:text}`width_params_wide` parameters against
# {glue:text}`width_params_narrow` ({glue:text}`width_params_ratio` times) and
# {glue:text}`width_flops_ratio` times the FLOPs per step, for the main study's
# {glue:text}`width_steps` steps. Its run
# (`python -m icdl.gpt_icl.scale --profile wide --workers 2`) scores the same
# snapshots on the same prompts with the same bootstrap resamples, so every
# difference between the widths below is paired. Four criteria were
# registered before it: at the main study's length the wider model is closer
# to the MLP (every model, the band's upper end below 0); at equal training
# FLOPs the wider model is closer than the narrow one trained longer (for the
# models whose narrow run reaches those FLOPs within half a doubling);
# objectives 1 and 3 on the wider models.

# %% tags=["NBVAL_CHECK_OUTPUT", "hide-input", "hide-output"]
wide_raw = show_reference(scale.models.PROFILES, "scale", scale.judge.WIDER)
wcfg = scale.models.PROFILES.resolve(scale.judge.WIDER)
wide = scale.study.from_result(wide_raw, profile=scale.judge.WIDER) if wide_raw is not None and scale_on == "reference" else None
widths = scale.judge.width_comparison(data, wide, rcfg, wcfg) if wide is not None else None
if widths is not None:
    display(chapter.table(scale.show.width_shown(widths)))

# %% tags=["remove-cell"]
chapter.glue(**scale.show.width_glue(widths, wide, rcfg, wcfg, data))

# %% [markdown]
# At the main study's length the change of the shortfall from width
# {glue:text}`width_narrow` to {glue:text}`width_wide` is
# {glue:text}`width_delta_softmax` for the softmax models and
# {glue:text}`width_delta_relu` for the ReLU-attention ones (below 0: the wider
# model is closer to the MLP). Against the narrow model at the snapshot of the
# nearest training FLOPs the change is {glue:text}`width_matched` (the
# ReLU-attention models start from the softmax ones, so their wide run costs
# more than any narrow snapshot: they have no compute-matched partner).
# Objective 1 {glue:text}`width_verdict_icdl_obj1_wider` on the wider models
# (largest shortfall {glue:text}`width_obj1`) and objective 3
# {glue:text}`width_verdict_icdl_obj3_wider` (largest fall
# {glue:text}`width_obj3`): at their last snapshot {glue:text}`wide_gate_met`
# (the weakest, {glue:text}`wide_gate_worst`, leads the {term}`context mean` by
# {glue:text}`wide_gate_lead`; the {term}`learning gate` of {doc}`gpt_icl` asks
# {glue:text}`wide_gate_margin`); a claim passes only where every model it is
# about learned, and fails only where one that learned fails it. The wide run's jobs took {glue:text}`width_minutes`
# core-minutes.
#
# The wider models were trained with everything else of the main study kept:
# its learning rate, batch and warm phase, all chosen at width
# {glue:text}`width_narrow`. The figure shows where the gap opens: by the end
# of the warm phase on tanh targets the wider softmax models are no closer to
# the MLP than the narrow ones (at target depths 4 and 6 they are farther), and
# the steps on the target family after it do not make that up; the ReLU-attention
# models start from them and inherit the gap. So at these settings twice the
# width does not help within the main study's training. Whether the
# wider models need a smaller learning rate or a longer warm phase -- the
# settings were not tuned for them -- is what this run cannot say: a scan of
# the learning rate at width {glue:text}`width_wide` would.
#
# So these numbers describe *this recipe* at twice the width, not width. The
# question a reader asks -- does a wider model, given its own learning rate,
# come closer? -- is registered as two claims, the same numbers with a gate:
# the wider models' rate must have been chosen by a scan of at least
# {glue:text}`width_scan_rates` rates at their width. (The same two questions
# judged on this recipe are replaced designs: the report's *Designs we
# replaced* gives their verdicts.) The wide run tried {glue:text}`width_rates`,
# so the claim at the main study's length
# {glue:text}`width_verdict_scale_wider_tuned_closer` and the claim at equal
# compute {glue:text}`width_verdict_scale_width_tuned_over_steps`,
# whatever their numbers, until such a scan is run.

# %% tags=["remove-cell"]
need = learning.margin("icdl-obj1-wider")
chapter.glue(**(learning.words(learning.gate(scale.judge.context_mean_leads(wide["points"], wide.get("boot"))), need,
                               prefix="wide_gate") if wide is not None else
                {"wide_gate_met": "the run has not been made", "wide_gate_worst": "—", "wide_gate_lead": "—",
                 "wide_gate_margin": f"{need:g}"}))

# %% tags=["hide-input", "hide-output"] mystnb={"figure": {"caption": "The shortfall below the MLP at the training length against the training FLOPs spent on each model from its first step (a ReLU-attention model counts the softmax model it starts from), for the main study's width (solid) and twice it (dashed), one column per target depth, 90 % bootstrap bands over the test prompts; grey: objective 1's tolerance; dash-dot: least squares' own shortfall. Triangles on each panel's top edge (filled: the main width, open: twice it): the end of that width's softmax warm phase; its softmax snapshots left of the triangle were trained on tanh targets only.", "name": "fig-scale-width"}}
curves = [scale.show.flops_curve(data, rcfg)] + ([scale.show.flops_curve(wide, wcfg)] if wide is not None else [])
fig = figures.scale.plot_scale_width(curves, main_study.CRITERIA["obj1_tolerance"],
                               [scale.judge.training_flops(c, "softmax", c["warm_steps"]) for c in (rcfg, wcfg)],
                               scale.trend.least_squares_shortfall(data["points"]))

# %% [markdown]
# ## What a longer run would have to show
#
# The lines are fitted over {glue:text}`scale_target_doublings` doublings of
# the target steps (the softmax models' training on the targets grows
# {glue:text}`scale_target_growth_softmax`-fold, the ReLU models'
# {glue:text}`scale_target_growth_relu`-fold), for one training run per model; a
# straight line in log steps describes these snapshots, it is not a law, and
# the warm phase and the switch to ReLU attention shape the early part of each
# curve. What remains open is whether the trend goes on: the `long` profile trains the same models 64
# times the main study's length, scored at every half-doubling of its steps as
# here,
#
# ```bash
# python -m icdl.gpt_icl.scale --profile long --workers 1 --device cuda
# ```
#
# and would confirm the trend if every model's shortfall keeps falling past
# these runs (the ReLU-attention models included) and the models pull ahead of
# least squares, and refute it if the shortfall levels off above the softmax
# models' present values. It would also say whether objective 3 holds with
# more training (here it {glue:text}`scale_verdict_icdl_obj3_longer`). The `paper` profile
# scores Appendix F's larger models along their 500 000 steps the same way.
#
# ## How the numbers are read
#
# The thresholds of this chapter's claims were registered before its run; how
# the numbers they are read on are computed was fixed after it, each toward
# the claim's own words, on the run's stored scores. In short: the steps are
# counted on the target family, the forecast is of objective 1's own number, and
# every deciding number carries the interval of the extreme over the models,
# resampled together.
#
# :::{dropdown} The four readings in full
# - the steps are counted on the target family, not from the warm phase;
# - the lines' bands hold the snapshots' scatter besides the prompts' noise;
# - the forecast is of objective 1's own number (the largest shortfall over
#   the positions), extended to the paper's steps, not of the training length's
#   shortfall alone, which every model had already brought within the
#   tolerance;
# - every number that decides a claim carries the 90 % interval of its worst
#   model, drawn resample by resample, and an interval that straddles its line
#   leaves the claim undecided -- except where the registered criterion itself
#   asks more (the falling shortfall's asks every model's band below 0).
# :::
#
# Read without these -- the forecast not extrapolated, objective 1 on a point
# value -- both would pass (objective 1's largest shortfall lies
# {glue:text}`scale_obj1_margin` inside its tolerance); read with them, a pass
# needs the whole interval inside. The two claims about a tuned wider model
# were registered before any run of their design.
#
# ## The claims, judged

# %% tags=["NBVAL_CHECK_OUTPUT", "remove-input"]
ledger.record_all(scale.judge.judge(data["fits"], data["trend"], data["points"], data["shift"], data["boot"],
                              data["fit_draws"]),
                  judged_on=scale_on,
                  covered=scale_on == "reference")
ledger.record_all(scale.judge.judge_wider(widths, wide), judged_on=scale.judge.WIDER, covered=widths is not None)
ledger.record_all(scale.judge.judge_tuned_width(widths, data, wide, wcfg), judged_on=scale.judge.WIDER,
                  covered=widths is not None)
ledger.save()
ledger.judged()

# %% tags=["remove-cell"]
chapter.glue(claims_box=ledger.box())
chapter.show_glued()
