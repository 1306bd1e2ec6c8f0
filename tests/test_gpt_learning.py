"""The learning gate (icdl.gpt_icl.core.learning): a model learned its task when its lead over the context mean
clears the registered margin on the whole of its interval; a claim about models that did not all learn passes
never, and fails only where the models that learned fail it by themselves (the gate is refutable, issue 67)."""

import numpy as np
import pytest

from icdl.gpt_icl.core import learning
from icdl.repro import claims


def _lead(point: float, spread: float, seed: int = 0) -> np.ndarray:
    """A lead on every resample: row 0 the point, then 2000 draws around it."""
    rng = np.random.default_rng(seed)
    return np.concatenate([[point], point + spread * rng.standard_normal(2000)])


def test_a_lead_above_the_margin_whose_interval_reaches_below_it_has_not_learned():
    """The gate reads the lower end of the interval, not the point (the main study's depth-6 ReLU model: 0.067,
    interval 0.048 to 0.088): a gate on the point value would call it learned."""
    loose, tight = learning.gate({"m": _lead(0.06, 0.01)}), learning.gate({"m": _lead(0.06, 0.002)})
    assert loose["lead"] == pytest.approx(0.06) and loose["learned"] < 0.05 < loose["hi"]
    assert tight["learned"] > 0.05


def test_the_gate_is_the_worst_model_by_its_lower_end():
    """Of a model with the larger point lead but the wider interval and one with the smaller point but a narrow
    interval, the gate is the one whose interval reaches lower (the bug: the worst point, or the best model)."""
    g = learning.gate({"narrow": _lead(0.08, 0.002, 1), "wide": _lead(0.10, 0.03, 2), "far": _lead(0.5, 0.01, 3)})
    assert g["worst"] == "wide" and g["learned"] == pytest.approx(g["lo"]) and g["learned"] < 0.07
    with pytest.raises(ValueError, match="at least one model"):
        learning.gate({})


def test_the_count_of_models_that_learned_reads_each_lower_end():
    """``met_count``: the models whose whole interval clears the margin, counted on their lower ends (the bugs: the
    point lead counted -- "wide" has 0.10 > 0.05 but a lower end below it -- or the count of the ones that did not)."""
    leads = {"narrow": _lead(0.08, 0.002, 1), "wide": _lead(0.10, 0.03, 2), "far": _lead(0.5, 0.01, 3)}
    assert learning.met_count(leads, 0.05) == "2 of the 3 models"
    assert learning.met_count(leads, 0.6) == "none of the 3 models"
    assert learning.met_count({k: leads[k] for k in ("narrow", "far")}, 0.05) == "all 2 models"


def test_a_gated_entry_keeps_the_registry_s_verdict_when_met_and_withholds_it_when_not():
    entry = {"claim": "icdl-obj1-fitted", "value": 0.02, "values": {"value_lo": 0.01, "value_hi": 0.03}, "passed": True,
             "ours": "largest shortfall: 0.020"}
    met = learning.gated(entry, learning.gate({"m": _lead(0.3, 0.01)}))
    assert met["passed"] is True and met["values"]["learned"] > 0.05 and met["ours"] == entry["ours"]
    unmet = learning.gated(entry, learning.gate({"depth 6, relu": _lead(0.06, 0.01)}))
    assert unmet["passed"] is None
    assert "1 of 1 models missed the learning gate (0.05): depth 6, relu leads" in unmet["ours"]
    assert claims.criterion_verdict("icdl-obj1-fitted", {"value": 0.02, **unmet["values"]}) is None
    failing = {**entry, "value": 0.2, "values": {"value_lo": 0.15, "value_hi": 0.25}, "passed": False}
    assert learning.gated(failing, learning.gate({"m": _lead(0.3, 0.01)}))["passed"] is False  # a fail stays one
    assert learning.gated(failing, learning.gate({"m": _lead(0.01, 0.01)}))["passed"] is None


# ---- the refutable gate (issue 67): planted models and planted claims -------------------------------------------


def _stat(point: float, spread: float, seed: int) -> np.ndarray:
    """A claim's number on every row of a Draws: row 0 the point, 20 seed rows (3 used), 2000 prompt rows."""
    from icdl.gpt_icl.core.intervals import MAX_SEEDS

    rng = np.random.default_rng(seed)
    seeds = np.full(MAX_SEEDS, np.nan)
    seeds[:3] = point + spread * rng.standard_normal(3)
    return np.concatenate([[point], seeds, point + spread * rng.standard_normal(2000)])


#: two models that learned (leads far above 0.05) and one that did not (a lead on the plateau)
LEADS = {"target depth 3, softmax": _stat(0.4, 0.01, 1), "target depth 3, relu": _stat(0.3, 0.01, 2),
         "target depth 6, relu": _stat(0.01, 0.01, 3)}


def _judged(shortfalls: dict[str, float], leads: dict = LEADS, spread: float = 0.01) -> dict:
    """``gpt-n01f-obj1`` (largest shortfall ≤ 0.05 over every model) judged by the production path
    (``verdicts._entry`` then ``learning.gated``) on planted per-model shortfalls."""
    from icdl.gpt_icl.core import verdicts

    stat = {(int(n.split()[2].rstrip(",")), n.split()[-1]): _stat(v, spread, i)
            for i, (n, v) in enumerate(shortfalls.items())}
    g = learning.gate(leads)
    entry = verdicts._entry("gpt-n01f-obj1", stat, "largest shortfall", "≤ 0.05", "<=", 0.05,
                            learned=learning.learned_keys(g, 0.05, verdicts.behind(stat)))
    out = learning.gated(entry, g)
    assert out["passed"] is claims.criterion_verdict("gpt-n01f-obj1", {"value": out["value"], **out["values"]})
    return out


def test_a_learned_model_that_fails_fails_the_claim_though_another_missed_the_gate():
    """A model that learned, 0.2 above the line on its whole interval, refutes "every model ≤ 0.05" even though a
    third model never left the plateau (the bug: the gate withholding every verdict, as it did before issue 67)."""
    out = _judged({"target depth 3, softmax": 0.2, "target depth 3, relu": 0.02, "target depth 6, relu": 0.01})
    assert out["passed"] is False and out["values"]["value_learned"] == pytest.approx(0.2)
    assert "fails on the models that learned alone: 0.200" in out["ours"]
    assert "1 of 3 models missed the learning gate" in out["ours"] and "target depth 6, relu" in out["ours"]
    assert "near the plateau" in out["ours"]


def test_only_an_unlearned_model_failing_leaves_the_claim_inconclusive():
    """The plateaued model fails by far and the learned ones pass: a verdict on the plateau is its schedule's, so
    inconclusive -- not fail (the bug: the fail side read over every model), not pass (the pass side over the
    learned ones only)."""
    out = _judged({"target depth 3, softmax": 0.01, "target depth 3, relu": 0.02, "target depth 6, relu": 0.5})
    assert out["passed"] is None and out["value"] == pytest.approx(0.5)
    assert out["values"]["value_learned"] == pytest.approx(0.02)
    assert "not decided: 1 of 3 models missed the learning gate" in out["ours"]


def test_every_model_learned_and_passing_passes_and_one_learned_fail_fails():
    learned = {n: _stat(0.3, 0.01, i) for i, n in enumerate(LEADS)}
    ok = _judged({"target depth 3, softmax": 0.01, "target depth 3, relu": 0.02, "target depth 6, relu": 0.0}, learned)
    assert ok["passed"] is True and "value_learned" not in ok["values"]
    bad = _judged({"target depth 3, softmax": 0.01, "target depth 3, relu": 0.02, "target depth 6, relu": 0.2}, learned)
    assert bad["passed"] is False


def test_the_learned_models_fail_side_is_adjusted_for_their_count_not_for_every_model():
    """The fail side of the learned models' interval is Bonferroni over *their* numbers: with two learned numbers
    the adjusted end is the 1 − 0.1/2 interval's, narrower than over all three (the bug: the count of every model,
    which would hide a fail) and wider than a single model's own 90 % interval (the bug: no adjustment)."""
    from icdl.gpt_icl.core.intervals import summary

    out = _judged({"target depth 3, softmax": 0.1, "target depth 3, relu": 0.02, "target depth 6, relu": 0.01},
                  spread=0.02)
    own = summary(_stat(0.1, 0.02, 0))
    two = summary(_stat(0.1, 0.02, 0), 1 - 0.1 / 2)
    three = summary(_stat(0.1, 0.02, 0), 1 - 0.1 / 3)
    assert out["values"]["value_learned_lo"] == pytest.approx(two["lo"])
    assert three["lo"] < out["values"]["value_learned_lo"] < own["lo"]


def test_a_claim_with_no_learned_model_records_no_learned_number_and_stays_inconclusive():
    """On ICDL's task no model learned: no ``value_learned`` (a NaN there would read as a fail), inconclusive."""
    none = {n: _stat(0.01, 0.01, i) for i, n in enumerate(LEADS)}
    out = _judged({"target depth 3, softmax": 0.3, "target depth 3, relu": 0.3, "target depth 6, relu": 0.3}, none)
    assert out["passed"] is None and "value_learned" not in out["values"]
    assert "3 of 3 models missed" in out["ours"]


def test_the_registry_reads_a_learned_fail_and_withholds_everything_else():
    """criterion_verdict on recorded numbers (what the ledger re-judges): the learned-only interval decides a fail
    where the gate is unmet, a straddle or a pass there is inconclusive, and a NaN learned number is no fail."""
    base = {"value": 0.3, "value_lo": 0.2, "value_hi": 0.4, "learned": 0.01}
    v = claims.criterion_verdict
    assert v("gpt-n01f-obj1", {**base, "value_learned": 0.2, "value_learned_lo": 0.1,
                              "value_learned_hi": 0.3}) is False
    assert v("gpt-n01f-obj1", {**base, "value_learned": 0.06, "value_learned_lo": 0.04,
                              "value_learned_hi": 0.08}) is None
    assert v("gpt-n01f-obj1", {**base, "value_learned": 0.01, "value_learned_lo": 0.0,
                              "value_learned_hi": 0.02}) is None
    assert v("gpt-n01f-obj1", {**base, "value_learned": float("nan"), "value_learned_lo": float("nan"),
                              "value_learned_hi": float("nan")}) is None
    assert v("gpt-n01f-obj1", base) is None
    assert v("gpt-n01f-obj1", {**base, "learned": 0.06}) is False  # the gate met: the claim's own verdict


def test_a_model_short_of_the_gate_is_named_with_how_it_missed():
    """"near the plateau" where the lead is below the margin, "its seeds disagree" where the lead clears it but the
    seeds' term widens the interval below it (the bug: calling a seed-spread miss a plateau, or the reverse)."""
    from icdl.gpt_icl.core.intervals import MAX_SEEDS

    spread = np.concatenate([[0.12], [0.02, 0.12, 0.22], np.full(MAX_SEEDS - 3, np.nan),
                             0.12 + 0.001 * np.random.default_rng(0).standard_normal(2000)])
    g = learning.gate({"plateau": _stat(0.02, 0.005, 1), "spread": spread, "fine": _stat(0.3, 0.01, 2)})
    words = learning.missed(g, 0.05)
    assert len(words) == 2
    assert words[0].startswith("plateau leads by 0.020")
    assert words[0].endswith("near the plateau, its lead below the margin")
    assert words[1].startswith("spread leads by 0.120") and words[1].endswith("its seeds disagree")


def test_the_margin_is_the_registry_s():
    assert learning.margin("icdl-obj1-fitted") == claims.base.LEARNED[2] == 0.05
    with pytest.raises(KeyError, match="no learning gate"):
        learning.margin("mech-control-linear")


#: the claims of sec. 5 that are not about how well trained models learn: the task's content (no model), the
#: positive control of the mechanism pipeline (its criterion already needs the model nearer a linear fit than the
#: context mean, which a plateaued model is not), the planted models of the mechanism's power (no training), and
#: "some model beats least squares" (a model that beats least squares has left the plateau: the claim is itself a
#: statement that some model learned more than a linear rule, and a gate could only withhold that)
NOT_ABOUT_LEARNING = {"gpt-task-linear", "gpt-task-n01", "mech-control-linear", "gpt-n01f-some-beats-ls",
                      *(f"mech-power-{m}{s}" for m in ("pred", "sens", "cosine", "median") for s in ("", "-n01"))}


@pytest.mark.parametrize("chapter", ["gpt_icl", "gpt_n01", "gpt_depth", "gpt_scale", "gpt_mechanism"])
def test_every_trained_model_claim_of_sec_5_carries_the_gate(chapter):
    """A claim added to a chapter about trained models without the learning gate fails here."""
    for claim in claims.claims_for(chapter):
        if claim.id in NOT_ABOUT_LEARNING:
            continue
        gates = [c for c in claims.CRITERIA[claim.id] if c.key == learning.KEY]
        assert [(c.op, c.threshold) for c in gates] == [("refutable", 0.05)], claim.id


def test_a_computed_gate_counts_the_models_whose_lower_end_reaches_the_margin():
    """The count the prose gives of a committed run's gate (the bugs: counting leads instead of lower ends, a strict
    comparison that drops a model exactly at the margin, "all"/"none" said of the wrong counts)."""
    from icdl.gpt_icl.core.learning import gate_count

    g = {"models": {"a": {"lo": 0.06, "value": 0.2}, "b": {"lo": 0.04, "value": 0.3}, "c": {"lo": 0.05, "value": 0.1}}}
    assert gate_count(g, 0.05) == "2 of the 3 models"
    assert gate_count(g, 0.01) == "all 3 models" and gate_count(g, 0.5) == "none of the 3 models"
