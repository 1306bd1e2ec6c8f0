"""Measuring the computation of ICDL sec. 5 (the book's computation appendix): FLOPs counted by torch, the
rates of this machine, and the batched MLP baseline against the bounds any implementation meets.

=============================  ===================================================================
:func:`best_seconds`           the one timing loop: a warm-up call, then the best of ``repeats``
:func:`matmul_flops_per_second` FLOP/s of a large square matmul (the machine's compute rate)
:func:`memory_bandwidth`       bytes/s of a large copy (the rate for weights that leave the caches)
:func:`count_flops`            FLOPs of any callable, softmax attention counted through its matmul form
:func:`flops_per_step`         one training step of an :class:`~icdl.gpt_icl.core.model.InContextGPT`
:func:`matmul_ceiling`         the same step's matrix products alone: the most the step could reach
:func:`mlp_epoch_flops`        one prompt's epoch of :func:`~icdl.gpt_icl.core.baselines.trained_mlp`
:func:`mlp_products_seconds`   that epoch's matrix products alone, at their own (small) shapes
:func:`benchmark_batched_vs_loop` the batched baseline against :func:`trained_mlp_loop`, with its roofline
=============================  ===================================================================
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import pandas as pd
import torch
from torch import Tensor

from icdl.gpt_icl.core.baselines import init_mlps, mlp_forward, trained_mlp
from icdl.gpt_icl.core.model import GPTConfig, InContextGPT
from icdl.gpt_icl.core.tasks import TaskConfig, layer_sizes, sample_prompts
from icdl.repro.typeset import count


def best_seconds(fn: Callable[[], object], repeats: int = 5, sync: Callable[[], None] = lambda: None) -> float:
    """The shortest of ``repeats`` timed calls of ``fn`` after one untimed warm-up call; ``sync`` waits for
    the device (``torch.cuda.synchronize`` on a GPU) after each call, inside the timed span."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    fn()
    sync()
    best = math.inf
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t)
    return best


def matmul_flops_per_second(n: int = 2048, repeats: int = 5, device: str = "cpu") -> float:
    """FLOP/s of an ``n × n`` float32 matmul on ``device`` (``2 n³`` FLOPs over the best of ``repeats``)."""
    a, b = torch.randn(n, n, device=device), torch.randn(n, n, device=device)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    return 2 * n**3 / best_seconds(lambda: a @ b, repeats, sync)


def memory_bandwidth(megabytes: int = 256, repeats: int = 5) -> float:
    """Bytes per second of a large float32 copy (each byte read once and written once), best of ``repeats``:
    the rate at which weights that do not stay in the caches can be streamed."""
    n = megabytes * 2**20 // 4
    a, b = torch.ones(n), torch.empty(n)
    return 2 * 4 * n / best_seconds(lambda: b.copy_(a), repeats)


def count_flops(fn: Callable[[], object]) -> int:
    """FLOPs of ``fn()`` by torch's FLOP counter. Softmax attention runs in its plain-matmul form: the
    counter does not see inside the fused CPU kernel of ``scaled_dot_product_attention`` and would leave
    out the score and value products (about a sixth of a training step at the reference size)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter, sdpa_kernel(SDPBackend.MATH):
        fn()
    return int(counter.get_total_flops())


def flops_per_step(model_cfg: GPTConfig, batch: int, examples: int) -> int:
    """FLOPs of one training step (forward and backward) of a model of ``model_cfg`` on ``batch`` prompts, counted on
    the ``meta`` device (shapes only, no arithmetic: the same count in a fraction of the time at the paper's size)."""
    with torch.device("meta"):
        model = InContextGPT(model_cfg)
        xs, ys = torch.randn(batch, examples, model_cfg.d), torch.randn(batch, examples)
    return count_flops(lambda: ((model(xs, ys) - ys) ** 2).mean().backward())


def matmul_ceiling(model_cfg: GPTConfig, batch: int, examples: int, *, repeats: int = 20) -> dict:
    """What a training step could reach if it did nothing but its matrix products: every linear layer's three
    products (forward, and the two of its backward pass) at the step's own shapes, and the attention
    (forward and backward) of every layer, timed alone with no element-wise work in between. The step's FLOPs
    over that time is the FLOP/s a perfect implementation of this model at this batch could approach
    (``ceiling_flops``); the share of a large matmul that training can reach is at most its share."""
    import torch.nn.functional as F

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

    gemm_s, attention_s = best_seconds(linear_products, repeats), best_seconds(attention, repeats)
    flops = flops_per_step(model_cfg, batch, examples)
    gemm_flops = sum(3 * 2 * tokens * i * o for i, o in shapes)
    return {"step_flops": flops, "gemm_flops": gemm_flops, "gemm_s": gemm_s, "attention_s": attention_s,
            "gemm_flops_per_s": gemm_flops / gemm_s, "ceiling_flops": flops / (gemm_s + attention_s)}


# ---- the batched MLP baseline against its bounds -------------------------------------------------------


def mlp_params(d: int, *, depth: int, width: int = 200) -> int:
    """Weights and biases of one prompt's MLP."""
    sizes = layer_sizes(d, width, depth)
    return sum((sizes[j] + 1) * sizes[j + 1] for j in range(depth))


def mlp_epoch_flops(d: int, position: int, *, depth: int, width: int = 200) -> int:
    """Matmul FLOPs of one prompt's epoch in :func:`~icdl.gpt_icl.core.baselines.trained_mlp` (forward and backward
    on ``position`` examples, then the query's forward); Adam's element-wise update is not counted."""
    params = init_mlps(range(1), depth, d, width, seed=0)
    x = torch.randn(1, position + 1, d)

    def epoch():
        (mlp_forward(params, x[:, :position]) ** 2).sum().backward()
        with torch.no_grad():
            mlp_forward(params, x[:, position:])

    return count_flops(epoch)


#: float32 values moved per weight in one epoch of ``trained_mlp``: the forward pass, the backward pass
#: and the query's forward pass read it (3), the backward pass writes its gradient (1), Adam reads the
#: gradient, both moments and the weight (4) and writes the moments and the weight (3)
MLP_VALUES_PER_WEIGHT_EPOCH = 11


def mlp_products_seconds(d: int, position: int, *, depth: int, width: int = 200, chunk: int = 16,
                         repeats: int = 20) -> float:
    """Seconds per prompt and epoch of ``trained_mlp``'s matrix products alone, at their own shapes (a chunk
    of ``chunk`` prompts: per layer the forward product, the two products of its backward pass, and the
    query's forward product), with nothing else in between -- best of ``repeats``. At ``position`` ≈ 20
    examples the products have an inner size of 20, where a CPU's matmul runs far below its large-matrix
    rate: this, not the large matmul, is what the batched program can approach."""
    sizes = layer_sizes(d, width, depth)
    mats = [(torch.randn(chunk, position, sizes[j]), torch.randn(chunk, sizes[j], sizes[j + 1]),
             torch.randn(chunk, position, sizes[j + 1]), torch.randn(chunk, 1, sizes[j])) for j in range(depth)]

    def products():
        for x, w, dy, q in mats:
            torch.bmm(x, w)                   # forward
            torch.bmm(dy, w.transpose(1, 2))  # gradient of the input
            torch.bmm(x.transpose(1, 2), dy)  # gradient of the weight
            torch.bmm(q, w)                   # the query's forward pass

    return best_seconds(products, repeats) / chunk


def trained_mlp_loop(xs: Tensor, ys: Tensor, position: int, *, depth: int, width: int = 200, epochs: int = 100,
                     lr: float = 1e-3, seed: int = 0) -> Tensor:
    """The same training as ``trained_mlp``, written the plain way: one ``nn.Sequential`` and one Adam per
    prompt, in a Python loop. Returns the predictions ``(epochs, B)`` (the benchmark's reference)."""
    torch.manual_seed(seed)
    B = xs.shape[0]
    preds = torch.empty(epochs, B)
    sizes = layer_sizes(xs.shape[2], width, depth)
    for b in range(B):
        layers: list[torch.nn.Module] = []
        for j in range(depth):
            layers.append(torch.nn.Linear(sizes[j], sizes[j + 1]))
            if j < depth - 1:
                layers.append(torch.nn.ReLU())
        net = torch.nn.Sequential(*layers)
        opt = torch.optim.Adam(net.parameters(), lr=lr)
        for e in range(epochs):
            loss = ((net(xs[b, :position])[:, 0] - ys[b, :position]) ** 2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            with torch.no_grad():
                preds[e, b] = net(xs[b, position:position + 1])[0, 0]
    return preds


def benchmark_batched_vs_loop(xs: Tensor, ys: Tensor, position: int, *, depth: int, width: int = 200,
                              epochs: int = 100, loop_prompts: int = 16, chunk: int = 16) -> dict:
    """Seconds for ``trained_mlp`` on all ``B`` prompts at once against :func:`trained_mlp_loop` on the first
    ``loop_prompts`` prompts, scaled to ``B`` (the loop's time is linear in the number of prompts).

    Also the bounds any implementation meets on this machine: ``compute_floor_s`` is the matmul FLOPs of
    all prompts and epochs (:func:`mlp_epoch_flops`) at the FLOP/s of a large matmul (``max_speedup =
    loop_s / compute_floor_s`` the most a batched program could gain over the loop); ``memory_floor_s``
    streams every prompt's weights, gradient and Adam moments once per epoch
    (:data:`MLP_VALUES_PER_WEIGHT_EPOCH` float32 values per weight) at the bandwidth of a large copy; the
    roofline is the larger of the two, and ``over_roofline`` the measured time over it. ``products_s`` is
    the time of the program's own matrix products at their shapes (:func:`mlp_products_seconds`), the part
    no implementation of this training avoids, and ``over_products`` the measured time over it."""
    B = xs.shape[0]
    trained_mlp(xs[:2], ys[:2], position, depth=depth, width=width, epochs=2)  # warm-up: first calls are slow
    trained_mlp_loop(xs[:1], ys[:1], position, depth=depth, width=width, epochs=2)
    t = time.perf_counter()
    trained_mlp(xs, ys, position, depth=depth, width=width, epochs=epochs, chunk=chunk)
    batched = time.perf_counter() - t
    t = time.perf_counter()
    trained_mlp_loop(xs[:loop_prompts], ys[:loop_prompts], position, depth=depth, width=width, epochs=epochs)
    loop = (time.perf_counter() - t) * B / loop_prompts
    flops = mlp_epoch_flops(xs.shape[2], position, depth=depth, width=width)
    peak = matmul_flops_per_second()
    floor = B * epochs * flops / peak
    bytes_per_epoch = 4 * MLP_VALUES_PER_WEIGHT_EPOCH * mlp_params(xs.shape[2], depth=depth, width=width)
    bandwidth = memory_bandwidth()
    memory_floor = B * epochs * bytes_per_epoch / bandwidth
    roofline = max(floor, memory_floor)
    products = B * epochs * mlp_products_seconds(xs.shape[2], position, depth=depth, width=width, chunk=chunk)
    return {"prompts": B, "position": position, "width": width, "depth": depth, "epochs": epochs, "chunk": chunk,
            "batched_s": batched, "loop_s_extrapolated": loop, "loop_prompts_timed": loop_prompts,
            "speedup": loop / batched, "flops_per_prompt_epoch": flops, "matmul_flops": peak,
            "compute_floor_s": floor, "max_speedup": loop / floor, "bytes_per_prompt_epoch": bytes_per_epoch,
            "memory_bandwidth": bandwidth, "memory_floor_s": memory_floor, "roofline_s": roofline,
            "over_roofline": batched / roofline, "products_s": products, "over_products": batched / products}


#: the benchmark's settings: (examples, prompts) -- 6400 prompts at 20 examples, and fewer prompts at the
#: other MLP positions (the batched time is linear in the prompts beyond one chunk)
BENCHMARK_CASES = ((20, 6400), (5, 1600), (39, 1600))
#: the seed of the benchmark's prompts
BENCHMARK_SEED = 3


def benchmark(cfg) -> list[dict]:
    """:func:`benchmark_batched_vs_loop` for every case of :data:`BENCHMARK_CASES`, on prompts of the
    profile's first target depth and its MLP settings (``--benchmark``)."""
    depth = cfg["depths"][0]
    cases = []
    for position, prompts in BENCHMARK_CASES:
        xs, ys = sample_prompts(TaskConfig(d=cfg["d"], depth=depth), prompts, position + 1,
                                torch.Generator().manual_seed(BENCHMARK_SEED))
        cases.append(benchmark_batched_vs_loop(xs, ys, position, depth=depth, width=cfg["mlp_width"],
                                               epochs=cfg["mlp_epochs"], loop_prompts=16))
        c = cases[-1]
        print(f"{position} examples, {prompts} prompts: {c['batched_s']:.0f} s batched, speed-up "
              f"{c['speedup']:.1f}× over the loop; compute floor {c['compute_floor_s']:.0f} s, memory floor "
              f"{c['memory_floor_s']:.0f} s: {c['over_roofline']:.1f}× the roofline; its products alone "
              f"{c['products_s']:.0f} s ({c['over_products']:.1f}×)", flush=True)
    return cases


def benchmark_table(data: dict) -> pd.DataFrame:
    """A ``--benchmark`` result as a table: per case the batched and loop seconds, the speed-up, the
    batched program's matmul FLOP/s against a large matmul's, the compute and memory floors, and the
    measured time over the roofline and over the products alone."""
    rows = [{"examples": c["position"], "prompts": c["prompts"], "batched s": c["batched_s"],
             "loop s (scaled)": c["loop_s_extrapolated"], "speed-up": c["speedup"],
             "batched GFLOP/s": c["flops_per_prompt_epoch"] * c["prompts"] * c["epochs"] / c["batched_s"] / 1e9,
             "matmul GFLOP/s": c["matmul_flops"] / 1e9,
             "compute floor s": c["compute_floor_s"], "memory floor s": c["memory_floor_s"],
             "over roofline": c["over_roofline"], "products alone s": c["products_s"],
             "over products": c["over_products"], "largest possible speed-up": c["max_speedup"]}
            for c in data["cases"]]
    return pd.DataFrame(rows).round(1)


def benchmark_shown(data: dict) -> pd.DataFrame:
    """:func:`benchmark_table` as the appendix shows it: one column per case (its examples and prompts), one
    row per measure, so that thirteen measures read down the page instead of across it."""
    table = benchmark_table(data)
    shown = table.drop(columns=["examples", "prompts"]).T
    shown.columns = [f"{int(r.examples)} examples × {count(r.prompts)} prompts" for r in table.itertuples()]
    return shown.rename_axis("measure").reset_index()


#: the batched MLP baseline's target: at most this many times its roofline (compute or memory floor)
MLP_TARGET_OVER_ROOFLINE = 2.0


def _examples(positions: list[int]) -> str:
    """``[5]`` -> ``5 examples``; ``[20, 39]`` -> ``20 and 39 examples``."""
    names = [str(p) for p in sorted(positions)]
    return (", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]) + " examples"


def benchmark_glue(data: dict) -> dict[str, str]:
    """The numbers the computation appendix quotes from a ``--benchmark`` result, formatted: the range over
    cases of the speed-up, of the time over the roofline and of the time over the products alone; per case
    (by its number of examples) the time over the roofline, the products alone over the roofline, and what
    the target of :data:`MLP_TARGET_OVER_ROOFLINE` leaves for everything else (the target minus the latter), and
    in words where the target is met and where missed."""
    table = benchmark_table(data)
    out = {}
    for key, col in (("speedup", "speed-up"), ("over_roofline", "over roofline"), ("over_products", "over products")):
        out[f"mlp_{key}_lo"], out[f"mlp_{key}_hi"] = f"{table[col].min():.1f}", f"{table[col].max():.1f}"
    met = [c["position"] for c in data["cases"] if c["over_roofline"] <= MLP_TARGET_OVER_ROOFLINE]
    missed = [c["position"] for c in data["cases"] if c["over_roofline"] > MLP_TARGET_OVER_ROOFLINE]
    out["mlp_target"] = f"{MLP_TARGET_OVER_ROOFLINE:g}"
    out["mlp_target_verdict"] = "; ".join(f"{word} at {_examples(where)}" for word, where in
                                          (("met", met), ("missed", missed)) if where)
    for c in data["cases"]:
        products = c["products_s"] / c["roofline_s"]
        out[f"mlp_roofline_{c['position']}"] = f"{c['over_roofline']:.1f}"
        out[f"mlp_products_roofline_{c['position']}"] = f"{products:.1f}"
        out[f"mlp_left_{c['position']}"] = f"{MLP_TARGET_OVER_ROOFLINE - products:.1f}"
    return out
