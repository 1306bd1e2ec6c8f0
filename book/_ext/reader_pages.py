"""Fixes to the pages Jupyter Book 1.x renders, for a book that is read, not run (a Sphinx extension,
loaded through ``_config.yml``'s ``local_extensions``).

* **No Thebe.** Jupyter Book always loads ``sphinx_thebe``, which adds its configuration script to every
  page once per build phase: the second copy redeclares ``const THEBE_JS_URL`` and every page logs a
  ``SyntaxError``; the script also names a CDN. The book has no live-code buttons, so both scripts go.
* **Alt text.** A notebook's figure is an ``<img>`` whose ``alt`` is its own file name; a figure with a
  caption gets the caption's first sentence instead (what a screen reader or a failed load should say).
* **Anchors a reader can copy.** A section with a label of its own (``(erratum-icdl-lemma2-values)=``)
  links to that label, not to the slug of its heading, which drops the heading's dashes and dots
  (``Lemmas 2–3`` -> ``#lemmas-23-…``).
* **Figures on a phone.** A figure's image sits in a box of its own and is a link to itself: on a narrow
  screen it is shrunk to the column (``book.css``), nothing scrolls sideways, and a tap opens the SVG at the
  size it was drawn for, where its text is legible.
* **A theme mode.** Without ``default_mode`` the theme's script reads an empty mode on a first visit and
  logs an error to the console; the book starts in ``auto`` (the reader's system setting).
* **Numbers that do not break.** A count's thousands space (``10 000``), the hyphen of an exponent (``2e-15``),
  the space before a per cent sign and those around a power of ten's times are places a browser may end a line
  ("10 / 000", "2e- / 15", "90 / %", "4.5 × / 10⁻⁶"); in the reading text (not in code, formulas or
  tags) they become a narrow no-break space and a no-break hyphen, so every number, glued, typed or in a table,
  stays on one line.
* **Terms explained at first use.** The first use on a page of each glossary term the book coins or abbreviates
  is a link to its entry on the notation page (:data:`icdl.repro.glossary.GLOSSARY`).
* **Options that do not break.** A command's option in inline code (``--profile``) is kept on one line, the rest
  of the code still wrapping where the column ends.
* **One table of the claims per chapter in view.** A chapter's closing "claims, judged" table, which repeats its
  claims box with the criteria, is folded under a line that counts its statuses.
* **An icon on the root page too.** The ``index.html`` that sends a reader to the first page is written by
  ``sphinx_external_toc`` without the book's icon, so a browser that opens it asks for a missing
  ``/favicon.ico`` (a 404 in its console) before the redirect; this extension writes that page first, with
  the icon, and the other one then leaves it alone.
"""

from __future__ import annotations

import re

from docutils import nodes

#: the scripts sphinx_thebe adds (by file name, or by the text of an inline script)
THEBE = ("sphinx-thebe.js", "THEBE_JS_URL")


def _is_thebe(script) -> bool:
    name = str(getattr(script, "filename", "") or "")
    body = str(getattr(script, "attributes", {}).get("body", ""))
    return any(mark in name or mark in body for mark in THEBE)


def drop_thebe(app, pagename, templatename, context, doctree) -> None:
    if "script_files" in context:
        context["script_files"] = [s for s in context["script_files"] if not _is_thebe(s)]


#: words a full stop follows inside a sentence (``cf. ICDL Fig. 7``)
ABBREVIATIONS = {"cf", "e.g", "i.e", "vs", "eq", "eqs", "Eq", "Eqs", "Fig", "Figs", "Def", "Defs", "sec", "Sec",
                 "App", "Thm", "al"}


def first_sentence(text: str, limit: int = 240) -> str:
    """The caption's first sentence, on one line (``A (cf. Fig. 7). B.`` -> ``A (cf. Fig. 7).``), cut at
    ``limit``: a full stop ends it when a capital follows and the word before it is no abbreviation."""
    text = " ".join(text.split())
    for m in re.finditer(r"\.\s+(?=[A-Z(])", text):
        word = re.search(r"([\w.]+)$", text[: m.start()])
        if not (word and word.group(1) in ABBREVIATIONS):
            text = text[: m.start() + 1]
            break
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,;:") + " …"


#: TeX commands of the captions' formulas as the characters a screen reader or a failed image shows
TEX_WORDS = {"times": "×", "pm": "±", "mp": "∓", "le": "≤", "ge": "≥", "ne": "≠", "propto": "∝", "approx": "≈",
             "epsilon": "ε", "varepsilon": "ε", "eta": "η", "mu": "μ", "omega": "ω", "sigma": "σ", "nabla": "∇",
             "infty": "∞", "cdot": "·", "ell": "ℓ", "hat": "", "mathrm": "", "text": "", "log": "log"}


def tex_as_text(tex: str) -> str:
    """A caption's formula as plain characters (``1\\times`` -> ``1×``, ``H^{-1/2}`` -> ``H^(-1/2)``): an alt
    text is read, not typeset."""
    tex = re.sub(r"\\([A-Za-z]+)", lambda c: TEX_WORDS.get(c.group(1), c.group(1)), tex)
    tex = re.sub(r"\^\{([^{}]*)\}", r"^(\1)", tex)
    tex = re.sub(r"_\{([^{}]*)\}", r"_\1", tex)
    return re.sub(r"\\[,;! ]", " ", tex).replace("{", "").replace("}", "").replace("\\", "")


def caption_text(caption) -> str:
    """The caption as a reader hears it: its words, each formula through :func:`tex_as_text`."""
    return "".join(tex_as_text(t.astext()) if isinstance(t.parent, nodes.math) else t.astext()
                   for t in caption.findall(nodes.Text))


def caption_alt_text(app, doctree, docname) -> None:
    for figure in doctree.findall(nodes.figure):
        captions = [c for c in figure.findall(nodes.caption)]
        if not captions:
            continue
        alt = first_sentence(caption_text(captions[0]))
        for image in figure.findall(nodes.image):
            uri = str(image.get("uri", ""))
            if not image.get("alt") or image["alt"] == uri or image["alt"].endswith(uri.rsplit("/", 1)[-1]):
                image["alt"] = alt


def scrollable_figures(app, doctree, docname) -> None:
    """Each figure's image inside a box of its own (``<div class="figure-scroll">``), which book.css fits to the
    column on a phone and :func:`linked_figures` makes a link to the full-size image."""
    for figure in doctree.findall(nodes.figure):
        for image in [c for c in figure.children if isinstance(c, nodes.image)]:
            box = nodes.container(classes=["figure-scroll"])
            figure.replace(image, box)
            box += image


#: a figure's image as Sphinx writes it inside its box: the box's opening tag, then the ``<img>`` with its src
FIGURE_IMAGE = re.compile(r'(<div class="figure-scroll[^"]*">\s*)(<img\b[^>]*?\bsrc="([^"]+)"[^>]*>)')


def linked_figures(app, pagename, templatename, context, doctree) -> None:
    """Each figure's image wrapped in a link to the image file itself (``<a class="figure-full">``), once the
    builder has written the image's final path: a tap on a phone opens the figure at its drawn size."""
    if "body" in context:
        context["body"] = FIGURE_IMAGE.sub(
            r'\1<a class="figure-full" href="\3" title="The figure at full size">\2</a>', context["body"])


#: a command's option inside inline code as Sphinx writes it (each word of the code a ``<span class="pre">``), and in
#: raw HTML code (a glued box's ``<code>…</code>``): ``--profile``, ``-m``
FLAG_SPAN = re.compile(r'<span class="pre">(-{1,2}[A-Za-z][^<]*)</span>')
RAW_CODE = re.compile(r"(<code>)([^<]*)(</code>)")
FLAG = re.compile(r"(?<![\w-])(-{1,2}[A-Za-z][\w.=-]*)")


def nowrap_flags(html: str) -> str:
    """Each option of a command in inline code (``--profile``, ``-m``) marked ``flag``, which book.css keeps on one
    line (the bug: inline code may wrap anywhere so that a long path fits a phone, and "--profile" broke between
    its dashes, "(and -" / "-profile icdl)"); the rest of the code still wraps."""
    html = FLAG_SPAN.sub(r'<span class="pre flag">\1</span>', html)
    return RAW_CODE.sub(lambda m: m.group(1) + FLAG.sub(r'<span class="flag">\1</span>', m.group(2)) + m.group(3),
                        html)


def code_flags(app, pagename, templatename, context, doctree) -> None:
    if "body" in context:
        context["body"] = nowrap_flags(context["body"])


#: a chapter's closing table of its claims (icdl.repro.ledger.Ledger.judged) and the statuses in it
JUDGED_TABLE = re.compile(r'<table class="claims-box claims-judged">.*?</table>', re.S)
JUDGED_STATUS = re.compile(r'<td data-label="status" class="[^"]*"><b>([^<]+)</b>')


def folded_judged(html: str) -> str:
    """A chapter's closing "claims, judged" table folded under one line that counts its statuses: the claims and
    their statuses are the chapter's first screen (its claims box), so the closing table, which adds the criterion
    each was judged by, is reference material a click away (the bug: a second table of the same claims, up to two
    screens, at the end of each chapter)."""
    def fold(m):
        statuses = JUDGED_STATUS.findall(m.group(0))
        counts = {s: statuses.count(s) for s in dict.fromkeys(statuses)}
        said = ", ".join(f"{n} {s}" for s, n in counts.items())
        return (f'<details class="claims-judged"><summary>The {len(statuses)} claims of this chapter, each with the '
                f"criterion it was judged by ({said})</summary>{m.group(0)}</details>")
    return JUDGED_TABLE.sub(fold, html)


def folded_judged_tables(app, doctree, docname) -> None:
    for raw in list(doctree.findall(nodes.raw)):
        if "html" in raw.get("format", "").split() and "claims-judged" in raw.astext():
            raw.children = [nodes.Text(folded_judged(raw.astext()))]


def labels_first(app, doctree, docname) -> None:
    """Each section's explicit label as its first id: the one its heading's permalink and the page's
    table of contents use."""
    labels = {label_id for doc, label_id, _ in app.env.domaindata["std"]["labels"].values() if doc == docname}
    for section in doctree.findall(nodes.section):
        own = [i for i in section["ids"] if i in labels]
        if own and section["ids"][0] not in own:
            section["ids"] = own + [i for i in section["ids"] if i not in own]


#: a count with its thousands spaces (``6 500``, ``232 741 080``), and the hyphen of an exponent (``2e-15``)
COUNT = re.compile(r"(?<![\d.,])\d{1,3}(?: \d{3})+(?!\d)")
EXPONENT = re.compile(r"(?<=\de)-(?=\d)")
#: the space before a per cent sign (``90 %``) and the spaces around the times of a power of ten (``4.5 × 10⁻⁶``)
PERCENT = re.compile(r"(?<=\d) (?=%)")
TIMES_TEN = re.compile(r"(?<=\d) × (?=10[⁰¹²³⁴⁵⁶⁷⁸⁹⁻])")
#: the en dash of a range of numbers (``Lemmas 2–4``, ``eqs. 1–8``): a word joiner after it (the bug: "Lemmas 2–"
#: at a line's end, "4" on the next)
NUMBER_RANGE = re.compile(r"(?<=\d)–(?=\d)")
#: the parts of a raw HTML cell left as they are: tags, and the TeX between MathJax's delimiters
RAW_SKIP = re.compile(r"<[^>]*>|\\\(.*?\\\)|\\\[.*?\\\]|\$\$.*?\$\$", re.S)
#: the nodes whose text is not reading text
NOT_PROSE = (nodes.literal, nodes.literal_block, nodes.math, nodes.math_block, nodes.comment, nodes.raw)


def unbreakable(text: str) -> str:
    """``text`` with each count's thousands spaces as narrow no-break spaces, each exponent's hyphen as a
    no-break hyphen, the space of ``90 %`` and those of ``4.5 × 10⁻⁶`` as no-break spaces, a word joiner after a
    range's en dash (``10 000`` -> ``10\u202f000``, ``2e-15`` -> ``2e\u201115``, ``2–4`` -> ``2–\u20604``)."""
    text = COUNT.sub(lambda m: m.group(0).replace(" ", "\u202f"), text)
    text = TIMES_TEN.sub("\u00a0×\u00a0", PERCENT.sub("\u00a0", text))
    text = NUMBER_RANGE.sub("–\u2060", text)
    return EXPONENT.sub("\u2011", text)


def unbreakable_raw(html: str) -> str:
    """:func:`unbreakable` on the text of a raw HTML cell (a claims box, a table), its tags and formulas untouched."""
    out, at = [], 0
    for m in RAW_SKIP.finditer(html):
        out += [unbreakable(html[at:m.start()]), m.group(0)]
        at = m.end()
    return "".join(out) + unbreakable(html[at:])


def unbreakable_numbers(app, doctree, docname) -> None:
    for text in list(doctree.findall(nodes.Text)):
        parent = text.parent
        if parent is None or any(isinstance(a, NOT_PROSE) for a in _lineage(parent)):
            continue
        new = unbreakable(str(text))
        if new.startswith((" %", " × 10")) and _ends_in_digit(text):  # a glued number, then " %" in the prose
            new = "\u00a0" + new[1:]
        if new != str(text):
            parent.replace(text, nodes.Text(new))
    for raw in list(doctree.findall(nodes.raw)):
        if "html" in raw.get("format", "").split():
            new = unbreakable_raw(raw.astext())
            if new != raw.astext():
                raw.children = [nodes.Text(new)]


def _ends_in_digit(text) -> bool:
    """Whether the reading text just before ``text`` (a Text node) ends in a digit: the text of the node before it
    in its paragraph, a glued number for one."""
    block = next((a for a in _lineage(text.parent) if isinstance(a, nodes.TextElement)), None)
    if block is None:
        return False
    before = ""
    for t in block.findall(nodes.Text):
        if t is text:
            return before[-1:].isdigit()
        before = str(t)
    return False


def _lineage(node):
    while node is not None:
        yield node
        node = node.parent


def default_theme_mode(app, pagename, templatename, context, doctree) -> None:
    if not context.get("default_mode"):  # the layout's template variable (the book theme has no option for it)
        context["default_mode"] = "auto"


def root_index(app, exception) -> None:
    """``index.html`` at the root of an HTML build: the redirect to the root document, with the book's icon
    (written before ``sphinx_external_toc``'s own, which skips an existing file)."""
    from pathlib import Path

    if exception is not None or app.builder.name != "html" or app.config.root_doc == "index":
        return
    icon = Path(app.config.html_favicon or "").name
    link = f'<link rel="icon" href="_static/{icon}" />\n' if icon else ""
    target = f"{app.config.root_doc}.html"
    Path(app.outdir, "index.html").write_text(
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8" />\n{link}'
        f'<meta http-equiv="Refresh" content="0; url={target}" /></head></html>\n', encoding="utf-8")


#: the nodes inside which a term is not linked: headings, code, formulas, links, bold words, raw HTML
NOT_LINKED = (nodes.title, nodes.literal, nodes.literal_block, nodes.math, nodes.math_block, nodes.reference,
              nodes.strong, nodes.raw, nodes.comment, nodes.rubric, nodes.term)
#: an inline HTML tag that opens (or closes) a link or code around the text after it (MyST keeps ``<a href=…>``,
#: its text and ``</a>`` as three nodes: the text is a link's without a reference node around it)
RAW_OPEN = re.compile(r"<(a|code)\b[^>]*>|</(a|code)>")


def _inside_raw_tag(node) -> bool:
    """Whether inline raw HTML before ``node`` in its parent left an ``<a>`` or ``<code>`` open around it (the bug:
    the report's "<a href=chapter>ICDL Lemma 19</a>" got a glossary link inside the chapter's, and the browser
    closed the outer link: "Lemma 19" lost its link)."""
    depth = 0
    for sibling in node.parent.children:
        if sibling is node:
            return depth > 0
        if isinstance(sibling, nodes.raw):
            for m in RAW_OPEN.finditer(sibling.astext()):
                depth += 1 if m.group(1) else -1
    return False


def first_use_terms(app, doctree) -> None:
    """The first use on a page of each term of :data:`icdl.repro.glossary.GLOSSARY`, in its reading text, a link to its
    glossary entry -- unless the page linked it already (a ``{term}`` role before it) -- so that a reader who lands
    on any page finds each abbreviation and coined term explained one click away (the bug: "shortfall" 33 times
    on gpt_scale, never linked; "ICL", "LS", "MC" unexplained where they first appear). The glossary's own page
    is left as it is."""
    from sphinx import addnodes

    from icdl.repro.glossary import GLOSSARY, term_pattern

    docname = app.env.docname
    if docname.endswith("notation") or docname.endswith("references"):
        return
    patterns = {words: term_pattern(words) for words in GLOSSARY}
    seen: set[str] = set()
    for node in list(doctree.findall(lambda n: isinstance(n, (nodes.Text, addnodes.pending_xref)))):
        if isinstance(node, addnodes.pending_xref):
            if node.get("reftype") == "term":
                target = str(node.get("reftarget", "")).lower()
                seen |= {w for w, term in GLOSSARY.items() if term.lower() == target}
            continue
        parent = node.parent
        if parent is None or any(isinstance(a, NOT_LINKED) or isinstance(a, addnodes.pending_xref)
                                 for a in _ancestors(node)) or _inside_raw_tag(node):
            continue
        text = str(node)
        hits = sorted((m.start(), m.end(), w) for w, pat in patterns.items() if w not in seen
                      for m in [pat.search(text)] if m)
        if not hits:
            continue
        new, at = [], 0
        for start, end, words in hits:
            if start < at:  # overlapping terms ("LS" inside a longer match): the first one wins
                continue
            new.append(nodes.Text(text[at:start]))
            term = GLOSSARY[words]
            new.append(addnodes.pending_xref("", nodes.inline(text[start:end], text[start:end],
                                                              classes=["xref", "std", "std-term"]),
                                             refdomain="std", reftype="term", reftarget=term.lower(),
                                             refexplicit=True, refwarn=True, refdoc=docname))
            seen.add(words)
            at = end
        new.append(nodes.Text(text[at:]))
        parent.replace(node, [n for n in new if not (isinstance(n, nodes.Text) and not str(n))])


def _ancestors(node):
    a = node.parent
    while a is not None:
        yield a
        a = a.parent


def setup(app):
    app.connect("build-finished", root_index, priority=400)
    app.connect("doctree-read", first_use_terms)
    app.connect("html-page-context", default_theme_mode)
    app.connect("html-page-context", drop_thebe)
    app.connect("html-page-context", linked_figures)
    app.connect("html-page-context", code_flags)
    app.connect("doctree-resolved", folded_judged_tables)
    app.connect("doctree-resolved", caption_alt_text)
    app.connect("doctree-resolved", unbreakable_numbers)
    app.connect("doctree-resolved", labels_first)
    app.connect("doctree-resolved", scrollable_figures)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
