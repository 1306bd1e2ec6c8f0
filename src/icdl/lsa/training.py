"""Training Hagiwara's TF(4, 2, 2) as in LSA sec. 4 (chapter ``lsa_training``): many runs as one batched
program, steps through ``torch.compile`` (falling back to eager), checkpoints that resume, and shards
that split the runs over processes and merge again. How fast each of these is: :func:`benchmark_batched_vs_loop`,
:func:`segments_table` and :func:`segments_shown` (the book's computation appendix)."""

from __future__ import annotations

import time
import warnings
from contextlib import ExitStack, nullcontext
from pathlib import Path

import pandas as pd
import torch
from tqdm import tqdm

from ..repro.checkpoints import checkpoint_exists, load_checkpoint, remove_checkpoint, save_checkpoint
from ..repro.commits import git_commit
from ..repro.files import one_writer
from ..repro.results import hardware
from .model import TF, LSAData, sample_data, tf_forward

Tensor = torch.Tensor


def _run_data(cfg, split: int, dtype: torch.dtype = torch.float32) -> LSAData:
    """Training (split 0), validation (1) or test (2) data: different for every run and split."""
    size = {0: cfg["M"], 1: cfg["M_val"], 2: cfg["test_prompts"]}[split]
    g = torch.Generator().manual_seed(10_000 * cfg["seed"] + 1000 * split + 7)
    return sample_data((cfg["runs"], size), cfg["N"], generator=g, dtype=dtype)


def _mse(model: TF, d: LSAData) -> Tensor:
    with torch.no_grad():
        return ((model(d.P) - d.target) ** 2).mean(1)


class _TrainForward:
    """:func:`tf_forward` for the training steps, through ``torch.compile`` when asked. If compiling
    fails (no C++ compiler, an unsupported platform) it warns once and runs eagerly: the same
    arithmetic up to float rounding, about 6× slower (:func:`benchmark_batched_vs_loop`)."""

    def __init__(self, compile: bool):
        with warnings.catch_warnings():  # torch's own deprecation notices, printed on importing the compiler
            warnings.simplefilter("ignore", DeprecationWarning)
            self.fn = torch.compile(tf_forward, dynamic=False) if compile else tf_forward

    def __call__(self, Pt: Tensor, model: TF) -> Tensor:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                return self.fn(Pt, model.W_in, model.W, model.W_out)
        except Exception as err:  # any compiler failure: fall back, the eager call re-raises real errors
            if self.fn is tf_forward:
                raise
            warnings.warn(f"torch.compile failed ({type(err).__name__}: {str(err)[:200]}); training eagerly",
                          RuntimeWarning, stacklevel=2)
            self.fn = tf_forward
            return self.fn(Pt, model.W_in, model.W, model.W_out)


def shard_runs(runs: int, shard: tuple[int, int]) -> list[int]:
    """The runs of shard ``i`` of ``n`` (contiguous blocks: runs 0–4 and 5–9 for ``n = 2`` of 10)."""
    i, n = shard
    if not (isinstance(i, int) and isinstance(n, int) and 1 <= n <= runs and 0 <= i < n):
        raise ValueError(f"shard must be (i, n) with 1 <= n <= runs={runs} and 0 <= i < n, got {shard!r}")
    return torch.arange(runs).tensor_split(n)[i].tolist()


def _select_data(d: LSAData, idx: Tensor) -> LSAData:
    return LSAData(**{k: v[idx] for k, v in d.__dict__.items()})


def train(cfg, *, checkpoint: Path | None = None, checkpoint_every: int = 500, progress: bool = True,
          max_epochs_this_call: int | None = None, compile: bool = True, runs: list[int] | None = None,
          lock: bool = True, dtype: torch.dtype = torch.float32) -> dict:
    """:func:`_train` with the checkpoint held by one writer at a time
    (:func:`icdl.repro.files.one_writer`): a second run on the same checkpoint is refused at once.
    ``lock=False`` for a caller that holds the checkpoint's lock already. ``dtype`` is the paper's float32
    everywhere in the book; float64 serves the regression test, whose numbers must not depend on the CPU (in
    float32, Adam turns a near-zero gradient's rounding into a full step, and the curve moves by 10 % between
    two x86 machines)."""
    with one_writer(checkpoint, f"checkpoint {checkpoint}") if checkpoint is not None and lock else nullcontext():
        return _train(cfg, checkpoint=checkpoint, checkpoint_every=checkpoint_every, progress=progress,
                      max_epochs_this_call=max_epochs_this_call, compile=compile, runs=runs, dtype=dtype)


def _train(cfg, *, checkpoint: Path | None, checkpoint_every: int, progress: bool, max_epochs_this_call: int | None,
           compile: bool, runs: list[int] | None, dtype: torch.dtype = torch.float32) -> dict:
    """Train ``cfg['runs']`` independent TF(4, 2, 2)s as one batched model (LSA sec. 4.1).

    Loss per run: MSE to the least-squares target + ``l1 · (‖W_in‖₁ + ‖W_out‖₁)``; the runs' losses
    are summed, so Adam (elementwise) updates each run exactly as if trained alone. Validation MSE
    every ``val_every`` epochs; the best weights of each run are kept. With ``checkpoint`` the state
    is saved atomically every ``checkpoint_every`` epochs and a rerun resumes from it.
    ``compile=True`` runs the training steps through ``torch.compile`` (one thread: ≈ 6× the eager
    batched steps per second; the first call compiles for ≈ 25 s; see :func:`benchmark_batched_vs_loop`).
    ``runs`` trains only those runs (a shard, :func:`shard_runs`) with exactly the data, initialisation
    and batches they get in the full batched model, so shards can train in parallel processes and
    :func:`merge_shard_checkpoints` joins them.
    Every call logs a *segment* (epochs, runs, compiled or not, commit, hardware, seconds) in the
    checkpoint, so a result says how it was produced (:func:`segments_table`).
    Returns ``{"model": best model, "history": DataFrame, "epochs_done": int, "seconds": float,
    "segments": list}``.
    """
    T = cfg["N"] + 1
    if cfg["M"] % cfg["batch"]:
        raise ValueError(f"batch={cfg['batch']} must divide M={cfg['M']}")
    idx_runs = torch.arange(cfg["runs"]) if runs is None else torch.as_tensor(runs)
    if idx_runs.dim() != 1 or len(idx_runs) == 0 or idx_runs.min() < 0 or idx_runs.max() >= cfg["runs"]:
        raise ValueError(f"runs must be a non-empty list of run indices in 0..{cfg['runs'] - 1}, got {runs!r}")
    R = len(idx_runs)
    train_d, val_d = (_select_data(_run_data(cfg, split, dtype), idx_runs) for split in (0, 1))
    train_Pt = train_d.P.transpose(-1, -2).contiguous()  # (R, M, 3, T): tokens last, see tf_forward
    forward = _TrainForward(compile)
    model = TF(4, 2, 2, T, runs=cfg["runs"], generator=torch.Generator().manual_seed(cfg["seed"]), dtype=dtype)
    if runs is not None:
        model = model.select_runs(idx_runs)
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    g = torch.Generator().manual_seed(cfg["seed"] + 1)
    best = {k: v.detach().clone() for k, v in model.state_dict().items()}
    best_val = torch.full((R,), float("inf"))
    history: list[dict] = []
    epoch, seconds, segments = 0, 0.0, []
    if checkpoint is not None and checkpoint_exists(checkpoint):
        state = load_checkpoint(checkpoint, command=_command(cfg), kind="lsa")
        if state["cfg"] != {k: cfg[k] for k in state["cfg"]}:
            raise ValueError(f"checkpoint {checkpoint} was written with other settings: {state['cfg']}")
        if state.get("runs", list(range(cfg["runs"]))) != idx_runs.tolist():
            raise ValueError(f"checkpoint {checkpoint} holds runs {state.get('runs')}, not {idx_runs.tolist()}")
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        g.set_state(state["rng"])
        best, best_val, history = state["best"], state["best_val"], state["history"]
        epoch, seconds, segments = state["epoch"], state["seconds"], state.get("segments", [])
    steps = cfg["M"] // cfg["batch"]
    ar = torch.arange(R)[:, None]
    segment = {"from_epoch": epoch, "to_epoch": epoch, "runs": idx_runs.tolist(), "compile": compile,
               "commit": git_commit(), "hardware": hardware(), "seconds": 0.0}
    stop = cfg["epochs"] if max_epochs_this_call is None else min(cfg["epochs"], epoch + max_epochs_this_call)
    bar = tqdm(total=cfg["epochs"], initial=epoch, disable=not progress, desc="LSA training", unit="epoch",
               mininterval=5)
    t0 = time.perf_counter() - seconds
    while epoch < stop:
        perm = torch.argsort(torch.rand(cfg["runs"], cfg["M"], generator=g), dim=1)[idx_runs]  # as unsharded
        for s in range(steps):
            idx = perm[:, s * cfg["batch"]:(s + 1) * cfg["batch"]]
            out = forward(train_Pt[ar, idx], model)
            mse = ((out - train_d.target[ar, idx]) ** 2).mean(1)
            loss = (mse + cfg["l1"] * model.l1()).sum()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        epoch += 1
        bar.update(1)
        if epoch % cfg["val_every"] == 0 or epoch == cfg["epochs"]:
            val = _mse(model, val_d)
            better = val < best_val
            best_val = torch.where(better, val, best_val)
            for k, v in model.state_dict().items():
                best[k][better] = v.detach()[better]
            history += [{"epoch": epoch, "run": int(idx_runs[r]), "val_mse": float(val[r]),
                         "train_mse": float(mse[r].detach())} for r in range(R)]
        segment.update(to_epoch=epoch, seconds=time.perf_counter() - t0 - seconds)
        if checkpoint is not None and (epoch % checkpoint_every == 0 or epoch == stop):
            save_checkpoint(checkpoint, {"cfg": dict(cfg), "model": model.state_dict(), "opt": opt.state_dict(),
                                          "rng": g.get_state(), "best": best, "best_val": best_val,
                                          "history": history, "epoch": epoch, "runs": idx_runs.tolist(),
                                          "segments": segments + [segment],
                                          "seconds": time.perf_counter() - t0},
                            command=_command(cfg), profile=cfg.get("profile", ""))
    bar.close()
    final = TF(4, 2, 2, T, runs=R, dtype=dtype)
    final.load_state_dict(best)
    return {"model": final, "history": pd.DataFrame(history), "epochs_done": epoch,
            "seconds": time.perf_counter() - t0,
            "segments": segments + ([segment] if segment["to_epoch"] > segment["from_epoch"] else [])}


def _command(cfg) -> str:
    return f"python -m icdl.lsa --profile {cfg.get('profile', 'reference')}"


def _shard_paths(checkpoint: Path, n: int) -> list[Path]:
    checkpoint = Path(checkpoint)
    return [checkpoint.with_name(f"{checkpoint.stem}.shard{i}of{n}{checkpoint.suffix}") for i in range(n)]


_PER_RUN_OPT = ("exp_avg", "exp_avg_sq")  # Adam's per-element state; "step" is shared by all runs


def split_checkpoint(checkpoint: Path, n: int, only: int | None = None) -> list[Path]:
    """Write the ``n`` shard checkpoints (runs as :func:`shard_runs`) of a checkpoint of all runs -- or only
    shard ``only`` -- so that an unsharded run can continue as ``n`` parallel processes; a shard that exists
    already is never overwritten (it may have trained further). Returns the shard paths."""
    state = load_checkpoint(checkpoint, kind="lsa")
    runs = state.get("runs", list(range(state["cfg"]["runs"])))
    paths = _shard_paths(checkpoint, n)
    for i, path in enumerate(paths):
        if (only is not None and i != only) or checkpoint_exists(path):
            continue
        keep = shard_runs(len(runs), (i, n))
        part = dict(state, runs=[runs[j] for j in keep], best_val=state["best_val"][keep],
                    model={k: v[keep] for k, v in state["model"].items()},
                    best={k: v[keep] for k, v in state["best"].items()},
                    history=[h for h in state["history"] if h["run"] in {runs[j] for j in keep}])
        part["opt"] = {"param_groups": state["opt"]["param_groups"],
                       "state": {p: {k: (v[keep] if k in _PER_RUN_OPT else v) for k, v in st.items()}
                                 for p, st in state["opt"]["state"].items()}}
        save_checkpoint(path, part, command=_command(state["cfg"]), profile=state["cfg"].get("profile", ""))
    return paths


def merge_shard_checkpoints(checkpoint: Path, n: int, cfg=None) -> None:
    """Join the ``n`` shard checkpoints of :func:`split_checkpoint` (all at the same epoch) into
    ``checkpoint`` and delete them. Training seconds: the slowest shard's (they ran in parallel).
    Shards from one run only: they must share their settings (and match ``cfg`` where given) and together
    hold every run once; a merge never replaces a checkpoint that is further along than the shards (shards
    left from another, shorter run), and a refusal leaves every file as it was."""
    paths = _shard_paths(checkpoint, n)
    with ExitStack() as held:  # no shard may train while it is merged
        for p in paths:
            held.enter_context(one_writer(p, f"shard checkpoint {p}"))
        _merge(checkpoint, paths, cfg)


def _merge(checkpoint: Path, paths: list[Path], cfg) -> None:
    present = [p for p in paths if checkpoint_exists(p)]
    if 0 < len(present) < len(paths) and checkpoint_exists(checkpoint):
        current = load_checkpoint(checkpoint, kind="lsa")
        whole = sorted(current.get("runs", range(current["cfg"]["runs"]))) == list(range(current["cfg"]["runs"]))
        if whole and all(load_checkpoint(p, kind="lsa")["epoch"] <= current["epoch"] for p in present):
            for p in present:  # left over from a merge stopped while deleting its shards: already merged
                remove_checkpoint(p)
            return
    missing = [str(p) for p in paths if not checkpoint_exists(p)]
    if missing:
        raise ValueError(f"cannot merge: shard checkpoints missing: {missing}")
    parts = [load_checkpoint(p, kind="lsa") for p in paths]
    epochs = {p["epoch"] for p in parts}
    if len(epochs) != 1:
        raise ValueError(f"cannot merge shards at different epochs {sorted(epochs)}: train each to the same epoch")
    settings = [p["cfg"] for p in parts]
    if any(s != settings[0] for s in settings) or (cfg is not None and settings[0] != {k: cfg[k] for k in settings[0]}):
        raise ValueError(f"cannot merge: the shards {[str(p) for p in paths]} were trained with other settings "
                         "than each other or this profile; delete them (or finish them with their own settings)")
    runs = sorted(r for p in parts for r in p["runs"])
    if runs != list(range(settings[0]["runs"])):
        raise ValueError(f"cannot merge: the shards hold runs {runs}, not each of 0..{settings[0]['runs'] - 1} once")
    if checkpoint_exists(checkpoint):
        current = load_checkpoint(checkpoint, kind="lsa")
        if current["epoch"] > parts[0]["epoch"]:
            raise ValueError(f"cannot merge: {checkpoint} is at epoch {current['epoch']}, the shards only at "
                             f"{parts[0]['epoch']} (left from another run); delete the shard files "
                             f"{[p.name for p in paths]} to keep the checkpoint")
    first = parts[0]

    def cat(key):
        return {k: torch.cat([p[key][k] for p in parts]) for k in first[key]}

    merged = dict(first, model=cat("model"), best=cat("best"), runs=[r for p in parts for r in p["runs"]],
                  best_val=torch.cat([p["best_val"] for p in parts]),
                  history=sorted((h for p in parts for h in p["history"]), key=lambda h: (h["epoch"], h["run"])),
                  seconds=max(p["seconds"] for p in parts),
                  segments=[seg for k, p in enumerate(parts) for seg in p.get("segments", [])
                            if seg not in sum((q.get("segments", []) for q in parts[:k]), [])])
    merged["opt"] = {"param_groups": first["opt"]["param_groups"],
                     "state": {pid: {k: (torch.cat([p["opt"]["state"][pid][k] for p in parts])
                                         if k in _PER_RUN_OPT else v) for k, v in st.items()}
                               for pid, st in first["opt"]["state"].items()}}
    save_checkpoint(checkpoint, merged, command=_command(merged["cfg"]), profile=merged["cfg"].get("profile", ""))
    for p in paths:
        remove_checkpoint(p)


def benchmark_batched_vs_loop(cfg, steps: int = 20, *, compile: bool = True) -> pd.DataFrame:
    """Training steps per second of one model batched over ``cfg['runs']`` runs against a plain loop
    of per-run models, measured side by side in one process on the same batches: the loop and the
    batched model eagerly, and the batched model through ``torch.compile`` (the way :func:`train`
    runs it). ``run_steps_per_s`` counts one step of one run; ``protocol_hours`` is what
    ``cfg['epochs']`` epochs of all runs would take at that speed; ``compile_s`` the one-off compile."""
    R, T, B = cfg["runs"], cfg["N"] + 1, cfg["batch"]
    d = sample_data((R, B), cfg["N"], generator=torch.Generator().manual_seed(0))
    Pt = d.P.transpose(-1, -2).contiguous()

    def timed(model: TF, Pt: Tensor, target: Tensor, forward) -> tuple[float, float]:
        opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
        t0 = time.perf_counter()
        for i in range(steps + 3):  # three warm-up steps (the first compiles, when compiling)
            if i == 1:
                first = time.perf_counter() - t0
            if i == 3:
                t0 = time.perf_counter()
            loss = (((forward(Pt, model) - target) ** 2).mean(1) + cfg["l1"] * model.l1()).sum()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        return time.perf_counter() - t0, first

    rows = []
    loop = [timed(TF(4, 2, 2, T, runs=1), Pt[r:r + 1], d.target[r:r + 1], _TrainForward(False)) for r in range(R)]
    rows.append(("loop over runs (eager)", sum(t for t, _ in loop), 0.0))
    t, _ = timed(TF(4, 2, 2, T, runs=R), Pt, d.target, _TrainForward(False))
    rows.append(("batched (eager)", t, 0.0))
    if compile:
        forward = _TrainForward(True)
        t, first = timed(TF(4, 2, 2, T, runs=R), Pt, d.target, forward)
        name = "batched (torch.compile)" if forward.fn is not tf_forward else "batched (compile failed: eager)"
        rows.append((name, t, first))
    df = pd.DataFrame(rows, columns=["method", "seconds", "compile_s"])
    df["run_steps_per_s"] = R * steps / df["seconds"]
    df["speedup"] = df["run_steps_per_s"] / df["run_steps_per_s"].iloc[0]
    protocol_run_steps = R * cfg["epochs"] * (cfg["M"] // B)
    df["protocol_hours"] = protocol_run_steps / df["run_steps_per_s"] / 3600
    df["threads"] = torch.get_num_threads()
    return df


def benchmark_shown(bench: pd.DataFrame) -> pd.DataFrame:
    """:func:`benchmark_batched_vs_loop`'s table (a live one, or a result file's, in its columns' order) as the
    chapter shows it: an eager method's compile time, which it does not have, as missing (the table's dash), not
    as 0.00 seconds."""
    return bench.assign(compile_s=bench["compile_s"].where(bench["compile_s"] > 0))


def segments_table(data: dict) -> pd.DataFrame:
    """How a training result was run, from the segments its checkpoints logged: per group of runs and
    implementation, the epochs, the seconds and the epochs per second, and the hours the whole protocol
    (``settings['epochs']`` epochs) would take at that rate -- for shards that ran side by side, the
    protocol's time on as many cores."""
    segs = pd.DataFrame(data.get("segments", []))
    if segs.empty:
        return pd.DataFrame(columns=["runs", "compile", "epochs", "seconds", "epochs_per_s", "protocol_hours"])
    segs["runs"] = segs["runs"].map(lambda r: f"{r[0]}–{r[-1]}" if len(r) > 1 else str(r[0]))
    segs["epochs"] = segs["to_epoch"] - segs["from_epoch"]
    df = segs.groupby(["runs", "compile"], sort=False, as_index=False)[["epochs", "seconds"]].sum()
    df["from_epoch"] = segs.groupby(["runs", "compile"], sort=False)["from_epoch"].min().to_numpy()
    df["to_epoch"] = segs.groupby(["runs", "compile"], sort=False)["to_epoch"].max().to_numpy()
    df["epochs_per_s"] = df["epochs"] / df["seconds"]
    df["protocol_hours"] = data["settings"]["epochs"] / df["epochs_per_s"] / 3600
    return df[["runs", "compile", "from_epoch", "to_epoch", "epochs", "seconds", "epochs_per_s", "protocol_hours"]]


def segments_shown(data: dict) -> pd.DataFrame:
    """:func:`segments_table` as the computation appendix prints it: wall time in whole minutes (a run of 48 minutes
    is not "2887.60" seconds), epochs per second to two decimals, the protocol's hours to one."""
    df = segments_table(data)
    return df.assign(minutes=(df["seconds"] / 60).round(0), epochs_per_s=df["epochs_per_s"].round(2),
                     protocol_hours=df["protocol_hours"].round(1)).drop(columns="seconds")
