"""The claims of chapter ``relu_sums``: what it must reproduce, each criterion as data, and the
registrations, deviations and known failures of its claims (:mod:`icdl.repro.claims` assembles every
chapter's part)."""

from __future__ import annotations

from .base import RELU_SUMS, Claim, Condition, all_of, row

CLAIMS: tuple[Claim, ...] = (
    row("icdl-lemma7", "ICDL Def. 4 / Lemma 7 (sum of ReLUs)",
        "$H \\le C(k) C_l^2 \\log(1 + C_l/\\epsilon)/\\epsilon^2$, $C \\le C(k) C_l$ for $C^s$ targets",
        RELU_SUMS, "tests/test_relu_sums.py::test_def4_constraints_and_rate"),
    row("reb-sigmoid-sum", "REB, answer to a reviewer: fit the sum-of-ReLUs coefficients for sigmoid at ε = 1e-5",
        "coefficients found by a fitting problem for sigmoid at ε = 1e-5",
        RELU_SUMS, "tests/test_relu_sums.py::test_sigmoid_reaches_1e_5"),
    row("reb-multiplication-sum",
        "REB, answer to a reviewer: the element-wise multiplication layer replaced by sums of ReLUs",
        "element-wise multiplication can be replaced by sums of ReLUs at a larger size",
        RELU_SUMS, "tests/test_relu_sums.py::test_product_by_relus"),
)

CRITERIA: dict[str, tuple[Condition, ...]] = {
    "icdl-lemma7": all_of(("value", "<=", -0.5), ("c_change", "<", 0.05)),
    "reb-sigmoid-sum": all_of(("value", "<=", 1e-5)),
    "reb-multiplication-sum": all_of(("value", "<=", 1e-3)),
}
