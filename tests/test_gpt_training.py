"""The trainer (icdl.gpt_icl.core.training): curriculum, warm phase and warm start, exact resumption, data parallel."""

import pandas as pd
import pytest
import torch

from icdl.gpt_icl.core import baselines as bl
from icdl.gpt_icl.core.model import GPTConfig, InContextGPT
from icdl.gpt_icl.core.tasks import TaskConfig, sample_prompts
from icdl.gpt_icl.core.training import TrainConfig, _batch, curriculum, load_model, train
from icdl.repro.checkpoints import CheckpointError

TINY = dict(d=3, n_layer=2, n_head=2, n_embd=16, max_examples=12)


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
    with pytest.raises(CheckpointError, match="no checkpoint"):
        load_model(tmp_path / "missing.pt")


def test_training_reduces_the_loss():
    res = train(GPTConfig(**TINY), TaskConfig(d=3, depth=2), TrainConfig(steps=150, batch=16, lr=3e-3, examples=10,
                                                                          log_every=10), progress=False)
    h = res["history"]["loss"]
    assert h.iloc[-3:].mean() < 0.8 * h.iloc[:3].mean()


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


class _Oracle(torch.nn.Module):
    """A stand-in model that predicts every label exactly from position ``first`` on and 0 before it."""

    def __init__(self, first):
        super().__init__()
        self.w, self.first = torch.nn.Parameter(torch.zeros(1)), first

    def forward(self, xs, ys):
        out = ys.clone()
        out[:, : self.first - 1] = 0.0
        return out


def test_validation_r2_averages_positions_from_eval_from_on():
    """``excess_r2(…, first)`` averages R² over positions first … k (1-based): a model exact from position
    ``first`` on scores 1.0; a window starting one position early would include a position it gets wrong."""
    from icdl.gpt_icl.core.training import excess_r2

    xs, ys = sample_prompts(TaskConfig(d=3, depth=2), 256, 8, torch.Generator().manual_seed(2))
    model_r2, cm_r2 = excess_r2(_Oracle(4), xs, ys, 4)
    assert model_r2 == pytest.approx(1.0)
    assert excess_r2(_Oracle(4), xs, ys, 3)[0] < 0.9
    assert cm_r2 == pytest.approx(float(bl.r2_across_prompts(bl.context_mean(xs, ys), ys)[3:].mean()))


def test_the_fast_step_trains_the_same_function_and_old_checkpoints_still_match(tmp_path):
    """``TrainConfig.fast`` (compiled forward, fused Adam) follows the plain step up to rounding -- a compiled
    graph that dropped a LayerNorm or Adam's bias correction would drift far -- and is not stored when off, so a
    checkpoint written before the setting existed resumes."""
    mcfg, task = GPTConfig(**TINY), TaskConfig(d=3, depth=2)
    plain_cfg = TrainConfig(steps=6, batch=4, lr=1e-3, examples=6, log_every=3)
    assert "fast" not in plain_cfg.to_dict() and TrainConfig(fast=True).to_dict()["fast"] is True
    plain = train(mcfg, task, plain_cfg, progress=False)
    fast = train(mcfg, task, TrainConfig(steps=6, batch=4, lr=1e-3, examples=6, log_every=3, fast=True),
                 progress=False)
    moved = max(float((v - p).abs().max()) for v, p in zip(plain["model"].state_dict().values(),
                                                           InContextGPT(mcfg).state_dict().values()))
    gap = max(float((v - fast["model"].state_dict()[k]).abs().max()) for k, v in plain["model"].state_dict().items())
    assert gap < 1e-4 < moved  # the same training up to rounding, and training moved the weights
    ckpt = tmp_path / "old.pt"
    train(mcfg, task, plain_cfg, checkpoint=ckpt, max_steps_this_call=3, progress=False)
    state = torch.load(ckpt, weights_only=True)
    assert "fast" not in state["settings"]["train"]
    assert train(mcfg, task, plain_cfg, checkpoint=ckpt, progress=False)["steps_done"] == 6


def test_validation_prompts_are_not_the_training_stream():
    """The fixed validation prompts have a seed of their own: none of them is a prompt of the first training
    batches, and two runs that differ only in their seed are scored on different validation prompts (the bug:
    validation drawn with the training stream's seed, scoring the model on prompts it trained on; it moved only
    the plateau figure's numbers)."""
    from icdl.gpt_icl.core.training import SEEDS, validation_prompts

    task = TaskConfig(d=3, depth=2)
    cfg = TrainConfig(steps=5, batch=16, examples=8, eval_every=5, log_every=5, eval_prompts=64, seed=3)
    vx, _ = validation_prompts(task, cfg)
    g = torch.Generator().manual_seed(cfg.seed + SEEDS["prompts"])
    seen = torch.cat([_batch(task, cfg, step, g, "cpu")[0] for step in range(5)])
    first = vx[:, 0, :]  # each prompt's first input is enough to tell two prompts apart
    assert not any(torch.isclose(first[i], seen[:, 0, :]).all(1).any() for i in range(len(first)))
    other, _ = validation_prompts(task, TrainConfig(**{**cfg.to_dict(), "seed": 4}))
    assert not torch.equal(other, vx)
    assert SEEDS["validation"] != SEEDS["prompts"]


def test_a_continued_run_takes_the_steps_of_one_run_through_and_adds_a_validation_curve(tmp_path):
    """A finished run of 8 steps continued to 16 under a validation curve ends with the weights of one 16-step run
    (optimiser moments and prompt stream carried: a continuation that restarted Adam or the generator would differ)
    and measures the validation R² at its evaluations. Only the length and what it measures may change: another
    learning rate, an unfinished source, fewer steps or a target that exists are refused in one line, nothing
    written."""
    from dataclasses import replace

    from icdl.gpt_icl.core.training import continue_checkpoint

    mcfg, task = GPTConfig(**TINY), TaskConfig(d=3, depth=2)
    short = TrainConfig(steps=8, batch=4, lr=1e-3, examples=6, log_every=2)
    longer = replace(short, steps=16, log_every=4, eval_every=8, eval_prompts=16, eval_from=3)
    whole = train(mcfg, task, replace(short, steps=16), progress=False)
    src, dst = tmp_path / "n01.pt", tmp_path / "flat.pt"
    train(mcfg, task, short, checkpoint=src, progress=False)
    assert continue_checkpoint(src, dst, mcfg, task, longer, command="flat", source_command="n01") == 8
    done = train(mcfg, task, longer, checkpoint=dst, progress=False)
    assert done["steps_done"] == 16
    for k, v in whole["model"].state_dict().items():
        assert torch.equal(v, done["model"].state_dict()[k]), k
    evals = done["history"].dropna(subset=["val_r2"])
    assert list(evals["step"]) == [16] and list(done["history"]["step"])[:4] == [2, 4, 6, 8]
    with pytest.raises(CheckpointError, match="exists already"):
        continue_checkpoint(src, dst, mcfg, task, longer, command="flat", source_command="n01")
    other = tmp_path / "other.pt"
    with pytest.raises(CheckpointError, match=r"train\.lr differ"):
        continue_checkpoint(src, other, mcfg, task, replace(longer, lr=2e-3), command="flat", source_command="n01")
    with pytest.raises(CheckpointError, match="only adds steps"):
        continue_checkpoint(src, other, mcfg, task, replace(longer, steps=6, eval_every=2, log_every=2),
                            command="flat", source_command="n01")
    train(mcfg, task, short, checkpoint=tmp_path / "half.pt", max_steps_this_call=3, progress=False)
    with pytest.raises(CheckpointError, match="unfinished"):
        continue_checkpoint(tmp_path / "half.pt", other, mcfg, task, longer, command="flat", source_command="n01")
    assert not other.exists()
