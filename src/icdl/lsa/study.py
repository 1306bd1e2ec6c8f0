"""What LSA sec. 4 reports, computed from a trained set of runs (chapter ``lsa_training``): Table 1
(test error; correlation of 1/σ with 1/V), Table 2 (the regression of the dominant output cell), Fig. 2
(weights), Fig. 3 (fitted curves), and the judgement of the paper's claims on a result; and the ℓ1 scan
(:data:`L1_SCAN`: the same protocol at stronger penalties, the paper giving none) with its judge."""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from ..repro.claims.lsa_training import PAPER_MEDIAN_ERROR
from ..repro.files import ResultFileError
from ..repro.profiles import ProfileSet
from ..repro.results import frame_to_lists, load_result
from ..repro.typeset import count, plain, relation, span
from .model import TF, _corr, make_prompts, sample_data
from .readout import paper_run, strength
from .training import _run_data

Tensor = torch.Tensor


PROFILES = ProfileSet(
    "lsa_training",
    profiles={
        "quick": {"runs": 2, "epochs": 300, "M": 5000, "M_val": 1000, "batch": 500, "lr": 0.005,
                  "l1": 1e-5, "val_every": 100, "N": 50, "test_prompts": 1000, "seed": 0},
        "reference": {"runs": 10, "epochs": 20000, "M": 5000, "M_val": 1000, "batch": 500, "lr": 0.005,
                      "l1": 1e-5, "val_every": 100, "N": 50, "test_prompts": 1000, "seed": 0},
        # the ℓ1 scan: the reference protocol (data seed, schedule) with five runs at a stronger penalty
        # ... and without the penalty (``nol1``): the paper says training without it gives similar results
        **{name: {"runs": 5, "epochs": 20000, "M": 5000, "M_val": 1000, "batch": 500, "lr": 0.005, "l1": l1,
                  "val_every": 100, "N": 50, "test_prompts": 1000, "seed": 0}
           for name, l1 in (("l1e-4", 1e-4), ("l1e-3", 1e-3), ("nol1", 0.0))},
        # without the penalty again, sized (issue 68): 14 runs see none that divides with probability below 0.05 if
        # runs divide at the paper's rate (2 of 10: icdl.repro.claims.base.runs_needed); a fresh seed, so none of
        # its runs is one of the five already seen
        "nol1-sized": {"runs": 14, "epochs": 20000, "M": 5000, "M_val": 1000, "batch": 500, "lr": 0.005,
                       "l1": 0.0, "val_every": 100, "N": 50, "test_prompts": 1000, "seed": 1},
    },
    ranges={"runs": (1, 100), "epochs": (1, 1_000_000), "M": (1, 1_000_000), "M_val": (1, 1_000_000),
            "batch": (1, 1_000_000), "lr": (1e-8, 1.0), "l1": (0.0, 1.0), "val_every": (1, 1_000_000),
            "N": (2, 10_000), "test_prompts": (10, 1_000_000), "seed": (0, 2**31 - 1)},
    command="python -m icdl.lsa --profile {profile}",
    meanings={"runs": "training runs (seeds)", "epochs": "training epochs", "M": "training prompts",
              "M_val": "validation prompts", "batch": "prompts per batch", "lr": "learning rate",
              "l1": "ℓ1 strength on the weights", "val_every": "epochs between validations",
              "N": "examples per prompt", "test_prompts": "test prompts", "seed": "random seed"},
)



@torch.no_grad()
def evaluate(model: TF, cfg) -> dict:
    """Table 1 for every run (test MSE; corr of 1/σ_{m,2,N+1} with 1/V_m) on fresh test prompts,
    and Table 2 for every run: regression (57) of the dominant output cell at the query."""
    d = _run_data(cfg, 2)
    out, Qs, Hs = model(d.P.to(model.W.dtype), keep=True)
    T = model.T
    sigma = Hs[-1][:, :, T - 1, :].std(-1, unbiased=False)  # σ_{m,L,N+1} of eq. 14 (no ε)
    rows, reg = [], []
    for r in range(model.runs):
        rows.append({"run": r + 1, "test_mse": float(((out[r] - d.target[r]) ** 2).mean()),
                     "corr_inv_sigma_inv_V": _corr(1 / sigma[r], 1 / d.V[r])})
        cell = int(model.W_out[r, :, T - 1].abs().argmax())
        z = Qs[-1][r, :, T - 1, cell]
        du = d.u[r] - d.xbar[r]
        X = torch.stack([torch.ones_like(du), du, d.ybar[r], d.C[r] / d.V[r] * du], -1).double()
        coef = torch.linalg.lstsq(X, z.double()[:, None]).solution[:, 0]
        fitted = X @ coef
        std = coef[1:] * X[:, 1:].std(0) / z.double().std()
        reg.append({"run": r + 1, "cell": f"({cell + 1}, {T})", "alpha0": float(coef[0]),
                    "alpha1": float(coef[1]), "alpha2": float(coef[2]), "alpha3": float(coef[3]),
                    "std_alpha1": float(std[0]), "std_alpha2": float(std[1]), "std_alpha3": float(std[2]),
                    "corr_z_f": _corr(z, fitted), "corr_z_ls": _corr(z, d.target[r])})
    return {"table1": pd.DataFrame(rows), "table2": pd.DataFrame(reg)}


@torch.no_grad()
def fitted_curves(model: TF, run: int, cfg, points: int = 100, seed: int = 123) -> dict:
    """LSA Fig. 3 for one run (0-based): one set of N examples, ``points`` queries on [−3, 3];
    the full output, the output through the dominant query cell only, and the least-squares line."""
    N = cfg["N"]
    g = torch.Generator().manual_seed(seed)
    one = sample_data((1,), N, generator=g, dtype=torch.float64)
    x, y = one.P[0, :N, 1], one.P[0, :N, 2]
    u = torch.linspace(-3, 3, points, dtype=torch.float64)
    d = make_prompts(x.expand(points, N), y.expand(points, N), u)
    m = model.select_runs([run])
    P = d.P[None].to(m.W.dtype)
    full = m(P)[0]
    cell = int(m.W_out[0, :, N].abs().argmax())
    W_only = torch.zeros_like(m.W_out)
    W_only[0, cell, N] = m.W_out[0, cell, N]
    through_cell = m(P, W_out=W_only)[0]
    return {"x": x.numpy(), "y": y.numpy(), "u": u.numpy(), "full": full.double().numpy(),
            "through_cell": through_cell.double().numpy(), "ls": d.target.numpy(), "cell": cell + 1}


#: the paper's Table 1 (runs 1–10) and Table 2 (run 1, cell (3, 51)); the median of Table 1's errors is
#: :data:`~icdl.repro.claims.lsa_training.PAPER_MEDIAN_ERROR` (imported here), the one number the claim's text,
#: its criterion and the chapters quote (tests/test_lsa.py checks it is this table's median)
PAPER_TABLE1 = pd.DataFrame({
    "run": range(1, 11),
    "test_mse": [0.00072, 0.00139, 0.00088, 0.00063, 0.00267, 0.00165, 0.00092, 0.00074, 0.00105, 0.00131],
    "corr_inv_sigma_inv_V": [0.90608, -0.00510, 0.60064, 0.50725, 0.20170, 0.55747, 0.53876, 0.10411,
                             0.92632, 0.73416],
})


PAPER_TABLE2 = {"alpha0": 0.00250, "alpha1": -0.00159, "alpha2": -0.2436, "alpha3": -0.22498,
                "std_alpha1": -0.00453, "std_alpha2": -0.72452, "std_alpha3": -0.69403,
                "corr_z_f": 0.99479, "corr_z_ls": -0.99396}


def analyse(model: TF, cfg) -> dict:
    """Everything the chapter shows of a trained set of runs, as plain lists (JSON-ready)."""
    ev = evaluate(model, cfg)
    t1, t2 = ev["table1"], ev["table2"]
    chosen = paper_run(t1) - 1  # the run the paper's rule picks (its run 1), 0-based
    curves = fitted_curves(model, chosen, cfg)
    return {"table1": frame_to_lists(t1), "table2": frame_to_lists(t2), "chosen_run": chosen + 1,
            "W_in_abs": model.W_in[chosen].detach().abs().T.tolist(),   # 3 × D: inputs (1, x, y) × embeddings
            "W_out_abs": model.W_out[chosen].detach().abs().tolist(),   # D × (N+1)
            "curves": {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in curves.items()}}


def result_data(res: dict, cfg, bench: dict | None = None) -> dict:
    """What a training result file holds: settings, progress, timing, history and :func:`analyse`."""
    return {"settings": dict(cfg), "epochs_done": res["epochs_done"],
            "complete": res["epochs_done"] >= cfg["epochs"], "train_seconds_total": res["seconds"],
            "segments": res.get("segments", []),
            "benchmark": bench, "history": frame_to_lists(res["history"]), **analyse(res["model"], cfg)}


def load_training(path, command: str, profile: str | None = None) -> dict:
    """:func:`~icdl.repro.results.load_result` of a training result -- its data checked against the shape
    registered in :mod:`icdl.lsa.shapes`, its provenance against ``profile`` where given -- with ``command``,
    which rebuilds it, named in a refusal."""
    try:
        return load_result(path, profile=profile)
    except ResultFileError as err:
        raise ResultFileError(f"{err}; it is not a training result this package wrote: delete it and rebuild it "
                              f"with: {command}") from None


def judged_on(data: dict) -> str:
    """The run a reference record is judged on, as its ledger names it: "reference (20 000 of 20 000 epochs)"."""
    return f"reference ({count(data['epochs_done'])} of {count(data['settings']['epochs'])} epochs)"


def line_fit(curves: dict) -> tuple[float, float]:
    """LSA Fig. 3(b) read as a line: the output through the dominant query cell alone regressed on the
    least-squares line over the figure's queries, ``through_cell ≈ intercept + slope · ls``; ``(slope,
    intercept)`` -- 1 and 0 where the cell alone is the least-squares estimate."""
    ls, cell = np.asarray(curves["ls"], dtype=float), np.asarray(curves["through_cell"], dtype=float)
    slope, intercept = np.polyfit(ls, cell, 1)
    return float(slope), float(intercept)


def judge(data: dict) -> list[dict]:
    """The ledger entries of LSA section 4 for one training result (the ``data`` of
    ``results/lsa_training/training.<profile>.json``): claim id, our value as text and as the number the
    criterion is about (``value``), the criterion, and whether it passed. Whether a failure is a registered
    mismatch is decided by :func:`icdl.repro.ledger.judge_status`, not here; ``note`` says when the data are
    an incomplete or reduced run."""
    t1 = pd.DataFrame(data["table1"])
    t2 = pd.DataFrame(data["table2"]).set_index("run")
    chosen = data["chosen_run"]
    row = t2.loc[float(chosen)] if float(chosen) in t2.index else t2.loc[chosen]
    epochs = f"{count(data['epochs_done'])} of {count(data['settings']['epochs'])} epochs"
    settings = data["settings"]
    if not data["complete"]:
        caveat = f"training incomplete ({epochs}); the run resumes from its checkpoint"
    elif settings.get("runs", 10) < 10 or settings["epochs"] < 20000:
        caveat = (f"judged on a reduced run ({settings.get('runs')} runs × {settings['epochs']} epochs), "
                  "not the paper's 10 × 20000")
    else:
        caveat = ""
    med = float(t1["test_mse"].median())
    corrs = t1["corr_inv_sigma_inv_V"]
    W_out = np.asarray(data["W_out_abs"])
    T = W_out.shape[1]
    query = np.sort(W_out[:, T - 1])[::-1]  # the query token's output weights, one per embedding, largest first
    dominance = float(query[0]) / float(np.median(W_out))
    query_ratio = float(query[0] / query[1]) if query[1] > 0 else float("inf")
    curves = data["curves"]
    full_gap = float(np.mean(np.abs(np.asarray(curves["full"]) - np.asarray(curves["ls"]))))
    slope, intercept = line_fit(curves)
    dividing = {"dividing_runs": float((corrs > 0.9).sum())}  # the selection rule's gate (claims.base.DIVIDING)
    out = [
        {"claim": "lsa-table1-error", "ours": f"median test MSE {plain(med, 3)} over {len(t1)} runs (paper median "
                                              f"{plain(PAPER_MEDIAN_ERROR, 3)}); {epochs}",
         "criterion": "our median within a factor 3 of the paper's median",
         "passed": PAPER_MEDIAN_ERROR / 3 <= med <= 3 * PAPER_MEDIAN_ERROR, "value": med},
        {"claim": "lsa-table1-corr", "ours": f"correlations {span(corrs, '.3f')} over {len(t1)} runs",
         "criterion": "correlations spread over runs (range ≥ 0.3; paper −0.005 to 0.926)",
         "passed": float(corrs.max() - corrs.min()) >= 0.3, "value": float(corrs.max() - corrs.min())},
        {"claim": "lsa-conclusion", "ours": f"max correlation {corrs.max():.3f} (run {int(corrs.idxmax()) + 1})",
         "criterion": "some run divides by V through LayerNorm: correlation > 0.9 in ≥ 1 run",
         "passed": float(corrs.max()) > 0.9, "value": float(corrs.max())},
        {"claim": "lsa-table2", "ours": f"run {chosen}, cell {row['cell']}: corr(z, f) = {row['corr_z_f']:.4f}, "
                                        f"corr(z, LS) = {row['corr_z_ls']:.4f}",
         "criterion": "corr(z, f) > 0.95 and |corr(z, LS)| > 0.95 (paper 0.99479, −0.99396)",
         "passed": row["corr_z_f"] > 0.95 and abs(row["corr_z_ls"]) > 0.95,
         "value": float(min(row["corr_z_f"], abs(row["corr_z_ls"]))), "values": dividing},
        {"claim": "lsa-fig2", "ours": f"the largest query-token $|W_{{\\mathrm{{out}}}}|$ is {query_ratio:.2f}× the "
                                      f"second largest ({dominance:.0f}× the median of all $|W_{{\\mathrm{{out}}}}|$)",
         "criterion": "one query-token cell dominates the other query-token cells (the largest ≥ 10× the second)",
         "passed": query_ratio >= 10, "value": query_ratio,
         "values": {"query_ratio": query_ratio, "over_median": dominance, **dividing}},
        {"claim": "lsa-fig3-line", "ours": f"mean |output − LS| on [−3, 3] = {full_gap:.3f}; through the cell alone: "
                                           f"{intercept:.3f} + {slope:.3f} × least squares".replace("+ -", "− "),
         "criterion": "full output follows the LS line (mean gap < 0.1); the cell-only output regressed on the LS "
                      "line: slope 0.8–1.25 and |intercept| ≤ 0.2",
         "passed": full_gap < 0.1 and 0.8 <= slope <= 1.25 and abs(intercept) <= 0.2, "value": slope,
         "values": {"intercept_abs": abs(intercept), "full_gap": full_gap, **dividing}},
    ]
    for entry in out:  # no run the paper would analyse: the claims about the analysed run are undecided
        gated = entry.get("values", {}).get("dividing_runs") == 0
        entry["passed"], entry["note"] = None if gated else bool(entry["passed"]), caveat
    return out


#: the profiles of the ℓ1 scan, by strength (the reference's 1e-5 is the scan's weakest point)
L1_SCAN = {"l1e-4": 1e-4, "l1e-3": 1e-3}


def scan_row(data: dict) -> dict:
    """One strength of the ℓ1 scan, from its training result: Table 1's median error, spread and runs above 0.9,
    and for the analysed run the query weights' ratio (largest / second), Table 2's smaller correlation and
    Fig. 3(b)'s slope against least squares (the numbers :func:`judge` decides the single-strength claims on).
    The analysed run is the paper's only where ``runs with corr > 0.9`` is at least 1; elsewhere it is
    :func:`~icdl.lsa.readout.paper_run`'s fallback, which no claim is judged on."""
    t1 = pd.DataFrame(data["table1"])
    claims = {e["claim"]: e for e in judge(data)}
    return {"l1": float(data["settings"]["l1"]), "runs": len(t1), "analysed run": int(data["chosen_run"]),
            "median test MSE": float(t1["test_mse"].median()),
            "runs with corr > 0.9": int((t1["corr_inv_sigma_inv_V"] > 0.9).sum()),
            "largest Table 1": float(t1["corr_inv_sigma_inv_V"].max()),
            "query ratio": claims["lsa-fig2"]["value"], "Table 2 correlation": claims["lsa-table2"]["value"],
            "Fig. 3(b) slope": claims["lsa-fig3-line"]["value"], "complete": bool(data["complete"])}


def judge_scan(scan: dict[str, dict | None]) -> list[dict]:
    """The ledger entries of the ℓ1 scan from its results by profile (None where a strength has no result):
    ``lsa-l1-dominance``, the best over the strengths of the analysed run's query ratio (≥ 10 passes), and
    ``lsa-l1-table2``, the best of Table 2's smaller correlation (> 0.95 passes). Only a strength with a run the
    paper would analyse (Table 1 above 0.9) counts; ``dividing_runs`` is their runs above 0.9, and with none the
    registered gate leaves both claims inconclusive rather than judged on a fallback pick. Judged only when every
    strength has a complete result (``value`` None otherwise: not yet covered)."""
    rows = {name: scan_row(d) for name, d in scan.items() if d is not None}
    done = len(rows) == len(L1_SCAN) and all(r["complete"] for r in rows.values())
    analysed = {n: r for n, r in rows.items() if r["runs with corr > 0.9"] >= 1}
    dividing = float(sum(r["runs with corr > 0.9"] for r in rows.values()))
    out = []
    for claim, key, op, threshold in (("lsa-l1-dominance", "query ratio", ">=", 10.0),
                                      ("lsa-l1-table2", "Table 2 correlation", ">", 0.95)):
        criterion = (f"the best over ℓ1 = 1e-4, 1e-3 of the analysed run's {key} {relation(op)} {threshold:g}, among "
                     "strengths "
                     "with a run the paper would analyse (Table 1 > 0.9)")
        if not done:
            todo = ", ".join(PROFILES.command_for(n) for n in L1_SCAN if n not in rows or not rows[n]["complete"])
            out.append({"claim": claim, "value": None, "passed": None, "criterion": criterion,
                        "ours": f"the ℓ1 scan has not run yet: {todo}"})
            continue
        largest = "; ".join(f"ℓ1 = {strength(r['l1'])}: {r['largest Table 1']:.3f}" for r in rows.values())
        if not analysed:
            out.append({"claim": claim, "value": float("nan"), "values": {"dividing_runs": dividing},
                        "passed": None, "criterion": criterion,
                        "ours": f"no run the paper would analyse: the largest Table 1 correlation is {largest}"})
            continue
        best_name = max(analysed, key=lambda n: analysed[n][key])
        best = analysed[best_name][key]
        each = "; ".join(f"ℓ1 = {strength(r['l1'])}: {r[key]:.3f}" for r in analysed.values())
        out.append({"claim": claim, "value": float(best), "values": {"dividing_runs": dividing},
                    "passed": bool(best >= threshold if op == ">=" else best > threshold), "criterion": criterion,
                    "ours": f"the analysed run's {key}, best over the strengths with one: {best:.3f} ({each})"})
    return out


#: the profile without the ℓ1 penalty whose runs are sized for a count (issue 68), and the claim that asks the paper's
#: sentence of it; ``nol1``, the five runs of the design it replaced, is still shown among the runs
NO_L1, NO_L1_OLD, NO_L1_CLAIM = "nol1-sized", "nol1", "lsa-no-l1-sized"


def judge_no_l1_sized(data: dict | None) -> dict:
    """The ledger entry of ``lsa-no-l1-sized`` from the result of profile :data:`NO_L1` (None while it waits): how
    many runs' LayerNorm divides by the variance (``value``: Table 1's correlation of 1/σ with 1/V above 0.9, at
    least 1 to pass) out of how many ran (``runs``: a count of none fails only from the registered number of runs,
    :data:`~icdl.repro.claims.lsa_training.SIZED_RUNS`, sized at the paper's rate)."""
    from ..repro.claims.lsa_training import PAPER_DIVIDING_RATE, SIZED_RUNS

    criterion = (f"at least one run with Table 1's correlation > 0.9; a count of none fails only from {SIZED_RUNS} "
                 f"runs (none of {SIZED_RUNS} has probability < 0.05 if runs divide at the paper's rate, "
                 f"{PAPER_DIVIDING_RATE:g})")
    if data is None or not data["complete"]:
        return {"claim": NO_L1_CLAIM, "value": None, "passed": None, "criterion": criterion,
                "ours": f"not run yet: {PROFILES.command_for(NO_L1)}"}
    corr = pd.DataFrame(data["table1"])["corr_inv_sigma_inv_V"].astype(float)
    dividing = int((corr > 0.9).sum())
    return {"claim": NO_L1_CLAIM, "value": float(dividing), "values": {"runs": float(len(corr))}, "passed": None,
            "criterion": criterion,
            "ours": f"without ℓ1, {dividing} of {len(corr)} runs divide (the largest Table 1 correlation "
                    f"{corr.max():.3f})"}


#: the paper's chain and its Fig. 3, asked of the runs without ℓ1 (registered before their run, issue 54; asked
#: again of the sized runs, issue 68)
NO_L1_CHAIN, NO_L1_FIG3 = "lsa-no-l1-chain-sized", "lsa-no-l1-fig3-sized"


def judge_no_l1_chain(data: dict | None) -> list[dict]:
    """The ledger entries of the paper's chain and of its Fig. 3 without the ℓ1 penalty (profile :data:`NO_L1`):
    ``lsa-no-l1-chain`` -- in *every* run whose LayerNorm divides by the variance (Table 1 > 0.9), one query cell
    carries least squares (``value``: the smallest of Table 2's smaller correlation over those runs, > 0.95);
    ``lsa-no-l1-fig3`` -- in the run the paper analyses, the cell-only output lies on the least-squares line
    (:func:`line_fit`: slope 0.8–1.25, |intercept| ≤ 0.2). Both carry ``dividing_runs``, the number of runs
    above 0.9: with none there is no run the paper would analyse, and the registered gate leaves both
    inconclusive."""
    chain = ("in every run whose Table 1 correlation exceeds 0.9, Table 2's smaller correlation > 0.95 (at least "
             "one such run)")
    fig3 = ("in the run the paper analyses, the cell-only output regressed on the least-squares line over [−3, 3]: "
            "slope 0.8–1.25 and |intercept| ≤ 0.2 (at least one run above 0.9)")
    if data is None or not data["complete"]:
        todo = f"not run yet: {PROFILES.command_for(NO_L1)}"
        return [{"claim": c, "value": None, "passed": None, "criterion": k, "ours": todo}
                for c, k in ((NO_L1_CHAIN, chain), (NO_L1_FIG3, fig3))]
    t1 = pd.DataFrame(data["table1"]).astype({"run": int})
    t2 = pd.DataFrame(data["table2"]).astype({"run": int}).set_index("run")
    dividing = [int(r) for r in t1.loc[t1["corr_inv_sigma_inv_V"] > 0.9, "run"]]
    carried = {r: float(min(t2.loc[r, "corr_z_f"], abs(t2.loc[r, "corr_z_ls"]))) for r in dividing}
    smallest = min(carried.values()) if carried else float("nan")
    slope, intercept = line_fit(data["curves"]) if dividing else (float("nan"), float("nan"))
    none = "no run the paper would analyse (no Table 1 correlation above 0.9)"
    each = "; ".join(f"run {r}: {v:.3f}" for r, v in carried.items())
    return [
        {"claim": NO_L1_CHAIN, "value": smallest, "values": {"dividing_runs": float(len(dividing))},
         "passed": None, "criterion": chain,
         "ours": (f"{len(dividing)} of {len(t1)} runs divide; Table 2's smaller correlation in each: {each}"
                  if dividing else none)},
        {"claim": NO_L1_FIG3, "value": slope,
         "values": {"intercept_abs": abs(intercept), "dividing_runs": float(len(dividing))},
         "passed": None, "criterion": fig3,
         "ours": (f"run {int(data['chosen_run'])}: cell-only output = {intercept:.3f} + {slope:.3f} × least squares"
                  .replace("+ -", "− ") if dividing else none)},
    ]
