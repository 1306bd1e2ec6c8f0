"""Mutation testing: does the suite catch realistic one-line bugs in the core modules?

``python tests/mutation.py`` (or ``make mutation``) applies each mutant of :data:`MUTANTS` -- a flipped sign,
an off-by-one normaliser, a transpose, a halved constant, a dropped projection, a label leak, an ignored
range bound, a dropped dirty marker -- to a private copy of ``src/``, runs the tests that guard that module
against the copy (one thread, stop at the first failure), and counts the mutant *killed* if any test fails.
The catalogue is ours, written from the kinds of bug named in the developers' guide and from the
verdicts and statistics behind the claims; ``mutmut`` was tried first and spends
most of its time on mutants nobody would write (string literals, docstrings) in a suite this heavy.

Writes ``results/mutation/mutation.json`` (one row per mutant, the score, provenance) and prints the score;
exit status 1 if it is below ``--floor`` (default 0.9). ``--only PATTERN`` runs the mutants whose id
contains PATTERN. About 20 minutes on one core (114 mutants).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutant:
    id: str
    path: str      # under src/icdl/
    old: str       # must occur exactly once in the file
    new: str
    kind: str
    tests: tuple[str, ...]


def _m(id, path, old, new, kind, *tests):
    return Mutant(id, path, old, new, kind, tests)


T_NET, T_SUMS = "tests/test_networks.py", "tests/test_relu_sums.py"
T_ICGD, T_PASSES = "tests/test_icgd_transformer.py", "tests/test_attention_passes.py"
T_LIN, T_SOFT, T_LSA = "tests/test_linear_gd.py", "tests/test_softmax.py", "tests/test_lsa.py"
T_LEDGER, T_PR, T_PIPE = "tests/test_ledger.py", "tests/test_profiles_results.py", "tests/test_pipeline.py"
T_BASE, T_TRAIN, T_SPEED = "tests/test_gpt_baselines.py", "tests/test_gpt_training.py", "tests/test_gpt_speed.py"
T_OBJ, T_DEPTH, T_PLATEAU = "tests/test_gpt_objectives.py", "tests/test_gpt_depth.py", "tests/test_gpt_plateau.py"
T_COST, T_MECH = "tests/test_gpt_cost.py", "tests/test_gpt_mechanism.py"
T_SCALE = "tests/test_gpt_scale.py"
T_VERD, T_LEARN = "tests/test_gpt_verdicts.py", "tests/test_gpt_learning.py"
T_DIFF, T_TASKS = "tests/test_diffusion.py", "tests/test_gpt_tasks.py"
T_LEFT = "tests/test_leftovers_and_one_line.py"

#: the nearest-neighbour baseline's masking and selection, as one block (its leak mutant edits three lines)
_KNN_BLOCK = (
    "future = torch.ones(k, k, dtype=torch.bool).triu()  # example j is usable at position i only if j < i\n"
    "    dist = dist.masked_fill(future, float(\"inf\"))\n"
    "    out = torch.zeros(B, k, dtype=ys.dtype)\n"
    "    for i in range(1, k):\n"
    "        mm = min(m, i)\n"
    "        idx = dist[:, i, :i].topk(mm, largest=False).indices\n"
    "        out[:, i] = ys[:, :i].gather(1, idx).mean(1)"
)

MUTANTS: tuple[Mutant, ...] = (
    # -- networks: Lemma 1 and projected GD
    _m(
        "grad-normaliser",
        "networks.py",
        "for j in range(1, N + 1)]) / (2 * n)",
        "for j in range(1, N + 1)]) / n",
        "normaliser",
        T_NET,
    ),
    _m(
        "grad-backward-transpose",
        "networks.py",
        "s[j] = r_prime[j - 1] * (s[j + 1] @ Vs[j])",
        "s[j] = r_prime[j - 1] * (s[j + 1] @ Vs[j].T[: Vs[j].shape[0], : Vs[j].shape[1]])",
        "transpose",
        T_NET,
    ),
    _m("grad-last-layer-r", "networks.py", "s[N] = r_prime[N - 1] * u", "s[N] = p[N] * u", "wrong term", T_NET),
    _m(
        "gd-sign",
        "networks.py",
        "path.append(project_box(path[-1] - eta *",
        "path.append(project_box(path[-1] + eta *",
        "sign",
        T_NET,
        T_LIN,
    ),
    _m(
        "gd-projection-dropped",
        "networks.py",
        "path.append(project_box(path[-1] - eta * explicit_gradient(arch, path[-1], x, y, activation, loss), B_w))",
        "path.append(path[-1] - eta * explicit_gradient(arch, path[-1], x, y, activation, loss))",
        "dropped projection",
        T_NET,
        T_LIN,
        T_ICGD,
    ),
    _m(
        "ball-projection-bound",
        "networks.py",
        "torch.clamp(B_v / norms.clamp_min(torch.finfo(V.dtype).tiny), max=1.0)",
        "torch.clamp(B_v / norms.clamp_min(torch.finfo(V.dtype).tiny), max=1.5)",
        "constant",
        T_NET,
    ),
    _m(
        "sigmoid-derivative",
        "networks.py",
        "lambda z: torch.sigmoid(z) * (1 - torch.sigmoid(z)), 0.25",
        "lambda z: torch.sigmoid(z) * (1 + torch.sigmoid(z)), 0.25",
        "sign",
        T_NET,
    ),
    _m(
        "squared-loss-u",
        "networks.py",
        "lambda t, y: 2 * (t - y), 2.0",
        "lambda t, y: (t - y), 2.0",
        "halved constant",
        T_NET,
    ),
    # -- sums of ReLUs
    _m("sums-ramp", "relu_sums.py", "slopes[0] * (1 + R)]),", "slopes[0] * R]),", "off-by-one constant", T_SUMS),
    _m(
        "sums-kink-scale",
        "relu_sums.py",
        "torch.diff(slopes) * scale])",
        "torch.diff(slopes)])",
        "dropped factor",
        T_SUMS,
    ),
    _m(
        "sums-linear",
        "relu_sums.py",
        "return ReluSum(A, torch.tensor([n, -n], dtype=torch.float64))",
        "return ReluSum(A, torch.tensor([n, n], dtype=torch.float64))",
        "sign",
        T_SUMS,
        T_ICGD,
    ),
    _m("sums-product", "relu_sums.py", "weights=(0.25, -0.25)", "weights=(0.5, -0.5)", "doubled constant", T_SUMS),
    # -- attention layers
    _m(
        "attention-normaliser",
        "layers.py",
        '        n = T - 1 if self.normalization == "examples" else T\n        if',
        '        n = T if self.normalization == "examples" else T\n        if',
        "off-by-one normaliser",
        T_PASSES,
        T_ICGD,
        T_LIN,
    ),
    _m(
        "compact-normaliser",
        "layers.py",
        '        n = T - 1 if self.normalization == "examples" else T\n        q, k, v',
        '        n = T if self.normalization == "examples" else T\n        q, k, v',
        "off-by-one normaliser",
        T_ICGD,
        T_PASSES,
    ),
    # -- constructions
    _m(
        "gd-layer-eta", "constructions/theorem1.py", "= -sign * eta / 2", "= -sign * eta / 2.02", "1 % constant", T_ICGD
    ),
    _m(
        "gd-layer-gate",
        "constructions/theorem1.py",
        "layer.Q[head, 1, layout.one] = gate",
        "layer.Q[head, 1, layout.one] = 0.0",
        "label leak (the query in its own step)",
        T_ICGD,
    ),
    _m(
        "projection-mlp-bound",
        "constructions/theorem1.py",
        "mlp.W1[2 * i, row], mlp.W1[2 * i, layout.one] = 1.0, -B_w",
        "mlp.W1[2 * i, row], mlp.W1[2 * i, layout.one] = 1.0, -1.01 * B_w",
        "1 % constant",
        T_ICGD,
    ),
    _m("linear-gd-sign", "constructions/linear.py", "= -sign * eta  # value", "= sign * eta  # value", "sign", T_LIN),
    _m(
        "lemma2-bound-sqrt",
        "constructions/bounds.py",
        "math.sqrt(arch.K if j < arch.N else arch.d_y) * eps_r",
        "math.sqrt(arch.K) * eps_r",
        "bound formula",
        T_ICGD,
    ),
    _m(
        "lemma6-halved",
        "constructions/bounds.py",
        "    e_s[arch.N] = e_rp * (B_u + e_g) + B_rp * e_g\n",
        "    e_s[arch.N] = e_rp * (B_u + e_g) + B_rp * e_g / 2\n",
        "halved constant",
        T_ICGD,
    ),
    _m(
        "corollary-paper-form",
        "constructions/bounds.py",
        "(1 + n * L_f) ** l * eps / L_f",
        "(1 + eta * L_f) ** l * eps / L_f",
        "wrong symbol",
        T_ICGD,
    ),
    _m(
        "gradient-error-half",
        "constructions/bounds.py",
        "    return 0.5 * math.sqrt(total)",
        "    return 0.25 * math.sqrt(total)",
        "halved constant",
        T_ICGD,
    ),
    _m(
        "u-bound",
        "constructions/bounds.py",
        "        return 2 * (1 + B_y)",
        "        return 1 + B_y",
        "halved constant",
        T_ICGD,
    ),
    # -- LSA (Hagiwara)
    _m(
        "lsa-layernorm-mean",
        "lsa/model.py",
        "H = H - H.mean(2, keepdim=True)",
        "H = H - H.mean(1, keepdim=True)",
        "wrong axis",
        T_LSA,
    ),
    _m(
        "lsa-stats-variance",
        "lsa/model.py",
        "V = ((x - xbar[..., None]) ** 2).mean(-1)",
        "V = ((x - xbar[..., None]) ** 2).sum(-1) / (x.shape[-1] - 1)",
        "off-by-one normaliser",
        T_LSA,
    ),
    _m(
        "lsa-tf422-entry",
        "lsa/constructions.py",
        "m.W[0, 1, 1, 2] = _e(1, 1) / (1 + s2)",
        "m.W[0, 1, 1, 2] = _e(1, 1) / s2",
        "matrix entry",
        T_LSA,
    ),
    _m(
        "lsa-gd-closed-form",
        "lsa/constructions.py",
        "th2 = (a + 2 * N * eta * d.C",
        "th2 = (a + N * eta * d.C",
        "halved constant",
        T_LSA,
    ),
    # -- GPT experiments: baselines and metric
    _m(
        "context-mean-leak",
        "gpt_icl/core/baselines.py",
        "csum = torch.cumsum(ys, 1) - ys",
        "csum = torch.cumsum(ys, 1)",
        "label leak",
        T_BASE,
    ),
    _m(
        "least-squares-leak",
        "gpt_icl/core/baselines.py",
        "coef = torch.linalg.pinv(X1[:, :i]) @ ys[:, :i, None].double()",
        "coef = torch.linalg.pinv(X1[:, :i + 1]) @ ys[:, :i + 1, None].double()",
        "label leak",
        T_BASE,
    ),
    # masking only the diagonal would be an equivalent mutant (the loop reads columns :i alone); the leak
    # needs the query's column read and left unmasked
    _m(
        "knn-leak",
        "gpt_icl/core/baselines.py",
        _KNN_BLOCK,
        _KNN_BLOCK.replace(".triu()", ".triu(1)").replace(":i]", ":i + 1]"),
        "label leak",
        T_BASE,
    ),
    _m(
        "r2-centre",
        "gpt_icl/core/baselines.py",
        "((y_full - y_full.mean(0)) ** 2).sum(0)",
        "(y_full ** 2).sum(0)",
        "dropped centring",
        T_BASE,
    ),
    # -- the timed reference run and the speed tables
    _m(
        "pipeline-one-worker-too-many",
        "gpt_icl/core/jobs.py",
        "while ready and len(running) < workers:",
        "while ready and len(running) <= workers:",
        "off-by-one",
        T_PIPE,
    ),
    _m(
        "pipeline-ignores-dependencies",
        "gpt_icl/core/jobs.py",
        "ready = [j for j in pending if set(j.after) <= done] if not failed else []",
        "ready = list(pending) if not failed else []",
        "dropped dependency",
        T_PIPE,
    ),
    _m(
        "stage-seconds-as-minutes",
        "gpt_icl/reference.py",
        '"minutes": j["seconds"] / 60',
        '"minutes": j["seconds"]',
        "unit",
        T_PIPE + "::test_stage_times_pack_jobs_into_worker_lanes_and_refuse_too_many_at_once",
    ),
    _m(
        "speed-mean-not-median",
        "gpt_icl/compute/speed.py",
        "med = runs.groupby(keys, sort=False)[cols].median()",
        "med = runs.groupby(keys, sort=False)[cols].mean()",
        "wrong statistic",
        T_SPEED + "::test_speed_table_keeps_two_threads_and_two_processes_apart_and_takes_medians",
    ),
    # -- GPT experiments: the judges and the statistics behind the claims
    _m(
        "verdict-boundary",
        "gpt_icl/core/verdicts.py",
        '"<=": lambda v: v <= threshold',
        '"<=": lambda v: v < threshold',
        "wrong comparison",
        T_VERD,
    ),
    _m(
        "obj1-window",
        "gpt_icl/core/verdicts.py",
        "if p <= train_examples)",
        "if p < train_examples)",
        "off-by-one window",
        T_VERD,
    ),
    _m(
        "obj2-shift-ends-only",
        "gpt_icl/core/verdicts.py",
        "out |= {(depth, att, step): r2[:, step] - r2[:, step + 1] for step in range(len(MIXTURES) - 1)}",
        "out |= {(depth, att, 0): r2[:, 0] - r2[:, -1]}",
        "dropped steps",
        T_VERD,
    ),
    _m(
        "obj2-length-window",
        "gpt_icl/core/verdicts.py",
        "r2[:, 1:].mean(axis=1) - r2[:, 0]",
        "r2.mean(axis=1) - r2[:, 0]",
        "off-by-one window",
        T_VERD,
    ),
    _m(
        "obj2-length-confounded",
        "gpt_icl/core/verdicts.py",
        'twin = SOFTMAX_ON if all((d, SOFTMAX_ON) in drops for d in main.depths()) else "softmax"',
        'twin = "softmax"',
        "wrong selection",
        T_VERD,
    ),
    _m(
        "obj3-mean-not-worst",
        "gpt_icl/core/verdicts.py",
        "return {k: np.max(v, axis=0) for k, v in out.items()}\n\n\ndef context_mean_leads",
        "return {k: np.mean(v, axis=0) for k, v in out.items()}\n\n\ndef context_mean_leads",
        "wrong statistic",
        T_VERD,
    ),
    _m(
        "seeds-not-resampled",
        "gpt_icl/core/intervals.py",
        "return picked.mean(1)",
        "return per_seed.mean(1)",
        "dropped noise",
        T_VERD,
    ),
    _m(
        "sst-normaliser",
        "gpt_icl/core/intervals.py",
        '(w @ labels["sy"].T) ** 2 / n[:, None]',
        '(w @ labels["sy"].T) ** 2 / (n[:, None] - 1)',
        "off-by-one normaliser",
        T_VERD,
    ),
    _m(
        "switch-judged-as-model",
        "gpt_icl/objectives/judge.py",
        'return curves[curves["attention"].isin(ATTENTIONS)]',
        "return curves",
        "wrong selection",
        T_OBJ,
    ),
    _m(
        "param-shift-own-scale",
        "gpt_icl/core/evaluation.py",
        'return sample_prompts(target_task(cfg, depth, mu=mu), cfg["test_prompts"], cfg["test_examples"], g,\n'
        "                          scale_mu=0.0)",
        'return sample_prompts(target_task(cfg, depth, mu=mu), cfg["test_prompts"], cfg["test_examples"], g)',
        "ignored scale setting",
        T_OBJ,
    ),
    _m(
        "depth-not-strict",
        "gpt_icl/depth/judge.py",
        '"deeper_better": deep > shallow',
        '"deeper_better": deep >= shallow',
        "wrong comparison",
        T_DEPTH,
    ),
    _m(
        "depth-second-shallowest",
        "gpt_icl/depth/judge.py",
        'shallow, deep = float(g["r2"].iloc[0]), float(g["r2"].iloc[-1])',
        'shallow, deep = float(g["r2"].iloc[1]), float(g["r2"].iloc[-1])',
        "wrong selection",
        T_DEPTH,
    ),
    _m(
        "depth-sums-second-shallowest",
        "gpt_icl/depth/judge.py",
        "gain = sums.r2(depths[-1], att, examples) - sums.r2(depths[0], att, examples)",
        "gain = sums.r2(depths[-1], att, examples) - sums.r2(depths[1], att, examples)",
        "wrong selection",
        T_DEPTH,
    ),
    _m(
        "depth-examples-off-by-one",
        "gpt_icl/depth/study.py",
        'base += [{"method": name, "examples": p, "r2": float(r2[p])} for p in examples]',
        'base += [{"method": name, "examples": p, "r2": float(r2[p - 1])} for p in examples]',
        "off-by-one",
        T_DEPTH,
    ),
    _m(
        "depth-model-off-by-one",
        "gpt_icl/depth/study.py",
        'return [{"examples": p, "r2": float(r2[p]), "lo": float(lo[p]), "hi": float(hi[p])} for p in examples]',
        'return [{"examples": p, "r2": float(r2[p - 1]), "lo": float(lo[p]), "hi": float(hi[p])} for p in examples]',
        "off-by-one",
        T_DEPTH,
    ),
    _m(
        "depth-blocks-off-by-one",
        "gpt_icl/depth/study.py",
        "return [p + 1 for p in examples]",
        "return list(examples)",
        "off-by-one",
        T_DEPTH,
    ),
    _m(
        "depth-unpaired-gain",
        "gpt_icl/depth/judge.py",
        "gain = sums.r2(depths[-1], att, examples) - sums.r2(depths[0], att, examples)",
        "gain = sums.r2(depths[-1], att, examples) - (lambda s: np.vstack([s[:1], np.roll(s[1:], 1, axis=0)]))("
        "sums.r2(depths[0], att, examples))",
        "unpaired comparison",
        T_DEPTH,
    ),
    _m(
        "depth-prompts-only",
        "gpt_icl/core/intervals.py",
        "picked = np.take_along_axis(per_seed, self.seeds[:, :, None], axis=1)",
        "picked = per_seed",
        "seed noise dropped",
        T_DEPTH,
    ),
    _m(
        "mlp-last-not-best",
        "gpt_icl/core/baselines.py",
        "best = int(torch.argmax(r2))",
        "best = len(r2) - 1",
        "last for best",
        T_BASE,
    ),
    _m(
        "validation-window",
        "gpt_icl/core/training.py",
        "sl = slice(first - 1, None)",
        "sl = slice(first - 2, None)",
        "off-by-one window",
        T_TRAIN,
    ),
    _m(
        "plateau-leave-not-strict",
        "gpt_icl/plateau/study.py",
        'above = g[g["val_r2"] > mid]',
        'above = g[g["val_r2"] >= mid]',
        "wrong comparison",
        T_PLATEAU,
    ),
    _m(
        "cost-tolerance-one-side",
        "gpt_icl/compute/cost.py",
        'worst = max(gaps, key=gaps.get)',
        'worst = min(gaps, key=gaps.get)',
        "wrong statistic",
        T_COST,
    ),
    # -- gpt_mechanism: the candidates, the measures, the choice, the judge
    _m(
        "gd-query-label-leak",
        "gpt_icl/core/algorithms.py",
        "used = (torch.arange(kk)[None, :] < torch.tensor(positions)[:, None]).to(dt)  # (P, kk)",
        "used = (torch.arange(kk)[None, :] <= torch.tensor(positions)[:, None]).to(dt)  # (P, kk)",
        "label leak",
        T_MECH,
    ),
    _m(
        "gd-loss-normaliser",
        "gpt_icl/core/algorithms.py",
        "mask = (used / (2 * n[:, None]))[None, None]",
        "mask = (used / n[:, None])[None, None]",
        "off-by-one normaliser",
        T_MECH,
    ),
    _m(
        "gd-ascent",
        "gpt_icl/core/algorithms.py",
        "                W -= eta[:, None, None] * G",
        "                W += eta[:, None, None] * G",
        "flipped sign",
        T_MECH,
    ),
    _m(
        "gd-label-scale-dropped",
        "gpt_icl/core/algorithms.py",
        "    return h[..., 0] / scale\n",
        "    return h[..., 0]\n",
        "dropped constant",
        T_MECH,
    ),
    _m(
        "sensitivity-through-context",
        "gpt_icl/core/algorithms.py",
        "        sens.append(g[:, p])",
        "        sens.append(g[:, p - 1])",
        "wrong token",
        T_MECH,
    ),
    _m(
        "ridge-penalises-intercept",
        "gpt_icl/core/algorithms.py",
        "xm, ym = X[:, :p].mean(1, keepdim=True), Y[:, :p].mean(1, keepdim=True)",
        "xm, ym = X[:, :p].mean(1, keepdim=True) * 0, Y[:, :p].mean(1, keepdim=True) * 0",
        "dropped centring",
        T_MECH,
    ),
    _m(
        "alignment-mean-not-sum",
        "gpt_icl/mechanism/measures.py",
        'out = {"pred_diff": (((pred_model - pred_alg) ** 2).sum(0) / spread).numpy()}',
        'out = {"pred_diff": (((pred_model - pred_alg) ** 2).mean(0) / spread).numpy()}',
        "wrong normaliser",
        T_MECH,
    ),
    _m(
        "choose-farthest",
        "gpt_icl/mechanism/measures.py",
        "i, j, k = np.unravel_index(int(torch.argmin(gd_dist))",
        "i, j, k = np.unravel_index(int(torch.argmax(gd_dist))",
        "wrong selection",
        T_MECH,
    ),
    _m(
        "mech-pred-mean-not-worst",
        "gpt_icl/mechanism/numbers.py",
        '"pred": np.max([m["pred"] for m in per_model.values()], axis=0)',
        '"pred": np.mean([m["pred"] for m in per_model.values()], axis=0)',
        "mean for worst",
        "tests/test_gpt_mechanism_grid.py",
    ),
    _m(
        "flow-time-is-steps",
        "gpt_icl/mechanism/grid.py",
        "        time = r.gd_eta * r.gd_steps",
        "        time = float(r.gd_steps)",
        "wrong quantity",
        "tests/test_gpt_mechanism_grid.py",
    ),
    _m(
        "median-block-is-mean",
        "gpt_icl/mechanism/numbers.py",
        "        per_model[key] = _lower_median(ratio, w)",
        "        per_model[key] = (ratio * w).sum(1) / w.sum(1)",
        "wrong statistic",
        "tests/test_gpt_mechanism_grid.py",
    ),
    _m(
        "median-nearest-per-block",
        "gpt_icl/mechanism/numbers.py",
        "        ratio = col[GD_NETWORK][None, :] / per_rule[nearest]                         # (R, blocks)",
        "        ratio = col[GD_NETWORK][None, :] / per_rule.min(0)[None, :]",
        "wrong reference",
        "tests/test_gpt_mechanism_grid.py",
    ),
    _m(
        "leave-first-keeps-first",
        "gpt_icl/scale/trend.py",
        "        later[attention] = int(steps[1])",
        "        later[attention] = int(steps[0])",
        "off by one",
        T_SCALE,
    ),
    _m(
        "seeds-picks-ignored",
        "gpt_icl/mechanism/numbers.py",
        "drawn = np.take_along_axis(np.asarray(per_seed, dtype=float).T, draws.seeds, axis=1)",
        "drawn = np.asarray(per_seed, dtype=float).T",
        "wrong statistic",
        "tests/test_gpt_mechanism_seeds.py",
    ),
    _m(
        "seeds-gate-dropped",
        "gpt_icl/mechanism/seeds.py",
        "    enough = min(counts) >= SEEDS_NEEDED",
        "    enough = True",
        "dropped check",
        "tests/test_gpt_mechanism_seeds.py",
    ),
    _m(
        "workers-joined-as-finished",
        "gpt_icl/mechanism/study.py",
        "    order = sorted(parts)",
        "    order = list(parts)",
        "wrong order",
        "tests/test_gpt_mechanism_seeds.py",
    ),
    # -- gpt_scale: snapshots, trend, fit, judge
    _m(
        "snapshot-one-step-late",
        "gpt_icl/core/training.py",
        "        if step in snapshots and rank == 0:",
        "        if step - 1 in snapshots and rank == 0:",
        "off by one",
        T_SCALE,
    ),
    _m(
        "relu-from-finished-softmax",
        "gpt_icl/scale/models.py",
        '        return memory[(depth, "softmax")]["snapshots"][cfg["steps"]]',
        '        return memory[(depth, "softmax")]["model"].state_dict()',
        "wrong start",
        T_SCALE,
    ),
    _m(
        "fit-in-ln",
        "gpt_icl/scale/trend.py",
        "        x = np.log2(target.astype(float))",
        "        x = np.log(target.astype(float))",
        "wrong constant",
        T_SCALE,
    ),
    _m(
        "scale-clock-counts-warm-phase",
        "gpt_icl/scale/trend.py",
        "        target = steps - offset[attention]",
        "        target = steps",
        "dropped offset",
        T_SCALE,
    ),
    _m(
        "scale-band-without-scatter",
        "gpt_icl/scale/trend.py",
        "        slopes = (sb[:, None] + train_se * rng.standard_t(dof, size=(len(sb), T_DRAWS))).ravel()",
        "        slopes = (sb[:, None] + 0 * rng.standard_t(dof, size=(len(sb), T_DRAWS))).ravel()",
        "dropped term",
        T_SCALE,
    ),
    _m(
        "scale-prompt-noise-twice",
        "gpt_icl/scale/trend.py",
        "        train_se = float(np.sqrt(max(se ** 2 - float(np.mean(prompt_se ** 2)), 0.0)))",
        "        train_se = float(se)",
        "double count",
        T_SCALE,
    ),
    _m(
        "forecast-rising-line-reached",
        "gpt_icl/scale/trend.py",
        "    flat = np.where(a + b * np.log2(horizon) <= tolerance, float(first), np.inf)",
        "    flat = np.full(a.shape, float(first))",
        "ignored bound",
        T_SCALE,
    ),
    _m(
        "shortfall-sign",
        "gpt_icl/scale/trend.py",
        '"shortfall": base.loc["mlp", "r2_mlp_prompts"] - r.r2_mlp_prompts,',
        '"shortfall": r.r2_mlp_prompts - base.loc["mlp", "r2_mlp_prompts"],',
        "flipped sign",
        T_SCALE,
    ),
    _m(
        "fit-over-warm-phase",
        "gpt_icl/scale/trend.py",
        '& (points["step"] >= fit_from[attention])].sort_values("step")',
        '].sort_values("step")',
        "dropped filter",
        T_SCALE,
    ),
    _m(
        "scale-judge-band-ignored",
        "gpt_icl/scale/judge.py",
        'falls = {"value": slope, "values": {"slope_hi": slope_hi},',
        'falls = {"value": slope, "values": {"slope_hi": slope},',
        "dropped condition",
        T_SCALE,
    ),
    _m(
        "scale-judge-mean-not-worst",
        "gpt_icl/scale/judge.py",
        'lead = float(last["lead_knn"].min())',
        'lead = float(last["lead_knn"].mean())',
        "mean for worst",
        T_SCALE,
    ),
    # -- LSA: the judge of sec. 4
    _m(
        "lsa-median-not-mean",
        "lsa/study.py",
        'med = float(t1["test_mse"].median())',
        'med = float(t1["test_mse"].mean())',
        "wrong statistic",
        T_LSA,
    ),
    _m(
        "lsa-spread-boundary",
        "lsa/study.py",
        '"passed": float(corrs.max() - corrs.min()) >= 0.3',
        '"passed": float(corrs.max() - corrs.min()) > 0.3',
        "wrong comparison",
        T_LSA,
    ),
    # -- LSA: Table 2's cell and run (the issue that checked them: a wrong cell, a wrong stage, a wrong run rule)
    _m(
        "lsa-cell-zero-based",
        "lsa/study.py",
        '"cell": f"({cell + 1}, {T})"',
        '"cell": f"({cell}, {T})"',
        "off-by-one",
        T_LSA,
    ),
    _m(
        "lsa-cell-before-skip",
        "lsa/study.py",
        "z = Qs[-1][r, :, T - 1, cell]",
        "z = Qs[-2][r, :, T - 1, cell]",
        "wrong stage",
        T_LSA,
    ),
    _m(
        "lsa-cell-whole-matrix",
        "lsa/study.py",
        "cell = int(model.W_out[r, :, T - 1].abs().argmax())",
        "cell = int(model.W_out[r].abs().argmax()) // T",
        "wrong selection",
        T_LSA,
    ),
    _m(
        "lsa-readout-before-skip",
        "lsa/readout.py",
        "z = Qs[-1][r, :, T - 1, e].double()",
        "z = Qs[-2][r, :, T - 1, e].double()",
        "wrong stage",
        T_LSA,
    ),
    _m(
        "lsa-run-rule-argmax",
        "lsa/readout.py",
        'above = t[t["corr_inv_sigma_inv_V"] > threshold]',
        "above = t.iloc[0:0]",
        "wrong selection",
        T_LSA,
    ),
    # -- the task's content and least squares as the yardstick (sec. 5)
    _m(
        "task-split-in-sample",
        "gpt_icl/core/tasks.py",
        '"residual": (resid ** 2).sum(1) / (n - d - 1)',
        '"residual": (resid ** 2).sum(1) / n',
        "off-by-one normaliser",
        T_TASKS,
    ),
    _m(
        "task-offset-raw",
        "gpt_icl/core/tasks.py",
        'between = (mean.var(-1, correction=1) - within.mean(-1) / m["n"])',
        'between = (mean.var(-1, correction=1) - 0 * within.mean(-1) / m["n"])',
        "dropped term",
        T_TASKS,
    ),
    _m(
        "yardstick-inverted",
        "gpt_icl/objectives/yardstick.py",
        '("vs_ls", 1 - mse[:, i] / ls[:, i])',
        '("vs_ls", 1 - ls[:, i] / mse[:, i])',
        "inverted ratio",
        T_VERD,
    ),
    _m(
        "yardstick-variance",
        "gpt_icl/core/intervals.py",
        'return (self.weights @ labels["syy"].T) / (self.weights @ labels["n"])[:, None]',
        'return (self.weights @ labels["syy"].T) / (self.weights @ labels["n"])[:, None] - '
        '((self.weights @ labels["sy"].T) / (self.weights @ labels["n"])[:, None]) ** 2',
        "wrong normaliser",
        T_VERD,
    ),
    # -- book machinery
    _m(
        "judge-band-ignored",
        "repro/ledger.py",
        'return "mismatch" if m is not None and m.contains(value) else "fail"',
        'return "mismatch" if m is not None else "fail"',
        "ledger cannot go red",
        T_LEDGER,
    ),
    _m(
        "ledger-file-profile",
        "repro/ledger.py",
        '/ f"{self.chapter}.{self.profile}.json"',
        '/ f"{self.chapter}.json"',
        "ledger file name drops the profile",
        T_LEDGER,
    ),
    _m(
        "n01-gap-reversed",
        "gpt_icl/objectives/n01.py",
        "gap = {att: excess[(depths[-1], att)] - excess[(depths[0], att)] for att in ATTENTIONS}",
        "gap = {att: excess[(depths[0], att)] - excess[(depths[-1], att)] for att in ATTENTIONS}",
        "depth gap of the N(0, I) study reversed",
        "tests/test_gpt_n01.py",
    ),
    _m(
        "n01-ls-ratio-swapped",
        "gpt_icl/objectives/n01.py",
        "out[(depth, att)] = 1 - sums.mse(depth, att, PAIRED, pos)[:, 0] / ls",
        "out[(depth, att)] = 1 - ls / sums.mse(depth, att, PAIRED, pos)[:, 0]",
        "error relative to least squares inverted",
        "tests/test_gpt_n01.py",
    ),
    _m(
        "n01-centre-dropped",
        "gpt_icl/core/schedule.py",
        '                      centre=cfg.get("centre", 2.0), **kw)',
        "                      **kw)",
        "the N(0, I) profile trained on ICDL's N(-2, I)",
        "tests/test_gpt_n01.py",
    ),
    _m(
        "table-python-bool",
        "repro/tables.py",
        '            out.isetitem(i, col.map(lambda v: "yes" if v else "no"))',
        "            pass",
        "a table cell shows Python's True",
        T_PR,
    ),
    _m(
        "box-deviation-per-row",
        "repro/ledger.py",
        '                mark = marks.setdefault(DEVIATIONS[r.claim], "abcdefghijklmnopqrstuvwxyz"[len(marks) % 26])',
        "                mark = marks.setdefault(DEVIATIONS[r.claim] + r.claim, "
        '"abcdefghijklmnopqrstuvwxyz"[len(marks) % 26])',
        "a deviation repeated on every row of the claims box",
        T_LEDGER,
    ),
    _m(
        "archive-counts-outputs",
        "repro/source.py",
        '"--untracked-files=no", "--", ".", *outputs)',
        '"--untracked-files=no")',
        "the book's own outputs count as a changed source",
        "tests/test_source.py",
    ),
    _m(
        "archive-commit-from-outer-git",
        "repro/commits.py",
        '    if archived:\n        return archived + "+archive"',
        "    if False:\n        return archived",
        "an unpacked archive names no commit",
        "tests/test_source.py",
    ),
    _m(
        "dirty-marker",
        "repro/commits.py",
        'return sha + ("+dirty" if dirty else "")',
        "return sha",
        "dirty marker dropped",
        T_PR,
    ),
    _m(
        "profile-upper-bound",
        "repro/profiles.py",
        "        if not lo <= value <= hi:",
        "        if not lo <= value:",
        "upper range bound ignored",
        T_PR,
    ),
    _m(
        "reference-incomplete-used",
        "repro/chapter.py",
        'if all(raw is not None and raw["data"].get("complete") is True for raw in raws):',
        "if all(raw is not None for raw in raws):",
        "dropped check",
        T_PR,
    ),
    _m(
        "record-all-drops-value",
        "repro/ledger.py",
        'value=e.get("value"), values=e.get("values")',
        'value=None, values=e.get("values")',
        "dropped field",
        T_LEDGER,
    ),
    # -- the kinds an independent set of bugs found unguarded (each killed by its module's own tests)
    _m(
        "scale-obj1-mean-not-worst",
        "gpt_icl/scale/judge.py",
        'objective1 = float(final["obj1"].max())\n    drops = obj3_drop(shift)',
        'objective1 = float(final["obj1"].mean())\n    drops = obj3_drop(shift)',
        "recorded value: mean for worst",
        T_SCALE,
    ),
    _m(
        "wider-obj3-mean-not-worst",
        "gpt_icl/scale/judge.py",
        'objective3 = float(drops["max_drop"].max())\n    learned = gate(context_mean_leads(wide["points"]',
        'objective3 = float(drops["max_drop"].mean())\n    learned = gate(context_mean_leads(wide["points"]',
        "recorded value: mean for worst",
        T_SCALE,
    ),
    _m(
        "criterion-lost-condition",
        "repro/claims/gpt_scale.py",
        '"scale-shortfall-falls": all_of(("value", "<", 0), ("slope_hi", "<", 0), LEARNED, SEEDED),',
        '"scale-shortfall-falls": all_of(("value", "<", 0), LEARNED, SEEDED),',
        "registry: dropped condition",
        T_SCALE,
    ),
    _m(
        "criterion-lost-upper-bound",
        "repro/claims/lsa_training.py",
        'all_of(("value", ">=", PAPER_MEDIAN_ERROR / 3), ("value", "<=", 3 * PAPER_MEDIAN_ERROR))',
        'all_of(("value", ">=", PAPER_MEDIAN_ERROR / 3))',
        "registry: dropped condition",
        T_LSA,
    ),
    _m(
        "seed-takes-a-bool",
        "repro/results.py",
        '"seed": lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool))',
        '"seed": lambda v: v is None or isinstance(v, int)',
        "type check: bool as int",
        T_PR,
    ),
    _m(
        "lsa-last-not-best",
        "lsa/training.py",
        "    final.load_state_dict(best)",
        "    final.load_state_dict(model.state_dict())",
        "last for best",
        T_LSA,
    ),
    _m(
        "b1-row-not-column-sum",
        "studies/icgd_accounting.py",
        "return float(M.abs().sum(-2).max())",
        "return float(M.abs().sum(-1).max())",
        "axis (induced ℓ∞ for ℓ1)",
        T_ICGD,
    ),
    _m(
        "ledger-seal-unchecked",
        "repro/ledger.py",
        'if not isinstance(data.get("results", {}), dict) or data.get("seal") != file_seal(data, prov):',
        'if "seal" not in data:',
        "dropped check (a hand edit of shown text)",
        T_LEDGER,
    ),
    _m(
        "ledger-twice-accepted",
        "repro/ledger.py",
        "if len(set(claims)) != len(claims):",
        "if False:",
        "dropped check (a claim recorded twice)",
        T_LEDGER,
    ),
    _m(
        "interval-ignored",
        "repro/claims/base.py",
        'if lo is None or hi is None or self.op == "==":',
        "if True:",
        "dropped check (the point estimate decides inside the noise)",
        T_LEDGER,
    ),
    _m(
        "straddle-passes",
        "repro/claims/base.py",
        "return True if all(ends) else False if not any(ends) else None",
        "return True if any(ends) else False",
        "wrong comparison (an interval across the line passes)",
        T_LEDGER,
    ),
    _m(
        "schema-empty-table",
        "repro/schema.py",
        "        if rows < self.min_rows:",
        "        if rows < 0:",
        "dropped check (an emptied table)",
        T_PR,
    ),
    _m(
        "depth-mean-gain",
        "gpt_icl/depth/judge.py",
        "smallest = extreme(stats, largest=False)",
        "smallest = summary(np.mean(list(stats.values()), axis=0))",
        "recorded value: mean for smallest",
        T_DEPTH,
    ),
    _m(
        "gpt-validation-seed-is-training",
        "gpt_icl/core/training.py",
        'SEEDS = {"prompts": 1, "validation": 777}',
        'SEEDS = {"prompts": 1, "validation": 1}',
        "label leak (validation prompts from the training stream)",
        T_TRAIN,
    ),
    _m(
        "lsa-splits-one-seed",
        "lsa/training.py",
        'g = torch.Generator().manual_seed(10_000 * cfg["seed"] + 1000 * split + 7)',
        'g = torch.Generator().manual_seed(10_000 * cfg["seed"] + 7)',
        "label leak (validation and test prompts equal to training prompts)",
        T_LSA,
    ),
    _m(
        "learning-gate-on-the-point",
        "gpt_icl/core/learning.py",
        'return {KEY: s["lo"], "worst": worst',
        'return {KEY: s["value"], "worst": worst',
        "the gate read on the point value, not the whole interval",
        T_LEARN,
    ),
    _m(
        "learning-worst-by-point",
        "gpt_icl/core/learning.py",
        'worst = min(stats, key=lambda name: stats[name]["lo"])',
        'worst = min(stats, key=lambda name: stats[name]["value"])',
        "the gate's model chosen by its point, not its interval's lower end",
        T_LEARN,
    ),
    _m(
        "schema-optional-kinds",
        "repro/schema.py",
        "        for k, kind in (*self.fields.items(), *self.optional.items()):",
        "        for k, kind in self.fields.items():",
        "dropped check (an optional field of another kind)",
        T_PR,
    ),
    _m(
        "schema-column-kind",
        "repro/schema.py",
        "        for names, kind in ((self.text, TEXT), (self.flags, FLAG)):",
        "        for names, kind in ((self.flags, FLAG),):",
        "dropped check (a number where text is meant)",
        T_PR,
    ),
    # -- issue 70: what a lock, a page writer, ICDL_ROOT and a score file may be
    _m(
        "lock-over-a-hard-link",
        "repro/files.py",
        "    if info.st_nlink != 1:",
        "    if False:",
        "dropped check (the lock's line written over a file a hard link shares)",
        T_LEFT + "::test_a_hard_link_or_a_stranger_s_file_at_a_lock_is_refused_and_left_untouched",
    ),
    _m(
        "page-over-results",
        "repro/files.py",
        '    if real.is_relative_to(project_root() / "results"):',
        "    if False:",
        "dropped check (a page written over a committed result)",
        T_LEFT + "::test_the_report_refuses_an_output_over_its_ledger_the_results_or_the_other_output",
    ),
    _m(
        "root-any-folder",
        "repro/files.py",
        "    if missing:",
        "    if False:",
        "dropped check (ICDL_ROOT a folder that is not a clone)",
        T_LEFT + "::test_icdl_root_at_a_folder_that_is_not_a_clone_is_one_line_and_nothing_is_made_there",
    ),
    _m(
        "schema-negative-squares",
        "repro/schema.py",
        "lambda v: FINITE.test(v) and v >= 0)",
        "lambda v: FINITE.test(v))",
        "dropped check (a negative squared error)",
        T_PR + "::test_a_sum_of_squares_that_is_nan_negative_or_a_block_short_is_refused_naming_the_file",
    ),
    _m(
        "schema-list-length",
        "repro/schema.py",
        "        if self.length is not None and len(value) != self.length:",
        "        if False:",
        "dropped check (a squared error one block of prompts short)",
        T_PR + "::test_a_sum_of_squares_that_is_nan_negative_or_a_block_short_is_refused_naming_the_file",
    ),
    _m(
        "depth-score-rows",
        "gpt_icl/depth/study.py",
        "    _check_unit_blocks(path, data, cfg, n_layer, seed)\n",
        "",
        "dropped check (a score file a row short)",
        T_DEPTH + "::test_a_score_file_with_a_nan_a_negative_error_or_a_block_or_row_short_is_refused_in_one_line",
    ),
    # -- a second independent set: step sizes, normalisers, axes, ranges, fan-in against fan-out (each killed by
    #    its module's own tests; the survivors of the first run got the tests named in their module's file)
    _m(
        "nets-init-fan-out",
        "networks.py",
        "* scale / math.sqrt(cols)",
        "* scale / math.sqrt(rows)",
        "fan-in/fan-out",
        T_NET,
    ),
    _m("nets-risk-normaliser", "networks.py", ".sum() / (2 * x.shape[0])", ".sum() / x.shape[0]", "normaliser", T_NET),
    _m(
        "sup-grid-half-box",
        "relu_sums.py",
        "z = torch.linspace(-R, R, points or 20001",
        "z = torch.linspace(0, R, points or 20001",
        "interpolation range",
        T_SUMS,
    ),
    _m(
        "sup-grid-2d-half-box",
        "relu_sums.py",
        "grid = torch.linspace(-R, R, m,",
        "grid = torch.linspace(0, R, m,",
        "interpolation range",
        T_SUMS,
    ),
    _m(
        "mixture-density-normaliser",
        "studies/diffusion.py",
        "d / 2 * math.log(2 * math.pi * var)",
        "d / 2 * math.log(math.pi * var)",
        "normaliser",
        T_DIFF,
    ),
    _m(
        "dsm-target-sqrt",
        "studies/diffusion.py",
        "return x0, xt, -(xt - a * x0) / h",
        "return x0, xt, -(xt - a * x0) / math.sqrt(h)",
        "normaliser",
        T_DIFF,
    ),
    _m(
        "diffusion-start-half-box",
        "studies/diffusion.py",
        'w0 = (2 * torch.rand(P, arch.size, generator=g_w, dtype=torch.float64) - 1) * cfg["B_w"]',
        'w0 = torch.rand(P, arch.size, generator=g_w, dtype=torch.float64) * cfg["B_w"]',
        "interpolation range",
        T_DIFF,
    ),
    _m(
        "linear-task-sqrt-d",
        "studies/linear_gd.py",
        "generator=g, dtype=dtype) / d**0.5",
        "generator=g, dtype=dtype)",
        "normaliser (√d missing)",
        T_LIN,
    ),
    _m(
        "linear-gd-path-normaliser",
        "studies/linear_gd.py",
        'torch.einsum("bn,bnd->bd", resid, x) / x.shape[1]',
        'torch.einsum("bn,bnd->bd", resid, x) / (2 * x.shape[1])',
        "normaliser",
        T_LIN,
    ),
    _m(
        "softmax-problem-norm-axis",
        "studies/softmax.py",
        "x = x / x.norm(dim=-1, keepdim=True).clamp(min=1.0)",
        "x = x / x.norm(dim=1, keepdim=True).clamp(min=1.0)",
        "axis",
        T_SOFT,
    ),
    _m(
        "equivariant-mean-axis",
        "studies/softmax_proof.py",
        "0.5 * torch.sin(Z).mean(-1, keepdim=True)",
        "0.5 * torch.sin(Z).mean(-2, keepdim=True)",
        "axis",
        T_SOFT,
    ),
    _m(
        "softmax-step-eta-half",
        "studies/softmax.py",
        "return (w - eta * grad).detach()",
        "return (w - eta / 2 * grad).detach()",
        "step size",
        T_SOFT,
    ),
    _m(
        "attention-softmax-axis",
        "layers.py",
        'torch.einsum("zmas,zmai->zmsi", k, q), dim=2)',
        'torch.einsum("zmas,zmai->zmsi", k, q), dim=3)',
        "axis",
        T_SOFT,
    ),
    _m(
        "separation-softmax-axis",
        "constructions/softmax.py",
        "torch.softmax(k[:, :, None] * q[:, None, :], dim=1)",
        "torch.softmax(k[:, :, None] * q[:, None, :], dim=2)",
        "axis",
        T_SOFT,
    ),
    _m(
        "mlp-init-fan-out",
        "gpt_icl/core/baselines.py",
        "bound = 1 / math.sqrt(sizes[j])",
        "bound = 1 / math.sqrt(sizes[j + 1])",
        "fan-in/fan-out",
        T_BASE,
    ),
    _m(
        "knn-normaliser",
        "gpt_icl/core/baselines.py",
        "ys[:, :i].gather(1, idx).mean(1)",
        "ys[:, :i].gather(1, idx).sum(1) / m",
        "normaliser",
        T_BASE,
    ),
    _m(
        "target-fan-out",
        "gpt_icl/core/tasks.py",
        "h = h @ W.transpose(1, 2) / math.sqrt(W.shape[2])",
        "h = h @ W.transpose(1, 2) / math.sqrt(W.shape[1])",
        "fan-in/fan-out",
        T_TASKS,
    ),
    _m(
        "gd-network-fan-out",
        "gpt_icl/core/algorithms.py",
        "h = h @ W.transpose(1, 2) / math.sqrt(W.shape[2])",
        "h = h @ W.transpose(1, 2) / math.sqrt(W.shape[1])",
        "fan-in/fan-out",
        T_MECH,
    ),
    _m(
        "gd-sensitivity-eta-squared",
        "gpt_icl/core/algorithms.py",
        "                W -= eta * G",
        "                W -= eta * eta * G",
        "step size",
        T_MECH,
    ),
    _m(
        "lsa-noise-variance-as-std",
        "lsa/model.py",
        "math.sqrt(noise_var) * torch.randn",
        "noise_var * torch.randn",
        "normaliser (√ missing)",
        T_LSA,
    ),
    _m(
        "lsa-init-fan-out",
        "lsa/model.py",
        "uniform(runs, D, 3, fan_in=3)",
        "uniform(runs, D, 3, fan_in=D)",
        "fan-in/fan-out",
        T_LSA,
    ),
    _m(
        "lsa-explicit-gd-eta-half",
        "lsa/constructions.py",
        "theta = theta - eta * grad",
        "theta = theta - eta / 2 * grad",
        "step size",
        T_LSA,
    ),
    _m(
        "lsa-out-init-fan-in-T",
        "lsa/model.py",
        "uniform(runs, D, T, fan_in=D * T)",
        "uniform(runs, D, T, fan_in=T)",
        "fan-in/fan-out",
        T_LSA,
    ),
)


def _apply(src: Path, m: Mutant) -> None:
    f = src / "icdl" / m.path
    text = f.read_text()
    if text.count(m.old) != 1:
        raise SystemExit(f"mutant {m.id}: the original text occurs {text.count(m.old)} times in {m.path} "
                         f"(expected once); update tests/mutation.py after a refactor")
    mutated = text.replace(m.old, m.new)
    compile(mutated, str(f), "exec")  # a mutant must be valid Python: a syntax error is not a caught bug
    f.write_text(mutated)


ENV = {**os.environ, "OMP_NUM_THREADS": "1", "ICDL_ROOT": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}


def _pytest(src: Path, tests, timeout: float) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    return subprocess.run(cmd, cwd=ROOT, env={**ENV, "PYTHONPATH": str(src)}, capture_output=True, text=True,
                          timeout=timeout)


def _copy_src(tmp: str) -> Path:
    src = Path(tmp) / "src"
    shutil.copytree(ROOT / "src", src, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return src


def check_unmutated(mutants, timeout: float) -> None:
    """The guarding tests must pass on an unmutated copy, or every mutant would count as killed."""
    tests = sorted({t for m in mutants for t in m.tests})
    with tempfile.TemporaryDirectory(prefix="icdl-unmutated-") as tmp:
        proc = _pytest(_copy_src(tmp), tests, 4 * timeout)
    if proc.returncode != 0:
        raise SystemExit("the guarding tests fail without any mutant; fix the suite first:\n" + proc.stdout[-3000:])
    print(f"unmutated copy: {' '.join(tests)} pass", flush=True)


def run(mutants, timeout: float) -> list[dict]:
    rows = []
    for i, m in enumerate(mutants, 1):
        with tempfile.TemporaryDirectory(prefix="icdl-mutant-") as tmp:
            src = _copy_src(tmp)
            _apply(src, m)
            t = time.perf_counter()
            try:
                proc = _pytest(src, m.tests, timeout)
                killed, how = proc.returncode != 0, ("tests failed" if proc.returncode else "survived")
                if proc.returncode not in (0, 1):  # collection error, interrupted: still a caught mutant
                    how = f"pytest exit {proc.returncode}"
            except subprocess.TimeoutExpired:
                killed, how = True, f"timeout after {timeout:.0f} s"
        rows.append({"id": m.id, "module": m.path, "kind": m.kind, "killed": killed, "how": how,
                     "tests": " ".join(m.tests), "seconds": round(time.perf_counter() - t, 1)})
        print(f"[{i}/{len(mutants)}] {m.id:28s} {'killed' if killed else 'SURVIVED':9s} {how} "
              f"({rows[-1]['seconds']} s)", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python tests/mutation.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--only", default=None, help="run only the mutants whose id contains this text")
    p.add_argument("--floor", type=float, default=0.9, help="fail (exit 1) below this share killed")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds per mutant before it counts as killed")
    args = p.parse_args(argv)
    if not 0 <= args.floor <= 1:
        p.error(f"--floor must lie in [0, 1], got {args.floor}")
    chosen = [m for m in MUTANTS if args.only is None or args.only in m.id]
    if not chosen:
        p.error(f"--only {args.only!r} matches no mutant; ids: {', '.join(m.id for m in MUTANTS)}")
    started = time.perf_counter()
    check_unmutated(chosen, args.timeout)
    rows = run(chosen, args.timeout)
    score = sum(r["killed"] for r in rows) / len(rows)
    print(f"mutation score: {sum(r['killed'] for r in rows)}/{len(rows)} killed ({100 * score:.0f} %)")
    if args.only is None:
        sys.path.insert(0, str(ROOT / "src"))
        from icdl.repro.files import results_dir
        from icdl.repro.results import provenance, save_result

        path = save_result(results_dir("mutation") / "mutation.json",
                           {"mutants": rows, "killed": sum(r["killed"] for r in rows), "total": len(rows),
                            "score": score},
                           provenance=provenance(command="python tests/mutation.py",
                                                 wall_time_s=time.perf_counter() - started, profile="all",
                                                 seed=None))
        print(f"wrote {path}")
    return 0 if score >= args.floor else 1


if __name__ == "__main__":
    sys.exit(main())
