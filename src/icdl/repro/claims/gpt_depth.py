"""The claims of chapter ``gpt_depth``: what it must reproduce, each criterion as data, and the
registrations, deviations and known failures of its claims (:mod:`icdl.repro.claims` assembles every
chapter's part)."""

from __future__ import annotations

from .base import GPT_DEPTH, LEARNED, SEC5, Claim, Condition, Mismatch, all_of, row

CLAIMS: tuple[Claim, ...] = (
    row("icdl-obj4", "ICDL objective 4 (Fig. 7)", "deeper transformers are better (depth 4, 6, 8, 10)",
        GPT_DEPTH, "tests/test_gpt_depth.py::test_judge_depth_both_sides"),
)

CRITERIA: dict[str, tuple[Condition, ...]] = {
    "icdl-obj4": all_of(("value", ">", 0), LEARNED),
}

MISMATCHES: dict[str, Mismatch] = {m.claim: m for m in (
    Mismatch("icdl-obj4", "smallest R² gain from the shallowest to the deepest model", (-0.10, 0.0),
             "every depth gets the main study's 6 500-step budget at d = 5, where a 4-layer model already sits near "
             "least squares; deeper models may not use their extra layers in that budget (a hypothesis)",
             "b4ca889", "the reference run of python -m icdl.gpt_icl --profile reference --part depth"),
)}

#: the commit that registered each claim's criterion as it stands (``tests/test_registered.py`` reads the
#: registry at that commit and fails where a threshold, comparison or band differs today)
REGISTERED: dict[str, str] = {
    "icdl-obj4": "b4ca889",
}

DEVIATIONS: dict[str, str] = {
    "icdl-obj4": SEC5.replace("models trained", "models of 4–10 layers trained").replace(
        " with 3 layers × 2 heads × width 64", " with 2 heads × width 64"),
}

#: the code that computes this chapter's registered values from its runs' stored numbers (``claims.JUDGED_BY``)
JUDGED_BY: tuple[str, ...] = (
    "gpt_icl/core/intervals.py",
    "gpt_icl/core/learning.py",
    "gpt_icl/depth/judge.py",
    "gpt_icl/core/verdicts.py",
)
