import pytest
import torch

from icdl.prompts import PromptError, PromptLayout, build_prompt, check_prompt


def _data(B=3, n=5, d=4, dtype=torch.float64):
    g = torch.Generator().manual_seed(0)
    return (torch.randn(B, n, d, generator=g, dtype=dtype), torch.randn(B, n, generator=g, dtype=dtype),
            torch.randn(B, d, generator=g, dtype=dtype))


def test_prompt_layout_matches_eq_2_1():
    x, y, xq = _data()
    H = build_prompt(x, y, xq, D=11)
    L = PromptLayout(4, 11)
    assert H.shape == (3, 11, 6)
    assert torch.equal(H[:, L.x, :5], x.transpose(1, 2))
    assert torch.equal(H[:, L.x, 5], xq)
    assert torch.equal(H[:, L.y, :5], y) and torch.all(H[:, L.y, 5] == 0)
    assert torch.all(H[:, L.scratch, :] == 0) and H[:, L.scratch, :].shape[1] == 11 - 4 - 3
    assert torch.all(H[:, L.one, :] == 1)
    assert torch.equal(H[:, L.t, :], torch.tensor([1.0] * 5 + [0.0]).expand(3, 6).double())
    assert check_prompt(H, d=4) == L


def test_unbatched_prompt_is_the_batched_one():
    x, y, xq = _data(B=1)
    assert torch.equal(build_prompt(x[0], y[0], xq[0]), build_prompt(x, y, xq)[0])


@pytest.mark.parametrize("case, match", [
    ("short_y", "y must have shape"),
    ("int", "floating dtype"),
    ("small_D", "D must be >= d \\+ 3"),
    ("mixed", "share one dtype"),
    ("nan", "NaN"),
    ("query", "x_query must have shape"),
])
def test_bad_prompts_are_rejected_with_clear_messages(case, match):
    x, y, xq = _data()
    kwargs = {}
    if case == "short_y":
        y = y[:, :-1]
    elif case == "int":
        x = x.long()
    elif case == "small_D":
        kwargs["D"] = 6
    elif case == "mixed":
        y = y.float()
    elif case == "nan":
        x = x.clone()
        x[0, 0, 0] = float("nan")
    elif case == "query":
        xq = xq[:, :-1]
    with pytest.raises(PromptError, match=match):
        build_prompt(x, y, xq, **kwargs)


@pytest.mark.parametrize("corrupt, match", [
    (lambda H: H.__setitem__((slice(None), -1, 0), 0.0), "t_i"),
    (lambda H: H.__setitem__((slice(None), -1, -1), 1.0), "t_i"),
    (lambda H: H.__setitem__((slice(None), -2, 2), 0.5), "constant 1"),
    (lambda H: H.__setitem__((slice(None), 4, -1), 3.0), "query's y"),
])
def test_check_prompt_rejects_invalid_matrices(corrupt, match):
    H = build_prompt(*_data())
    corrupt(H)
    with pytest.raises(PromptError, match=match):
        check_prompt(H, d=4)
