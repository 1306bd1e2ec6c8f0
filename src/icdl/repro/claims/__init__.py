"""The registry of every result the book must reproduce from the three source documents
(ICDL, the authors' answers to its reviewers REB, and Hagiwara's LSA; cited in ``book/references.bib``).

One :class:`Claim` per row of the reproducibility report. ``source`` is the item
in the words of the papers' own numbering, ``paper`` the paper's value or qualitative claim.
``chapter`` is the id of the chapter that records it (``notebooks/<chapter>.py``; one constant
per chapter in :mod:`~icdl.repro.claims.base`); ``None`` means not yet covered,
and the report lists it as such. ``test`` is the pytest node that guards the
number or the construction behind the record.

A claim with a chapter must have a record in ``results/ledger/`` (checked by
``tests/test_ledger.py``). Each chapter's claims, criteria, registrations, deviations and known failures are
data in a part of their own (``icdl/repro/claims/<chapter>.py``, on the types of :mod:`~icdl.repro.claims.base`);
this module assembles the parts in the book's order and answers every question about them. Adding a claim to a
chapter's part is how the chapter registers what it promises to check.
"""

from __future__ import annotations

from types import ModuleType

from . import (
    attention_passes,
    computation,
    diffusion_score,
    gpt_depth,
    gpt_icl,
    gpt_mechanism,
    gpt_n01,
    gpt_scale,
    gradient_decomposition,
    icgd_linear,
    icgd_transformer,
    lsa_construction,
    lsa_training,
    relu_sums,
    softmax,
)
from .base import GATE_OPS, GATES_ADDED, GATES_CHANGED, Claim, Condition, Mismatch, Replaced

#: every chapter's part, in the book's order (the report lists the claims in this order)
PARTS: tuple[ModuleType, ...] = (icgd_linear, gradient_decomposition, relu_sums, attention_passes, icgd_transformer,
                                 softmax, gpt_icl, gpt_n01, gpt_depth, gpt_scale, gpt_mechanism, diffusion_score,
                                 computation, lsa_construction, lsa_training)


def _merged(name: str) -> dict:
    """The parts' dictionaries ``name`` as one; a key in two parts is an error (one claim, one chapter)."""
    out: dict = {}
    for part in PARTS:
        mine = getattr(part, name, {})
        twice = sorted(set(out) & set(mine))
        if twice:
            raise RuntimeError(f"{name} of {part.__name__} repeats {twice}: each claim belongs to one chapter")
        out.update(mine)
    return out


CLAIMS: tuple[Claim, ...] = tuple(c for part in PARTS for c in part.CLAIMS)
#: every claim's criterion, as the numbers a chapter records and the comparisons they must pass -- all of
#: them (the ledger re-judges every stored record from its numbers, passes included). A chapter's own
#: verdict must agree with this table, or recording the claim fails. ``value`` is also the number a
#: registered mismatch's band is about.
CRITERIA: dict[str, tuple[Condition, ...]] = _merged("CRITERIA")
#: bands registered before the run they judge (a failed criterion whose value lies in the band is ``mismatch``)
MISMATCHES: dict[str, Mismatch] = _merged("MISMATCHES")
#: bands that were registered and withdrawn, with the reason: a band registered after a run of its design had
#: been seen (or one so wide that it contains almost any failure) says little about the run it judges. Their
#: claims are judged by the criterion alone (pass, fail or inconclusive); the report lists them.
WITHDRAWN: dict[str, str] = _merged("WITHDRAWN")
#: the commit that registered each claim's criterion as it stands (``git show <commit>:…/claims/<chapter>.py``, or
#: the single ``claims.py`` before the split): a test (``tests/test_registered.py``) reads every one and fails
#: where a threshold, comparison or band differs today from what was registered, or where a committed result the
#: claim is judged on was made before it
REGISTERED: dict[str, str] = _merged("REGISTERED")
#: claims registered under another id (today's id -> the id in the registry at the registering commit)
RENAMED: dict[str, str] = _merged("RENAMED")
#: Claims whose check runs under a stated change of the paper's setting, registered with the change: a record
#: that meets its criterion is ``pass (deviation)``, never a plain ``pass``, and its report entry names the change.
DEVIATIONS: dict[str, str] = _merged("DEVIATIONS")
#: Claims whose criterion fails outside any band registered before the run. They stay ``fail`` -- in the
#: ledger, the report and the chapters -- and are listed here with what was seen, so that CI does not block
#: on a failure that is already known and shown; a listed claim that stops failing turns CI red until it is
#: removed from this list (``tests/test_ledger.py``). A failure that is not listed turns CI red.
KNOWN_FAILURES: dict[str, str] = _merged("KNOWN_FAILURES")
#: designs replaced by a later one that asks the same question (:class:`~icdl.repro.claims.base.Replaced`): one
#: question, one live claim; the replaced ones are listed in the report with their verdict at the time, and no
#: chapter records them any more
REPLACED: dict[str, Replaced] = _merged("REPLACED")
#: claims whose value is a timing of the machine that runs the chapter (what is timed): their digits differ from
#: run to run, their verdict does not (:func:`icdl.repro.ledger._same_ledger`)
TIMED: dict[str, str] = _merged("TIMED")


#: per chapter, the source files (paths in the package ``icdl``) that compute its registered claims' values from a
#: run's stored numbers (the judge, the intervals, the gates): :meth:`icdl.repro.ledger.Ledger.save` writes their
#: digests beside the records (:func:`icdl.repro.ledger.judge_digests`), and ``tests/test_registered.py`` fails where
#: the committed ledger was judged by other code than today's -- a registration pins the statistic, not only its
#: threshold
JUDGED_BY: dict[str, tuple[str, ...]] = {part.__name__.rsplit(".", 1)[-1]: part.JUDGED_BY
                                         for part in PARTS if hasattr(part, "JUDGED_BY")}


def _check_replaced() -> None:
    live = {c.id for c in CLAIMS}
    twice = sorted(set(REPLACED) & (live | set(CRITERIA) | set(REGISTERED) | set(KNOWN_FAILURES)))
    unknown = sorted({b for r in REPLACED.values() for b in r.by} - live)
    if twice or unknown:
        raise RuntimeError(f"replaced claims still live: {twice}; replaced by claims that are not live: {unknown}")


_check_replaced()


#: the documents the claims come from, by the prefix of their ids, in the order the summaries list them
DOCUMENTS = {"icdl": "ICDL (the paper)", "reb": "REB (its review discussion)", "lsa": "LSA (Hagiwara)",
             "book": "This book's own questions"}
#: claim-id prefixes of this book's own questions (which algorithm the models run; what longer training does; our
#: own forms of the GPT experiments' claims)
_BOOK_PREFIXES = ("mech", "scale", "gpt")


def document(claim_id: str) -> str:
    """The document a claim comes from (a key of :data:`DOCUMENTS`), from its id's prefix."""
    prefix = claim_id.split("-", 1)[0]
    prefix = "book" if prefix in _BOOK_PREFIXES else prefix
    if prefix not in DOCUMENTS:
        raise KeyError(f"claim id {claim_id!r} has no known document prefix; known: {sorted(DOCUMENTS)}")
    return prefix


CLAIMS_BY_ID: dict[str, Claim] = {c.id: c for c in CLAIMS}
if len(CLAIMS_BY_ID) != len(CLAIMS):  # pragma: no cover - guards edits of the table above
    raise RuntimeError("duplicate claim ids in icdl.claims.CLAIMS")


def get_claim(claim_id: str) -> Claim:
    try:
        return CLAIMS_BY_ID[claim_id]
    except KeyError:
        raise KeyError(f"unknown claim id {claim_id!r}; known ids: {sorted(CLAIMS_BY_ID)}") from None


def claims_for(chapter: str) -> list[Claim]:
    return [c for c in CLAIMS if c.chapter == chapter]


def criterion_verdict(claim: str, values: dict) -> bool | None:
    """The registered criterion of ``claim`` on the recorded numbers ``values``: None (inconclusive) if a gate
    of its design is not met; else False if any condition fails, else None if any is undecided by its interval
    (:meth:`Condition.verdict`), else True."""
    if claim not in CRITERIA:
        raise KeyError(f"claim {claim!r} has no registered criterion in icdl.repro.claims.CRITERIA")
    criterion = CRITERIA[claim]
    if any(c.op == "gate" and c.verdict(values) is None for c in criterion):
        return None  # a gate not met: the design cannot decide this claim
    finding = [c for c in criterion if c.op not in GATE_OPS]
    verdict = _combined([c.verdict(values) for c in finding])
    if any(c.op == "refutable" and c.verdict(values) is None for c in criterion):
        # some model missed the gate: only the models that met it decide, and only a fail (Condition, "refutable")
        verdict = False if _combined([_on_learned(c, values) for c in finding]) is False else None
    if verdict is False and any(c.op == "sized" and c.verdict(values) is None for c in criterion):
        return None  # too few runs for "none did" to be evidence: a sized gate withholds only a fail
    return verdict


def _combined(verdicts: list[bool | None]) -> bool | None:
    return False if False in verdicts else None if None in verdicts else True


def _on_learned(c: Condition, values: dict) -> bool | None:
    """``c`` read on the numbers of the models that met the learning gate (``<key>_learned``, ``_lo``, ``_hi``);
    None where none did or none was recorded."""
    v = values.get(f"{c.key}_learned")
    if v is None or v != v:
        return None
    return c.verdict({c.key: v, f"{c.key}_lo": values.get(f"{c.key}_learned_lo"),
                      f"{c.key}_hi": values.get(f"{c.key}_learned_hi")})


#: a gate's key as the reader reads it (:func:`unmet_gates`)
GATE_WORDS = {"control": "the positive control passes",
              "dividing_runs": "some run's LayerNorm divides by the variance (Table 1 > 0.9): a run the paper "
                               "would analyse",
              "runs": "enough runs that none doing it would be unlikely at the rate the claim tests",
              "flow": "every chosen GD member lies inside its grid in flow time ηL, its η's edge flat",
              "tuned": "the wider models' learning rate was chosen by a scan at their width",
              "seeds": "every model is measured on three seeds",
              "trained_seeds": "every model was trained on three seeds (the seed term of the interval measured)",
              "power": "the measures tell a planted GD model from a planted ridge model on this task",
              "learned": "every model learned the task: its R² at the training length leads the context mean's by "
                         "the registered margin on the whole 90 % interval"}


def unmet_gates(claim: str, values: dict) -> list[str]:
    """The gates of ``claim``'s criterion that ``values`` do not meet, in words (:data:`GATE_WORDS`)."""
    return [GATE_WORDS.get(c.key, c.key) for c in CRITERIA.get(claim, ())
            if c.op in GATE_OPS and c.verdict(values) is None]


def criterion_holds(claim: str, values: dict) -> bool:
    """Whether the recorded numbers ``values`` meet the registered criterion of ``claim`` (decidedly: an
    inconclusive verdict does not hold)."""
    return criterion_verdict(claim, values) is True


__all__ = ["CLAIMS", "CRITERIA", "GATE_OPS", "GATES_ADDED", "GATES_CHANGED",
           "REPLACED", "Claim", "Condition", "Mismatch", "Replaced"]
