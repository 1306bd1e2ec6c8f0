"""How every model and baseline of ICDL sec. 5 is scored: the same seeded test prompts for all of them,
R² per prompt position across prompts (chapter ``gpt_icl`` says why not per prompt), bootstrap bands.

Column names of the frames returned here: ``position`` is the query's index k (1-based: the query sees
k − 1 examples); ``mixture`` a key of :data:`~icdl.gpt_icl.core.tasks.MIXTURES`; ``method`` a baseline name of
:mod:`~icdl.gpt_icl.core.baselines`; ``mu`` the target parameters' mean (objective 3).
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import torch

from icdl.gpt_icl.core import baselines as bl
from icdl.gpt_icl.core.intervals import block_sums, label_sums
from icdl.gpt_icl.core.schedule import target_task
from icdl.gpt_icl.core.tasks import MIXTURES, PRETRAINING, sample_prompts
from icdl.repro.files import ResultFileError
from icdl.repro.results import frame_to_lists, load_result, provenance, save_result

#: test prompts are drawn in blocks of this many with a seed per block, so that the first block is the same
#: whatever the number of prompts (and the MLP baseline, run on the first ``mlp_prompts``, sees a prefix)
TEST_BLOCK = 512

#: the seeds of the test prompts: ``base + per_depth · depth + index`` and ``per_block · block`` on top
#: (index: the mixture's position in MIXTURES; for the shifted targets ``int(100 μ)``)
SEEDS = {"mixtures": 10_000, "param_shift": 30_000, "per_depth": 97, "per_block": 1_000_003}

#: the means of the target parameters of objective 3 (0: the pretraining distribution)
PARAM_SHIFTS = (0.0, -0.5, 0.5)


def test_prompts(cfg, depth: int, mixture: str, *, count: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The test prompts of one (target depth, mixture), the same for every model and baseline: the first
    ``count`` (default: all ``test_prompts``), drawn in blocks of :data:`TEST_BLOCK` prompts, one seed each."""
    if mixture not in MIXTURES:
        raise ValueError(f"mixture must be one of {list(MIXTURES)}, got {mixture!r}")
    task = target_task(cfg, depth, omega=MIXTURES[mixture])
    count = cfg["test_prompts"] if count is None else count
    seed = SEEDS["mixtures"] + SEEDS["per_depth"] * depth + list(MIXTURES).index(mixture)
    parts = []
    for b, start in enumerate(range(0, count, TEST_BLOCK)):
        g = torch.Generator().manual_seed(seed + SEEDS["per_block"] * b)
        parts.append(sample_prompts(task, min(TEST_BLOCK, count - start), cfg["test_examples"], g, scale_mu=0.0))
    return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])


@torch.no_grad()
def predict(model, xs: torch.Tensor, ys: torch.Tensor) -> torch.Tensor:
    """The model's predictions for every position of every prompt, on the model's device, back on the CPU."""
    device = next(model.parameters()).device
    return model(xs.to(device), ys.to(device)).cpu()


def r2_rows(pred: torch.Tensor, ys: torch.Tensor, *, band: bool = False, **keys) -> list[dict]:
    """One row per query position (``position`` 1-based) with the R² across prompts, its bootstrap band
    (``lo``, ``hi``) with ``band``, and ``keys`` repeated in every row."""
    r2 = bl.r2_across_prompts(pred, ys).numpy()
    rows = [{**keys, "position": i + 1, "r2": float(r2[i])} for i in range(len(r2))]
    if band:
        lo, hi = bl.bootstrap_band(pred, ys)
        for i, row in enumerate(rows):
            row["lo"], row["hi"] = float(lo[i]), float(hi[i])
    return rows


def evaluate(model, cfg, depth: int) -> pd.DataFrame:
    """R² per position and its bootstrap band for one trained model on every mixture."""
    rows = []
    for mixture in MIXTURES:
        xs, ys = test_prompts(cfg, depth, mixture)
        rows += r2_rows(predict(model, xs, ys), ys, band=True, mixture=mixture)
    return pd.DataFrame(rows)


def evaluate_param_shift(model, cfg, depth: int, mus=PARAM_SHIFTS) -> pd.DataFrame:
    """ICDL objective 3 (Figs. 5–6): R² per position on test prompts whose target parameters are drawn from
    ``N(μ, I)`` instead of ``N(0, I)`` (inputs from the pretraining mixture; labels on the pretraining scale)."""
    rows = []
    for mu in mus:
        xs, ys = shifted_prompts(cfg, depth, mu)
        rows += r2_rows(predict(model, xs, ys), ys, mu=mu)
    return pd.DataFrame(rows)


def least_squares_param_shift(cfg, depths, mus=PARAM_SHIFTS) -> pd.DataFrame:
    """Least squares' R² per position on objective 3's test prompts (:func:`shifted_prompts`, every μ and
    target depth): the yardstick beside the models' curves of :func:`evaluate_param_shift`."""
    rows = []
    for depth in depths:
        for mu in mus:
            xs, ys = shifted_prompts(cfg, depth, mu)
            rows += r2_rows(bl.least_squares(xs, ys), ys, depth=depth, mu=mu)
    return pd.DataFrame(rows)


def shifted_prompts(cfg, depth: int, mu: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The test prompts of objective 3 at one μ: targets with parameters from ``N(μ, I)``, inputs from the
    pretraining mixture, labels divided by the output scale of the *pretraining* targets (μ = 0), so that a
    shift that inflates the outputs shows as larger labels, as the trained model would meet them."""
    g = torch.Generator().manual_seed(SEEDS["param_shift"] + SEEDS["per_depth"] * depth + int(100 * mu))
    return sample_prompts(target_task(cfg, depth, mu=mu), cfg["test_prompts"], cfg["test_examples"], g,
                          scale_mu=0.0)


def cheap_baselines(xs: torch.Tensor, ys: torch.Tensor) -> dict[str, torch.Tensor]:
    """The predictions of the baselines that need no training, by name."""
    return {bl.CONTEXT_MEAN: bl.context_mean(xs, ys), bl.LEAST_SQUARES: bl.least_squares(xs, ys),
            bl.NEAREST_NEIGHBOURS: bl.nearest_neighbours(xs, ys)}


def baseline_curves(cfg, depth: int, *, progress: bool = True, mlp: bool = True) -> pd.DataFrame:
    """R² per position of the context mean, least squares, 3-NN (every position, all test prompts) and, with
    ``mlp``, the trained MLP (the profile's ``mlp_positions``, the first :func:`curve_prompts` test prompts: it
    trains one network per prompt and position) on the test prompts of every mixture."""
    from tqdm import tqdm

    rows = []
    for mixture in MIXTURES:
        xs, ys = test_prompts(cfg, depth, mixture)
        for name, pred in cheap_baselines(xs, ys).items():
            rows += r2_rows(pred, ys, mixture=mixture, method=name)
        if not mlp:
            continue
        m = min(curve_prompts(cfg), len(ys))
        for p in tqdm(mlp_positions(cfg), desc=f"MLP baseline depth {depth} {mixture}", disable=not progress):
            res = bl.trained_mlp(xs[:m], ys[:m], p, depth=depth, width=cfg["mlp_width"], epochs=cfg["mlp_epochs"],
                                 seed=cfg["seed"])
            rows.append({"mixture": mixture, "method": bl.mlp_method(depth), "position": p + 1,
                         "r2": res["best_r2"]})
    return pd.DataFrame(rows, columns=["mixture", "method", "position", "r2"])


def curve_prompts(cfg) -> int:
    """How many test prompts of each mixture the MLP's R² curves (the figures') are computed on: the profile's
    ``curve_mlp_prompts`` where it scores the judged MLP on more prompts than the curves need, else ``mlp_prompts``."""
    return cfg.get("curve_mlp_prompts", cfg["mlp_prompts"])


def mlp_positions(cfg) -> list[int]:
    """The query indices (0-based: examples before the query) at which the MLP baseline is trained."""
    ps = list(cfg["mlp_positions"])
    if min(ps) < 1 or max(ps) >= cfg["test_examples"]:
        raise ValueError(f"mlp_positions must lie in 1..test_examples−1={cfg['test_examples'] - 1}, got {ps}")
    return ps


def cached_baselines(cfg, depth: int, folder: Path | None, progress: bool, *, command: str) -> pd.DataFrame:
    """:func:`baseline_curves`, with the MLP rows stored beside the checkpoints (with
    the settings they depend on and :data:`icdl.gpt_icl.core.baselines.VERSION`) so that a resumed or parallel run
    does not recompute them, and a changed baseline or prompt set does not reuse a stale cache. The cheap
    baselines are always recomputed on all test prompts. ``command`` rebuilds the cache."""
    if folder is None:
        return baseline_curves(cfg, depth, progress=progress)
    # the key keeps the format of the cache's first version (prompts as a count, positions as text), so that
    # caches of the same prompts stay valid; non-default target families add their own keys
    settings = {"d": cfg["d"], "test_prompts": curve_prompts(cfg), "test_examples": cfg["test_examples"],
                "mlp_width": cfg["mlp_width"], "mlp_epochs": cfg["mlp_epochs"],
                "mlp_positions": ",".join(map(str, cfg["mlp_positions"])), "seed": cfg["seed"],
                "baseline_version": bl.VERSION}
    if (cfg["target_family"], cfg["target_width"]) != ("relu", 0):
        settings |= {"target_family": cfg["target_family"], "target_width": cfg["target_width"]}
    cheap = baseline_curves(cfg, depth, progress=progress, mlp=False)
    path = Path(folder) / f"baselines_depth{depth}.json"
    if path.is_file():
        try:
            cached = load_result(path)["data"]
        except ResultFileError as err:
            raise ResultFileError(f"{err}. The cache of MLP baselines is damaged: delete it and rerun {command} "
                                  "(it recomputes the baselines)") from None
        if cached["settings"] == settings:
            rows = pd.DataFrame(cached["rows"])
            return pd.concat([cheap, rows[bl.is_mlp(rows["method"])]], ignore_index=True)
    t0 = time.perf_counter()
    full = baseline_curves(cfg, depth, progress=progress)
    mlp = full[bl.is_mlp(full["method"])]
    save_result(path, {"settings": settings, "rows": frame_to_lists(mlp)},
                provenance=provenance(command=command, wall_time_s=time.perf_counter() - t0,
                                      profile=cfg["profile"], seed=cfg["seed"]))
    return pd.concat([cheap, mlp], ignore_index=True)


# ---- the sets the claims are judged on, in blocks for the intervals (icdl.gpt_icl.core.intervals) ------------

#: the name of the paired set: the MLP's prompts (the first ``mlp_prompts``) at the MLP's positions
PAIRED = "paired"


def judged_sets(cfg, shift: bool = False) -> dict[str, dict]:
    """The prompt sets on which objectives 1–3 are judged, by name: ``mixture`` (or ``mu`` for objective 3's
    shifted targets), ``count`` (None: every test prompt; else the first ``count``) and the 1-based query
    ``positions`` kept. Objectives 1–2: the pretraining mixture from the training length to the last position,
    each other mixture at the training length, and :data:`PAIRED`; objective 3 (``shift``): each μ at the
    training length, and the paired set of each μ ≠ 0 (named ``"paired μ=<mu>"``)."""
    L, T = cfg["train_examples"], cfg["test_examples"]
    mlp = [p + 1 for p in mlp_positions(cfg)]
    if shift:
        sets = {f"μ={mu:g}": {"mu": mu, "count": None, "positions": [L]} for mu in PARAM_SHIFTS}
        paired = cfg.get("shift_mlp_prompts", cfg["mlp_prompts"])  # a profile may score the MLP on fewer there
        return sets | {f"{PAIRED} μ={mu:g}": {"mu": mu, "count": paired, "positions": mlp}
                       for mu in PARAM_SHIFTS if mu != 0}
    sets = {m: {"mixture": m, "count": None, "positions": list(range(L, T + 1)) if m == PRETRAINING else [L]}
            for m in MIXTURES}
    return sets | {PAIRED: {"mixture": PRETRAINING, "count": cfg["mlp_prompts"], "positions": mlp}}


def set_prompts(cfg, depth: int, spec: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """The prompts of one judged set (:func:`judged_sets`)."""
    xs, ys = shifted_prompts(cfg, depth, spec["mu"]) if "mu" in spec else test_prompts(cfg, depth, spec["mixture"])
    return (xs, ys) if spec["count"] is None else (xs[:spec["count"]], ys[:spec["count"]])


def label_rows(depth: int, prompts: dict) -> list[dict]:
    """The label sums per block (:func:`icdl.gpt_icl.core.intervals.label_sums`) of every judged set, one row per
    set and position; ``prompts``: ``{set name: (spec, xs, ys)}``."""
    rows = []
    for name, (spec, _, ys) in prompts.items():
        sums = label_sums(ys, spec["positions"])
        rows += [{"depth": depth, "set": name, "position": p, "n": sums["n"].tolist(), "sy": sums["sy"][i].tolist(),
                  "syy": sums["syy"][i].tolist()} for i, p in enumerate(spec["positions"])]
    return rows


def block_rows(pred_of, prompts: dict, **keys) -> list[dict]:
    """One row per judged set and position with the squared error per block of one predictor
    (``pred_of(xs, ys) -> (B, k)``) and ``keys`` in every row."""
    rows = []
    for name, (spec, xs, ys) in prompts.items():
        pred = pred_of(xs, ys)
        sse = block_sums(pred, ys, spec["positions"])
        rows += [{**keys, "set": name, "position": p, "sse": sse[i].tolist()} for i, p in enumerate(spec["positions"])]
    return rows
