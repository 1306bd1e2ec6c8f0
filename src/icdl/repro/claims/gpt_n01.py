"""The claims of chapter ``gpt_n01``: what it must reproduce, each criterion as data, and the
registrations, deviations and known failures of its claims (:mod:`icdl.repro.claims` assembles every
chapter's part)."""

from __future__ import annotations

from .base import GPT_N01, LEARNED, Claim, Condition, Replaced, all_of, row

# ---- the design trained until flat, asked model by model (issue 67) ------------------------------------------------
# Registered before any run of its design (icdl.gpt_icl.objectives.flat.DESIGN: profile n01's models continued from
# their committed checkpoints at the recipe the recipe scan chooses for their attention -- or trained from scratch at
# it where the scan replaces the incumbent -- to the scan's horizon of 14 000 steps, a validation curve every 500
# steps on 2 048 prompts, the MLP trained on the prompt scored on all 4 096 test prompts of the pretraining mixture,
# 512 of each shifted target; the command python -m icdl.gpt_icl --profile n01-flat --part main --part shift).
# Judged by icdl.gpt_icl.objectives.flat: each model (target depth, attention) on its own 90 % interval over its
# three seeds and the prompts, behind its own learning gate (LEARNED: an unmet gate withholds the model's verdict).

#: the models of profile n01, each the subject of its own claims (the registry names them; the studies train them)
N01_MODELS: tuple[tuple[int, str], ...] = tuple((d, a) for d in (3, 4, 6) for a in ("softmax", "relu"))
#: the questions asked of each model, with the column the chapter shows each under
QUESTIONS = {"beats-ls": "beats least squares", "share": "learns over half of the MLP's gain",
             "obj1": "within 0.05 of the MLP (objective 1)", "obj3": "within 0.05 on shifted targets (objective 3)"}
#: at least one model predicts better than least squares (no gate: a model that does has learned more than a
#: linear rule)
SOME = "gpt-n01f-some-beats-ls"
#: the every-model claims of profile n01 asked again of this design, under its ids (the same criteria)
EVERY = {c: c.replace("gpt-n01-", "gpt-n01f-") for c in ("gpt-n01-beats-ls", "gpt-n01-obj1", "gpt-n01-depth-gap",
                                                          "gpt-n01-share", "gpt-n01-obj2-length", "gpt-n01-obj3")}


def model_claim(question: str, depth: int, attention: str) -> str:
    """The id of the claim that asks ``question`` (a key of :data:`QUESTIONS`) of one model."""
    return f"gpt-n01f-{question}-d{depth}-{attention}"


def obj2_claim(depth: int) -> str:
    """The id of objective 2's length margin at one target depth (a question of the depth's two models)."""
    return f"gpt-n01f-obj2-length-d{depth}"


_FLAT_SOURCE = "ICDL sec. 5 at x ~ N(0, I), each model trained until flat (this book's question)"
_FLAT_TEST = "tests/test_gpt_flat.py::test_each_model_is_judged_on_its_own_numbers_behind_its_own_gate"
_PAPER = {"beats-ls": "predicts better than least squares on the prompt's examples",
          "share": "learns in context more than half of what a network trained on the prompt gains over least squares",
          "obj1": "has an ICL R² comparable to the MLP trained on the prompt (objective 1), within 0.05",
          "obj3": "has an ICL R² on targets with shifted parameters (μ = ±0.5) within 0.05 of the MLP's (objective 3)"}
_FLAT_CLAIMS: tuple[Claim, ...] = (
    *(row(model_claim(q, d, a), f"ICDL sec. 5 at x ~ N(0, I): the depth-{d} {a} model trained until flat (this "
          "book's question)", f"not claimed by ICDL in this form: the depth-{d} {a} model {text}", GPT_N01, _FLAT_TEST)
      for d, a in N01_MODELS for q, text in _PAPER.items()),
    *(row(obj2_claim(d), f"ICDL objective 2 (Figs. 3–4) at x ~ N(0, I): the depth-{d} models trained until flat",
          f"at target depth {d}, softmax loses more R² past the pretraining length than ReLU", GPT_N01, _FLAT_TEST)
      for d in sorted({d for d, _ in N01_MODELS})),
    row(SOME, _FLAT_SOURCE, "not claimed by ICDL: at least one trained transformer learns in context more than a "
        "linear rule -- it predicts better than least squares on the prompt's examples", GPT_N01,
        "tests/test_gpt_flat.py::test_some_model_passes_on_one_decided_model_and_fails_only_when_every_model_is_below"),
    *(row(ours, _FLAT_SOURCE, f"as {theirs}, asked of the models trained until flat", GPT_N01,
          "tests/test_gpt_flat.py::test_the_every_model_claims_are_profile_n01_s_judges_under_this_design_s_ids")
      for theirs, ours in EVERY.items()),
)

CLAIMS: tuple[Claim, ...] = _FLAT_CLAIMS

CRITERIA: dict[str, tuple[Condition, ...]] = {
    # registered before any run of its design (the models trained until flat: the comment above _FLAT_CLAIMS), judged
    # by icdl.gpt_icl.objectives.flat on the run's sums, each over its whole 90 % interval over seeds and prompts.
    # Per model (target depth, attention), behind its own learning gate: beats-ls, (MSE_LS − MSE)/MSE_LS at the MLP's
    # last position up to the training length on the paired prompts (now every test prompt) > 0; share,
    # (MSE_LS − MSE)/(MSE_LS − MSE_MLP) there > 0.5; obj1, the largest shortfall of its R² below the MLP's over the
    # MLP's positions up to the training length <= 0.05 (positions on their own intervals, the fail side adjusted
    # for their count); obj3, the same on the paired prompts of targets with μ = ±0.5. Per target depth, behind both
    # of its models' gates: objective 2's length margin, the ReLU model's mean change of R² past the training length
    # minus the softmax model's, > 0. SOME: the largest error relative to least squares over the models, its
    # interval's lower end the largest of the models' ends adjusted for their count, > 0 (no gate). EVERY: profile
    # n01's every-model criteria, unchanged
    **{model_claim(q, d, a): all_of(("value", ">", {"beats-ls": 0, "share": 0.5}[q]), LEARNED)
       for d, a in N01_MODELS for q in ("beats-ls", "share")},
    **{model_claim(q, d, a): all_of(("value", "<=", 0.05), LEARNED) for d, a in N01_MODELS for q in ("obj1", "obj3")},
    **{obj2_claim(d): all_of(("value", ">", 0), LEARNED) for d in sorted({d for d, _ in N01_MODELS})},
    SOME: all_of(("value", ">", 0)),
    "gpt-n01f-beats-ls": all_of(("value", ">", 0), LEARNED),
    "gpt-n01f-obj1": all_of(("value", "<=", 0.05), LEARNED),
    "gpt-n01f-depth-gap": all_of(("value", ">", 0), LEARNED),
    "gpt-n01f-share": all_of(("value", ">", 0.5), LEARNED),
    "gpt-n01f-obj2-length": all_of(("value", ">", 0), LEARNED),
    "gpt-n01f-obj3": all_of(("value", "<=", 0.05), LEARNED),
}

#: profile n01's every-model claims, replaced by the same claims on its models trained until flat (the report's
#: "Designs we replaced"; the verdicts are those the ledger recorded on profile n01's run)
_N01_RUN = "python -m icdl.gpt_icl --profile n01 --part main --part shift at 44b3ede"
_N01_REASON = ("judged on models trained for the budget the schedule scan fixed, three of six still improving when it "
               "ran out; asked again, with the same criteria, of the same models trained on to the recipe scan's "
               "horizon, the MLP scored on every test prompt (the design of objectives.flat)")
REPLACED: dict[str, Replaced] = {r.id: r for r in (
    Replaced("gpt-n01-beats-ls", "ICDL sec. 5 at x ~ N(0, I) (this book's question)",
             ("not claimed by ICDL in this form: where a linear fit within a prompt leaves at least 15 % of the"
              " label variance, every trained transformer (each averaged over its seeds) predicts better than "
              "least squares on the prompt's examples"),
             "inconclusive",
             ("smallest error relative to least squares over depths and attentions, same prompts: −0.911 (90 % "
              "interval −2.071 to −0.055, over seeds and prompts, each of the 6 numbers it ranges over on its "
              "own interval); not decided: 2 of 6 models missed the learning gate (0.05): target depth 4, relu "
              "leads by 0.130 (90 % interval 0.020 to 0.240): its seeds disagree; target depth 6, relu leads by"
              " 0.058 (90 % interval 0.034 to 0.082): its prompts are too few"),
             _N01_RUN, "21aab27", (EVERY["gpt-n01-beats-ls"],), _N01_REASON),
    Replaced("gpt-n01-obj1", "ICDL objective 1 at x ~ N(0, I) (this book's question)",
             ("not claimed by ICDL on this task: ICL R² comparable to the MLP trained on the prompt (objective "
              "1) where the targets are far from linear"),
             "fail",
             ("largest shortfall below the MLP up to the training length, same prompts: 0.321 (90 % interval "
              "0.173 to 0.426, over seeds and prompts, each of the 18 numbers it ranges over on its own "
              "interval); fails on the models that learned alone: 0.195 (90 % interval 0.094 to 0.285); 2 of 6 "
              "models missed the learning gate (0.05): target depth 4, relu leads by 0.130 (90 % interval 0.020"
              " to 0.240): its seeds disagree; target depth 6, relu leads by 0.058 (90 % interval 0.034 to "
              "0.082): its prompts are too few"),
             _N01_RUN, "21aab27", (EVERY["gpt-n01-obj1"],), _N01_REASON),
    Replaced("gpt-n01-depth-gap", "ICDL sec. 5 at x ~ N(0, I) (this book's question)",
             ("not claimed by ICDL: the transformer's excess error over the MLP, $(\\mathrm{MSE} - "
              "\\mathrm{MSE}_{\\mathrm{MLP}})/\\mathrm{MSE}_{\\mathrm{MLP}}$, grows with the depth of the target "
              "networks (6 layers against 3)"),
             "inconclusive",
             ("smaller over the attentions of the excess error over the MLP at target depth 6 minus depth 3: "
              "0.876 (90 % interval −0.433 to 4.832, over seeds and prompts, each of the 2 numbers it ranges "
              "over on its own interval); not decided: 2 of 6 models missed the learning gate (0.05): target "
              "depth 4, relu leads by 0.130 (90 % interval 0.020 to 0.240): its seeds disagree; target depth 6,"
              " relu leads by 0.058 (90 % interval 0.034 to 0.082): its prompts are too few"),
             _N01_RUN, "21aab27", (EVERY["gpt-n01-depth-gap"],), _N01_REASON),
    Replaced("gpt-n01-share", "ICDL sec. 5 at x ~ N(0, I), at a schedule fitted to the task (this book's question)",
             ("not claimed by ICDL: every transformer learns in context more than half of what a network "
              "trained on the prompt gains over least squares -- its share of that gain, "
              "$\\frac{\\mathrm{MSE}_{\\mathrm{LS}} - \\mathrm{MSE}}{\\mathrm{MSE}_{\\mathrm{LS}} - "
              "\\mathrm{MSE}_{\\mathrm{MLP}}}$, above 0.5"),
             "inconclusive",
             ("smallest share of the MLP's gain over least squares learned in context: −1.495 (90 % interval "
              "−3.049 to −0.093, over seeds and prompts, each of the 6 numbers it ranges over on its own "
              "interval); per model: depth 3 softmax: 0.630; depth 3 relu: 0.347; depth 4 softmax: 0.348; depth"
              " 4 relu: -0.073; depth 6 softmax: -0.089; depth 6 relu: -1.495; not decided: 2 of 6 models "
              "missed the learning gate (0.05): target depth 4, relu leads by 0.130 (90 % interval 0.020 to "
              "0.240): its seeds disagree; target depth 6, relu leads by 0.058 (90 % interval 0.034 to 0.082): "
              "its prompts are too few"),
             _N01_RUN, "452d7ca", (EVERY["gpt-n01-share"],), _N01_REASON),
    Replaced("gpt-n01-obj2-length", "ICDL objective 2 (Figs. 3–4) at x ~ N(0, I), at a schedule fitted to the task",
             ("softmax degrades past the pretraining length, ReLU less -- asked of models that learned a task "
              "far from linear"),
             "inconclusive",
             ("smallest margin over depths of the ReLU model's change past the training length over the softmax"
              " model's (both trained from scratch at one schedule): 0.189 (90 % interval −0.163 to 0.415, over"
              " seeds and prompts, each of the 3 numbers it ranges over on its own interval); not decided: 2 of"
              " 6 models missed the learning gate (0.05): target depth 4, relu leads by 0.130 (90 % interval "
              "0.020 to 0.240): its seeds disagree; target depth 6, relu leads by 0.058 (90 % interval 0.034 to"
              " 0.082): its prompts are too few"),
             _N01_RUN, "bb2eba8", (EVERY["gpt-n01-obj2-length"],), _N01_REASON),
    Replaced("gpt-n01-obj3", "ICDL objective 3 (Figs. 5–6) at x ~ N(0, I), at a schedule fitted to the task",
             ("ICL R² on targets with shifted parameters (μ = ±0.5) comparable to the MLP trained on the prompt"
              " -- asked of models that learned a task far from linear"),
             "fail",
             ("largest shortfall below the MLP on shifted targets (μ = ±0.5), same prompts: 1.221 (90 % "
              "interval 1.085 to 2.934, over seeds and prompts, each of the 36 numbers it ranges over on its "
              "own interval); fails on the models that learned alone: 1.211 (90 % interval 0.953 to 2.934); 2 "
              "of 6 models missed the learning gate (0.05): target depth 4, relu leads by 0.130 (90 % interval "
              "0.020 to 0.240): its seeds disagree; target depth 6, relu leads by 0.058 (90 % interval 0.034 to"
              " 0.082): its prompts are too few"),
             _N01_RUN, "bb2eba8", (EVERY["gpt-n01-obj3"],), _N01_REASON),
)}

#: the commit that registered each claim's criterion as it stands (``tests/test_registered.py`` reads the
#: registry at that commit and fails where a threshold, comparison or band differs today)
REGISTERED: dict[str, str] = {
    **{c.id: "1dd4219" for c in _FLAT_CLAIMS},
}

#: the setting of profile n01's models against ICDL's (the main study's own, SEC5, has a warm phase and a warm start
#: that this profile does not)
N01_SETTING = ("models trained at d = 5 with 3 layers × 2 heads × width 64, both attentions from scratch at the "
               "schedule fitted to the task (Adam, lr 1e-4, batch 64, 9 500 steps), with x ~ N(0, I) in training and "
               "test; ICDL: d = 20, 12 × 8 × 256, 500 000 steps, each from scratch on ReLU targets, x ~ N(−2, I)")

#: the setting of the design trained until flat (the comment above _FLAT_CLAIMS)
FLAT_SETTING = ("models trained at d = 5 with 3 layers × 2 heads × width 64 (profile n01's, trained on at the recipe "
                "the recipe scan chooses for their attention to 14 000 steps), with x ~ N(0, I) in training and test; "
                "ICDL: d = 20, 12 × 8 × 256, 500 000 steps, each from scratch on ReLU targets, x ~ N(−2, I)")

DEVIATIONS: dict[str, str] = {
    **{c.id: FLAT_SETTING for c in _FLAT_CLAIMS},
}

#: the failures of the design trained until flat, as its run (python -m icdl.gpt_icl --profile n01-flat --part main
#: --part shift at 6b93973) recorded them: each by a model past its learning gate, on its whole interval
_SCALE = ("at this scale (3 layers × 2 heads × width 64, 14 000 steps; ICDL's models are 12 × 8 × 256 trained for "
          "500 000) the transformer does not match a network fitted to each prompt where the targets are far from "
          "linear")
_OBJ1 = {(3, "relu"): "0.081 (0.060 to 0.093)", (4, "softmax"): "0.118 (0.099 to 0.132)",
         (6, "softmax"): "0.109 (0.085 to 0.126)"}
_SHARE = {(4, "softmax"): "0.374 (0.302 to 0.444)", (6, "softmax"): "0.387 (0.271 to 0.486)"}
_OBJ3 = {(3, "softmax"): "0.205 (0.104 to 0.272)", (3, "relu"): "0.297 (0.154 to 0.371)",
         (4, "softmax"): "0.640 (0.495 to 0.717)", (4, "relu"): "0.731 (0.297 to 0.905)",
         (6, "softmax"): "1.185 (1.031 to 1.982)"}
KNOWN_FAILURES: dict[str, str] = {
    **{model_claim("obj1", d, a): (f"the depth-{d} {a} model learned the task and predicts better than least squares, "
                                   f"but its R² stays {v} below the MLP trained on the prompt at its worst position up "
                                   f"to the training length, against a tolerance of 0.05: {_SCALE}")
       for (d, a), v in _OBJ1.items()},
    **{model_claim("share", d, a): (f"the depth-{d} {a} model beats least squares on its whole interval but learns "
                                    f"{v} of what the MLP trained on the prompt gains over it, not over half: the "
                                    "deeper the targets, the more of that gain is left unlearned")
       for (d, a), v in _SHARE.items()},
    **{model_claim("obj3", d, a): (f"on targets whose parameters are shifted (μ = ±0.5) the depth-{d} {a} model falls "
                                   f"{v} below the MLP trained on the prompt, further than on the pretraining targets: "
                                   "what it learned in context does not carry to targets outside its training "
                                   "distribution, while the MLP is trained afresh on each prompt")
       for (d, a), v in _OBJ3.items()},
    "gpt-n01f-obj1": ("on the models that learned the task, the largest shortfall below the MLP up to the training "
                      "length is 0.173 (90 % interval 0.084 to 0.288): three of the five fail by themselves (the "
                      "per-model claims above), and the depth-3 softmax model sits on the line"),
    "gpt-n01f-share": ("the depth-4 and depth-6 softmax models learned the task and learn less than half of the MLP's "
                       "gain over least squares on their whole intervals (the per-model claims above)"),
    "gpt-n01f-obj3": ("every model that learned falls more than 0.05 below the MLP on targets with shifted parameters, "
                      "each on its whole interval (the per-model claims above)"),
}

#: the code that computes this chapter's registered values from its runs' stored numbers (``claims.JUDGED_BY``)
JUDGED_BY: tuple[str, ...] = (
    "gpt_icl/core/intervals.py",
    "gpt_icl/core/learning.py",
    "gpt_icl/core/verdicts.py",
    "gpt_icl/objectives/flat.py",
    "gpt_icl/objectives/n01.py",
)
