"""ICDL's questions at x ~ N(0, I) asked of each model on its own, on models trained until their validation curve is
flat (issue 67; chapter ``gpt_n01``). Registered, design and criteria, before any run of it.

Profile ``n01`` of the main study decides nothing about a single model: its claims are about every model at once,
and three of its six models were still improving when their 9 500 steps ran out. This design asks each model's
own questions of the same models trained further, at the recipe the recipe scan (:mod:`icdl.gpt_icl.recipes`)
chooses for their attention, and scores the MLP trained on the prompt on every test prompt, so that objective 1's
shortfall at target depth 3 is no longer decided by the prompts alone (on profile ``n01``'s 512 prompts its
prompt term, 0.016, was four times its seed term, 0.004).

=========================  =========================================================================================
:data:`DESIGN`             the run, as data: the models it continues, the horizon, the validation curve, the prompts
:data:`QUESTIONS`          the questions asked of each model (claims ``gpt-n01f-<question>-d<depth>-<attention>``)
:func:`judge_models`       one ledger entry per model and question, each behind that model's own learning gate;
                           objective 2's length margin per target depth, behind both of its models' gates
:func:`judge_some`         ``gpt-n01f-some-beats-ls``: at least one model predicts better than least squares
:func:`judge_every`        the every-model claims (``gpt-n01f-beats-ls`` …): the judges of profile ``n01``
                           (:mod:`~icdl.gpt_icl.objectives.n01`) on this run, under this design's ids
:func:`pending`            every entry while the run waits: nothing judged, the command named
:func:`live_profile`       the run the chapter reads: this design's once committed, else profile ``n01``'s
:func:`curve_flatness`     per model, whether every seed's validation curve is flat at the horizon
:func:`flatness_words`     whether the curves were flat at the horizon, in a sentence
:func:`verdict_table`      the chapter's first table: one row per model, one column per question, its status and number
:func:`every_words`        the every-model claims in one line each, with the per-model counts
:func:`objective1_words`   objective 1 at one target depth in a sentence, per attention (the first screen)
=========================  =========================================================================================

Why a fixed horizon rather than stopping each model where its curve goes flat: a decaying recipe's horizon is part
of the recipe (the scan fitted the cosine recipe at this horizon), one protocol serves both recipes, and a curve's
flatness is recorded and shown for every model instead (:func:`icdl.gpt_icl.core.curves.flat`, the scan's own rule)
-- a model still rising at the cap is named, not hidden. Stopping early would save at most 1 000 of the 4 500 steps
a continued model trains.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from icdl.gpt_icl.core.evaluation import PAIRED
from icdl.gpt_icl.core.intervals import extreme
from icdl.gpt_icl.core.learning import gate, gated
from icdl.gpt_icl.core.model import ATTENTIONS
from icdl.gpt_icl.core.tasks import PRETRAINING
from icdl.gpt_icl.core.verdicts import (
    Sums,
    _entry,
    context_mean_leads,
    decide,
    length_drops,
    model_name,
    shortfall_points,
)
from icdl.gpt_icl.objectives import n01
from icdl.repro.claims.gpt_n01 import EVERY, N01_MODELS, QUESTIONS, SOME, model_claim, obj2_claim
from icdl.repro.words import NOT_TESTED

#: the main study's profile this design is run as, and the command that will produce it
PROFILE = "n01-flat"
COMMAND = "python -m icdl.gpt_icl --profile n01-flat --part main --part shift"

#: the design, registered before its run (the run's profile must equal it: a test reads both). ``continues``: the
#: profile whose committed checkpoints a model continues where the scan keeps the incumbent recipe for its
#: attention (optimiser and generator state carried: the run is the one an uninterrupted run to the horizon would
#: have been); where the scan chooses another recipe, that attention's models are trained from scratch at it.
#: ``horizon``: the scan's horizon, every model's last step. ``eval_every``/``eval_prompts``: the validation
#: curve, the scan's. ``mlp_prompts``: the MLP trained on the prompt on every test prompt of the pretraining
#: mixture (was 512); ``shift_mlp_prompts``: on the shifted targets, as before
DESIGN = {"continues": "n01", "recipes": "results/gpt_n01/recipes.n01.json", "horizon": 14_000, "eval_every": 500,
          "eval_prompts": 2048, "mlp_prompts": 4096, "shift_mlp_prompts": 512}


def _words(question: str, tolerance: float) -> str:
    """A per-model claim's criterion in words."""
    return {
        "beats-ls": r"$(\mathrm{MSE}_{\mathrm{LS}} - \mathrm{MSE})/\mathrm{MSE}_{\mathrm{LS}}$ > 0 at the MLP's last "
                    "position up to the training length, on every test prompt (the whole interval), the model past "
                    "the learning gate",
        "share": n01.SHARE_CRITERION.replace("every depth and attention", "this model")
                                    .replace("every model", "the model"),
        "obj1": f"R² ≥ the MLP's − {tolerance:g} at every MLP position up to the training length, on every test "
                "prompt (the whole interval), the model past the learning gate",
        "obj3": f"on targets with μ = ±0.5, R² ≥ the MLP's − {tolerance:g} at every MLP position up to the training "
                "length (the whole interval), the model past the learning gate",
    }[question]


def _one(stat: dict, depth: int, attention: str) -> dict:
    """The numbers of ``stat`` (keyed ``(depth, attention, …)``) that are about one model."""
    return {k: v for k, v in stat.items() if k[:2] == (depth, attention)}


def judge_models(icl: dict, shift: dict, train_examples: int, test_examples: int, tolerance: float) -> list[dict]:
    """One entry per model of the run and question of :data:`QUESTIONS`, each the model's own number with its 90 %
    interval over seeds and prompts (a number ranging over positions or shifts: the extreme, each on its own
    interval, the fail side adjusted for their count), behind the model's own learning gate (refutable: with one
    model, an unmet gate withholds the verdict); then objective 2's length margin per target depth, the ReLU model's
    change past the training length minus the softmax model's, behind both models' gates."""
    main, shifted = Sums(icl["blocks"], icl["labels"]), Sums(shift["blocks"], shift["labels"])
    absent = [model_name(d, a) for d, a in N01_MODELS if not main.has(d, a, PRETRAINING)]
    if absent:
        raise ValueError(f"the result holds no {'; no '.join(absent)}: every model of the design must be scored")
    leads = context_mean_leads(main, train_examples)
    paired_shift = sorted(n for n in {k[2] for k in shifted.sse} if n.startswith(PAIRED))
    stats = {"beats-ls": n01.versus_least_squares(main, train_examples),
             "share": n01.nonlinear_share(main, train_examples),
             "obj1": shortfall_points(main, [PAIRED], train_examples),
             "obj3": shortfall_points(shifted, paired_shift, train_examples)}
    how = {"beats-ls": ("error relative to least squares", ">", 0.0),
           "share": ("share of the MLP's gain over least squares learned in context", ">", 0.5),
           "obj1": ("largest shortfall below the MLP up to the training length", "<=", tolerance),
           "obj3": ("largest shortfall below the MLP on shifted targets (μ = ±0.5)", "<=", tolerance)}
    out = []
    for depth, att in N01_MODELS:
        own = gate({model_name(depth, att): leads[model_name(depth, att)]})
        for q in QUESTIONS:
            stat = _one(stats[q], depth, att)
            rows = stat[(depth, att)] if (depth, att) in stat else stat
            ours, op, line = how[q]
            out.append(gated(_entry(model_claim(q, depth, att), rows, ours, _words(q, tolerance), op, line), own))
    drops = length_drops(main, train_examples, test_examples)
    for depth in sorted({d for d, _ in N01_MODELS}):
        both = gate({model_name(depth, a): leads[model_name(depth, a)] for a in ATTENTIONS})
        entry = _entry(obj2_claim(depth), drops[(depth, "relu")] - drops[(depth, "softmax")],
                       "the ReLU model's change of R² past the training length minus the softmax model's",
                       f"at target depth {depth}, softmax loses more R² past the training length than ReLU (margin "
                       "> 0, the whole interval), both models past the learning gate", ">", 0.0)
        out.append(gated(entry, both))
    return out


def judge_some(icl: dict, train_examples: int) -> dict:
    """``gpt-n01f-some-beats-ls``: the largest error relative to least squares over the models; its interval the
    mirror of an every-model claim's (:func:`~icdl.gpt_icl.core.intervals.extreme`, largest): the lower end the
    largest of the models' intervals adjusted for their count (a pass needs one model above 0 at that level), the
    upper end the largest of their own (a fail needs every model at or below 0). No learning gate: a model that
    beats least squares has learned more than a linear rule."""
    stat = n01.versus_least_squares(Sums(icl["blocks"], icl["labels"]), train_examples)
    s = extreme(stat, largest=True)
    best = max(stat, key=lambda k: float(stat[k][0]))
    return {"claim": SOME, "value": s["value"], "values": {"value_lo": s["lo"], "value_hi": s["hi"]},
            "passed": decide(s["lo"], s["hi"], ">", 0.0),
            "criterion": "the largest error relative to least squares over the models > 0 (one model's interval, "
                         "adjusted for the number of models, above 0)",
            "ours": (f"largest error relative to least squares: {s['value']:+.3f} (90 % interval {s['lo']:+.3f} to "
                     f"{s['hi']:+.3f}, each of the {s['models']} models on its own interval, the pass side adjusted "
                     f"for their number), target depth {best[0]} {best[1]}").replace("-", "−")}


def judge_every(icl: dict, shift: dict, train_examples: int, test_examples: int, tolerance: float,
                criteria: dict) -> list[dict]:
    """The every-model claims of this design (:data:`icdl.repro.claims.gpt_n01.EVERY`'s values, registered with
    profile ``n01``'s criteria, which they replaced): the judges of :mod:`~icdl.gpt_icl.objectives.n01` on this
    run."""
    return (n01.judge(icl, train_examples, tolerance) + [n01.judge_share(icl, train_examples, COMMAND)]
            + n01.judge_objectives_2_3(icl, shift, train_examples, test_examples, criteria))


def live_profile(folder: Path) -> str:
    """The run chapter ``gpt_n01`` reads for its figures and its first screen (``folder``: the main study's results):
    this design's where both of its results are committed and complete, else profile ``n01``'s (whose models this
    design continues)."""
    from icdl.repro.results import load_result

    paths = [folder / f"{stem}.{PROFILE}.json" for stem in ("icl", "shift")]
    if all(p.is_file() for p in paths) and all(load_result(p, profile=PROFILE)["data"]["complete"] for p in paths):
        return PROFILE
    return n01.PROFILE


def pending(tolerance: float) -> list[dict]:
    """Every claim of the design while its run waits: nothing judged, the command named (recorded as not yet
    covered)."""
    def entry(claim: str, criterion: str) -> dict:
        return {"claim": claim, "value": None, "passed": None, "criterion": criterion,
                "ours": f"not run yet: {COMMAND}"}

    out = [entry(model_claim(q, d, a), _words(q, tolerance)) for d, a in N01_MODELS for q in QUESTIONS]
    out += [entry(obj2_claim(d), f"at target depth {d}, softmax loses more R² past the training length than ReLU")
            for d in sorted({d for d, _ in N01_MODELS})]
    out.append(entry(SOME, "the largest error relative to least squares over the models > 0"))
    return out + [entry(ours, f"as {theirs}, on this design's run") for theirs, ours in EVERY.items()]


#: how the first table shows a status (an inconclusive claim of a model short of its learning gate: not tested,
#: the book's word for a number never read, icdl.repro.words.NOT_TESTED)
_MARK = {"pass": "pass", "pass (deviation)": "pass", "fail": "fail", "inconclusive": "inconclusive",
         "not yet covered": "waits for the run"}
#: the first table's column per question (short: the criteria are under the claims) and objective 2's, per depth
HEADERS = {"beats-ls": "beats least squares", "share": "over half the MLP's gain",
           "obj1": "objective 1 (within 0.05 of the MLP)", "obj3": "objective 3 (shifted targets)"}
OBJ2_HEADER = "objective 2 (length)"
#: the questions whose number is a signed difference (shown with its sign)
_SIGNED = ("beats-ls",)


def _cell(entry: dict | None, status: str | None) -> str:
    """One claim in the first table: its status and its number ("pass, +0.43"); "—" where the claim is absent."""
    if entry is None or status is None:
        return "—"
    mark = _MARK.get(status, status)
    if status == "inconclusive" and entry.get("values", {}).get("models_learned", 1.0) < entry.get("values", {}).get(
            "models", 1.0):
        mark = NOT_TESTED  # a model short of the gate: its number is not read
    if entry.get("value") is None:
        return mark
    signed = any(f"-{q}-" in entry["claim"] for q in _SIGNED) or "obj2" in entry["claim"]
    return f"{mark}, {entry['value']:+.2f}" if signed else f"{mark}, {entry['value']:.2f}"


def curve_flatness(history: pd.DataFrame) -> dict[tuple[int, str], str]:
    """Per model (target depth, attention): whether every seed's validation curve (``history`` rows with
    ``val_r2``) is flat by the recipe scan's rule (:func:`icdl.gpt_icl.core.curves.gain`: gained less than
    :data:`~icdl.gpt_icl.core.curves.FLAT` over the last quarter of the steps), in words with the largest seed's
    gain: "yes (+0.003)", "no (+0.012)"; "—" for a model without a curve."""
    from icdl.gpt_icl.core.curves import FLAT, gain

    h = history[history["val_r2"].notna()] if "val_r2" in history else history.iloc[0:0]
    out = {}
    for depth, att in N01_MODELS:
        own = h[(h["depth"] == depth) & (h["attention"] == att)]
        if own.empty:
            out[(depth, att)] = "—"
            continue
        worst = max(gain(g) for _, g in own.groupby("seed"))
        out[(depth, att)] = f"{'yes' if worst < FLAT else 'no'} ({worst:+.3f})"
    return out


def flatness_words(history: pd.DataFrame, horizon: int) -> str:
    """Whether the models' validation curves were flat at the horizon, in a sentence for the first screen: how many
    are, and the range of the largest seed's gain over the last quarter of the steps among those that are not (the
    verdicts of a model still rising are on a model the cap stopped, and the sentence says so)."""
    from icdl.gpt_icl.core.curves import FLAT, gain
    from icdl.repro.typeset import count

    h = history[history["val_r2"].notna()] if "val_r2" in history else history.iloc[0:0]
    worst = {m: max(gain(g) for _, g in own.groupby("seed")) for m in N01_MODELS
             if not (own := h[(h["depth"] == m[0]) & (h["attention"] == m[1])]).empty}
    if not worst:
        return "no validation curve was recorded"
    rising = {m: g for m, g in worst.items() if g >= FLAT}
    if not rising:
        return (f"every model's validation curve is flat at the cap of {count(horizon)} steps (it gained less than "
                f"{FLAT:g} over the last quarter of the steps)")
    span = f"{min(rising.values()):+.3f} to {max(rising.values()):+.3f}" if len(rising) > 1 else \
        f"{next(iter(rising.values())):+.3f}"
    flat_ones = len(worst) - len(rising)
    head = ("no model's validation curve is flat" if not flat_ones else
            f"{len(rising)} of the {len(worst)} models' validation curves are not flat")
    return (f"{head} at the cap of {count(horizon)} steps: over the last quarter of the steps the R² of the "
            f"fastest-rising seed still gained {span} (flat: less than {FLAT:g}), so these are verdicts on models "
            "the cap stopped, and more steps could still move them").replace("-0.", "−0.")


def verdict_table(entries: list[dict], status: dict[str, str],
                  flatness: dict[tuple[int, str], str] | None = None) -> pd.DataFrame:
    """The chapter's first table: one row per model; whether it learned (its learning gate), whether its validation
    curve is flat at the horizon (``flatness``: :func:`curve_flatness`), and one column per question with its
    claim's status (``status``: claim id to the ledger's status) and number (``entries``: the judge's); objective
    2's margin, a question of a depth, on both of its models' rows."""
    from icdl.repro.typeset import attention_name

    by = {e["claim"]: e for e in entries}
    rows = []
    for depth, att in N01_MODELS:
        first = by.get(model_claim("beats-ls", depth, att), {})
        learned = first.get("values", {}).get("models_learned")
        row = {"model (target depth, attention)": f"{depth}, {attention_name(att)}",
               "learned": "—" if learned is None else ("yes" if learned >= 1 else "no")}
        if flatness is not None:
            row["flat at the cap"] = flatness.get((depth, att), "—")
        for q, name in HEADERS.items():
            c = model_claim(q, depth, att)
            row[name] = _cell(by.get(c), status.get(c))
        row[OBJ2_HEADER] = _cell(by.get(obj2_claim(depth)), status.get(obj2_claim(depth)))
        rows.append(row)
    return pd.DataFrame(rows)


def objective1_words(entries: list[dict], status: dict[str, str], depth: int, tolerance: float) -> str:
    """Objective 1 at one target depth in a sentence, per attention: its status, the largest shortfall below the
    MLP up to the training length and its 90 % interval, against the tolerance (the chapter's first screen)."""
    from icdl.repro.typeset import attention_name

    by = {e["claim"]: e for e in entries}
    parts = []
    for att in ATTENTIONS:
        claim = model_claim("obj1", depth, att)
        e, st = by.get(claim), status.get(claim)
        if e is None or e.get("value") is None or st is None:
            parts.append(f"{attention_name(att)}: waits for the run")
            continue
        v = e["values"]
        parts.append(f"{attention_name(att)}, {_cell(e, st).split(',')[0]} -- short by {e['value']:.3f} (90 % "
                     f"interval {v['value_lo']:.3f} to {v['value_hi']:.3f})")
    return (f"objective 1 at target depth {depth} (R² within {tolerance:g} of the MLP trained on the prompt, on "
            f"every test prompt): " + "; ".join(parts)).replace("-0.", "−0.")


def every_words(entries: list[dict], status: dict[str, str]) -> str:
    """The every-model claims in one line each, with the per-model statuses they rest on, as the first table shows
    them: "beats least squares: inconclusive (per model: 3 pass, 1 fail, 2 not tested)"."""
    what = {"beats-ls": "beats least squares", "share": "learns over half of the MLP's gain", "obj1": "objective 1",
            "obj3": "objective 3"}
    by = {e["claim"]: e for e in entries}
    parts = []
    for q, name in what.items():
        marks = [_cell(by.get(c), status.get(c)).split(",")[0] for c in (model_claim(q, d, a) for d, a in N01_MODELS)]
        every = status.get(EVERY[f"gpt-n01-{q}"], "not yet covered")
        counts = ", ".join(f"{marks.count(m)} {m}" for m in ("pass", "fail", "inconclusive", NOT_TESTED)
                           if marks.count(m))
        parts.append(f"{name}: {_MARK.get(every, every)} (per model: {counts or 'none judged yet'})")
    return "; ".join(parts)


def design_words() -> str:
    """The design in one clause, for the chapter (every number from :data:`DESIGN`)."""
    from icdl.repro.typeset import count

    d = DESIGN
    return (f"profile {d['continues']}'s {len(N01_MODELS)} models (three seeds each) trained on to "
            f"{count(d['horizon'])} steps at the recipe the recipe scan chooses for their attention, scored every "
            f"{count(d['eval_every'])} steps on {count(d['eval_prompts'])} validation prompts, and the MLP trained on "
            f"the prompt scored on all {count(d['mlp_prompts'])} test prompts instead of 512")


def judged(icl: dict, shift: dict, train_examples: int, test_examples: int, tolerance: float,
           criteria: dict) -> list[dict]:
    """Every entry of the design from its run: :func:`judge_models`, :func:`judge_some`, :func:`judge_every`."""
    return (judge_models(icl, shift, train_examples, test_examples, tolerance) + [judge_some(icl, train_examples)]
            + judge_every(icl, shift, train_examples, test_examples, tolerance, criteria))


def state_words(done: bool) -> str:
    """Whether the design's run is committed, in words for the first screen."""
    return "their run is committed and judged below" if done else f"their run has not been made yet: {COMMAND}"
