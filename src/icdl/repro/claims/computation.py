"""The claims of chapter ``computation``: what it must reproduce, each criterion as data, and the
registrations, deviations and known failures of its claims (:mod:`icdl.repro.claims` assembles every
chapter's part)."""

from __future__ import annotations

from .base import COMPUTATION, Claim, Condition, all_of, row

CLAIMS: tuple[Claim, ...] = (
    row("reb-flops", "REB cost (FLOPs)", "ICL 3.34 GFLOPs (76 tokens × 22 M params); training 7.56 GFLOPs",
        COMPUTATION, "tests/test_gpt_cost.py::test_cost_counts_match_the_formulas"),
    row("reb-times", "REB cost (A100 times)", "forward 1.38 s; one step 0.04 s, 100 steps ≈ 4 s",
        COMPUTATION, "tests/test_gpt_cost.py::test_cost_judge_both_sides"),
)

CRITERIA: dict[str, tuple[Condition, ...]] = {
    # value: the largest relative distance of a count REB states (the transformer's parameters and tokens, the MLP's
    # parameters, the two FLOP totals) from ours (icdl.gpt_icl.compute.cost.flop_gaps). Until issue 53 only the
    # totals were compared, which agree because REB's parameter and token counts are each off by about two in
    # opposite directions; the claim states the factors, so they are judged (exact counts, no noise)
    "reb-flops": all_of(("value", "<", 0.25)),
    "reb-times": all_of(("value", ">", 1)),
}

#: claims whose value is a wall-clock measurement of the machine that runs the chapter (the ratio of two timings):
#: each run records its own digits, so a rerun whose verdict and words are unchanged keeps the committed ledger
#: (:func:`icdl.repro.ledger._same_ledger`) -- a test run of the chapter leaves no diff from timing noise
TIMED: dict[str, str] = {"reb-times": "one forward pass against 100 training steps, timed on this CPU"}

KNOWN_FAILURES: dict[str, str] = {
    "reb-flops": "REB counts 22 M parameters and 76 tokens; the model of its table has about 9.5 M and a prompt of 75 "
                 "examples and a query is 152 tokens (x and y are separate tokens): each factor is off by about two, "
                 "in opposite directions, so the totals agree while the counts they are built from do not",
}

#: the code that computes this chapter's registered values (``claims.JUDGED_BY``)
JUDGED_BY: tuple[str, ...] = (
    "gpt_icl/compute/cost.py",
)
