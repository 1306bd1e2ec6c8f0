"""The intervals of ICDL sec. 5's claims cover (icdl.gpt_icl.core.intervals): a simulation at the studies' sizes --
three seeds, 4 096 test prompts in 32 blocks -- with a planted seed effect and heavy-tailed prompts, where the true
value is known. A nominal 90 % interval must cover it in at least 85 % of the data sets, and not in all of them
(an interval made wide enough to cover anything decides nothing). Without a seed effect the method is
conservative (about 96 %): the seed-by-prompt noise enters both the seed rows' spread and the prompt rows'.
The positive control: the method it replaced
(the seeds drawn with replacement beside the prompt blocks, one percentile over both) covers far less on the same
data sets, so the test can tell a short interval from a good one."""

import math
import statistics
from pathlib import Path

import numpy as np
import pytest

from icdl.gpt_icl.core import intervals
from icdl.gpt_icl.core.intervals import Draws, summary

SEEDS, PROMPTS, BLOCKS, DATASETS = 3, 4096, 32, 400
DRAWS = Draws(SEEDS, blocks=BLOCKS, resamples=1000)


def _dataset(rng, seed_sd: float, tail: float, mu: float = 1.0) -> np.ndarray:
    """``(seeds, 1, blocks)`` block sums of squared errors whose expectation per prompt is ``mu``: seed s scales its
    errors by ``1 + δ_s`` (δ ~ N(0, seed_sd²)); each prompt's difficulty, shared by every seed, is lognormal with
    log-sd ``tail`` (mean 1; tail 1.5 puts a third or more of the errors in the largest block); a χ²₁ term per seed
    and prompt is the seed-by-prompt noise."""
    delta = rng.normal(0, seed_sd, SEEDS)
    difficulty = rng.lognormal(-tail ** 2 / 2, tail, PROMPTS)
    err = mu * (1 + delta)[:, None] * difficulty[None] * rng.chisquare(1, (SEEDS, PROMPTS))
    return err.reshape(SEEDS, BLOCKS, PROMPTS // BLOCKS).sum(-1)[:, None, :]


def _coverage(seed_sd: float, tail: float, old: bool = False) -> tuple[float, float]:
    """The share of data sets whose interval of the mean squared error holds the true 1, and the mean width."""
    rng = np.random.default_rng(53)
    labels = {"n": np.full(BLOCKS, PROMPTS / BLOCKS)}
    hits, widths = 0, []
    for _ in range(DATASETS):
        mse = DRAWS.mse(_dataset(rng, seed_sd, tail), labels)[:, 0]
        if old:  # the replaced method: every resample draws the seeds with replacement and the blocks, one percentile
            lo, hi = _old_interval(mse, rng)
        else:
            s = summary(mse)
            lo, hi = s["lo"], s["hi"]
        hits += lo <= 1.0 <= hi
        widths.append(hi - lo)
    return hits / DATASETS, float(np.mean(widths))


def _old_interval(mse: np.ndarray, rng) -> tuple[float, float]:
    """The replaced interval on the same data: each resample the mean of three seeds drawn with replacement plus
    the prompt rows' deviation, one percentile over both."""
    seed_values = mse[intervals.SEED_ROWS][:SEEDS]
    prompt_dev = mse[intervals.FIRST_PROMPT_ROW:] - mse[0]
    picks = rng.integers(0, SEEDS, size=(len(prompt_dev), SEEDS))
    resampled = seed_values[picks].mean(1) + prompt_dev
    return tuple(np.quantile(resampled, [0.05, 0.95]))


@pytest.mark.parametrize("seed_sd, tail", [(0.10, 1.0), (0.03, 1.0), (0.0, 1.5)],
                         ids=["seeds-dominate", "both", "heavy-tailed-prompts"])
def test_a_nominal_90_percent_interval_covers_at_least_85_percent(seed_sd, tail):
    covered, width = _coverage(seed_sd, tail)
    assert 0.85 <= covered <= 0.99, (covered, width)


def test_the_replaced_percentile_over_three_seeds_covers_far_less():
    """The positive control: where the seeds dominate, the old two-level percentile misses often (issue 53 found
    62 % with normal seeds), and its intervals are much narrower than the t term's."""
    covered_old, width_old = _coverage(0.10, 1.0, old=True)
    covered, width = _coverage(0.10, 1.0)
    assert covered_old < 0.80 and width_old < 0.7 * width, (covered_old, width_old, covered, width)


@pytest.mark.parametrize("per_seed", [(0.1, 0.2, 0.4), (0.7, 0.5)], ids=["three-seeds", "two-seeds"])
def test_the_seed_term_is_t_with_seeds_minus_one_degrees_of_freedom_times_sd_over_root_seeds(per_seed):
    """With no prompt noise (every prompt row at the value) the 90 % interval is the seed term alone,
    ``value ± t_{0.95, S−1} · sd/√S`` (sd with ddof 1). The t quantiles are written in closed form, not read from
    :func:`intervals.t_quantile`: for one degree of freedom (Cauchy) ``tan(0.45π)`` = 6.314, for two
    ``√(2·0.9²/(1 − 0.9²))`` = 2.920 (the t₂ cdf is ``½ + t/(2√(2 + t²))``). The bug: S or S − 2 degrees of freedom
    (for three seeds 2.353 or 6.314 where 2.920 is right)."""
    S = len(per_seed)
    t = {1: math.tan(0.45 * math.pi), 2: math.sqrt(2 * 0.9 ** 2 / (1 - 0.9 ** 2))}[S - 1]
    value = statistics.fmean(per_seed)
    rows = np.full(intervals.FIRST_PROMPT_ROW + 500, np.nan)
    rows[0] = value
    rows[intervals.SEED_ROWS.start:intervals.SEED_ROWS.start + S] = per_seed
    rows[intervals.FIRST_PROMPT_ROW:] = value
    s = summary(rows)
    half = t * statistics.stdev(per_seed) / math.sqrt(S)
    assert s["seeds"] == S and s["value"] == value
    assert s["hi"] - value == pytest.approx(half, rel=1e-5)
    assert value - s["lo"] == pytest.approx(half, rel=1e-5)


def _model_rows(rng, value: float, seed_sd: float = 0.03, prompt_sd: float = 0.01) -> np.ndarray:
    """One model's statistic in a Draws' rows: three seeds about ``value`` and prompt rows about the seeds' mean."""
    seeds = value + rng.normal(0, seed_sd, SEEDS)
    rows = np.full(1 + intervals.MAX_SEEDS + 1000, np.nan)
    rows[0] = seeds.mean()
    rows[intervals.SEED_ROWS.start:intervals.SEED_ROWS.start + SEEDS] = seeds
    rows[intervals.FIRST_PROMPT_ROW:] = seeds.mean() + rng.normal(0, prompt_sd, 1000)
    return rows


def test_every_model_on_the_line_is_rarely_a_false_fail_and_one_model_past_it_fails():
    """Six models whose true shortfall is exactly the 0.05 line: read off the percentile of the largest, the claim
    "every shortfall ≤ 0.05" fails in most data sets (issue 53: 92 %); read off each model's own interval with the
    fail side adjusted for six, in at most 10 % -- and never passes more often than that. One model 0.2 past the
    line fails the claim, alone; six models 0.2 inside it pass. Catches the adjustment dropped (each model at 90 %
    on the fail side), the ends swapped, and the extreme taken over the wrong side."""
    from icdl.gpt_icl.core.verdicts import decide

    rng = np.random.default_rng(1)
    verdicts, old_fails = [], 0
    for _ in range(300):
        models = {m: _model_rows(rng, 0.05) for m in range(6)}
        s = intervals.extreme(models, largest=True)
        verdicts.append(decide(s["lo"], s["hi"], "<=", 0.05))
        picks = rng.integers(0, SEEDS, size=(1000, SEEDS))  # the replaced reading: seeds drawn, one percentile
        largest = np.max([v[intervals.SEED_ROWS][:SEEDS][picks].mean(1) + v[intervals.FIRST_PROMPT_ROW:] - v[0]
                          for v in models.values()], axis=0)
        old_fails += decide(*np.quantile(largest, [0.05, 0.95]), "<=", 0.05) is False
    assert verdicts.count(False) / 300 <= 0.10 and verdicts.count(True) / 300 <= 0.10, verdicts.count(False)
    assert old_fails / 300 > 0.5  # the positive control: the replaced reading fails most of these
    past = {m: _model_rows(rng, 0.05 if m else 0.25) for m in range(6)}
    s = intervals.extreme(past, largest=True)
    assert decide(s["lo"], s["hi"], "<=", 0.05) is False and s["value"] > 0.2 and s["models"] == 6
    inside = {m: _model_rows(rng, -0.15) for m in range(6)}
    s = intervals.extreme(inside, largest=True)
    assert decide(s["lo"], s["hi"], "<=", 0.05) is True
    low = intervals.extreme({m: -v for m, v in inside.items()}, largest=False)  # the mirror: every value > 0
    assert decide(low["lo"], low["hi"], ">", -0.05) is True and low["value"] == pytest.approx(-s["value"])


def test_a_model_without_a_number_leaves_an_every_model_claim_undecided_in_any_order():
    """A model whose statistic is NaN (a gate's input missing, a ratio of nothing) cannot be dropped from a claim
    about every model: the interval is NaN whichever position it holds (the bug: Python's max skipping a NaN that
    is not first)."""
    rng = np.random.default_rng(3)
    ok, gone = _model_rows(rng, 0.0), np.full_like(_model_rows(rng, 0.0), np.nan)
    for models in ({"a": ok, "b": gone}, {"b": gone, "a": ok}):
        for largest in (True, False):
            s = intervals.extreme(models, largest=largest)
            assert np.isnan(s["lo"]) and np.isnan(s["hi"]), (models.keys(), largest)


def test_the_shortfall_figure_draws_the_numbers_objective_1_is_judged_on():
    """``verdicts.shortfall_frame`` (the judged-run figure of objective 1) holds the numbers the judge reads, on the
    committed reference run: its largest shortfall and that model's interval are the judged value and the high end
    of the claim's interval (the bugs: the figure drawing the mean over positions, or the MLP's R² minus itself on other
    prompts, while the verdict reads the largest; an interval from the prompt level alone)."""
    from icdl.gpt_icl.core import main_study, verdicts
    from icdl.repro.results import load_result

    root = Path(__file__).resolve().parents[1]
    icl, shift = (load_result(root / "results" / "gpt_icl" / f"{part}.reference.json")["data"]
                  for part in ("icl", "shift"))
    cfg = main_study.PROFILES.resolve("reference")
    frame = verdicts.shortfall_frame(verdicts.Sums(icl["blocks"], icl["labels"]), cfg["train_examples"])
    record = verdicts.judge(icl, shift, cfg["train_examples"], cfg["test_examples"], main_study.CRITERIA,
                            {"icdl-obj1": "icdl-obj1-fitted"})[0]
    worst = frame.loc[frame["value"].idxmax()]
    assert worst["value"] == pytest.approx(record["value"], abs=1e-9)
    assert (frame["lo"] <= frame["value"]).all() and (frame["value"] <= frame["hi"]).all()
    assert frame["hi"].max() == pytest.approx(record["values"]["value_hi"], abs=1e-9)
    assert len(frame) == frame[["depth", "attention", "position"]].drop_duplicates().shape[0] > 6
