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
    "reb-flops": all_of(("value", "<", 0.25)),
    "reb-times": all_of(("value", ">", 1)),
}
