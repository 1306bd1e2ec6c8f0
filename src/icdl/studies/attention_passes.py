"""The numbers behind chapter ``attention_passes``: the layers of ICDL Lemmas 2–5
(:mod:`icdl.constructions.lemmas`) run on random prompts, their errors against exact forward and
backward passes (:mod:`icdl.networks`), beside the bounds of :mod:`icdl.constructions.bounds`."""

from __future__ import annotations

import math

import pandas as pd
import torch

from .. import relu_sums as rs
from ..constructions.bounds import lemma2_bound, lemma3_bound, lemma4_bound
from ..constructions.lemmas import (
    ICGDLayout,
    build_backward_layers,
    build_derivative_layer,
    build_forward_layers,
    build_loss_derivative_mlp,
)
from ..networks import Architecture, get_activation, get_loss, gradient_terms, init_weights, project, unflatten
from ..repro.profiles import ProfileSet

PROFILES = ProfileSet(
    "attention_passes",
    profiles={"quick": {"K": 3, "N_max": 5, "H_max": 256, "seed": 0},
              "reference": {"K": 4, "N_max": 6, "H_max": 1024, "seed": 0}},
    ranges={"K": (1, 4), "N_max": (2, 8), "H_max": (16, 4096), "seed": (0, 2**31 - 1)},
    meanings={"K": "hidden width K of the network", "N_max": "largest network depth N checked",
              "H_max": "largest number H of ReLUs in a sum", "seed": "random seed"},
)


def _random_prompts(arch, *, B_v: float, prompts: int, n: int, seed: int):
    """Random prompts for the lemmas' checks: ‖x‖ ≤ 1, rows of w projected to ‖v_{j,k}‖ ≤ B_v."""

    g = torch.Generator().manual_seed(seed)
    x = torch.randn(prompts, n + 1, arch.d_x, generator=g, dtype=torch.float64)
    x = x / x.norm(dim=-1, keepdim=True).clamp(min=1.0)
    y = torch.rand(prompts, n, arch.d_y, generator=g, dtype=torch.float64)
    w = torch.stack([project(arch, init_weights(arch, scale=2.0, seed=seed + b), B_v) for b in range(prompts)])
    return x, y, w


def forward_pass_errors(arch, r_sum, activation: str, r_prime_sum=None, u_sum=None, loss: str = "squared", *,
                        B_v: float = 1.0, prompts: int = 3, n: int = 6, seed: int = 0) -> dict[str, list[float]]:
    """Run Lemma 2's layers (then Lemma 3's layer given ``r_prime_sum``, and Lemma 4's MLP given ``u_sum``)
    on random prompts; return the largest ``‖p̂_i(j) − p_i(j)‖₂`` for j = 1..N (key ``"p"``),
    ``max_k |r̂'_i(j)[k] − r'_i(j)[k]|`` for j = 0..N−1 (``"r'"``) and ``max_k |g_i[k] − u_i[k]|`` over the
    examples (``"g"``), against :func:`icdl.networks.gradient_terms`."""

    x, y, w = _random_prompts(arch, B_v=B_v, prompts=prompts, n=n, seed=seed)
    layout = ICGDLayout(arch)
    H = layout.prompt(x, y, w)
    with torch.no_grad():
        for layer in build_forward_layers(layout, r_sum):
            H = layer(H)
        if r_prime_sum is not None:
            H = build_derivative_layer(layout, r_prime_sum)(H)
        if u_sum is not None:
            H = build_loss_derivative_mlp(layout, u_sum)(H)
        if r_prime_sum is not None and u_sum is not None:
            for layer in build_backward_layers(layout):
                H = layer(H)
    y_full = torch.cat([y, torch.zeros(prompts, 1, arch.d_y, dtype=y.dtype)], 1)  # the query's y is 0
    exact = [gradient_terms(arch, w[b], x[b], y_full[b], activation, loss) for b in range(prompts)]
    out = {"p": [float(max((H[b, layout.slot("p", j), :].T - exact[b].p[j]).norm(dim=-1).max()
                           for b in range(prompts))) for j in range(1, arch.N + 1)]}
    if r_prime_sum is not None:
        out["r'"] = [float(max((H[b, layout.slot("r'", j), :].T - exact[b].r_prime[j]).abs().max()
                               for b in range(prompts))) for j in range(arch.N)]
    if u_sum is not None:  # examples only: g of the query is never used
        out["g"] = [float(max((H[b, layout.slot("g"), :n].T - exact[b].u[:n]).abs().max() for b in range(prompts)))]
    if r_prime_sum is not None and u_sum is not None:
        out["s"] = [float(max((H[b, layout.slot("s", j), :n].T - exact[b].s[j][:n]).abs().max()
                              for b in range(prompts))) for j in range(1, arch.N + 1)]
        # the recursion (3.6) applied to the written r̂' and g: what the EWML layers must produce exactly
        rec_dev = 0.0
        for b in range(prompts):
            Vs = unflatten(arch, w[b])
            rp = [H[b, layout.slot("r'", j), :n].T for j in range(arch.N)]
            s_rec = rp[arch.N - 1] * H[b, layout.slot("g"), :n].T
            rec_dev = max(rec_dev, float((H[b, layout.slot("s", arch.N), :n].T - s_rec).abs().max()))
            for j in range(arch.N - 1, 0, -1):
                s_rec = rp[j - 1] * (s_rec @ Vs[j])
                rec_dev = max(rec_dev, float((H[b, layout.slot("s", j), :n].T - s_rec).abs().max()))
        out["s_recursion_dev"] = [rec_dev]
    return out


def lemma2_errors(arch, r_sum, activation: str, **kw) -> list[float]:
    """``max_i ‖p̂_i(j) − p_i(j)‖₂`` for j = 1..N (Lemma 2's layers on random prompts)."""
    return forward_pass_errors(arch, r_sum, activation, **kw)["p"]


def forward_pass_study(Ns=(2, 3, 4, 5), K: int = 3, d: int = 2, Hs=(16, 32, 64, 128, 256), R: float = 4.0,
                       seed: int = 0, loss: str = "logcosh") -> pd.DataFrame:
    """Measured error and bound per layer j for sigmoid networks of depth N and sums of H ReLUs:
    Lemma 2 (p̂(j), bound 3.8; ``lemma == 2``), Lemma 3 (r̂'(j), bound 3.12; ``lemma == 3``) and
    Lemma 4 (g ≈ u for ``loss``, bound 3.14; ``lemma == 4``) and Lemma 5 (ŝ(j), ``lemma == 5``: the error
    against the true s(j), and in ``recursion_dev`` how far ŝ is from the recursion (3.6) applied to the
    r̂' and g the earlier layers wrote -- round-off, since the EWML layers only select and multiply)."""


    rows = []
    act = get_activation("sigmoid")
    L_r = act.lipschitz
    for N in Ns:
        arch = Architecture(N, K, d, d)
        for H in Hs:
            r_sum = rs.fit("sigmoid", R, H)
            eps_r = rs.sup_error(r_sum, torch.sigmoid, R)
            rp_sum = rs.fit("sigmoid'", R, H)
            eps_rp = rs.sup_error(rp_sum, rs.TARGETS["sigmoid'"], R)
            u_sum = rs.fit(rs.U_TARGETS[loss], R, H)
            eps_l = rs.sup_error(u_sum, rs.TARGETS[rs.U_TARGETS[loss]], R)
            errs = forward_pass_errors(arch, r_sum, "sigmoid", rp_sum, u_sum, loss, seed=seed)
            b3 = lemma3_bound(arch, eps_r, eps_rp, L_r, act.lipschitz_prime, 1.0)
            b4 = lemma4_bound(arch, eps_r, eps_l, L_r, get_loss(loss).lipschitz_t, 1.0)
            rows.append({"lemma": 4, "N": N, "H": H, "layer": N, "eps_r": eps_l, "error": errs["g"][0], "bound": b4})
            for j, e in enumerate(errs["s"], start=1):  # Lemma 5: no closed-form bound computed (Lemma 6)
                rows.append({"lemma": 5, "N": N, "H": H, "layer": j, "eps_r": math.nan, "error": e,
                             "bound": math.nan, "recursion_dev": errs["s_recursion_dev"][0]})
            for j, (e, b) in enumerate(zip(errs["p"], lemma2_bound(arch, eps_r, L_r, 1.0)), start=1):
                rows.append({"lemma": 2, "N": N, "H": H, "layer": j, "eps_r": eps_r, "error": e, "bound": b})
            for j, e in enumerate(errs["r'"]):
                rows.append({"lemma": 3, "N": N, "H": H, "layer": j, "eps_r": eps_rp, "error": e, "bound": b3})
    return pd.DataFrame(rows)


def bound_check(study, lemma: int) -> dict:
    """For one lemma's rows of :func:`forward_pass_study`: the cases, whether every measured error is
    within its bound, and the range of error / bound (the chapter's summary and ledger entry)."""
    rows = study[study["lemma"] == lemma]
    ratio = rows["error"] / rows["bound"]
    return {"cases": len(rows), "within": bool((rows["error"] <= rows["bound"]).all()),
            "min_ratio": float(ratio.min()), "max_ratio": float(ratio.max())}
