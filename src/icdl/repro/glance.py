"""The bottom line that the intro and the report open with: one row per result of the papers, then the book's
own questions, each row's verdict generated from the ledger (so it cannot drift from the chapters).

A *result* groups the claims that check one statement of a document (a theorem with its lemmas, one objective
of the experiments, one table). Its verdict is read off its claims' statuses: **yes** when all pass, **yes,
under a changed setting** when some pass only under a stated deviation, **partly** when some hold and some do
not, **no** when none holds, **undecided** when an interval straddles its line and nothing failed, **not yet
run** when no claim has a record. What each row checks, and at what scale against the paper, is written here
once; the numbers are in the report and the chapters.

======================  ===========================================================================
:data:`RESULTS`         the rows of the papers' results: label, claims, chapter, scale, what is checked
:func:`verdict`         a result's verdict from its claims' statuses
:func:`render_glance`   both tables as MyST markdown (HTML tables: they render offline on any screen)
======================  ===========================================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from .claims import CLAIMS, CLAIMS_BY_ID, document

#: the scales, as the table writes them: what the check is, said so that "yes" cannot read as more than it is
EXACT = "exact, to round-off"
APPROX = "approximate, within its bound"
FITTED = "fitted layers, small sizes"
BUILT = "counted on the built model"
MONTE = "Monte Carlo, small models"
GPT = "about 100× smaller than the paper's"
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
               GPT: "d = 5, 3 layers × 2 heads × width 64, 6 500 steps on two CPU cores, where ICDL trains d = 20, "
                    "12 × 8 × 256 for 500 000 steps",
               PROTOCOL: "the paper's data, model, optimiser and number of runs"}


@dataclass(frozen=True)
class Result:
    label: str
    claims: tuple[str, ...]
    chapter: str
    scale: str
    checks: str  # what the claims check, in one plain sentence


RESULTS: tuple[Result, ...] = (
    Result("ICDL Problem 1, Def. 7", ("icdl-prompt", "icdl-icgd-one-step", "icdl-icgd-L-steps"), "icgd_linear",
           EXACT, "ReLU attention layers take gradient-descent steps on a linear model in their forward pass."),
    Result("ICDL Defs. 1–2, Lemmas 1 and 15", ("icdl-def1", "icdl-def2", "icdl-lemma1", "icdl-lemma15"),
           "gradient_decomposition", EXACT,
           "The gradient of an N-layer network splits into the quantities the construction computes."),
    Result("ICDL Def. 4, Lemma 7", ("icdl-lemma7",), "relu_sums", APPROX,
           "Smooth activations and their derivatives are approximated by sums of ReLUs."),
    Result("ICDL Lemmas 2–5", ("icdl-lemma2", "icdl-lemma3", "icdl-lemma4", "icdl-lemma5"), "attention_passes",
           APPROX, "Attention layers compute the network's forward and backward passes."),
    Result("ICDL Theorem 1, Corollary 1.1", ("icdl-lemma6", "icdl-thm1", "icdl-cor1.1", "icdl-lemma14"),
           "icgd_transformer", APPROX,
           "The (2N+4)L-layer transformer follows L steps of gradient descent on an N-layer network."),
    Result("ICDL Theorem 2, Lemmas 16–17", ("icdl-thm2", "icdl-thm2-size", "icdl-lemma16", "icdl-lemma17"),
           "softmax", FITTED, "Softmax transformers can do the same, by approximation, given enough size."),
    Result("ICDL objective 1 (Figs. 2–4)", ("icdl-obj1", "icdl-obj1-longer", "icdl-obj1-wider"), "gpt_icl", GPT,
           "A trained GPT-2 predicts in context about as well as a network trained on the prompt."),
    Result("ICDL objective 2 (Figs. 2–4)", ("icdl-obj2-shift", "icdl-obj2-length"), "gpt_icl", GPT,
           "Accuracy falls as the inputs move away from training; softmax degrades past the training length, "
           "ReLU attention less."),
    Result("ICDL objective 3 (Figs. 5–6)", ("icdl-obj3", "icdl-obj3-longer", "icdl-obj3-wider"), "gpt_icl", GPT,
           "With shifted target parameters the transformer stays comparable to the trained network."),
    Result("ICDL objective 4 (Fig. 7)", ("icdl-obj4",), "gpt_depth", GPT,
           "Deeper transformers learn better in context."),
    Result("ICDL Lemma 19 (diffusion)", ("icdl-lemma19",), "diffusion_score", SIGMOID,
           "A transformer learns a diffusion model's score in context."),
    Result("REB: sums of ReLUs", ("reb-sigmoid-sum", "reb-multiplication-sum"), "relu_sums", APPROX,
           "The authors' fits for sigmoid and for the multiplication layer reach their stated accuracy."),
    Result("REB: widths and constants", ("reb-width", "reb-sigmoid-constants", "reb-layer-counts"),
           "icgd_transformer", BUILT,
           "The construction's width, constants and layer count as the authors state them."),
    Result("REB: cost", ("reb-flops", "reb-complexity", "reb-times"), "computation", COUNTED,
           "In-context learning by the construction against training the network directly: FLOPs, order, time."),
    Result("REB: corrected score matching", ("reb-dsm",), "diffusion_score", MONTE,
           "The authors' corrected denoising targets."),
    Result("LSA sec. 3, Appendices A–B", ("lsa-construction", "lsa-appendix-a", "lsa-appendix-b"),
           "lsa_construction", APPROX,
           "LayerNorm divides by the variance, so two attention layers compute least squares."),
    Result("LSA Table 1", ("lsa-table1-error", "lsa-table1-corr", "lsa-conclusion"), "lsa_training", PROTOCOL,
           "Trained models reach small errors, and some runs divide by the variance through LayerNorm."),
    Result("LSA Fig. 2", ("lsa-fig2", "lsa-l1-dominance"), "lsa_training", PROTOCOL,
           "One query cell carries the estimate (also asked at stronger ℓ1 penalties)."),
    Result("LSA Table 2", ("lsa-table2", "lsa-l1-table2"), "lsa_training", PROTOCOL,
           "That cell computes the least-squares estimate across prompts (also at stronger ℓ1 penalties)."),
    Result("LSA Fig. 3", ("lsa-fig3",), "lsa_training", PROTOCOL,
           "Through that cell alone the output follows the least-squares line."),
    Result("LSA sec. 4 without ℓ1", ("lsa-no-l1",), "lsa_training", PROTOCOL,
           "Training without the ℓ1 penalty gives the same picture (Table 1, Fig. 2, Table 2)."),
)

_FAILED, _PASSED = {"fail", "mismatch"}, {"pass", "pass (deviation)"}


def verdict(statuses: list[str]) -> str:
    """A result's verdict from its claims' statuses (see the module docstring); claims without a record are
    left out unless no claim has one."""
    judged = [s for s in statuses if s != "not yet covered"]
    if not judged:
        return "not yet run"
    kinds = set(judged)
    if kinds <= {"pass"}:
        return "yes"
    if kinds <= _PASSED:
        return "yes, under a changed setting"
    if kinds & _FAILED:
        return "partly" if kinds & _PASSED else "no"
    return "undecided" if not kinds & _PASSED else "partly"


#: the colour class of each verdict (the statuses' classes of :func:`icdl.repro.ledger.status_class`)
VERDICT_STATUS = {"yes": "pass", "yes, under a changed setting": "pass (deviation)", "partly": "mismatch",
                  "no": "fail", "undecided": "inconclusive", "not yet run": "not yet covered"}


def _link(chapter: str, text: str, to_html) -> str:
    return f'<a href="../notebooks/{chapter}.html">{to_html(text)}</a>'


#: a claim's status in the words of the tables (the questions' column; a result's column reads them together)
ANSWER = {"pass": "holds", "pass (deviation)": "holds, under a changed setting", "fail": "does not hold",
          "mismatch": "does not hold", "inconclusive": "undecided", "not yet covered": "not yet run"}


def render_glance(statuses: dict[str, str], status_class, to_html=escape) -> str:
    """The two tables as MyST markdown: the papers' results (``statuses``: claim id -> status, from the
    ledger) and this book's own questions, each linked to its chapter; ``status_class`` gives a status its CSS
    class and ``to_html`` turns a claim's words into a cell (the ledger's ``math_html`` hands its formulas to
    MathJax; the ledger passes both, so this module needs no import of it)."""
    missing = sorted({c for r in RESULTS for c in r.claims} - set(CLAIMS_BY_ID))
    if missing:
        raise KeyError(f"the glance names claims the registry does not have: {missing}")
    rows = []
    for r in RESULTS:
        got = [statuses.get(c, "not yet covered") for c in r.claims]
        word = verdict(got)
        held = sum(s in _PASSED for s in got)
        counted = f"{held} of {len(got)} claims hold" if len(got) > 1 else ""
        rows.append(f"<tr><td>{_link(r.chapter, r.label, to_html)}</td>"
                    f'<td><span class="{status_class(VERDICT_STATUS[word])}"><b>{escape(word)}</b></span>'
                    f"{'<br><small>' + counted + '</small>' if counted else ''}</td>"
                    f"<td>{escape(r.scale)}</td><td>{escape(r.checks)}</td></tr>")
    papers = ("<table class=\"glance\"><thead><tr><th>Result</th><th>Reproduced?</th><th>Our scale</th>"
              "<th>What is checked</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>")
    own = [c for c in CLAIMS if document(c.id) == "book"]
    qrows = []
    for c in own:
        s = statuses.get(c.id, "not yet covered")
        answer = ANSWER[s]
        question = c.paper
        for prefix in ("not claimed by ICDL: ", "not claimed by ICDL in this form: ",
                       "not claimed by ICDL on this task: "):
            question = question.removeprefix(prefix)
        qrows.append(f"<tr><td>{_link(c.chapter, question[:1].upper() + question[1:], to_html)}</td>"
                     f'<td><span class="{status_class(s)}"><b>{escape(answer)}</b></span></td></tr>')
    questions = ("<table class=\"glance\"><thead><tr><th>This book's question</th><th>Finding</th></tr></thead>"
                 "<tbody>" + "".join(qrows) + "</tbody></table>")
    scales = "; ".join(f"*{k}*: {v}" for k, v in SCALE_WORDS.items())
    key = ("The words of both tables are read off the claims' statuses: "
           + "; ".join(f"*{w}* ({', '.join(x for x, st in ANSWER.items() if st == w)})"
                       for w in dict.fromkeys(ANSWER.values()))
           + ". A result is *yes* when all its claims hold, *partly* when some hold and some do not, *no* when "
           "none holds.")
    return (f"{papers}\n\nScales: {scales}.\n\n**Questions of our own**, asked where the papers leave a doubt "
            f"(the verdict says whether our statement held):\n\n{questions}\n\n{key}\n")


