"""How fast the models of ICDL sec. 5 train (the book's computation appendix):

* :func:`smoke` -- training steps of a profile's first model timed beside a large matmul on the same device
  (``--smoke``: the GPU smoke test; ``--speed``);
* :func:`concurrent_smoke` -- the same in several single-threaded processes at once (how the reference run
  uses the cores);
* :func:`run_speed` -- ``--speed``: rounds of one thread, two threads and two processes, against a same-run
  matmul and the step's own products alone (:func:`icdl.gpt_icl.core.measure.matmul_ceiling`);
* :func:`side_by_side` -- ``--speed`` too: our step, our compiled step (``TrainConfig.fast``) and the
  HuggingFace GPT-2 design, interleaved in one process on one thread (:func:`side_by_side_table`);
* :func:`speed_table` -- that result per setting: medians over rounds and the spread;
* :func:`save_measurement` -- the one writer of the measurements under ``results/computation/``.
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import torch

from icdl.gpt_icl.core.measure import flops_per_step, matmul_ceiling, matmul_flops_per_second
from icdl.gpt_icl.core.model import InContextGPT
from icdl.gpt_icl.core.schedule import configs
from icdl.gpt_icl.core.tasks import sample_prompts
from icdl.repro.results import save_profile_result
from icdl.repro.typeset import count, percent


def _ranged(value: str, lo: str, hi: str) -> str:
    """A number with its range over the runs, ``"1.24 (1.20–1.31)"``; alone where the range prints as one value
    (the HF design against itself is 1.00 by definition, not ``1.00 (1.00–1.00)``)."""
    return value if lo == hi else f"{value} ({lo}–{hi})"


def smoke(cfg, *, device: str, steps: int = 200, warmup: int = 10, matmul_n: int = 4096) -> dict:
    """The GPU smoke test of the ``paper`` profile (README): ``steps`` training steps of the profile's model on
    ``device`` after ``warmup`` untimed ones; steps per second, achieved FLOP/s (torch's FLOP counter) against
    an ``matmul_n²`` matmul timed on the same device in the same run, peak memory, and the projected time of
    the profile's training (every model of the main part) on 1, 2, 4 and 8 devices -- assuming ideal
    data-parallel scaling, an upper bound on the speed-up. Fails with one line where ``device`` is absent."""
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("--smoke --device cuda: no CUDA device is available on this machine")
    if steps < 1 or warmup < 0:
        raise ValueError(f"steps must be >= 1 and warmup >= 0, got {steps}, {warmup}")
    mcfg, tcfg, tr = configs(cfg, cfg["depths"][0], "softmax", cfg["n_layer"])
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
    relu_steps = cfg["relu_steps"] if cfg["relu_init"] == "softmax" else cfg["steps"]
    total_steps = len(cfg["depths"]) * (cfg["steps"] + relu_steps)
    return {"device": device, "threads": torch.get_num_threads(), "steps": steps, "steps_per_s": steps / seconds,
            "flops_per_step": flops,
            "achieved_flops": flops / per_step, "matmul_flops": matmul_flops_per_second(matmul_n, device=device),
            "peak_memory_bytes": peak, "total_training_steps": total_steps,
            "projected_hours": {g: total_steps * per_step / g / 3600 for g in (1, 2, 4, 8)}}


def _smoke_worker(cfg, steps: int, barrier, queue) -> None:
    """One single-threaded process of :func:`concurrent_smoke`: wait for the others, then train and report."""
    torch.set_num_threads(1)
    barrier.wait()
    queue.put(smoke(cfg, device="cpu", steps=steps, warmup=20, matmul_n=256))


def concurrent_smoke(cfg, *, processes: int = 2, steps: int = 200) -> list[dict]:
    """:func:`smoke` in ``processes`` single-threaded processes at once, each training its own model (the way
    the reference run uses several cores: :mod:`icdl.gpt_icl.reference`); their timed steps start together.
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


def run_speed(cfg, steps: int = 200, rounds: int = 3) -> dict:
    """Training FLOP/s of the profile's first model, timed side by side with a 2048² matmul in the same
    process at the same thread count, for one thread and for two; then two single-threaded processes
    training at once (how the reference run uses the two cores), against the two-thread matmul of the same
    command. ``rounds`` rounds of all three, one after the other: timings on these machines vary by tens of
    per cent from minute to minute, so the spread is part of the result (``speed.<profile>.json``)."""
    old = torch.get_num_threads()
    runs = []
    mcfg, _, tr = configs(cfg, cfg["depths"][0], "softmax", cfg["n_layer"])
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
        torch.set_num_threads(1)
        side = side_by_side(cfg)
    finally:
        torch.set_num_threads(old)
    return {"steps": steps, "rounds": rounds, "runs": runs, "flops_per_step": runs[0]["flops_per_step"],
            "side_by_side": side}


def speed_table(data: dict) -> pd.DataFrame:
    """The ``--speed`` result per setting (processes × threads; the plain step): the median over rounds of each rate and
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


#: the target share of a same-run large matmul's FLOP/s that training should reach
TARGET_SHARE = 0.5


def share_verdict(lo: float, hi: float, target: float = TARGET_SHARE) -> str:
    """How a setting's shares over rounds (lowest ``lo``, highest ``hi``) stand against ``target``."""
    if lo >= target:
        return "meets the target in every round"
    if hi >= target:
        return "reaches the target in some rounds, not in all"
    return "falls short of the target in every round"


def speed_shown(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`speed_table` as the appendix shows it: one row per setting, readable headers with units, shares
    as per cent with their range over rounds, a dash where a setting has no ceiling (two processes)."""
    def pct(v):
        return "—" if v != v else percent(v)

    out = pd.DataFrame({
        "setting": [f"{int(r.processes)} process{'es' if r.processes > 1 else ''} × {int(r.threads)} "
                    f"thread{'s' if r.threads > 1 else ''}" if r.processes == 1 else
                    f"{int(r.processes)} processes × 1 thread" for r in table.itertuples()],
        "rounds": table["rounds"].astype(int),
        "steps/s": table["steps_per_s"].map("{:.1f}".format),
        "training GFLOP/s": (table["achieved_flops"] / 1e9).map("{:.1f}".format),
        "matmul GFLOP/s": (table["matmul_flops"] / 1e9).map("{:.1f}".format),
        "share of the matmul (range)": [_ranged(percent(r.share_of_matmul), percent(r.share_lo), percent(r.share_hi))
                                        for r in table.itertuples()],
    })
    for col, name in (("gemm_share_of_matmul", "linear layers alone"),
                      ("ceiling_share_of_matmul", "all products alone")):
        if col in table:
            out[name] = table[col].map(pct)
    return out


def speed_glue(data: dict) -> dict[str, str]:
    """The numbers the appendix quotes from a ``--speed`` result, per setting (``1``, ``2``: one process on
    that many threads; ``2p``: two processes): the median, lowest and highest share of the matmul, the
    ceiling's and the linear layers' shares (where measured), and the :func:`share_verdict`."""
    out = {"speed_rounds": f"{data['rounds']}"}
    for r in speed_table(data).itertuples():
        key = f"{r.threads}" if r.processes == 1 else f"{r.processes}p"
        for name, col in (("share", "share_of_matmul"), ("lo", "share_lo"), ("hi", "share_hi"),
                          ("ceiling", "ceiling_share_of_matmul"), ("gemm", "gemm_share_of_matmul")):
            share = getattr(r, col, float("nan"))
            if share == share:  # not NaN: the two-process row has no ceiling of its own
                out[f"speed_{name}_{key}"] = percent(share)
        out[f"speed_verdict_{key}"] = share_verdict(r.share_lo, r.share_hi)
    return out


def save_measurement(cfg, name: str, res: dict, started: float) -> Path:
    """``results/computation/<name>.<profile>.json`` (``name``: speed, benchmark) with the thread count and
    the provenance of ``python -m icdl.gpt_icl --profile <profile> --<name>``, which began at ``started``."""
    from icdl.studies.computation import PROFILES as COMPUTATION

    profile = cfg["profile"]
    return save_profile_result(COMPUTATION, name, {**res, "threads": torch.get_num_threads()}, profile=profile,
                               seed=cfg["seed"], started=started,
                               command=f"python -m icdl.gpt_icl --profile {profile} --{name}")


# ---- side by side: our step, our compiled step, and the HuggingFace GPT-2 design ------------------------

#: the three training steps :func:`side_by_side` times, by name
VARIANTS = ("ours", "ours, compiled", "HuggingFace GPT-2")
#: the targets of ICDL issue 27 for one thread: steps per second over the HuggingFace design's, and the share
#: of a same-run large matmul
TARGET_OVER_HF, TARGET_SHARE_FAST = 1.5, 0.6


def hf_gpt2(mcfg) -> torch.nn.Module:
    """The same model built from HuggingFace ``transformers`` GPT-2 blocks: the read-in linear, ``GPT2Model``
    (learned positions, pre-LayerNorm blocks, tanh-approximate GELU, no dropout) on the token embeddings, the
    read-out linear at the tokens of the x's. A benchmark only: the package never trains it, and only
    :func:`side_by_side` imports ``transformers``."""
    try:
        from transformers import GPT2Config, GPT2Model
    except ImportError:
        raise RuntimeError("the side-by-side benchmark needs HuggingFace transformers "
                           "(pip install -r requirements.txt)") from None
    from torch import nn

    class HFInContextGPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.read_in = nn.Linear(mcfg.d, mcfg.n_embd)
            conf = GPT2Config(vocab_size=1, n_positions=2 * mcfg.max_examples, n_embd=mcfg.n_embd,
                              n_layer=mcfg.n_layer, n_head=mcfg.n_head, resid_pdrop=0.0, embd_pdrop=0.0,
                              attn_pdrop=0.0, use_cache=False, bos_token_id=None, eos_token_id=None)
            self.body = GPT2Model(conf, attn_implementation="sdpa") if _accepts_attn(GPT2Model) else GPT2Model(conf)
            self.read_out = nn.Linear(mcfg.n_embd, 1)

        def forward(self, xs, ys):
            h = self.body(inputs_embeds=self.read_in(InContextGPT.interleave(xs, ys))).last_hidden_state
            return self.read_out(h)[:, ::2, 0]

    return HFInContextGPT()


def _accepts_attn(cls) -> bool:
    import inspect

    return "attn_implementation" in inspect.signature(cls.__init__).parameters


def side_by_side(cfg, *, steps: int = 100, rounds: int = 7, matmul_n: int = 2048) -> dict:
    """The training step of the profile's first model three ways (:data:`VARIANTS`) -- our model as the
    reference profiles train it, our model through :func:`icdl.gpt_icl.core.training.compiled_step` with the fused
    Adam (``TrainConfig.fast``), and :func:`hf_gpt2` -- in this process at this thread count, on the same
    pre-drawn prompts, ``steps`` steps each per round, the variants interleaved within every round and a
    ``matmul_n²`` matmul timed in every round. FLOPs per step by torch's counter on our model (the HuggingFace
    design computes the same products). Returns the per-round rows."""
    from icdl.gpt_icl.core.training import compiled_step, optimiser

    mcfg, tcfg, tr = configs(cfg, cfg["depths"][0], "softmax", cfg["n_layer"])
    g = torch.Generator().manual_seed(0)
    batches = [sample_prompts(tcfg, tr.batch, tr.examples, g) for _ in range(8)]
    flops = flops_per_step(mcfg, tr.batch, tr.examples)

    def make(name):
        torch.manual_seed(0)
        model = hf_gpt2(mcfg) if name == "HuggingFace GPT-2" else InContextGPT(mcfg)
        fast = name == "ours, compiled"
        opt, net = optimiser(model, tr.lr, fast), compiled_step(model, fast)

        def run(n):
            for i in range(n):
                xs, ys = batches[i % len(batches)]
                loss = ((net(xs, ys) - ys) ** 2).mean()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
        run(20)  # warm-up (and the compile)
        return run, sum(p.numel() for p in model.parameters())

    runs = {name: make(name) for name in VARIANTS}
    rows = []
    for rnd in range(rounds):
        matmul = matmul_flops_per_second(matmul_n)
        for name, (run, params) in runs.items():
            t0 = time.perf_counter()
            run(steps)
            rate = steps / (time.perf_counter() - t0)
            rows.append({"round": rnd, "variant": name, "params": params, "steps_per_s": rate,
                         "achieved_flops": rate * flops, "matmul_flops": matmul,
                         "share_of_matmul": rate * flops / matmul})
        print(f"round {rnd}: " + ", ".join(f"{r['variant']} {r['steps_per_s']:.1f}" for r in rows[-3:])
              + " steps/s", flush=True)
    return {"threads": torch.get_num_threads(), "steps": steps, "rounds": rounds, "flops_per_step": flops,
            "rows": rows}


def side_by_side_table(data: dict) -> pd.DataFrame:
    """Per variant: the median steps per second and share of the matmul over rounds, and the ratio of its
    steps per second to the HuggingFace design's in the same round (median, lowest, highest)."""
    rows = pd.DataFrame(data["rows"])
    hf = rows[rows["variant"] == "HuggingFace GPT-2"].set_index("round")["steps_per_s"]
    rows["over_hf"] = rows["steps_per_s"] / rows["round"].map(hf)
    out = rows.groupby("variant", sort=False).agg(
        params=("params", "first"), steps_per_s=("steps_per_s", "median"), share=("share_of_matmul", "median"),
        share_lo=("share_of_matmul", "min"), share_hi=("share_of_matmul", "max"), over_hf=("over_hf", "median"),
        over_hf_lo=("over_hf", "min"), over_hf_hi=("over_hf", "max"))
    return out.reset_index()


def side_by_side_glue(data: dict) -> dict[str, str]:
    """The appendix's numbers from :func:`side_by_side`: for our plain and compiled steps the ratio to the
    HuggingFace design and the share of the matmul (median, range over rounds) and how they stand against
    :data:`TARGET_OVER_HF` and :data:`TARGET_SHARE_FAST`."""
    t = side_by_side_table(data).set_index("variant")
    out = {"sbs_rounds": f"{data['rounds']}", "sbs_target_hf": f"{TARGET_OVER_HF}",
           "sbs_target_share": percent(TARGET_SHARE_FAST)}
    for key, name in (("plain", "ours"), ("fast", "ours, compiled")):
        r = t.loc[name]
        out |= {f"sbs_{key}_hf": f"{r.over_hf:.2f}", f"sbs_{key}_hf_lo": f"{r.over_hf_lo:.2f}",
                f"sbs_{key}_hf_hi": f"{r.over_hf_hi:.2f}", f"sbs_{key}_share": percent(r.share),
                f"sbs_{key}_share_lo": percent(r.share_lo), f"sbs_{key}_share_hi": percent(r.share_hi),
                f"sbs_{key}_hf_verdict": share_verdict(r.over_hf_lo, r.over_hf_hi, TARGET_OVER_HF),
                f"sbs_{key}_share_verdict": share_verdict(r.share_lo, r.share_hi, TARGET_SHARE_FAST)}
    return out


def side_by_side_shown(data: dict) -> pd.DataFrame:
    """:func:`side_by_side_table` as the appendix shows it: per variant its parameters, median steps per
    second, the ratio to the HuggingFace design (median and range over rounds) and the share of the matmul
    (median and range)."""
    t = side_by_side_table(data)
    return pd.DataFrame({
        "training step": t["variant"], "parameters": t["params"].map(count),
        "steps/s (median)": t["steps_per_s"].map("{:.1f}".format),
        "× HuggingFace (range)": [_ranged(f"{r.over_hf:.2f}", f"{r.over_hf_lo:.2f}", f"{r.over_hf_hi:.2f}")
                                  for r in t.itertuples()],
        "share of the matmul (range)": [_ranged(percent(r.share), percent(r.share_lo), percent(r.share_hi))
                                        for r in t.itertuples()],
    })
