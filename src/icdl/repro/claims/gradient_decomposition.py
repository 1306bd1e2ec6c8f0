"""The claims of chapter ``gradient_decomposition``: what it must reproduce, each criterion as data, and the
registrations, deviations and known failures of its claims (:mod:`icdl.repro.claims` assembles every
chapter's part)."""

from __future__ import annotations

from .base import GRADIENT, HELD, Claim, Condition, all_of, row

CLAIMS: tuple[Claim, ...] = (
    row("icdl-def1", "ICDL Def. 1 / Def. 10 (N-layer network)",
        "no biases, activation on every layer including the output; $w$ stacks rows $v_{j,k}$ (eq. 3.2)",
        GRADIENT, "tests/test_networks.py::test_flat_vector_round_trip_and_order"),
    row("icdl-def2", "ICDL Def. 2 parameter counts",
        "$D_1 = dK$, $D_j = (j-1)K^2 + dK$ ($2 \\le j \\le N-1$), $D_N = (N-2)K^2 + 2dK$",
        GRADIENT, "tests/test_networks.py::test_parameter_counts_def2"),
    row("icdl-lemma1", "ICDL Lemma 1",
        "$\\nabla L_n(w) = \\frac{1}{2n} \\sum_i [A_i(1); \\dots; A_i(N)]$ exactly (float64 round-off vs autograd)",
        GRADIENT, "tests/test_networks.py::test_lemma1_matches_autograd"),
    row("icdl-lemma15", "ICDL Lemma 15 ($d_x \\ne d_y$)",
        "the same decomposition holds with input size ≠ output size",
        GRADIENT, "tests/test_networks.py::test_lemma1_matches_autograd"),
)

CRITERIA: dict[str, tuple[Condition, ...]] = {
    "icdl-def1": all_of(HELD),
    "icdl-def2": all_of(HELD),
    "icdl-lemma1": all_of(("value", "<", 1e-12)),
    "icdl-lemma15": all_of(("value", "<", 1e-12)),
}
