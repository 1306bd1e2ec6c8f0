"""The claims of chapter ``icgd_transformer``: what it must reproduce, each criterion as data, and the
registrations, deviations and known failures of its claims (:mod:`icdl.repro.claims` assembles every
chapter's part)."""

from __future__ import annotations

from .base import HELD, THEOREM1, Claim, Condition, all_of, row

CLAIMS: tuple[Claim, ...] = (
    row("icdl-lemma6", "ICDL Lemma 6",
        "$|\\hat s - s| \\le E_s^r \\epsilon_r + E_s^{r\'} \\epsilon_{r\'} + E_s^l \\epsilon_l$",
        THEOREM1, "tests/test_icgd_transformer.py::test_lemma6_bound_holds_and_is_not_vacuous"),
    row("icdl-thm1", "ICDL Theorem 1",
        "$(2N+4)L$ layers do $L$ steps of ICGD; heads $\\tilde O(\\epsilon^{-2})$, width $O(NK^2) + D_w$, norms "
        "$O(\\eta) + C_w + 1$",
        THEOREM1, "tests/test_icgd_transformer.py::test_transformer_follows_projected_gd_within_corollary_1_1"),
    row("icdl-cor1.1", "ICDL Corollary 1.1",
        "$\\lVert \\hat w^{l} - w_{\\mathrm{GD}}^{l} \\rVert \\le L_f^{-1} (1 + n L_f)^l \\epsilon$",
        THEOREM1, "tests/test_icgd_transformer.py::test_transformer_follows_projected_gd_within_corollary_1_1"),
    row("icdl-lemma14", "ICDL Lemma 14", "the loss along $\\hat w^{(l)}$ decreases as along GD",
        THEOREM1, "tests/test_icgd_transformer.py::test_loss_decreases_along_the_transformer_path_lemma_14"),
    row("reb-width", "REB width O(NK² + 3NK + 3K)", "hidden width of the construction",
        THEOREM1, "tests/test_icgd_transformer.py::test_reb_width_formula"),
    row("reb-sigmoid-constants", "REB, answer to a reviewer: the constants for a sigmoid network of width 32",
        "$K = 32$, $L_f = N (w/4)^{2(N-1)}$, width $O(1024 N)$",
        THEOREM1, "tests/test_icgd_transformer.py::test_reb_sigmoid_example_width"),
    row("reb-layer-counts", "REB, answer to a reviewer: layer counts against Wang et al. (2024)",
        "Wang et al. (ICML 2024) need O(N²L) layers, (2N+4)L here",
        THEOREM1, "tests/test_icgd_transformer.py::test_transformer_follows_projected_gd_within_corollary_1_1"),
    row("reb-complexity", "REB cost (theory)", "ICL O(n L N³ K⁵ / ε²) vs training O(n L N K²)",
        THEOREM1, "tests/test_icgd_transformer.py::test_flop_comparison_icl_costs_more_than_gd"),
)

CRITERIA: dict[str, tuple[Condition, ...]] = {
    "icdl-lemma6": all_of(HELD),
    "icdl-thm1": all_of(("bounds_held", "==", 1), ("heads_slope", ">=", -2)),
    "icdl-cor1.1": all_of(HELD),
    "icdl-lemma14": all_of(HELD),
    "reb-width": all_of(("value", "<=", 0)),
    "reb-sigmoid-constants": all_of(HELD),
    "reb-layer-counts": all_of(("value", "==", 0)),
    "reb-complexity": all_of(("value", ">", 100), ("flops_slope", ">=", -2)),
}
