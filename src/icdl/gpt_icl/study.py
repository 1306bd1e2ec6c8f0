"""ICDL sec. 5, objectives 1 and 2: does a trained transformer learn deep networks in context?

For every target depth (3, 4, 6 layers) and attention activation (softmax, ReLU) one
:class:`~icdl.gpt_icl.model.InContextGPT` is trained on prompts from :mod:`icdl.gpt_icl.tasks` (x from N(−2, I)); each is
then tested on prompts longer than in training and with inputs from the four mixtures of ICDL Figs. 2–4,
beside the baselines of :mod:`icdl.gpt_icl.baselines` on the same prompts. R² is computed per prompt position
across prompts (see the chapter for why not per prompt).

Profiles: ``quick`` (CI: tiny models, a few hundred steps), ``reference`` (CPU, every part:
``python -m icdl.gpt_icl --profile reference --workers 2`` on two cores, its time per stage in
``timing.reference.json``; resumable, results committed under ``results/gpt_icl/``), ``paper`` (Appendix F's settings; a command for a GPU, not run here).
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ..book.profiles import ProfileSet
from ..book.results import ResultFileError, frame_to_lists, load_result, provenance, save_result, show_reference
from . import baselines as bl
from .model import GPTConfig, InContextGPT
from .tasks import MIXTURES, TaskConfig, sample_prompts
from .training import TrainConfig, load_model, train


def memory_estimate(cfg) -> float:
    """Peak bytes of the largest step of a profile, estimated from its settings (float32, about 12 values per
    token and width per layer plus the attention scores): evaluating a model on all test prompts at once
    (no gradients: one layer's activations live at a time), a training step (every layer's activations kept
    for the backward pass), or the test prompts themselves; the largest, with half again for slack."""
    T = 2 * max(cfg["test_examples"], cfg["train_examples"], cfg["depth_train_examples"])
    layers = max(cfg["n_layer"], *cfg["depth_layers"])
    per_token_layer = 12 * cfg["n_embd"] + cfg["n_head"] * T
    evaluate = 4 * cfg["test_prompts"] * T * per_token_layer * 2
    train = 4 * cfg["batch"] * T * per_token_layer * layers * 3  # activations, gradients, optimiser traffic
    prompts = 4 * cfg["test_prompts"] * cfg["test_examples"] * (cfg["d"] + 1) * len(MIXTURES)
    return 1.5 * max(evaluate, train, prompts)


_COMMON = {"target_family": "relu", "target_width": 0, "curriculum_interval": 0, "seed": 0}
PROFILES = ProfileSet(
    "gpt_icl",
    profiles={
        "quick": {**_COMMON, "d": 5, "depths": (3, 6), "n_layer": 2, "n_head": 2, "n_embd": 32, "steps": 300,
                  "batch": 32, "lr": 1e-3, "train_examples": 20, "test_examples": 30, "test_prompts": 256,
                  "mlp_prompts": 256, "mlp_width": 32, "mlp_epochs": 30, "mlp_positions": (2, 5, 10, 19),
                  "warm_family": "tanh", "warm_width": 100, "warm_steps": 150, "relu_init": "softmax",
                  "relu_steps": 100, "depth_layers": (1, 2), "depth_target": 3, "depth_positions": (5, 10, 15),
                  "depth_train_examples": 16, "depth_steps": 300, "depth_warm_steps": 150, "depth_relu_steps": 100,
                  "plateau_steps": 200, "eval_every": 50},
        "reference": {**_COMMON, "d": 5, "depths": (3, 4, 6), "n_layer": 3, "n_head": 2, "n_embd": 64,
                      "steps": 6500, "batch": 32, "lr": 1e-3, "train_examples": 40, "test_examples": 60,
                      "test_prompts": 4096, "mlp_prompts": 512, "mlp_width": 200, "mlp_epochs": 100,
                      "mlp_positions": (5, 20, 39), "warm_family": "tanh", "warm_width": 100, "warm_steps": 5000,
                      "relu_init": "softmax", "relu_steps": 2500, "depth_layers": (4, 6, 8, 10), "depth_target": 4,
                      "depth_positions": (15, 30, 45), "depth_train_examples": 46, "depth_steps": 4000,
                      "depth_warm_steps": 2500, "depth_relu_steps": 1500, "plateau_steps": 4000,
                      "eval_every": 200},
        "paper": {**_COMMON, "d": 20, "depths": (3, 4, 6), "n_layer": 12, "n_head": 8, "n_embd": 256,
                  "steps": 500_000, "batch": 64, "lr": 1e-4, "train_examples": 51, "test_examples": 76,
                  "test_prompts": 6400, "mlp_prompts": 6400, "mlp_width": 200, "mlp_epochs": 100,
                  "mlp_positions": tuple(range(1, 76)), "curriculum_interval": 2000, "warm_family": "none",
                  "warm_width": 100, "warm_steps": 0, "relu_init": "scratch", "relu_steps": 500_000,
                  "depth_layers": (4, 6, 8, 10), "depth_target": 4, "depth_positions": (15, 30, 45),
                  "depth_train_examples": 51, "depth_steps": 500_000, "depth_warm_steps": 0,
                  "depth_relu_steps": 500_000, "plateau_steps": 20_000, "eval_every": 1000},
    },
    ranges={"d": (2, 64), "n_layer": (1, 24), "n_head": (1, 16), "n_embd": (8, 1024), "steps": (1, 10**6),
            "batch": (1, 1024), "lr": (1e-6, 1e-1), "train_examples": (2, 200), "test_examples": (2, 200),
            "test_prompts": (8, 10**5), "mlp_prompts": (8, 10**5), "mlp_width": (4, 1024), "mlp_epochs": (1, 1000),
            "curriculum_interval": (0, 10**5), "seed": (0, 2**31 - 1), "depths": (1, 8),
            "mlp_positions": (1, 199), "target_family": {"relu", "tanh"}, "target_width": (0, 4096),
            "warm_family": {"none", "relu", "tanh"}, "warm_width": (0, 4096), "warm_steps": (0, 10**6),
            "relu_init": {"softmax", "scratch"}, "relu_steps": (1, 10**6), "depth_layers": (1, 24),
            "depth_target": (1, 8), "depth_positions": (1, 199), "depth_train_examples": (2, 200),
            "depth_steps": (1, 10**6), "depth_warm_steps": (0, 10**6), "depth_relu_steps": (1, 10**6),
            "plateau_steps": (1, 10**6), "eval_every": (1, 10**5)},
    command="python -m icdl.gpt_icl --profile {profile}",
    memory=memory_estimate,
)

#: The criteria of the chapter's claims, fixed before the reference run that judges them:
#: objective 1 -- the transformer's R² is at least the MLP baseline's minus OBJ1_TOLERANCE at every MLP
#: position up to the training length (pretraining mixture), for every target depth and attention;
#: objective 3 -- R² at the training length drops by at most OBJ3_MAX_DROP when μ moves to ±0.5;
#: off the plateau (our check that the models learn in context at all) -- every model's R² at the training
#: length exceeds the context mean's by at least OFF_PLATEAU_MARGIN. Objective 2's criteria (monotone fall
#: over the mixtures; softmax losing more than ReLU past the training length) are in :func:`judge`, and
#: objective 4's (the deepest model beats the shallowest at every evaluation point, both attentions) in
#: :func:`icdl.gpt_icl.depth.judge_depth`.
OBJ1_TOLERANCE = 0.05
OBJ3_MAX_DROP = 0.1
OFF_PLATEAU_MARGIN = 0.05

#: test prompts are drawn in blocks of this many with a seed per block, so that the first block is the same
#: whatever the number of prompts (and the MLP baseline, run on the first ``mlp_prompts``, sees a prefix)
TEST_BLOCK = 512


ATTENTIONS = ("softmax", "relu")


def depths(cfg) -> list[int]:
    """The target depths of the profile (each checked to lie in 1..8 by the profile's ranges)."""
    return list(cfg["depths"])


def mlp_positions(cfg) -> list[int]:
    ps = list(cfg["mlp_positions"])
    if min(ps) < 1 or max(ps) >= cfg["test_examples"]:
        raise ValueError(f"mlp_positions must lie in 1..test_examples−1={cfg['test_examples'] - 1}, got {ps}")
    return ps


def target_task(cfg, depth: int, **kw) -> TaskConfig:
    """The target family of the profile at one depth (``kw`` overrides, e.g. ``omega`` or ``mu``)."""
    return TaskConfig(d=cfg["d"], depth=depth, family=cfg["target_family"], width=cfg["target_width"], **kw)


def configs(cfg, depth: int, attention: str, *, n_layer: int | None = None,
            examples: int | None = None) -> tuple[GPTConfig, TaskConfig, TrainConfig]:
    """Model, task and training settings of one model. Softmax models (and ReLU ones with
    ``relu_init = "scratch"``) train ``steps`` steps, the first ``warm_steps`` on the warm family; ReLU
    models with ``relu_init = "softmax"`` train ``relu_steps`` steps from the softmax model's weights."""
    examples = examples or cfg["train_examples"]
    layers = n_layer or cfg["n_layer"]
    model = GPTConfig(d=cfg["d"], n_layer=layers, n_head=cfg["n_head"], n_embd=cfg["n_embd"],
                      max_examples=max(cfg["test_examples"], examples), attention=attention)
    task = target_task(cfg, depth)
    warm = cfg["warm_family"] != "none" and cfg["warm_steps"] > 0
    warm_task = TaskConfig(d=cfg["d"], depth=depth, family=cfg["warm_family"], width=cfg["warm_width"]) \
        if warm else None
    from_softmax = attention == "relu" and cfg["relu_init"] == "softmax"
    steps = cfg["relu_steps"] if from_softmax else cfg["steps"]
    tr = TrainConfig(steps=steps, batch=cfg["batch"], lr=cfg["lr"], examples=examples,
                     curriculum_interval=cfg["curriculum_interval"], seed=cfg["seed"] + 100 * depth,
                     log_every=max(1, steps // 100),
                     warm_steps=0 if from_softmax or not warm else cfg["warm_steps"],
                     warm_task=None if from_softmax else warm_task,
                     init_from=f"softmax model, target depth {depth}, {layers} layers" if from_softmax else "")
    return model, task, tr


def test_prompts(cfg, depth: int, mixture: str, *, count: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The test prompts of one (depth, mixture): the same for every model and baseline; the first ``count``
    (default: all ``test_prompts``) of them. Drawn in blocks of :data:`TEST_BLOCK` prompts, one seed each."""
    if mixture not in MIXTURES:
        raise ValueError(f"mixture must be one of {list(MIXTURES)}, got {mixture!r}")
    task = target_task(cfg, depth, omega=MIXTURES[mixture])
    count = cfg["test_prompts"] if count is None else count
    seed = 10_000 + 97 * depth + list(MIXTURES).index(mixture)
    parts = []
    for b, start in enumerate(range(0, count, TEST_BLOCK)):
        g = torch.Generator().manual_seed(seed + 1_000_003 * b)
        parts.append(sample_prompts(task, min(TEST_BLOCK, count - start), cfg["test_examples"], g, scale_mu=0.0))
    return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts])


PARAM_SHIFTS = (0.0, -0.5, 0.5)


def evaluate_param_shift(model, cfg, depth: int, mus=PARAM_SHIFTS) -> pd.DataFrame:
    """ICDL objective 3 (Figs. 5–6): R² per position on test prompts whose target parameters are drawn from
    ``N(μ, I)`` instead of ``N(0, I)`` (inputs from the pretraining mixture; labels on the pretraining scale)."""
    rows = []
    device = next(model.parameters()).device
    for mu in mus:
        g = torch.Generator().manual_seed(30_000 + 97 * depth + int(100 * mu))
        xs, ys = sample_prompts(target_task(cfg, depth, mu=mu), cfg["test_prompts"],
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


def baseline_curves(cfg, depth: int, *, progress: bool = True, mlp: bool = True) -> pd.DataFrame:
    """R² per position of the context mean, least squares, 3-NN (every position, all test prompts) and, with
    ``mlp``, the trained MLP (the profile's positions, the first ``mlp_prompts`` test prompts: it trains one
    network per prompt and position) on the test prompts of every mixture."""
    from tqdm import tqdm

    rows = []
    for mixture in MIXTURES:
        xs, ys = test_prompts(cfg, depth, mixture)
        for name, pred in (("context mean", bl.context_mean(xs, ys)), ("least squares", bl.least_squares(xs, ys)),
                           ("3-NN", bl.nearest_neighbours(xs, ys))):
            r2 = bl.r2_across_prompts(pred, ys).numpy()
            rows += [{"mixture": mixture, "method": name, "position": i + 1, "r2": float(r2[i])} for i in range(len(r2))]
        if not mlp:
            continue
        m = min(cfg["mlp_prompts"], len(ys))
        for p in tqdm(mlp_positions(cfg), desc=f"MLP baseline depth {depth} {mixture}", disable=not progress):
            res = bl.trained_mlp(xs[:m], ys[:m], p, depth=depth, width=cfg["mlp_width"], epochs=cfg["mlp_epochs"],
                                 seed=cfg["seed"])
            rows.append({"mixture": mixture, "method": f"MLP ({depth} layers, best epoch)", "position": p + 1,
                         "r2": res["best_r2"]})
    return pd.DataFrame(rows)


def train_pair(cfg, depth: int, *, folder: Path | None = None, steps_this_call: int | None = None,
               progress: bool = True, device: str = "cpu", n_layer: int | None = None,
               examples: int | None = None, tag: str = "") -> dict:
    """The softmax and the ReLU-attention model of one target depth (and model depth ``n_layer``), trained
    or resumed; with ``relu_init = "softmax"`` the ReLU model starts from the finished softmax model, and
    ``switch`` is that model before any ReLU training (how much of the softmax curve survives the switch).
    Returns ``{attention: train result}`` plus ``"switch"`` (a model or None) and ``"complete"``."""
    out, complete = {}, True
    for attention in ATTENTIONS:
        mcfg, tcfg, trcfg = configs(cfg, depth, attention, n_layer=n_layer, examples=examples)
        ckpt = None if folder is None else Path(folder) / f"gpt{tag}_depth{depth}_{attention}.pt"
        init = None
        if trcfg.init_from:
            if not complete:  # the softmax model is not finished: the ReLU model waits for it
                break
            init = out["softmax"]["model"].state_dict()
            switch = InContextGPT(mcfg)
            switch.load_state_dict(init)
            out["switch"] = switch.eval()
        res = train(mcfg, tcfg, trcfg, checkpoint=ckpt, max_steps_this_call=steps_this_call, progress=progress,
                    device=device, init_state=init, command=PROFILES.command_for(cfg.get("profile", "reference")))
        complete &= res["steps_done"] >= trcfg.steps
        out[attention] = res
    out.setdefault("switch", None)
    out["complete"] = complete and all(a in out for a in ATTENTIONS)
    return out


def run(cfg, *, folder: Path | None = None, steps_this_call: int | None = None, progress: bool = True,
        device: str = "cpu", train_only: bool = False) -> dict:
    """Train (or resume) every model of the profile, evaluate, and compute the baselines.

    With ``folder`` the checkpoints live there and training resumes; without it (the quick profile) the
    models are trained in memory. Returns ``{"curves", "baselines", "history", "complete", "seconds"}``;
    ``curves`` has the attention ``"relu (at switch)"`` for the ReLU model before its own training.
    ``train_only`` (the other ranks of a data-parallel run) trains and returns ``None``."""
    t0 = time.perf_counter()
    curves, hists, base, models = [], [], [], {}
    complete = True
    for depth in depths(cfg):
        pair = train_pair(cfg, depth, folder=folder, steps_this_call=steps_this_call, progress=progress,
                          device=device)
        complete &= pair["complete"]
        if train_only:
            continue
        for attention in ATTENTIONS:
            if attention not in pair:
                continue
            res = pair[attention]
            models[(depth, attention)] = res["model"]
            hists.append(res["history"].assign(depth=depth, attention=attention))
            curves.append(evaluate(res["model"], cfg, depth).assign(depth=depth, attention=attention,
                                                                    steps=res["steps_done"]))
        if pair["switch"] is not None:
            curves.append(evaluate(pair["switch"], cfg, depth).assign(depth=depth, attention="relu (at switch)",
                                                                      steps=0))
        if pair["complete"]:
            base.append(_cached_baselines(cfg, depth, folder, progress).assign(depth=depth))
    if train_only:
        return None
    return {"curves": pd.concat(curves, ignore_index=True), "history": pd.concat(hists, ignore_index=True),
            "baselines": pd.concat(base, ignore_index=True) if base else pd.DataFrame(),
            "complete": complete, "seconds": time.perf_counter() - t0, "models": models}


def _cached_baselines(cfg, depth: int, folder: Path | None, progress: bool) -> pd.DataFrame:
    """:func:`baseline_curves`, with the MLP rows stored beside the checkpoints (with the settings they depend
    on and the version of :mod:`icdl.gpt_icl.baselines`) so that a resumed or parallel run does not recompute
    them, and a changed baseline or prompt set does not reuse a stale cache. The cheap baselines are always
    recomputed on all test prompts."""
    if folder is None:
        return baseline_curves(cfg, depth, progress=progress)
    # the key's format is that of the first version of the cache (prompts as a count, positions as text),
    # so that caches of the same prompts stay valid; non-default target families add their own keys
    settings = {"d": cfg["d"], "test_prompts": cfg["mlp_prompts"], "test_examples": cfg["test_examples"],
                "mlp_width": cfg["mlp_width"], "mlp_epochs": cfg["mlp_epochs"],
                "mlp_positions": ",".join(map(str, cfg["mlp_positions"])), "seed": cfg["seed"],
                "baseline_version": bl.VERSION}
    if (cfg["target_family"], cfg["target_width"]) != ("relu", 0):
        settings |= {"target_family": cfg["target_family"], "target_width": cfg["target_width"]}
    cheap = baseline_curves(cfg, depth, progress=progress, mlp=False)
    path = Path(folder) / f"baselines_depth{depth}.json"
    command = PROFILES.command_for(cfg.get("profile", "reference")) + " --part main"
    if path.is_file():
        try:
            cached = load_result(path)["data"]
        except ResultFileError as err:
            raise ResultFileError(f"{err}. The cache of MLP baselines is damaged: delete it and rerun {command} "
                                  "(it recomputes the baselines)") from None
        if cached["settings"] == settings:
            rows = pd.DataFrame(cached["rows"])
            return pd.concat([cheap, rows[rows["method"].str.startswith("MLP")]], ignore_index=True)
    t0 = time.perf_counter()
    full = baseline_curves(cfg, depth, progress=progress)
    mlp = full[full["method"].str.startswith("MLP")]
    save_result(path, {"settings": settings, "rows": frame_to_lists(mlp)},
                provenance=provenance(command=command, wall_time_s=time.perf_counter() - t0,
                                      profile=cfg.get("profile", ""), seed=cfg["seed"]))
    return pd.concat([cheap, mlp], ignore_index=True)


def judge(curves: pd.DataFrame, baselines: pd.DataFrame, train_examples: int) -> dict:
    """Numbers for the three claims of objectives 1–2 (criteria in the chapter):

    * ``obj1``: per depth and attention, the largest shortfall of the transformer's R² below the MLP
      baseline's at the MLP's positions up to 50 examples (training length), mixture (1, 0);
    * ``shift``: per depth and attention, R² at the training length for each mixture (should fall from
      (1, 0) to (.5, .5));
    * ``length``: per depth and attention, mean R² over positions beyond the training length minus the
      R² at the training length, mixture (1, 0)."""
    out = {"obj1": [], "shift": [], "length": []}
    curves = curves[curves["attention"].isin(ATTENTIONS)]  # the trained models, not the switch curves
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


def levels_at(curves: pd.DataFrame, baselines: pd.DataFrame, position: int) -> pd.DataFrame:
    """Per target depth and attention (the trained models): R² at query ``position`` on the pretraining mixture,
    beside the context mean and least squares there, and the lead over the context mean."""
    c = curves[(curves["mixture"] == "(1, 0)") & (curves["position"] == position)
               & curves["attention"].isin(ATTENTIONS)]
    b = baselines[(baselines["mixture"] == "(1, 0)") & (baselines["position"] == position)]
    rows = []
    for r in c.itertuples():
        bd = b[b["depth"] == r.depth].set_index("method")["r2"]
        rows.append({"depth": int(r.depth), "attention": r.attention, "r2": float(r.r2),
                     "context_mean": float(bd["context mean"]), "least_squares": float(bd["least squares"]),
                     "above_context_mean": float(r.r2 - bd["context mean"])})
    return pd.DataFrame(rows)


def switch_table(curves: pd.DataFrame, baselines: pd.DataFrame, position: int) -> pd.DataFrame:
    """Per target depth, at query ``position`` on the pretraining mixture: the lead over the context mean of
    the softmax model, of its weights under ReLU attention before ReLU training ("at switch"), and of the
    trained ReLU model; ``kept at switch`` and ``ReLU / softmax`` are the last two as shares of the first."""
    c = curves[(curves["mixture"] == "(1, 0)") & (curves["position"] == position)]
    b = baselines[(baselines["mixture"] == "(1, 0)") & (baselines["position"] == position)
                  & (baselines["method"] == "context mean")].set_index("depth")["r2"]
    rows = []
    for depth, g in c.groupby("depth"):
        r = g.set_index("attention")["r2"] - float(b[depth])
        if "relu (at switch)" not in r:
            continue
        rows.append({"depth": int(depth), "softmax lead": float(r["softmax"]),
                     "lead at switch": float(r["relu (at switch)"]), "ReLU lead": float(r["relu"]),
                     "kept at switch": float(r["relu (at switch)"] / r["softmax"]),
                     "ReLU / softmax": float(r["relu"] / r["softmax"])})
    return pd.DataFrame(rows)


def _result_data(res: dict) -> dict:
    return {k: frame_to_lists(res[k]) for k in ("curves", "history", "baselines")} | \
        {"complete": res["complete"], "seconds": res["seconds"]}


def reference_models(cfg, profile: str = "reference") -> dict:
    """The trained models of a long run, from its checkpoints: ``{(depth, attention): model}``."""
    folder = PROFILES.folder("checkpoints", profile)
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


def load_reference(profile: str = "reference") -> dict | None:
    """The committed results of a long run as DataFrames, with their provenance (printed), or ``None``
    with a note when the run has not been produced (:func:`icdl.book.results.show_reference`)."""
    raw = show_reference(PROFILES, "icl", profile)
    if raw is None:
        return None
    d = raw["data"]
    return {"curves": pd.DataFrame(d["curves"]), "history": pd.DataFrame(d["history"]),
            "baselines": pd.DataFrame(d["baselines"]), "complete": d["complete"], "seconds": d["seconds"],
            "provenance": raw["provenance"]}