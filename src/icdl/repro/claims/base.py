"""The types of the claims registry (:mod:`icdl.repro.claims`) and what its parts share: a claim, a
criterion's conditions, a mismatch band, the chapter ids, and the sec.-5 setting every deviation of the GPT
experiments names."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Claim:
    id: str
    source: str
    paper: str
    chapter: str | None = None
    test: str | None = None


def row(id, source, paper, chapter=None, test=None) -> Claim:  # a short constructor for the tables
    return Claim(id, source, paper, chapter, test)


#: the chapter ids (``notebooks/<id>.py``), one constant per chapter
ICGD_LINEAR = "icgd_linear"
GRADIENT = "gradient_decomposition"
LSA_CONSTRUCTION = "lsa_construction"
LSA_TRAINING = "lsa_training"
RELU_SUMS = "relu_sums"
PASSES = "attention_passes"
THEOREM1 = "icgd_transformer"
GPT_ICL = "gpt_icl"
GPT_N01 = "gpt_n01"
GPT_DEPTH = "gpt_depth"
GPT_MECHANISM = "gpt_mechanism"
GPT_SCALE = "gpt_scale"
COMPUTATION = "computation"
SOFTMAX = "softmax"
DIFFUSION = "diffusion_score"


# ---- criteria as data ------------------------------------------------------------------------------


_OPS = {"<": lambda v, t: v < t, "<=": lambda v, t: v <= t, ">": lambda v, t: v > t, ">=": lambda v, t: v >= t,
        "==": lambda v, t: v == t, "gate": lambda v, t: v >= t, "sized": lambda v, t: v >= t,
        "refutable": lambda v, t: v >= t}

#: the comparisons that are conditions on the design, not on the finding (:class:`Condition`)
GATE_OPS = ("gate", "sized", "refutable")


@dataclass(frozen=True)
class Condition:
    """One comparison of a criterion: the recorded number ``key`` against ``threshold`` by ``op``.

    Where the record also holds an interval for the number (``<key>_lo`` and ``<key>_hi``: over seeds and
    prompts, say), the comparison is decided by the interval: it holds when the whole interval lies on the
    passing side, fails when the whole interval lies on the failing side, and is undecided (``None``) when the
    interval straddles the threshold -- a margin inside the noise decides nothing. A number recorded without an
    interval (a deterministic check: the theory) is its own interval of one point, never undecided.

    ``op = "gate"``: a condition on the design, not on the finding (``key`` at least ``threshold``: a positive
    control passed, a candidate given a fair chance). Unmet, it leaves the whole claim undecided, whatever
    the other conditions say (:func:`criterion_verdict`): a verdict counts only where its gates are met.

    ``op = "sized"``: a gate that withholds only a *fail* (``key`` at least ``threshold``: a count claim's number of
    runs, sized before it ran by :func:`runs_needed`). A claim that some run does something passes on the one run
    that does, however few ran; that no run did is evidence only from enough runs. Unmet, it turns a fail into
    inconclusive and leaves a pass a pass.

    ``op = "refutable"``: a gate over several models that withholds only what the models short of it say (the
    learning gate, :data:`LEARNED`). Unmet, the claim fails where the models that met it fail it by themselves --
    its finding's conditions read on their numbers alone, recorded as ``<key>_learned`` with ``_lo``/``_hi``
    (their interval, adjusted for their count) -- and is inconclusive otherwise; it passes only where it is met.
    A fail by a model that learned was the claim's registered outcome before any gate existed: the gate was
    added to keep a model that never left the plateau from deciding, not to shield the models that did."""
    key: str
    op: str
    threshold: float

    def holds(self, values: dict) -> bool:
        v = values.get(self.key)
        return v is not None and v == v and bool(_OPS[self.op](float(v), self.threshold))  # NaN never holds

    def verdict(self, values: dict) -> bool | None:
        """True, False, or None where the recorded interval straddles the threshold (see the class)."""
        if self.op in GATE_OPS:
            return True if self.holds(values) else None
        lo, hi = values.get(f"{self.key}_lo"), values.get(f"{self.key}_hi")
        if lo is None or hi is None or self.op == "==":
            return self.holds(values)
        if not (lo == lo and hi == hi and lo <= hi):  # NaN or reversed ends: no interval to decide on
            return False
        ends = [self.holds({self.key: lo}), self.holds({self.key: hi})]
        return True if all(ends) else False if not any(ends) else None


def all_of(*conditions: tuple[str, str, float]) -> tuple[Condition, ...]:
    return tuple(Condition(k, op, float(t)) for k, op, t in conditions)


#: the learning gate of every claim of sec. 5 about trained models (:mod:`icdl.gpt_icl.core.learning`): each model
#: the claim is about leads the context mean's R² at the training length by at least 0.05 on the whole of the lead's
#: 90 % interval -- the margin is the main study's off-plateau margin, fixed before its reference run. Added to
#: criteria registered before it, under a registration of its own (:data:`GATES_ADDED`): a gate can only withhold a
#: verdict (leave a claim inconclusive), never make a pass or a fail, so adding one after a run cannot tune an answer.
#: Refutable since issue 67 (:data:`GATES_CHANGED`): it withholds only what the models short of it say -- a fail
#: by a model that learned stands, as the claim registered it before there was a gate
LEARNED = ("learned", "refutable", 0.05)

#: the gate of a claim about trained models judged on a study that trained one seed of each (issue 53): the number of
#: seeds every model was trained on must be at least 3, the main study's, so that the seed term of the interval
#: (icdl.gpt_icl.core.intervals) can be measured at all. Added under its own registration (:data:`GATES_ADDED`)
SEEDED = ("trained_seeds", "gate", 3)

#: the gate of a claim about which algorithm a trained model runs (issue 53): the same pipeline calls a planted GD
#: model nearest GD and a planted ridge model nearest a simple rule on the same task (``mech-power-*``), 1.0 where
#: both passed. Added under its own registration (:data:`GATES_ADDED`). Since issue 68 (9936b75) each claim reads its
#: own measure's power claim, whose plants carry the models' noise and include a nonlinear learner that is not GD
POWER = ("power", "gate", 1)

#: the paper's selection rule for LSA sec. 4 (issue 54): the analysis reads a run whose LayerNorm divides by the
#: variance (Table 1's correlation of 1/σ with 1/V above 0.9); a claim about "the analysed run" needs at least one
#: such run, and with none there is no run the paper would analyse -- the claim is left inconclusive, never judged on
#: a fallback pick. Registered with lsa-no-l1-chain/-fig3 (06ac159); added to the older claims under its own
#: registration (:data:`GATES_ADDED`)
DIVIDING = ("dividing_runs", "gate", 1)

#: gates added to criteria registered before them, each with the commit that registered it: ``tests/test_registered.py``
#: compares a claim's criterion without such a gate against its own registration, and the gate itself against the
#: registry at this commit
GATES_ADDED: dict[str, str] = {"learned": "2907274", "trained_seeds": "96b213f", "power": "f49cf8e",
                               "dividing_runs": "e988a1a"}

#: gates whose kind changed after claims were registered with them, under a registration of their own: the key, the
#: op it was registered with, the op it has now, and the commit that registered the change (``tests/test_registered.py``
#: reads a claim registered with the old op as registered with the new one, and checks the new one at that commit).
#: The learning gate became refutable (issue 67, 2026-12-07): the argument is in :class:`Condition`'s docstring
GATES_CHANGED: dict[str, tuple[str, str, str]] = {"learned": ("gate", "refutable", "04535b3")}

def runs_needed(rate: float, miss: float) -> int:
    """The fewest runs ``n`` for which a count claim "at least one run does it" sees none with probability below
    ``miss`` when each run does it independently with probability ``rate``: the smallest ``n`` with
    ``(1 − rate)^n < miss`` (power ``1 − miss`` at that rate). At the rate of LSA's Table 1 (2 of 10 runs divide)
    and ``miss = 0.05``: 14 runs; 5 runs see none with probability 0.33."""
    if not (0 < rate < 1 and 0 < miss < 1):
        raise ValueError(f"rate and miss must lie in (0, 1), got rate={rate}, miss={miss}")
    n = 1
    while (1 - rate) ** n >= miss:
        n += 1
    return n


#: the number of runs of a count claim (issue 68): a claim that at least one run does something, sized before it ran
#: so that at the rate it tests it sees none with probability below 0.05 (:func:`runs_needed`); with fewer runs a
#: count of none is inconclusive, not a fail (a ``sized`` condition)
RUNS = "runs"


#: 1.0 for a check that held, 0.0 for one that did not (for checks that are exact by construction)
HELD = ("held", "==", 1)

@dataclass(frozen=True)
class Mismatch:
    """A failed criterion we expect and can explain, registered before the run that judges it: the record
    is shown as ``mismatch`` only if it fails its criterion *and* its value (``quantity``) lies in ``band``;
    a failure outside the band, or of a claim not registered here, is ``fail`` and turns CI red.
    ``registered`` is the commit that registered this band (``git show`` it), ``judges`` the run it is
    about."""
    claim: str
    quantity: str
    band: tuple[float, float]
    reason: str
    registered: str = ""
    judges: str = ""

    def contains(self, value: float | None) -> bool:
        return value is not None and self.band[0] <= float(value) <= self.band[1]


#: the GPT-2 experiments' setting here against ICDL sec. 5 and Appendix F
SEC5 = ("models trained at d = 5 with 3 layers × 2 heads × width 64, the softmax model with a tanh warm phase and "
         "the ReLU-attention model started from its weights; ICDL: d = 20, 12 × 8 × 256, 500 000 steps, each from "
         "scratch on ReLU targets")


@dataclass(frozen=True)
class Replaced:
    """A claim whose design was replaced by a later one that asks the same question (or that was not asked
    again): one question has one live answer, on its latest design. The record keeps what the replaced claim
    said (``source``, ``paper``), the run it was judged on (``judged_on``: command and commit) and its verdict
    there (``status``, ``ours``), the commit that registered its criterion (``registered``; empty where the
    design was registered only by running it first), the live claims that now answer it (``by``; empty if
    none does) and why it was replaced (``reason``). The report's "Designs we replaced" lists these; the
    ledger no longer records them, and ``git show <registered>`` gives the criterion as it was."""
    id: str
    source: str
    paper: str
    status: str
    ours: str
    judged_on: str
    registered: str
    by: tuple[str, ...]
    reason: str
