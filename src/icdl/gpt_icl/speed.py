"""What the experiments of ICDL sec. 5 cost (the book's computation appendix and chapter ``gpt_icl``):

* :func:`cost_comparison` -- REB's cost argument measured: FLOPs of one forward pass of the paper-size model
  against training the MLP baseline, with REB's formulas beside them;
* :func:`smoke` -- training steps timed beside a large matmul on the same device (``--smoke``, ``--speed``);
* :func:`matmul_ceiling` -- the same step's matrix products alone: the most a training step could reach;
* :func:`benchmark_table` -- the batched MLP baseline against a per-prompt loop, its roofline and its products;
* :func:`stage_times`, :func:`timing_summary` -- where the timed reference run (``--workers``) spent its time.
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import torch

from ..book.results import provenance, save_result
from . import baselines as bl
from .model import GPTConfig, InContextGPT
from .study import PROFILES, configs, depths
from .tasks import TaskConfig, sample_prompts

REB_COST = {"icl_flops": 3.34e9, "icl_params": 22e6, "icl_tokens": 76, "train_flops": 7.56e9,
            "train_params": 168_000, "samples": 75, "epochs": 100, "a100_forward_s": 1.38, "a100_step_s": 0.04}


def cost_comparison(*, examples: int = 75, depth: int = 6, d: int = 20, width: int = 200, epochs: int = 100,
                    time_it: bool = True) -> dict:
    """REB's cost argument, measured: FLOPs (torch's counter) of one forward pass of the paper-size model on
    a prompt of ``examples`` examples and a query, against training the 6-layer, width-200 MLP baseline on
    the examples for ``epochs`` full-batch epochs; with REB's formulas ``2 N_p N_t`` and ``6 N_p N_t E``
    beside them, and CPU seconds for both on this machine."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    gpt = InContextGPT(GPTConfig(d=d, n_layer=12, n_head=8, n_embd=256, max_examples=examples + 1)).eval()
    xs, ys = torch.randn(1, examples + 1, d), torch.randn(1, examples + 1)
    # attention through its plain-matmul form, which the counter sees (the fused CPU kernel it does not)
    with torch.no_grad(), FlopCounterMode(display=False) as fc, sdpa_kernel(SDPBackend.MATH):
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


def smoke(cfg, *, device: str, steps: int = 200, warmup: int = 10, matmul_n: int = 4096) -> dict:
    """The GPU smoke test of the ``paper`` profile (README): ``steps`` training steps of the profile's model on
    ``device`` after ``warmup`` untimed ones; steps per second, achieved FLOP/s (torch's FLOP counter) against
    an ``matmul_n²`` matmul timed on the same device in the same run, peak memory, and the projected time of
    the profile's training (every model of the main part) on 1, 2, 4 and 8 devices -- assuming ideal
    data-parallel scaling, an upper bound on the speed-up. Fails with one line where ``device`` is absent."""
    from .training import flops_per_step, matmul_flops_per_second

    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("--smoke --device cuda: no CUDA device is available on this machine")
    if steps < 1 or warmup < 0:
        raise ValueError(f"steps must be >= 1 and warmup >= 0, got {steps}, {warmup}")
    mcfg, tcfg, tr = configs(cfg, depths(cfg)[0], "softmax")
    torch.manual_seed(0)
    model = InContextGPT(mcfg).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=tr.lr)
    g = torch.Generator().manual_seed(0)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    t0 = None
    for i in range(warmup + steps):
        if i == warmup:
            sync()
            t0 = time.perf_counter()
        xs, ys = sample_prompts(tcfg, tr.batch, tr.examples, g)
        xs, ys = xs.to(device, non_blocking=True), ys.to(device, non_blocking=True)
        loss = ((model(xs, ys) - ys) ** 2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    sync()
    seconds = time.perf_counter() - t0
    if device == "cuda":
        peak = float(torch.cuda.max_memory_allocated())
    else:
        import resource

        peak = float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024
    flops = flops_per_step(mcfg, tr.batch, tr.examples)
    per_step = seconds / steps
    total_steps = len(depths(cfg)) * (cfg["steps"] + (cfg["relu_steps"] if cfg["relu_init"] == "softmax" else cfg["steps"]))
    return {"device": device, "threads": torch.get_num_threads(), "steps": steps, "steps_per_s": steps / seconds,
            "flops_per_step": flops,
            "achieved_flops": flops / per_step, "matmul_flops": matmul_flops_per_second(matmul_n, device=device),
            "peak_memory_bytes": peak, "total_training_steps": total_steps,
            "projected_hours": {g: total_steps * per_step / g / 3600 for g in (1, 2, 4, 8)}}


def matmul_ceiling(model_cfg: GPTConfig, batch: int, examples: int, *, repeats: int = 20) -> dict:
    """What a training step could reach if it did nothing but its matrix products: every linear layer's three
    products (forward, and the two of its backward pass) at the step's own shapes, and the attention
    (forward and backward) of every layer, timed alone with no element-wise work in between. The step's FLOPs
    over that time is the FLOP/s a perfect implementation of this model at this batch could approach
    (``ceiling_flops``); the share of a large matmul that training can reach is at most its share."""
    import torch.nn.functional as F

    from .training import flops_per_step

    model = InContextGPT(model_cfg)
    tokens = batch * 2 * examples  # x and y are separate tokens
    shapes = [(m.in_features, m.out_features) for m in model.modules() if isinstance(m, torch.nn.Linear)]
    mats = [(torch.randn(tokens, i), torch.randn(o, i), torch.randn(tokens, o)) for i, o in shapes]

    def linear_products():
        for x, w, dy in mats:
            x @ w.T           # forward
            dy @ w            # gradient of the input
            dy.T @ x          # gradient of the weight

    H, D, T = model_cfg.n_head, model_cfg.n_embd // model_cfg.n_head, 2 * examples
    q, k, v = (torch.randn(batch, H, T, D, requires_grad=True) for _ in range(3))

    def attention():
        for _ in range(model_cfg.n_layer):
            if model_cfg.attention == "softmax":
                out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                out = torch.relu(q @ k.transpose(-1, -2)) @ v
            out.backward(torch.ones_like(out))

    def best(fn):
        fn()
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
        return min(times)

    gemm_s, attention_s = best(linear_products), best(attention)
    flops = flops_per_step(model_cfg, batch, examples)
    gemm_flops = sum(3 * 2 * tokens * i * o for i, o in shapes)
    return {"step_flops": flops, "gemm_flops": gemm_flops, "gemm_s": gemm_s, "attention_s": attention_s,
            "gemm_flops_per_s": gemm_flops / gemm_s, "ceiling_flops": flops / (gemm_s + attention_s)}


def _smoke_worker(cfg, steps: int, barrier, queue) -> None:
    """One single-threaded process of :func:`concurrent_smoke`: wait for the others, then train and report."""
    torch.set_num_threads(1)
    barrier.wait()
    queue.put(smoke(cfg, device="cpu", steps=steps, warmup=20, matmul_n=256))


def concurrent_smoke(cfg, *, processes: int = 2, steps: int = 200) -> list[dict]:
    """:func:`smoke` in ``processes`` single-threaded processes at once, each training its own model (the way
    the reference run uses several cores: :mod:`icdl.gpt_icl.pipeline`); their timed steps start together.
    One result per process; their ``achieved_flops`` add up to the machine's training rate."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    barrier, queue = ctx.Barrier(processes), ctx.Queue()
    procs = [ctx.Process(target=_smoke_worker, args=(dict(cfg), steps, barrier, queue)) for _ in range(processes)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
        if p.exitcode != 0:
            raise RuntimeError(f"a process of concurrent_smoke exited with status {p.exitcode}")
    return results


def _speed(cfg, profile: str, steps: int = 200, rounds: int = 3) -> int:
    """Training FLOP/s of the profile's first model, timed side by side with a 2048² matmul in the same
    process at the same thread count, for one thread and for two; then two single-threaded processes
    training at once (how the reference run uses the two cores), against the two-thread matmul of the same
    command. ``rounds`` rounds of all three, one after the other: timings on these machines vary by tens of
    per cent from minute to minute, so the spread is part of the result (``speed.<profile>.json``)."""
    from .training import matmul_flops_per_second

    t = time.perf_counter()
    old = torch.get_num_threads()
    runs = []
    mcfg, _, tr = configs(cfg, depths(cfg)[0], "softmax")
    try:
        for rnd in range(rounds):
            for threads in (1, 2):
                torch.set_num_threads(threads)
                r = smoke(cfg, device="cpu", steps=steps, warmup=20, matmul_n=2048)
                ceiling = matmul_ceiling(mcfg, tr.batch, tr.examples)
                runs.append({"round": rnd, "threads": threads, "processes": 1, "steps_per_s": r["steps_per_s"],
                             "flops_per_step": r["flops_per_step"],
                             "achieved_flops": r["achieved_flops"], "matmul_flops": r["matmul_flops"],
                             "share_of_matmul": r["achieved_flops"] / r["matmul_flops"],
                             "gemm_share_of_matmul": ceiling["gemm_flops_per_s"] / r["matmul_flops"],
                             "ceiling_share_of_matmul": ceiling["ceiling_flops"] / r["matmul_flops"], **{
                                 f"ceiling_{k}": v for k, v in ceiling.items()}})
                print(f"round {rnd}, {threads} thread(s): {r['achieved_flops'] / 1e9:.1f} GFLOP/s training vs "
                      f"{r['matmul_flops'] / 1e9:.1f} GFLOP/s matmul ({100 * runs[-1]['share_of_matmul']:.0f} %); "
                      f"the step's own products alone reach {100 * runs[-1]['ceiling_share_of_matmul']:.0f} % "
                      f"(linear layers {100 * runs[-1]['gemm_share_of_matmul']:.0f} %)", flush=True)
            torch.set_num_threads(2)
            matmul = matmul_flops_per_second(2048)
            both = concurrent_smoke(cfg, processes=2, steps=steps)
            achieved = sum(r["achieved_flops"] for r in both)
            runs.append({"round": rnd, "threads": 2, "processes": 2, "steps_per_s": sum(r["steps_per_s"] for r in both),
                         "flops_per_step": both[0]["flops_per_step"], "achieved_flops": achieved,
                         "matmul_flops": matmul, "share_of_matmul": achieved / matmul})
            print(f"round {rnd}, 2 processes × 1 thread: {achieved / 1e9:.1f} GFLOP/s training together vs "
                  f"{matmul / 1e9:.1f} GFLOP/s for a two-thread matmul ({100 * achieved / matmul:.0f} %)", flush=True)
    finally:
        torch.set_num_threads(old)
    res = {"steps": steps, "rounds": rounds, "runs": runs, "flops_per_step": runs[0]["flops_per_step"]}
    path = _save_measurement(cfg, profile, "speed", res, t)
    print(f"wrote {path}")
    return 0


def speed_table(data: dict) -> pd.DataFrame:
    """The ``--speed`` result per setting (processes × threads): the median over rounds of each rate and
    share, and the lowest and highest share of the large matmul (the spread between rounds)."""
    runs = pd.DataFrame(data["runs"])
    keys = ["processes", "threads"]
    cols = [c for c in ("steps_per_s", "achieved_flops", "matmul_flops", "share_of_matmul", "gemm_share_of_matmul",
                        "ceiling_share_of_matmul") if c in runs]
    med = runs.groupby(keys, sort=False)[cols].median()
    spread = runs.groupby(keys, sort=False)["share_of_matmul"].agg(["min", "max"])
    out = med.join(spread.rename(columns={"min": "share_lo", "max": "share_hi"})).reset_index()
    out["rounds"] = runs.groupby(keys, sort=False).size().to_numpy()
    return out


def _save_measurement(cfg, profile: str, name: str, res: dict, t0: float) -> Path:
    """``results/gpt_icl/<name>.<profile>.json`` with the thread count and provenance of ``--<name>``."""
    res["threads"] = torch.get_num_threads()
    return save_result(PROFILES.folder() / f"{name}.{profile}.json", res,
                       provenance=provenance(command=f"python -m icdl.gpt_icl --profile {profile} --{name}",
                                             wall_time_s=time.perf_counter() - t0, profile=profile,
                                             seed=cfg["seed"]))


def stage_times(data: dict) -> pd.DataFrame:
    """The stages of a timed reference run (the data of ``timing.<profile>.json``, written by ``--workers``):
    one row per job with its start and length in minutes, its kind (``train`` or ``evaluate``), the worker
    lane it ran in (jobs packed into ``workers`` lanes by start time), and its command. A job that failed
    keeps its row; the caller reads ``complete``."""
    jobs = sorted(data["jobs"], key=lambda j: j["start_s"])
    free_at = [0.0] * data["workers"]
    rows = []
    for j in jobs:
        lane = min(range(len(free_at)), key=lambda i: (free_at[i] > j["start_s"] + 1e-6, i))
        if free_at[lane] > j["start_s"] + 1e-6:
            raise ValueError(f"job {j['name']!r} starts while all {data['workers']} workers are busy: "
                             "the timing file does not describe a run with that many workers")
        free_at[lane] = j["start_s"] + j["seconds"]
        rows.append({"stage": j["name"], "kind": "train" if j["name"].startswith(("train", "plateau")) else
                     "evaluate", "worker": lane + 1, "start_min": j["start_s"] / 60, "minutes": j["seconds"] / 60,
                     "exit": j["returncode"], "command": j["command"]})
    return pd.DataFrame(rows)


def timing_summary(data: dict, target_min: float = 90.0) -> dict:
    """Wall minutes of the timed run, the core-minutes its jobs used, how busy the workers were
    (core-minutes over workers × wall), and whether the run finished within ``target_min`` minutes."""
    stages = stage_times(data)
    wall = data["wall_s"] / 60
    core = float(stages["minutes"].sum())
    return {"wall_min": wall, "core_min": core, "workers": data["workers"],
            "busy": core / (data["workers"] * wall), "complete": bool(data["complete"]),
            "within_target": bool(data["complete"] and wall <= target_min), "target_min": target_min}


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
             "compute floor s": c["compute_floor_s"], "memory floor s": c["memory_floor_s"],
             "over roofline": c["over_roofline"], "products alone s": c["products_s"],
             "over products": c["over_products"], "largest possible speed-up": c["max_speedup"]}
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
        c = cases[-1]
        print(f"{position} examples, {prompts} prompts: {c['batched_s']:.0f} s batched, speed-up "
              f"{c['speedup']:.1f}× over the loop; compute floor {c['compute_floor_s']:.0f} s, memory floor "
              f"{c['memory_floor_s']:.0f} s: {c['over_roofline']:.1f}× the roofline; its products alone "
              f"{c['products_s']:.0f} s ({c['over_products']:.1f}×)", flush=True)
    path = _save_measurement(cfg, profile, "benchmark", {"cases": cases}, t)
    print(f"wrote {path}")
    return 0
