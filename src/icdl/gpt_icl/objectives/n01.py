"""ICDL's questions asked again where the task needs a deep network (chapter ``gpt_n01``, on profile ``n01`` of the
main study).

At ICDL's inputs, x ~ N(−2, I), a linear fit within a prompt leaves a few per cent of the label variance
(:mod:`~icdl.gpt_icl.objectives.task_content`): least squares is then hard to beat, and "comparable to the trained
network" says little about learning a deep network. With x ~ N(0, I) -- the inputs of REB's network baselines --
the same targets leave 15–20 % to the part no linear fit explains. Profile ``n01`` of
:data:`icdl.gpt_icl.core.main_study.PROFILES` is the main study's models, seeds and evaluation with ``centre = 0``
(training and test prompts alike), trained at the schedule the scan of :mod:`icdl.gpt_icl.schedules` fits to this
task (:data:`~icdl.gpt_icl.core.main_study.N01_FITTED`). This module holds the judges of the claims over every model,
each on the paired prompts (the MLP's own) over every seed, with its 90 % interval; they were registered before
profile ``n01``'s run and are asked, with the same criteria and under these ids, of its models trained until flat
(:mod:`~icdl.gpt_icl.objectives.flat`, whose design replaced profile ``n01``'s as the one that decides them):

========================  ==============================================================================
``gpt-n01f-beats-ls``     the smallest error relative to least squares, (MSE_LS − MSE)/MSE_LS, over target
                          depths and attentions, at the MLP's last position up to the training length (> 0)
``gpt-n01f-obj1``         objective 1's number: the largest shortfall of a model's R² below the MLP's, at
                          the MLP's positions up to the training length (≤ the tolerance)
``gpt-n01f-share``        (at the schedule fitted to the task) the smallest share of the MLP's gain over
                          least squares learned in context, (MSE_LS − MSE)/(MSE_LS − MSE_MLP) (> 0.5)
``gpt-n01f-depth-gap``    the smaller over the attentions of the excess error over the MLP,
                          (MSE − MSE_MLP)/MSE_MLP, at the deepest target depth minus that at the shallowest, at
                          that last position (> 0: the gap grows with depth)
``gpt-n01f-obj2-length``  (at the fitted schedule) objective 2's length margin, the main study's measure
``gpt-n01f-obj3``         (at the fitted schedule) objective 3, the main study's measure on shifted targets
========================  ==============================================================================

Every model's number is that of its mean squared error over its seeds (the sums of every seed pooled, as R² is),
so "every transformer" means every model, each averaged over its seeds. The depth gap is a ratio of mean squared
errors, not a difference of R²: R² divides by the labels' spread across prompts, whose share of a per-prompt
offset grows with the targets' depth, so the same within-prompt error would give a smaller R² shortfall at depth 6
than at depth 3.

:func:`side_by_side` puts the two tasks' numbers in one table for the chapter. The chapter itself runs nothing
heavy: its one profile (:data:`PROFILES`) reads the committed runs of the main study's profiles ``n01`` and
``n01-flat``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from icdl.gpt_icl.core import baselines as bl
from icdl.gpt_icl.core import verdicts
from icdl.gpt_icl.core.evaluation import PAIRED
from icdl.gpt_icl.core.intervals import summary
from icdl.gpt_icl.core.learning import gate, gated, learned_keys, margin
from icdl.gpt_icl.core.model import ATTENTIONS
from icdl.gpt_icl.core.verdicts import (
    Sums,
    _entry,
    _paired_positions,
    behind,
    context_mean_leads,
    shortfall_points,
)
from icdl.repro.profiles import ProfileSet
from icdl.repro.typeset import count

#: the main study's profile that asks the questions at x ~ N(0, I), and the command that produces it
PROFILE = "n01"
COMMAND = "python -m icdl.gpt_icl --profile n01 --part main --part shift"
#: the chapter's profiles: it reads the committed run of :data:`PROFILE` and trains nothing itself
PROFILES = ProfileSet("gpt_n01", profiles={"quick": {}})


def state_words(cfg, done: bool) -> str:
    """What the chapter can say of profile ``n01``'s run (``cfg``, resolved): how many models of how many steps, and
    whether their result is committed (``done``) or the claims wait for :data:`COMMAND`."""
    from icdl.gpt_icl.core.main_study import models_words

    what = f"{models_words(cfg)}, {count(cfg['steps'])} steps each"
    if done:
        return f"{what}, trained and scored"
    return f"{what}; their run ({COMMAND}) is not committed yet, and until it is every claim below is not yet covered"


def last_position(sums: Sums, depth: int, train_examples: int) -> int:
    """The MLP's last query position up to the training length on the paired prompts: where the claims that
    compare at one position compare."""
    return _paired_positions(sums, depth, PAIRED, train_examples)[-1]


def versus_least_squares(sums: Sums, train_examples: int) -> dict[tuple, np.ndarray]:
    """``{(depth, attention): (resamples + 1,)}``: the error relative to least squares,
    ``(MSE_LS − MSE)/MSE_LS``, at :func:`last_position` on the paired prompts (above 0: better than the affine
    fit of the prompt's examples)."""
    out = {}
    for depth in sums.depths():
        pos = [last_position(sums, depth, train_examples)]
        ls = sums.mse(depth, bl.LEAST_SQUARES, PAIRED, pos)[:, 0]
        for att in ATTENTIONS:
            out[(depth, att)] = 1 - sums.mse(depth, att, PAIRED, pos)[:, 0] / ls
    return out


def excess_over_mlp(sums: Sums, train_examples: int) -> dict[tuple, np.ndarray]:
    """``{(depth, attention): (resamples + 1,)}``: ``(MSE − MSE_MLP)/MSE_MLP`` at :func:`last_position` on the
    paired prompts, with the MLP of that target depth (above 0: worse than the MLP)."""
    out = {}
    for depth in sums.depths():
        pos = [last_position(sums, depth, train_examples)]
        mlp = sums.mse(depth, bl.mlp_method(depth), PAIRED, pos)[:, 0]
        for att in ATTENTIONS:
            out[(depth, att)] = sums.mse(depth, att, PAIRED, pos)[:, 0] / mlp - 1
    return out


def shortfall_at_last(sums: Sums, train_examples: int) -> dict[tuple, np.ndarray]:
    """``{(depth, attention): (resamples + 1,)}``: the MLP's R² minus the model's at :func:`last_position`."""
    out = {}
    for depth in sums.depths():
        pos = [last_position(sums, depth, train_examples)]
        mlp = sums.r2(depth, bl.mlp_method(depth), PAIRED, pos)[:, 0]
        for att in ATTENTIONS:
            out[(depth, att)] = mlp - sums.r2(depth, att, PAIRED, pos)[:, 0]
    return out


def nonlinear_share(sums: Sums, train_examples: int) -> dict[tuple, np.ndarray]:
    """``{(depth, attention): (resamples + 1,)}``: the share of the MLP's gain over least squares that the model
    learns in context, ``(MSE_LS − MSE)/(MSE_LS − MSE_MLP)`` at :func:`last_position` on the paired prompts (1: as
    good as the MLP trained on the prompt; 0: no better than least squares; the same as the ratio of the R² gains
    on these prompts)."""
    out = {}
    for depth in sums.depths():
        pos = [last_position(sums, depth, train_examples)]
        ls = sums.mse(depth, bl.LEAST_SQUARES, PAIRED, pos)[:, 0]
        gain = ls - sums.mse(depth, bl.mlp_method(depth), PAIRED, pos)[:, 0]
        for att in ATTENTIONS:
            out[(depth, att)] = (ls - sums.mse(depth, att, PAIRED, pos)[:, 0]) / gain
    return out


#: the words of ``gpt-n01f-share``'s criterion
SHARE_CRITERION = (r"$\frac{\mathrm{MSE}_{\mathrm{LS}} - \mathrm{MSE}}"
                   r"{\mathrm{MSE}_{\mathrm{LS}} - \mathrm{MSE}_{\mathrm{MLP}}}$ > 0.5 at the MLP's last position up "
                   "to the training length, every depth and attention (the whole interval), every model past the "
                   "learning gate")


def judge_share(icl: dict | None, train_examples: int, command: str) -> dict:
    """The ledger entry of ``gpt-n01f-share`` from an n01 result at its fitted schedule (``icl``; None while that
    run waits: nothing judged, ``command`` named): the smallest share over the models with its interval, behind
    the learning gate."""
    if icl is None:
        return {"claim": "gpt-n01f-share", "value": None, "passed": None, "criterion": SHARE_CRITERION,
                "ours": f"not run yet: {command}"}
    sums = Sums(icl["blocks"], icl["labels"])
    shares = nonlinear_share(sums, train_examples)
    each = "; ".join(f"depth {d} {a}: {v[0]:.3f}" for (d, a), v in shares.items())
    g = gate(context_mean_leads(sums, train_examples))
    entry = _entry("gpt-n01f-share", shares,
                   "smallest share of the MLP's gain over least squares learned in context", SHARE_CRITERION, ">", 0.5,
                   learned=learned_keys(g, margin("gpt-n01f-share"), behind(shares)))
    entry["ours"] += f"; per model: {each}"
    return gated(entry, g)


#: the main study's entries that ``judge_objectives_2_3`` asks of the n01 models, and their names here
OBJECTIVES_2_3 = {"icdl-obj2-length": "gpt-n01f-obj2-length", "icdl-obj3": "gpt-n01f-obj3"}


def judge_objectives_2_3(icl: dict | None, shift: dict | None, train_examples: int, test_examples: int,
                         criteria: dict, command: str = COMMAND) -> list[dict]:
    """The ledger entries ``gpt-n01f-obj2-length`` and ``gpt-n01f-obj3``: the main study's own measures, thresholds
    and learning gate (:func:`icdl.gpt_icl.core.verdicts.judge`) on an n01 result at its fitted schedule (``icl``
    and ``shift``; None while that run waits: nothing judged, ``command`` named). Objective 2's mixture half is
    left out: at centre 0 every one of ICDL's input mixtures is N(0, I)."""
    if icl is None or shift is None:
        from icdl.repro.claims import REPLACED  # the main study's reference-run claims, whose lines these ask

        return [{"claim": ours, "value": None, "passed": None, "criterion": "the main study's criterion of "
                 f"{REPLACED[theirs].source}, on the models trained at x ~ N(0, I)", "ours": f"not run yet: {command}"}
                for theirs, ours in OBJECTIVES_2_3.items()]
    return verdicts.judge(icl, shift, train_examples, test_examples, criteria, OBJECTIVES_2_3)


def _criteria(tolerance: float, deep: int = 6, shallow: int = 3) -> dict[str, str]:
    """Each claim's criterion in words, the same whether it is judged or still waits for its run."""
    return {
        "gpt-n01f-beats-ls": r"$(\mathrm{MSE}_{\mathrm{LS}} - \mathrm{MSE})/\mathrm{MSE}_{\mathrm{LS}}$"
                            " > 0 at the MLP's last position up to the training length, every depth and attention "
                            "(the whole interval)",
        "gpt-n01f-obj1": f"transformer R² ≥ MLP R² − {tolerance:g} at every MLP position ≤ training length on the "
                        "MLP's prompts, every depth and attention (the whole interval)",
        "gpt-n01f-depth-gap": r"the excess error over the MLP, "
                             r"$(\mathrm{MSE} - \mathrm{MSE}_{\mathrm{MLP}})/\mathrm{MSE}_{\mathrm{MLP}}$,"
                             f" at target depth {deep} exceeds that at depth {shallow} for both attentions (the "
                             "whole interval)",
    }


def pending(tolerance: float) -> list[dict]:
    """The three claims while profile ``n01`` has no complete result: nothing judged, the command named (the
    ledger records them as not yet covered)."""
    return [{"claim": claim, "value": None, "passed": None, "criterion": text,
             "ours": f"not run yet: {COMMAND}"} for claim, text in _criteria(tolerance).items()]


def judge(icl: dict, train_examples: int, tolerance: float) -> list[dict]:
    """The ledger entries of the three registered claims from the ``blocks`` and ``labels`` of an ``n01``
    result (verdicts pass, fail or inconclusive on the whole 90 % interval), each behind the learning gate
    (:mod:`~icdl.gpt_icl.core.learning`): undecided where a model did not learn the task."""
    sums = Sums(icl["blocks"], icl["labels"])
    depths = sums.depths()
    if len(depths) < 2:
        raise ValueError(f"the depth gap needs two target depths; the result has {depths}")
    vs_ls = versus_least_squares(sums, train_examples)
    obj1 = shortfall_points(sums, [PAIRED], train_examples)
    excess = excess_over_mlp(sums, train_examples)
    gap = {att: excess[(depths[-1], att)] - excess[(depths[0], att)] for att in ATTENTIONS}
    text = _criteria(tolerance, depths[-1], depths[0])
    learned = gate(context_mean_leads(sums, train_examples))
    need = margin("gpt-n01f-obj1")
    ok = {name: learned_keys(learned, need, behind(stat, [depths[0], depths[-1]]))
          for name, stat in (("vs_ls", vs_ls), ("obj1", obj1), ("gap", gap))}
    return [gated(e, learned) for e in (
        _entry("gpt-n01f-beats-ls", vs_ls, "smallest error relative to least squares over depths and attentions, "
               "same prompts", text["gpt-n01f-beats-ls"], ">", 0.0, learned=ok["vs_ls"]),
        _entry("gpt-n01f-obj1", obj1, "largest shortfall below the MLP up to the training length, same prompts",
               text["gpt-n01f-obj1"], "<=", tolerance, learned=ok["obj1"]),
        _entry("gpt-n01f-depth-gap", gap, f"smaller over the attentions of the excess error over the MLP at "
               f"target depth {depths[-1]} minus depth {depths[0]}", text["gpt-n01f-depth-gap"], ">", 0.0,
               learned=ok["gap"]),
    )]


#: the columns of :func:`side_by_side`, as the chapter shows them
SIDE_COLUMNS = {"r2": "R²", "vs_ls": "error relative to least squares",
                "shortfall": "shortfall at the MLP's last position", "excess": "excess error over the MLP"}


def side_by_side(results: dict[str, dict], train_examples: int) -> pd.DataFrame:
    """One row per task (``results``: a name, e.g. the inputs' distribution, to a result's ``blocks`` and
    ``labels``), target depth and attention: R², the error relative to least squares, the shortfall below the
    MLP and the excess error over it at the MLP's last position up to the training length, each "value (lo to
    hi)"."""
    def cell(stat, sign=""):
        s = summary(stat)
        return f"{s['value']:{sign}.3f} ({s['lo']:{sign}.3f} to {s['hi']:{sign}.3f})".replace("-", "−")

    rows = []
    for task, icl in results.items():
        sums = Sums(icl["blocks"], icl["labels"])
        vs_ls, short = versus_least_squares(sums, train_examples), shortfall_at_last(sums, train_examples)
        excess = excess_over_mlp(sums, train_examples)
        for depth in sums.depths():
            pos = [last_position(sums, depth, train_examples)]
            for att in ATTENTIONS:
                rows.append({"inputs": task, "target depth": depth, "attention": att,
                             SIDE_COLUMNS["r2"]: cell(sums.r2(depth, att, PAIRED, pos)[:, 0]),
                             SIDE_COLUMNS["vs_ls"]: cell(vs_ls[(depth, att)], "+"),
                             SIDE_COLUMNS["shortfall"]: cell(short[(depth, att)], "+"),
                             SIDE_COLUMNS["excess"]: cell(excess[(depth, att)], "+")})
    return pd.DataFrame(rows)


def glue_values(entries: list[dict]) -> dict[str, str]:
    """The prose's numbers of the three claims, each "value (90 % interval lo to hi)" from the judge's own
    entries (dashes while the run waits)."""
    names = {"gpt-n01f-beats-ls": "n01_vs_ls", "gpt-n01f-obj1": "n01_obj1", "gpt-n01f-depth-gap": "n01_gap"}
    out = {}
    for e in entries:
        claim = e["claim"]
        v, values = e.get("value"), e.get("values") or {}
        if v is None or "value_lo" not in values:
            out[names[claim]] = "—"
            continue
        sign = "" if claim == "gpt-n01f-obj1" else "+"
        out[names[claim]] = (f"{v:{sign}.3f} (90 % interval {values['value_lo']:{sign}.3f} to "
                                  f"{values['value_hi']:{sign}.3f})").replace("-", "−")
    return out


def per_model_glue(icl: dict | None, train_examples: int) -> dict[str, str]:
    """The per-model ends the prose quotes beside the claims' extremes: the largest error relative to least
    squares over the models (``n01_vs_ls_best``: the model nearest to beating it) and the number of models whose
    whole interval lies below 0 (``n01_vs_ls_below``, "k of n"); dashes while the run waits."""
    if icl is None:
        return {"n01_vs_ls_best": "—", "n01_vs_ls_below": "—"}
    stats = versus_least_squares(Sums(icl["blocks"], icl["labels"]), train_examples)
    best = max(float(v[0]) for v in stats.values())
    below = sum(summary(v)["hi"] < 0 for v in stats.values())
    return {"n01_vs_ls_best": f"{best:+.3f}".replace("-", "−"), "n01_vs_ls_below": f"{below} of {len(stats)}"}


def figure_data(icl: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The curves (the mean over seeds, :func:`~icdl.gpt_icl.core.main_study.mean_curves`) and the baselines of an
    ``n01`` result, as :func:`icdl.figures.plot_icl_methods` draws them."""
    from icdl.gpt_icl.core.main_study import mean_curves

    return mean_curves(pd.DataFrame(icl["curves"])), pd.DataFrame(icl["baselines"])


def attention_glue(icl: dict | None, train_examples: int) -> dict[str, str]:
    """What the first screen says of each attention, as description beside the gated verdicts: its models' R² at
    each target depth in order (pooled over seeds, on the MLP's paired prompts at the last position up to the
    training length), and least squares' and the context mean's on the same prompts (``n01_r2_softmax``,
    ``n01_r2_relu``, ``n01_r2_ls``, ``n01_r2_mean``: "0.87, 0.73, 0.80"), and the depths (``n01_depths``);
    dashes while the run waits."""
    keys = {"softmax": "n01_r2_softmax", "relu": "n01_r2_relu", bl.LEAST_SQUARES: "n01_r2_ls",
            bl.CONTEXT_MEAN: "n01_r2_mean"}
    if icl is None:
        return {k: "—" for k in (*keys.values(), "n01_depths")}
    sums = Sums(icl["blocks"], icl["labels"])
    got: dict[str, list[float]] = {k: [] for k in keys}
    for depth in sums.depths():
        pos = [last_position(sums, depth, train_examples)]
        for name in keys:
            got[name].append(float(sums.r2(depth, name, PAIRED, pos)[0, 0]))
    depths = [str(d) for d in sums.depths()]
    return ({keys[name]: ", ".join(f"{x:.2f}" for x in v) for name, v in got.items()}
            | {"n01_depths": ", ".join(depths[:-1]) + f" and {depths[-1]}"})


def first_screen_glue(icl: dict | None, train_examples: int) -> dict[str, str]:
    """What ``gpt_icl``'s first screen says of the n01 models (``icl``: the committed n01 result, None while it
    waits): :func:`attention_glue`, and whether every model passed the learning gate (``n01_gate_met``)."""
    from icdl.gpt_icl.core import learning

    met = "their run is not committed yet"
    if icl is not None:
        gate_of = learning.gate(context_mean_leads(Sums(icl["blocks"], icl["labels"]), train_examples))
        met = learning.words(gate_of, learning.margin("gpt-n01f-beats-ls"))["gate_met"]
    return {**attention_glue(icl, train_examples), "n01_gate_met": met}


def committed_first_screen_glue(profile: str = PROFILE, command: str = COMMAND) -> dict[str, str]:
    """:func:`first_screen_glue` of the committed result of ``profile`` (n01's, or the run that continues its models:
    :func:`icdl.gpt_icl.objectives.flat.live_profile`), its provenance shown (a result not yet complete counts as
    none), at the n01 profile's training length."""
    from icdl.gpt_icl.core.main_study import PROFILES as MAIN
    from icdl.repro.results import show_reference

    obj = show_reference(MAIN, "icl", profile, command=command)
    icl = obj["data"] if obj is not None and obj["data"]["complete"] else None
    return first_screen_glue(icl, MAIN.resolve(PROFILE)["train_examples"])
