"""What the intro opens with: the bottom line in sentences, then one row per result of the papers (the book's own
questions are in the report) -- every verdict, every measured number and every reason an undecided verdict rests
on read off the ledger, so that nothing on the first page can drift from the chapters.

A *result* groups the claims that check one statement of a document (a theorem with its lemmas, one objective
of the experiments, one table). Its verdict speaks the claims' own words (:data:`icdl.repro.ledger.STATUSES`):
the status its judged claims share, or **mixed** when they differ (the counts beside it); **not yet covered** when
no claim has a record. An inconclusive claim left unjudged by a gate of its design is shown as **not tested**
(:data:`icdl.repro.words.NOT_TESTED`), apart from one whose interval straddles its line. What each row checks,
and the kind of check against the paper (its *scale*), is written
here once; the number that shows how close the check came is the record of the row's ``measured`` claim.

======================  ===========================================================================
:data:`RESULTS`         the rows of the papers' results: label, claims, chapter, scale, what is checked
:func:`verdict`         a result's verdict from its claims' statuses
:func:`render_glance`   the papers' results as a MyST table (HTML: it renders offline on any screen)
:func:`bottom_line`     the first page's bottom line, one sentence per verdict, generated from the same statuses
======================  ===========================================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from .claims import CLAIMS, CLAIMS_BY_ID, document
from .words import NOT_TESTED, headline

#: the scales, as the table writes them: what the check is, said so that "yes" cannot read as more than it is
EXACT = "exact, to round-off"
APPROX = "approximate, within its bound"
FITTED = "fitted layers, small sizes"
BUILT = "counted on the built model"
MONTE = "Monte Carlo, small models"
GPT = "a small GPT-2 on two CPU cores"
PROTOCOL = "the paper's protocol"
COUNTED = "our counts and CPU timings"
SIGMOID = "small, with a sigmoid network"
SCALE_WORDS = {EXACT: "the construction executed with the paper's formulas; its error at floating-point round-off",
               APPROX: "the construction executed with the paper's formulas at the sizes we can run; its error "
                       "measured, within the stated bound or shrinking at the stated rate, not at round-off",
               FITTED: "softmax layers fitted to the ReLU ones rather than set by a formula; the share of a "
                       "gradient step they capture measured",
               BUILT: "widths, constants and layer counts read off the construction we build, beside the "
                      "authors' formulas",
               MONTE: "the risks estimated by Monte Carlo on small score models",
               COUNTED: "operations counted from the construction and timed on our CPU, not the authors' A100",
               SIGMOID: "a sigmoid network where the paper has a ReLU one (see the errata)",
               GPT: "d = 5, 3 layers × 2 heads × width 64 (4 heads × width 128 in the width study), 6 500 to "
                    "26 000 steps (by run; the longest in the scale study) on two CPU cores, where "
                    "ICDL trains d = 20, 12 × 8 × 256 for 500 000 steps on GPUs (the budget table of the chapter on "
                    "trained transformers sets parameters, steps and FLOPs side by side)",
               PROTOCOL: "the paper's data, model, optimiser and number of runs"}


@dataclass(frozen=True)
class Result:
    label: str
    claims: tuple[str, ...]
    chapter: str
    scale: str
    checks: str  # what the claims check, in one plain sentence
    measured: str = ""  # the claim whose record's words (what we measured) stand under the scale


RESULTS: tuple[Result, ...] = (
    Result("ICDL Problem 1, Def. 7", ("icdl-prompt", "icdl-icgd-one-step", "icdl-icgd-L-steps"), "icgd_linear",
           EXACT, "ReLU attention layers take gradient-descent steps on a linear model in their forward pass.",
           measured="icdl-icgd-one-step"),
    Result("ICDL Defs. 1–2, Lemmas 1 and 15", ("icdl-def1", "icdl-def2", "icdl-lemma1", "icdl-lemma15"),
           "gradient_decomposition", EXACT,
           "The gradient of an N-layer network splits into the quantities the construction computes.",
           measured="icdl-lemma1"),
    Result("ICDL Def. 4, Lemma 7", ("icdl-lemma7",), "relu_sums", APPROX,
           "Smooth activations and their derivatives are approximated by sums of ReLUs.", measured="icdl-lemma7"),
    Result("ICDL Lemmas 2–5", ("icdl-lemma2", "icdl-lemma3", "icdl-lemma4", "icdl-lemma5"), "attention_passes",
           APPROX, "Attention layers compute the network's forward and backward passes.", measured="icdl-lemma3"),
    Result("ICDL Theorem 1, Corollary 1.1", ("icdl-lemma6", "icdl-thm1", "icdl-cor1.1", "icdl-lemma14"),
           "icgd_transformer", APPROX,
           "The (2N+4)L-layer transformer follows L steps of gradient descent on an N-layer network.",
           measured="icdl-cor1.1"),
    Result("ICDL Theorem 2, Lemmas 16–17", ("icdl-thm2", "icdl-thm2-size", "icdl-lemma16", "icdl-lemma17"),
           "softmax", FITTED, "Softmax transformers can do the same, by approximation, given enough size.",
           measured="icdl-thm2-size"),  # the reference run's widths, not the quick run's four layers
    Result("ICDL objective 1 (Figs. 2–4)", ("icdl-obj1-fitted", "icdl-obj1-longer", "icdl-obj1-wider"),
           "gpt_icl", GPT,
           "A trained GPT-2 predicts in context about as well as a network trained on the prompt.",
           measured="icdl-obj1-fitted"),
    Result("ICDL objective 2 (Figs. 2–4)", ("icdl-obj2-shift-fitted", "icdl-obj2-length-fitted"), "gpt_icl", GPT,
           "Accuracy falls as the inputs move away from training; softmax degrades past the training length, "
           "ReLU attention less.", measured="icdl-obj2-length-fitted"),
    Result("ICDL objective 3 (Figs. 5–6)", ("icdl-obj3-fitted", "icdl-obj3-longer", "icdl-obj3-wider"),
           "gpt_icl", GPT,
           "With shifted target parameters the transformer stays comparable to the trained network.",
           measured="icdl-obj3-fitted"),
    Result("ICDL objective 4 (Fig. 7)", ("icdl-obj4",), "gpt_depth", GPT,
           "Deeper transformers learn better in context.", measured="icdl-obj4"),
    Result("ICDL Lemma 19 (diffusion)", ("icdl-lemma19",), "diffusion_score", SIGMOID,
           "A transformer learns a diffusion model's score in context.", measured="icdl-lemma19"),
    Result("REB: sums of ReLUs", ("reb-sigmoid-sum", "reb-multiplication-sum"), "relu_sums", APPROX,
           "The authors' fits for sigmoid and for the multiplication layer reach their stated accuracy.",
           measured="reb-multiplication-sum"),
    Result("REB: widths and constants", ("reb-width", "reb-sigmoid-constants", "reb-layer-counts"),
           "icgd_transformer", BUILT,
           "The construction's width, constants and layer count as the authors state them.", measured="reb-width"),
    Result("REB: cost", ("reb-flops", "reb-complexity", "reb-times"), "computation", COUNTED,
           "In-context learning by the construction against training the network directly: FLOPs, order, time.",
           measured="reb-flops"),
    Result("REB: corrected score matching", ("reb-dsm",), "diffusion_score", MONTE,
           "The authors' corrected denoising targets.", measured="reb-dsm"),
    Result("LSA sec. 3, Appendices A–B", ("lsa-construction", "lsa-appendix-a", "lsa-appendix-b"),
           "lsa_construction", APPROX,
           "LayerNorm divides by the variance, so two attention layers compute least squares.",
           measured="lsa-construction"),
    Result("LSA Table 1", ("lsa-table1-error", "lsa-table1-corr", "lsa-conclusion"), "lsa_training", PROTOCOL,
           "Trained models reach small errors, and some runs divide by the variance through LayerNorm.",
           measured="lsa-table1-error"),
    Result("LSA Fig. 2", ("lsa-fig2", "lsa-l1-dominance"), "lsa_training", PROTOCOL,
           "One query cell carries the estimate (also asked at stronger ℓ1 penalties).", measured="lsa-fig2"),
    Result("LSA Table 2", ("lsa-table2", "lsa-l1-table2"), "lsa_training", PROTOCOL,
           "That cell computes the least-squares estimate across prompts (also at stronger ℓ1 penalties).",
           measured="lsa-table2"),
    Result("LSA Fig. 3", ("lsa-fig3-line",), "lsa_training", PROTOCOL,
           "Through that cell alone the output follows the least-squares line.", measured="lsa-fig3-line"),
    Result("LSA sec. 4 without ℓ1", ("lsa-no-l1-sized", "lsa-no-l1-chain-sized", "lsa-no-l1-fig3-sized"),
           "lsa_training", PROTOCOL,
           "Training without the ℓ1 penalty gives \"similar results\" (one sentence, no numbers): asked as some run "
           "dividing in 14 runs, and the chain and Fig. 3 in the runs that divide."),
)

#: why a claim is inconclusive, in a few words for a table cell: an unmet gate of its design (by the gate's key,
#: :data:`icdl.repro.claims.GATE_WORDS` has the full sentences), or an interval across its line
GATE_SHORT = {"learned": "not every model learned the task", "trained_seeds": "one training seed",
              "seeds": "fewer than three seeds measured", "flow": "GD's member at its grid's edge",
              "power": "the measures' power not shown", "control": "the positive control not passed",
              "tuned": "the learning rate not tuned", "dividing_runs": "no run the paper would analyse"}
STRADDLES = "an interval across its line"

_FAILED, _PASSED = {"fail", "mismatch"}, {"pass", "pass (deviation)"}
#: a result whose judged claims do not share one status (the counts stand beside it)
MIXED = "mixed"


def verdict(statuses: list[str]) -> str:
    """A result's verdict from its claims' statuses, in the statuses' own words: the one status its judged
    claims share (``pass (deviation)`` when every one holds and some only under a changed setting), else
    ``mixed``; claims without a record are left out unless no claim has one (``not yet covered``)."""
    judged = [s for s in statuses if s != "not yet covered"]
    if not judged:
        return "not yet covered"
    kinds = set(judged)
    if len(kinds) == 1:
        return judged[0]
    return "pass (deviation)" if kinds <= _PASSED else MIXED


def _counts(statuses: list[str]) -> str:
    """``2 pass · 1 fail``: the statuses of a result's claims, most common first (ties in the statuses' order)."""
    order = ("pass", "pass (deviation)", "fail", "mismatch", "inconclusive", NOT_TESTED, "not yet covered")
    tally = {s: statuses.count(s) for s in order if s in statuses}
    return " · ".join(f"{n} {s}" for s, n in sorted(tally.items(), key=lambda kv: -kv[1]))


def _link(chapter: str, text: str, to_html) -> str:
    return f'<a href="../notebooks/{chapter}.html">{to_html(text)}</a>'


def _status(word: str, status_class) -> str:
    return f'<span class="{status_class(word)}"><b>{escape(word)}</b></span>'


def _question(claim) -> str:
    """A question of the book's own, as the tables write it: its statement without the registry's prefix."""
    from .words import NOT_CLAIMED

    question = claim.paper
    for prefix in NOT_CLAIMED:
        question = question.removeprefix(prefix)
    return question[:1].upper() + question[1:]


def _against(claim: str) -> str:
    """The line a claim's number is judged against, as the table says it beside the number: " against ≤ 0.05"
    (the registered conditions on ``value``; empty for a check with none, such as an exact one)."""
    from .claims import CRITERIA, GATE_OPS
    from .typeset import relation

    lines = [f"{relation(c.op)} {c.threshold:g}" for c in CRITERIA.get(claim, ())
             if c.key == "value" and c.op not in GATE_OPS and c.op != "=="]
    return f" against {' and '.join(lines)}" if lines else ""


def why_inconclusive(values: dict, gates: list[str]) -> list[str]:
    """What an inconclusive verdict rests on, for the table: the unmet gates of its design (``gates``: their keys)
    in :data:`GATE_SHORT`'s words -- the learning gate with its count where the record has one ("2 of 6 models
    did not learn the task", "none of the 6 models learned the task") -- or, with every gate met,
    :data:`STRADDLES`."""
    return [_learned_words(values) if g == "learned" else GATE_SHORT.get(g, g) for g in gates] or [STRADDLES]


def _learned_words(values: dict) -> str:
    n, ok = values.get("models"), values.get("models_learned")
    if n is None or ok is None:
        return GATE_SHORT["learned"]
    n, ok = int(n), int(ok)
    return f"none of the {n} models learned the task" if ok == 0 else f"{n - ok} of {n} models did not learn the task"


def render_glance(statuses: dict[str, str], status_class, to_html=escape, ours: dict[str, str] | None = None,
                  why: dict[str, list[str]] | None = None) -> str:
    """The table of the papers' results as MyST markdown (``statuses``: claim id -> status, from the ledger), each
    row linked to its chapter; ``ours`` (claim id -> the record's words of what was measured) fills in what each
    row's check reached under its scale, by its headline (the number and its interval); ``status_class`` gives a
    status its CSS class and ``to_html`` turns a claim's words into a cell (the ledger's ``math_html`` hands its
    formulas to MathJax; the ledger passes both, so this module needs no import of it). A row is one line: the result,
    its verdict, and what we measured with what held an undecided verdict back; what the result checks and its scale
    are folded under the measurement, and the scales' words in a fold under the table."""
    missing = sorted({c for r in RESULTS for c in r.claims} - set(CLAIMS_BY_ID))
    if missing:
        raise KeyError(f"the glance names claims the registry does not have: {missing}")
    ours, why = ours or {}, why or {}
    rows = []
    for r in RESULTS:
        got = [statuses.get(c, "not yet covered") for c in r.claims]
        word = verdict(got)
        counted = f"<br><small>{_counts(got)}</small>" if len(got) > 1 and word == MIXED else ""
        undecided, held_back = [c for c in r.claims if statuses.get(c) in ("inconclusive", NOT_TESTED)], ""
        reasons = list(dict.fromkeys(x for c in undecided for x in why.get(c, ())))
        if reasons:  # what an undecided verdict rests on: the gates its design did not meet, each with how many of
            # the row's undecided claims it holds back where not all (a reason of one claim is not the row's)
            held = {x: sum(x in why.get(c, ()) for c in undecided) for x in reasons}
            said = [x if held[x] == len(undecided) else f"{x} ({held[x]} of {len(undecided)} claims)" for x in reasons]
            held_back = f"<br><small>not decided: {escape('; '.join(said))}</small>"
        waiting = sum(s == "not yet covered" for s in got)
        # a claim of the row whose run is not made: said, never dropped (a mixed row's counts say it already)
        if waiting and word not in ("not yet covered", MIXED):
            counted += f"<br><small>{waiting} of {len(got)} claims wait for their run</small>"
        seen = ours.get(r.measured, "—") if r.measured else ""
        # the number and its interval; the rest is in the report
        seen = headline(seen)[0] if seen not in ("", "—") else seen
        which = f"{CLAIMS_BY_ID[r.measured].source}: " if r.measured and len(r.claims) > 1 else ""
        found = to_html(which + seen + _against(r.measured)) if seen not in ("", "—") else escape(r.checks)
        # one line per result (issue 69: the table took 4 000 px of the first page): what we measured, and what held
        # an undecided verdict back, in sight; what the result checks and the scale of the check a click away
        rows.append(f"<tr><td>{_link(r.chapter, r.label, to_html)}</td><td>{_status(word, status_class)}{counted}"
                    f"</td><td><details class=\"glance-row\"><summary>{found}{held_back}</summary>"
                    f"<b>Checks:</b> {escape(r.checks)} <b>Scale:</b> <i>{escape(r.scale)}</i></details></td></tr>")
    papers = ("<table class=\"glance results\"><thead><tr><th>Result</th><th>Verdict</th>"
              "<th>What we measured (a click on it: what the result checks, at what scale)</th></tr></thead><tbody>"
              + "".join(rows) + "</tbody></table>")
    scales = "; ".join(f"*{k}*: {v}" for k, v in SCALE_WORDS.items())
    return (f"{papers}\n\n:::{{dropdown}} The scales of the checks, in words\n{scales}. A result's verdict is the "
            f"status its claims share, or *mixed* with their counts.\n:::\n")


def bottom_line(statuses: dict[str, str], to_html=escape) -> str:
    """The first page's bottom line as a markdown list: the papers' results grouped by verdict (the passes by the
    kind of check they rest on), then the count of this book's own questions by status -- every word read off
    ``statuses``, so the sentences cannot say more than the ledger."""
    rows = [(r, verdict([statuses.get(c, "not yet covered") for c in r.claims])) for r in RESULTS]

    def names(picked) -> str:
        return "; ".join(_link(r.chapter, r.label, to_html) for r in picked)

    lines = []
    passed = [r for r, w in rows if w == "pass"]
    if passed:
        kinds = "; ".join(f"{sum(r.scale == scale for r in passed)} *{scale}*"
                          for scale in dict.fromkeys(r.scale for r in passed))
        lines.append(f"* **{len(passed)} of the papers' {len(rows)} results pass**, by the kind of check they "
                     f"rest on: {kinds} (the table below names them).")
    for word, one, many in (("pass (deviation)", "passes only under a setting we changed",
                             "pass only under a setting we changed"),
                            (MIXED, "is mixed: some of its claims hold and some do not",
                             "are mixed: some of their claims hold and some do not"),
                            ("mismatch", "misses within a margin registered before its run",
                             "miss within a margin registered before their run"),
                            ("fail", "fails", "fail"),
                            ("inconclusive", "is inconclusive: an interval straddles its line",
                             "are inconclusive: an interval straddles their line"),
                            (NOT_TESTED, "is not tested: a gate registered with it is unmet (the table says which), "
                                         "so its number decides nothing",
                             "are not tested: a gate registered with them is unmet (the table says which), so their "
                             "numbers decide nothing"),
                            ("not yet covered", "waits for its run", "wait for their run")):
        picked = [r for r, w in rows if w == word]
        if picked:
            lines.append(f"* **{len(picked)} {one if len(picked) == 1 else many}** — {names(picked)}.")
    own = [statuses.get(c.id, "not yet covered") for c in CLAIMS if document(c.id) == "book"]
    lines.append(f"* **This book's own {len(own)} questions**: {_counts(own)}.")
    return "\n".join(lines) + "\n"
