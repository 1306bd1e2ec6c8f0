"""The errata page (``book/errata.md``): every slip we found in the three documents, with its evidence recomputed.

Each :class:`Erratum` says where in which document, what is printed, what we execute instead, and why we
believe it -- a number. The number comes either from a small computation in this module that sets the
printed form beside ours (``measure``: it returns an :class:`Evidence` whose ``holds`` says that the printed
form disagrees with the paper's own statement and ours agrees), or from the ledger record of the claim that
executes our reading (``claim``: its measured value and status). :func:`render` writes the entries as
MyST markdown, grouped by document, one block per entry (read on a phone as on a wide screen); ``make
report`` includes it in the page. ``tests/test_errata.py`` recomputes every measurement.

==================  ==============================================================================
:data:`ERRATA`      the entries, in the order of their documents
:func:`evidence`    an entry's evidence, as a sentence with its numbers
:func:`render`      the page's entries as MyST markdown (``python -m icdl.repro.errata OUT.md``)
==================  ==============================================================================
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

#: the documents, in the page's order, with the heading each gets
DOCUMENTS = {"ICDL": "ICDL (Wu et al., arXiv 2411.16549)",
             "REB": "REB (the authors' answers to the reviewers)",
             "LSA": "LSA (Hagiwara, arXiv 2607.15819)"}


@dataclass(frozen=True)
class Evidence:
    """What a measurement found: ``text`` (a sentence with its numbers) and whether it supports the entry
    (the printed form disagrees with what the paper states next to it, ours agrees)."""
    text: str
    holds: bool


@dataclass(frozen=True)
class Erratum:
    """One slip: ``id`` (the anchor ``erratum-<id>``), the ``document`` (a key of :data:`DOCUMENTS`), ``where``
    in it, what is ``printed``, what we ``executed`` instead (MyST, ``$…$`` math), the ``chapter`` that shows
    it and the ``test`` that fails if our reading is wrong, and the evidence: a ``measure``, a ``claim``, or, for
    a slip of notation, the ``basis`` in the paper's own definitions."""
    id: str
    document: str
    where: str
    printed: str
    executed: str
    chapter: str
    test: str
    measure: Callable[[], Evidence] | None = None
    claim: str = ""
    basis: str = ""  # for a slip of notation: the paper's own definitions that decide it (no number to compute)
    about: tuple[str, ...] = ()  # the claims the slip concerns, beyond ``claim`` (linked both ways)

    def claims(self) -> tuple[str, ...]:
        """Every claim the entry concerns: its evidence's ``claim`` and those it is ``about``."""
        return tuple(dict.fromkeys(((self.claim,) if self.claim else ()) + self.about))


# ---- measurements ----------------------------------------------------------------------------------------


@torch.no_grad()
def _def7_matrix_form() -> Evidence:
    """Def. 7 on a random prompt: the printed matrix form against the per-token (vector) form of the proofs."""
    from ..layers import ReLUAttention

    g = torch.Generator().manual_seed(0)
    layer = ReLUAttention(4, 1)
    with torch.no_grad():
        for W in (layer.Q, layer.K, layer.V):
            W.copy_(torch.randn(W.shape, generator=g, dtype=W.dtype))
    H = torch.randn(1, 4, 6, generator=g, dtype=torch.float64)
    n = H.shape[2] - 1
    Q, K, V = (W[0] @ H[0] for W in (layer.Q, layer.K, layer.V))
    vector = torch.stack([sum(torch.relu(Q[:, i] @ K[:, s]) * V[:, s] for s in range(n + 1))
                          for i in range(n + 1)], dim=1) / n
    matrix = (V @ torch.relu(Q.T @ K)) / n  # as printed: (VH) σ((QH)ᵀ(KH))
    ours = layer(H)[0] - H[0]
    rel = float((matrix - vector).norm() / vector.norm())
    err = float((ours - vector).abs().max())
    return Evidence(f"on a random prompt of 6 tokens the printed matrix form differs from the vector form by "
                    f"{rel:.0%} (relative); our layer equals the vector form to {err:.0e}", rel > 0.1 and err < 1e-12)


@torch.no_grad()
def _lemma2_value_rows() -> Evidence:
    """Lemma 2's first layer with exact ReLU units (r = ReLU): the value reading ``t_s`` (ours) against the
    value reading the constant 1 (as printed), on prompts of n = 6 examples."""
    from .. import relu_sums as rs
    from ..constructions.lemmas import ICGDLayout, build_forward_layers
    from ..networks import Architecture, forward, init_weights, project

    arch, n = Architecture(2, 3, 2, 1), 6
    layout = ICGDLayout(arch)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, n + 1, arch.d_x, generator=g, dtype=torch.float64)
    x = x / x.norm(dim=-1, keepdim=True).clamp(min=1.0)
    y = torch.rand(2, n, arch.d_y, generator=g, dtype=torch.float64)
    w = torch.stack([project(arch, init_weights(arch, scale=2.0, seed=b), 1.0) for b in range(2)])
    H = layout.prompt(x, y, w)
    relu = rs.ReluSum(torch.tensor([[1.0, 0.0]], dtype=torch.float64), torch.ones(1, dtype=torch.float64))
    ours = build_forward_layers(layout, relu)[0]
    printed = build_forward_layers(layout, relu)[0]
    printed.V[:, :, layout.one] = printed.V[:, :, layout.t]  # the value reads the constant 1 ...
    printed.V[:, :, layout.t] = 0.0                            # ... instead of the example indicator
    exact = torch.stack([forward(arch, w[b], x[b], "relu")[1] for b in range(2)]).transpose(1, 2)
    rows = layout.slot("p", 1)
    err = float((ours(H)[:, rows] - exact).abs().max())
    ratio = float((printed(H)[:, rows] / exact)[exact.abs() > 1e-6].mean())
    return Evidence(f"with exact ReLU units and n = 6 examples the printed value rows return {ratio:.4f} times "
                    f"the first layer's output, (n+1)/n = {(n + 1) / n:.4f}; ours returns it to {err:.0e}",
                    math.isclose(ratio, (n + 1) / n, rel_tol=1e-9) and err < 1e-12)


@torch.no_grad()
def _lemma_norms() -> Evidence:
    """The parameter norms of Lemmas 3 and 5, measured on the built layers of Theorem 1 (N = 3, K = 4, d = 2)."""
    from ..networks import Architecture
    from ..studies import icgd_accounting as accounting
    from ..studies import icgd_transformer as icgd

    N, K, d = 3, 4, 2
    arch = Architecture(N, K, d, d)
    task = icgd.make_task(arch, n=8, prompts=1, seed=0)
    model, sums, _ = icgd.build_model(task, 64, eta=1.0, steps=1, B_w=1.0)
    t = accounting.layer_table(model, sums, eta=1.0)
    l3 = float(t.loc[t["role"] == "Lemma 3 (r̂')", "norm"].iloc[0])
    printed3, ours3 = 1 + K * (N - 1) * sums.r_prime.C, 1 + ((N - 1) * K + d) * sums.r_prime.C
    l5 = t[t["kind"] == "multiplication"]
    worst5 = float(l5["norm"].max())
    heads5 = int(l5.loc[l5["norm"].idxmax(), "heads"])
    holds = l3 > printed3 * (1 + 1e-9) and math.isclose(l3, ours3, rel_tol=1e-12) and worst5 == 1 + heads5 > 1
    return Evidence(f"N = 3, K = 4, d = 2: the Lemma 3 layer's norm is {l3:.1f} against the printed bound "
                    f"{printed3:.1f} (ours, counting the output units: {ours3:.1f}); the widest Lemma 5 layer "
                    f"has {heads5} heads and norm {worst5:.0f}, not 1", holds)


def _tanh_start_at_zero() -> Evidence:
    """The in-context gradient at w = 0 for a tanh network and for a sigmoid one."""
    from ..networks import Architecture, explicit_gradient

    arch = Architecture(3, 4, 2, 1)
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, 2, generator=g, dtype=torch.float64)
    y = torch.randn(16, 1, generator=g, dtype=torch.float64)
    w = torch.zeros(arch.size, dtype=torch.float64)
    tanh = float(explicit_gradient(arch, w, x, y, "tanh").abs().max())
    sigmoid = float(explicit_gradient(arch, w, x, y, "sigmoid").abs().max())
    return Evidence(f"on 16 random examples the largest gradient entry at $w = 0$ is {tanh:.1g} for tanh "
                    f"(GD never moves) and {sigmoid:.2f} for sigmoid", tanh == 0.0 and sigmoid > 1e-3)


# ---- LSA (Hagiwara): the printed products against the constructions' own intermediate results ----------


@torch.no_grad()
def _lsa_prompts(N: int, prompts: int, seed: int = 0):
    from ..lsa.model import sample_data

    return sample_data((1, prompts), N, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


@torch.no_grad()
def _lsa_eq34_row() -> Evidence:
    """Eq. 34's fourth entry against the LayerNorm output that the built TF(4, 2, 2) computes (N = 50, R = 10)."""
    from ..lsa.constructions import construction_tf422

    N, R = 50, 10.0
    d = _lsa_prompts(N, 1)
    _, Qs, _ = construction_tf422(N, R)(d.P, keep=True)
    ln4 = (Qs[1] - Qs[0])[0, 0, :, 3]  # LayerNorm of layer 1's head sum, entry 4, in every token
    x, y = d.P[0, 0, :, 1], d.P[0, 0, :, 2]
    printed = -math.sqrt(2) + (x + y) / (R * N)  # eq. 34 as printed: it changes from token to token
    spread, printed_spread = float(ln4.max() - ln4.min()), float(printed.max() - printed.min())
    return Evidence(f"N = 50, R = 10: the built layer's LayerNorm output, entry 4, is the same in every token "
                    f"(spread {spread:.1g}), as eq. 31's token-independent row implies; the printed entry would "
                    f"vary across the tokens by {printed_spread:.1e}", spread < 1e-12 and printed_spread > 1e-3)


def _lsa_gd_model(N: int, eta: float, a: float, a2: float | None = None):
    from ..lsa.constructions import gd_two_steps_tf432

    m = gd_two_steps_tf432(N, eta, a)
    if a2 is not None:
        with torch.no_grad():
            m.W_in[0, 2, 1] = a2  # α₂, the x weight of embedding 3 (eq. 68)
    return m


@torch.no_grad()
def _lsa_products() -> dict[str, float]:
    """Eqs. 83 and 93 on one prompt of App. B's TF(4, 3, 2) (N = 400, η = 0.5/N, a = 0.3): the printed inner
    products, the ones that eqs. 85–88 and 95–98 read, and the N ξ that both should approximate."""
    N, eta, a = 400, 0.5 / 400, 0.3
    d = _lsa_prompts(N, 1)
    _, Qs, _ = _lsa_gd_model(N, eta, a)(d.P, keep=True)
    Q2, Q3 = Qs[1][0, 0], Qs[2][0, 0]
    a1, a2, b2, a3, b3 = math.sqrt(N * eta), a, -1.0, -2 * a, 2.0
    V, C = float(d.V[0, 0]), float(d.C[0, 0])
    xi21 = a1 * a2 * V + a1 * b2 * C
    xi31 = a1 * (xi21 * a1 + a3) * V + a1 * b3 * C
    return {"p83": float(Q2[:, 0] @ Q2[:, 1]), "o83": float(Q2[:, 1] @ Q2[:, 2]), "t83": N * xi21,
            "p93": float(Q3[4, 1] * Q3[4, 3]), "o93": float(Q3[:, 1] @ Q3[:, 3]), "t93": N * xi31}


def _near(value: float, target: float) -> bool:
    return abs(value - target) <= 0.1 * abs(target)  # the paper's ≃ drops the query token's O(1) term


def _lsa_eq83() -> Evidence:
    v = _lsa_products()
    return Evidence(f"one prompt of N = 400: the printed product gives {v['p83']:.3f}, the product of columns 2 and 3 "
                    f"{v['o83']:.2f}, where $N\\xi_{{2,1}} = {v['t83']:.2f}$",
                    _near(v["o83"], v["t83"]) and not _near(v["p83"], v["t83"]))


def _lsa_eq93() -> Evidence:
    v = _lsa_products()
    return Evidence(f"one prompt of N = 400: the printed product (at token 5) gives {v['p93']:.3f}, the product of "
                    f"the columns {v['o93']:.2f}, where $N\\xi_{{3,1}} = {v['t93']:.2f}$",
                    _near(v["o93"], v["t93"]) and not _near(v["p93"], v["t93"]))


@torch.no_grad()
def _lsa_eq107_sign() -> Evidence:
    """Eq. 107's second line: TF(4, 3, 2) with α₂ = a (eqs. 106, 108) and with α₂ = −a (as printed) against the
    closed form of two GD steps (eq. 67), on 300 prompts of N = 1000 examples."""
    from ..lsa.constructions import gd_two_steps_closed_form

    N, eta, a = 1000, 0.5 / 1000, 0.3
    d = _lsa_prompts(N, 300)
    target = gd_two_steps_closed_form(d, N, eta, a)
    ours = float((_lsa_gd_model(N, eta, a)(d.P) - target).abs().mean())
    printed = float((_lsa_gd_model(N, eta, a, a2=-a)(d.P) - target).abs().mean())
    return Evidence(f"300 prompts of N = 1000: mean |TF − eq. 67| is {ours:.4f} with $\\alpha_2 = a$ and "
                    f"{printed:.3f} with $\\alpha_2 = -a$", printed > 100 * ours)


def _reb_baseline_inputs() -> Evidence:
    """REB's answer on the baselines' inputs: the same targets' nonlinear share at the two input distributions
    (measured beside the task, :func:`icdl.gpt_icl.task_content.baseline_inputs_evidence`)."""
    from ..gpt_icl.task_content import baseline_inputs_evidence

    return Evidence(*baseline_inputs_evidence())


# ---- the entries -----------------------------------------------------------------------------------------

ERRATA: tuple[Erratum, ...] = (
    Erratum("icdl-def7", "ICDL", "Def. 7, the matrix form of ReLU attention",
            r"$(VH)\,\sigma\big((QH)^\top(KH)\big)$: token $i$ would sum $\sigma(\langle Qh_s, Kh_i\rangle)$ "
            r"over $s$, query and key swapped",
            r"the vector form every proof uses: token $i$ queries all keys, $\sigma(\langle Qh_i, Kh_s\rangle)$",
            "attention_passes", "tests/test_linear_gd.py::test_relu_attention_is_def7_vector_form",
            measure=_def7_matrix_form, about=("icdl-icgd-one-step",)),
    Erratum("icdl-lemma2-values", "ICDL", "Lemmas 2–3, the value rows of the heads",
            r"the value reads the constant 1 of every token; with Def. 7's $1/n$ over $n+1$ tokens this "
            r"delivers $(n+1)/n$ times the intended value",
            r"the value reads the example indicator $t_s$, so exactly the $n$ examples contribute",
            "attention_passes", "tests/test_attention_passes.py::test_lemma2_exact_for_relu",
            measure=_lemma2_value_rows, about=("icdl-lemma2", "icdl-lemma3")),
    Erratum("icdl-lemma3-norm", "ICDL", "Lemmas 3 and 5, the parameter norms",
            r"Lemma 3: $B_\theta \le 1 + K(N-1)C_2$; Lemma 5: $B_\theta \le 1$",
            r"Lemma 3's layer writes $r'$ for all $(N-1)K + d$ units, output units included: "
            r"$1 + ((N-1)K + d)\,C_2$; eq. B.1 sums the value norms over heads, and each multiplication head "
            r"selects one weight (norm 1), so a Lemma 5 layer with $M$ heads has norm $1 + M$",
            "icgd_transformer", "tests/test_icgd_transformer.py::test_parameter_norms_against_the_lemmas",
            measure=_lemma_norms, about=("icdl-lemma3", "icdl-lemma5")),
    Erratum("icdl-cor1.1", "ICDL", "Corollary 1.1",
            r"$\lVert\hat w^{(l)} - w_{GD}^{(l)}\rVert \le L_f^{-1}(1 + nL_f)^l\epsilon$",
            r"the induction of Lemma 14 gives $L_f^{-1}\big((1 + \eta L_f)^l - 1\big)\epsilon$: the number of "
            r"examples $n$ stands where the step size $\eta$ belongs (the printed form is still a bound when "
            r"$n \ge \eta$, a much weaker one)",
            "icgd_transformer", "tests/test_icgd_transformer.py::test_corollary_forms", claim="icdl-cor1.1"),
    Erratum("icdl-problem1-start", "ICDL", r"Problem 1 with $\hat w^{(0)} = 0$ and an odd activation",
            r"in-context GD starts from $w = 0$",
            r"for tanh, $w = 0$ is a stationary point of $L_n$ (every gradient term vanishes), so GD from 0 never "
            r"moves; the chapters start sigmoid networks at 0 and estimate $L_f$ at random points too",
            "icgd_transformer", "tests/test_errata.py::test_every_measured_erratum_holds",
            measure=_tanh_start_at_zero),
    Erratum("icdl-lemma19", "ICDL", "App. G, Lemma 19 (diffusion score)",
            r"Theorem 1 applied to an $N$-layer ReLU network",
            r"Theorem 1 needs $r$ and $r'$ as sums of ReLUs; a ReLU network's $r'$ is a step, which no continuous "
            r"sum approximates uniformly, so the reduction as stated falls outside Theorem 1; we use a sigmoid "
            r"network, map the targets into $(0, 1)$ (Def. 1 applies $r$ at the output) and start GD from a "
            r"random point (from 0 every hidden unit stays identical)",
            "diffusion_score", "tests/test_diffusion.py::test_transformer_learns_the_score_in_context",
            claim="icdl-lemma19"),
    Erratum("reb-flops", "REB", "Cost comparison (forward FLOPs)",
            r"22 M parameters × 76 tokens × 2 = 3.34 GFLOPs for a prompt of 75 examples",
            r"the paper's 12-layer, 8-head, width-256 model has 9.5 M parameters, and 75 examples and a query are "
            r"152 tokens ($x$ and $y$ are separate tokens); the two factors of about two cancel, so the total "
            r"agrees",
            "computation", "tests/test_gpt_cost.py::test_cost_counts_match_the_formulas", claim="reb-flops"),
    Erratum("reb-baseline-inputs", "REB", "Answer to reviewer R2xK: the inputs of the network baselines",
            r"the $N$-layer network baselines of Figs. 2–4 were trained and tested on inputs $x \sim N(0, I)$, "
            r"drawn beside transformers whose prompts have $x \sim N(-2, I)$ (the figures do not say so)",
            r"every baseline on the transformers' own prompts ($x \sim N(-2, I)$ and the test mixtures), the "
            r"same prompts for both; the two input distributions' tasks measured side by side",
            "gpt_icl", "tests/test_gpt_tasks.py::test_variance_split_on_families_whose_answer_is_known",
            measure=_reb_baseline_inputs, about=("gpt-task-n01", "icdl-obj1")),
    Erratum("lsa-eq34", "LSA", "Sec. 3.2, eq. 34 (the first LayerNorm's output, entry 4)",
            r"$-\sqrt2 + \frac{1}{RN}x_{m,n} + \frac{1}{RN}y_{m,n}$, which changes from token to token",
            r"$-\sqrt2 + \frac{1}{RN}\bar x_m + \frac{1}{RN}\bar y_m$: the row it normalises (eq. 31) is the same "
            r"in every token, and entries 2 and 3 of eq. 34 already carry the means",
            "lsa_construction", "tests/test_errata.py::test_every_measured_erratum_holds", measure=_lsa_eq34_row),
    Erratum("lsa-eq83", "LSA", "App. B.3, eq. 83 (the product behind layer 2's head)",
            r"$\mathbf Q_2[:,1]^\top\mathbf Q_2[:,2] = \sum_{n}\alpha_1\Delta x_n\{\alpha_2\Delta x_n + "
            r"\beta_2\Delta y_n\} \simeq N\xi_{2,1}$: columns 1 and 2",
            r"$\mathbf Q_2[:,2]^\top\mathbf Q_2[:,3]$, the product whose summand is written and the one the head of "
            r"eqs. 85–88 reads",
            "lsa_construction", "tests/test_lsa.py::test_appendix_b_two_gd_steps", measure=_lsa_eq83),
    Erratum("lsa-eq93", "LSA", "App. B.4, eq. 93 (the product behind layer 3's head)",
            r"$\mathbf Q_3[n,2]^\top\mathbf Q_3[n,4] = \sum_n \cdots \simeq N\xi_{3,1}$: a row index $n$ "
            r"where the sum runs over $n$",
            r"$\mathbf Q_3[:,2]^\top\mathbf Q_3[:,4]$, the product of two columns, as in eq. 83 and sec. 2.1's "
            r"notation",
            "lsa_construction", "tests/test_lsa.py::test_appendix_b_two_gd_steps", measure=_lsa_eq93),
    Erratum("lsa-eq107-sign", "LSA", "App. B.5, eq. 107, second line (a sign)",
            r"$-\alpha_2 = a$ (as our text extraction of the paper reads; the typeset PDF was not available "
            r"to us)",
            r"$\alpha_2 = a$, as eq. 106's constant term and the solution in eq. 108 require; with the printed "
            r"sign the system of eq. 107 has no solution for $a \ne 0$",
            "lsa_construction", "tests/test_lsa.py::test_appendix_b_two_gd_steps", measure=_lsa_eq107_sign),
    Erratum("lsa-notation", "LSA", "Eqs. 29, 60 and 69 (three slips of notation)",
            r"eq. 29: $\mathbf W_{1,2,1} = \mathbf W_{1,2,2} = \mathbf W_{1,2,3} = \mathbf O_{d,d}$; eq. 60: "
            r"$f_{\theta_m}(u_m) := \bar y_m + \theta_m(u - \bar x_m)$; at eq. 69: \"the embedding whose "
            r"$i$-th row is $\mathbf Q_1[n,:]^\top$\"",
            r"$\mathbf O_{D,D}$ (the weights are $D \times D$, $d$ is LayerNorm's summation index); "
            r"$\theta_m(u_m - \bar x_m)$; the $n$-th row",
            "lsa_construction", "tests/test_lsa.py::test_appendix_b_two_gd_steps",
            basis="the paper's own definitions: sec. 2.4 makes every weight $D \\times D$ and eqs. 89 and 99 write "
                  "$\\mathbf O_{4,4}$; eqs. 8 and 67 evaluate at $u_m$; the display at eq. 69 is indexed by $n$"),
    Erratum("lsa-sec4-notation", "LSA", "Secs. 4.3 and 4.5 (two slips of notation in the experiments)",
            r"sec. 4.3: $\mathbf W_{\rm in}$ \"is a 3 × 4 matrix\"; sec. 4.5: the pair $(x_n, y_{50})$",
            r"$\mathbf W_{\rm in}$ is $4 \times 3$ ($D \times 3$); the pair $(x_{50}, y_{50})$",
            "lsa_training", "tests/test_lsa.py::test_appendix_b_two_gd_steps",
            basis="the paper's own definitions: sec. 2.5 and eq. 18 map the 3 entries of a prompt row to $D = 4$ "
                  "embeddings; sec. 4.5 speaks of the 50th example"),
    Erratum("lsa-appendix-b-n", "LSA", "App. B, eqs. 107–108 (two GD steps in TF(4, 3, 2))",
            r"the coefficient matching and its solution are written with a lower-case $n$: "
            r"$\alpha_1^2\alpha_3 = -2n\eta a$, …, $(\alpha_1, \alpha_2, \beta_2, \alpha_3, \beta_3) = "
            r"(\sqrt{n\eta}, a, -1, -2a, 2)$, while $n$ is the example index everywhere else and the GD update "
            r"(eq. 63) and $\theta(2)$ (eq. 66) carry $N$, the number of examples",
            r"$\alpha_1 = \sqrt{N\eta}$ with $N$ the number of examples; with it the constructed TF(4, 3, 2) equals "
            r"the closed form of eq. 67 up to the $O(1/N)$ query term, and eq. 67 equals two explicit GD steps to "
            r"rounding",
            "lsa_construction", "tests/test_lsa.py::test_appendix_b_two_gd_steps", claim="lsa-appendix-b"),
    Erratum("lsa-sec3-exact", "LSA", "Sec. 3, eqs. 18–56 (TF(4, 2, 2))",
            r"exact for large $R$ and $N$",
            r"the construction as we read it reaches least squares with an error falling like $1/N$ (each $\simeq$ "
            r"in eqs. 21–23, 38–39 and 83 drops the query token's term, which is where the $1/N$ comes from); in "
            r"float32 "
            r"it breaks once $RN$ is large (the error grows like $RN\,\varepsilon_{32}$), a limit the paper's "
            r"\"take $R$ large\" does not mention",
            "lsa_construction", "tests/test_lsa.py::test_construction_float32_gap_grows_like_rn",
            claim="lsa-construction"),
)


def _claim_rows() -> dict[str, dict]:
    from .ledger import claim_frame

    return {r["id"]: r for r in claim_frame().to_dict("records")}


def evidence(entry: Erratum, claims: dict[str, dict] | None = None) -> str:
    """The entry's evidence as one sentence: the measurement, or the ledger's value and status for its claim."""
    if entry.measure is not None:
        return entry.measure().text
    if entry.basis:
        return entry.basis
    row = (claims if claims is not None else _claim_rows()).get(entry.claim)
    link = f'<a href="report.html#claim-{entry.claim}"><code>{entry.claim}</code></a>'
    if row is None or row["status"] == "not yet covered":
        return f"claim {link} has no record yet"
    return f"{row['ours']} (claim {link}: {row['status']})"


def render() -> str:
    """The entries as MyST markdown: a section per document, a block per entry with its anchor (the guarding
    test's id may wrap after its separators, so a phone does not scroll sideways)."""
    from .ledger import breakable

    claims = _claim_rows()
    lines = []
    for doc, title in DOCUMENTS.items():
        entries = [e for e in ERRATA if e.document == doc]
        if not entries:
            continue
        lines += [f"## {title}", ""]
        for e in entries:
            chapter = f"{{doc}}`../notebooks/{e.chapter}`" if e.chapter else "—"
            about = ", ".join(f'<a href="report.html#claim-{c}">{c}</a>' for c in e.claims())
            lines += [f"(erratum-{e.id})=", f"### {e.where}", "",
                      "As printed", f": {e.printed}", "",
                      "As executed", f": {e.executed}", "",
                      "Evidence", f": {evidence(e, claims)}. Shown in {chapter}; guarded by "
                                  f"<code>{breakable(e.test)}</code>.", ""]
            if about:
                lines += ["Claims it concerns", f": {about}", ""]
    return "\n".join(lines) + "\n"


def render_summary() -> str:
    """One line for the results at a glance (intro and report): how many entries, per document, linked."""
    per = ", ".join(f"{sum(e.document == k for e in ERRATA)} in {k}" for k in DOCUMENTS
                    if any(e.document == k for e in ERRATA))
    return (f'**Errata:** <a href="errata.html">{len(ERRATA)} entries</a> on slips in the documents ({per}), '
            "each with what we execute instead and its evidence.\n")


def report_links() -> dict[str, tuple[str, str]]:
    """Per claim that an entry is about: the entry's anchor as Sphinx writes it (``icdl-cor1.1`` ->
    ``erratum-icdl-cor1-1``) and its title, for the report's link (:func:`icdl.repro.ledger.render_report`)."""
    from docutils.nodes import make_id

    out: dict[str, tuple[str, str]] = {}
    for e in ERRATA:  # a claim two entries concern links to the first (in the page's order)
        for c in e.claims():
            out.setdefault(c, (make_id(f"erratum-{e.id}"), e.where))
    return out


def parser():
    """The command's arguments (every flag in ``tests/test_command_flags.py``'s table): one or two file names,
    never a flag."""
    from .cli import Parser

    p = Parser(prog="python -m icdl.repro.errata", description="The errata's entries and their summary line.")
    p.add_argument("out", metavar="OUT.md", help="where to write the errata's entries")
    p.add_argument("summary", metavar="SUMMARY.md", nargs="?", default=None,
                   help="where to write the line for the results at a glance (optional)")
    return p


def main(argv: list[str] | None = None) -> int:
    """``python -m icdl.repro.errata OUT.md [SUMMARY.md]``: write the errata's entries and, if named, the line
    for the results at a glance (``make report`` does both)."""
    from .profiles import dry_run
    from .results import atomic_write_text

    args = parser().parse_args(argv)
    if dry_run(f"write the errata's entries to {args.out}"
               + (f" and their summary line to {args.summary}" if args.summary else "")):
        return 0
    torch.set_num_threads(1)
    atomic_write_text(Path(args.out), render())
    if args.summary:
        atomic_write_text(Path(args.summary), render_summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
