"""The claims of chapter ``lsa_construction``: what it must reproduce, each criterion as data, and the
registrations, deviations and known failures of its claims (:mod:`icdl.repro.claims` assembles every
chapter's part)."""

from __future__ import annotations

from .base import HELD, LSA_CONSTRUCTION, Claim, Condition, all_of, row

CLAIMS: tuple[Claim, ...] = (
    # ---- LSA (Hagiwara) -----------------------------------------------------------------
    row("lsa-construction", "LSA sec. 3 (TF(4,2,2) construction)", "output → ȳ + (C/V)(u − x̄) as R and N grow",
        LSA_CONSTRUCTION, "tests/test_lsa.py::test_construction_tends_to_least_squares"),
    row("lsa-appendix-a", "LSA Appendix A", "two different inputs with the same LSA output",
        LSA_CONSTRUCTION, "tests/test_lsa.py::test_appendix_a_same_output"),
    row("lsa-appendix-b", "LSA Appendix B", "TF(4,3,2) without LayerNorm does two GD steps (eqs. 66–67)",
        LSA_CONSTRUCTION, "tests/test_lsa.py::test_appendix_b_two_gd_steps"),
)

CRITERIA: dict[str, tuple[Condition, ...]] = {
    "lsa-construction": all_of(("value", ">=", -1.2), ("value", "<=", -0.8), ("error_at_1000", "<", 0.005)),
    "lsa-appendix-a": all_of(HELD),
    "lsa-appendix-b": all_of(("value", "<", 2e-3), ("closed_form_vs_gd", "<", 1e-12)),
}
