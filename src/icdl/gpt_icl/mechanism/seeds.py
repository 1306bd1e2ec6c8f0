"""The live design of the mechanism question (chapter ``gpt_mechanism``, profile ``seeds`` of
:mod:`~icdl.gpt_icl.mechanism.study`): each of the main study's trained models, every one of its training seeds,
held against GD on the network tuned in gradient-flow time and against the linear and local rules.

The main study trained three seeds of every model (other initial weights and training prompts); profile
``seeds`` chooses GD's and ridge's members for each seed's model on the flow grid (:mod:`.grid`) and measures
it on the test prompts. The registry (``icdl.repro.claims.CRITERIA``, ``mech-seeds-*``) reads, per model, the
**mean over its seeds** of each of the four numbers (:mod:`.numbers`), and over the models the largest (the
cosine: the smallest), with an interval over seeds and prompts (:class:`~icdl.gpt_icl.core.intervals.Draws`: each
seed alone, and every seed on blocks of test prompts resampled once for every seed, candidate and model, paired),
read off each model's own (:func:`~icdl.gpt_icl.core.intervals.extreme`). Gates: ``control`` (the positive control
passed), ``flow`` (the flow gate met by every seed's model), ``seeds`` (three seeds measured for every model),
``learned`` and ``power`` (the planted models told apart, :mod:`.power`).

==========================  ==========================================================================================
:func:`replay`              each seed's model scored again against the main study's stored errors
:func:`seed_edges`          :func:`~icdl.gpt_icl.mechanism.grid.flow_edges` for every seed's model
:func:`seed_numbers`        per model, seed and resample the four numbers; per model their mean over drawn seeds
:func:`judge_seeds`         the entries of ``mech-seeds-nearest-gd``, ``-sens-gd``, ``-cosine-gd``, ``-median-gd``
:func:`seeds_table`         per model, for the reader: each seed's chosen flow time and number, the seed mean's interval
:func:`edge_words`          the seeds' models whose member sits at an edge that matters, in words
:func:`unmet_words`         the registered gates the judged entries leave unmet, in words
:func:`seeds_glue`          the prose's numbers
==========================  ==========================================================================================
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from icdl.gpt_icl.core.intervals import Draws
from icdl.gpt_icl.core.learning import margin
from icdl.gpt_icl.mechanism.grid import flow_edges
from icdl.gpt_icl.mechanism.numbers import (
    RATIOS,
    gate_note,
    gated_entries,
    interval_cell,
    median_ratio,
    paired_measures,
    seed_mean,
    summarised,
)
from icdl.repro.claims import CRITERIA, GATE_OPS, unmet_gates
from icdl.repro.typeset import count, sci

#: the seeds each model needs before a verdict counts (gate ``seeds``, registered with the claims)
SEEDS_NEEDED = 3
#: the registered claims, the number of :mod:`.numbers` each reads, and its line
CLAIMS = {"mech-seeds-nearest-gd": ("pred", "<", 1.0), "mech-seeds-sens-gd": ("sens", "<", 1.0),
          "mech-seeds-cosine-gd": ("cosine", ">=", 0.8), "mech-seeds-median-gd": ("median", "<", 1.0)}
#: the reader's names of the numbers, each a mean over the seeds
#: (a ratio's mean over the seeds is their geometric mean, its interval on the log scale: issue 68)
WORDS = {"pred": "largest geometric seed-mean ratio of GD's prediction difference to the nearest simple rule's",
         "sens": "largest geometric seed-mean ratio of GD's sensitivity L2 difference to the smallest simple rule's",
         "cosine": "smallest seed-mean of the mean cosine of the model's sensitivity with GD's",
         "median": "largest geometric seed-mean median-block ratio of GD's prediction difference to the nearest "
                   "simple rule's"}
#: the largest relative change of a checkpoint's replayed errors at which it counts as the model the main study
#: judged (:func:`replay`; float rounding across machines stays far below it)
REPLAYED = 1e-4
_MEASURES = ("pred", "sens", "cosine", "median")


def replay_words(change: float) -> str:
    """How closely the checkpoints replay the main study's errors (``change``: the largest relative change,
    :func:`replay`), in words: "exactly" for no change at all, else "to a relative change of at most 3.1 × 10⁻⁷"
    (the bug: "to a relative 0", a zero read as a rounded number)."""
    return "exactly" if change == 0 else f"to a relative change of at most {sci(change)}"


def _seeded(frame: pd.DataFrame, name: str) -> None:
    if "seed" not in frame:
        raise ValueError(f"the result's {name} have no column 'seed': it is not a run of profile seeds "
                         "(python -m icdl.gpt_icl.mechanism --profile seeds --workers 2)")


def replay(cfg, models: dict, stored: list[dict]) -> pd.DataFrame:
    """Each model of ``models`` (``{(depth, attention, seed): model}``) scored again on the main study's
    pretraining test prompts at the training length, against the squared errors per block of prompts that the
    main study stored for that model and seed (``stored``: the ``blocks`` of ``results/gpt_icl/icl.<profile>.json``).
    One row per model: both sums and the largest relative change over the blocks -- whether the checkpoints
    measured here (the extra seeds stay local, rebuilt by the main study's command) are the models it judged."""
    import torch

    from icdl.gpt_icl.core.evaluation import predict, set_prompts
    from icdl.gpt_icl.core.intervals import block_sums
    from icdl.gpt_icl.core.tasks import PRETRAINING

    L = cfg["train_examples"]
    then = {(r["depth"], r["model"], r["seed"]): np.asarray(r["sse"], dtype=float) for r in stored
            if r["set"] == PRETRAINING and r["position"] == L}
    rows = []
    for depth in sorted({k[0] for k in models}):
        xs, ys = set_prompts(cfg, depth, {"mixture": PRETRAINING, "count": None})
        for (d, att, seed), model in models.items():
            if d != depth:
                continue
            if (d, att, seed) not in then:
                raise ValueError(f"the main study's result holds no sums for target depth {d}, {att}, seed {seed}: "
                                 "rerun python -m icdl.gpt_icl --profile reference --part main")
            with torch.no_grad():
                here = block_sums(predict(model, xs, ys), ys, [L])[0]
            old = then[(d, att, seed)]
            rows.append({"depth": d, "attention": att, "seed": seed, "sse": float(here.sum()),
                         "sse_stored": float(old.sum()), "largest_change": float(np.max(np.abs(here - old) / old))})
    return pd.DataFrame(rows)


def seed_edges(chosen: pd.DataFrame, scan: pd.DataFrame, cfg) -> pd.DataFrame:
    """One row per model and seed: :func:`~icdl.gpt_icl.mechanism.grid.flow_edges` of that seed's model (its
    chosen member, flow time and the edges that matter), with a column ``seed``."""
    _seeded(chosen, "chosen members")
    parts = [flow_edges(c, scan[scan["seed"] == s], cfg).assign(seed=s) for s, c in chosen.groupby("seed")]
    return pd.concat(parts, ignore_index=True).sort_values(["depth", "attention", "seed"], ignore_index=True)


def _ratio_of(measure: str, model: tuple) -> str | None:
    """The name a ratio's refusal gives (:func:`~icdl.gpt_icl.mechanism.numbers.log_ratio`), None for the cosine."""
    return None if measure not in RATIOS else f"{RATIOS[measure]} of target depth {model[0]}, {model[1]} attention"


def seed_numbers(blocks: pd.DataFrame, train_examples: int, draws: Draws | None = None) -> dict:
    """The four registered numbers on every resample of ``draws`` (default: a :class:`Draws` over the result's seeds
    and blocks; row 0 every seed and prompt once). Per model ``(depth, attention)``: ``per_seed[measure]``
    (``(seeds, resamples + 1)``, NaN for a seed the model lacks, each seed's number on the resampled blocks) and
    ``[measure]`` their mean over each resample's drawn seeds (``(resamples + 1,)``; a ratio's the geometric mean,
    :func:`~icdl.gpt_icl.mechanism.numbers.seed_mean`, the cosine's the arithmetic); over the models the
    largest ratios and the smallest cosine; ``seeds``: the seeds, in the order of the draws."""
    _seeded(blocks, "sums per block")
    seeds = sorted(int(s) for s in blocks["seed"].unique())
    draws = draws or Draws(len(seeds), blocks=int(blocks["block"].nunique()))
    if draws.n_seeds != len(seeds):
        raise ValueError(f"the draws pick among {draws.n_seeds} seeds, the result has {len(seeds)}")
    per_seed: dict = {}
    for i, s in enumerate(seeds):
        mine = blocks[blocks["seed"] == s]
        m, med = paired_measures(mine, train_examples, draws), median_ratio(mine, train_examples, draws)
        for key, v in m["models"].items():
            slot = per_seed.setdefault(key, {k: np.full((len(seeds), len(draws.weights)), np.nan) for k in _MEASURES})
            for k in ("pred", "sens", "cosine"):
                slot[k][i] = v[k]
            slot["median"][i] = med["models"][key]
    models = {}
    for key, slot in per_seed.items():  # each row's mean over its seeds (a seed row: that seed alone; a row whose
        # seeds the model lacks: NaN, the gate unmet), a ratio's geometric: the mean of the logs its interval reads
        models[key] = {k: seed_mean(slot[k], draws, _ratio_of(k, key)) for k in _MEASURES}
        models[key] |= {"per_seed": slot, "seeds": int((~np.isnan(slot["pred"][:, 0])).sum())}
    out = {k: (np.min if k == "cosine" else np.max)([v[k] for v in models.values()], axis=0) for k in _MEASURES}
    return out | {"models": models, "seeds": seeds}


def judge_seeds(result: dict | None, cfg, train_examples: int, control_passed: bool, learned: dict | None,
                power: float | dict[str, float] = 0.0, suffix: str = "") -> list[dict]:
    """The ledger entries of the four hypotheses asked over the seeds (``result``: profile ``seeds``'
    :func:`~icdl.gpt_icl.mechanism.load` frames, None while the run waits), each with its 90 % interval over
    seeds and blocks of the test prompts, and the gates the registry reads: ``control`` (``control_passed``),
    ``flow`` (no seed's model chose a member at an edge that matters), ``seeds`` (every model measured on
    :data:`SEEDS_NEEDED` seeds), ``learned`` (``learned``: the learning gate of the models measured,
    :func:`icdl.gpt_icl.core.main_study.learning_gate`) and ``power`` (per claim, 1.0 where the planted models were
    told apart on this task by the measure that claim reads: ``power`` maps each number of :data:`CLAIMS` to its
    gate, :func:`icdl.gpt_icl.mechanism.power.gates`; one number serves every claim). ``suffix`` names the task's
    claims (``-n01``: the same hypotheses asked of the models of main-study profile ``n01``, profile
    ``seeds-n01``)."""
    criteria = {c: f"the {'largest' if op == '<' else 'smallest'} over the models of the "
                   f"{'geometric mean' if key in RATIOS else 'mean'} over three seeds "
                   f"{'below' if op == '<' else 'at least'} {t:g} on its whole 90 % interval"
                   f"{' (on the log scale)' if key in RATIOS else ''}, with every seed's GD "
                   "member inside its grid in flow time, the positive control passed, every model learned the task "
                   "and the claim's own measure told the planted GD from a planted ridge and kernel smoother"
                for c, (key, op, t) in CLAIMS.items()}
    if result is None:
        return [{"claim": c + suffix, "passed": None, "value": None, "criterion": criteria[c],
                 "ours": f"not run: python -m icdl.gpt_icl.mechanism --profile seeds{suffix} --workers 2"}
                for c in CLAIMS]
    edges = seed_edges(result["chosen"], result["gd_scan"], cfg)
    flow = bool(edges["flow"].all())
    nums = seed_numbers(result["blocks"], train_examples)
    counts = [v["seeds"] for v in nums["models"].values()]
    enough = min(counts) >= SEEDS_NEEDED
    grid = ("inside its grid in flow time for every seed's model" if flow
            else f"at an edge that matters for {int((~edges['flow']).sum())} of {len(edges)} seeds' models")
    tail = (f"; {min(counts)} to {max(counts)} seeds per model" if min(counts) != max(counts)
            else f"; {min(counts)} seeds per model") + f"; GD's chosen member {grid}"
    rep = result.get("replay")
    tail += ("; the checkpoints' replay not recorded" if rep is None or rep.empty else
             f"; the checkpoints replay the main study's errors {replay_words(rep['largest_change'].max())}")
    tail += gate_note(result, train_examples, control_passed, "seed-mean R²")
    tail += (f"; every model learned the task (smallest lower end of a lead over the context mean "
             f"{learned['learned']:.3f})" if learned["learned"] >= margin(next(iter(CLAIMS))) else
             f"; not every model learned the task ({learned['worst']} leads the context mean by {learned['lead']:.3f}, "
             f"90 % interval {learned['lo']:.3f} to {learned['hi']:.3f})").replace("-", "−")
    power_of = power if isinstance(power, dict) else {key: power for key, _, _ in CLAIMS.values()}
    return [e for c, (key, _, _) in CLAIMS.items()  # each claim behind the power of its own measure
            for e in gated_entries({c + suffix: key}, WORDS, nums,
                                   {"control": float(control_passed), "flow": float(flow), "seeds": float(enough),
                                    "learned": learned["learned"], "power": float(power_of[key])}, tail,
                                   {c + suffix: criteria[c]}, over="the seeds and the test prompts")]


def seeds_table(result: dict, cfg, train_examples: int) -> pd.DataFrame:
    """Per model, for the reader: the flow times its seeds' GD members chose, and for each of the four numbers
    the seed mean with its 90 % interval (seeds and test prompts; a ratio's geometric mean, its interval on the log
    scale) and the value of each seed in seed order (a dash for a seed not measured)."""
    edges = seed_edges(result["chosen"], result["gd_scan"], cfg)
    nums = seed_numbers(result["blocks"], train_examples)["models"]
    names = {"pred": "prediction ratio", "median": "median-block ratio", "sens": "sensitivity ratio",
             "cosine": "cosine"}
    rows = []
    for (depth, att), v in nums.items():
        mine = edges[(edges["depth"] == depth) & (edges["attention"] == att)]
        row = {"depth": depth, "attention": att, "seeds": v["seeds"],
               "ηL per seed": ", ".join(f"{t:g}" for t in mine["time"])}
        for k, name in names.items():
            each = ", ".join(f"{x:.2f}" if x == x else "—" for x in v["per_seed"][k][:, 0])  # seed by seed
            row[name] = f"{interval_cell(v[k], RATIOS.get(k))}; seeds {each}"
        rows.append(row)
    return pd.DataFrame(rows)




def edge_words(result: dict, cfg) -> str:
    """The seeds' models whose GD or ridge member sits at an edge that matters (:func:`seed_edges`), in words:
    each with its edges, its step size, steps and flow time, the seeds of one model at the same settings named
    together; "none" where the gate is met."""
    words = {"scale_edge": "start scale", "time_edge": "flow time ηL", "eta_edge": "step size",
             "lambda_edge": "ridge's λ"}
    edges = seed_edges(result["chosen"], result["gd_scan"], cfg)
    held: dict[str, list[str]] = {}  # a model's seeds at the same edges and settings, said once
    for r in edges[~edges["flow"]].itertuples():
        at = " and ".join(w for k, w in words.items() if getattr(r, k))
        what = (f"target depth {r.depth}, {r.attention} attention, seed{{s}} ({at} at the grid's edge: start scale "
                f"{r.init_scale:g}, η = {r.eta:g}, L = {count(r.steps)}, ηL = {r.time:g})")
        held.setdefault(what, []).append(str(r.seed))
    return "; ".join(w.format(s=("s " if len(s) > 1 else " ") + ", ".join(s)) for w, s in held.items()) or "none"


def unmet_words(entries: list[dict]) -> str:
    """The registered gates that leave the hypotheses of ``entries`` (:func:`judge_seeds`, one task) undecided,
    counted and named in the registry's words (:func:`icdl.repro.claims.unmet_gates`): "none" when every gate is
    met, a dash while the run waits. Every gate but ``power`` has the same number in every entry of a task; the
    power gate is each claim's own measure's, so a gate unmet for some of the claims only names them."""
    first = entries[0]
    if first.get("values") is None:
        return "—"
    gates = [c for c in CRITERIA[first["claim"]] if c.op in GATE_OPS]
    each = {e["claim"]: unmet_gates(e["claim"], e["values"]) for e in entries}
    unmet = list(dict.fromkeys(w for ws in each.values() for w in ws))
    words = []
    for g in unmet:
        short = [c for c, ws in each.items() if g not in ws]
        words.append(g if not short else g + " (for " + ", ".join(c for c, ws in each.items() if g in ws) + ")")
    return "none" if not unmet else f"{len(unmet)} of the {len(gates)} registered gates ({'; '.join(words)})"


def seeds_glue(result: dict | None, train_examples: int, entries: list[dict], cfg=None,
               suffix: str = "") -> dict[str, str]:
    """:func:`_seeds_glue`, for the claims of ``suffix`` (:func:`judge_seeds`) under names of their own:
    ``seeds_n01_pred`` for ``-n01``'s ``seeds_pred``."""
    entries = [e | {"claim": e["claim"].removesuffix(suffix)} for e in entries] if suffix else entries
    out = _seeds_glue(result, train_examples, entries, cfg)
    tag = suffix.replace("-", "_")
    return {k.replace("seeds_", f"seeds{tag}_", 1): v for k, v in out.items()}


def _seeds_glue(result: dict | None, train_examples: int, entries: list[dict], cfg=None) -> dict[str, str]:
    """The prose's numbers of the seeds run, from the judge's own ``entries``: the four judged numbers with their
    intervals; per measure how many models lie past the line on the whole interval of their seed mean
    (``_far``), how many single seeds' models lie past it on their own number (``_seed_far``) and the range
    of those numbers (``_singles``), the model that decides it (``_model``); the models (``seeds_models``);
    the seeds per model; whether the checkpoints replay the main study's stored errors (:func:`replay`, a
    clause); the models at an edge that matters (``cfg``, the profile's settings: :func:`edge_words`). Dashes
    while the run waits."""
    keys = {c: "seeds_" + key for c, (key, _, _) in CLAIMS.items()}
    if result is None:
        return ({k: "—" for v in keys.values() for k in (v, f"{v}_far", f"{v}_seed_far")}
                | {f"{v}_{x}": "—" for v in keys.values() for x in ("singles", "model")}
                | {k: "—" for k in ("seeds_count", "seeds_models", "seeds_replay", "seeds_edges")})
    out = {}
    for e in entries:  # the extreme over the models with the claim's decision interval, which is no row's: its
        # passing end the extreme of the models' own ends, its failing end that of their ends widened for the models
        # (intervals.extreme; the glossary's "every-model claim")
        v, extreme = e["values"], "largest" if CLAIMS[e["claim"]][1] == "<" else "smallest"
        out[keys[e["claim"]]] = (f"{e['value']:.3f}, the {extreme} over the models (decided on their own intervals, "
                                 f"{v['value_lo']:.3f} to {v['value_hi']:.3f})")
    nums = seed_numbers(result["blocks"], train_examples)
    models = nums["models"].values()
    for claim, (key, op, t) in CLAIMS.items():
        def past(x, op=op, t=t):
            return x >= t if op == "<" else x < t
        s = [summarised(v[key], RATIOS.get(key)) for v in models]
        out[f"{keys[claim]}_far"] = f"{sum(past(x['lo'] if op == '<' else x['hi']) for x in s)} of {len(s)}"
        single = [x for v in models for x in v["per_seed"][key][:, 0] if x == x]
        out[f"{keys[claim]}_seed_far"] = f"{sum(past(x) for x in single)} of {len(single)}"
        out[f"{keys[claim]}_singles"] = (f"{min(single):.2f}" if f"{min(single):.2f}" == f"{max(single):.2f}"
                                         else f"{min(single):.2f} to {max(single):.2f}")
    worst = {k: (min if k == "cosine" else max)(nums["models"], key=lambda m, k=k: nums["models"][m][k][0])
             for k in _MEASURES}  # the model that decides each claim: the largest ratio, the smallest cosine
    out |= {f"seeds_{k}_model": f"target depth {m[0]}, {m[1]} attention" for k, m in worst.items()}
    counts = sorted({v["seeds"] for v in models})
    rep = result.get("replay")
    if rep is None or rep.empty:
        replayed = "were not scored again against the errors it stored"
    else:
        change = rep["largest_change"].max()
        replayed = (f"give the squared errors per block it stored for them ({replay_words(change)}, "
                    f"over {len(rep)} models)" if change <= REPLAYED else
                    f"do not give the errors it stored for them (relative changes up to {sci(change)}): they are "
                    "not the models it judged")
    out["seeds_edges"] = edge_words(result, cfg) if cfg is not None else "—"
    return out | {"seeds_count": " to ".join(map(str, counts)), "seeds_models": str(len(nums["models"])),
                  "seeds_replay": replayed}
