"""The judge of the design trained until flat (icdl.gpt_icl.objectives.flat): each model asked its own questions on its
own numbers, behind its own learning gate; objective 2 per target depth; "some model beats least squares"; the
every-model claims under this design's ids. On constructed predictions whose answer is known: on labels of variance
1, a predictor with error variance s² has MSE about s², so its error relative to least squares (error variance
s²_LS) is about 1 − s²/s²_LS."""

import pandas as pd
import pytest
import torch

from icdl.gpt_icl.core import baselines as bl
from icdl.gpt_icl.core import evaluation
from icdl.gpt_icl.core.evaluation import PAIRED
from icdl.gpt_icl.core.tasks import MIXTURES, PRETRAINING
from icdl.gpt_icl.objectives import flat
from icdl.repro import claims
from icdl.repro.claims.gpt_n01 import EVERY, N01_MODELS, QUESTIONS, SOME, model_claim, obj2_claim

L, T, B = 6, 8, 4096          # training length, test length, prompts
MLP_POS = [3, 6]              # the MLP's positions up to the training length
SHIFTED = [f"{PAIRED} μ=-0.5", f"{PAIRED} μ=0.5"]
GOOD = {(d, a): 0.1 for d, a in N01_MODELS}  # every model well past least squares (0.3) and near the MLP (0.08)


def _noisy(ys, variance, seed: int, positions=None, extra: dict | None = None):
    """``ys`` plus noise of ``variance``, plus ``extra[p]`` at 1-based positions ``p`` (a model worse there)."""
    scale = torch.full((ys.shape[1],), float(variance), dtype=torch.float64)
    for p, v in (extra or {}).items():
        scale[p - 1] += v
    g = torch.Generator().manual_seed(seed)
    return ys + scale.sqrt() * torch.randn(ys.shape, generator=g, dtype=torch.float64)


def _run(var: dict, *, cm: float = 0.9, ls: float = 0.3, mlp: float = 0.08, late: dict | None = None,
         early: dict | None = None, shifted: dict | None = None, seeds: int = 3) -> tuple[dict, dict]:
    """``(icl, shift)`` sums of a run of the six models: model ``(depth, attention)`` with error variance
    ``var[...]`` everywhere, plus ``late[...]`` past the training length (its R² falls there), ``early[...]`` at the
    MLP's first position only (a judge that reads the last position alone misses it), ``shifted[...]`` on the
    shifted targets; least squares ``ls``, the MLP ``mlp``, the context mean ``cm`` (the learning gate's
    plateau)."""
    late, early, shifted = late or {}, early or {}, shifted or {}
    icl, shift = {"blocks": [], "labels": []}, {"blocks": [], "labels": []}
    for k, depth in enumerate(sorted({d for d, _ in N01_MODELS})):
        def ys(seed):
            return torch.randn(B, T, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
        sets = {PAIRED: ({"positions": MLP_POS}, None, ys(10 + k)),
                PRETRAINING: ({"positions": list(range(L, T + 1))}, None, ys(20 + k))}
        sets |= {m: ({"positions": [L]}, None, ys(40 + k + 5 * j)) for j, m in enumerate(MIXTURES) if m != PRETRAINING}
        moved = {name: ({"positions": MLP_POS}, None, ys(30 + k + 5 * j)) for j, name in enumerate(SHIFTED)}
        moved |= {f"μ={mu:g}": ({"positions": [L]}, None, ys(70 + k + 5 * j)) for j, mu in enumerate((0, -0.5, 0.5))}
        for out, prompts in ((icl, sets), (shift, moved)):
            out["labels"] += evaluation.label_rows(depth, prompts)
            out["blocks"] += evaluation.block_rows(lambda xs, y: _noisy(y, ls, 1), prompts, depth=depth,
                                                   model=bl.LEAST_SQUARES, seed=-1)
            out["blocks"] += evaluation.block_rows(lambda xs, y: _noisy(y, mlp, 2), prompts, depth=depth,
                                                   model=bl.mlp_method(depth), seed=-1)
        icl["blocks"] += evaluation.block_rows(lambda xs, y: _noisy(y, cm, 3), sets, depth=depth,
                                               model=bl.CONTEXT_MEAN, seed=-1)
        for att in ("softmax", "relu"):
            m = (depth, att)
            for s in range(seeds):
                v = var[m][s] if isinstance(var[m], tuple) else var[m]
                seed = 100 * s + 10 * k + (7 if att == "relu" else 0)
                extra = {p: late.get(m, 0.0) for p in range(L + 1, T + 1)} | {MLP_POS[0]: early.get(m, 0.0)}
                icl["blocks"] += evaluation.block_rows(
                    lambda xs, y, v=v, seed=seed, extra=extra: _noisy(y, v, seed, extra=extra), sets, depth=depth,
                    model=att, seed=s)
                moved_v = v + shifted.get(m, 0.0)
                shift["blocks"] += evaluation.block_rows(
                    lambda xs, y, v=moved_v, seed=seed: _noisy(y, v, seed + 1), moved, depth=depth, model=att, seed=s)
    return icl, shift


def _judged(var, **kw) -> dict:
    icl, shift = _run(var, **kw)
    return {e["claim"]: e for e in flat.judge_models(icl, shift, L, T, 0.05)}


def _verdict(entry: dict):
    return claims.criterion_verdict(entry["claim"], {"value": entry["value"], **entry["values"]})


def test_each_model_is_judged_on_its_own_numbers_behind_its_own_gate():
    """A learned model worse than least squares fails its own claim; a model on the plateau (no lead over the
    context mean) is withheld, naming the gate; the other models' verdicts are theirs alone -- the same whatever those
    two do. A judge that pooled the models (an every-model extreme) would fail the good ones; one that read the gate
    over every model would withhold them all."""
    var = GOOD | {(4, "relu"): 0.5, (6, "relu"): 0.9}
    entries = _judged(var)
    assert _verdict(entries[model_claim("beats-ls", 4, "relu")]) is False        # learned (lead 0.4), worse than LS
    plateau = entries[model_claim("beats-ls", 6, "relu")]
    assert _verdict(plateau) is None and "missed the learning gate" in plateau["ours"]
    assert plateau["value"] < 0                                                   # its number is recorded all the same
    alone = _judged(GOOD)
    for d, a in N01_MODELS:
        if (d, a) in ((4, "relu"), (6, "relu")):
            continue
        for q in ("beats-ls", "share", "obj1"):
            e, e0 = entries[model_claim(q, d, a)], alone[model_claim(q, d, a)]
            assert _verdict(e) is True, (q, d, a)
            assert e["value"] == pytest.approx(e0["value"])                       # its numbers, not its neighbours'
    assert len(entries) == len(N01_MODELS) * len(QUESTIONS) + 3


def test_the_numbers_have_the_right_sign_and_size():
    """Error variance 0.1 against least squares' 0.3 and the MLP's 0.08: relative error 1 − 0.1/0.3 ≈ 0.67, share of
    the MLP's gain (0.3 − 0.1)/(0.3 − 0.08) ≈ 0.91, shortfall below the MLP ≈ 0.02 (R² 0.92 against 0.90). A sign
    error, a swapped ratio or a gain measured from the MLP instead of least squares lands far from these."""
    e = _judged(GOOD)
    assert e[model_claim("beats-ls", 3, "softmax")]["value"] == pytest.approx(2 / 3, abs=0.03)
    assert e[model_claim("share", 3, "softmax")]["value"] == pytest.approx(0.2 / 0.22, abs=0.05)
    assert e[model_claim("obj1", 3, "softmax")]["value"] == pytest.approx(0.02, abs=0.01)
    half = GOOD | {(3, "softmax"): 0.19}           # share (0.3 − 0.19)/0.22 = 0.5: on the line, either side decided
    assert _verdict(_judged(half)[model_claim("share", 3, "softmax")]) is None
    assert _verdict(_judged(GOOD | {(3, "softmax"): 0.25})[model_claim("share", 3, "softmax")]) is False


def test_objective_1_reads_every_position_up_to_the_training_length():
    """A model as good as the MLP at the training length but 0.2 worse at the MLP's first position fails objective 1
    there; a judge that read the last position alone would pass it."""
    e = _judged(GOOD, early={(3, "relu"): 0.2})
    assert _verdict(e[model_claim("obj1", 3, "relu")]) is False
    assert _verdict(e[model_claim("obj1", 3, "softmax")]) is True


def test_objective_3_reads_the_shifted_targets_alone():
    """Worse by 0.2 on the shifted targets only: objective 3 fails for that model, objective 1 still passes."""
    e = _judged(GOOD, shifted={(4, "softmax"): 0.2})
    assert _verdict(e[model_claim("obj3", 4, "softmax")]) is False
    assert _verdict(e[model_claim("obj1", 4, "softmax")]) is True
    assert _verdict(e[model_claim("obj3", 4, "relu")]) is True


def test_objective_2_per_depth_compares_the_two_attentions_there_behind_both_gates():
    """The softmax model losing 0.3 past the training length and ReLU nothing: margin ≈ +0.3 at that depth, pass;
    the reverse fails; equal losses straddle 0. A ReLU model on the plateau withholds its depth's margin only."""
    assert _verdict(_judged(GOOD, late={(3, "softmax"): 0.3})[obj2_claim(3)]) is True
    assert _verdict(_judged(GOOD, late={(3, "relu"): 0.3})[obj2_claim(3)]) is False
    both = _judged(GOOD, late={(4, "relu"): 0.3, (4, "softmax"): 0.3})
    assert _verdict(both[obj2_claim(4)]) is None and "missed" not in both[obj2_claim(4)]["ours"]
    plateau = _judged(GOOD | {(6, "relu"): 0.9}, late={(6, "softmax"): 0.3, (3, "softmax"): 0.3})
    assert _verdict(plateau[obj2_claim(6)]) is None and "missed the learning gate" in plateau[obj2_claim(6)]["ours"]
    assert _verdict(plateau[obj2_claim(3)]) is True


def test_some_model_passes_on_one_decided_model_and_fails_only_when_every_model_is_below():
    """One model at half least squares' error and five worse than it: pass. Every model worse: fail. The best model
    exactly at least squares: inconclusive. A claim read on the smallest model (an every-model claim) would fail the
    first; one without the adjustment for six models would pass a model barely above 0 by chance."""
    worse = {m: 0.4 for m in N01_MODELS}
    one = worse | {(3, "softmax"): 0.15}
    for var, want in ((one, True), (worse, False), (worse | {(3, "softmax"): 0.3}, None)):
        icl, _ = _run(var)
        e = flat.judge_some(icl, L)
        assert e["claim"] == SOME and e["passed"] is want and _verdict(e) is want, var
    assert "target depth 3 softmax" in flat.judge_some(_run(one)[0], L)["ours"]


def test_the_every_model_claims_are_profile_n01_s_judges_under_this_design_s_ids():
    """Each every-model claim of this design has the criterion profile n01's claim had when both were registered
    (1dd4219), which it replaced (a moved threshold or a dropped gate would pass a claim n01's run would not), and
    its entry is n01's judge's: one learned model failing fails it; its verdict is the registry's."""
    from test_registered import registry_at

    before = registry_at("1dd4219")

    def data(criterion) -> list[tuple]:
        return [(c.key, c.op, float(c.threshold)) for c in criterion]

    for theirs, ours in EVERY.items():
        assert data(claims.CRITERIA[ours]) == data(before.CRITERIA[theirs]) == data(before.CRITERIA[ours])
        assert claims.REPLACED[theirs].by == (ours,) and theirs not in claims.CRITERIA
    icl, shift = _run(GOOD | {(4, "relu"): 0.5})
    entries = {e["claim"]: e for e in flat.judge_every(icl, shift, L, T, 0.05, {"obj1_tolerance": 0.05,
                                                                                 "obj3_max_drop": 0.1})}
    assert set(entries) == set(EVERY.values())
    assert _verdict(entries["gpt-n01f-beats-ls"]) is False
    assert _verdict(entries["gpt-n01f-share"]) is False


def test_waiting_for_its_run_every_claim_names_the_command_and_judges_nothing():
    entries = flat.pending(0.05)
    registered = {c.id for c in claims.CLAIMS if c.id.startswith("gpt-n01f")}
    assert {e["claim"] for e in entries} == registered and len(entries) == len(registered) == 34
    assert all(e["value"] is None and e["passed"] is None and flat.COMMAND in e["ours"] for e in entries)


MODEL = "model (target depth, attention)"


def test_the_first_table_shows_each_model_s_status_and_number_in_its_own_cell():
    """A status and its claim's number land in their model's row and question's column (a transposed table, or one
    keyed by the wrong attention, puts the fail elsewhere); objective 2 sits on both of its depth's rows; whether a
    model learned is its own gate's; a claim the judge did not give is a dash."""
    icl, shift = _run(GOOD | {(4, "relu"): 0.5})
    entries = flat.judge_models(icl, shift, L, T, 0.05)
    status = {model_claim(q, d, a): "pass" for d, a in N01_MODELS for q in QUESTIONS}
    status |= {model_claim("beats-ls", 4, "relu"): "fail", obj2_claim(6): "inconclusive"}
    table = flat.verdict_table(entries, status, {(3, "softmax"): "yes (+0.001)"})
    assert len(table) == 6
    beats = table[flat.HEADERS["beats-ls"]]
    fails = table[beats.str.startswith("fail")]
    assert list(fails[MODEL]) == ["4, ReLU"]
    value = next(e["value"] for e in entries if e["claim"] == model_claim("beats-ls", 4, "relu"))
    assert fails[flat.HEADERS["beats-ls"]].item() == f"fail, {value:+.2f}" and value < 0  # the model's own number
    assert list(table[table[MODEL].str.startswith("6,")][flat.OBJ2_HEADER].str.split(",").str[0]) == [
        "inconclusive"] * 2
    assert set(table[table[MODEL].str.startswith("3,")][flat.OBJ2_HEADER]) == {"—"}  # no status given: a dash
    assert list(table["learned"]) == ["yes"] * 6  # GOOD's models all lead the context mean
    assert table["flat at the cap"].tolist() == ["yes (+0.001)"] + ["—"] * 5


def test_curve_flatness_reads_each_model_s_seeds_last_quarter():
    """A model is flat only if every seed gained less than the scan's margin over the last quarter (the bug: reading
    the first seed, or the whole curve)."""
    rows = []
    for seed, late in enumerate((0.001, 0.002, 0.02)):  # seed 2 still rising at the end
        for step, r2 in ((10_000, 0.5), (10_500, 0.8), (14_000, 0.8 + late)):
            rows.append({"depth": 3, "attention": "softmax", "seed": seed, "step": step, "val_r2": r2})
    rows += [{"depth": 3, "attention": "relu", "seed": 0, "step": t, "val_r2": v}
             for t, v in ((10_000, 0.2), (10_500, 0.7), (14_000, 0.703))]  # rose early, flat late
    got = flat.curve_flatness(pd.DataFrame(rows))
    assert got[(3, "softmax")] == "no (+0.020)" and got[(3, "relu")] == "yes (+0.003)" and got[(4, "relu")] == "—"


def test_every_words_count_each_model_s_status_beside_the_claim_over_all():
    """The per-model counts beside a claim over every model, in the first table's words: a model short of its gate
    is not tested, one whose interval straddles is inconclusive (the bugs: the two merged, a count off by the
    models without a record)."""
    models = list(N01_MODELS)
    status = {model_claim("beats-ls", d, a): s for (d, a), s in zip(models, ["pass"] * 3 + ["fail"]
                                                                    + ["inconclusive"] * 2)}
    status[EVERY["gpt-n01-beats-ls"]] = "fail"
    entries = [{"claim": model_claim("beats-ls", d, a), "value": 0.1,
                "values": {"models": 1.0, "models_learned": 0.0 if i == 4 else 1.0}} for i, (d, a) in enumerate(models)]
    words = flat.every_words(entries, status)
    assert words.startswith("beats least squares: fail (per model: 3 pass, 1 fail, 1 inconclusive, 1 not tested)")
    assert "objective 1: waits for the run (per model: none judged yet)" in words


def test_objective_1_at_one_depth_says_each_attention_s_status_shortfall_and_interval():
    """The first screen's sentence: each attention's own number and ends (the bugs: the attentions swapped, the ends
    of another claim, a model short of its gate called inconclusive)."""
    status = {model_claim("obj1", 3, "softmax"): "fail", model_claim("obj1", 3, "relu"): "inconclusive"}
    entries = [{"claim": model_claim("obj1", 3, "softmax"), "value": 0.081,
                "values": {"value_lo": 0.062, "value_hi": 0.1, "models": 1.0, "models_learned": 1.0}},
               {"claim": model_claim("obj1", 3, "relu"), "value": 0.2,
                "values": {"value_lo": 0.15, "value_hi": 0.26, "models": 1.0, "models_learned": 0.0}}]
    words = flat.objective1_words(entries, status, 3, 0.05)
    assert "within 0.05 of the MLP" in words
    assert "softmax, fail -- short by 0.081 (90 % interval 0.062 to 0.100)" in words
    assert "ReLU, not tested -- short by 0.200 (90 % interval 0.150 to 0.260)" in words
    assert words.index("softmax") < words.index("ReLU")
    assert "waits for the run" in flat.objective1_words([], {}, 4, 0.05)


def test_a_result_without_one_of_the_models_is_refused_in_one_line():
    icl, shift = _run(GOOD)
    icl = {**icl, "blocks": [b for b in icl["blocks"] if not (b["depth"] == 6 and b["model"] == "relu")]}
    with pytest.raises(ValueError, match="target depth 6, relu"):
        flat.judge_models(icl, shift, L, T, 0.05)


def test_the_design_is_data_and_names_the_scan_s_horizon():
    """The design's horizon is the recipe scan's (a cosine recipe is fitted at its horizon) and every test prompt
    feeds the MLP at the pretraining mixture."""
    from icdl.gpt_icl.recipes.scan import PROFILES as SCAN

    assert flat.DESIGN["horizon"] == SCAN.resolve("n01")["horizon"]
    assert flat.DESIGN["eval_prompts"] == SCAN.resolve("n01")["eval_prompts"]
    assert flat.DESIGN["mlp_prompts"] == 4096 and flat.DESIGN["continues"] == "n01"


def test_the_profile_is_the_registered_design_and_continues_profile_n01_s_models():
    """Profile n01-flat is flat.DESIGN in the main study's settings: n01's models, seeds and prompts, trained on to
    the horizon with the validation curve, the MLP on every test prompt; each model's training settings are n01's but
    for the length and what it measures (continue_checkpoint's rule), so its checkpoints continue n01's exactly."""
    from dataclasses import asdict

    from icdl.gpt_icl.core import main_study, schedule
    from icdl.gpt_icl.core.training import CONTINUABLE
    from icdl.gpt_icl.recipes.scan import CANDIDATES

    cfg, n01_cfg = main_study.PROFILES.resolve(flat.PROFILE), main_study.PROFILES.resolve("n01")
    d = flat.DESIGN
    assert cfg["continues"] == d["continues"] and cfg["steps"] == cfg["relu_steps"] == d["horizon"]
    assert (cfg["eval_every"], cfg["eval_prompts"]) == (d["eval_every"], d["eval_prompts"])
    assert (cfg["mlp_prompts"], cfg["shift_mlp_prompts"]) == (d["mlp_prompts"], d["shift_mlp_prompts"])
    assert cfg["mlp_prompts"] == cfg["test_prompts"]  # every test prompt of the pretraining mixture
    same = {k for k in cfg if k not in ("steps", "relu_steps", "eval_every", "eval_prompts", "mlp_prompts",
                                        "shift_mlp_prompts", "curve_mlp_prompts", "continues", "profile", "run",
                                        "softmax_recipe", "relu_recipe")}
    assert {k: cfg[k] for k in same} == {k: n01_cfg[k] for k in same}
    for att in ("softmax", "relu"):
        if cfg[f"{att}_recipe"]:
            continue  # a recipe of its own: trained from scratch
        new, old = (asdict(schedule.configs(c, 3, att, c["n_layer"], 1)[2]) for c in (cfg, n01_cfg))
        assert {k: v for k, v in new.items() if k not in CONTINUABLE} == {
            k: v for k, v in old.items() if k not in CONTINUABLE}
    cosine = CANDIDATES["n01"]["cosine"]
    assert schedule.RECIPES["cosine"] == cosine  # the recipe a profile may give an attention is the scan's


def test_a_pair_continues_where_its_attention_keeps_the_recipe_and_starts_anew_where_not(tmp_path, monkeypatch):
    """train_pair with continue_from: the softmax model (the profile's own recipe) continues the source's checkpoint
    -- its history holds the source's steps -- while a ReLU model given the cosine recipe trains from scratch."""
    from icdl.gpt_icl.core import main_study, schedule
    from icdl.repro.checkpoints import load_checkpoint

    monkeypatch.setitem(schedule.RECIPES, "cosine", {**schedule.RECIPES["cosine"], "warmup_steps": 2,
                                                     "batch": 8})  # the scan's recipe, its warm-up cut to the run
    base = {**main_study.PROFILES.resolve("quick"), "steps": 6, "relu_steps": 6, "relu_init": "scratch",
            "warm_steps": 0, "warm_family": "none"}
    src, dst = tmp_path / "src", tmp_path / "dst"
    schedule.train_pair(base, 3, 1, command="a", folder=src, progress=False)
    longer = {**base, "steps": 10, "relu_steps": 10, "eval_every": 10, "eval_prompts": 16, "relu_recipe": "cosine"}
    out = schedule.train_pair(longer, 3, 1, command="b", folder=dst, progress=False, continue_from=(src, "a"))
    assert out["complete"]
    soft = load_checkpoint(schedule.checkpoint_path(dst, 3, "softmax"), kind="gpt_icl")
    relu = load_checkpoint(schedule.checkpoint_path(dst, 3, "relu"), kind="gpt_icl")
    first = load_checkpoint(schedule.checkpoint_path(src, 3, "softmax"), kind="gpt_icl")
    assert soft["history"][: len(first["history"])] == first["history"]  # carried on from the source
    assert relu["settings"]["train"]["lr_schedule"] == "cosine" and relu["step"] == 10
    assert relu["history"][0]["step"] == 1                                   # its own steps from the first


def test_a_run_judges_every_registered_claim_once():
    """judged() gives one entry per claim of the design, the same set pending() waits with (a claim left out of the
    judge would stay 'not yet covered' beside judged ones; one judged twice would be refused by the ledger)."""
    icl, shift = _run(GOOD)
    entries = flat.judged(icl, shift, L, T, 0.05, {"obj1_tolerance": 0.05, "obj3_max_drop": 0.1})
    ids = [e["claim"] for e in entries]
    assert len(ids) == len(set(ids)) and set(ids) == {e["claim"] for e in flat.pending(0.05)}
    assert flat.COMMAND in flat.state_words(False) and flat.COMMAND not in flat.state_words(True)


def test_each_attention_trains_on_at_the_recipe_the_scan_chose():
    """Profile n01-flat gives each attention the recipe the committed recipe scan chose for it (the rule of
    icdl.gpt_icl.recipes.scan.choose on results/gpt_n01/recipes.n01.json): "" where the incumbent stayed (the model
    continues its n01 checkpoint), else the winner's name. The incumbent is n01's own recipe."""
    from icdl.gpt_icl.core import main_study
    from icdl.gpt_icl.core.model import ATTENTIONS
    from icdl.gpt_icl.recipes.scan import CANDIDATES, choose
    from icdl.gpt_icl.recipes.scan import PROFILES as SCAN
    from icdl.repro.results import load_result

    res = load_result(SCAN.folder() / "recipes.n01.json", profile="n01")
    chosen = choose(pd.DataFrame(res["data"]["history"]))
    cfg = main_study.PROFILES.resolve(flat.PROFILE)
    for att in ATTENTIONS:
        name = chosen[att]["candidate"]
        assert cfg[f"{att}_recipe"] == ("" if name == "incumbent" else name), att
    assert CANDIDATES["n01"]["incumbent"] == {"lr": cfg["lr"], "batch": cfg["batch"]}


def test_a_continued_model_is_the_recipe_scan_s_incumbent_run_bit_for_bit():
    """The n01 model trained to 9 500 steps in one run and continued to 14 000 in the flat run (another process,
    another session) has the weights and validation curve of the recipe scan's incumbent run of the same settings
    and seed, trained straight through: continue_checkpoint carries everything an update depends on. Checked on
    every committed flat model the scan also trained (target depth 3, seeds 0 and 1); a continuation that restarted
    Adam's moments or the prompt stream would differ in the first digits."""
    from icdl.gpt_icl.core import main_study
    from icdl.gpt_icl.core.schedule import checkpoint_path
    from icdl.repro.checkpoints import load_checkpoint

    flat_folder = main_study.PROFILES.folder("checkpoints", flat.PROFILE)
    from icdl.gpt_icl.recipes.scan import PROFILES as SCAN

    scan_folder = SCAN.folder("checkpoints") / "recipes_n01"
    pairs = [(checkpoint_path(flat_folder, 3, att, replicate=r), scan_folder / f"recipe_incumbent_{att}_seed{r}.pt")
             for att in ("softmax", "relu") for r in (0, 1)]
    pairs = [(a, b) for a, b in pairs if a.is_file()]
    assert pairs, "the flat run's first model (target depth 3, softmax, seed 0) is committed"
    for mine, theirs in pairs:
        a, b = load_checkpoint(mine, kind="gpt_icl"), load_checkpoint(theirs, kind="gpt_icl")
        if a["step"] < 14_000:
            continue  # still training: compared once finished
        assert a["step"] == b["step"] == 14_000
        assert all(torch.equal(a["model"][k], b["model"][k]) for k in b["model"]), mine.name
        curve = [(r["step"], r["val_r2"]) for r in a["history"] if "val_r2" in r]
        assert curve and set(curve) <= {(r["step"], r["val_r2"]) for r in b["history"] if "val_r2" in r}


def test_the_flatness_sentence_counts_the_rising_models_and_their_gains():
    """The first screen says whether the cap or flatness ended training (the bugs: a rising model called flat, the
    gain read off the slowest seed instead of the fastest, the range's ends swapped)."""
    def curve(depth, att, seed, late):
        return [{"depth": depth, "attention": att, "seed": seed, "step": t, "val_r2": v}
                for t, v in ((10_000, 0.5), (10_500, 0.7), (14_000, 0.7 + late))]

    rows = []
    for (d, a), lates in zip(N01_MODELS, [(0.001, 0.002, 0.001)] * 4 + [(0.001, 0.03, 0.0), (0.012, 0.0, 0.0)]):
        for seed, late in enumerate(lates):
            rows += curve(d, a, seed, late)
    words = flat.flatness_words(pd.DataFrame(rows), 14_000)
    assert words.startswith("2 of the 6 models' validation curves are not flat at the cap of 14")
    assert "+0.012 to +0.030" in words and "stopped" in words
    flat_rows = [r for r in rows if not (r["depth"] == 6)] + curve(6, "softmax", 0, 0.0) + curve(6, "relu", 0, 0.0)
    assert flat.flatness_words(pd.DataFrame(flat_rows), 14_000).startswith("every model's validation curve is flat")
    empty = pd.DataFrame(columns=["depth", "attention", "seed", "step", "val_r2"])
    assert flat.flatness_words(empty, 14_000) == "no validation curve was recorded"
