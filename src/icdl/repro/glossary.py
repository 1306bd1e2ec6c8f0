"""The book's glossary in code: the abbreviations and coined terms of book/notation.md that its generated pages and
boxes link at their first use, and the link itself.

=========================  ======================================================================================
:data:`GLOSSARY`           the words a page uses -> the glossary term they link to
:func:`glossary_anchor`    the anchor Sphinx gives a term on the notation page
:func:`term_pattern`       a term's use as a whole word (abbreviations in their case, coined terms and plurals)
:func:`linked_terms`       a line of HTML or markdown with each term's first use a link
=========================  ======================================================================================
"""

from __future__ import annotations

import re

#: the glossary's coined terms and abbreviations (book/notation.md), by the words that use them, with the glossary
#: term each links to: the report and the results at a glance link the first use of each on the page, the claims
#: boxes link each once, and every page of the book its first use in the reading text (book/_ext/reader_pages.py).
#: Abbreviations are matched with their case; coined terms with either case of their first letter, a plural too.
#: Words of plain English or of the field in their usual sense (R², least squares, ridge, GD, MLP, gate, twin,
#: ledger) are linked where the text asks for it with {term}, not automatically.
GLOSSARY = {"learning gate": "Learning gate", "member": "Member", "flow time": "Flow time",
            "median block": "Median block", "3-NN": "3-NN", "ICGD": "ICGD", "context mean": "Context mean",
            "softmax twin": "Softmax twin", "warm phase": "Warm phase", "warm start": "Warm start",
            "main study": "Main study", "paired prompts": "Paired prompts", "shortfall": "Shortfall", "REB": "REB",
            "EWML": "EWML", "DSM": "DSM", "FLOPs": "FLOPs", "analysed run": "Analysed run",
            "dominant query cell": "Dominant query cell", "mismatch band": "Mismatch band", "MC": "MC", "LSA": "LSA",
            "ICDL": "ICDL", "ICL": "ICL", "LS": "LS", "MSE": "MSE", "plateau": "Plateau", "profile": "Profile",
            "schedule scan": "Schedule scan", "R2xK": "R2xK"}


def glossary_anchor(term: str) -> str:
    """The anchor Sphinx gives a glossary term (``Context mean`` -> ``term-Context-mean``)."""
    return "term-" + re.sub(r"[^\w]+", "-", term).strip("-")


def term_pattern(words: str):
    """The use of :data:`GLOSSARY`'s ``words`` as a whole word: an abbreviation in its own case, a coined term with
    either case of its first letter and a plural."""
    if words.isupper() or any(c.isdigit() for c in words) or words == "FLOPs":
        return re.compile(rf"(?<![\w-]){re.escape(words)}(?![\w-])")
    return re.compile(rf"(?<![\w-])[{words[0].lower()}{words[0].upper()}]{re.escape(words[1:])}s?(?![\w-])")


def linked_terms(line: str, notation: str = "notation.html", seen: set[str] | None = None) -> str:
    """``line`` with the first use of each :data:`GLOSSARY` term linked to its entry on the notation page
    (``notation``: its address from the page the line is on) -- outside headings, code, math, bold titles, HTML
    tags, a form's choices (``<select>``) and links (those already there and those just made), and as a whole word
    only. ``seen``, shared by the lines of one page, holds the terms already linked on it: each is linked at its
    first use on the page only (the bug: "ICDL" linked 59 times on the report, once per line)."""
    if line.startswith("#"):
        return line
    protected = re.compile(r"(`[^`]*`|\$[^$]*\$|\*\*[^*]+\*\*|<a\b[^>]*>.*?</a>|<code>.*?</code>|<select\b.*?</select>|"
                           r"<[^>]+>|\\\(.*?\\\))")
    for words, term in GLOSSARY.items():
        if seen is not None and term in seen:
            continue
        pattern = term_pattern(words)
        parts = protected.split(line)
        for i in range(0, len(parts), 2):  # the text between the protected spans
            if m := pattern.search(parts[i]):
                link = f'<a class="term" href="{notation}#{glossary_anchor(term)}">{m.group(0)}</a>'
                parts[i] = parts[i][:m.start()] + link + parts[i][m.end():]
                if seen is not None:
                    seen.add(term)
                break
        line = "".join(parts)
    return line
    protected = re.compile(r"(`[^`]*`|\$[^$]*\$|\*\*[^*]+\*\*|<a\b[^>]*>.*?</a>|<code>.*?</code>|<[^>]+>|\\\(.*?\\\))")
    for words, term in GLOSSARY.items():
        pattern = term_pattern(words)
        parts = protected.split(line)
        for i in range(0, len(parts), 2):  # the text between the protected spans
            if m := pattern.search(parts[i]):
                link = f'<a class="term" href="{notation}#{glossary_anchor(term)}">{m.group(0)}</a>'
                parts[i] = parts[i][:m.start()] + link + parts[i][m.end():]
                break
        line = "".join(parts)
    return line
