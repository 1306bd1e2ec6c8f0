"""The learning gate (icdl.gpt_icl.core.learning): a model learned its task when its lead over the context mean
clears the registered margin on the whole of its interval; a claim about models that did not all learn is
inconclusive, never pass or fail."""

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
    assert unmet["passed"] is None and "did not all learn the task (depth 6, relu leads" in unmet["ours"]
    assert claims.criterion_verdict("icdl-obj1-fitted", {"value": 0.02, **unmet["values"]}) is None
    failing = {**entry, "value": 0.2, "values": {"value_lo": 0.15, "value_hi": 0.25}, "passed": False}
    assert learning.gated(failing, learning.gate({"m": _lead(0.3, 0.01)}))["passed"] is False  # a fail stays one
    assert learning.gated(failing, learning.gate({"m": _lead(0.01, 0.01)}))["passed"] is None


def test_the_margin_is_the_registry_s():
    assert learning.margin("icdl-obj1-fitted") == claims.base.LEARNED[2] == 0.05
    with pytest.raises(KeyError, match="no learning gate"):
        learning.margin("mech-control-linear")


#: the claims of sec. 5 that are not about how well trained models learn: the task's content (no model), the
#: positive control of the mechanism pipeline (its criterion already needs the model nearer a linear fit than the
#: context mean, which a plateaued model is not), and the planted models of the mechanism's power (no training)
NOT_ABOUT_LEARNING = {"gpt-task-linear", "gpt-task-n01", "mech-control-linear", "mech-power-gd", "mech-power-ridge",
                      "mech-power-gd-n01", "mech-power-ridge-n01"}


@pytest.mark.parametrize("chapter", ["gpt_icl", "gpt_n01", "gpt_depth", "gpt_scale", "gpt_mechanism"])
def test_every_trained_model_claim_of_sec_5_carries_the_gate(chapter):
    """A claim added to a chapter about trained models without the learning gate fails here."""
    for claim in claims.claims_for(chapter):
        if claim.id in NOT_ABOUT_LEARNING:
            continue
        gates = [c for c in claims.CRITERIA[claim.id] if c.key == learning.KEY]
        assert [(c.op, c.threshold) for c in gates] == [("gate", 0.05)], claim.id
