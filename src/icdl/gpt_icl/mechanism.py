"""Which algorithm does a trained transformer run? (chapter ``gpt_mechanism``; this book's question, asked of
the models of :mod:`~icdl.gpt_icl.objectives` after von Oswald et al. 2023 and Akyürek et al. 2023).

Each trained model of the main study is held against candidate in-context algorithms run on the same
prompts (:mod:`~icdl.gpt_icl.algorithms`): GD on an N-layer network of the target's architecture, the
Adam-trained MLP of ICDL's baseline, least squares, ridge, 3-NN and the context mean. Three measures per
query position, over the prompts ``b`` (:func:`alignment`):

* ``pred_diff`` -- ``Σ_b (ŷ_model − ŷ_alg)² / Σ_b (y − ȳ)²``: the squared prediction difference on the
  scale of R²'s denominator (0: the same predictions; 1: as far apart as the labels spread);
* ``sens_diff`` -- ``Σ_b ‖s_model − s_alg‖² / Σ_b ‖s_model‖²`` for the sensitivities ``s = ∂ŷ/∂x_query``;
* ``cosine`` -- the mean over prompts of the cosine between the two sensitivities (undefined, NaN, for
  3-NN and the context mean, whose prediction does not move with the query almost everywhere).

The free settings of a candidate family -- (η, L, initial scale) for GD, λ for ridge -- are chosen per
model on held-out *scan* prompts (their own seeds), as the member of the family nearest the model (the
smallest mean ``pred_diff`` over positions); every number the claims read is then measured on the test
prompts of :mod:`~icdl.gpt_icl.evaluation`, on the pretraining mixture and on the farthest shifted one.

==================  ===================================================================================
:data:`PROFILES`    ``quick`` (CI: models trained in memory), ``reference`` (the main study's checkpoints:
                    ``python -m icdl.gpt_icl.mechanism --profile reference``, about 40 minutes on one core),
                    ``longer`` (the same study of the scale study's longest-trained models,
                    :func:`icdl.gpt_icl.scale.longest_trained_models`: ``--profile longer``)
:func:`study`       scan, choose and measure for every model
:func:`judge`       the ledger entries of the hypotheses (:data:`icdl.repro.claims.CRITERIA`)
:func:`judge_longer` the entries of the hypotheses about the longer-trained models against the main ones
:func:`write`,      the result file ``mechanism.<profile>.json`` and back
:func:`load`
==================  ===================================================================================
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from ..repro.cli import Parser, at_least_one
from ..repro.profiles import ProfileSet, dry_run
from ..repro.results import ResultFileError, one_writer, save_profile_result
from . import algorithms as al
from . import baselines as bl
from . import objectives
from .evaluation import test_prompts
from .model import ATTENTIONS
from .schedule import target_task, train_pair
from .tasks import MIXTURES, PRETRAINING, sample_prompts

#: the candidates' names in result files and figures (the baselines' names are those of
#: :mod:`~icdl.gpt_icl.baselines`)
GD_NETWORK, ADAM_MLP, RIDGE = "GD, N-layer network", "MLP (Adam, last epoch)", "ridge"
CANDIDATES = (GD_NETWORK, ADAM_MLP, bl.LEAST_SQUARES, RIDGE, bl.NEAREST_NEIGHBOURS, bl.CONTEXT_MEAN)
#: the candidates the hypotheses call "linear and local rules"
SIMPLE_RULES = (bl.LEAST_SQUARES, RIDGE, bl.NEAREST_NEIGHBOURS, bl.CONTEXT_MEAN)
#: the shifted inputs the measures are repeated on: the mixture farthest from pretraining
SHIFTED = "(.5, .5)"
#: seeds of the scan prompts (``base + per_depth · depth``) and of GD's fixed start ``w⁽⁰⁾``
SEEDS = {"scan": 50_000, "per_depth": 97, "start": 4242}

_OWN = {
    "quick": {"models": "main", "scan_prompts": 64, "measure_prompts": 128, "positions": (2, 5, 10, 19),
              "etas": (0.1, 0.3, 1.0), "gd_steps": 64, "init_scales": (0.5,), "lambdas": (0.1, 1.0)},
    "reference": {"models": "main", "scan_prompts": 256, "measure_prompts": 512, "positions": (2, 5, 10, 20, 30, 39),
                  "etas": (0.1, 0.2, 0.5, 1.0, 2.0), "gd_steps": 1024, "init_scales": (0.25, 0.5, 1.0),
                  "lambdas": (0.01, 0.1, 0.3, 1.0, 3.0, 10.0)},
    "paper": {"models": "main", "scan_prompts": 512, "measure_prompts": 1024, "positions": (2, 5, 10, 20, 30, 40, 50),
              "etas": (0.1, 0.2, 0.5, 1.0, 2.0), "gd_steps": 1024, "init_scales": (0.25, 0.5, 1.0),
              "lambdas": (0.01, 0.1, 0.3, 1.0, 3.0, 10.0)},
}
#: ``longer``: the reference study's settings, asked of the models the scale study trained longest
_OWN["longer"] = {**_OWN["reference"], "models": "scale"}
_BASE = {"quick": "quick", "reference": "reference", "longer": "reference", "paper": "paper"}
PROFILES = ProfileSet(
    "gpt_mechanism",
    profiles={name: {**objectives.PROFILES.profiles[_BASE[name]], **own} for name, own in _OWN.items()},
    ranges={**objectives.PROFILES.ranges, "models": {"main", "scale"}, "scan_prompts": (8, 10**5),
            "measure_prompts": (8, 10**5), "positions": (1, 199), "etas": (1e-4, 100.0), "gd_steps": (1, 10**5),
            "init_scales": (1e-3, 10.0), "lambdas": (1e-6, 1e6)},
    command="python -m icdl.gpt_icl.mechanism --profile {profile}",
    memory=objectives.memory_estimate,
)


def _check(cfg) -> None:
    if max(cfg["positions"]) >= cfg["test_examples"]:
        raise ValueError(f"positions must be < test_examples={cfg['test_examples']}, got {cfg['positions']}")
    if cfg["measure_prompts"] > cfg["test_prompts"]:
        raise ValueError(f"measure_prompts={cfg['measure_prompts']} exceeds test_prompts={cfg['test_prompts']}")


# ---- the measures ------------------------------------------------------------------------------------------


def alignment(pred_model: Tensor, sens_model: Tensor, pred_alg: Tensor, sens_alg: Tensor | None,
              ys: Tensor) -> dict[str, np.ndarray]:
    """The three measures of the module docstring per position: predictions ``(B, P)``, sensitivities
    ``(B, P, d)`` (``sens_alg`` None for a candidate whose prediction does not move with the query), labels
    ``ys (B, P)`` at the queries."""
    spread = ((ys - ys.mean(0)) ** 2).sum(0)
    if not (spread > 0).all():
        raise ValueError("the labels at some position are the same in every prompt: pred_diff is undefined")
    out = {"pred_diff": (((pred_model - pred_alg) ** 2).sum(0) / spread).numpy()}
    own = (sens_model ** 2).sum((0, 2))
    if sens_alg is None:
        out["sens_diff"], out["cosine"] = np.ones(len(spread)), np.full(len(spread), np.nan)
    else:
        out["sens_diff"] = (((sens_model - sens_alg) ** 2).sum((0, 2)) / own).numpy()
        cos = torch.nn.functional.cosine_similarity(sens_model, sens_alg, dim=2, eps=1e-12)
        out["cosine"] = cos.mean(0).numpy()
    return out


def scan_prompts(cfg, depth: int) -> tuple[Tensor, Tensor]:
    """Held-out prompts of the pretraining mixture on which the candidates' settings are chosen (seeds of their
    own: never the test prompts)."""
    g = torch.Generator().manual_seed(SEEDS["scan"] + SEEDS["per_depth"] * depth)
    task = target_task(cfg, depth, omega=MIXTURES[PRETRAINING])
    return sample_prompts(task, cfg["scan_prompts"], cfg["test_examples"], g, scale_mu=0.0)


# ---- choosing each family's member nearest the model ------------------------------------------------------


def gd_grid(cfg, depth: int, xs: Tensor, ys: Tensor) -> Tensor:
    """GD's predictions on prompts for the whole grid: ``(scales, etas, recorded L, B, P)``."""
    task = target_task(cfg, depth)
    return torch.stack([al.gd_network(xs, ys, cfg["positions"], task, etas=cfg["etas"], steps=cfg["gd_steps"],
                                      init_scale=s, seed=SEEDS["start"]) for s in cfg["init_scales"]])


def choose(cfg, depth: int, pred_model_scan: Tensor, xs: Tensor, ys: Tensor, grid: Tensor | None = None) -> dict:
    """The GD setting and the ridge λ nearest the model on the scan prompts (smallest mean ``pred_diff`` over
    the positions). Returns ``{"gd": {...}, "ridge": {...}, "gd_scan": frame over the grid}``."""
    pos = list(cfg["positions"])
    y = ys[:, pos]
    spread = ((y - y.mean(0)) ** 2).sum(0)
    grid = gd_grid(cfg, depth, xs, ys) if grid is None else grid
    gd_dist = (((grid - pred_model_scan) ** 2).sum(-2) / spread).mean(-1)       # (scales, etas, L)
    gd_dist = torch.nan_to_num(gd_dist, nan=np.inf)
    steps = al.recorded_steps(cfg["gd_steps"])
    rows = [{"init_scale": s, "eta": e, "steps": L, "pred_diff": float(gd_dist[i, j, k])}
            for i, s in enumerate(cfg["init_scales"]) for j, e in enumerate(cfg["etas"]) for k, L in enumerate(steps)]
    i, j, k = np.unravel_index(int(torch.argmin(gd_dist)), tuple(gd_dist.shape))
    rp, _ = al.ridge(xs, ys, pos, cfg["lambdas"])
    r_dist = (((rp - pred_model_scan) ** 2).sum(1) / spread).mean(1)
    r = int(torch.argmin(r_dist))
    return {"gd": {"init_scale": float(cfg["init_scales"][i]), "eta": float(cfg["etas"][j]), "steps": int(steps[k]),
                   "pred_diff": float(gd_dist[i, j, k])},
            "ridge": {"lambda": float(cfg["lambdas"][r]), "pred_diff": float(r_dist[r])},
            "gd_scan": pd.DataFrame(rows)}


# ---- the measures of every candidate on the test prompts ----------------------------------------------------


def fixed_candidates(cfg, depth: int, xs: Tensor, ys: Tensor) -> dict[str, tuple[Tensor, Tensor | None]]:
    """``{name: (predictions (B, P), sensitivities (B, P, d) or None)}`` of the candidates without settings to
    choose -- the same for every model of a depth: the MLP (only at the positions the main study trains it at,
    ``mlp_positions``; NaN elsewhere), least squares, 3-NN, the context mean."""
    pos = list(cfg["positions"])
    B, _, d = xs.shape
    mp, ms = torch.full((B, len(pos)), float("nan")), torch.full((B, len(pos), d), float("nan"))
    for j, p in enumerate(pos):
        if p in cfg["mlp_positions"]:
            res = bl.trained_mlp(xs, ys, p, depth=depth, width=cfg["mlp_width"], epochs=cfg["mlp_epochs"],
                                 seed=cfg["seed"], sensitivity=True)
            mp[:, j], ms[:, j] = res["pred"][-1], res["sensitivity"]
    return {ADAM_MLP: (mp, ms), bl.LEAST_SQUARES: al.least_squares_with_slope(xs, ys, pos),
            bl.NEAREST_NEIGHBOURS: (bl.nearest_neighbours(xs, ys)[:, pos], None),
            bl.CONTEXT_MEAN: (bl.context_mean(xs, ys)[:, pos], None)}


def chosen_candidates(cfg, depth: int, xs: Tensor, ys: Tensor, chosen: dict) -> dict[str, tuple[Tensor, Tensor]]:
    """GD and ridge at the settings :func:`choose` picked for one model, as :func:`fixed_candidates`."""
    pos, gd = list(cfg["positions"]), chosen["gd"]
    rp, rs = al.ridge(xs, ys, pos, [chosen["ridge"]["lambda"]])
    return {GD_NETWORK: al.gd_network_sensitivity(xs, ys, pos, target_task(cfg, depth), eta=gd["eta"],
                                                  steps=gd["steps"], init_scale=gd["init_scale"], seed=SEEDS["start"]),
            RIDGE: (rp[0], rs[0])}


#: the test prompts whose sensitivities the chapter draws (at the last position, pretraining mixture)
EXAMPLE_PROMPTS = 3


def measure_prompts(cfg, depth: int, mixture: str) -> tuple[Tensor, Tensor]:
    """The prompts the measures use: the first ``measure_prompts`` test prompts of
    :func:`~icdl.gpt_icl.evaluation.test_prompts`."""
    return test_prompts(cfg, depth, mixture, count=cfg["measure_prompts"])


def measure(model, cfg, depth: int, mixture: str, chosen: dict, fixed: dict | None = None
            ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One row per candidate and position with the three measures, on the measure prompts of ``mixture``
    (plus the model's own R² and each candidate's, for reference); and the sensitivities of the model and
    every candidate on the first :data:`EXAMPLE_PROMPTS` prompts at the last position, one row per prompt,
    candidate and input coordinate. ``fixed``: :func:`fixed_candidates` on these prompts, if already known."""
    pos = list(cfg["positions"])
    xs, ys = measure_prompts(cfg, depth, mixture)
    fixed = fixed_candidates(cfg, depth, xs, ys) if fixed is None else fixed
    every = fixed | chosen_candidates(cfg, depth, xs, ys, chosen)
    pm, sm = al.model_sensitivity(model, xs, ys, pos)
    y = ys[:, pos]
    rows, examples = [], []

    def example(name, sens):
        examples.extend({"mixture": mixture, "candidate": name, "prompt": b, "coordinate": i + 1,
                         "sensitivity": float(sens[b, -1, i])}
                        for b in range(min(EXAMPLE_PROMPTS, len(ys))) for i in range(xs.shape[2]))

    example("model", sm)
    for name in CANDIDATES:
        pa, sa = every[name]
        if sa is not None and not torch.isnan(sa[0, -1]).any():
            example(name, sa)
        ok = ~torch.isnan(pa[0])
        keep = [j for j in range(len(pos)) if ok[j]]
        if not keep:
            continue
        m = alignment(pm[:, keep], sm[:, keep], pa[:, keep], None if sa is None else sa[:, keep], y[:, keep])
        r2_alg = bl.r2_across_prompts(pa[:, keep], y[:, keep]).numpy()
        for i, j in enumerate(keep):
            rows.append({"mixture": mixture, "candidate": name, "position": pos[j] + 1,
                         **{k: float(v[i]) for k, v in m.items()}, "r2_candidate": float(r2_alg[i])})
    r2_model = bl.r2_across_prompts(pm, y).numpy()
    rows += [{"mixture": mixture, "candidate": "model", "position": p + 1, "pred_diff": 0.0, "sens_diff": 0.0,
              "cosine": 1.0, "r2_candidate": float(r2_model[j])} for j, p in enumerate(pos)]
    return pd.DataFrame(rows), pd.DataFrame(examples)


def _models(cfg, progress: bool) -> dict:
    """The trained models the profile asks: the main study's, from the reference checkpoints or (quick) trained
    here in memory; with ``models = "scale"``, the scale study's longest-trained ones (its reference run)."""
    if cfg["models"] == "scale":
        from . import scale

        return scale.longest_trained_models(scale.PROFILES.resolve("reference"))
    if cfg["profile"] == "quick":
        out = {}
        for depth in cfg["depths"]:
            pair = train_pair(cfg, depth, cfg["n_layer"], command=objectives.MAIN_COMMAND.format(profile="quick"),
                              progress=progress)
            out |= {(depth, att): pair[att]["model"] for att in ATTENTIONS}
        return out
    return objectives.first_seed_models(cfg)


def study(cfg, *, models: dict | None = None, progress: bool = True) -> dict:
    """Scan, choose and measure for every trained model (``models``: ``{(depth, attention): model}``, default
    the profile's). Returns ``{"alignment", "chosen", "gd_scan", "examples", "complete", "seconds"}``."""
    from tqdm import tqdm

    _check(cfg)
    t0 = time.perf_counter()
    models = _models(cfg, progress) if models is None else models
    pos = list(cfg["positions"])
    rows, chosen_rows, scans, examples = [], [], [], []
    for depth in sorted({d for d, _ in models}):
        xs, ys = scan_prompts(cfg, depth)
        grid = gd_grid(cfg, depth, xs, ys)  # the same for every model of this depth, as are:
        fixed = {m: fixed_candidates(cfg, depth, *measure_prompts(cfg, depth, m)) for m in (PRETRAINING, SHIFTED)}
        for att in tqdm(ATTENTIONS, desc=f"mechanism depth {depth}", disable=not progress):
            if (depth, att) not in models:
                continue
            model = models[(depth, att)]
            with torch.no_grad():
                pm_scan = model(xs, ys)[:, pos]
            ch = choose(cfg, depth, pm_scan, xs, ys, grid)
            chosen_rows.append({"depth": depth, "attention": att, **{f"gd_{k}": v for k, v in ch["gd"].items()},
                                "ridge_lambda": ch["ridge"]["lambda"], "ridge_pred_diff": ch["ridge"]["pred_diff"]})
            scans.append(ch["gd_scan"].assign(depth=depth, attention=att))
            for mixture in (PRETRAINING, SHIFTED):
                table, ex = measure(model, cfg, depth, mixture, ch, fixed[mixture])
                rows.append(table.assign(depth=depth, attention=att))
                examples.append(ex.assign(depth=depth, attention=att))
    return {"alignment": pd.concat(rows, ignore_index=True), "chosen": pd.DataFrame(chosen_rows),
            "gd_scan": pd.concat(scans, ignore_index=True), "examples": pd.concat(examples, ignore_index=True),
            "complete": True, "seconds": time.perf_counter() - t0}


# ---- the findings and their judge ------------------------------------------------------------------------


def nearest(alignment: pd.DataFrame) -> pd.DataFrame:
    """Per model, mixture and position: the candidate with the smallest ``pred_diff`` and its value."""
    a = alignment[alignment["candidate"] != "model"]
    idx = a.groupby(["depth", "attention", "mixture", "position"])["pred_diff"].idxmin()
    return a.loc[idx, ["depth", "attention", "mixture", "position", "candidate", "pred_diff"]].reset_index(drop=True)


def nearest_table(alignment: pd.DataFrame, mixture: str) -> pd.DataFrame:
    """The nearest candidate per model (rows) and prompt position (columns) on one mixture."""
    n = nearest(alignment)
    n = n[n["mixture"] == mixture]
    t = n.pivot(index=["depth", "attention"], columns="position", values="candidate")
    t.columns = [f"k = {c}" for c in t.columns]
    return t.reset_index().rename(columns={"depth": "target depth"})


def verdict_table(alignment: pd.DataFrame, train_examples: int) -> pd.DataFrame:
    """Per model and mixture at the training length (the query after ``train_examples − 1`` examples, the
    last position the model was trained on): GD's ``pred_diff`` and cosine, the nearest simple rule and its
    ``pred_diff``, and their ratio (below 1: GD on the network is the nearer)."""
    at = alignment[alignment["position"] == train_examples]
    if at.empty:
        raise ValueError(f"no measures at the training length (position {train_examples}): the profile's positions "
                         "must include train_examples − 1")
    rows = []
    for (depth, att, mixture), g in at.groupby(["depth", "attention", "mixture"]):
        g = g.set_index("candidate")
        simple = g.loc[[c for c in SIMPLE_RULES if c in g.index], "pred_diff"]
        gd, best = float(g.loc[GD_NETWORK, "pred_diff"]), float(simple.min())
        # GD as near as a simple rule that is the model itself is not nearer: ratio 1, or inf if GD is not there
        ratio = gd / best if best > 0 else (1.0 if gd == 0 else float("inf"))
        rows.append({"depth": depth, "attention": att, "mixture": mixture, "position": int(g["position"].iloc[0]),
                     "gd_pred_diff": float(g.loc[GD_NETWORK, "pred_diff"]),
                     "gd_cosine": float(g.loc[GD_NETWORK, "cosine"]), "nearest_simple": simple.idxmin(),
                     "simple_pred_diff": float(simple.min()),
                     "ratio": ratio})
    return pd.DataFrame(rows)


def judge(alignment: pd.DataFrame, train_examples: int) -> list[dict]:
    """The ledger entries of the three hypotheses (criteria in :data:`icdl.repro.claims.CRITERIA`)."""
    v = verdict_table(alignment, train_examples)
    pre, shift = v[v["mixture"] == PRETRAINING], v[v["mixture"] == SHIFTED]

    def listing(t, col):
        return "; ".join(f"depth {r.depth} {r.attention}: {getattr(r, col):.2f}" for r in t.itertuples())

    ratio, cos, ratio_shift = float(pre["ratio"].max()), float(pre["gd_cosine"].min()), float(shift["ratio"].max())
    return [
        {"claim": "mech-nearest-gd", "passed": ratio < 1, "value": ratio,
         "ours": "GD's prediction difference over the nearest simple rule's, at the training length: "
                 + listing(pre, "ratio"),
         "criterion": "below 1 for every model: each is nearer GD on the network than to least squares, ridge, "
                      "3-NN and the context mean"},
        {"claim": "mech-sensitivity-gd", "passed": cos >= 0.8, "value": cos,
         "ours": "mean cosine of $\\partial \\hat y / \\partial x_{\\mathrm{query}}$, model against GD, at the "
                 "training length: " + listing(pre, "gd_cosine"),
         "criterion": "at least 0.8 for every model"},
        {"claim": "mech-shift-gd", "passed": ratio_shift < 1, "value": ratio_shift,
         "ours": f"the same ratio on inputs from the mixture {SHIFTED}: " + listing(shift, "ratio"),
         "criterion": "below 1 for every model"},
    ]


#: what the two hypotheses about the longer-trained models ask (the criteria are in the registry)
LONGER_CRITERIA = {"mech-longer-toward-gd": "falls for every model (the largest change below 0)",
                   "mech-longer-nearest-gd": "below 1 for every model"}


def judge_longer(main: pd.DataFrame, longer: pd.DataFrame | None, train_examples: int) -> list[dict]:
    """The ledger entries of the hypotheses about the longer-trained models (``longer``: their alignment;
    ``main``: the main study's): every model moves toward GD on the network (GD's ratio to the nearest simple
    rule at the training length falls: the largest change over the models below 0), and hypothesis 1 on the
    longer-trained models (the largest ratio below 1). Pretraining mixture. Without ``longer`` (the run has
    not been made) the entries carry no number and hold nothing."""
    if longer is None:
        return [{"claim": claim, "passed": False, "value": float("nan"), "criterion": criterion,
                 "ours": "not run: python -m icdl.gpt_icl.mechanism --profile longer"}
                for claim, criterion in LONGER_CRITERIA.items()]

    def ratios(alignment):
        v = verdict_table(alignment, train_examples)
        return v[v["mixture"] == PRETRAINING].set_index(["depth", "attention"])["ratio"]

    before, after = ratios(main), ratios(longer)
    if set(before.index) != set(after.index):
        raise ValueError(f"the two studies cover other models: {sorted(before.index)} vs {sorted(after.index)}")
    change = (after - before.loc[after.index]).sort_index()
    worst, largest = float(change.max()), float(after.max())
    pairs = "; ".join(f"depth {d} {a}: {before[(d, a)]:.2f} → {after[(d, a)]:.2f}" for d, a in change.index)
    return [
        {"claim": "mech-longer-toward-gd", "passed": worst < 0, "value": worst,
         "ours": "GD's prediction difference over the nearest simple rule's at the training length, main study → "
                 "four times the training: " + pairs,
         "criterion": LONGER_CRITERIA["mech-longer-toward-gd"]},
        {"claim": "mech-longer-nearest-gd", "passed": largest < 1, "value": largest,
         "ours": f"the same ratio after four times the training: largest {largest:.2f}",
         "criterion": LONGER_CRITERIA["mech-longer-nearest-gd"]},
    ]


def longer_table(main: pd.DataFrame, longer: pd.DataFrame, train_examples: int) -> pd.DataFrame:
    """Per model at the training length (pretraining mixture), the main study's models beside the ones trained
    four times longer: the nearest simple rule, GD's ratio to it, and the cosine of GD's sensitivity."""
    def at(alignment):
        v = verdict_table(alignment, train_examples)
        return v[v["mixture"] == PRETRAINING].set_index(["depth", "attention"])

    a, b = at(main), at(longer)
    return pd.DataFrame({
        "nearest simple rule (main)": a["nearest_simple"], "nearest simple rule (4×)": b["nearest_simple"],
        "GD / nearest (main)": a["ratio"].map("{:.2f}".format), "GD / nearest (4×)": b["ratio"].map("{:.2f}".format),
        "GD cosine (main)": a["gd_cosine"].map("{:.2f}".format), "GD cosine (4×)": b["gd_cosine"].map("{:.2f}".format),
    }).reset_index().rename(columns={"depth": "target depth"})


def longer_glue(main: pd.DataFrame, longer: pd.DataFrame | None, train_examples: int) -> dict[str, str]:
    """The prose's numbers about the longer-trained models: the range of GD's ratio and cosine over them, and
    which candidate is nearest each (dashes where the run has not been made)."""
    if longer is None:
        return {k: "—" for k in ("mech_longer_ratio", "mech_longer_cosine", "mech_longer_nearest",
                                 "mech_longer_rises")}
    v = verdict_table(longer, train_examples)
    pre = v[v["mixture"] == PRETRAINING]
    near = nearest(longer)
    near = near[(near["mixture"] == PRETRAINING) & (near["position"] == train_examples)]
    counts = near["candidate"].value_counts()
    change = next(e for e in judge_longer(main, longer, train_examples) if e["claim"] == "mech-longer-toward-gd")
    before = verdict_table(main, train_examples)
    before = before[before["mixture"] == PRETRAINING].set_index(["depth", "attention"])["ratio"]
    rises = int((pre.set_index(["depth", "attention"])["ratio"] > before).sum())
    return {"mech_longer_rises": f"{rises} of {len(pre)}" if change["value"] == change["value"] else "—",
            "mech_longer_ratio": f"{pre['ratio'].min():.2f} to {pre['ratio'].max():.2f}",
            "mech_longer_cosine": f"{pre['gd_cosine'].min():.2f} to {pre['gd_cosine'].max():.2f}",
            "mech_longer_nearest": ", ".join(f"{name} ({n} of {len(near)} models)" for name, n in counts.items())}


def chosen_table(chosen: pd.DataFrame) -> pd.DataFrame:
    """The settings chosen per model, as the chapter's table shows them."""
    return chosen.rename(columns={"depth": "target depth", "gd_init_scale": "GD: start scale", "gd_eta": "GD: η",
                                  "gd_steps": "GD: L", "gd_pred_diff": "GD: difference (scan)",
                                  "ridge_lambda": "ridge: λ", "ridge_pred_diff": "ridge: difference (scan)"})


def flow_table(gd_scan: pd.DataFrame, chosen: pd.DataFrame) -> pd.DataFrame:
    """Whether GD's chosen setting is a real optimum of the scan or an edge of its grid: per model, the scan's
    difference at the chosen (η, L), at (2η, L/2) -- the same time ηL of gradient flow -- and at (2η, L), twice
    the time, and at (η, L/2), half of it (NaN where the grid has no such cell). Equal first two and larger
    last two: the chosen time ηL is an interior optimum, and smaller η with more steps would only repeat it."""
    rows = []
    for r in chosen.itertuples():
        g = gd_scan[(gd_scan["depth"] == r.depth) & (gd_scan["attention"] == r.attention)
                    & (gd_scan["init_scale"] == r.gd_init_scale)].set_index(["eta", "steps"])["pred_diff"]
        eta, L = r.gd_eta, r.gd_steps
        cells = {"chosen": (eta, L), "2η, L/2 (same ηL)": (2 * eta, L // 2), "2η, L (twice ηL)": (2 * eta, L),
                 "η, L/2 (half ηL)": (eta, L // 2)}
        rows.append({"target depth": r.depth, "attention": r.attention, "η": eta, "L": L,
                     **{name: float(g.get(cell, np.nan)) for name, cell in cells.items()}})
    return pd.DataFrame(rows)


def verdict_display(verdicts: pd.DataFrame) -> pd.DataFrame:
    """:func:`verdict_table` as the chapter shows it: readable headers, the mixture as the inputs' weights."""
    return verdicts.rename(columns={
        "depth": "target depth", "mixture": "inputs ω", "position": "k", "gd_pred_diff": "GD: difference",
        "gd_cosine": "GD: cosine", "nearest_simple": "nearest simple rule", "simple_pred_diff": "its difference",
        "ratio": "GD / nearest simple"})


def glue_values(alignment: pd.DataFrame, cfg) -> dict[str, str]:
    """The numbers the chapter's prose quotes, as text: which candidate is nearest each model at the training
    length (pretraining mixture), the range of the ratio and of the cosine over the models, and the sizes."""
    v = verdict_table(alignment, cfg["train_examples"])
    pre = v[v["mixture"] == PRETRAINING]
    near = nearest(alignment)
    near = near[(near["mixture"] == PRETRAINING) & (near["position"] == cfg["train_examples"])]
    counts = near["candidate"].value_counts()
    return {"mech_nearest": ", ".join(f"{name} ({n} of {len(near)} models)" for name, n in counts.items()),
            "mech_ratio": f"{pre['ratio'].min():.2f} to {pre['ratio'].max():.2f}",
            "mech_cosine": f"{pre['gd_cosine'].min():.2f} to {pre['gd_cosine'].max():.2f}",
            "mech_train": str(cfg["train_examples"]), "mech_scan": str(cfg["scan_prompts"]),
            "mech_measure": str(cfg["measure_prompts"]), "mech_max_steps": str(cfg["gd_steps"]),
            "mech_grid": str(len(cfg["etas"]) * len(cfg["init_scales"]) * len(al.recorded_steps(cfg["gd_steps"])))}


# ---- result file ------------------------------------------------------------------------------------------

FIELDS = ("alignment", "chosen", "gd_scan", "examples", "complete", "seconds")


def write(res: dict, cfg, started: float, command: str | None = None, overrides: tuple[str, ...] = ()) -> Path:
    """``results/gpt_mechanism/mechanism.<profile>.json`` from a :func:`study` result."""
    return save_profile_result(PROFILES, "mechanism", {k: res[k] for k in FIELDS}, profile=cfg["profile"],
                               seed=cfg["seed"], started=started, command=command, overrides=overrides)


def load(raw: dict) -> dict:
    """A committed result (an object of :func:`icdl.repro.results.load_result`) as frames."""
    d = raw["data"]
    return {k: pd.DataFrame(d[k]) for k in FIELDS[:4]} | {"complete": bool(d["complete"]), "seconds": d["seconds"],
                                                          "provenance": raw["provenance"]}


def parser():
    """The command's arguments (every flag in ``tests/test_command_flags.py``'s table)."""
    p = Parser(prog="python -m icdl.gpt_icl.mechanism",
               description="Which algorithm do the trained transformers of ICDL sec. 5 run?")
    p.add_argument("--profile", default="reference", choices=PROFILES.names)
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1: one core)")
    return p


def main(argv: list[str] | None = None) -> int:
    """``python -m icdl.gpt_icl.mechanism --profile reference``: the study on the main study's checkpoints,
    written with provenance to ``results/gpt_mechanism/mechanism.<profile>.json``."""
    p = parser()
    args = p.parse_args(argv)
    at_least_one(p, threads=args.threads)
    try:  # the profile as a whole checked here, its memory included: one line, no traceback
        cfg = PROFILES.resolve(args.profile)
    except ValueError as err:
        p.error(str(err))
    if dry_run(f"the mechanism study, profile {args.profile}, on {args.threads} thread(s)"):
        return 0
    torch.set_num_threads(args.threads)
    t = time.perf_counter()
    target = PROFILES.folder() / f"mechanism.{args.profile}.json"
    try:
        with one_writer(target, f"result {target.name}"):  # one run of the study at a time
            path = write(study(cfg, progress=True), cfg, started=t)
    except (ResultFileError, ValueError) as err:
        p.exit(2, f"python -m icdl.gpt_icl.mechanism: error: {err}\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
