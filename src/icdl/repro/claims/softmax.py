"""The claims of chapter ``softmax``: what it must reproduce, each criterion as data, and the
registrations, deviations and known failures of its claims (:mod:`icdl.repro.claims` assembles every
chapter's part)."""

from __future__ import annotations

from .base import HELD, SOFTMAX, Claim, Condition, all_of, row

CLAIMS: tuple[Claim, ...] = (
    row("icdl-thm2", "ICDL Theorem 2 (softmax)", "4L softmax layers do L ICGD steps (existence)",
        SOFTMAX, "tests/test_softmax.py::test_fitted_softmax_step_follows_gd_on_held_out_prompts"),
    row("icdl-thm2-size", "ICDL Theorem 2 / Lemma 16 (accuracy with size)",
        "any accuracy with enough size: the fitted step's error should fall as the blocks widen",
        SOFTMAX, "tests/test_softmax.py::test_width_trend_criterion_both_sides"),
    row("icdl-lemma16", "ICDL Lemma 16", "FF∘Attn∘FF blocks approximate continuous permutation-equivariant maps",
        SOFTMAX, "tests/test_softmax.py::test_quantiser_is_exact_on_the_grid_and_monotone"),
    row("icdl-lemma17", "ICDL Lemma 17", "softmax attention is a contextual mapping on quantised inputs",
        SOFTMAX, "tests/test_softmax.py::test_rank_one_attention_separates_small_grids"),
)

CRITERIA: dict[str, tuple[Condition, ...]] = {
    "icdl-thm2": all_of(("value", "<=", 0.5), ("risk_falls", "==", 1)),
    "icdl-thm2-size": all_of(("value", "<", -0.15), ("widest", "<=", 0.08)),
    "icdl-lemma16": all_of(HELD),
    "icdl-lemma17": all_of(("value", ">", 0)),
}
