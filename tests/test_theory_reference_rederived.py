"""The theory chapters' reference ledgers (``results/ledger/<chapter>.reference.json``), derived again in CI from what
their chapters compute, at the reference settings -- not only sealed. A ledger edited together with its seal (the
probe of issue 58: a value and its ``ours`` text changed consistently, the sha256 recomputed) stays a valid file;
this is what then turns CI red.

* ``gradient_decomposition``: the Lemma 1 grid is rerun whole at the reference settings (seconds); each record's
  number must be the rerun's up to round-off (another CPU's kernels: a factor of 8 either way at 1e-16, where a
  forged number is orders of magnitude off), its ``ours`` text the one the chapter writes from that number.
* ``icgd_linear``: the one-step error is rerun whole (one layer on the 512 reference prompts); the path's two numbers
  must be those of the committed ``summary.reference.json`` (which the ledger pins by digest), and that summary's
  worst deviation no smaller than a rerun on the first 16 of the same prompts finds (a full rerun takes minutes).
"""

import math
from pathlib import Path

import pytest

from icdl.repro.ledger import _ledger_records
from icdl.repro.results import load_result

ROOT = Path(__file__).resolve().parents[1]

#: how far a round-off number may move on another CPU's kernels (a factor either way)
ROUND_OFF = 8.0


def _records(chapter: str) -> dict:
    records, _ = _ledger_records(ROOT / "results" / "ledger" / f"{chapter}.reference.json")
    return {r.claim: r for r in records}


def _same_round_off(recorded: float, rerun: float) -> bool:
    """Equal, or both positive and within :data:`ROUND_OFF` of each other (a rerun exact to the bit, 0, against a
    recorded round-off of 1e-16 is round-off too: both far below any line)."""
    if recorded == rerun or min(recorded, rerun) == 0 and max(recorded, rerun) <= 1e-15:
        return True
    return recorded > 0 and rerun > 0 and abs(math.log(recorded / rerun)) <= math.log(ROUND_OFF)


@pytest.fixture(autouse=True)
def _one_thread():
    """The reference ledgers were written with one torch thread: the rerun uses one too, so that the tolerance is
    the CPU's round-off alone, not another thread count's order of summation."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_the_gradient_decomposition_reference_ledger_is_its_rerun():
    from icdl.studies.gradient import PROFILES, deviation_grid

    grid = deviation_grid(**PROFILES.resolve("reference"))
    rerun = float(grid["rel_dev"].max())
    recs = _records("gradient_decomposition")
    for claim, ours in (("icdl-lemma1", f"max relative deviation {{:.0e}} over {len(grid)} cases"),
                        ("icdl-lemma15", "max relative deviation {:.0e} with $d_x = 5$, $d_y = 3$")):
        rec = recs[claim]
        assert _same_round_off(rec.value, rerun), f"{claim}: recorded {rec.value:.3g}, the rerun gives {rerun:.3g}"
        assert rec.ours == ours.format(rec.value), f"{claim}: its text does not say its number"
        assert rec.status == rec.rejudged()


def test_the_icgd_linear_reference_ledger_is_its_rerun_and_its_summary():
    import pandas as pd

    from icdl.studies.linear_gd import PROFILES, icgd_experiment, one_step_error, summarize

    cfg = PROFILES.resolve("reference")
    recs = _records("icgd_linear")
    one, untouched = one_step_error(**cfg)
    rec = recs["icdl-icgd-one-step"]
    assert untouched and _same_round_off(rec.value, one), f"recorded {rec.value:.3g}, the rerun gives {one:.3g}"
    assert rec.ours == (f"max error {rec.value:.0e}" if rec.value else "0 (bit-exact)") and rec.status == rec.rejudged()
    summary = pd.DataFrame(load_result(ROOT / "results" / "icgd_linear" / "summary.reference.json",
                                       profile="reference")["data"]["summary"]).set_index("eta")
    path = recs["icdl-icgd-L-steps"]
    assert path.value == summary["max |ŵ − w_GD| over path"].max()
    assert path.values["token_spread"] == summary["max token spread"].max()
    assert path.ours == f"{cfg['steps']} steps, max deviation {path.value:.0e}" and path.status == path.rejudged()
    part = summarize(icgd_experiment(**cfg, first=16))
    for eta, row in part.iterrows():
        for column in ("max |ŵ − w_GD| over path", "max token spread"):
            assert summary.loc[eta, column] >= row[column] / ROUND_OFF, (
                f"η = {eta}: the summary's {column} {summary.loc[eta, column]:.3g} is below what 16 of its prompts "
                f"give, {row[column]:.3g}")


@pytest.mark.parametrize("forged", [3e-2, 1e-18])
def test_a_forged_number_is_not_round_off(forged):
    """The comparison itself: a forged number far from the rerun's, on either side, is caught; the rerun's own
    round-off on another CPU (a few units of 1e-16) is not."""
    assert not _same_round_off(forged, 5e-16) and not _same_round_off(3e-2, 0.0)
    assert _same_round_off(4.4e-16, 5.5e-16) and _same_round_off(0.0, 0.0) and _same_round_off(4e-16, 0.0)
