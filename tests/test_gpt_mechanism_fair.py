"""GD given a fair chance (``icdl.gpt_icl.mechanism.fair``): the grid's edges, the paired measures and the
judge of the hypotheses asked on profile ``fair``, on sums whose answer is known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from icdl.gpt_icl.core import baselines as bl
from icdl.gpt_icl.core.tasks import PRETRAINING
from icdl.gpt_icl.mechanism import fair as mf
from icdl.gpt_icl.mechanism.measures import GD_NETWORK, RIDGE
from icdl.repro.claims import criterion_verdict

CFG = {"etas": (0.05, 0.1, 0.2), "init_scales": (0.25, 0.5, 1.0), "lambdas": (0.1, 1.0, 10.0), "gd_steps": 64}
MODELS = ((3, "softmax"), (3, "relu"))
STEPS = (0, 1, 2, 4, 8, 16, 32, 64)


def _blocks(pred, sens, cosine, spread=0.0, blocks=32, position=40):
    """Sums per block for two models: the nearest simple rule (ridge) at prediction difference 1 and
    sensitivity difference 0.5 (least squares 2 and 0.6, the local rules 3 and 4 with no slope), GD at ``pred``
    and ``sens`` times ridge's and cosine ``cosine``; ``pred`` etc. may be a dict per model. ``spread`` makes
    GD's blocks uneven (an interval around the same totals)."""
    rng = np.random.default_rng(0)
    rows = []
    for key in MODELS:
        tilt = 1 + spread * rng.standard_normal(blocks)
        tilt /= tilt.mean()
        p, s, c = (v[key] if isinstance(v, dict) else v for v in (pred, sens, cosine))
        for name, pd_, sd, cs in ((bl.LEAST_SQUARES, 2.0, 0.6, 0.7), (RIDGE, 1.0, 0.5, 0.8),
                                  (bl.NEAREST_NEIGHBOURS, 3.0, 1.0, np.nan), (bl.CONTEXT_MEAN, 4.0, 1.0, np.nan),
                                  (GD_NETWORK, p, 0.5 * s, c)):
            for b in range(blocks):
                t = tilt[b] if name == GD_NETWORK else 1.0
                rows.append({"depth": key[0], "attention": key[1], "mixture": PRETRAINING, "candidate": name,
                             "position": position, "block": b, "n": 16, "pred": pd_ * t / blocks,
                             "sens": sd * t / blocks, "own": 1 / blocks, "cos": cs * 16 * t})
        rows.append({**rows[-1], "position": position - 10, "pred": 100.0})  # not the training length: unread
    return pd.DataFrame(rows)


def _result(pred=0.5, sens=0.5, cosine=0.9, spread=0.0, eta=0.1, scale=0.5, steps=32, lam=1.0, change=0.0):
    """A fair-profile result: the chosen member (``eta``, ``steps``, ``scale``, ridge's ``lam``) and a scan whose
    prediction difference changes by ``change`` over its last doubling of L."""
    chosen = pd.DataFrame([{"depth": d, "attention": a, "gd_eta": eta, "gd_init_scale": scale, "gd_steps": steps,
                            "gd_pred_diff": 0.1, "ridge_lambda": lam, "ridge_pred_diff": 0.1} for d, a in MODELS])
    scan = pd.DataFrame([{"depth": d, "attention": a, "eta": e, "init_scale": s, "steps": L,
                          "pred_diff": 0.1 * (1 + change) if L == 64 else 0.1}
                         for d, a in MODELS for e in CFG["etas"] for s in CFG["init_scales"] for L in STEPS])
    alignment = pd.DataFrame([{"depth": d, "attention": a, "mixture": PRETRAINING, "position": 40, "candidate": c,
                               "r2_candidate": r, "pred_diff": 0.1}
                              for d, a in MODELS for c, r in ((GD_NETWORK, 0.9), ("model", 0.95))])
    fit = pd.DataFrame([{"depth": 3, "eta": e, "init_scale": s, "steps": L, "fit_loss": 1 / (1 + L), "r2": 0.8}
                        for e in CFG["etas"] for s in CFG["init_scales"] for L in STEPS])
    return {"blocks": _blocks(pred, sens, cosine, spread), "chosen": chosen, "gd_scan": scan, "alignment": alignment,
            "gd_fit": fit}


def _entries(result, control=True):
    out = {e["claim"]: e for e in mf.judge_fair(result, CFG, 40, control)}
    for e in out.values():
        assert e["passed"] is None or e["passed"] == criterion_verdict(e["claim"], {"value": e["value"], **e["values"]})
    return {c: criterion_verdict(c, {"value": e["value"], **e["values"]}) for c, e in out.items()}, out


def test_the_fair_judge_both_sides_of_each_threshold():
    """Each hypothesis passes just inside its line and fails just outside it (ratios 0.99 / 1.01 of GD over the
    nearest simple rule; cosine 0.801 / 0.799), on the worst model; the bugs: a ratio the wrong way up, the mean
    over models instead of the worst, the sensitivity ratio against the local rules' 1 instead of ridge's 0.5,
    the cosine summed instead of averaged."""
    verdicts, e = _entries(_result(pred=0.99, sens=0.99, cosine=0.801))
    assert verdicts == {"mech-fair-nearest-gd": True, "mech-fair-sens-gd": True, "mech-fair-cosine-gd": True}
    assert e["mech-fair-nearest-gd"]["value"] == pytest.approx(0.99)
    assert e["mech-fair-sens-gd"]["value"] == pytest.approx(0.99)
    assert e["mech-fair-cosine-gd"]["value"] == pytest.approx(0.801)
    verdicts, _ = _entries(_result(pred=1.01, sens=1.01, cosine=0.799))
    assert set(verdicts.values()) == {False}
    # the worst model decides: one at 1.2, the other at 0.5
    verdicts, e = _entries(_result(pred={MODELS[0]: 0.5, MODELS[1]: 1.2}, sens=0.5,
                                   cosine={MODELS[0]: 0.95, MODELS[1]: 0.6}))
    assert e["mech-fair-nearest-gd"]["value"] == pytest.approx(1.2) and verdicts["mech-fair-nearest-gd"] is False
    assert e["mech-fair-cosine-gd"]["value"] == pytest.approx(0.6) and verdicts["mech-fair-sens-gd"] is True


def test_a_margin_inside_the_prompt_noise_is_inconclusive():
    verdicts, e = _entries(_result(pred=0.99, sens=0.5, cosine=0.95, spread=0.5))
    v = e["mech-fair-nearest-gd"]["values"]
    assert v["value_lo"] < 1 < v["value_hi"] and verdicts["mech-fair-nearest-gd"] is None


@pytest.mark.parametrize("setting, fair", [
    ({}, True), ({"eta": 0.05}, False), ({"eta": 0.2}, False), ({"scale": 0.25}, False), ({"scale": 1.0}, False),
    ({"lam": 10.0}, False), ({"lam": 0.1}, False),
    ({"steps": 64, "change": 0.10}, False),   # the largest L, the scan still falling: GD held back
    ({"steps": 64, "change": 0.01}, True),    # the largest L, the scan flat there: the edge does not matter
    ({"steps": 32, "change": 0.50}, True)])    # below the largest L: the scan beyond it is not asked
def test_a_chosen_member_at_an_edge_that_matters_leaves_every_verdict_open(setting, fair):
    """GD failing at the edge of its grid is not GD failing (the bug this profile fixes: η = 0.1, the smallest,
    and L = 1024, the largest, chosen for every model); a gate not met leaves even a clear miss inconclusive."""
    res = _result(pred=2.0, sens=2.0, cosine=0.2, **setting)
    assert bool(mf.grid_edges(res["chosen"], res["gd_scan"], CFG)["fair"].all()) is fair
    verdicts, e = _entries(res)
    assert e["mech-fair-nearest-gd"]["values"]["fair"] == float(fair)
    assert set(verdicts.values()) == ({False} if fair else {None})


def test_without_a_passed_control_nothing_is_decided():
    verdicts, e = _entries(_result(pred=2.0, sens=2.0, cosine=0.2), control=False)
    assert set(verdicts.values()) == {None} and "control not passed" in e["mech-fair-nearest-gd"]["ours"]
    verdicts, _ = _entries(_result(pred=0.5, sens=0.5, cosine=0.95), control=False)
    assert set(verdicts.values()) == {None}  # a pass needs the control too


def test_waiting_for_its_run_each_claim_names_the_command():
    for e in mf.judge_fair(None, CFG, 40, True):
        assert "--profile fair" in e["ours"] and e["value"] is None and e["passed"] is None


def test_the_fit_table_reads_the_chosen_member_and_the_most_accurate_one():
    fit = pd.DataFrame([{"depth": 3, "eta": e, "init_scale": s, "steps": L, "fit_loss": 1.0 / (1 + L),
                         "r2": 0.5 + (0.3 if (e, s, L) == (0.2, 1.0, 64) else 0.0)}
                        for e in CFG["etas"] for s in CFG["init_scales"] for L in STEPS])
    t = mf.fit_table(fit, _result()["chosen"], CFG).iloc[0]
    assert t["fit loss at L"] == pytest.approx(1 / 33) and t["fit loss at L/2"] == pytest.approx(1 / 17)
    assert t["GD's R², scan prompts"] == pytest.approx(0.5) and t["grid's best R², scan prompts"] == pytest.approx(0.8)
    assert t["best member"] == "η = 0.2, L = 64, scale 1"


def test_the_reader_s_table_names_the_edges_and_the_r2s():
    t = mf.fair_table(_result(eta=0.05, lam=10.0), CFG, 40)
    assert list(t["at an edge"]) == ["η, ridge's λ"] * 2
    assert t["prediction ratio"].iloc[0].startswith("0.500 (")
    assert t["GD's R², test prompts"].iloc[0] == pytest.approx(0.9)
    assert list(mf.fair_table(_result(), CFG, 40)["at an edge"]) == ["none"] * 2


def test_the_largest_block_is_found_and_left_out_of_every_candidate_paired():
    """One block of prompts where GD's network blows up: its share of GD's squared difference, and the ratio
    without it, the block left out of the simple rules' sums too (the bug: leaving it out of GD's alone, which
    would flatter GD; or taking the largest block of the rule instead of GD's)."""
    b = _blocks(1.0, 1.0, 0.9)
    sel = (b["candidate"] == GD_NETWORK) & (b["block"] == 7) & (b["position"] == 40)
    b.loc[sel, "pred"] += 31 / 32  # GD's sum: 1 + 31/32 spread over 32 blocks, then 31/32 more in block 7
    sel_r = (b["candidate"] == RIDGE) & (b["block"] == 7) & (b["position"] == 40)
    b.loc[sel_r, "pred"] = 0.5  # ridge's sum with block 7: 31/32 + 0.5; without it 31/32
    t = mf.largest_block(b, 40).iloc[0]
    assert t["share"] == pytest.approx((1 / 32 + 31 / 32) / (1 + 31 / 32))
    assert t["ratio"] == pytest.approx((1 + 31 / 32) / (31 / 32 + 0.5))
    assert t["ratio_without"] == pytest.approx(1.0)  # 31/32 over 31/32: the block gone from both


def test_a_claim_left_open_by_a_gate_says_which_gate():
    """An inconclusive verdict from an unmet gate is not an interval straddling its line: the record's note
    names the gate (the bug: the report calling it "the interval straddles the criterion")."""
    from icdl.repro.ledger import Ledger

    (e, *_) = mf.judge_fair(_result(pred=2.0, sens=2.0, cosine=0.2, eta=0.05), CFG, 40, True)
    r = Ledger("gpt_mechanism", "quick").record(e["claim"], ours=e["ours"], criterion=e["criterion"],
                                                  value=e["value"], values=e["values"], passed=e["passed"])
    assert r.status == "inconclusive" and "every chosen GD and ridge member lies inside its grid" in r.note
    assert "positive control" not in r.note  # the control's gate was met: not named


def test_each_model_is_placed_on_its_side_of_the_line():
    """Per model: nearer / farther on the whole interval, straddles otherwise; a model at a grid edge is not
    interior (the bug: the worst model's side reported for every model)."""
    t = mf.per_model_verdicts(_result(pred={MODELS[0]: 0.5, MODELS[1]: 1.5}, sens=0.5, cosine=0.9, eta=0.05),
                              CFG, 40).set_index(["depth", "attention", "measure"])
    assert t.loc[(3, "softmax", "pred"), "side"] == "nearer" and t.loc[(3, "relu", "pred"), "side"] == "farther"
    assert t.loc[(3, "relu", "cosine"), "side"] == "nearer" and not t["interior"].any()
    wide = mf.per_model_verdicts(_result(pred=1.0, spread=0.5), CFG, 40)
    assert set(wide[wide["measure"] == "pred"]["side"]) == {"straddles"}


def test_the_drift_compares_only_models_whose_member_two_runs_share():
    first, fair = _result(), _result()
    for res, diff in ((first, 0.04), (fair, 0.07)):
        res["alignment"] = res["alignment"].assign(pred_diff=diff)
    fair["chosen"].loc[1, "gd_steps"] = 64  # the second model chose another L in the second run
    d = mf.same_member_drift(first, fair, 40)
    assert list(zip(d["depth"], d["attention"])) == [MODELS[0]]
    assert d["first"].iloc[0] == pytest.approx(0.04) and d["fair"].iloc[0] == pytest.approx(0.07)


def test_the_prose_numbers_of_the_fair_run():
    """The glue the chapter's prose quotes: the gated models counted, the time ηL shared by every member, a run
    repeated with the same members drifting nowhere; dashes while the run waits."""
    first, fair = _result(), _result(pred={MODELS[0]: 0.5, MODELS[1]: 1.5}, sens=0.5, cosine=0.9)
    fair["alignment"].loc[fair["alignment"]["attention"] == "relu", "pred_diff"] = 0.2  # one model drifts
    g = mf.fair_glue(fair, CFG, 40, mf.judge_fair(fair, CFG, 40, True), first=first)
    assert g["fair_time"] == "3" and g["fair_moved"] == "0 of 2" and g["fair_drift_same"] == "1 of 2"
    assert g["fair_drift"] == "depth 3 relu: 0.100 then 0.200"
    assert g["fair_inner"] == "2" and g["fair_inner_pred_far"] == "1" and g["fair_sens_point_nearer"] == "2 of 2"
    assert set(mf.fair_glue(None, CFG, 40, []).values()) - {"—"} <= {"0.05, 0.1, 0.2", "64", "0.25, 0.5, 1",
                                                                    "0.1 to 10"}
