"""The claims of chapter ``diffusion_score``: what it must reproduce, each criterion as data, and the
registrations, deviations and known failures of its claims (:mod:`icdl.repro.claims` assembles every
chapter's part)."""

from __future__ import annotations

from .base import DIFFUSION, Claim, Condition, all_of, row

CLAIMS: tuple[Claim, ...] = (
    # ---- ICDL appendix G, REB data and cost ----------------------------------------------
    row("icdl-lemma19", "ICDL Lemma 19 (diffusion score ICL)", "score matching reduces to ICGD on a ReLU network",
        DIFFUSION, "tests/test_diffusion.py::test_transformer_learns_the_score_in_context"),
    row("reb-dsm", "REB corrected score-matching data",
        "$y_i = -(x_{i,t} - \\alpha_t x_i)/h_t$, $\\alpha_t = e^{-t/2}$, $h_t = 1 - e^{-t}$",
        DIFFUSION, "tests/test_diffusion.py::test_dsm_targets_have_the_score_as_mean"),
)

CRITERIA: dict[str, tuple[Condition, ...]] = {
    "icdl-lemma19": all_of(("bounds_held", "==", 1), ("value", "<", 1), ("below_start", "==", 1)),
    "reb-dsm": all_of(("spread_over_se", "<", 6), ("gap_over_se", "<", 6)),
}

DEVIATIONS: dict[str, str] = {
    "icdl-lemma19": "a sigmoid network with the targets mapped into (0, 1) and a random start, where the paper "
                    "reduces score matching to in-context GD on a ReLU network (outside Theorem 1: see the errata)",
}
