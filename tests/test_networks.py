import math

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from icdl.networks import (
    ACTIVATIONS,
    LOSSES,
    Architecture,
    autograd_gradient,
    explicit_gradient,
    flatten,
    forward,
    get_activation,
    get_loss,
    gradient_terms,
    init_weights,
    project,
    project_box,
    projected_gd,
    risk,
    unflatten,
)


@st.composite
def problems(draw):
    N = draw(st.integers(2, 6))
    K = draw(st.integers(1, 6))
    d_x = draw(st.integers(1, 5))
    d_y = draw(st.integers(1, 4).filter(lambda v: v != d_x) | st.just(d_x))
    n = draw(st.integers(1, 12))
    act = draw(st.sampled_from(sorted(ACTIVATIONS)))
    loss = draw(st.sampled_from(sorted(LOSSES)))
    scale = draw(st.sampled_from([0.5, 1.0, 2.0]))
    seed = draw(st.integers(0, 2**16))
    return Architecture(N, K, d_x, d_y), n, act, loss, scale, seed


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_lemma1_matches_autograd(problem):
    """Lemma 1 (and Lemma 15 when d_x ≠ d_y) equals autograd's gradient of L_n to 1e-12 relative."""
    arch, n, act, loss, scale, seed = problem
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, arch.d_x, generator=g, dtype=torch.float64)
    y = torch.rand(n, arch.d_y, generator=g, dtype=torch.float64)
    w = init_weights(arch, scale=scale, seed=seed)
    explicit = gradient_terms(arch, w, x, y, act, loss).grad
    auto = autograd_gradient(arch, w, x, y, act, loss)
    assert explicit.shape == (arch.size,)
    assert float((explicit - auto).norm()) <= 1e-12 * float(auto.norm()) + 1e-300


@pytest.mark.parametrize("act", sorted(ACTIVATIONS))
def test_per_example_terms_assemble_the_gradient(act):
    arch = Architecture(4, 3, 2, 5)
    x = torch.randn(6, 2, dtype=torch.float64)
    y = torch.rand(6, 5, dtype=torch.float64)
    t = gradient_terms(arch, init_weights(arch, seed=1), x, y, act)
    assembled = torch.cat([t.A(j).sum(0) for j in range(1, 5)]) / (2 * 6)
    torch.testing.assert_close(assembled, t.grad, rtol=1e-13, atol=1e-15)
    # A_i(j) is ∂ℓ(p_i(N), y_i)/∂V_j for the single example i
    for i in (0, 5):
        g_i = autograd_gradient(arch, init_weights(arch, seed=1), x[i:i + 1], y[i:i + 1], act) * 2
        torch.testing.assert_close(torch.cat([t.A(j)[i] for j in range(1, 5)]), g_i, rtol=1e-12, atol=1e-14)
    assert [tuple(s.shape) for s in t.s[1:]] == [(6, 3), (6, 3), (6, 3), (6, 5)]
    assert [tuple(r.shape) for r in t.r_prime] == [(6, 3), (6, 3), (6, 3), (6, 5)]


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_derivatives(name):
    act = get_activation(name)
    z = torch.linspace(-6, 6, 241, dtype=torch.float64).requires_grad_(True)
    (auto,) = torch.autograd.grad(act.r(z).sum(), z)
    keep = z.detach().abs() > 1e-9  # relu's kink
    torch.testing.assert_close(act.r_prime(z.detach())[keep], auto[keep], rtol=1e-12, atol=1e-14)
    assert float(auto.abs().max()) <= act.lipschitz + 1e-3


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_derivatives(name):
    lo = get_loss(name)
    t = torch.randn(7, 3, dtype=torch.float64).requires_grad_(True)
    y = torch.rand(7, 3, dtype=torch.float64)
    (auto,) = torch.autograd.grad(lo.ell(t, y).sum(), t)
    torch.testing.assert_close(lo.u(t.detach(), y), auto, rtol=1e-12, atol=1e-14)
    # L_l = sup |∂u/∂t|, by finite differences on a dense grid
    s = torch.linspace(-6, 6, 120001, dtype=torch.float64)
    slope = torch.diff(lo.u(s[:, None], torch.zeros(len(s), 1, dtype=torch.float64))[:, 0]) / torch.diff(s)
    assert abs(float(slope.abs().max()) - lo.lipschitz_t) < 1e-3


def test_parameter_counts_def2():
    for N in range(2, 8):
        for K in (1, 3, 7):
            for d in (1, 4):
                arch = Architecture(N, K, d, d)
                true = [0]
                for V in unflatten(arch, init_weights(arch)):
                    true.append(true[-1] + V.numel())
                assert arch.counts == true == arch.def2_counts()
                assert arch.size == 2 * d * K + (N - 2) * K * K
                assert arch.size == sum(p.numel() for p in _torch_mlp(arch).parameters())


def _torch_mlp(arch):
    dims = arch.widths
    return torch.nn.Sequential(*[torch.nn.Linear(a, b, bias=False) for a, b in zip(dims[:-1], dims[1:])])


def test_flat_vector_round_trip_and_order():
    """w stacks v_{1,1}, …, v_{1,K}, …, v_{N,d_y} (eq. 3.2), and the network is Def. 1's."""
    arch = Architecture(3, 2, 3, 2)
    w = torch.arange(arch.size, dtype=torch.float64)
    Vs = unflatten(arch, w)
    assert [tuple(V.shape) for V in Vs] == [(2, 3), (2, 2), (2, 2)]
    assert Vs[0][1].tolist() == [3.0, 4.0, 5.0]  # v_{1,2}: the second row of V_1
    assert Vs[2][0].tolist() == [10.0, 11.0]     # v_{3,1}
    assert torch.equal(flatten(arch, Vs), w)
    # the same network as a bias-free torch MLP with the activation after every layer
    w = init_weights(arch, seed=4)
    mlp = _torch_mlp(arch)
    with torch.no_grad():
        for lin, V in zip(mlp, unflatten(arch, w)):
            lin.weight.copy_(V.float())
    x = torch.randn(5, 3, dtype=torch.float64)
    h = x.float()
    for lin in mlp:
        h = torch.sigmoid(lin(h))
    torch.testing.assert_close(forward(arch, w, x)[-1].float(), h, rtol=1e-5, atol=1e-6)


def test_projection_caps_every_row():
    arch = Architecture(3, 4, 2, 2)
    w = init_weights(arch, scale=5.0, seed=2)
    pw = project(arch, w, B_v=1.0)
    for V, PV in zip(unflatten(arch, w), unflatten(arch, pw)):
        norms = V.norm(dim=1)
        assert torch.all(PV.norm(dim=1) <= 1.0 + 1e-12)
        inside = norms <= 1.0
        assert torch.equal(PV[inside], V[inside])
    assert torch.equal(project(arch, pw, 1.0), pw)


def test_projected_gd_steps_downhill_and_the_projection_binds():
    """Each step is Proj(w − η ∇L(w)) against autograd's gradient, on a case where the box is active (some
    coordinates end exactly on ±B_w, others inside): a flipped sign climbs the risk, a dropped projection
    leaves coordinates outside the box, an unprojected step differs from the reference."""
    arch = Architecture(2, 3, 2, 1)
    g = torch.Generator().manual_seed(4)
    x = torch.randn(12, 2, generator=g, dtype=torch.float64)
    y = torch.randn(12, 1, generator=g, dtype=torch.float64)
    w0 = init_weights(arch, scale=1.0, seed=3)
    eta, B_w = 3.0, 0.6
    path = projected_gd(arch, w0, x, y, eta=eta, steps=3, B_w=B_w)
    for prev, nxt in zip(path, path[1:]):
        expected = (prev - eta * autograd_gradient(arch, prev, x, y)).clamp(-B_w, B_w)
        torch.testing.assert_close(nxt, expected, rtol=0, atol=1e-12)
    unprojected = path[0] - eta * autograd_gradient(arch, path[0], x, y)
    assert (unprojected.abs() > B_w).any() and (unprojected.abs() < B_w).any()  # the box binds, not everywhere
    assert path[1].abs().max() <= B_w
    torch.testing.assert_close(path[1], project_box(unprojected, B_w), rtol=0, atol=1e-12)
    small = projected_gd(arch, w0.clamp(-B_w, B_w), x, y, eta=0.05, steps=5, B_w=B_w)
    risks = [float(risk(arch, w, x, y)) for w in small]
    assert all(b < a for a, b in zip(risks, risks[1:]))  # small projected steps go downhill


@pytest.mark.parametrize("call, match", [
    (lambda: Architecture(1, 3, 2, 2), "N must be an integer >= 2"),
    (lambda: Architecture(3, 0, 2, 2), "K must be an integer >= 1"),
    (lambda: unflatten(Architecture(3, 2, 2, 2), torch.zeros(5)), "D_N = 12"),
    (lambda: risk(Architecture(3, 2, 2, 2), torch.zeros(12), torch.zeros(4, 3), torch.zeros(4, 2)),
     r"x must have shape \(n, d_x=2\)"),
    (lambda: risk(Architecture(3, 2, 2, 2), torch.zeros(12), torch.zeros(4, 2), torch.zeros(4, 1)),
     r"y must have shape \(n=4, d_y=2\)"),
    (lambda: get_activation("swish"), r"unknown activation 'swish'; known activations: \['gelu'"),
    (lambda: get_loss("hinge"), r"unknown loss 'hinge'; known losses: \['logcosh'"),
    (lambda: flatten(Architecture(2, 2, 2, 2), [torch.zeros(2, 2), torch.zeros(3, 2)]), "V_2 must have shape"),
])
def test_bad_shapes_and_names_raise_clear_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_gelu_lipschitz_constant():
    z = torch.linspace(0, 4, 40001, dtype=torch.float64)
    assert math.isclose(float(get_activation("gelu").r_prime(z).max()), 1.129, abs_tol=1e-3)


@pytest.mark.parametrize("name", ["sigmoid", "tanh", "softplus", "gelu"])
def test_second_derivative_bounds(name):
    """L_r' = sup |r''| (used by the Lemma 3 bound), against a dense finite-difference estimate."""
    act = get_activation(name)
    z = torch.linspace(-8, 8, 160001, dtype=torch.float64)
    second = torch.diff(act.r_prime(z)) / torch.diff(z)
    assert float(second.abs().max()) <= act.lipschitz_prime + 1e-6
    assert float(second.abs().max()) >= act.lipschitz_prime - 1e-3


def test_non_finite_inputs_are_refused_with_the_argument_named():
    """NaN or inf data used to give NaN gradients silently."""
    arch = Architecture(2, 3, 2, 1)
    w = torch.zeros(arch.size, dtype=torch.float64)
    x, y = torch.zeros(4, 2, dtype=torch.float64), torch.zeros(4, 1, dtype=torch.float64)
    for bad_x, bad_y, bad_w, name in ((x.clone().fill_(float("nan")), y, w, "x"),
                                      (x, y.clone().fill_(float("inf")), w, "y"),
                                      (x, y, w.clone().fill_(float("nan")), "w")):
        with pytest.raises(ValueError, match=f"^{name} has non-finite"):
            explicit_gradient(arch, bad_w, bad_x, bad_y)


def test_init_weights_variance_is_scale_squared_over_fan_in():
    """``v_{j,k} ~ N(0, scale²/fan_in)``: on layers whose fan-in and fan-out differ by a factor of 8 to 200, each
    layer's sample variance times its fan-in is scale² (dividing by √fan_out instead moves it by that factor)."""
    arch = Architecture(3, 400, 50, 2)  # V_1 (400, 50), V_2 (400, 400), V_3 (2, 400)
    for scale in (1.0, 2.5):
        for V, (rows, cols) in zip(unflatten(arch, init_weights(arch, scale=scale, seed=5)), arch.shapes):
            assert V.shape == (rows, cols)
            assert abs(float(V.var()) * cols / scale**2 - 1) < 0.2  # 800 entries or more: s.e. of var ≤ 5 %
            assert abs(float(V.mean())) < 4 * scale / math.sqrt(cols * V.numel())
