"""What the chapter ``lsa_training`` shows of one training result (the reference's, or the live run's): its tables
with readable headers, and the numbers its prose quotes, formatted.

======================  ==========================================================================================
:func:`runs_table`      LSA Table 1 run by run: each run's test error and its correlation of 1/σ with 1/V
:func:`table2_table`    LSA Table 2 of the analysed run beside the paper's run 1
:func:`cells_table`     the analysed run's query cells: weight, share of the slope, correlations
:func:`split_table`     per run, the two largest query cells side by side
:func:`cells_glue`      the numbers the prose quotes of the split read-out (the analysed run's and every run's)
:func:`result_glue`     the numbers the prose quotes of Tables 1–2 and Figs. 2–3
======================  ==========================================================================================
"""

from __future__ import annotations

import pandas as pd

from ..repro.claims.lsa_training import PAPER_MEDIAN_ERROR
from ..repro.typeset import count, fixed, plain
from .readout import paper_run, split_summary
from .study import PAPER_TABLE1, PAPER_TABLE2, judge

#: LSA Table 2's rows, as the table names them (the standardised coefficients in the ``std`` rows)
TABLE2_ROWS = {"alpha0": "α₀", "alpha1": "α₁", "alpha2": "α₂", "alpha3": "α₃", "std_alpha1": "std α₁",
               "std_alpha2": "std α₂", "std_alpha3": "std α₃", "corr_z_f": "corr(z, f)", "corr_z_ls": "corr(z, LS)"}


def runs_table(table1: pd.DataFrame) -> pd.DataFrame:
    """LSA Table 1 (:func:`icdl.lsa.study.evaluate`) one row per run: the test MSE to five decimals and the
    correlation of 1/σ with 1/V signed to three, negative numbers with a minus sign."""
    return pd.DataFrame({"run": table1["run"], "test MSE": table1["test_mse"].map("{:.5f}".format),
                         "corr(1/σ, 1/V)": table1["corr_inv_sigma_inv_V"].map("{:+.3f}".format)}).replace(
        "-", "−", regex=True)


def _analysed_row(data: dict) -> pd.Series:
    """Table 2's row of the analysed run (``data["chosen_run"]``) of a training result's ``data``."""
    t2 = pd.DataFrame(data["table2"]).astype({"run": int}).set_index("run")
    return t2.loc[[data["chosen_run"]]].iloc[0]


def table2_table(data: dict) -> pd.DataFrame:
    """LSA Table 2 -- the regression of eq. 57 of the analysed run's largest query cell -- one row per coefficient
    (:data:`TABLE2_ROWS`), ours beside the paper's run 1, to five decimals."""
    row = _analysed_row(data)
    cols = list(TABLE2_ROWS)
    return pd.DataFrame({f"ours (run {data['chosen_run']}, cell {row['cell']})": row[cols].astype(float),
                         "paper (run 1, cell (3, 51))": pd.Series(PAPER_TABLE2)[cols]}
                        ).rename(index=TABLE2_ROWS).round(5)


def _analysed_cells(cells: pd.DataFrame, run: int) -> pd.DataFrame:
    """The query cells (:func:`~icdl.lsa.readout.query_cells`) of ``run``, largest output weight first."""
    return cells[cells["run"] == run].sort_values("rank")


def cells_table(cells: pd.DataFrame, run: int) -> pd.DataFrame:
    """The query cells of ``run`` (the analysed run), largest output weight first: the signed output weight, the
    share of the slope term (no "−0.00"), the correlation with least squares and with the cell's own eq.-57 fit."""
    analysed = _analysed_cells(cells, run)
    return pd.DataFrame({
        "cell": analysed["cell"], "output weight": analysed["w_out"].map(lambda v: fixed(v, "+.2f")),
        "share of the slope": analysed["slope_share"].map(lambda v: fixed(v, ".2f")),
        "corr(z, LS)": analysed["corr_z_ls"].map(lambda v: fixed(v, "+.3f")),
        "corr(z, eq. 57 fit)": analysed["corr_z_f"].map(lambda v: fixed(v, ".3f"))}).replace("-", "−", regex=True)


def split_table(cells: pd.DataFrame) -> pd.DataFrame:
    """:func:`~icdl.lsa.readout.split_summary` as the chapter prints it: per run the two largest query cells, the
    ratio of their weights, their shares of the slope and their correlations with least squares, each pair in
    one column."""
    split = split_summary(cells)
    return pd.DataFrame({
        "run": split["run"], "largest": split["first cell"], "second": split["second cell"],
        "weight ratio": split["weight ratio"].map("{:.2f}".format),
        "shares of the slope": [f"{a:.2f} / {b:.2f}" for a, b in zip(split["first share"], split["second share"])],
        "corr(z, LS)": [f"{a:+.2f} / {b:+.2f}".replace("-", "−")
                        for a, b in zip(split["first corr(z, LS)"], split["second corr(z, LS)"])]})


def cells_glue(cells: pd.DataFrame, data: dict) -> dict[str, str]:
    """The numbers the prose quotes of the split read-out, by glue name: the run the paper's rule picks, the
    analysed run's two largest query cells (which, their weights, shares of the slope, the second's correlation
    with least squares), and over every run the best cell's correlation and the ranges of the second cell's share
    and of the weight ratio."""
    analysed = _analysed_cells(cells, data["chosen_run"])
    split = split_summary(cells)
    first, second = analysed.iloc[0], analysed.iloc[1]
    return dict(lsa_paper_rule_run=str(paper_run(pd.DataFrame(data["table1"]))),
                lsa_first_cell=first["cell"], lsa_second_cell=second["cell"],
                lsa_first_w=f"{abs(first['w_out']):.2f}", lsa_second_w=f"{abs(second['w_out']):.2f}",
                lsa_first_share=f"{first['slope_share']:.2f}", lsa_second_share=f"{second['slope_share']:.2f}",
                lsa_second_corr=f"{second['corr_z_ls']:+.2f}".replace("-", "−"),
                lsa_best_cell_corr=f"{cells['corr_z_ls'].abs().max():.3f}",
                lsa_second_share_lo=f"{split['second share'].min():.2f}",
                lsa_second_share_hi=f"{split['second share'].max():.2f}",
                lsa_ratio_lo=f"{split['weight ratio'].min():.2f}", lsa_ratio_hi=f"{split['weight ratio'].max():.2f}")


def result_glue(data: dict, *, source: str, l1: float) -> dict[str, str]:
    """The numbers the prose quotes of one training result (``source``: which, in words; ``l1``: the chapter's ℓ1
    coefficient), by glue name: its runs and epochs, Table 1's median error and the spread of its correlations
    beside the paper's, Table 2's correlations of the analysed run beside the paper's, its cell, and Fig. 3's line
    and Fig. 2's query ratio as :func:`~icdl.lsa.study.judge` reads them."""
    t1_all = pd.DataFrame(data["table1"])
    corr = t1_all["corr_inv_sigma_inv_V"]
    t2_row = _analysed_row(data)
    judged = judge(data)
    fig3_line = next(e for e in judged if e["claim"] == "lsa-fig3-line")
    return {
        "lsa_source": source,
        "lsa_runs": str(len(t1_all)), "lsa_epochs": count(data['epochs_done']),
        "lsa_median_mse": plain(t1_all["test_mse"].median(), 3),
        "lsa_paper_median_mse": plain(PAPER_MEDIAN_ERROR, 3),
        "lsa_corr_lo": f"{corr.min():.2f}", "lsa_corr_hi": f"{corr.max():.2f}",
        "lsa_paper_corr_lo": f"{PAPER_TABLE1['corr_inv_sigma_inv_V'].min():.3f}",
        "lsa_paper_corr_hi": f"{PAPER_TABLE1['corr_inv_sigma_inv_V'].max():.3f}",
        "lsa_corr_above": (lambda n: f"{n} run{'s' * (n != 1)} pass{'es' * (n == 1)}")(int((corr > 0.9).sum())),
        "lsa_corr_z_f": f"{float(t2_row['corr_z_f']):.3f}", "lsa_paper_corr_z_f": f"{PAPER_TABLE2['corr_z_f']:.3f}",
        "lsa_corr_z_ls": f"{float(t2_row['corr_z_ls']):.3f}", "lsa_paper_corr_z_ls": f"{PAPER_TABLE2['corr_z_ls']:.3f}",
        "lsa_cell": str(t2_row["cell"]), "lsa_l1": plain(l1),
        "lsa_fig3_slope": f"{fig3_line['value']:.2f}",
        "lsa_fig3_intercept": f"{fig3_line['values']['intercept_abs']:.2f}",
        "lsa_query_ratio": f"{next(e['value'] for e in judged if e['claim'] == 'lsa-fig2'):.2f}",
    }
