"""Numbers and words as the book prints them, the same in prose, tables, claims boxes and the report: counts with a
thousands space, small numbers with short exponents, ranges that never read "0.24–0.24", shares as "52 %", minus
signs, commands as code, formulas handed to MathJax.

=========================  ======================================================================================
:func:`count`              6 500, 158 209: a count with a thousands space
:func:`plain`, :func:`sci` a setting or a small value (``1e-5``, ``2.5e-4``); scientific notation for the prose
:func:`percent`            a share as "52 %"
:func:`span`               a range of values, widened until its ends differ
:func:`typeset_minus`      a number's sign as a minus sign
:func:`commands_as_code`   ``python -m …`` and its options as inline code
:func:`named_attentions`   the attentions' names as a reader reads them: ``relu`` -> ReLU
:func:`code_names`         the package's dotted names as code, each a link to its source page
:func:`math_html`, :func:`esc`  a cell of words with formulas, for an HTML table
=========================  ======================================================================================
"""

from __future__ import annotations


def esc(text: object) -> str:
    import html

    return html.escape(str(text)).replace("\n", " ")


def count(n) -> str:
    """A count as the book writes it, in prose, tables and claims boxes alike: thousands set apart by a space
    (6 500, 158 209), never a comma (10,000) or a float (3600.0); a float is rounded to a whole number."""
    return f"{round(n):,}".replace(",", " ")


def rate(x: float) -> str:
    """A learning rate as the book writes it, in prose, tables and legends alike: ``1e-4``, ``3e-4``, ``2.5e-4``,
    ``1e-3`` -- not ``0.0001`` beside ``1e-4``."""
    mantissa, exponent = f"{x:e}".split("e")
    return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"


def plain(x: float, digits: int | None = None) -> str:
    """A number as the book's prose and tables write a setting or a small value: ``:g`` (``digits`` significant
    digits, else ``:g``'s six) with a short exponent -- ``1e-5``, ``2.5e-4``, not ``1e-05`` -- and plainly
    otherwise (``0.001``, ``0.5``, ``100``)."""
    return short_exponents(f"{x:.{digits}g}" if digits is not None else f"{x:g}")


#: a number in e-notation (``1e-05``, ``2.5e+06``), standing alone (not inside a word or a commit hash)
E_NUMBER = r"(?<![\w.])(\d+(?:\.\d+)?)e([+-]?)(\d+)(?![\w.])"


def short_exponents(text: str) -> str:
    """Every e-notation number in ``text`` with the exponent the book writes (``1e-5``, ``2.5e6``), not
    Python's padded ``1e-05`` or ``2.5e+06``: one style in the prose, the tables and the claims boxes; a number
    that needs no exponent (between 0.1 and 100) plainly, with the digits it was given (``8e+00`` -> ``8``,
    ``8.2e+00`` -> ``8.2``, ``2e+01`` -> ``20``, ``8e-01`` -> ``0.8``)."""
    import re

    def short(m) -> str:
        power = -int(m[3]) if m[2] == "-" else int(m[3])
        if -1 <= power <= 1:
            decimals = len(m[1].partition(".")[2])
            return f"{float(m[1]) * 10 ** power:.{max(decimals - power, 0)}f}"
        return f"{m[1]}e{'-' if power < 0 else ''}{abs(power)}"

    return re.sub(E_NUMBER, short, text)


def e_notation(x: float, digits: int = 0) -> str:
    """A number in e-notation with ``digits`` after the point and a short exponent (``6e-3``, ``1.5e-12``, not
    ``6e-03``): a table column of errors over many powers of ten."""
    return short_exponents(f"{x:.{digits}e}")


def percent(share: float, digits: int = 0) -> str:
    """A share as the book writes a percentage: a space before the sign (``52 %``, ``1.5 %``), never ``52%``."""
    return f"{100 * share:.{digits}f} %"


def span(values, fmt: str, widen: int = 0) -> str:
    """The range of ``values`` in ``fmt``: ``0.031–0.052`` (an en dash where neither end is negative, so that
    "from A to B" reads as two ranges), ``−0.016 to −0.009`` otherwise. Two ends that print alike are never
    shown as ``0.24–0.24``: a fixed-point ``fmt`` (``.2f``) gets up to ``widen`` more digits to tell them apart,
    and ends still alike are one value. A value that rounds to zero is shown without its sign."""
    import re

    lo, hi = min(values), max(values)
    one = a = fixed(lo, fmt)
    b = fixed(hi, fmt)
    point = re.fullmatch(r"([+ ]?)\.(\d+)f", fmt)
    for extra in range(1, widen + 1 if point else 1):
        if a != b:
            break
        wider = f"{point[1]}.{int(point[2]) + extra}f"
        a, b = fixed(lo, wider), fixed(hi, wider)
    if a == b:
        return one
    return f"{a}–{b}" if lo >= 0 and "+" not in fmt else f"{a} to {b}"


def fixed(v: float, fmt: str) -> str:
    """``v`` in ``fmt``, without the sign of a value that rounds to zero: ``-0.000`` reads as a fall, and a signed
    format's ``+0.000`` as a rise (the bug: gpt_scale's width table gave a change of −0.0001 as "+0.000")."""
    out = f"{v:{fmt}}"
    return f"{0.0:{fmt.replace('+', '')}}" if out.strip("+-0.,") == "" else out


#: a ``python -m`` command, or a run of command-line options with their values (``--part depth --layers L``)
_OPTION = r"--[a-z][\w-]*(?: (?!--)[\w./]+(?:,[\w./]+)*)?"
COMMAND = rf"python -m [\w.]+(?: -?{_OPTION})*|(?<![\w`-]){_OPTION}(?: {_OPTION})*"


def commands_as_code(text: str) -> str:
    """``python -m …`` commands and runs of options (``--part main --seeds S``) inside a text as inline code
    (markdown), so the page shows them as typed: in prose Sphinx's typographer would turn their ``--`` into
    an en dash (``–part``)."""
    import re

    return re.sub(COMMAND, r"`\g<0>`", text)


def sci(x: float, digits: int = 1) -> str:
    """A number as the prose writes it: plainly between 0.1 and 10 000 (``4.0``, not ``4.0e+00``; ``1 167.2``),
    otherwise as a power of ten with the prose's signs (``2.1 × 10⁻³``, ``5 × 10⁶``: not ``2.1e-03``); ``digits``
    after the point in either form."""
    import math

    if x == 0 or not math.isfinite(x):
        return typeset_minus(f"{x:g}")
    if 0.1 <= abs(x) < 1e4:  # from 1 000 on with the thousands space of a count (1 167.2, not 1167.2)
        return typeset_minus(f"{x:,.{digits}f}".replace(",", " "))
    mantissa, exponent = f"{x:.{digits}e}".split("e")
    power = str(int(exponent)).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return typeset_minus(f"{mantissa} × 10{power}")


def relation(op: str) -> str:
    """A comparison as the prose and the criteria write it: ``≥`` and ``≤``, not Python's ``>=`` and ``<=``;
    ``<``, ``>`` and ``=`` as they are."""
    return {">=": "≥", "<=": "≤", "==": "="}.get(op, op)


def typeset_minus(text: str) -> str:
    """A number's sign as the minus sign the tables use (``-0.012`` -> ``−0.012``), not a hyphen -- a zero
    rounded from a small negative number keeps its sign (``−0.000``: an interval's end below 0 is what a
    reader must see to tell a straddle); exponents (``1e-12``) and options (``--layers``) stay as they are."""
    import re

    return re.sub(r"(?<![\w.\-])-(?=\.?\d)", "−", text)


#: the two ends of a range or an interval: ``0.048 to 0.147``, ``+0.3 to +0.5``, ``0.03–0.10``, ``48 %–50 %``
_RANGE = r"(?<=[\d%])( to |–)(?=[+−-]?\d)"


def keep_ranges(text: str) -> str:
    """``text`` with each range's ends held together on one line (``0.048 to 0.147``, ``0.03–0.10``: no-break spaces
    about "to", a word joiner after the en dash) -- in tables, claims boxes, the report and the glance alike: a cell at
    the book's width broke "0.097 (0.048 to" from "0.147)", and a reader took the two lines for two numbers."""
    import re

    return re.sub(_RANGE, lambda m: "\u00a0to\u00a0" if m.group(1) == " to " else "–\u2060", text)


#: an attention's name as a reader reads it; the code's keys (``relu``, ``softmax``) stay in code and commands
ATTENTION_NAMES = {"relu": "ReLU", "softmax": "softmax"}
#: the key ``relu`` as a word of reading text: not part of an identifier, a path, an option's value
#: (``--attention relu``) or a function call
_RELU_WORD = r"(?<![\w\-./=`'\"])(?<!--attention )relu(?![\w\-/(`'\"=])(?!\.\w)"


def attention_name(key: str) -> str:
    """``relu`` -> ``ReLU``: the name a table, a legend or a title gives an attention (a reader took the lower-case
    key for a variable)."""
    return ATTENTION_NAMES.get(key, key)


def named_attentions(text: str) -> str:
    """``text`` with the attention key ``relu`` written as the name ReLU wherever it is a word of reading text
    ("depth 3 relu: 0.051" -> "depth 3 ReLU: 0.051"); identifiers, paths and commands keep the key."""
    import re

    return re.sub(_RELU_WORD, "ReLU", text)


#: a dotted name of the package's code in reading text (``icdl.prompts``, ``icdl.gpt_icl.core.learning.gate``)
_CODE_NAME = r"(?<![\w./`>-])icdl(?:\.\w+)+"


def code_names(html_text: str) -> str:
    """Each dotted name of the package's code in an HTML text as code and a link to its source page (the book's
    code_pages extension gives a ``code-link`` anchor its address; the bug: "built and validated by icdl.prompts"
    as plain words in a claims box)."""
    import re

    return re.sub(_CODE_NAME, lambda m: f'<a class="code-link" data-code="{m.group(0)}"><code>{m.group(0)}</code></a>',
                  html_text)


def math_html(text: object) -> str:
    """``text`` for an HTML table cell: escaped, with each ``$…$`` span (the claims' formulas, written as
    MyST math) handed to MathJax as inline math (``<span class="math">\\(…\\)</span>``, which the book's
    MathJax typesets inside raw HTML, where MyST's own ``$`` parsing does not reach). A spaced ``--`` becomes the
    dash prose shows (Sphinx's typographer, which makes it one in prose, does not reach raw HTML either); a number's
    sign is the tables' minus, a range's ends stay on one line (:func:`keep_ranges`), an attention is called
    by its name (:func:`named_attentions`) and the package's code is a link to its source (:func:`code_names`)."""
    parts = str(text).split("$")
    if len(parts) % 2 == 0:
        raise ValueError(f"unpaired $ in {text!r}: write each formula as $…$")
    def words(p: str) -> str:
        return code_names(keep_ranges(esc(named_attentions(typeset_minus(short_exponents(p)))).replace(" -- ", " – ")))

    return "".join(words(p) if i % 2 == 0 else f'<span class="math notranslate nohighlight">\\({esc(p)}\\)</span>'
                   for i, p in enumerate(parts))


