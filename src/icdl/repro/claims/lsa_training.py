"""The claims of chapter ``lsa_training``: what it must reproduce, each criterion as data, and the
registrations, deviations and known failures of its claims (:mod:`icdl.repro.claims` assembles every
chapter's part)."""

from __future__ import annotations

from .base import DIVIDING, LSA_TRAINING, RUNS, Claim, Condition, Replaced, all_of, row, runs_needed

#: the median of the paper's Table 1 test errors over its 10 runs (the mean of 0.00092 and 0.00105): what the
#: claim quotes and its criterion is centred on. ``icdl.lsa.study.PAPER_TABLE1`` holds the ten errors, and
#: ``PAPER_MEDIAN_ERROR`` there is this number (tests/test_lsa.py checks that their median is it)
PAPER_MEDIAN_ERROR = 0.000985

#: the rate a count claim of LSA sec. 4 tests: 2 of the paper's 10 runs divide by the variance (Table 1 > 0.9)
PAPER_DIVIDING_RATE = 0.2
#: how many runs a count "some run divides" needs (issue 68): at the paper's rate, none of 14 divides with
#: probability 0.8^14 = 0.044 < 0.05 (:func:`~icdl.repro.claims.base.runs_needed`); 5 runs see none one time in 3
SIZED_RUNS = runs_needed(PAPER_DIVIDING_RATE, 0.05)

CLAIMS: tuple[Claim, ...] = (
    row("lsa-table1-error", "LSA Table 1 (test error)",
        f"errors 0.00063–0.00267 over 10 runs (median {PAPER_MEDIAN_ERROR:g})",
        LSA_TRAINING, "tests/test_lsa.py::test_evaluate_on_the_construction"),
    row("lsa-table1-corr", "LSA Table 1 (corr of 1/σ with 1/V)", "correlations −0.005 to 0.926 over 10 runs",
        LSA_TRAINING, "tests/test_lsa.py::test_evaluate_on_the_construction"),
    row("lsa-fig2", "LSA Fig. 2",
        "$|W_{\\mathrm{in}}|$ and $|W_{\\mathrm{out}}|$ (4×51), log colour: the (3, 51) output weight dominates",
        LSA_TRAINING, "tests/test_lsa.py::test_fig2_is_judged_on_the_query_cells_alone"),
    row("lsa-table2", "LSA Table 2", "corr(z, f) = 0.99479, corr(z, LS) = −0.99396; coefficients as listed",
        LSA_TRAINING, "tests/test_lsa.py::test_evaluate_on_the_construction"),
    row("lsa-fig3-line", "LSA Fig. 3, as a line",
        "fitted curve on [−3, 3]: the full output (a) and the output through the (3, 51) cell alone (b) close to "
        "the least-squares line -- (b) read as its slope and intercept against that line",
        LSA_TRAINING, "tests/test_lsa.py::test_fig3_is_judged_as_a_line_on_the_run_the_paper_analyses"),
    row("lsa-conclusion", "LSA conclusion", "some runs use the LayerNorm division (corr > 0.9 in ≥ 1 run)",
        LSA_TRAINING, "tests/test_lsa.py::test_judge_reads_the_paper_criteria"),
    row("lsa-l1-dominance", "LSA sec. 4 at a stronger ℓ1 penalty (the paper does not give its strength)",
        "Fig. 2's premise: one query-token cell far above the others (the largest ≥ 10× the second) in the analysed "
        "run, at ℓ1 = 1e-4 or 1e-3",
        LSA_TRAINING, "tests/test_lsa.py::test_the_l1_scan_judge_takes_the_best_strength"),
    row("lsa-l1-table2", "LSA Table 2 at a stronger ℓ1 penalty",
        "Table 2's correlations (corr(z, f) and |corr(z, LS)| > 0.95) in the analysed run, at ℓ1 = 1e-4 or 1e-3",
        LSA_TRAINING, "tests/test_lsa.py::test_the_l1_scan_judge_takes_the_best_strength"),
    row("lsa-no-l1-sized", "LSA sec. 4, training without the ℓ1 penalty (runs sized)",
        "\"in training without the ℓ1 regularization, similar results are obtained\": asked of the division every "
        "other finding rests on -- some run's LayerNorm divides by the variance (Table 1 > 0.9), in enough runs that "
        "none would be unlikely at the paper's rate (2 of 10)",
        LSA_TRAINING, "tests/test_lsa.py::test_the_sized_count_without_l1_fails_only_on_enough_runs"),
    row("lsa-no-l1-chain-sized", "LSA sec. 4's chain, without the ℓ1 penalty (runs sized)",
        "the analysis's chain: where LayerNorm divides by the variance (Table 1 > 0.9), one query cell carries "
        "least squares (Table 2) -- asked of every run that divides",
        LSA_TRAINING, "tests/test_lsa.py::test_the_chain_and_fig3_without_l1_read_every_dividing_run_and_the_line"),
    row("lsa-no-l1-fig3-sized", "LSA Fig. 3, without the ℓ1 penalty, as a line (runs sized)",
        "Fig. 3(b): through the dominant cell alone the output follows the least-squares line -- its slope and "
        "intercept against that line, not a correlation",
        LSA_TRAINING, "tests/test_lsa.py::test_the_chain_and_fig3_without_l1_read_every_dividing_run_and_the_line"),
)

CRITERIA: dict[str, tuple[Condition, ...]] = {
    # the paper's median test error of Table 1 is 0.000985: ours within a factor 3 of it
    "lsa-table1-error": all_of(("value", ">=", PAPER_MEDIAN_ERROR / 3), ("value", "<=", 3 * PAPER_MEDIAN_ERROR)),
    "lsa-table1-corr": all_of(("value", ">=", 0.3)),
    "lsa-conclusion": all_of(("value", ">", 0.9)),
    "lsa-table2": all_of(DIVIDING, ("value", ">", 0.95)),
    # the query token's largest output weight against its second largest (the paper's "extremely large
    # compared to the other values"), where the median of all weights stood before (issue 40)
    "lsa-fig2": all_of(DIVIDING, ("query_ratio", ">=", 10)),
    # Fig. 3 at the reference strength as a line (issue 54), replacing lsa-fig3's correlation: the criterion of
    # lsa-no-l1-fig3, fixed at 06ac159 before any run without ℓ1, and panel (a)'s mean gap below 0.1 from lsa-fig3.
    # Written after the reference runs had been seen (the issue quotes the cell-only curve at −2.4 where least
    # squares is at −0.6), so its thresholds were taken unchanged from criteria fixed before, none chosen here
    "lsa-fig3-line": all_of(DIVIDING, ("value", ">=", 0.8), ("value", "<=", 1.25), ("intercept_abs", "<=", 0.2),
                            ("full_gap", "<", 0.1)),
    # registered before any run of the ℓ1 scan (python -m icdl.lsa --profile l1e-4 and --profile l1e-3: the
    # reference protocol with 5 runs at a stronger ℓ1): the best over the two strengths of the analysed run's
    # ratio of the largest to the second query-token output weight, and of min(corr(z, f), |corr(z, LS)|)
    # The selection rule's gate (DIVIDING) added under its own registration (GATES_ADDED): value is then the best
    # over the strengths that have a run the paper would analyse
    "lsa-l1-dominance": all_of(DIVIDING, ("value", ">=", 10)),
    "lsa-l1-table2": all_of(DIVIDING, ("value", ">", 0.95)),
    # registered before any run of python -m icdl.lsa --profile nol1-sized (issue 68; study.judge_no_l1_sized): the
    # reference protocol without the penalty, 14 runs at seed 1 (none of them a run already seen). value: the number
    # of runs whose Table 1 correlation of 1/σ with 1/V exceeds 0.9, at least 1; runs: how many ran, at least
    # SIZED_RUNS for a count of none to fail (a sized gate: one dividing run passes however few ran)
    "lsa-no-l1-sized": all_of(("value", ">=", 1), (RUNS, "sized", SIZED_RUNS)),
    # the criteria of lsa-no-l1-chain and lsa-no-l1-fig3 (registered at 06ac159, before any run without ℓ1; their
    # five runs had no dividing run, so no number of theirs was seen), asked again of the sized runs
    # (study.judge_no_l1_chain): chain -- value the smallest of Table 2's smaller correlation over every dividing
    # run; fig3 -- the slope of the cell-only output regressed on the least-squares line over Fig. 3's queries on
    # [−3, 3], within 0.8–1.25, and its |intercept| at most 0.2. Both gated on a run the paper would analyse
    "lsa-no-l1-chain-sized": all_of(DIVIDING, ("value", ">", 0.95)),
    "lsa-no-l1-fig3-sized": all_of(DIVIDING, ("value", ">=", 0.8), ("value", "<=", 1.25),
                                   ("intercept_abs", "<=", 0.2)),
}

#: why the three claims without ℓ1 were asked again (issue 68)
_UNSIZED = ("five runs were too few for a count of none to say anything: if runs divide at the paper's rate (2 of "
            "10), five runs show none about one time in three (0.8⁵ = 0.33); the successor runs 14, sized so that none "
            "would be unlikely (< 0.05), at a fresh seed")

REPLACED: dict[str, Replaced] = {r.id: r for r in (
    Replaced("lsa-fig3", "LSA Fig. 3", "fitted curve on [−3, 3], full output and via the (3, 51) cell, close to LS",
             "pass",
             "mean |output − LS| on [−3, 3] = 0.018; corr(through-cell, LS) = 0.979",
             "python -m icdl.lsa --profile reference at c15d2f3", "", ("lsa-fig3-line",),
             "a correlation above 0.9 passes a curve of another slope and with a bend: the cell-only output of "
             "the analysed run is far from the least-squares line that it correlates with, so the figure is now "
             "judged on the line's slope and intercept"),
    Replaced("lsa-no-l1", "LSA sec. 4, training without the ℓ1 penalty",
             "\"similar results\" without ℓ1: some run divides (Table 1 > 0.9), and in it one query cell dominates "
             "(Fig. 2) and carries least squares (Table 2 > 0.95)", "fail",
             "the largest Table 1 correlation over the five runs 0.75: no run divides",
             "python -m icdl.lsa --profile nol1 at f82ebb0", "92a18f9", ("lsa-no-l1-sized", "lsa-no-l1-chain-sized"),
             _UNSIZED + "; Fig. 2's dominance is not asked again (it fails with the penalty too: lsa-fig2), Table 2 "
             "is asked of every dividing run by the chain"),
    Replaced("lsa-no-l1-chain", "LSA sec. 4's chain, without the ℓ1 penalty",
             "in every run that divides (Table 1 > 0.9), one query cell carries least squares (Table 2)",
             "inconclusive", "no run of the five divides: no run the paper would analyse",
             "python -m icdl.lsa --profile nol1 at f82ebb0", "06ac159", ("lsa-no-l1-chain-sized",), _UNSIZED),
    Replaced("lsa-no-l1-fig3", "LSA Fig. 3, without the ℓ1 penalty, as a line",
             "through the dominant cell alone the output follows the least-squares line", "inconclusive",
             "no run of the five divides: no run the paper would analyse",
             "python -m icdl.lsa --profile nol1 at f82ebb0", "06ac159", ("lsa-no-l1-fig3-sized",), _UNSIZED),
)}

#: the commit that registered each claim's criterion as it stands (``tests/test_registered.py`` reads the
#: registry at that commit and fails where a threshold, comparison or band differs today)
REGISTERED: dict[str, str] = {
    "lsa-fig2": "eac7c3b",
    "lsa-l1-dominance": "a904e6b",
    "lsa-l1-table2": "a904e6b",
    "lsa-no-l1-sized": "be67053",
    "lsa-no-l1-chain-sized": "be67053",
    "lsa-no-l1-fig3-sized": "be67053",
}

KNOWN_FAILURES: dict[str, str] = {
    "lsa-no-l1-chain-sized": "in the 14 runs without the ℓ1 penalty (python -m icdl.lsa --profile nol1-sized) 5 runs "
                             "divide by the variance, but in none of them does the largest query cell carry the "
                             "least-squares estimate: Table 2's smaller correlation is 0.68 to 0.86 (its |corr(z, "
                             "LS)|), under the 0.95 the paper's Table 2 shows",
    "lsa-no-l1-fig3-sized": "in the run the paper would analyse without ℓ1 (run 6 of the 14) the output through its "
                            "largest query cell alone follows the least-squares line at 3.5 times its slope, 0.30 "
                            "above it: the other cells' weights carry the rest, as in the reference run with ℓ1",
    "lsa-fig3-line": "in the analysed run 8 of the reference the output through the largest query cell alone moves "
                     "with the least-squares line (correlation 0.98) at about 3.5 times its slope; the full output "
                     "lies on the line, the output weights of the other cells cancelling the excess",
    "lsa-fig2": "in the analysed run 8 of the reference (10 runs × 20 000 epochs) the query token's read-out is split "
                "between two embeddings of almost equal output weight, (1, 51) and (3, 51): the largest is 1.12× "
                "the second (though 65× the median of all output weights)",
    "lsa-table2": "in the reference run (10 runs × 20 000 epochs) the analysed run 8 uses the "
                  "LayerNorm division (Table 1 correlation 0.946), but over the 1 000 test prompts the value of its "
                  "dominant query cell (1, 51) correlates with the least-squares estimate at −0.43 (paper −0.994), "
                  "though eq. 57's regression still explains it at 0.93",
}
