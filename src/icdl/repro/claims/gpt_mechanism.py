"""The claims of chapter ``gpt_mechanism``: what it must reproduce, each criterion as data, and the
registrations, deviations and known failures of its claims (:mod:`icdl.repro.claims` assembles every
chapter's part)."""

from __future__ import annotations

from .base import GPT_MECHANISM, LEARNED, POWER, Claim, Condition, Replaced, all_of, row

CLAIMS: tuple[Claim, ...] = (
    row("mech-seeds-nearest-gd", "This book: hypothesis 1 over the main study's seeds",
        "not claimed by ICDL: averaged over the main study's seeds of each model, every model is nearer GD on an "
        "N-layer network, tuned in flow time for each seed's model, than any linear or local rule, by prediction "
        "difference",
        GPT_MECHANISM, "tests/test_gpt_mechanism_seeds.py::test_the_seeds_judge_both_sides_of_each_threshold"),
    row("mech-seeds-sens-gd", "This book: GD nearest by the sensitivities, over the main study's seeds",
        "not claimed by ICDL: averaged over the seeds, every model's $\\partial \\hat y / \\partial "
        "x_{\\mathrm{query}}$ is nearer that of GD tuned in flow time than any linear or local rule's in L2",
        GPT_MECHANISM, "tests/test_gpt_mechanism_seeds.py::test_the_seeds_judge_both_sides_of_each_threshold"),
    row("mech-seeds-cosine-gd", "This book: hypothesis 2 over the main study's seeds",
        "not claimed by ICDL: averaged over the seeds, every model's $\\partial \\hat y / \\partial "
        "x_{\\mathrm{query}}$ points where that of GD tuned in flow time does (mean cosine ≥ 0.8)",
        GPT_MECHANISM, "tests/test_gpt_mechanism_seeds.py::test_the_seeds_judge_both_sides_of_each_threshold"),
    row("mech-seeds-median-gd", "This book: hypothesis 1 by the median block, over the main study's seeds",
        "not claimed by ICDL: averaged over the seeds, on the median block of test prompts every model is nearer GD "
        "tuned in flow time than the simple rule nearest it over all prompts, by prediction difference",
        GPT_MECHANISM, "tests/test_gpt_mechanism_seeds.py::test_the_seeds_judge_both_sides_of_each_threshold"),
    *(row(f"{claim}-n01", f"{source}, at x ~ N(0, I) (the fitted schedule's models)",
          f"{paper}, asked of the models trained on inputs from N(0, I) -- where a linear fit leaves much of the label "
          "variance -- at the schedule fitted to that task",
          GPT_MECHANISM, "tests/test_gpt_mechanism_seeds.py::test_the_n01_hypotheses_are_the_seeds_design_on_n01")
      for claim, source, paper in (
          ("mech-seeds-nearest-gd", "This book: hypothesis 1 over the seeds",
           "not claimed by ICDL: averaged over the seeds of each model, every model is nearer GD on an N-layer "
           "network, tuned in flow time for each seed's model, than any linear or local rule, by prediction "
           "difference"),
          ("mech-seeds-sens-gd", "This book: GD nearest by the sensitivities, over the seeds",
           "not claimed by ICDL: averaged over the seeds, every model's $\\partial \\hat y / \\partial "
           "x_{\\mathrm{query}}$ is nearer that of GD tuned in flow time than any linear or local rule's in L2"),
          ("mech-seeds-cosine-gd", "This book: hypothesis 2 over the seeds",
           "not claimed by ICDL: averaged over the seeds, every model's $\\partial \\hat y / \\partial "
           "x_{\\mathrm{query}}$ points where that of GD tuned in flow time does (mean cosine ≥ 0.8)"),
          ("mech-seeds-median-gd", "This book: hypothesis 1 by the median block, over the seeds",
           "not claimed by ICDL: averaged over the seeds, on the median block of test prompts every model is "
           "nearer GD tuned in flow time than the simple rule nearest it over all prompts, by prediction "
           "difference"))),
    *(row(f"mech-power-{measure}{suffix}", f"This book: the power of the mechanism's {name} ({where})",
          f"not claimed by ICDL: by {name} the mechanism's pipeline (members chosen on scan prompts, measures on test "
          "prompts) calls a planted model that runs GD on the N-layer network GD, and calls neither a planted ridge "
          "nor a planted kernel smoother (a nonlinear learner that is not GD) GD -- each off the grid it chooses "
          "from, with prediction noise of 4, 15, 30 and 45 % of the labels' variance (spanning the trained models' "
          f"own errors) -- at every target depth and noise level ({where})",
          GPT_MECHANISM, "tests/test_gpt_mechanism_power.py::test_each_measure_is_judged_on_its_own_plants")
      for suffix, where in (("", "ICDL's inputs"), ("-n01", "inputs from N(0, I)"))
      for measure, name in (("pred", "prediction difference"), ("sens", "sensitivity difference"),
                            ("cosine", "cosine"), ("median", "median-block prediction difference"))),
    row("mech-control-linear", "This book: the positive control (a transformer trained on linear targets)",
        "not claimed by ICDL: the measures find a linear fit (least squares, ridge, or GD or the Adam-trained MLP on "
        "a one-layer network) nearest a transformer trained on linear regression, not a local rule",
        GPT_MECHANISM, "tests/test_gpt_mechanism.py::test_the_control_judge_both_sides_of_each_threshold"),
)

CRITERIA: dict[str, tuple[Condition, ...]] = {
    # registered before any run of python -m icdl.gpt_icl.mechanism --profile control (judge_control): the main
    # study's architecture and schedule trained on depth-1 (linear) targets, measured at the training length on
    # the pretraining mixture. value: the largest over the two attentions of the nearest linear fit's prediction
    # difference over the nearest local rule's (3-NN, context mean); sens: the largest of the nearest linear
    # fit's sensitivity L2 difference; cosine: the smallest of the largest mean cosine with a linear fit. Linear
    # fits: least squares, ridge, GD and the Adam-trained MLP (both on a one-layer network there). Each number
    # with its 90 % interval over blocks of the test prompts (one seed: prompt noise only)
    "mech-control-linear": all_of(("value", "<", 1), ("sens", "<", 0.25), ("cosine", ">=", 0.9)),
    # registered before any run of python -m icdl.gpt_icl.mechanism --profile seeds (judge_seeds): the flow
    # claims asked over the main study's three seeds (0, 1, 2) of each of the six models. Profile seeds: the flow
    # profile's grid, scan and test prompts, positions and candidates, on every seed's model, pretraining mixture.
    # Per model and seed, GD's and ridge's members are chosen for that seed's model as in the flow study and the
    # four flow numbers computed (GD's prediction difference over the nearest simple rule's, its sensitivity L2
    # difference over the smallest simple rule's, GD's mean cosine, the median-block ratio with the rule nearest
    # that seed's model over all prompts). A model's number is the mean over its seeds; value: the largest over
    # the models (the cosine: the smallest). Its 90 % interval was registered as a two-level bootstrap (seeds drawn
    # with replacement beside the 32 blocks of test prompts); since issue 53 it is intervals.Draws' seed rows (a t
    # term over the three seeds) and prompt rows, each model on its own interval (intervals.extreme), which covers
    # where the registered one did not -- the threshold unchanged. Gates, each 1 or 0:
    # ``control`` (mech-control-linear passed), ``flow`` (the flow gate met by every seed's model), ``seeds``
    # (three seeds measured for every model)
    # Since issue 68 (item 3) a ratio -- pred, sens, median; not the cosine -- is summarised on the log scale: a
    # model's number is the GEOMETRIC mean over its seeds (the registration's "mean" was the arithmetic one), its
    # interval that of the log ratio reported as exp of its ends (mechanism.numbers.summarised). The judged
    # value so changes meaning (a geometric seed mean, never above the arithmetic one); the line does not: value < 1
    # on the ratio scale is log(value) < 0, the same comparison, and every threshold below is as registered. The
    # mech-power-* ratios (one seed, prompt rows only) and mech-control-linear's ratio move only by the
    # interpolation of the prompt rows' quantiles
    # registered before any run of its design (issue 68; the planted models' design of 9c4d0f7 is in REPLACED):
    # python -m icdl.gpt_icl.mechanism.power --profile seeds (power.judge). Per task -- ICDL's inputs, and N(0, I)
    # (suffix -n01) -- and target depth of the seeds profile, three plants (icdl.gpt_icl.mechanism.plants): GD on
    # the target's network and ridge at the settings of power.plant_settings (off the grid), and a kernel smoother
    # (kernel ridge regression with the Gaussian kernel exp(−|x − x'|²/(2 d)), λ = 0.1, on the prompt's examples
    # with their mean label taken out): a nonlinear learner that is not GD. Each plant at every noise level of
    # plants.NOISES = (0.04, 0.15, 0.30, 0.45) of the labels' variance at each position (one standard normal draw
    # scaled), a grid that spans the trained models' own errors (the n01 models' 13-40 %). Per plant and level the
    # pipeline chooses GD's and ridge's members on the scan prompts and measures on the test prompts (pretraining
    # mixture, training length) the four numbers the hypotheses read (numbers.paired_measures, numbers.median_ratio):
    # pred, sens, cosine, median, each with its 90 % interval over blocks of the test prompts. value: the planted
    # GD's number at its worst over the depths and levels (the largest ratio, the smallest cosine); ridge and
    # nonlinear: the planted ridge's and the kernel smoother's at their worst on the other side (the smallest
    # ratio, the largest cosine); each read off every (depth, level)'s own interval (intervals.extreme). The lines
    # are the hypotheses' own (1; the cosine 0.8): a measure has power for "runs GD" only where the planted GD is
    # on GD's side of its line and both other plants on the other side. The gate ``power`` of each hypothesis
    # (registered at f49cf8e, unchanged) reads its own measure's claim from here on: mech-seeds-nearest-gd{s} the
    # pred claim of its task, -sens-gd the sens claim, -cosine-gd the cosine claim, -median-gd the median claim
    **{f"mech-power-{m}{s}": all_of(("value", op, t), ("ridge", other, t), ("nonlinear", other, t))
       for s in ("", "-n01")
       for m, op, other, t in (("pred", "<", ">", 1), ("sens", "<", ">", 1), ("cosine", ">=", "<", 0.8),
                               ("median", "<", ">", 1))},
    "mech-seeds-nearest-gd": all_of(("value", "<", 1), ("control", "gate", 1), ("flow", "gate", 1),
                                    ("seeds", "gate", 1), LEARNED, POWER),
    "mech-seeds-sens-gd": all_of(("value", "<", 1), ("control", "gate", 1), ("flow", "gate", 1),
                                 ("seeds", "gate", 1), LEARNED, POWER),
    "mech-seeds-cosine-gd": all_of(("value", ">=", 0.8), ("control", "gate", 1), ("flow", "gate", 1),
                                   ("seeds", "gate", 1), LEARNED, POWER),
    "mech-seeds-median-gd": all_of(("value", "<", 1), ("control", "gate", 1), ("flow", "gate", 1),
                                   ("seeds", "gate", 1), LEARNED, POWER),
    # registered before any run of python -m icdl.gpt_icl.mechanism --profile seeds-n01 (seeds.judge_seeds with
    # suffix -n01), and before the n01 models were all trained or any of them measured by this pipeline: the four
    # seeds hypotheses, the same numbers, intervals (intervals.Draws, each model on its own: intervals.extreme),
    # lines and gates, asked of the three seeds of every model of main-study profile n01 (x ~ N(0, I), lr 1e-4,
    # batch 64, 9 500 steps) on the seeds profile's flow grid, scan and test sizes; the learning gate from
    # results/gpt_icl/icl.n01.json, the power gate from mech-power-gd-n01 and mech-power-ridge-n01
    **{f"{c}-n01": all_of((("value", ">=", 0.8) if c == "mech-seeds-cosine-gd" else ("value", "<", 1)),
                          ("control", "gate", 1), ("flow", "gate", 1), ("seeds", "gate", 1), LEARNED, POWER)
       for c in ("mech-seeds-nearest-gd", "mech-seeds-sens-gd", "mech-seeds-cosine-gd", "mech-seeds-median-gd")},
}

#: the commit that registered each claim's criterion as it stands (``tests/test_registered.py`` reads the
#: registry at that commit and fails where a threshold, comparison or band differs today)
REGISTERED: dict[str, str] = {
    **{f"mech-power-{m}{s}": "9936b75" for s in ("", "-n01") for m in ("pred", "sens", "cosine", "median")},
    "mech-control-linear": "cb77cf4",
    "mech-seeds-nearest-gd": "c27bba6",
    "mech-seeds-sens-gd": "c27bba6",
    "mech-seeds-cosine-gd": "c27bba6",
    "mech-seeds-median-gd": "c27bba6",
    **{f"{c}-n01": "76e98f8" for c in ("mech-seeds-nearest-gd", "mech-seeds-sens-gd", "mech-seeds-cosine-gd",
                                  "mech-seeds-median-gd")},
}

#: designs of this chapter's question replaced by a later one (the report's "Designs we replaced"): each
#: with its claim, the run it was judged on and its verdict there, and the live claims that answer it now
REPLACED: dict[str, Replaced] = {r.id: r for r in (
    *(Replaced(f"mech-power-{kind}{suffix}", f"This book: the power of the mechanism's measures, planted {plant} "
               f"({where})",
               f"not claimed by ICDL: the mechanism's pipeline calls a planted model that runs {what} -- off the grid "
               f"it chooses from, with prediction noise of 4 % of the labels' variance -- {verdict}, by prediction "
               f"difference, at every target depth ({where})",
               status, ours,
               "python -m icdl.gpt_icl.mechanism.power --profile seeds at dcbc7e2", "9c4d0f7",
               tuple(f"mech-power-{m}{suffix}" for m in ("pred", "sens", "cosine", "median")),
               "its plants carried 4 % noise where the trained models' own error is 13-40 % of the label variance, it "
               "gated every measure on the prediction ratio alone (a planted GD scored cosine 0.78 / 0.52 / -0.02 on "
               "N(0, I) against the 0.8 line), and it planted no nonlinear learner other than GD; registered again "
               "per measure, at noise spanning the models' errors, with a kernel smoother planted (issue 68)")
      for suffix, where, kind, plant, what, verdict, status, ours in (
          ("", "ICDL's inputs", "gd", "GD", "GD on the N-layer network", "nearer GD than any linear or local rule",
           "inconclusive", "planted GD: GD's prediction difference over the nearest simple rule's, largest over the "
           "depths 0.955 (90 % interval 0.888 to 1.012 over the test prompts); depth 3: 0.955; depth 4: 0.803; "
           "depth 6: 0.171"),
          ("", "ICDL's inputs", "ridge", "ridge", "ridge regression", "nearer a simple rule than GD", "pass",
           "planted ridge: smallest over the depths 1.396 (90 % interval 1.160 to 1.585); depth 3: 1.396; depth 4: "
           "1.411; depth 6: 7.948"),
          ("-n01", "inputs from N(0, I)", "gd", "GD", "GD on the N-layer network",
           "nearer GD than any linear or local rule", "pass", "planted GD: largest over the depths 0.413 (90 % "
           "interval 0.335 to 0.612); depth 3: 0.399; depth 4: 0.413; depth 6: 0.378"),
          ("-n01", "inputs from N(0, I)", "ridge", "ridge", "ridge regression", "nearer a simple rule than GD",
           "pass", "planted ridge: smallest over the depths 4.361 (90 % interval 3.092 to 5.198); depth 3: 4.361; "
           "depth 4: 6.530; depth 6: 4.750"))),
    Replaced("mech-nearest-gd", "This book: hypothesis 1 (the review's first weakness asks it)",
             "not claimed by ICDL: a trained model is nearer GD on an N-layer network than any linear or local "
             "rule",
             "fail",
             "at the training length ridge is the nearest candidate to all six models (prediction difference "
             "0.021–0.040 of the label spread); GD on the network is 1.3–5.5 times farther",
             "python -m icdl.gpt_icl.mechanism --profile reference at f8538bf", "", ("mech-seeds-nearest-gd",),
             "the first grid chose its smallest step size and its most steps for every model, so its verdict "
             "was the grid's; the question was asked again with GD given a fair chance, read in gradient-flow "
             "time, and over the main study's seeds"),
    Replaced("mech-sensitivity-gd", "This book: hypothesis 2",
             "not claimed by ICDL: the model's $\\partial \\hat y / \\partial x_{\\mathrm{query}}$ points where "
             "GD's does (mean cosine ≥ 0.8)",
             "fail",
             "the mean cosine of $\\partial \\hat y / \\partial x_{\\mathrm{query}}$ between model and GD is "
             "0.50–0.75 at the training length, against 0.74–0.86 for ridge and least squares",
             "python -m icdl.gpt_icl.mechanism --profile reference at f8538bf", "", ("mech-seeds-cosine-gd",),
             "the first grid chose its smallest step size and its most steps for every model, so its verdict "
             "was the grid's; the question was asked again with GD given a fair chance, read in gradient-flow "
             "time, and over the main study's seeds"),
    Replaced("mech-shift-gd", "This book: hypothesis 3",
             "not claimed by ICDL: hypothesis 1 still holds on inputs from the mixture (.5, .5)",
             "fail",
             "on inputs from (.5, .5) the context mean is the nearest candidate to all six models at the "
             "training length; GD is 1.3–1.9 times farther than it",
             "python -m icdl.gpt_icl.mechanism --profile reference at f8538bf", "", (),
             "asked only on the first grid, which held GD back (its members in the grid's corner); not asked "
             "again on a design that gives GD a fair chance"),
    Replaced("mech-longer-toward-gd", "This book: hypothesis 4 (four times the training)",
             "not claimed by ICDL: with more training every model moves toward GD on the network, away from the"
             " linear and local rules",
             "fail",
             "after four times the training GD's ratio to the nearest simple rule rises for five of the six "
             "models (1.30 → 1.84 to 5.54 → 15.04) and falls only for the depth-4 ReLU model (1.81 → 1.75); "
             "GD's own difference falls for two of them (depth-3 softmax 0.037 → 0.026, depth-4 ReLU 0.064 → "
             "0.040) while ridge's falls for five: the models come nearer ridge faster than GD, not away from "
             "GD in every case",
             "python -m icdl.gpt_icl.mechanism --profile longer at f2f14e8", "", (),
             "asked only on the first grid, which held GD back, of the scale study's longer-trained models; not"
             " asked again on a design that gives GD a fair chance"),
    Replaced("mech-longer-nearest-gd", "This book: hypothesis 1 after four times the training",
             "not claimed by ICDL: a model trained four times longer is nearer GD on the network than any "
             "linear or local rule",
             "fail",
             "after four times the training GD on the network is 1.43–15.04 times farther from the models than "
             "the nearest simple rule; the nearest candidate is ridge for three models and the Adam-trained MLP"
             " for the other three",
             "python -m icdl.gpt_icl.mechanism --profile longer at f2f14e8", "", (),
             "asked only on the first grid, which held GD back, of the scale study's longer-trained models; not"
             " asked again on a design that gives GD a fair chance"),
    Replaced("mech-fair-nearest-gd", "This book: hypothesis 1 with GD given a fair chance",
             "not claimed by ICDL: with GD's step size, steps and start tuned on a grid whose chosen member is "
             "interior, every model is nearer GD on an N-layer network than any linear or local rule, by "
             "prediction difference",
             "inconclusive",
             "largest ratio of GD's prediction difference to the nearest simple rule's: 5.537 (90 % interval of"
             " this largest over the models, 1.868 to 6.915, over resamples of the test prompts); depth 3 relu:"
             " 1.372; depth 3 softmax: 1.298; depth 4 relu: 1.268; depth 4 softmax: 2.146; depth 6 relu: 5.537;"
             " depth 6 softmax: 3.899; GD's grid at an edge that matters for 1 of 6 models; positive control "
             "passed; GD's own R² below the model's for 3 of 6 models",
             "python -m icdl.gpt_icl.mechanism --profile fair at 1c40e35", "5bc3e86", ("mech-seeds-nearest-gd",),
             "one model's chosen GD member sat at the wider grid's smallest step size, where the scan at the "
             "same flow time ηL hardly moves; the same hypotheses were registered again on a grid read in flow "
             "time, then over the seeds"),
    Replaced("mech-fair-sens-gd", "This book: GD nearest by the sensitivities, given a fair chance",
             "not claimed by ICDL: every model's $\\partial \\hat y / \\partial x_{\\mathrm{query}}$ is nearer GD's"
             " than any linear or local rule's in L2 (von Oswald et al.'s second measure)",
             "inconclusive",
             "largest ratio of GD's sensitivity L2 difference to the smallest simple rule's: 1.618 (90 % "
             "interval of this largest over the models, 1.396 to 1.827, over resamples of the test prompts); "
             "depth 3 relu: 1.107; depth 3 softmax: 1.151; depth 4 relu: 1.618; depth 4 softmax: 0.928; depth 6"
             " relu: 0.987; depth 6 softmax: 0.728; GD's grid at an edge that matters for 1 of 6 models; "
             "positive control passed; GD's own R² below the model's for 3 of 6 models",
             "python -m icdl.gpt_icl.mechanism --profile fair at 1c40e35", "5bc3e86", ("mech-seeds-sens-gd",),
             "one model's chosen GD member sat at the wider grid's smallest step size, where the scan at the "
             "same flow time ηL hardly moves; the same hypotheses were registered again on a grid read in flow "
             "time, then over the seeds"),
    Replaced("mech-fair-cosine-gd", "This book: hypothesis 2 with GD given a fair chance",
             "not claimed by ICDL: every model's $\\partial \\hat y / \\partial x_{\\mathrm{query}}$ points where "
             "the fairly tuned GD's does (mean cosine ≥ 0.8)",
             "inconclusive",
             "smallest mean cosine of the model's sensitivity with GD's: 0.499 (90 % interval of this smallest "
             "over the models, 0.472 to 0.524, over resamples of the test prompts); depth 3 relu: 0.754; depth "
             "3 softmax: 0.754; depth 4 relu: 0.675; depth 4 softmax: 0.746; depth 6 relu: 0.499; depth 6 "
             "softmax: 0.552; GD's grid at an edge that matters for 1 of 6 models; positive control passed; "
             "GD's own R² below the model's for 3 of 6 models",
             "python -m icdl.gpt_icl.mechanism --profile fair at 1c40e35", "5bc3e86", ("mech-seeds-cosine-gd",),
             "one model's chosen GD member sat at the wider grid's smallest step size, where the scan at the "
             "same flow time ηL hardly moves; the same hypotheses were registered again on a grid read in flow "
             "time, then over the seeds"),
    Replaced("mech-flow-nearest-gd", "This book: hypothesis 1 with GD tuned in gradient-flow time",
             "not claimed by ICDL: with GD tuned on a grid whose chosen member is interior in its flow time ηL "
             "and start scale (its step size at an edge of the grid only where the neighbouring step size at "
             "the same ηL leaves the scan flat), every model is nearer GD on an N-layer network than any linear"
             " or local rule, by prediction difference",
             "fail",
             "GD's prediction difference is 5.595 times the nearest simple rule's at worst (target depth 6, "
             "ReLU attention; 90 % interval of the largest 1.446 to 6.913), and above 1 on the whole interval "
             "for five of the six models",
             "python -m icdl.gpt_icl.mechanism --profile flow at 806d906", "13f868d", ("mech-seeds-nearest-gd",),
             "decided on one training seed per model, its intervals holding the test prompts' noise only; "
             "registered again over the main study's three seeds, with intervals that carry the training noise "
             "too"),
    Replaced("mech-flow-sens-gd", "This book: GD nearest by the sensitivities, tuned in gradient-flow time",
             "not claimed by ICDL: every model's $\\partial \\hat y / \\partial x_{\\mathrm{query}}$ is nearer that"
             " of GD tuned in flow time than any linear or local rule's in L2",
             "fail",
             "GD's sensitivity L2 difference is 1.618 times the smallest simple rule's at worst (target depth "
             "4, ReLU attention; 90 % interval of the largest 1.399 to 1.874)",
             "python -m icdl.gpt_icl.mechanism --profile flow at 806d906", "13f868d", ("mech-seeds-sens-gd",),
             "decided on one training seed per model, its intervals holding the test prompts' noise only; "
             "registered again over the main study's three seeds, with intervals that carry the training noise "
             "too"),
    Replaced("mech-flow-cosine-gd", "This book: hypothesis 2 with GD tuned in gradient-flow time",
             "not claimed by ICDL: every model's $\\partial \\hat y / \\partial x_{\\mathrm{query}}$ points where "
             "that of GD tuned in flow time does (mean cosine ≥ 0.8)",
             "fail",
             "the smallest mean cosine with GD's sensitivity is 0.499 (target depth 6, ReLU attention; 90 % "
             "interval 0.473 to 0.525), the largest 0.754",
             "python -m icdl.gpt_icl.mechanism --profile flow at 806d906", "13f868d", ("mech-seeds-cosine-gd",),
             "decided on one training seed per model, its intervals holding the test prompts' noise only; "
             "registered again over the main study's three seeds, with intervals that carry the training noise "
             "too"),
    Replaced("mech-flow-median-gd", "This book: hypothesis 1 by a robust measure (the median block of prompts)",
             "not claimed by ICDL: on the median block of test prompts every model is nearer GD tuned in flow "
             "time than the simple rule nearest it over all prompts, by prediction difference",
             "fail",
             "on the median block of test prompts GD's prediction difference is 1.537 times the nearest simple "
             "rule's at worst (target depth 3, softmax attention, where GD's own R² is above the model's; 90 % "
             "interval of the largest 1.355 to 2.087)",
             "python -m icdl.gpt_icl.mechanism --profile flow at 806d906", "13f868d", ("mech-seeds-median-gd",),
             "decided on one training seed per model, its intervals holding the test prompts' noise only; "
             "registered again over the main study's three seeds, with intervals that carry the training noise "
             "too"),
)}

#: the code that computes this chapter's registered values from its runs' stored numbers (``claims.JUDGED_BY``)
JUDGED_BY: tuple[str, ...] = (
    "gpt_icl/core/intervals.py",
    "gpt_icl/core/learning.py",
    "gpt_icl/mechanism/judge.py",
    "gpt_icl/mechanism/numbers.py",
    "gpt_icl/mechanism/seeds.py",
    "gpt_icl/mechanism/power.py",
    "gpt_icl/core/verdicts.py",
    "gpt_icl/mechanism/measures.py",
)
