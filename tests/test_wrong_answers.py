"""Library calls that used to return a wrong answer -- a "sup" over one point, a position cut from 2.7 to 2,
data cut to integers, the query row taken as an example -- are refused by name, in one ValueError."""

import math

import numpy as np
import pytest
import torch

from icdl import relu_sums as rs
from icdl.gpt_icl.core import algorithms as alg
from icdl.lsa import constructions as lc
from icdl.lsa import model as lm


@pytest.mark.parametrize("points", [1, 2, 0, True, 2.5, -3])
def test_sup_error_refuses_a_grid_that_is_no_sup(points):
    f = rs.fit("sigmoid", 2.0, 16)
    with pytest.raises(ValueError, match="points"):
        rs.sup_error(f, torch.sigmoid, 2.0, points=points)
    with pytest.raises(ValueError, match="points"):
        rs.sup_error(rs.fit("product: t·y", 2.0, 16), rs.TARGETS["product: t·y"], 2.0, points=points)


@pytest.mark.parametrize("R", [0.0, -1.0, math.nan, math.inf, True])
def test_sup_error_refuses_a_box_that_is_none(R):
    with pytest.raises(ValueError, match="R"):
        rs.sup_error(rs.fit("sigmoid", 2.0, 16), torch.sigmoid, R)


def test_sup_error_still_measures_on_small_and_default_grids():
    f = rs.fit("sigmoid", 2.0, 16)
    assert rs.sup_error(f, torch.sigmoid, 2.0, points=3) >= 0
    assert rs.sup_error(f, torch.sigmoid, 2.0) > 0


def _prompts():
    g = torch.Generator().manual_seed(0)
    return torch.randn(3, 6, 2, generator=g, dtype=torch.float64), torch.randn(3, 6, generator=g, dtype=torch.float64)


@pytest.mark.parametrize("positions", [[2.7], [2.0], [True], ["3"], [torch.tensor(2.5)], [0], [6]])
def test_positions_must_be_integer_query_indices(positions):
    xs, ys = _prompts()
    with pytest.raises(ValueError, match="positions"):
        alg.ridge(xs, ys, positions, [0.1])
    with pytest.raises(ValueError, match="positions"):
        alg.least_squares_with_slope(xs, ys, positions)


def test_integer_positions_of_any_integer_type_are_taken():
    xs, ys = _prompts()
    want = alg.ridge(xs, ys, [2, 3], [0.1])[0]
    for positions in ([np.int64(2), np.int64(3)], [torch.tensor(2), torch.tensor(3)], np.array([2, 3])):
        assert torch.equal(alg.ridge(xs, ys, positions, [0.1])[0], want)


@pytest.mark.parametrize("name, grid", [("lambda", [True]), ("lambda", ["0.1"])])
def test_grids_of_ridge_are_numbers(name, grid):
    xs, ys = _prompts()
    with pytest.raises(ValueError, match=name):
        alg.ridge(xs, ys, [2], grid)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.bool, torch.complex64, "float32"])
def test_lsa_data_and_models_are_floating(dtype):
    with pytest.raises(ValueError, match="dtype"):
        lm.sample_data((3,), 5, generator=torch.Generator().manual_seed(0), dtype=dtype)
    with pytest.raises(ValueError, match="dtype"):
        lm.TF(4, 2, 2, 6, dtype=dtype)


@pytest.mark.parametrize("kw, name", [({"D": True}, "D"), ({"runs": True}, "runs"), ({"ln_eps": -1.0}, "ln_eps"),
                                      ({"ln_eps": math.nan}, "ln_eps")])
def test_lsa_model_sizes_are_integers_not_bools(kw, name):
    with pytest.raises(ValueError, match=name):
        lm.TF(**{"D": 4, "L": 2, "K": 2, "T": 6, **kw})


@pytest.mark.parametrize("shape", [(2.5,), [3], (True,), (-1,)])
def test_lsa_sample_shape_is_a_tuple_of_counts(shape):
    with pytest.raises(ValueError, match="shape"):
        lm.sample_data(shape, 5, generator=torch.Generator().manual_seed(0))


@pytest.mark.parametrize("N", [6, 4, 5.0, True])
def test_gd_two_steps_take_the_data_s_own_number_of_examples(N):
    """N larger than the data took the query row [1, u, 0] as an example; a smaller N mixed sums over some
    examples with means over all."""
    d = lm.sample_data((3,), 5, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    with pytest.raises(ValueError, match="N"):
        lc.gd_two_steps_explicit(d, N, 0.1, 0.3)
    with pytest.raises(ValueError, match="N"):
        lc.gd_two_steps_closed_form(d, N, 0.1, 0.3)
    assert torch.allclose(lc.gd_two_steps_explicit(d, 5, 0.1, 0.3), lc.gd_two_steps_closed_form(d, 5, 0.1, 0.3))


@pytest.mark.parametrize("call, name", [
    (lambda: lc.construction_tf422(10.5, 1.0), "N"), (lambda: lc.construction_tf422(10, math.inf), "R"),
    (lambda: lc.construction_tf422(True, 1.0), "N"), (lambda: lc.gd_two_steps_tf432(10, math.inf, 0.3), "eta"),
    (lambda: lc.gd_two_steps_tf432(10, 0.1, math.nan), "a"), (lambda: lc.gd_two_steps_tf432(2.5, 0.1, 0.3), "N"),
])
def test_lsa_constructions_refuse_cut_or_infinite_arguments(call, name):
    with pytest.raises(ValueError, match=name):
        call()
