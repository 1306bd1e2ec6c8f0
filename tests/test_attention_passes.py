"""ICDL Lemma 2: the forward pass of an N-layer network inside N ReLU-attention layers."""

import pytest
import torch

from icdl import relu_sums as rs
from icdl.constructions.bounds import lemma2_bound
from icdl.constructions.lemmas import ICGDLayout, build_forward_layers
from icdl.networks import Architecture, forward, get_activation, init_weights, project

RELU_EXACT = rs.ReluSum(torch.tensor([[1.0, 0.0]], dtype=torch.float64), torch.ones(1, dtype=torch.float64))


def _setup(arch, B=3, n=6, B_v=1.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, n + 1, arch.d_x, generator=g, dtype=torch.float64)
    x = x / x.norm(dim=-1, keepdim=True).clamp(min=1.0)  # ‖x‖ ≤ B_x = 1
    y = torch.rand(B, n, arch.d_y, generator=g, dtype=torch.float64)
    w = torch.stack([project(arch, init_weights(arch, scale=2.0, seed=seed + b), B_v) for b in range(B)])
    return x, y, w


def _run(arch, r_sum, act, **kw):
    layout = ICGDLayout(arch)
    x, y, w = _setup(arch, **kw)
    H = layout.prompt(x, y, w)
    out = H
    for layer in build_forward_layers(layout, r_sum):
        out = layer(out)
    errs = []
    for j in range(1, arch.N + 1):
        exact = torch.stack([forward(arch, w[b], x[b], act)[j] for b in range(x.shape[0])])
        approx = out[:, layout.slot("p", j), :].transpose(1, 2)
        errs.append(float((approx - exact).norm(dim=-1).max()))
    return H, out, layout, errs


@pytest.mark.parametrize("arch", [Architecture(2, 3, 2, 1), Architecture(3, 3, 2, 2), Architecture(4, 2, 3, 2)])
def test_lemma2_exact_for_relu(arch):
    """REB (the answer on ReLU networks): with r = ReLU the sum is one exact ReLU and the pass is exact."""
    H, out, layout, errs = _run(arch, RELU_EXACT, "relu")
    assert max(errs) < 1e-12
    # nothing but the p̂ slots changed
    changed = (out - H).abs().amax(dim=(0, 2)) > 0
    p_rows = set()
    for j in range(1, arch.N + 1):
        p_rows |= set(range(layout.slot("p", j).start, layout.slot("p", j).stop))
    assert set(torch.nonzero(changed).flatten().tolist()) <= p_rows


@pytest.mark.parametrize("H_relus", [16, 64, 256])
def test_lemma2_error_within_bound_3_8(H_relus):
    arch = Architecture(3, 3, 2, 2)
    R = 4.0  # ≥ B_v · max‖p̂(j)‖ = 1 · √3 here
    r_sum = rs.fit("sigmoid", R, H_relus)
    eps_r = rs.sup_error(r_sum, torch.sigmoid, R)
    _, _, _, errs = _run(arch, r_sum, "sigmoid")
    bound = lemma2_bound(arch, eps_r, get_activation("sigmoid").lipschitz, B_v=1.0)
    assert all(e <= b for e, b in zip(errs, bound)), (errs, bound)
    assert errs[0] > 0.1 * bound[0]  # and the bound is not vacuous by orders of magnitude


def test_layout_slots_do_not_overlap_and_fill_the_token():
    arch = Architecture(3, 4, 2, 3)
    layout = ICGDLayout(arch)
    rows = []
    for name, j in [("x", 0), ("y", 0), ("w", 0), *[("p", j) for j in (1, 2, 3)], *[("r'", j) for j in (0, 1, 2)],
                    ("g", 0), *[("s", j) for j in (1, 2, 3)]]:
        s = layout.slot(name, j)
        rows += list(range(s.start, s.stop))
    assert sorted(rows) == list(range(layout.D - 2)) and layout.t == layout.D - 1
    assert layout.w_row(3, 2).stop - layout.w_row(3, 2).start == 4
    with pytest.raises(KeyError, match="no slot q"):
        layout.slot("q", 1)


@pytest.mark.parametrize("H_relus", [16, 128])
def test_lemma3_error_within_bound_3_12(H_relus):
    from icdl.constructions.bounds import lemma3_bound
    from icdl.studies.attention_passes import forward_pass_errors

    arch = Architecture(3, 3, 2, 2)
    R = 4.0
    r_sum, rp_sum = rs.fit("sigmoid", R, H_relus), rs.fit("sigmoid'", R, H_relus)
    eps_r = rs.sup_error(r_sum, torch.sigmoid, R)
    eps_rp = rs.sup_error(rp_sum, rs.TARGETS["sigmoid'"], R)
    errs = forward_pass_errors(arch, r_sum, "sigmoid", rp_sum)["r'"]
    act = get_activation("sigmoid")
    bound = lemma3_bound(arch, eps_r, eps_rp, act.lipschitz, act.lipschitz_prime, 1.0)
    assert len(errs) == arch.N and max(errs) <= bound
    assert max(errs) > 0.3 * bound


@pytest.mark.parametrize("loss", ["squared", "logcosh", "logistic"])
def test_lemma4_error_within_bound_3_14(loss):
    from icdl.constructions.bounds import lemma4_bound
    from icdl.networks import get_loss
    from icdl.studies.attention_passes import forward_pass_errors

    arch = Architecture(3, 3, 2, 2)
    R, H = 4.0, 64
    r_sum, u_sum = rs.fit("sigmoid", R, H), rs.fit(rs.U_TARGETS[loss], R, H)
    eps_r = rs.sup_error(r_sum, torch.sigmoid, R)
    eps_l = rs.sup_error(u_sum, rs.TARGETS[rs.U_TARGETS[loss]], R)
    err = forward_pass_errors(arch, r_sum, "sigmoid", None, u_sum, loss)["g"][0]
    bound = lemma4_bound(arch, eps_r, eps_l, get_activation("sigmoid").lipschitz, get_loss(loss).lipschitz_t, 1.0)
    assert err <= bound and err > 0.05 * bound


def test_mlp_layer_is_def8():
    from icdl.layers import MLPLayer

    m = MLPLayer(5, 7)
    with torch.no_grad():
        m.W1.copy_(torch.randn(7, 5, dtype=torch.float64))
        m.W2.copy_(torch.randn(5, 7, dtype=torch.float64))
    H = torch.randn(2, 5, 4, dtype=torch.float64)
    for t in range(4):
        h = H[0, :, t]
        torch.testing.assert_close(m(H)[0, :, t], h + m.W2 @ torch.relu(m.W1 @ h))
    with pytest.raises(ValueError, match="expects H of shape"):
        m(torch.zeros(2, 4, 3, dtype=torch.float64))


def test_ewml_layer_is_def6():
    from icdl.layers import EWMLayer

    m = EWMLayer(4, 2)
    with torch.no_grad():
        for p in (m.Q, m.K, m.V):
            p.copy_(torch.randn(p.shape, dtype=torch.float64))
    H = torch.randn(3, 4, 5, dtype=torch.float64)
    h = H[1, :, 2]
    expected = h + sum(torch.dot(m.Q[i] @ h, m.K[i] @ h) * (m.V[i] @ h) for i in range(2))
    torch.testing.assert_close(m(H)[1, :, 2], expected)


def test_lemma5_backward_layers_are_the_recursion():
    """The EWML layers compute (3.6) exactly on the r̂' and g they are given; with exact inputs
    (ReLU sums fine enough) ŝ approaches s."""
    from icdl.studies.attention_passes import forward_pass_errors

    arch = Architecture(3, 3, 2, 2)
    errs = {}
    for H in (16, 128):
        out = forward_pass_errors(arch, rs.fit("sigmoid", 4.0, H), "sigmoid", rs.fit("sigmoid'", 4.0, H),
                                  rs.fit(rs.U_TARGETS["logcosh"], 4.0, H), "logcosh")
        assert out["s_recursion_dev"][0] < 1e-14
        errs[H] = max(out["s"])
    assert errs[128] < errs[16] / 20


def test_bound_check_flags_a_violated_bound():
    import pandas as pd

    from icdl.studies.attention_passes import bound_check

    df = pd.DataFrame({"lemma": [2, 2, 3], "error": [1.0, 3.0, 0.5], "bound": [2.0, 2.0, 1.0]})
    c = bound_check(df, 2)
    assert c == {"cases": 2, "within": False, "min_ratio": 0.5, "max_ratio": 1.5}
    assert bound_check(df, 3)["within"]


def test_each_lemma_s_claim_counts_its_own_cases():
    """The claims box counts each lemma's own cases, as the chapter prints them: Lemma 2's "(N, H, layer) cases" are
    those of Lemma 2, not every row of the study (the bug: "230 cases" in the box beside the chapter's "70 (N, H,
    layer) cases")."""
    import json
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    nb = json.loads((root / "notebooks" / "attention_passes.ipynb").read_text())
    printed = "".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []))
    ledger = json.loads((root / "results" / "ledger" / "attention_passes.quick.json").read_text())
    ours = {r["claim"]: r["ours"] for r in ledger["data"]["records"]}
    for claim, cases in (("icdl-lemma2", "(N, H, layer) cases"), ("icdl-lemma3", "(N, H, j) cases"),
                         ("icdl-lemma4", "(N, H) cases")):
        said = re.match(rf"(\d+) {re.escape(cases)}", ours[claim])
        assert said, f"{claim}: {ours[claim]!r} does not say what its cases are"
        assert f"{said.group(1)} {cases}" in printed, f"{claim}: {said.group(0)!r} is not the count the chapter prints"
