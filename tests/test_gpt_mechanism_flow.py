"""GD tuned in gradient-flow time (``icdl.gpt_icl.mechanism.flow``): the grid read in flow time, the median
block, and the judge of the hypotheses asked on profile ``flow``, on sums whose answer is known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from icdl.gpt_icl.core import baselines as bl
from icdl.gpt_icl.mechanism import flow as mf
from icdl.gpt_icl.mechanism.measures import GD_NETWORK, RIDGE
from icdl.repro.claims import criterion_verdict, unmet_gates
from test_gpt_mechanism_fair import MODELS, _blocks, _result

CFG = {"etas": (0.025, 0.05, 0.1), "init_scales": (0.25, 0.5, 1.0), "lambdas": (0.1, 1.0, 10.0), "gd_steps": 64}
STEPS = (0, 1, 2, 4, 8, 16, 32, 64)


def _flow_result(pred=0.5, sens=0.5, cosine=0.9, spread=0.0, eta=0.025, steps=32, scale=0.5, lam=1.0,
                 neighbour=0.0):
    """A flow-profile result whose scan depends on the flow time T = ηL alone (smallest at T = 0.8), except the
    η next to the chosen one, whose scan is ``neighbour`` (relative) higher."""
    res = _result(pred, sens, cosine, spread, eta=eta, scale=scale, steps=steps, lam=lam)
    etas = sorted(CFG["etas"])
    nb = etas[1] if eta == etas[0] else etas[-2] if eta == etas[-1] else None

    def scan(e, L):
        base = 0.1 * (1 + (np.log2(e * L / 0.8)) ** 2) if L else 1.0
        return base * (1 + neighbour) if e == nb else base

    res["gd_scan"] = pd.DataFrame([{"depth": d, "attention": a, "eta": e, "init_scale": s, "steps": L,
                                    "pred_diff": scan(e, L)}
                                   for d, a in MODELS for e in CFG["etas"] for s in CFG["init_scales"] for L in STEPS])
    res["chosen"]["gd_pred_diff"] = scan(eta, steps) if eta != nb else 0.1
    return res


def _entries(result, control=True):
    out = {e["claim"]: e for e in mf.judge_flow(result, CFG, 40, control)}
    for e in out.values():
        assert e["passed"] == criterion_verdict(e["claim"], {"value": e["value"], **e["values"]})
    return {c: e["passed"] for c, e in out.items()}, out


def test_the_flow_judge_both_sides_of_each_threshold():
    """Each hypothesis passes just inside its line and fails just outside it, on the worst model (the bugs: a
    ratio the wrong way up, the mean over the models, a median over the models instead of over the blocks)."""
    verdicts, e = _entries(_flow_result(pred=0.99, sens=0.99, cosine=0.801))
    assert set(verdicts.values()) == {True}
    assert e["mech-flow-median-gd"]["value"] == pytest.approx(0.99)
    assert e["mech-flow-cosine-gd"]["value"] == pytest.approx(0.801)
    verdicts, _ = _entries(_flow_result(pred=1.01, sens=1.01, cosine=0.799))
    assert set(verdicts.values()) == {False}
    verdicts, e = _entries(_flow_result(pred={MODELS[0]: 0.5, MODELS[1]: 1.2}, sens=0.5, cosine=0.95))
    assert e["mech-flow-median-gd"]["value"] == pytest.approx(1.2) and verdicts["mech-flow-median-gd"] is False
    assert verdicts["mech-flow-sens-gd"] is True


def test_the_median_block_is_not_one_blocks():
    """GD at 0.8 of ridge's difference in 31 blocks and 40 times it in one: the sum says GD is farther (the
    fair run's depth-6 finding), the median block says nearer. The bug it catches: the mean over blocks, or the
    ratio of sums, called a median. And the rule GD is held against is the one nearest over all prompts (ridge,
    sum 1), not each block's own nearest."""
    blocks = _blocks(0.8, 0.5, 0.9)
    gd = blocks["candidate"] == GD_NETWORK
    first = gd & (blocks["block"] == 0) & (blocks["position"] == 40)
    blocks.loc[first, "pred"] *= 50
    # least squares nearer than ridge in 20 blocks (0.02 against 0.03125), farther over all prompts (sum 1.84)
    ls = (blocks["candidate"] == bl.LEAST_SQUARES) & (blocks["position"] == 40)
    blocks.loc[ls, "pred"] = np.where(blocks.loc[ls, "block"] < 20, 0.02, 0.12)
    med = mf.median_ratio(blocks, 40)
    for key in MODELS:
        assert med["models"][key][0] == pytest.approx(0.8)
    at = blocks[(blocks["position"] == 40) & (blocks["depth"] == 3) & (blocks["attention"] == "softmax")]
    total = at[at["candidate"] == GD_NETWORK]["pred"].sum() / at[at["candidate"] == RIDGE]["pred"].sum()
    assert total > 1.5  # the sum is the one block's
    lo, hi = np.quantile(med["median"][1:], [0.05, 0.95])
    assert hi < 1


@pytest.mark.parametrize("setting, flow", [
    ({}, True),                                          # η at the grid's edge, its neighbour flat at the same T
    ({"neighbour": 0.10}, False),                        # ... the neighbour 10 % off: the edge matters
    ({"neighbour": 0.04}, True),
    ({"eta": 0.05, "steps": 16}, True),                  # η interior
    ({"eta": 0.1, "steps": 64}, False),                  # T = 6.4, the grid's largest at that scale
    ({"eta": 0.025, "steps": 1}, False),                 # T = 0.025, its smallest
    ({"scale": 0.25}, False), ({"scale": 1.0}, False), ({"lam": 10.0}, False),
    ({"eta": 0.1, "steps": 8}, True)])                   # the largest η, its neighbour (0.05 at L = 16) flat
def test_the_gate_reads_the_grid_in_flow_time(setting, flow):
    """A member at the smallest η is not GD held back where the neighbouring η at the same flow time gives the
    same scan (the fair gate's reading would call it an edge); a flow time at the grid's end, or a start scale
    or λ at an edge, is. A gate not met leaves even a clear miss inconclusive."""
    res = _flow_result(pred=2.0, sens=2.0, cosine=0.2, **setting)
    edges = mf.flow_edges(res["chosen"], res["gd_scan"], CFG)
    assert bool(edges["flow"].all()) is flow
    verdicts, e = _entries(res)
    assert set(verdicts.values()) == ({False} if flow else {None})
    if not flow:
        assert unmet_gates("mech-flow-nearest-gd", {"value": 2.0, **e["mech-flow-nearest-gd"]["values"]})


def test_without_a_passed_control_or_a_run_nothing_is_decided():
    verdicts, e = _entries(_flow_result(pred=0.5, sens=0.5, cosine=0.95), control=False)
    assert set(verdicts.values()) == {None} and "control not passed" in e["mech-flow-nearest-gd"]["ours"]
    for entry in mf.judge_flow(None, CFG, 40, True):
        assert "--profile flow" in entry["ours"] and entry["value"] is None and entry["passed"] is None


def test_the_scan_along_flow_time_is_one_column_per_step_size():
    res = _flow_result()
    t = mf.flow_along_time(res, *MODELS[0])
    assert list(t.columns) == list(CFG["etas"]) and t.loc[0.8].round(6).tolist() == [0.1, 0.1, 0.1]
    table = mf.flow_table(res, CFG, 40)
    assert set(table["ηL"]) == {"0.8"} and set(table["at an edge"]) == {"none"}


def test_the_fair_runs_edge_model_is_flat_along_its_flow_time():
    """On the committed fair run, the model left at the grid's edge (depth-4 ReLU, η = 0.025, L = 4 096) has the
    same scan at ηL = 102.4 for every step size of the grid, to 1 % (the bug it would catch: a flow time computed
    as η / L or L alone, which would put members of different flow times in one row), and its flow-time gate
    is met while the fair gate is not."""
    from icdl.gpt_icl import mechanism
    from icdl.repro.results import load_result, project_root

    fair = mechanism.study.load(load_result(project_root() / "results" / "gpt_mechanism" / "mechanism.fair.json"))
    cfg = mechanism.study.PROFILES.resolve("fair")
    row = mf.flow_along_time(fair, 4, "relu").loc[102.4].dropna()
    assert len(row) == 4 and row.max() / row.min() < 1.01
    assert not mechanism.fair.grid_edges(fair["chosen"], fair["gd_scan"], cfg)["fair"].all()
    assert mf.flow_edges(fair["chosen"], fair["gd_scan"], cfg)["flow"].all()
    shown = mf.along_time_shown(fair, 4, "relu")
    assert list(shown.columns) == ["ηL", "η = 0.025", "η = 0.05", "η = 0.1", "η = 0.2"]
    last = shown.iloc[-1]
    assert last["ηL"] == "819.2" and last["η = 0.025"] == "—" and last["η = 0.2"] != "—"
