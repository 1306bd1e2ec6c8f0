"""The claims of chapter ``icgd_linear``: what it must reproduce, each criterion as data, and the
registrations, deviations and known failures of its claims (:mod:`icdl.repro.claims` assembles every
chapter's part)."""

from __future__ import annotations

from .base import HELD, ICGD_LINEAR, Claim, Condition, all_of, row

CLAIMS: tuple[Claim, ...] = (
    # ---- ICDL theory -------------------------------------------------------------------
    row("icdl-prompt", "ICDL eq. 2.1 (prompt H)",
        "$H \\in \\mathbb{R}^{D\\times(n+1)}$, columns $[x_i; y_i; q_i]$, $y_{n+1} = 0$, $q_i = [0; 1; t_i]$",
        ICGD_LINEAR, "tests/test_prompts.py::test_prompt_layout_matches_eq_2_1"),
    row("icdl-icgd-one-step", "ICDL Problem 1 / Def. 7 (one ICGD step by ReLU attention)",
        "a ReLU-attention layer with 1/n normalisation can carry out a gradient step in context",
        ICGD_LINEAR, "tests/test_linear_gd.py::test_one_layer_is_one_gd_step"),
    row("icdl-icgd-L-steps", "ICDL Problem 1 (L stacked steps follow GD)",
        "$L$ blocks leave $\\hat w^{(l)} = w_{\\mathrm{GD}}^{(l)}$ in every token ($\\epsilon = 0$ for linear "
        "regression)",
        ICGD_LINEAR, "tests/test_linear_gd.py::test_stacked_layers_follow_gd"),
)

CRITERIA: dict[str, tuple[Condition, ...]] = {
    "icdl-prompt": all_of(HELD),
    "icdl-icgd-one-step": all_of(("value", "<", 1e-13)),
    "icdl-icgd-L-steps": all_of(("value", "<", 1e-13), ("token_spread", "<", 1e-13)),
}
