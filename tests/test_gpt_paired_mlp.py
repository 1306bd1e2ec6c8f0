"""The MLP on the paired sets, block by block (icdl.gpt_icl.core.mlp_blocks; the shards: core.paired_mlp): what the
result reads does not depend on how the blocks were computed -- in one call, cached, killed half-way and resumed,
or split over shards.

The bugs these would catch: a block's MLPs seeded by their index in the block rather than in the set (every block
would train the first block's networks); the epoch chosen per block instead of on all the prompts; a block's error
at another epoch than the chosen one; a resumed cache that recomputes or drops blocks, or reads another run's file;
a shard deal that loses or repeats a file.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from icdl.gpt_icl.core import baselines as bl
from icdl.gpt_icl.core import main_study, mlp_blocks, paired_mlp
from icdl.gpt_icl.core.evaluation import PAIRED
from icdl.gpt_icl.core.intervals import BLOCKS, block_sums, prompt_blocks
from icdl.repro.files import ResultFileError

CFG = main_study.PROFILES.resolve("quick", mlp_positions=(2, 5), mlp_epochs=12)
PROMPTS = 64  # two prompts a block


def _prompts(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    xs = torch.randn(PROMPTS, CFG["test_examples"], CFG["d"], generator=g)
    ys = torch.tanh(xs[..., 0]) + 0.3 * torch.randn(PROMPTS, CFG["test_examples"], generator=g)  # learnable, noisy
    return xs, ys


def _sets():
    xs, ys = _prompts()
    return {PAIRED: ({"positions": [p + 1 for p in CFG["mlp_positions"]]}, xs, ys)}


def test_a_block_trains_the_mlps_the_whole_set_would():
    xs, ys = _prompts()
    full = bl.trained_mlp(xs, ys, 5, depth=3, width=CFG["mlp_width"], epochs=CFG["mlp_epochs"], seed=CFG["seed"])
    parts = prompt_blocks(PROMPTS, BLOCKS)
    ours = np.stack([mlp_blocks.block_errors(CFG, 3, xs, ys, 5, sl) for sl in parts])
    whole = np.stack([((full["pred"][:, sl] - ys[sl, 5][None]) ** 2).double().sum(1).numpy() for sl in parts])
    assert ours.shape == (BLOCKS, CFG["mlp_epochs"])
    assert np.allclose(ours, whole, rtol=1e-5, atol=1e-9)  # float rounding of another batch shape, no more
    # the positive control: the MLPs of block 5 seeded as if they were the set's first prompts
    sl = parts[5]
    wrong, _ = bl.mlp_predictions(xs[sl], ys[sl], 5, depth=3, width=CFG["mlp_width"], epochs=CFG["mlp_epochs"],
                                  seed=CFG["seed"])
    wrong_err = ((wrong - ys[sl, 5][None]) ** 2).double().sum(1).numpy()
    assert not np.allclose(wrong_err, whole[5], rtol=1e-3)


def test_the_epoch_is_chosen_on_every_prompt_and_each_block_read_at_it():
    """The rows equal the whole-set computation: R² at the epoch that is best over all the prompts, and each block's
    squared error at that epoch (a per-block choice would give every block its own best, a smaller error)."""
    (spec, xs, ys) = _sets()[PAIRED]
    curves, blocks = mlp_blocks.rows(CFG, 3, _sets())
    pred = torch.zeros_like(ys)
    for p in CFG["mlp_positions"]:
        full = bl.trained_mlp(xs, ys, p, depth=3, width=CFG["mlp_width"], epochs=CFG["mlp_epochs"], seed=CFG["seed"])
        pred[:, p] = full["pred"][full["best_epoch"]]
        got = next(c["r2"] for c in curves if c["position"] == p + 1)
        assert got == pytest.approx(full["best_r2"], abs=1e-5)
        errors = np.stack([mlp_blocks.block_errors(CFG, 3, xs, ys, p, sl) for sl in prompt_blocks(PROMPTS, BLOCKS)])
        per_block_best = errors.min(1).sum()
        assert sum(next(b["sse"] for b in blocks if b["position"] == p + 1)) > per_block_best  # not per block
    want = block_sums(pred, ys, spec["positions"])
    for i, q in enumerate(spec["positions"]):
        row = next(b for b in blocks if b["position"] == q)
        assert row["model"] == bl.mlp_method(3) and row["seed"] == -1 and row["depth"] == 3
        assert np.allclose(row["sse"], want[i], rtol=1e-4)


def test_a_cache_killed_half_way_resumes_to_the_same_numbers(tmp_path, monkeypatch):
    """Rows from a fresh cache, and from one that lost half its blocks (a kill between two saves), equal the rows
    computed without a cache, bit for bit; a file of other settings is not read but recomputed."""
    plain = mlp_blocks.rows(CFG, 3, _sets())
    cached = mlp_blocks.rows(CFG, 3, _sets(), folder=tmp_path, command="cmd")
    assert cached == plain
    files = sorted(tmp_path.glob("mlp_depth3_paired_q*.json"))
    assert [f.name for f in files] == ["mlp_depth3_paired_q3.json", "mlp_depth3_paired_q6.json"]
    obj = json.loads(files[0].read_text())
    assert len(obj["data"]["blocks"]) == BLOCKS and obj["provenance"]["command"] == "cmd"
    calls = []
    real = mlp_blocks.block_errors

    def counted(*a, **k):
        calls.append(a[-1])
        return real(*a, **k)

    obj["data"]["blocks"] = {k: v for k, v in obj["data"]["blocks"].items() if int(k) % 2}  # half the blocks lost
    from icdl.repro.results import save_result

    save_result(files[0], obj["data"], provenance=obj["provenance"])
    monkeypatch.setattr(mlp_blocks, "block_errors", counted)
    resumed = mlp_blocks.rows(CFG, 3, _sets(), folder=tmp_path, command="cmd")
    monkeypatch.undo()
    assert resumed == plain and len(calls) == BLOCKS // 2  # only the lost blocks computed again
    other = {**CFG, "mlp_epochs": 7}
    again = mlp_blocks.rows(other, 3, _sets(), folder=tmp_path, command="cmd")
    assert len(json.loads(files[0].read_text())["data"]["blocks"]["0"]) == 7 and again != plain


def test_a_damaged_cache_file_is_refused_in_one_line_naming_it_and_the_command(tmp_path):
    mlp_blocks.rows(CFG, 3, _sets(), folder=tmp_path, command="python -m x --profile p")
    path = tmp_path / "mlp_depth3_paired_q3.json"
    path.write_text(path.read_text()[:200])
    with pytest.raises(ResultFileError, match=r"mlp_depth3_paired_q3\.json.*delete it and rerun python -m x"):
        mlp_blocks.rows(CFG, 3, _sets(), folder=tmp_path, command="python -m x --profile p")


def test_the_shards_deal_every_file_once_and_about_the_same_work():
    cfg = main_study.PROFILES.resolve("n01-flat")
    every = paired_mlp.units(cfg)
    assert len(every) == len(set(every)) == 3 * (1 + 3 + 2 * 3)  # per depth: curves, main's 3 positions, shift's 6
    for n in (1, 2, 3):
        shards = [paired_mlp.shard_units(cfg, (i, n)) for i in range(n)]
        assert sorted(u for s in shards for u in s) == sorted(every)  # none lost, none twice
        work = [sum(paired_mlp._cost(cfg, u) for u in s) for s in shards]
        assert max(work) - min(work) <= max(paired_mlp._cost(cfg, u) for u in every)
    with pytest.raises(ValueError, match="a shard is I/N"):
        paired_mlp.shard_units(cfg, (2, 2))
