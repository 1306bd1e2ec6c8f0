"""The claims of chapter ``attention_passes``: what it must reproduce, each criterion as data, and the
registrations, deviations and known failures of its claims (:mod:`icdl.repro.claims` assembles every
chapter's part)."""

from __future__ import annotations

from .base import HELD, PASSES, Claim, Condition, all_of, row

CLAIMS: tuple[Claim, ...] = (
    row("icdl-lemma2", "ICDL Lemma 2 (forward pass $\\hat p_i(j)$)",
        "error (3.8) $\\le (\\sum_{l<j} K^{l/2} L_r^l B_v^l) \\sqrt{K} \\epsilon_r$; $B_\\theta \\le 1 + K C_1$",
        PASSES, "tests/test_attention_passes.py::test_lemma2_error_within_bound_3_8"),
    row("icdl-lemma3", "ICDL Lemma 3 ($\\hat r\'$)",
        "error $\\le \\epsilon_{r\'} + L_{r\'} B_v E_r \\epsilon_r$ (3.12); $B_\\theta \\le 1 + K(N-1) C_2$",
        PASSES, "tests/test_attention_passes.py::test_lemma3_error_within_bound_3_12"),
    row("icdl-lemma4", "ICDL Lemma 4 (g ≈ u)",
        "error $\\le \\epsilon_l + L_l E_r \\epsilon_r$ (3.14); $B_\\theta \\le \\max\\{R_3+1, C_3\\}$",
        PASSES, "tests/test_attention_passes.py::test_lemma4_error_within_bound_3_14"),
    row("icdl-lemma5", "ICDL Lemma 5 (backward recursion $\\hat s_i(j)$)",
        "$N$ layers of element-wise multiplication, error (3.18); $B_\\theta \\le 1$",
        PASSES, "tests/test_attention_passes.py::test_lemma5_backward_layers_are_the_recursion"),
)

CRITERIA: dict[str, tuple[Condition, ...]] = {
    "icdl-lemma2": all_of(("bounds_held", "==", 1), ("relu_error", "<", 1e-12)),
    "icdl-lemma3": all_of(HELD),
    "icdl-lemma4": all_of(HELD),
    "icdl-lemma5": all_of(("value", "<", 1e-14), ("shrinks_with_H", "==", 1)),
}
