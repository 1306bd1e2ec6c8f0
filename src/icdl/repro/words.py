"""A claim's words as a reader sees them (the claims box, the first page's lists, the report): a long claim's
headline with the rest folded, a question of the book's own said as one, the run a status was judged on in a
reader's words, and a status's CSS class. Nothing here reads or writes a ledger (:mod:`icdl.repro.ledger` does)."""

from __future__ import annotations

from .typeset import math_html

#: how the intro and the report show an inconclusive claim whose design left it unjudged -- a gate registered with
#: it is unmet (e.g. its models did not learn the task), so its number was not read -- apart from one whose number
#: was read and its interval straddles the line (the ledger's status is "inconclusive" for both; the reasons its
#: record's numbers give tell them apart: icdl.repro.pages.inconclusive_reasons)
NOT_TESTED = "not tested"
#: a claim's "ours" longer than this many characters is shown by its headline, the rest a click away
BRIEF = 200
#: how the registry's "paper" words open for a question of the book's own, one the paper does not ask
NOT_CLAIMED = ("not claimed by ICDL: ", "not claimed by ICDL in this form: ", "not claimed by ICDL on this task: ")


def paper_words(paper: str) -> str:
    """The paper column of the claims box: for a question of the book's own, "not claimed by ICDL" with the
    question folded under it (the claim's title and "ours" say what was asked; the bug: gpt_mechanism's box of
    fourteen such rows, each paper cell ten lines long, took three screens); else :func:`brief`."""
    said = next((p for p in NOT_CLAIMED if paper.startswith(p)), None)
    if said is None:
        return brief(paper, ("; ", " -- ", " – "))
    return (f'<details class="ours"><summary>{math_html(said.rstrip(": "))}</summary>'
            f"{math_html(paper[len(said):])}</details>")


def brief(ours: str, breaks: tuple[str, ...] = ("; ",)) -> str:
    """A claim's words for the claims box: whole when short; else its headline (up to the first of ``breaks`` outside
    brackets and math: for the measured words the number and its interval, for the paper's the claim before its
    qualification) with the rest folded under it (the bug: a chapter's box of nine claims, each three hundred words,
    took four screens before the chapter began). A headline whose interval goes on to say how it was taken ("90 %
    interval a to b, over seeds and prompts, …" or "… a to b over the seeds …") ends at the interval, the rest of
    its bracket folded too."""
    if len(ours) <= BRIEF:
        return math_html(ours)
    head, rest = headline(ours, breaks)
    if not rest:
        return math_html(ours)
    return f'<details class="ours"><summary>{math_html(head)}</summary>{math_html(rest)}</details>'


def clauses(ours: str) -> list[str]:
    """A claim's words cut at each "; " outside brackets and math: its headline first, then its conditions and
    notes, one a clause (:func:`shared_clauses`)."""
    out, depth, math, start = [], 0, False, 0
    for i, ch in enumerate(ours):
        math ^= ch == "$"
        depth += (ch in "([") - (ch in ")]")
        if depth == 0 and not math and ours.startswith("; ", i):
            out.append(ours[start:i])
            start = i + 2
    return out + [ours[start:]]


#: the shortest run of clauses, in characters, that the claims box says once for a group instead of on every row
SHARED = 60


def shared_clauses(words: list[str]) -> list[str]:
    """The clauses (:func:`clauses`) after the headline that every one of ``words`` (the "ours" of the claims
    judged on one run, two or more) holds, in the first one's order -- a caveat the claims box says once above
    them instead of on every row (the bug: gpt_mechanism's box repeated one 60-word caveat on eight rows); none
    where fewer than two claims or fewer than :data:`SHARED` characters are shared."""
    if len(words) < 2:
        return []
    cut = [clauses(w) for w in words]
    common = [c for c in cut[0][1:] if all(c in other[1:] for other in cut[1:])]
    return common if sum(map(len, common)) >= SHARED else []


def headline(ours: str, breaks: tuple[str, ...] = ("; ",)) -> tuple[str, str]:
    """``(head, rest)`` of a claim's words (:func:`brief`): the head up to the first of ``breaks`` outside
    brackets and math, ending at its interval where one is given; ``rest`` empty where there is no break."""
    import re

    depth, math, cut = 0, False, None
    for i, ch in enumerate(ours):
        math ^= ch == "$"
        depth += (ch in "([") - (ch in ")]")
        hit = next((b for b in breaks if ours.startswith(b, i)), None)
        if hit and depth == 0 and not math and i >= 20:
            cut = (i, len(hit))
            break
    if cut is None:
        return ours, ""
    head, rest = ours[:cut[0]], ours[cut[0] + cut[1]:].lstrip("-– ")
    at = head.find("interval ")
    ends = re.compile(r"[+−-]?\d[\d.]*(?: ?%)? to [+−-]?\d[\d.]*(?: ?%)?").search(head, at) if at >= 0 else None
    if ends and head.endswith(")") and head.count("(", 0, ends.end()) > head.count(")", 0, ends.end()):
        said = head[ends.end():-1].lstrip(",; ")  # the interval's own words ("over the seeds and …"), folded
        if said:
            head, rest = head[:ends.end()] + ")", said + "; " + rest
    return head, rest


#: the runs a status can be judged on, in a reader's words (any other label is shown as it is)
RUN_WORDS = {"reference": "on the reference run", "quick": "on the run this page executes",
             "paper": "on the paper's settings", "longer": "on the models trained longer",
             "wide": "on the twice-as-wide models", "n01": "on the run with x ~ N(0, I)",
             "fitted": "on the models trained at the schedule fitted to ICDL's task",
             "control": "on the models trained on linear targets",
             "fair": "on the rerun with GD's grid widened",
             # gpt_mechanism's profiles: its design over the main study's seeds, the earlier flow-time run, and the
             # seeds design on the models trained at x ~ N(0, I)
             "seeds": "over the main study's seeds", "flow": "on the flow-time grid",
             "seeds-n01": "over the seeds of the models trained at x ~ N(0, I)",
             "n01-flat": "on the models trained at x ~ N(0, I) until flat"}


def run_words(run: str) -> str:
    """The run a record was judged on as the claims box says it: ``reference`` -> "on the reference run"; a
    label of the chapter's own (``the ℓ1 scan (l1e-4, l1e-3)``, ``longer``) prefixed with "on"."""
    if run in RUN_WORDS:
        return RUN_WORDS[run]
    base, _, rest = run.partition(" (")  # "reference (20 000 of 20 000 epochs)": the run's words, then the rest
    if rest and base in RUN_WORDS:
        return f"{RUN_WORDS[base]} ({rest}"
    name, paren, rest = run.partition(" (")  # "reference (20 000 of 20 000 epochs)": the run's words, then the rest
    if paren and name in RUN_WORDS:
        return f"{RUN_WORDS[name]}{paren}{rest}"
    return run if run.startswith(("on ", "over ")) else f"on {run}"


def status_class(status: str) -> str:
    """The CSS class of a status cell: ``status-pass``, ``status-pass-deviation``, ``status-not-yet-covered``."""
    import re

    return "status-" + re.sub(r"[^a-z]+", "-", status).strip("-")
