"""How a trained LSA model reads its estimate out (chapter ``lsa_training``): the run the paper would analyse,
and the query cells that carry the estimate.

LSA Table 2 regresses *one* cell -- the query token's embedding with the largest output weight, after the
last layer's skip connection (``Q₃``) -- on the terms of eq. 57 and finds it carries the least-squares estimate.
That presupposes one cell "extremely large compared to the other values" (Fig. 2). Where two embeddings of the
query token have output weights of the same size, the estimate is split between them, and no single cell need
correlate with least squares. :func:`query_cells` measures every query cell of every run: its output weight,
its own regression of eq. 57 and its share of the model's slope term ``(C/V)(u − x̄)`` (its output weight times
its coefficient of that term, over the sum of those products over the query cells).

=====================  ===============================================================================
:func:`paper_run`      LSA's rule for the run it analyses (Table 1 correlation above 0.9, then the
                       smallest test error)
:func:`query_cells`    every query cell of every run: weight, correlations, share of the slope term
:func:`split_summary`  per run: the two largest query cells side by side
:func:`every_run`      per run of one strength: Table 1, the query cells' weight ratio, Table 2, the analysed run
:func:`run_counts`     per strength: how many runs divide, have one dominant cell, pass Table 2
:func:`runs_words`     those counts, and the runs where the paper's chain holds, in words for the prose
:func:`distributions`  Table 1 as two distributions (ours, the paper's) rather than run against run
:func:`trained_model`  the runs of a training checkpoint, at the weights the study evaluates (each run's
                       best on validation)
=====================  ===============================================================================
"""

from __future__ import annotations

import pandas as pd
import torch

from ..repro.checkpoints import CheckpointError, load_checkpoint
from ..repro.typeset import plain
from .model import TF, _corr
from .training import _command, _run_data


def trained_model(path, cfg) -> TF:
    """The model of a training checkpoint of profile ``cfg`` (checked against its record; refused in one line,
    naming the file, if it holds another number of runs or prompt length), with each run's best weights on
    validation -- the model :func:`icdl.lsa.study.analyse` evaluated."""
    state = load_checkpoint(path, command=_command(cfg), kind="lsa")
    runs, T = state["best"]["W_out"].shape[0], state["best"]["W_out"].shape[2]
    if (runs, T) != (cfg["runs"], cfg["N"] + 1):
        raise CheckpointError(f"checkpoint {path} holds {runs} runs with prompts of {T - 1} examples, profile "
                              f"{cfg['profile']!r} has {cfg['runs']} and {cfg['N']}; rebuild it with {_command(cfg)}")
    model = TF(4, 2, 2, T, runs=runs)
    model.load_state_dict(state["best"])
    return model


def paper_run(table1: pd.DataFrame, threshold: float = 0.9) -> int:
    """The run (1-based, the table's ``run``) LSA sec. 4 would analyse: among the runs whose correlation of
    1/σ with 1/V exceeds ``threshold``, the one with the smallest test error; where none does, the one with the
    largest correlation -- a fallback the paper does not have: the figures may show it, but every claim about the
    analysed run carries the selection rule's gate (``icdl.repro.claims.base.DIVIDING``) and is left undecided."""
    t = table1.astype({"run": int})
    above = t[t["corr_inv_sigma_inv_V"] > threshold]
    pick = above.loc[above["test_mse"].idxmin()] if len(above) else t.loc[t["corr_inv_sigma_inv_V"].idxmax()]
    return int(pick["run"])


def _eq57_design(d, r: int) -> torch.Tensor:
    """Eq. 57's regressors for run ``r``: 1, u − x̄, ȳ and (C/V)(u − x̄)."""
    du = d.u[r] - d.xbar[r]
    return torch.stack([torch.ones_like(du), du, d.ybar[r], d.C[r] / d.V[r] * du], -1).double()


@torch.no_grad()
def query_cells(model: TF, cfg) -> pd.DataFrame:
    """One row per run and embedding of the query token (the last token, ``T``), on the test prompts of
    :func:`icdl.lsa.study.evaluate`: ``run`` and ``embedding`` (1-based), ``cell`` as the paper writes it
    ("(embedding, token)"), the signed output weight ``w_out`` and its size ``abs_w``, ``rank`` by size
    (1: largest), the cell's correlation with least squares ``corr_z_ls`` and with its own eq.-57 fit
    ``corr_z_f``, its eq.-57 coefficient ``alpha3`` of (C/V)(u − x̄), and ``slope_share``: ``w_out · alpha3``
    over the sum of that product over the run's query cells (the shares add up to 1)."""
    d = _run_data(cfg, 2)
    _, Qs, _ = model(d.P.to(model.W.dtype), keep=True)
    T = model.T
    rows = []
    for r in range(model.runs):
        X = _eq57_design(d, r)
        w = model.W_out[r, :, T - 1].double()
        order = torch.argsort(w.abs(), descending=True).tolist()
        per = []
        for e in range(model.D):
            z = Qs[-1][r, :, T - 1, e].double()  # Q₃ after layer 2's skip connection, at the query token
            coef = torch.linalg.lstsq(X, z[:, None]).solution[:, 0]
            per.append({"run": r + 1, "embedding": e + 1, "cell": f"({e + 1}, {T})", "w_out": float(w[e]),
                        "abs_w": float(w[e].abs()), "rank": order.index(e) + 1,
                        "corr_z_ls": _corr(z, d.target[r].double()), "corr_z_f": _corr(z, X @ coef),
                        "alpha3": float(coef[3]), "slope": float(w[e] * coef[3])})
        total = sum(p["slope"] for p in per)
        rows += [p | {"slope_share": p["slope"] / total} for p in per]
    return pd.DataFrame(rows)


def split_summary(cells: pd.DataFrame) -> pd.DataFrame:
    """Per run, the two query cells with the largest output weights: which they are, the ratio of their
    weights, each one's share of the slope term and correlation with least squares."""
    rows = []
    for run, g in cells.groupby("run"):
        first, second = (g[g["rank"] == k].iloc[0] for k in (1, 2))
        rows.append({"run": int(run), "first cell": first["cell"], "second cell": second["cell"],
                     "weight ratio": first["abs_w"] / second["abs_w"],
                     "first share": first["slope_share"], "second share": second["slope_share"],
                     "first corr(z, LS)": first["corr_z_ls"], "second corr(z, LS)": second["corr_z_ls"]})
    return pd.DataFrame(rows)


def distributions(ours: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """LSA Table 1's two columns as distributions over runs, ours beside the paper's (the runs are independent
    random draws, so run i of one is not paired with run i of the other): smallest, quartiles, median, largest,
    and how many runs have a correlation above 0.9; errors with three significant digits."""
    stats = {"smallest": lambda v: v.min(), "lower quartile": lambda v: v.quantile(0.25),
             "median": lambda v: v.median(), "upper quartile": lambda v: v.quantile(0.75),
             "largest": lambda v: v.max()}
    rows = []
    for name, f in stats.items():
        rows.append({"over the runs": name,
                     # three significant digits: the paper's median 0.000985 is not cut to 0.00098
                     "test MSE, ours": plain(f(ours["test_mse"]), 3), "test MSE, paper": plain(f(paper["test_mse"]), 3),
                     "corr, ours": f"{f(ours['corr_inv_sigma_inv_V']):+.3f}".replace("-", "−"),
                     "corr, paper": f"{f(paper['corr_inv_sigma_inv_V']):+.3f}".replace("-", "−")})
    above = {k: int((t["corr_inv_sigma_inv_V"] > 0.9).sum()) for k, t in (("ours", ours), ("paper", paper))}
    rows.append({"over the runs": "runs with corr > 0.9", "test MSE, ours": "", "test MSE, paper": "",
                 "corr, ours": f"{above['ours']} of {len(ours)}", "corr, paper": f"{above['paper']} of {len(paper)}"})
    return pd.DataFrame(rows)


#: a query cell "dominates" where its output weight is at least this many times the second's (the registered line
#: of ``lsa-fig2`` and ``lsa-l1-dominance``); Table 2 "holds" where its smaller correlation exceeds 0.95
DOMINANT, TABLE2 = 10.0, 0.95


def strength(l1: float) -> str:
    """An ℓ1 coefficient as the chapter writes it, in one style everywhere: ``1e-5``, ``1e-4``, ``0``."""
    return f"{l1:.0e}".replace("e-0", "e-") if l1 else "0"


def every_run(data: dict, cells: pd.DataFrame) -> pd.DataFrame:
    """One row per run of one training result (``data``, the ``data`` of ``results/lsa_training/training.<profile>
    .json``; ``cells``: :func:`query_cells` of its checkpoint): ℓ1, the run, whether it is the run the paper's rule
    analyses (:func:`paper_run`, where some run exceeds 0.9; none otherwise), the test error, Table 1's
    correlation of 1/σ with 1/V, the ratio of the largest query-cell output weight to the second, the largest
    cell's share of the slope term, and Table 2's smaller correlation (min(corr(z, f), |corr(z, LS)|) of that
    cell) -- so that no strength is read from one run."""
    t1 = pd.DataFrame(data["table1"]).astype({"run": int}).set_index("run")
    t2 = pd.DataFrame(data["table2"]).astype({"run": int}).set_index("run")
    split = split_summary(cells).set_index("run")
    rows = []
    for run in t1.index:
        rows.append({"ℓ1": float(data["settings"]["l1"]), "run": int(run),
                     # the paper's rule: the analysed run divides (Table 1 > 0.9); a fallback pick is not marked
                     "analysed": int(run) == int(data["chosen_run"]) and t1.loc[run, "corr_inv_sigma_inv_V"] > 0.9,
                     "test MSE": float(t1.loc[run, "test_mse"]),
                     "Table 1 corr": float(t1.loc[run, "corr_inv_sigma_inv_V"]),
                     "weight ratio": float(split.loc[run, "weight ratio"]),
                     "largest cell's share": float(split.loc[run, "first share"]),
                     "Table 2 corr": float(min(t2.loc[run, "corr_z_f"], abs(t2.loc[run, "corr_z_ls"])))})
    return pd.DataFrame(rows)


def every_run_shown(runs: pd.DataFrame) -> pd.DataFrame:
    """:func:`every_run`'s rows as the chapter prints them: the analysed run starred, the weight ratio to a whole
    number (1 856, not 1856.2917: its claims' line is 10) and a share to three decimals, correlations and the test
    MSE to four significant places."""
    return runs.assign(analysed=runs["analysed"].map({True: "★", False: ""}),
                       **{"weight ratio": runs["weight ratio"].round(0),
                          "largest cell's share": runs["largest cell's share"].round(3),
                          "Table 1 corr": runs["Table 1 corr"].round(4), "Table 2 corr": runs["Table 2 corr"].round(4),
                          "test MSE": runs["test MSE"].map(lambda v: float(f"{v:.4g}"))})


def run_counts(runs: pd.DataFrame) -> pd.DataFrame:
    """Per strength (rows of :func:`every_run` for several results): the runs, and how many divide by the
    variance (Table 1 > 0.9), have one dominant query cell (:data:`DOMINANT`) and pass Table 2 (:data:`TABLE2`),
    and how many do both of the last two."""
    out = []
    for l1, g in runs.groupby("ℓ1", sort=True):
        dom, t2 = g["weight ratio"] >= DOMINANT, g["Table 2 corr"] > TABLE2
        out.append({"ℓ1": l1, "runs": len(g), "divide (Table 1 > 0.9)": int((g["Table 1 corr"] > 0.9).sum()),
                    f"one dominant cell (≥ {DOMINANT:g}×)": int(dom.sum()), f"Table 2 > {TABLE2:g}": int(t2.sum()),
                    "both": int((dom & t2).sum())})
    return pd.DataFrame(out)


def runs_words(runs: pd.DataFrame) -> dict[str, str]:
    """The prose's words for :func:`every_run`'s rows of several strengths: per strength how many runs have one
    dominant query cell and how many pass Table 2 (``lsa_runs_counts``), and the runs in which the paper's chain
    holds -- LayerNorm divides by the variance (Table 1 > 0.9) *and* one cell carries least squares (Table 2) --
    or that there is none (``lsa_runs_chain``)."""
    counts = run_counts(runs)
    dom_col = next(c for c in counts if c.startswith("one dominant"))
    t2_col = next(c for c in counts if c.startswith("Table 2"))
    parts = [f"at ℓ1 = {strength(r['ℓ1'])}, {int(r[dom_col])} of {int(r['runs'])} runs have one dominant query cell "
             f"and {int(r[t2_col])} pass{'es' if int(r[t2_col]) == 1 else ''} Table 2" for _, r in counts.iterrows()]
    chain = runs[(runs["Table 1 corr"] > 0.9) & (runs["Table 2 corr"] > TABLE2)]
    said = ("no run at any strength both divides by the variance and passes Table 2" if chain.empty else
            "; ".join(f"run {int(r['run'])} at ℓ1 = {strength(r['ℓ1'])}" for _, r in chain.iterrows()))
    return {"lsa_runs_counts": "; ".join(parts), "lsa_runs_chain": said}
