"""The claims of chapter ``gpt_scale``: what it must reproduce, each criterion as data, and the
registrations, deviations and known failures of its claims (:mod:`icdl.repro.claims` assembles every
chapter's part)."""

from __future__ import annotations

from .base import GPT_SCALE, LEARNED, SEC5, SEEDED, Claim, Condition, Replaced, all_of, row

CLAIMS: tuple[Claim, ...] = (
    # ---- ICDL's experiments with more training: how much of the shortfall is scale? ----------
    row("scale-shortfall-falls", "ICDL objective 1, trained 4× longer (this book's question)",
        "not claimed by ICDL: the shortfall below the MLP falls with training (its fitted change per doubling "
        "of the steps below 0 for every model)",
        GPT_SCALE, "tests/test_gpt_scale.py::test_fit_recovers_a_planted_slope_on_the_target_clock_and_its_forecast"),
    row("icdl-obj1-longer", "ICDL objective 1 (Figs. 2–4), on the longest-trained models",
        "ICL R² comparable to the trained MLP baseline up to the training length",
        GPT_SCALE, "tests/test_gpt_scale.py::test_judge_both_sides_of_each_threshold"),
    row("scale-beats-knn", "This book: the models beat the simplest local rule once trained longer",
        "not claimed by ICDL: R² above 3-NN's at the training length for every model",
        GPT_SCALE, "tests/test_gpt_scale.py::test_judge_both_sides_of_each_threshold"),
    row("scale-forecast", "ICDL objective 1: would the paper's 500 000 steps suffice at our size?",
        "not claimed by ICDL: the fitted trend reaches objective 1's tolerance within 500 000 steps",
        GPT_SCALE, "tests/test_gpt_scale.py::test_fit_recovers_a_planted_slope_on_the_target_clock_and_its_forecast"),
    row("icdl-obj3-longer", "ICDL objective 3 (Figs. 5–6), on the longest-trained models",
        "a shift of the target-parameter distribution hurts little",
        GPT_SCALE, "tests/test_gpt_scale.py::test_judge_both_sides_of_each_threshold"),
    row("scale-wider-tuned-closer",
        "ICDL objective 1 at twice the width, its learning rate tuned (this book's question)",
        "not claimed by ICDL: at the main study's steps, twice the width, with its learning rate chosen at that width "
        "by a scan of at least three rates, brings every model closer to the MLP",
        GPT_SCALE, "tests/test_gpt_scale.py::test_the_tuned_width_claims_wait_for_a_scan"),
    row("scale-width-tuned-over-steps",
        "ICDL objective 1: tuned width or steps at equal training compute? (this book's question)",
        "not claimed by ICDL: at equal training FLOPs the wider model, its learning rate chosen at its width by a scan "
        "of at least three rates, is closer to the MLP than the narrow one trained longer",
        GPT_SCALE, "tests/test_gpt_scale.py::test_the_tuned_width_claims_wait_for_a_scan"),
    row("icdl-obj1-wider", "ICDL objective 1 (Figs. 2–4), on the wider models",
        "ICL R² comparable to the trained MLP baseline up to the training length",
        GPT_SCALE, "tests/test_gpt_scale.py::test_the_wider_judge_both_sides_of_each_threshold"),
    row("icdl-obj3-wider", "ICDL objective 3 (Figs. 5–6), on the wider models",
        "a shift of the target-parameter distribution hurts little",
        GPT_SCALE, "tests/test_gpt_scale.py::test_the_wider_judge_both_sides_of_each_threshold"),
)

CRITERIA: dict[str, tuple[Condition, ...]] = {
    # registered before the first reference run of chapter gpt_scale (icdl.gpt_icl.scale.judge): the largest
    # change per doubling of the shortfall below the MLP and the largest upper end of its 90 % band; objective
    # 1's and 3's numbers on the longest-trained models; the smallest lead over 3-NN; the largest forecast.
    # The thresholds are as registered; the numbers they read were corrected after the run (issue 39), each
    # toward the claim's own words: "doubling of the training" counts steps on the target family (not the warm
    # phase), the band holds the snapshots' scatter besides the prompts', the forecast is of objective 1's own
    # number (the largest shortfall over the MLP's positions, not the training length's alone) extended to the
    # paper's steps, and each number carries the 90 % interval of its largest (smallest) over the models
    "scale-shortfall-falls": all_of(("value", "<", 0), ("slope_hi", "<", 0), LEARNED, SEEDED),
    "icdl-obj1-longer": all_of(("value", "<=", 0.05), LEARNED, SEEDED),
    "scale-beats-knn": all_of(("value", ">", 0), LEARNED, SEEDED),
    "scale-forecast": all_of(("value", "<=", 500_000), LEARNED, SEEDED),
    "icdl-obj3-longer": all_of(("value", "<=", 0.1), LEARNED, SEEDED),
    # registered before any run of their design (a scan of the learning rate at width 128): the wider claims
    # asked of wider models given their own learning rate -- the width-128 run of profile wide kept the width-64
    # rate and warm phase, and two of its softmax models were still on the plateau at step 4 596. value: the
    # largest change of the shortfall below the MLP from width 64 to 128 over the models (at the main study's
    # length; at the narrow model's snapshot of the nearest training FLOPs), each with its 90 % interval over
    # the test prompts, the largest over the models resample by resample. Gate ``tuned``: the wider models' rate
    # was chosen by a scan of at least three rates at their width (1 or 0); unmet, the claims are inconclusive
    "scale-wider-tuned-closer": all_of(("value", "<", 0), ("tuned", "gate", 1), LEARNED, SEEDED),
    "scale-width-tuned-over-steps": all_of(("value", "<", 0), ("tuned", "gate", 1), LEARNED, SEEDED),
    # registered before the run of python -m icdl.gpt_icl.scale --profile wide --workers 2 (scale.judge_wider):
    # objective 1's and 3's numbers on the wider models
    "icdl-obj1-wider": all_of(("value", "<=", 0.05), LEARNED, SEEDED),
    "icdl-obj3-wider": all_of(("value", "<=", 0.1), LEARNED, SEEDED),
}

#: the commit that registered each claim's criterion as it stands (``tests/test_registered.py`` reads the
#: registry at that commit and fails where a threshold, comparison or band differs today)
REGISTERED: dict[str, str] = {
    "scale-wider-tuned-closer": "638b4ca",
    "scale-width-tuned-over-steps": "638b4ca",
    # the five claims of the scale study's first commit, which is the commit its reference run was made at
    # (results/gpt_scale/scale.reference.json names f33e965): their thresholds as today's; the learning and seeds
    # gates added later under registrations of their own (GATES_ADDED). Two were renamed since (RENAMED)
    **{c: "f33e965" for c in ("scale-shortfall-falls", "scale-beats-knn", "scale-forecast", "icdl-obj1-longer",
                              "icdl-obj3-longer")},
    # objectives 1 and 3 on the wider models: registered in the commit the wide run was made at
    # (results/gpt_scale/scale.wide.json names c411f4e)
    **{c: "c411f4e" for c in ("icdl-obj1-wider", "icdl-obj3-wider")},
}

#: claims registered under another id than today's (today's id -> the id at its registering commit)
RENAMED: dict[str, str] = {"icdl-obj1-longer": "scale-obj1", "icdl-obj3-longer": "scale-obj3"}

DEVIATIONS: dict[str, str] = {
    "icdl-obj1-longer": SEC5.replace("models trained", "models trained four times the main study's steps"),
    "icdl-obj3-longer": SEC5.replace("models trained", "models trained four times the main study's steps"),
    "icdl-obj1-wider": SEC5.replace("3 layers × 2 heads × width 64", "3 layers × 4 heads × width 128"),
    "icdl-obj3-wider": SEC5.replace("3 layers × 2 heads × width 64", "3 layers × 4 heads × width 128"),
}

KNOWN_FAILURES: dict[str, str] = {
    # none: the claims that failed on the reference run (scale-shortfall-falls, icdl-obj3-longer; see git history)
    # were judged on one seed of each model, and the gate SEEDED (issue 53) now leaves every claim of this chapter
    # inconclusive until the study is run on the main study's three seeds
}

#: designs of this chapter's questions replaced by a later one (the report's "Designs we replaced")
REPLACED: dict[str, Replaced] = {r.id: r for r in (
    Replaced("scale-wider-closer", "ICDL objective 1 at twice the width (this book's question)",
             "not claimed by ICDL: at the main study's steps, twice the width (3.9× the parameters), trained "
             "with the width-64 learning rate and warm phase, brings every model closer to the MLP",
             "fail",
             "at the main study's steps the width-128 models are farther from the MLP than the width-64 ones "
             "for five of the six models (shortfall +0.016 to +0.089 higher, every band above 0) and level for "
             "the depth-3 softmax model (−0.0001, band −0.006 to +0.007)",
             "python -m icdl.gpt_icl.scale --profile wide --workers 2 at c411f4e", "",
             ("scale-wider-tuned-closer",),
             "the wider models kept the main study's learning rate and warm phase, chosen at width 64, so the "
             "verdict was on that recipe, not on width; registered again with a gate that the wider models' "
             "rate be chosen by a scan at their width"),
    Replaced("scale-width-over-steps",
             "ICDL objective 1: width or steps at equal training compute? (this book's question)",
             "not claimed by ICDL: at equal training FLOPs the wider model, trained with the width-64 learning "
             "rate and warm phase, is closer to the MLP than the narrow one trained longer",
             "fail",
             "at equal training FLOPs the width-64 softmax models trained 26 000 steps are closer to the MLP "
             "than the width-128 ones at 6 500: the wider models' shortfall is +0.020, +0.063 and +0.116 higher"
             " at target depths 3, 4 and 6, every band above 0",
             "python -m icdl.gpt_icl.scale --profile wide --workers 2 at c411f4e", "",
             ("scale-width-tuned-over-steps",),
             "the wider models kept the main study's learning rate and warm phase, chosen at width 64, so the "
             "verdict was on that recipe, not on width; registered again with a gate that the wider models' "
             "rate be chosen by a scan at their width"),
)}

#: the code that computes this chapter's registered values from its runs' stored numbers (``claims.JUDGED_BY``)
JUDGED_BY: tuple[str, ...] = (
    "gpt_icl/core/intervals.py",
    "gpt_icl/core/learning.py",
    "gpt_icl/scale/judge.py",
    "gpt_icl/scale/trend.py",
)
