"""The committed ledger records of the experiments, derived again from the committed result files by the
studies' own judges: a record is what its judge says of its result, every shown field included.

The seal of a ledger file (``icdl.repro.ledger.seal``) catches an edit made by hand; this catches a record that
no longer follows from its data -- a result file replaced after its ledger was written, a judge changed
without rerunning its chapter, a record written by an older judge. The chapters call the same loaders and
judges (``notebooks/<chapter>.py``, the ledger cell), so this is their ledger cell run on the committed files.
Numbers are compared to a relative 1e-9 (they are computed from the stored floats by pandas, whose reductions
may round differently on another CPU); text and status exactly.
"""

import math
from pathlib import Path

import pytest

from conftest import scratch_clone
from icdl.repro.ledger import Ledger, load_records
from icdl.repro.results import load_result

ROOT = Path(__file__).resolve().parents[1]


def _result(chapter: str, stem: str, profile: str = "reference") -> dict:
    return load_result(ROOT / "results" / chapter / f"{stem}.{profile}.json")


def _gpt_icl(ledger):
    from icdl.gpt_icl.core import main_study
    from icdl.gpt_icl.objectives import fitted

    data = main_study.load(_result("gpt_icl", "icl", fitted.PROFILE), _result("gpt_icl", "shift", fitted.PROFILE))
    train = main_study.PROFILES.resolve(fitted.PROFILE)["train_examples"]
    ledger.record_all(fitted.judge(data, train), judged_on=fitted.PROFILE)


def _gpt_depth(ledger):
    from icdl.gpt_icl import depth
    from icdl.gpt_icl.depth import judge as depth_judge

    ledger.record_all(depth_judge.judge(depth.study.load(_result("gpt_depth", "depth"))), judged_on="reference")


def _gpt_scale(ledger):
    from icdl.gpt_icl import scale

    data = scale.study.from_result(_result("gpt_scale", "scale"), profile="reference")
    wide = scale.study.from_result(_result("gpt_scale", "scale", scale.judge.WIDER), profile=scale.judge.WIDER)
    rcfg, wcfg = scale.models.PROFILES.resolve("reference"), scale.models.PROFILES.resolve(scale.judge.WIDER)
    ledger.record_all(scale.judge.judge(data["fits"], data["trend"], data["points"], data["shift"], data["boot"],
                                  data["fit_draws"]), judged_on="reference")
    widths = scale.judge.width_comparison(data, wide, rcfg, wcfg)
    ledger.record_all(scale.judge.judge_wider(widths, wide), judged_on=scale.judge.WIDER)
    ledger.record_all(scale.judge.judge_tuned_width(widths, data, wide, wcfg), judged_on=scale.judge.WIDER)


def _gpt_mechanism(ledger):
    from icdl.gpt_icl import mechanism
    from icdl.gpt_icl.core import main_study

    cfg = mechanism.study.PROFILES.resolve("seeds")
    control = mechanism.study.load(_result("gpt_mechanism", "mechanism", "control"))["blocks"]
    entries = mechanism.judge.judge_control(control, cfg["train_examples"])
    ledger.record_all(entries, judged_on="control")
    seeds = mechanism.study.load(_result("gpt_mechanism", "mechanism", "seeds"))
    ledger.record_all(mechanism.seeds.judge_seeds(seeds, cfg, cfg["train_examples"], entries[0]["passed"] is True,
                                                  main_study.learning_gate(data=_result("gpt_icl", "icl")["data"])),
                      judged_on="seeds")


def _lsa_training(ledger):
    from icdl.lsa.study import judge, judged_on

    ref = _result("lsa_training", "training")["data"]
    ledger.record_all(judge(ref), judged_on=judged_on(ref))


#: chapter -> its ledger cell on the committed reference results
DERIVATIONS = {"gpt_icl": _gpt_icl, "gpt_depth": _gpt_depth, "gpt_scale": _gpt_scale,
               "gpt_mechanism": _gpt_mechanism, "lsa_training": _lsa_training}


def _same_number(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == pytest.approx(b, rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("chapter", sorted(DERIVATIONS))
def test_committed_ledger_is_what_its_judges_say_of_the_committed_results(chapter, tmp_path, monkeypatch):
    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))  # nothing derived here is written where the book reads
    ledger = Ledger(chapter, "quick")
    DERIVATIONS[chapter](ledger)
    derived = {r.claim: r for r in ledger.records}
    stored = {r.claim: r for r, prov in load_records(ROOT / "results" / "ledger")
              if prov["profile"] == "quick" and r.claim in derived}
    assert sorted(stored) == sorted(derived), f"{chapter}: the quick ledger's claims differ from its judges'"
    for claim, want in derived.items():
        got = stored[claim]
        for field in ("ours", "criterion", "status", "profile", "note"):
            assert getattr(got, field) == getattr(want, field), (
                f"{chapter}/{claim}: stored {field} {getattr(got, field)!r} is not what the judge gives on the "
                f"committed results ({getattr(want, field)!r}); rerun python -m icdl.repro.execute {chapter}")
        assert _same_number(got.value, want.value), (claim, got.value, want.value)
        assert sorted(got.values) == sorted(want.values), claim
        assert all(_same_number(got.values[k], want.values[k]) for k in want.values), (claim, got.values)


def test_the_rederivation_sees_a_result_that_no_longer_gives_its_record(tmp_path, monkeypatch):
    """The check is not vacuous: a judge given a result whose worst model moved records another value and
    text, and the comparison above would then fail on it."""
    from icdl.gpt_icl import depth
    from icdl.gpt_icl.depth import judge as depth_judge

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    data = depth.study.load(_result("gpt_depth", "depth"))
    honest = Ledger("gpt_depth", "quick").record_all(depth_judge.judge(data), judged_on="reference")[0]
    deepest = data["table"]["n_layer"].max()
    moved = data["table"].copy()
    moved.loc[moved["n_layer"] == deepest, "r2"] += 0.05
    # a result with seeds is judged on its sums per block: the deepest models' squared errors shrink instead
    blocks = [b | {"sse": [0.8 * v for v in b["sse"]]} if b["n_layer"] == deepest else b for b in data["blocks"]]
    edited = Ledger("gpt_depth", "quick").record_all(depth_judge.judge({**data, "table": moved, "blocks": blocks}),
                                                     judged_on="reference")[0]
    assert not _same_number(edited.value, honest.value) and edited.ours != honest.ours
