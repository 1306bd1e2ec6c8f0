import math

import pytest
import torch

from icdl import relu_sums as rs
from icdl.studies import relu_sums as relu_sum_study


@pytest.mark.parametrize("target", list(rs.TARGETS))
def test_def4_constraints_and_rate(target):
    """Every fit satisfies ‖a_h‖₁ ≤ 1 exactly, C is Σ|c_h|, and the error falls like H^-2."""
    R = 4.0
    e = []
    for H in (32, 64, 128):
        f = rs.fit(target, R, H)
        assert float(f.A.abs().sum(1).max()) <= 1 + 1e-12
        assert f.C == pytest.approx(float(f.c.abs().sum()))
        e.append(rs.sup_error(f, rs.TARGETS[target], R))
    if e[0] == 0:  # u for the squared loss is exact
        assert e == [0.0, 0.0, 0.0]
        return
    assert e[2] < e[1] < e[0]
    slope = math.log(e[2] / e[0]) / math.log(4)
    assert -2.5 < slope < -1.5


def test_interpolant_is_exact_at_knots_and_within_the_bound():
    R, H = 3.0, 25
    f = rs.interpolate_1d(torch.sigmoid, R, H)
    assert f.H == H
    t = torch.linspace(-R, R, H, dtype=torch.float64)
    torch.testing.assert_close(f(t), torch.sigmoid(t), rtol=0, atol=1e-13)
    h = 2 * R / (H - 1)
    bound = h * h * 0.0963 / 8  # max |sigmoid''| = 1/(6√3)
    assert rs.sup_error(f, torch.sigmoid, R) <= bound


def test_ridge_and_sum_evaluate_what_they_say():
    g = rs.interpolate_1d(torch.tanh, 8.0, 40)
    lifted = rs.ridge(g, (1.0, -1.0))
    z = torch.rand(100, 2, dtype=torch.float64) * 8 - 4
    torch.testing.assert_close(lifted(z), g(z[:, 0] - z[:, 1]), rtol=1e-12, atol=1e-12)
    assert float(lifted.A.abs().sum(1).max()) <= 1 + 1e-12
    both = rs.add(lifted, lifted, weights=(0.5, -2.0))
    torch.testing.assert_close(both(z), -1.5 * g(z[:, 0] - z[:, 1]), rtol=1e-12, atol=1e-12)


def test_sigmoid_reaches_1e_5():
    row = relu_sum_study.smallest_H("sigmoid", 1e-5, R=4.0)
    assert row["eps"] <= 1e-5 and 100 < row["H"] < 1000 and row["C"] < 2
    # and it is the smallest: one ReLU fewer misses the goal
    assert rs.sup_error(rs.fit("sigmoid", 4.0, row["H"] - 1), rs.TARGETS["sigmoid"], 4.0) > 1e-5


def test_product_by_relus():
    f = rs.fit("product: t·y", 4.0, 512)
    z = torch.rand(2000, 2, dtype=torch.float64) * 8 - 4
    assert float((f(z) - z[:, 0] * z[:, 1]).abs().max()) < 1e-3
    assert f.H == 2 * 256


def test_bad_input_is_rejected():
    with pytest.raises(ValueError, match="‖a_h‖₁ ≤ 1"):
        rs.ReluSum(torch.tensor([[1.0, 0.5]], dtype=torch.float64), torch.ones(1, dtype=torch.float64))
    with pytest.raises(ValueError, match="unknown target 'cosh'; known targets"):
        rs.fit("cosh", 4.0, 10)
    with pytest.raises(ValueError, match="H must be >= 3"):
        rs.interpolate_1d(torch.tanh, 1.0, 2)
    with pytest.raises(ValueError, match="takes k = 2 variables"):
        rs.fit("product: t·y", 4.0, 16)(torch.zeros(3, 3))


@pytest.mark.parametrize("R, H, kind, match", [
    (float("inf"), 16, ValueError, "R"), (float("nan"), 16, ValueError, "R"), (0.0, 16, ValueError, "R"),
    (-1.0, 16, ValueError, "R"), (4.0, 16.0, TypeError, "H"), (4.0, 6.7, TypeError, "H"), (4.0, 2, ValueError, "H"),
    (4.0, True, TypeError, "H"),
])
def test_fit_refuses_bad_sizes_naming_the_argument(R, H, kind, match):
    """R = inf gave a sum full of NaN; a float H ended in linspace's TypeError."""
    with pytest.raises(kind, match=match):
        rs.fit("sigmoid", R, H)
    assert rs.fit("sigmoid", 4.0, 3).H == 3  # the smallest allowed size still works (range checked from above)


def test_sup_error_covers_the_whole_box_on_a_one_sided_target():
    """The sup runs over all of ``[−R, R]^k``, the negative half too: against the zero sum, ``e^{−z}`` (and
    ``e^{−z₁−z₂}``) is largest at the corner ``−R``, so the sup is ``e^{R}`` (``e^{2R}``) exactly, while a grid over
    ``[0, R]`` would report 1 (the interpolants of the symmetric targets above err alike on both halves and
    cannot tell)."""
    R = 2.0
    zero1 = rs.ReluSum(torch.zeros(1, 2, dtype=torch.float64), torch.zeros(1, dtype=torch.float64))
    zero2 = rs.ReluSum(torch.zeros(1, 3, dtype=torch.float64), torch.zeros(1, dtype=torch.float64))
    assert rs.sup_error(zero1, lambda z: torch.exp(-z), R) == pytest.approx(math.exp(R), rel=1e-14)
    assert rs.sup_error(zero1, lambda z: torch.exp(-z), R, points=3) == pytest.approx(math.exp(R), rel=1e-14)
    assert rs.sup_error(zero2, lambda z: torch.exp(-z.sum(-1)), R) == pytest.approx(math.exp(2 * R), rel=1e-14)
    assert rs.sup_error(zero2, lambda z: torch.exp(-z.sum(-1)), R, points=3) == pytest.approx(math.exp(2 * R),
                                                                                               rel=1e-14)
    # and a real interpolant of a one-sided target: e^{−z}'s error h² max|g''|/8 sits on the negative side
    f = rs.interpolate_1d(lambda z: torch.exp(-z), R, 9)
    h = 2 * R / 8
    err = rs.sup_error(f, lambda z: torch.exp(-z), R)
    assert h * h * math.exp(R - h) / 8 < err <= h * h * math.exp(R) / 8  # both sides: only the first segment


def test_one_row_over_the_l1_bound_is_enough_to_refuse():
    """Def. 4 bounds *every* ``‖a_h‖₁`` by 1: a sum whose rows all keep the bound but one is refused (a check by
    ``all`` rather than ``any`` refused only sums where every row broke it, and the one-row refusal above cannot
    tell the two apart)."""
    f64 = torch.float64
    ok = torch.tensor([[0.5, 0.5], [1.0, 0.0], [0.0, -1.0]], dtype=f64)  # ‖a_h‖₁ = 1 exactly: allowed
    assert rs.ReluSum(ok, torch.ones(3, dtype=f64)).H == 3
    for h in range(3):
        bad = ok.clone()
        bad[h] *= 1 + 1e-9  # only row h breaks the bound, and only just
        with pytest.raises(ValueError, match="‖a_h‖₁ ≤ 1"):
            rs.ReluSum(bad, torch.ones(3, dtype=f64))
