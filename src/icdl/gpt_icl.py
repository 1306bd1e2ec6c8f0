"""ICDL sec. 5, objectives 1 and 2: does a trained transformer learn deep networks in context?

For every target depth (3, 4, 6 layers) and attention activation (softmax, ReLU) one
:class:`~icdl.models.InContextGPT` is trained on prompts from :mod:`icdl.tasks` (x from N(−2, I)); each is
then tested on prompts longer than in training and with inputs from the four mixtures of ICDL Figs. 2–4,
beside the baselines of :mod:`icdl.baselines` on the same prompts. R² is computed per prompt position
across prompts (see the chapter for why not per prompt).

Profiles: ``quick`` (CI: tiny models, a few hundred steps), ``reference`` (CPU, about 1.5 hours on one
core: ``OMP_NUM_THREADS=1 python -m icdl.gpt_icl --profile reference``, resumable, results committed under
``results/08_gpt/``), ``paper`` (Appendix F's settings; a command for a GPU, not run here).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from . import baselines as bl
from .models import GPTConfig
from .profiles import ProfileSet
from .results import load_result, provenance, results_dir, save_result
from .tasks import MIXTURES, TaskConfig, sample_prompts
from .training import TrainConfig, load_model, train

PROFILES = ProfileSet(
    "08_gpt_icl",
    profiles={
        "quick": {"d": 5, "depths": "3,6", "n_layer": 2, "n_head": 2, "n_embd": 32, "steps": 300, "batch": 32,
                  "lr": 1e-3, "train_examples": 20, "test_examples": 30, "test_prompts": 256, "mlp_width": 32,
                  "mlp_epochs": 30, "mlp_positions": "2,5,10,19", "curriculum_interval": 0, "seed": 0},
        "reference": {"d": 5, "depths": "3,4,6", "n_layer": 3, "n_head": 2, "n_embd": 64, "steps": 4000,
                      "batch": 32, "lr": 1e-3, "train_examples": 40, "test_examples": 60, "test_prompts": 512,
                      "mlp_width": 200, "mlp_epochs": 100, "mlp_positions": "5,20,39",
                      "curriculum_interval": 0, "seed": 0},
        "paper": {"d": 20, "depths": "3,4,6", "n_layer": 12, "n_head": 8, "n_embd": 256, "steps": 500_000,
                  "batch": 64, "lr": 1e-4, "train_examples": 51, "test_examples": 76, "test_prompts": 6400,
                  "mlp_width": 200, "mlp_epochs": 100, "mlp_positions": ",".join(str(i) for i in range(1, 76)),
                  "curriculum_interval": 2000, "seed": 0},
    },
    ranges={"d": (2, 64), "n_layer": (1, 24), "n_head": (1, 16), "n_embd": (8, 1024), "steps": (1, 10**6),
            "batch": (1, 1024), "lr": (1e-6, 1e-1), "train_examples": (2, 200), "test_examples": (2, 200),
            "test_prompts": (8, 10**5), "mlp_width": (4, 1024), "mlp_epochs": (1, 1000),
            "curriculum_interval": (0, 10**5), "seed": (0, 2**31 - 1)},
)

ATTENTIONS = ("softmax", "relu")


def _ints(cfg, key: str) -> list[int]:
    try:
        return [int(v) for v in str(cfg[key]).split(",")]
    except ValueError:
        raise ValueError(f"{key} must be comma-separated integers, got {cfg[key]!r}") from None


def depths(cfg) -> list[int]:
    ds = _ints(cfg, "depths")
    if not ds or min(ds) < 1 or max(ds) > 8:
        raise ValueError(f"depths must lie in 1..8, got {ds}")
    return ds


def mlp_positions(cfg) -> list[int]:
    ps = _ints(cfg, "mlp_positions")
    if min(ps) < 1 or max(ps) >= cfg["test_examples"]:
        raise ValueError(f"mlp_positions must lie in 1..test_examples−1={cfg['test_examples'] - 1}, got {ps}")
    return ps


def configs(cfg, depth: int, attention: str) -> tuple[GPTConfig, TaskConfig, TrainConfig]:
    model = GPTConfig(d=cfg["d"], n_layer=cfg["n_layer"], n_head=cfg["n_head"], n_embd=cfg["n_embd"],
                      max_examples=max(cfg["test_examples"], cfg["train_examples"]), attention=attention)
    task = TaskConfig(d=cfg["d"], depth=depth)
    tr = TrainConfig(steps=cfg["steps"], batch=cfg["batch"], lr=cfg["lr"], examples=cfg["train_examples"],
                     curriculum_interval=cfg["curriculum_interval"], seed=cfg["seed"] + 100 * depth,
                     log_every=max(1, cfg["steps"] // 100))
    return model, task, tr


def test_prompts(cfg, depth: int, mixture: str) -> tuple[torch.Tensor, torch.Tensor]:
    """The test prompts of one (depth, mixture): the same for every model and baseline."""
    if mixture not in MIXTURES:
        raise ValueError(f"mixture must be one of {list(MIXTURES)}, got {mixture!r}")
    task = TaskConfig(d=cfg["d"], depth=depth, omega=MIXTURES[mixture])
    g = torch.Generator().manual_seed(10_000 + 97 * depth + list(MIXTURES).index(mixture))
    return sample_prompts(task, cfg["test_prompts"], cfg["test_examples"], g, scale_mu=0.0)


PARAM_SHIFTS = (0.0, -0.5, 0.5)


def evaluate_param_shift(model, cfg, depth: int, mus=PARAM_SHIFTS) -> pd.DataFrame:
    """ICDL objective 3 (Figs. 5–6): R² per position on test prompts whose target parameters are drawn from
    ``N(μ, I)`` instead of ``N(0, I)`` (inputs from the pretraining mixture; labels on the pretraining scale)."""
    rows = []
    device = next(model.parameters()).device
    for mu in mus:
        g = torch.Generator().manual_seed(30_000 + 97 * depth + int(100 * mu))
        xs, ys = sample_prompts(TaskConfig(d=cfg["d"], depth=depth, mu=mu), cfg["test_prompts"],
                                cfg["test_examples"], g, scale_mu=0.0)
        with torch.no_grad():
            pred = model(xs.to(device), ys.to(device)).cpu()
        r2 = bl.r2_across_prompts(pred, ys).numpy()
        rows += [{"mu": mu, "position": i + 1, "r2": float(r2[i])} for i in range(len(r2))]
    return pd.DataFrame(rows)


def evaluate(model, cfg, depth: int) -> pd.DataFrame:
    """R² per position and its bootstrap band for one trained model on every mixture."""
    rows = []
    for mixture in MIXTURES:
        xs, ys = test_prompts(cfg, depth, mixture)
        device = next(model.parameters()).device
        with torch.no_grad():
            pred = model(xs.to(device), ys.to(device)).cpu()
        r2 = bl.r2_across_prompts(pred, ys).numpy()
        band = bl.bootstrap_band(pred, ys)
        rows += [{"mixture": mixture, "position": i + 1, "r2": float(r2[i]), "lo": float(band[0, i]),
                  "hi": float(band[1, i])} for i in range(len(r2))]
    return pd.DataFrame(rows)


def baseline_curves(cfg, depth: int, *, progress: bool = True) -> pd.DataFrame:
    """R² per position of the context mean, least squares, 3-NN (every position) and the trained MLP (the
    profile's positions) on the test prompts of every mixture."""
    from tqdm import tqdm

    rows = []
    for mixture in MIXTURES:
        xs, ys = test_prompts(cfg, depth, mixture)
        for name, pred in (("context mean", bl.context_mean(xs, ys)), ("least squares", bl.least_squares(xs, ys)),
                           ("3-NN", bl.nearest_neighbours(xs, ys))):
            r2 = bl.r2_across_prompts(pred, ys).numpy()
            rows += [{"mixture": mixture, "method": name, "position": i + 1, "r2": float(r2[i])} for i in range(len(r2))]
        for p in tqdm(mlp_positions(cfg), desc=f"MLP baseline depth {depth} {mixture}", disable=not progress):
            res = bl.trained_mlp(xs, ys, p, depth=depth, width=cfg["mlp_width"], epochs=cfg["mlp_epochs"],
                                 seed=cfg["seed"])
            rows.append({"mixture": mixture, "method": f"MLP ({depth} layers, best epoch)", "position": p + 1,
                         "r2": res["best_r2"]})
    return pd.DataFrame(rows)


def run(cfg, *, folder: Path | None = None, steps_this_call: int | None = None, progress: bool = True,
        device: str = "cpu") -> dict:
    """Train (or resume) every model of the profile, evaluate, and compute the baselines.

    With ``folder`` the checkpoints live there and training resumes; without it (the quick profile) the
    models are trained in memory. Returns ``{"curves", "baselines", "history", "complete", "seconds"}``."""
    t0 = time.perf_counter()
    curves, hists, base, models = [], [], [], {}
    complete = True
    for depth in depths(cfg):
        for attention in ATTENTIONS:
            mcfg, tcfg, trcfg = configs(cfg, depth, attention)
            ckpt = None if folder is None else Path(folder) / f"gpt_depth{depth}_{attention}.pt"
            res = train(mcfg, tcfg, trcfg, checkpoint=ckpt, max_steps_this_call=steps_this_call, progress=progress,
                        device=device)
            complete &= res["steps_done"] >= trcfg.steps
            models[(depth, attention)] = res["model"]
            hists.append(res["history"].assign(depth=depth, attention=attention))
            curves.append(evaluate(res["model"], cfg, depth).assign(depth=depth, attention=attention,
                                                                    steps=res["steps_done"]))
        if complete:
            base.append(_cached_baselines(cfg, depth, folder, progress).assign(depth=depth))
    return {"curves": pd.concat(curves, ignore_index=True), "history": pd.concat(hists, ignore_index=True),
            "baselines": pd.concat(base, ignore_index=True) if base else pd.DataFrame(),
            "complete": complete, "seconds": time.perf_counter() - t0, "models": models}


def _cached_baselines(cfg, depth: int, folder: Path | None, progress: bool) -> pd.DataFrame:
    """:func:`baseline_curves`, stored beside the checkpoints (with the settings it depends on and the
    version of :mod:`icdl.baselines`) so that a resumed or parallel run does not recompute it, and a
    changed baseline does not reuse a stale cache."""
    import json

    from .results import atomic_write_text

    if folder is None:
        return baseline_curves(cfg, depth, progress=progress)
    keys = ("d", "test_prompts", "test_examples", "mlp_width", "mlp_epochs", "mlp_positions", "seed")
    settings = {**{k: cfg[k] for k in keys}, "baseline_version": bl.VERSION}
    path = Path(folder) / f"baselines_depth{depth}.json"
    if path.is_file():
        cached = json.loads(path.read_text(encoding="utf-8"))
        if cached["settings"] == settings:
            return pd.DataFrame(cached["rows"])
    df = baseline_curves(cfg, depth, progress=progress)
    atomic_write_text(path, json.dumps({"settings": settings, "rows": df.to_dict(orient="list")}))
    return df


# ---- the claims, judged --------------------------------------------------------------------------


def judge(curves: pd.DataFrame, baselines: pd.DataFrame, train_examples: int) -> dict:
    """Numbers for the three claims of objectives 1–2 (criteria in the chapter):

    * ``obj1``: per depth and attention, the largest shortfall of the transformer's R² below the MLP
      baseline's at the MLP's positions up to 50 examples (training length), mixture (1, 0);
    * ``shift``: per depth and attention, R² at the training length for each mixture (should fall from
      (1, 0) to (.5, .5));
    * ``length``: per depth and attention, mean R² over positions beyond the training length minus the
      R² at the training length, mixture (1, 0)."""
    out = {"obj1": [], "shift": [], "length": []}
    ref = curves[curves["mixture"] == "(1, 0)"]
    for (depth, att), g in ref.groupby(["depth", "attention"]):
        mlp = baselines[(baselines["depth"] == depth) & (baselines["mixture"] == "(1, 0)")
                        & baselines["method"].str.startswith("MLP")]
        mlp = mlp[mlp["position"] <= train_examples]
        tf = g.set_index("position")["r2"]
        gaps = [float(row.r2 - tf[row.position]) for row in mlp.itertuples()]
        out["obj1"].append({"depth": depth, "attention": att, "max_shortfall": max(gaps) if gaps else np.nan})
        at_len = tf[min(train_examples, tf.index.max())]
        beyond = tf[tf.index > train_examples]
        out["length"].append({"depth": depth, "attention": att, "r2_at_train_length": float(at_len),
                              "drop_beyond": float(beyond.mean() - at_len) if len(beyond) else np.nan})
    for (depth, att), g in curves[curves["position"] == train_examples].groupby(["depth", "attention"]):
        r = g.set_index("mixture")["r2"]
        out["shift"].append({"depth": depth, "attention": att, **{m: float(r[m]) for m in MIXTURES}})
    return {k: pd.DataFrame(v) for k, v in out.items()}


# ---- cost: in-context learning against training the network (REB) -------------------------------

REB_COST = {"icl_flops": 3.34e9, "icl_params": 22e6, "icl_tokens": 76, "train_flops": 7.56e9,
            "train_params": 168_000, "samples": 75, "epochs": 100, "a100_forward_s": 1.38, "a100_step_s": 0.04}


def cost_comparison(*, examples: int = 75, depth: int = 6, d: int = 20, width: int = 200, epochs: int = 100,
                    time_it: bool = True) -> dict:
    """REB's cost argument, measured: FLOPs (torch's counter) of one forward pass of the paper-size model on
    a prompt of ``examples`` examples and a query, against training the 6-layer, width-200 MLP baseline on
    the examples for ``epochs`` full-batch epochs; with REB's formulas ``2 N_p N_t`` and ``6 N_p N_t E``
    beside them, and CPU seconds for both on this machine."""
    from torch.utils.flop_counter import FlopCounterMode

    from .models import InContextGPT

    gpt = InContextGPT(GPTConfig(d=d, n_layer=12, n_head=8, n_embd=256, max_examples=examples + 1)).eval()
    xs, ys = torch.randn(1, examples + 1, d), torch.randn(1, examples + 1)
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        gpt(xs, ys)
    icl_flops = fc.get_total_flops()
    t = time.perf_counter()
    if time_it:
        with torch.no_grad():
            gpt(xs, ys)
    icl_s = time.perf_counter() - t
    sizes = [d] + [width] * (depth - 1) + [1]
    mlp = torch.nn.Sequential(*[m for j in range(depth) for m in
                                ([torch.nn.Linear(sizes[j], sizes[j + 1])] + ([torch.nn.ReLU()] if j < depth - 1 else []))])
    opt = torch.optim.Adam(mlp.parameters(), lr=1e-3)
    x, y = torch.randn(examples, d), torch.randn(examples, 1)
    with FlopCounterMode(display=False) as fc:
        loss = ((mlp(x) - y) ** 2).mean()
        loss.backward()
    step_flops = fc.get_total_flops()
    t = time.perf_counter()
    if time_it:
        for _ in range(epochs):
            loss = ((mlp(x) - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    train_s = time.perf_counter() - t
    n_gpt, n_mlp = gpt.num_params(), sum(p.numel() for p in mlp.parameters())
    tokens = 2 * (examples + 1)
    return {"gpt_params": n_gpt, "tokens": tokens, "icl_flops": icl_flops, "icl_formula": 2 * n_gpt * tokens,
            "mlp_params": n_mlp, "train_flops": step_flops * epochs, "train_formula": 6 * n_mlp * examples * epochs,
            "icl_seconds_cpu": icl_s, "train_seconds_cpu": train_s, "threads": torch.get_num_threads()}


# ---- the reference run ----------------------------------------------------------------------------


def _result_data(res: dict) -> dict:
    return {k: res[k].to_dict(orient="list") for k in ("curves", "history", "baselines")} | \
        {"complete": res["complete"], "seconds": res["seconds"]}


def reference_models(cfg, profile: str = "reference") -> dict:
    """The trained models of a long run, from its checkpoints: ``{(depth, attention): model}``."""
    folder = results_dir("08_gpt", "checkpoints", profile)
    return {(depth, att): load_model(folder / f"gpt_depth{depth}_{att}.pt")[0]
            for depth in depths(cfg) for att in ATTENTIONS}


def param_shift_curves(models: dict, cfg) -> pd.DataFrame:
    """:func:`evaluate_param_shift` for every model."""
    return pd.concat([evaluate_param_shift(m, cfg, depth).assign(depth=depth, attention=att)
                      for (depth, att), m in models.items()], ignore_index=True)


def judge_param_shift(curves: pd.DataFrame, train_examples: int) -> pd.DataFrame:
    """Per model: R² at the training length for each μ, and the largest drop from μ = 0."""
    at = curves[curves["position"] == train_examples]
    out = at.pivot_table(index=["depth", "attention"], columns="mu", values="r2").reset_index()
    out["max_drop"] = out[0.0] - out[[m for m in PARAM_SHIFTS if m != 0.0]].min(axis=1)
    return out


def load_reference(profile: str = "reference") -> dict:
    """The committed results of a long run, as DataFrames, with their provenance."""
    raw = load_result(results_dir("08_gpt") / f"icl.{profile}.json")
    d = raw["data"]
    return {"curves": pd.DataFrame(d["curves"]), "history": pd.DataFrame(d["history"]),
            "baselines": pd.DataFrame(d["baselines"]), "complete": d["complete"], "seconds": d["seconds"],
            "provenance": raw["provenance"]}


def speed(cfg, seconds_per_step: float) -> dict:
    """Achieved FLOP/s of training (FLOPs per step from torch's counter) against a 2048² matmul here."""
    from .training import flops_per_step, matmul_flops_per_second

    model, _, tr = configs(cfg, depths(cfg)[0], "softmax")
    flops = flops_per_step(model, tr.batch, tr.examples)
    return {"flops_per_step": flops, "seconds_per_step": seconds_per_step,
            "achieved_flops": flops / seconds_per_step, "matmul_flops": matmul_flops_per_second()}


def _speed(cfg, profile: str) -> int:
    """Seconds per step of every trained model (from its checkpoint) and the FLOP/s that makes."""
    t = time.perf_counter()
    folder = results_dir("08_gpt", "checkpoints", profile)
    per_step = []
    for depth in depths(cfg):
        for attention in ATTENTIONS:
            state = torch.load(folder / f"gpt_depth{depth}_{attention}.pt", weights_only=True)
            per_step.append(state["seconds"] / state["step"])
    res = speed(cfg, float(np.median(per_step)))
    res["seconds_per_step_all"] = per_step
    path = _save_measurement(cfg, profile, "speed", res, t)
    print(f"wrote {path}: {res['achieved_flops'] / 1e9:.1f} GFLOP/s vs matmul {res['matmul_flops'] / 1e9:.1f}")
    return 0


def _save_measurement(cfg, profile: str, name: str, res: dict, t0: float) -> Path:
    """``results/08_gpt/<name>.<profile>.json`` with the thread count and provenance of ``--<name>``."""
    res["threads"] = torch.get_num_threads()
    return save_result(results_dir("08_gpt") / f"{name}.{profile}.json", res,
                       provenance=provenance(command=f"python -m icdl.gpt_icl --profile {profile} --{name}",
                                             wall_time_s=time.perf_counter() - t0, profile=profile,
                                             seed=cfg["seed"]))


#: the benchmark's settings: (examples, prompts) -- the issue's 6400 prompts at 20 examples, and fewer
#: prompts at the other MLP positions (the batched time is linear in the prompts beyond one chunk)
BENCHMARK_CASES = ((20, 6400), (5, 1600), (39, 1600))


def benchmark_table(data: dict) -> pd.DataFrame:
    """The ``--benchmark`` result as a table: per case the batched and loop seconds, the speed-up, the
    batched program's matmul FLOP/s against a large matmul's, and the compute bound (all prompts' matmul
    FLOPs at the large matmul's FLOP/s) with the speed-up it allows."""
    rows = [{"examples": c["position"], "prompts": c["prompts"], "batched s": c["batched_s"],
             "loop s (scaled)": c["loop_s_extrapolated"], "speed-up": c["speedup"],
             "batched GFLOP/s": c["flops_per_prompt_epoch"] * c["prompts"] * c["epochs"] / c["batched_s"] / 1e9,
             "matmul GFLOP/s": c["matmul_flops"] / 1e9,
             "compute bound s": c["compute_floor_s"], "largest possible speed-up": c["max_speedup"]}
            for c in data["cases"]]
    return pd.DataFrame(rows).round(1)


def _benchmark(cfg, profile: str) -> int:
    t = time.perf_counter()
    depth = depths(cfg)[0]
    cases = []
    for position, prompts in BENCHMARK_CASES:
        xs, ys = sample_prompts(TaskConfig(d=cfg["d"], depth=depth), prompts, position + 1,
                                torch.Generator().manual_seed(3))
        cases.append(bl.benchmark_batched_vs_loop(xs, ys, position, depth=depth, width=cfg["mlp_width"],
                                                  epochs=cfg["mlp_epochs"], loop_prompts=16))
        print(f"{position} examples, {prompts} prompts: speedup {cases[-1]['speedup']:.1f}× "
              f"(compute bound {cases[-1]['max_speedup']:.0f}×)", flush=True)
    path = _save_measurement(cfg, profile, "benchmark", {"cases": cases}, t)
    print(f"wrote {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--profile", default="reference", choices=["reference", "paper"])
    p.add_argument("--steps-this-call", type=int, default=None, help="train at most this many steps per model")
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--benchmark", action="store_true",
                   help="only time the batched MLP baseline against a per-prompt loop (BENCHMARK_CASES)")
    p.add_argument("--speed", action="store_true",
                   help="only report the trained models' FLOP/s (from their checkpoints) against a large matmul")
    p.add_argument("--depths", default=None,
                   help="train and evaluate only these target depths (e.g. 6), to run depths in parallel "
                        "processes; a final call without it assembles the result file from the checkpoints")
    args = p.parse_args(argv)
    cfg = PROFILES.resolve(args.profile)
    if args.depths is not None:
        part = PROFILES.resolve(args.profile, depths=args.depths)
        depths(part)
        run(part, folder=results_dir("08_gpt", "checkpoints", args.profile), steps_this_call=args.steps_this_call,
            device=args.device)
        print(f"depths {args.depths} done; run without --depths to write the result file")
        return 0
    if args.benchmark:
        return _benchmark(cfg, args.profile)
    if args.speed:
        return _speed(cfg, args.profile)
    folder = results_dir("08_gpt", "checkpoints", args.profile)
    t = time.perf_counter()
    res = run(cfg, folder=folder, steps_this_call=args.steps_this_call, device=args.device)
    cmd = f"python -m icdl.gpt_icl --profile {args.profile}" + \
        (f" --steps-this-call {args.steps_this_call} (repeated until complete)" if args.steps_this_call else "")
    path = save_result(results_dir("08_gpt") / f"icl.{args.profile}.json", _result_data(res),
                       provenance=provenance(command=cmd, wall_time_s=time.perf_counter() - t,
                                             profile=args.profile, seed=cfg["seed"]))
    print(f"wrote {path} (complete: {res['complete']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
