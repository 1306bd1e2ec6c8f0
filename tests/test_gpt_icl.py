"""The GPT-2-style in-context learner, its tasks, trainer and baselines (ICDL sec. 5)."""

import math

import pandas as pd
import pytest
import torch

from icdl.book.profiles import ProfileError
from icdl.gpt_icl import baselines as bl
from icdl.gpt_icl import depth as gpt_depth
from icdl.gpt_icl import plateau as gpt_plateau
from icdl.gpt_icl import speed as gpt_speed
from icdl.gpt_icl import study as gpt_study
from icdl.gpt_icl.model import GPTConfig, InContextGPT
from icdl.gpt_icl.tasks import MIXTURES, TaskConfig, apply_networks, output_scale, sample_prompts, sample_x
from icdl.gpt_icl.training import TrainConfig, _batch, curriculum, load_model, train

TINY = dict(d=3, n_layer=2, n_head=2, n_embd=16, max_examples=12)


def _model(attention):
    torch.manual_seed(0)
    return InContextGPT(GPTConfig(**TINY, attention=attention)).eval()


def test_interleaving_pads_y_and_alternates():
    xs = torch.arange(12.0).reshape(2, 2, 3)
    ys = torch.tensor([[10.0, 11.0], [12.0, 13.0]])
    z = InContextGPT.interleave(xs, ys)
    assert z.shape == (2, 4, 3)
    assert torch.equal(z[0, 0], xs[0, 0]) and torch.equal(z[0, 2], xs[0, 1])
    assert torch.equal(z[0, 1], torch.tensor([10.0, 0, 0])) and torch.equal(z[1, 3], torch.tensor([13.0, 0, 0]))


@pytest.mark.parametrize("attention", ["softmax", "relu"])
def test_predictions_are_causal(attention):
    """The prediction for y_i must not depend on y_i or on anything after x_i."""
    m = _model(attention)
    g = torch.Generator().manual_seed(1)
    xs, ys = torch.randn(2, 8, 3, generator=g), torch.randn(2, 8, generator=g)
    base = m(xs, ys)
    xs2, ys2 = xs.clone(), ys.clone()
    ys2[:, 4:] += 5.0          # y_5 … : the prediction for y_5 reads x_5 but not y_5
    xs2[:, 5:] += 5.0
    out = m(xs2, ys2)
    torch.testing.assert_close(out[:, :5], base[:, :5], rtol=0, atol=1e-6)
    assert (out[:, 5:] - base[:, 5:]).abs().max() > 1e-4


def test_relu_attention_is_def7_average_over_attended_positions():
    m = _model("relu")
    attn = m.blocks[0].attn
    h = torch.randn(1, 5, 16, generator=torch.Generator().manual_seed(2))
    q, k, v = attn.qkv(h).split(16, dim=2)
    heads = []
    for hd in range(2):
        sl = slice(8 * hd, 8 * hd + 8)
        out = torch.zeros(5, 8)
        for i in range(5):  # token i attends to 0..i and divides by i + 1
            for s in range(i + 1):
                out[i] += torch.relu(q[0, i, sl] @ k[0, s, sl] / math.sqrt(8)) * v[0, s, sl]
            out[i] /= i + 1
        heads.append(out)
    torch.testing.assert_close(attn(h)[0], attn.proj(torch.cat(heads, -1)), rtol=1e-5, atol=1e-6)


def test_bad_model_settings_and_inputs_are_named():
    with pytest.raises(ValueError, match="attention"):
        GPTConfig(attention="linear")
    with pytest.raises(ValueError, match="n_head"):
        GPTConfig(n_embd=30, n_head=4)
    m = _model("softmax")
    with pytest.raises(ValueError, match="max_examples"):
        m(torch.randn(1, 13, 3), torch.randn(1, 13))
    with pytest.raises(ValueError, match="xs"):
        m(torch.randn(1, 4, 2), torch.randn(1, 4))


def test_task_mixture_scale_and_curriculum_mask():
    g = torch.Generator().manual_seed(0)
    cfg = TaskConfig(d=4, depth=3, omega=(0.7, 0.3))
    x = sample_x(cfg, 200, 50, g)
    assert abs(float((x.mean(-1) > 0).float().mean()) - 0.3) < 0.03  # the N(2, I) share
    xs, ys = sample_prompts(TaskConfig(d=4, depth=3), 2000, 8, g)
    assert abs(float(ys.std()) - 1.0) < 0.1  # unit variance under pretraining draws
    assert output_scale(4, 3, 2, 0.0) == output_scale(4, 3, 2, 0.0)
    xs, _ = sample_prompts(TaskConfig(d=4, depth=2), 3, 5, g, dims=2)
    assert xs[..., 2:].abs().max() == 0
    with pytest.raises(ValueError, match="omega"):
        TaskConfig(omega=(0.5, 0.6))
    assert set(MIXTURES) == {"(1, 0)", "(.9, .1)", "(.7, .3)", "(.5, .5)"}


def test_curriculum_schedule():
    cfg = TrainConfig(examples=20, curriculum_interval=10, curriculum_points=2, curriculum_start_points=5,
                      curriculum_start_dims=2)
    assert curriculum(cfg, 6, 0) == (5, 2)
    assert curriculum(cfg, 6, 25) == (9, 4)
    assert curriculum(cfg, 6, 10_000) == (20, 6)
    assert curriculum(TrainConfig(examples=20), 6, 0) == (20, 6)


def test_killed_and_resumed_run_ends_with_the_same_weights(tmp_path):
    mcfg, task = GPTConfig(**TINY), TaskConfig(d=3, depth=2)
    tcfg = TrainConfig(steps=12, batch=4, lr=1e-3, examples=6, log_every=3, curriculum_interval=5,
                       curriculum_start_points=3, curriculum_start_dims=2)
    whole = train(mcfg, task, tcfg, progress=False)
    ckpt = tmp_path / "run.pt"
    part = train(mcfg, task, tcfg, checkpoint=ckpt, max_steps_this_call=5, progress=False)
    assert part["steps_done"] == 5
    resumed = train(mcfg, task, tcfg, checkpoint=ckpt, progress=False)
    assert resumed["steps_done"] == 12
    for k, v in whole["model"].state_dict().items():
        assert torch.equal(v, resumed["model"].state_dict()[k]), k
    pd.testing.assert_frame_equal(whole["history"], resumed["history"])
    model, state = load_model(ckpt)
    assert state["step"] == 12
    with pytest.raises(ValueError, match="other settings"):
        train(mcfg, task, TrainConfig(steps=13, batch=4, examples=6), checkpoint=ckpt, progress=False)
    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        load_model(tmp_path / "missing.pt")


def test_training_reduces_the_loss():
    res = train(GPTConfig(**TINY), TaskConfig(d=3, depth=2), TrainConfig(steps=150, batch=16, lr=3e-3, examples=10,
                                                                          log_every=10), progress=False)
    h = res["history"]["loss"]
    assert h.iloc[-3:].mean() < 0.8 * h.iloc[:3].mean()


def test_baselines_never_see_the_query_label_on_noisy_data():
    """On noisy labels (where a leak matters: noise-free linear labels are predicted exactly either way) each
    baseline's prediction at position i equals the same method applied to the first i examples alone, and
    changing the query's label -- or any later label -- changes no prediction at or before it."""
    g = torch.Generator().manual_seed(7)
    xs = torch.randn(40, 10, 3, generator=g, dtype=torch.float64)
    ys = (xs @ torch.randn(3, generator=g, dtype=torch.float64)) + 0.8 * torch.randn(40, 10, generator=g,
                                                                                    dtype=torch.float64)
    i = 7
    X1 = torch.cat([xs, torch.ones(40, 10, 1, dtype=torch.float64)], -1)
    coef = torch.linalg.lstsq(X1[:, :i], ys[:, :i, None]).solution
    torch.testing.assert_close(bl.least_squares(xs, ys, positions=[i])[:, 0], (X1[:, i:i + 1] @ coef)[:, 0, 0],
                               rtol=1e-8, atol=1e-8)
    torch.testing.assert_close(bl.context_mean(xs, ys)[:, i], ys[:, :i].mean(1), rtol=1e-12, atol=1e-12)
    moved = ys.clone()
    moved[:, i:] += 5.0  # the query's label and everything after it
    for method in (bl.context_mean, bl.least_squares, bl.nearest_neighbours):
        torch.testing.assert_close(method(xs, moved)[:, :i + 1], method(xs, ys)[:, :i + 1], rtol=0, atol=1e-9)


def test_simple_baselines():
    g = torch.Generator().manual_seed(0)
    xs = torch.randn(50, 12, 3, generator=g)
    w = torch.randn(50, 3, generator=g)
    ys = (xs * w[:, None]).sum(-1) + 0.5
    cm = bl.context_mean(xs, ys)
    assert cm[0, 0] == 0 and torch.isclose(cm[0, 3], ys[0, :3].mean())
    ls = bl.least_squares(xs, ys, positions=[4, 8, 11])  # exact once d + 1 = 4 examples are seen
    torch.testing.assert_close(ls, ys[:, [4, 8, 11]], rtol=1e-4, atol=1e-4)
    nn1 = bl.nearest_neighbours(xs, ys, m=1)
    j = torch.cdist(xs[0, 5:6], xs[0, :5]).argmin()
    assert nn1[0, 5] == ys[0, j]
    assert torch.allclose(bl.r2_across_prompts(ys, ys), torch.ones(12))
    assert bl.r2_across_prompts(ys[:, 5].mean().expand(50), ys[:, 5]).abs() < 1e-6


def test_batched_mlps_are_independent_and_learn():
    g = torch.Generator().manual_seed(0)
    xs, ys = torch.randn(6, 10, 3, generator=g), torch.randn(6, 10, generator=g)
    a = bl.trained_mlp(xs, ys, 8, depth=3, width=16, epochs=20)
    ys2 = ys.clone()
    ys2[3:] += 10.0  # other prompts' data must not move prompts 0–2
    b = bl.trained_mlp(xs, ys2, 8, depth=3, width=16, epochs=20)
    torch.testing.assert_close(a["pred"][:, :3], b["pred"][:, :3], rtol=0, atol=1e-6)
    chunked = bl.trained_mlp(xs, ys, 8, depth=3, width=16, epochs=20, chunk=4)  # 4 + 2 prompts
    torch.testing.assert_close(chunked["pred"], a["pred"], rtol=0, atol=1e-6)
    lin = (xs @ torch.tensor([1.0, -2.0, 0.5]))
    c = bl.trained_mlp(xs.repeat(20, 1, 1), lin.repeat(20, 1), 9, depth=2, width=32, epochs=200, lr=1e-2)
    assert c["best_r2"] > 0.9
    with pytest.raises(ValueError, match="position"):
        bl.trained_mlp(xs, ys, 0, depth=2)


def test_batched_mlp_is_the_loop_with_the_same_start():
    """One prompt's batched MLP follows the plain nn.Sequential + Adam loop step by step when both start
    from the same weights (the batched weights are stored transposed)."""
    g = torch.Generator().manual_seed(1)
    xs, ys = torch.randn(2, 9, 3, generator=g), torch.randn(2, 9, generator=g)
    batched = bl.trained_mlp(xs, ys, 8, depth=3, width=12, epochs=15, seed=5)["pred"]
    params = bl._init_mlps(range(2), 3, 3, 12, seed=5)
    for b in range(2):
        layers = []
        for j in range(3):
            lin = torch.nn.Linear(*params[2 * j].shape[1:])
            with torch.no_grad():
                lin.weight.copy_(params[2 * j][b].T)
                lin.bias.copy_(params[2 * j + 1][b])
            layers += [lin, torch.nn.ReLU()]
        net = torch.nn.Sequential(*layers[:-1])
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)
        for e in range(15):
            loss = ((net(xs[b, :8])[:, 0] - ys[b, :8]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            assert abs(float(net(xs[b, 8:])[0, 0].detach()) - float(batched[e, b])) < 1e-5


def test_benchmark_reports_the_compute_bound():
    g = torch.Generator().manual_seed(0)
    xs, ys = torch.randn(8, 6, 3, generator=g), torch.randn(8, 6, generator=g)
    res = bl.benchmark_batched_vs_loop(xs, ys, 5, depth=2, width=8, epochs=3, loop_prompts=2, chunk=4)
    # depth 2, width 8, d = 3, 5 examples: forward 2·5·(3·8 + 8·1); backward the weight gradients (as much
    # again) and the input gradient of the second layer only (2·5·8); then the query's forward 2·(3·8 + 8)
    assert res["flops_per_prompt_epoch"] == 2 * (2 * 5 * 32) + 2 * 5 * 8 + 2 * 32
    assert res["max_speedup"] == pytest.approx(res["loop_s_extrapolated"] / res["compute_floor_s"])
    assert res["compute_floor_s"] == pytest.approx(8 * 3 * res["flops_per_prompt_epoch"] / res["matmul_flops"])


def test_bootstrap_band_brackets_the_estimate():
    g = torch.Generator().manual_seed(0)
    y = torch.randn(300, 4, generator=g)
    pred = y + 0.5 * torch.randn(300, 4, generator=g)
    band = bl.bootstrap_band(pred, y)
    r2 = bl.r2_across_prompts(pred, y).numpy()
    assert ((band[0] < r2) & (r2 < band[1])).all()
    assert (band[1] - band[0] < 0.2).all()


def test_judge_on_constructed_curves():
    pos = list(range(1, 7))
    rows = []
    for att, beyond in (("softmax", 0.3), ("relu", 0.7)):
        for mix, level in zip(MIXTURES, (0.9, 0.8, 0.6, 0.4)):
            rows += [{"depth": 3, "attention": att, "mixture": mix, "position": p,
                      "r2": level if p <= 4 else beyond * level} for p in pos]
    # the ReLU model before its own training must not be judged as a model
    rows += [{"depth": 3, "attention": "relu (at switch)", "mixture": mix, "position": p, "r2": -1.0}
             for mix in MIXTURES for p in pos]
    curves = pd.DataFrame(rows)
    base = pd.DataFrame([{"depth": 3, "mixture": "(1, 0)", "method": "MLP (3 layers, best epoch)", "position": p,
                          "r2": 0.95} for p in (2, 4)])
    j = gpt_study.judge(curves, base, train_examples=4)
    assert j["obj1"]["max_shortfall"].tolist() == pytest.approx([0.05, 0.05])
    assert set(j["obj1"]["attention"]) == {"softmax", "relu"}
    assert (j["shift"][list(MIXTURES)].diff(axis=1).iloc[:, 1:] < 0).all().all()
    drops = j["length"].set_index("attention")["drop_beyond"]
    assert drops["softmax"] == pytest.approx(-0.63) and drops["relu"] == pytest.approx(-0.27)


def test_profile_checks():
    with pytest.raises(ValueError, match="mlp_positions"):
        gpt_study.mlp_positions(gpt_study.PROFILES.resolve("quick", mlp_positions=(2, 40)))
    with pytest.raises(ProfileError, match="depths"):
        gpt_study.PROFILES.resolve("quick", depths=(3, "x"))
    with pytest.raises(ProfileError, match="depths"):
        gpt_study.PROFILES.resolve("quick", depths=(3, 9))
    with pytest.raises(ValueError, match="mixture"):
        gpt_study.test_prompts(gpt_study.PROFILES.resolve("quick"), 3, "(0, 1)")


def test_cost_counts_match_the_formulas():
    """REB's cost formulas 2·N_p·N_t (forward) and 6·N_p·n·E (training) against torch's FLOP counter."""
    c = gpt_speed.cost_comparison(examples=10, d=5, width=32, epochs=3, time_it=False)
    assert abs(c["icl_flops"] / c["icl_formula"] - 1) < 0.1
    assert abs(c["train_flops"] / c["train_formula"] - 1) < 0.1
    assert c["tokens"] == 22


def test_param_shift_evaluation():
    cfg = gpt_study.PROFILES.resolve("quick", depths=(2,), steps=5, test_prompts=64)
    torch.manual_seed(0)
    model = InContextGPT(gpt_study.configs(cfg, 2, "relu")[0]).eval()
    curves = gpt_study.param_shift_curves({(2, "relu"): model}, cfg)
    assert set(curves["mu"]) == set(gpt_study.PARAM_SHIFTS) and len(curves) == 3 * cfg["test_examples"]
    v = gpt_study.judge_param_shift(curves, cfg["train_examples"])
    assert v["max_drop"].iloc[0] == pytest.approx(
        v[0.0].iloc[0] - min(v[-0.5].iloc[0], v[0.5].iloc[0]))
    # the shifted prompts differ from the unshifted ones
    a = curves[curves["mu"] == 0.0]["r2"].to_numpy()
    b = curves[curves["mu"] == 0.5]["r2"].to_numpy()
    assert abs(a - b).max() > 1e-3


def test_baselines_are_cached_beside_the_checkpoints(tmp_path, monkeypatch):
    cfg = gpt_study.PROFILES.resolve("quick", depths=(2,), test_prompts=16, test_examples=8, train_examples=6,
                              mlp_positions=(3,), mlp_epochs=2, mlp_width=8)
    first = gpt_study._cached_baselines(cfg, 2, tmp_path, progress=False)
    assert (tmp_path / "baselines_depth2.json").is_file()

    real = gpt_study.baseline_curves

    def boom(*a, mlp=True, **k):  # the cheap baselines are always recomputed; the MLP only without a cache
        if mlp:
            raise AssertionError("recomputed although cached")
        return real(*a, mlp=False, **k)

    monkeypatch.setattr(gpt_study, "baseline_curves", boom)
    pd.testing.assert_frame_equal(gpt_study._cached_baselines(cfg, 2, tmp_path, progress=False), first)
    with pytest.raises(AssertionError, match="recomputed"):  # other settings: the cache is not used
        gpt_study._cached_baselines(dict(cfg, mlp_epochs=3), 2, tmp_path, progress=False)
    monkeypatch.setattr(bl, "VERSION", bl.VERSION + 1)
    with pytest.raises(AssertionError, match="recomputed"):  # a changed baseline: the cache is stale
        gpt_study._cached_baselines(cfg, 2, tmp_path, progress=False)


def test_target_families_differ_and_are_named():
    """tanh targets are a different function of the same weights (a family flag that is ignored would make
    the warm phase a no-op); the width overrides width_factor; a wrong family names the choices."""
    g = torch.Generator().manual_seed(0)
    relu, tanh = TaskConfig(d=3, depth=3), TaskConfig(d=3, depth=3, family="tanh", width=7)
    assert relu.K == 6 and tanh.K == 7
    Ws = [torch.randn(2, 6, 3, generator=g), torch.randn(2, 6, 6, generator=g), torch.randn(2, 1, 6, generator=g)]
    x = -2 + torch.randn(2, 5, 3, generator=g)
    a, b = apply_networks(Ws, x, "relu"), apply_networks(Ws, x, "tanh")
    assert a.shape == b.shape == (2, 5) and (a - b).abs().max() > 1e-2
    h = torch.tanh(x @ Ws[0].transpose(1, 2) / math.sqrt(3))
    h = torch.tanh(h @ Ws[1].transpose(1, 2) / math.sqrt(6))
    assert torch.allclose(b, (h @ Ws[2].transpose(1, 2) / math.sqrt(6))[..., 0])
    assert output_scale(3, 3, 2, 0.0, "tanh", 7) != output_scale(3, 3, 2, 0.0, "relu", 7)
    with pytest.raises(ValueError, match="family"):
        TaskConfig(d=3, family="sigmoid")


def test_warm_phase_draws_from_the_warm_task_then_the_target():
    """Steps before warm_steps see the warm family, later steps the target family (an off-by-one would
    train one step too long or short on each)."""
    task, warm = TaskConfig(d=3, depth=2), TaskConfig(d=3, depth=2, family="tanh", width=9)
    cfg = TrainConfig(steps=10, batch=4, examples=5, warm_steps=3, warm_task=warm)
    for step, source in ((0, warm), (2, warm), (3, task), (9, task)):
        g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
        xs, ys, _, _ = _batch(task, cfg, step, g1, "cpu")
        ex, ey = sample_prompts(source, 4, 5, g2)
        assert torch.equal(xs, ex) and torch.equal(ys, ey), step
    with pytest.raises(ValueError, match="warm_task"):
        TrainConfig(steps=10, warm_steps=3)
    with pytest.raises(ValueError, match="warm_steps"):
        TrainConfig(steps=10, warm_steps=11, warm_task=warm)


def test_warm_start_loads_the_given_weights_and_tracks_validation_r2():
    mcfg = GPTConfig(**TINY, attention="relu")
    task = TaskConfig(d=3, depth=2)
    torch.manual_seed(3)
    source = InContextGPT(GPTConfig(**TINY)).state_dict()
    cfg = TrainConfig(steps=2, batch=4, lr=1e-12, examples=6, log_every=1, eval_every=1, eval_prompts=32,
                      eval_from=2, init_from="a test model")
    res = train(mcfg, task, cfg, progress=False, init_state=source)
    for k, v in res["model"].state_dict().items():
        assert torch.allclose(v, source[k], atol=1e-8), k
    h = res["history"]
    assert list(h.columns[-2:]) == ["val_r2", "val_context_mean"] and len(h) == 2
    assert h["val_context_mean"].nunique() == 1  # fixed validation prompts
    with pytest.raises(ValueError, match="init_state and cfg.init_from"):
        train(mcfg, task, TrainConfig(steps=1, batch=2, examples=4), progress=False, init_state=source)
    with pytest.raises(ValueError, match="eval_every"):
        TrainConfig(steps=10, log_every=4, eval_every=6)


def test_test_prompts_are_a_prefix_whatever_their_number():
    """Block seeding: whole blocks of 512 prompts do not depend on how many are drawn -- the cached MLP
    baseline (on the first mlp_prompts = 512) stays valid when test_prompts grows."""
    cfg = gpt_study.PROFILES.resolve("quick", test_prompts=1024)
    xa, ya = gpt_study.test_prompts(cfg, 3, "(1, 0)")
    xb, yb = gpt_study.test_prompts(cfg, 3, "(1, 0)", count=600)
    xc, yc = gpt_study.test_prompts(cfg, 3, "(1, 0)", count=512)
    assert xa.shape[0] == 1024 and xb.shape[0] == 600
    assert torch.equal(xa[:512], xb[:512]) and torch.equal(ya[:512], yc) and torch.equal(xc, xa[:512])
    assert not torch.equal(xa[:512], xa[512:])  # the blocks differ


def test_switch_model_is_the_softmax_weights_under_relu_attention():
    cfg = gpt_study.PROFILES.resolve("quick", steps=20, warm_steps=10, relu_steps=5, test_prompts=32)
    pair = gpt_study.train_pair(cfg, 2, progress=False)
    assert pair["complete"] and pair["switch"].cfg.attention == "relu"
    soft = pair["softmax"]["model"].state_dict()
    assert all(torch.equal(v, soft[k]) for k, v in pair["switch"].state_dict().items())
    assert not all(torch.equal(v, soft[k]) for k, v in pair["relu"]["model"].state_dict().items())


def test_judge_depth_both_sides():
    rows = [{"n_layer": L, "attention": a, "position": p, "r2": r}
            for a, rs in (("softmax", {4: 0.80, 6: 0.85, 10: 0.90}), ("relu", {4: 0.80, 6: 0.85, 10: 0.79}))
            for L, r in rs.items() for p in (15, 30)]
    j = gpt_depth.judge_depth(pd.DataFrame(rows)).set_index(["attention", "position"])
    assert j.loc[("softmax", 15), "deeper_better"] and j.loc[("softmax", 15), "gain"] == pytest.approx(0.10)
    assert not j.loc[("relu", 30), "deeper_better"] and j.loc[("relu", 30), "shallowest"] == pytest.approx(0.80)


def test_shortcut_is_exact_on_inputs_along_one_direction():
    """If every input lies on one ray, a positively homogeneous target is y = c·(1ᵀx): the shortcut
    (context mean × 1ᵀx_k / 1ᵀx̄) then predicts every label after the first exactly, the context mean does
    not -- the property the plateau hypothesis rests on."""
    g = torch.Generator().manual_seed(1)
    s = 1 + torch.rand(64, 10, 1, generator=g)
    xs = -2 * s * torch.ones(1, 1, 4)
    ys = torch.relu(torch.randn(64, 1, generator=g)) * xs.sum(-1)
    pred = gpt_plateau.shortcut_predictor(xs, ys)
    assert torch.allclose(pred[:, 1:], ys[:, 1:], atol=1e-5)
    assert (bl.context_mean(xs, ys)[:, 1:] - ys[:, 1:]).abs().max() > 0.1
    assert torch.equal(pred[:, 0], torch.zeros(64))


def test_leave_step_reads_the_midpoint():
    levels = pd.DataFrame({"family": ["a", "b"], "context_mean": [0.7, 0.8], "least_squares": [0.9, 1.0]})
    hist = pd.DataFrame({"family": ["a"] * 3 + ["b"] * 3, "step": [10, 20, 30] * 2,
                         "val_r2": [0.75, 0.81, 0.85, 0.80, 0.85, 0.89]})
    out = gpt_plateau.leave_step(hist, levels).set_index("family")
    assert out.loc["a", "left_at_step"] == 20 and out.loc["a", "final_excess"] == pytest.approx(0.15)
    assert math.isnan(out.loc["b", "left_at_step"])  # 0.89 < midpoint 0.9: never left



def test_profiles_are_checked_as_a_whole_against_memory(monkeypatch):
    """Settings each in range can together need terabytes: refused at resolve time with the estimate, not in
    a notebook cell. The estimate grows with the prompts it evaluates at once (a dropped factor would not)."""
    from icdl.book import profiles

    small = gpt_study.memory_estimate(gpt_study.PROFILES.resolve("quick"))
    big = gpt_study.memory_estimate(gpt_study.PROFILES.resolve("quick", test_prompts=2560))
    assert 9 < big / small <= 10.5
    with pytest.raises(ProfileError, match=r"needs about [\d,.]+ GiB of memory; this machine has"):
        gpt_study.PROFILES.resolve("reference", test_prompts=100_000, test_examples=200, n_embd=1024, n_layer=24)
    monkeypatch.setattr(profiles, "machine_memory", lambda: 2.0**40)  # a 1 TiB machine takes the paper profile
    assert gpt_study.PROFILES.resolve("paper")["test_prompts"] == 6400


def test_a_rerun_from_scratch_reproduces_the_committed_reference():
    """The first logged steps of the committed reference model (depth-3 softmax, one thread), retrained from
    scratch here, give the same losses to the last bit: seeds, data stream and arithmetic are pinned (an
    unseeded draw, a changed default or a kernel chosen at run time would move them)."""
    from pathlib import Path

    from icdl.book.results import load_checkpoint

    ckpt = Path(__file__).resolve().parents[1] / "results/gpt_icl/checkpoints/reference/gpt_depth3_softmax.pt"
    committed = load_checkpoint(ckpt)["history"][:2]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        rcfg = gpt_study.PROFILES.resolve("reference")
        mcfg, tcfg, trcfg = gpt_study.configs(rcfg, 3, "softmax")
        res = train(mcfg, tcfg, trcfg, max_steps_this_call=committed[-1]["step"], progress=False)
    finally:
        torch.set_num_threads(threads)
    rerun = res["history"].to_dict("records")
    assert [r["step"] for r in rerun] == [r["step"] for r in committed]
    assert [r["loss"] for r in rerun] == [r["loss"] for r in committed]


def test_smoke_command_reports_and_fails_fast_without_a_gpu(capsys):
    """The GPU smoke test's logic, run for two steps on the CPU; ``--device cuda`` on a machine without a GPU
    is one line and exit code 2 before any work."""
    from icdl.gpt_icl.__main__ import main

    assert main(["--profile", "reference", "--smoke", "2", "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "steps/s" in out and "for a large matmul here" in out and "on 8 device(s)" in out
    if not torch.cuda.is_available():
        with pytest.raises(SystemExit) as exc:
            main(["--profile", "paper", "--smoke", "100", "--device", "cuda"])
        assert exc.value.code == 2 and "no CUDA device" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--profile", "reference", "--smoke", "0"])


@pytest.mark.parametrize("attention", ["softmax", "relu"])
def test_training_flops_count_the_attention_products(attention):
    """FLOPs of a step = 6 × tokens × (linear weights) + 12 × layers × batch × T² × width (the score and value
    products, forward and backward). The fused CPU softmax kernel is invisible to torch's FLOP counter; a
    count that dropped it was 17 % low at the reference size and flattered nothing but hid work."""
    from icdl.gpt_icl.speed import matmul_ceiling
    from icdl.gpt_icl.training import flops_per_step

    cfg = GPTConfig(**{**TINY, "attention": attention})
    batch, examples = 4, 6
    T = 2 * examples
    model = InContextGPT(cfg)
    linear = sum(m.in_features * m.out_features for m in model.modules() if isinstance(m, torch.nn.Linear))
    expected = 6 * batch * T * linear + 12 * cfg.n_layer * batch * T * T * cfg.n_embd
    counted = flops_per_step(cfg, batch, examples)
    assert abs(counted - expected) <= 0.02 * expected, (counted, expected)
    ceiling = matmul_ceiling(cfg, batch, examples, repeats=2)
    assert ceiling["step_flops"] == counted and ceiling["gemm_flops"] == 6 * batch * T * linear


def _ddp_worker(rank, world, port, ckpt, out, max_steps):
    """One rank of a gloo process group on this machine's loopback: train the tiny model and, on rank 0,
    save the loss history and the weights."""
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    try:
        res = train(*_ddp_setup(), checkpoint=ckpt, max_steps_this_call=max_steps, progress=False)
        if rank == 0:
            torch.save({"loss": res["history"]["loss"].tolist(), "state": res["model"].state_dict()}, out)
    finally:
        dist.destroy_process_group()


def _ddp_setup():
    return (GPTConfig(**TINY), TaskConfig(d=3, depth=2), TrainConfig(steps=6, batch=8, lr=1e-2, examples=6,
                                                                      log_every=1))


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_data_parallel_training_equals_one_process_and_resumes_across_world_sizes(tmp_path):
    """Two gloo processes with 4 prompts each follow one process with the batch of 8 (loss curve and weights,
    up to the order of the sums); a run checkpointed by one process after 3 steps and resumed by two ends
    where the uninterrupted run ends. The models are compared by their predictions, not entry by entry:
    the key biases get gradients that are zero up to rounding (softmax ignores them), and Adam turns such
    rounding into full steps. A rank that drew its own batch, or gradients summed instead of averaged,
    would fail here."""
    import torch.multiprocessing as mp

    torch.set_num_threads(1)
    single = train(*_ddp_setup(), progress=False)
    mp.spawn(_ddp_worker, args=(2, _free_port(), None, tmp_path / "ddp.pt", None), nprocs=2, join=True)
    ddp = torch.load(tmp_path / "ddp.pt", weights_only=True)
    assert ddp["loss"] == pytest.approx(single["history"]["loss"].tolist(), rel=1e-5)
    xs, ys = sample_prompts(TaskConfig(d=3, depth=2), 16, 6, torch.Generator().manual_seed(9))

    def predictions(state):
        m = InContextGPT(GPTConfig(**TINY)).eval()
        m.load_state_dict(state)
        with torch.no_grad():
            return m(xs, ys)

    expected = predictions(single["model"].state_dict())
    assert torch.allclose(predictions(ddp["state"]), expected, rtol=1e-4, atol=1e-5)
    # stop after 3 steps in one process, resume in two
    ckpt = tmp_path / "resume.pt"
    train(*_ddp_setup(), checkpoint=ckpt, max_steps_this_call=3, progress=False)
    mp.spawn(_ddp_worker, args=(2, _free_port(), ckpt, tmp_path / "resumed.pt", None), nprocs=2, join=True)
    resumed = torch.load(tmp_path / "resumed.pt", weights_only=True)
    assert torch.allclose(predictions(resumed["state"]), expected, rtol=1e-4, atol=1e-5)
    assert resumed["loss"] == pytest.approx(single["history"]["loss"].tolist(), rel=1e-5)


def _timing(spans, workers=2, complete=True):
    jobs = [{"name": n, "command": f"python -m icdl.gpt_icl {n}", "start_s": a, "seconds": b - a, "returncode": 0,
             "log": ""} for n, a, b in spans]
    return {"jobs": jobs, "workers": workers, "wall_s": max(b for _, _, b in spans), "complete": complete}


def test_stage_times_pack_jobs_into_worker_lanes_and_refuse_too_many_at_once():
    """Lanes: a job takes the first worker free at its start (catches two overlapping jobs drawn in one
    lane); a file whose jobs overlap more than its worker count is refused (a timing file from another
    run); the summary's core-minutes are the sum of the jobs and the target is judged on the wall time."""
    from icdl.gpt_icl.speed import stage_times, timing_summary

    data = _timing([("train a", 0, 600), ("train b", 0, 300), ("train c", 300, 900), ("evaluate", 600, 1200)])
    st = stage_times(data)
    assert st["worker"].tolist() == [1, 2, 2, 1]
    assert st["kind"].tolist() == ["train"] * 3 + ["evaluate"]
    assert st["minutes"].tolist() == pytest.approx([10, 5, 10, 10])
    summ = timing_summary(data, target_min=20)
    assert summ["wall_min"] == pytest.approx(20) and summ["core_min"] == pytest.approx(35)
    assert summ["busy"] == pytest.approx(35 / 40) and summ["within_target"]
    assert not timing_summary(data, target_min=19.9)["within_target"]
    assert not timing_summary({**data, "complete": False}, target_min=60)["within_target"]
    with pytest.raises(ValueError, match="all 2 workers are busy"):
        stage_times(_timing([("a", 0, 10), ("b", 1, 10), ("c", 2, 10)]))


def test_the_committed_reference_timing_covers_the_whole_run():
    """The committed timed run (``--workers``) ran every job of the schedule to exit 0, no worker ran two jobs
    at once, and the core-minutes fit in workers × wall (a file from a partial run, or an edited one, fails)."""
    from icdl.book.results import load_result
    from icdl.gpt_icl.pipeline import schedule
    from icdl.gpt_icl.speed import stage_times, timing_summary

    obj = load_result(gpt_study.PROFILES.folder() / "timing.reference.json")
    data = obj["data"]
    st = stage_times(data)
    expected = {j.name for j in schedule(gpt_study.PROFILES.resolve("reference"), "reference")}
    assert set(st["stage"]) == expected and (st["exit"] == 0).all() and data["complete"]
    for _, lane in st.groupby("worker"):
        lane = lane.sort_values("start_min")
        assert (lane["start_min"].iloc[1:].to_numpy() >= (lane["start_min"] + lane["minutes"]).iloc[:-1].to_numpy()
                - 1e-6).all()
    summ = timing_summary(data)
    assert 0.5 < summ["busy"] <= 1.0
    assert obj["provenance"]["command"] == f"python -m icdl.gpt_icl --profile reference --workers {data['workers']}"
    # the chapter's result files are the ones this timed run wrote (a later partial rerun of one part would
    # leave the timing describing other numbers than the book shows)
    for part in ("icl", "shift", "depth", "plateau"):
        prov = load_result(gpt_study.PROFILES.folder() / f"{part}.reference.json")["provenance"]
        assert prov["git_commit"] == obj["provenance"]["git_commit"], part


def test_concurrent_smoke_trains_in_single_threaded_processes():
    """Two processes at once, each one thread, each the profile's model: catches workers that inherit the
    parent's thread count (four threads on two cores) or time another model than the one-process figure."""
    from icdl.gpt_icl.speed import concurrent_smoke, smoke

    cfg = gpt_study.PROFILES.resolve("quick")
    both = concurrent_smoke(cfg, processes=2, steps=3)
    one = smoke(cfg, device="cpu", steps=1, warmup=0, matmul_n=64)
    assert [r["threads"] for r in both] == [1, 1]
    assert [r["flops_per_step"] for r in both] == [one["flops_per_step"]] * 2

def test_speed_table_keeps_two_threads_and_two_processes_apart_and_takes_medians():
    """Three rounds per setting: the table's share is the median (an outlier round does not move it, a mean
    would), the spread is min..max, and two processes × one thread is its own row beside one process × two
    threads (grouping by threads alone would average them)."""
    from icdl.gpt_icl.speed import speed_table

    def run(p, t, share):
        return {"processes": p, "threads": t, "steps_per_s": 10 * share, "achieved_flops": share * 100.0,
                "matmul_flops": 100.0, "share_of_matmul": share}

    runs = [run(1, 1, s) for s in (0.50, 0.46, 0.90)] + [run(1, 2, s) for s in (0.35, 0.38, 0.36)] + \
        [run(2, 2, s) for s in (0.48, 0.52, 0.50)]
    st = speed_table({"runs": runs}).set_index(["processes", "threads"])
    assert st.loc[(1, 1), "share_of_matmul"] == pytest.approx(0.50)
    assert (st.loc[(1, 1), "share_lo"], st.loc[(1, 1), "share_hi"]) == pytest.approx((0.46, 0.90))
    assert st.loc[(1, 2), "share_of_matmul"] == pytest.approx(0.36)
    assert st.loc[(2, 2), "share_of_matmul"] == pytest.approx(0.50)
    assert st["rounds"].tolist() == [3, 3, 3]
