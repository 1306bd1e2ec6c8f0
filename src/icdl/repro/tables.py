"""Tables for people (chapter ``table`` and every DataFrame a chapter shows): readable headers, no 0, 1, 2 index,
counts with a thousands space, small values not rounded to zero, one-value columns said once under the table, a
Series as a table, formulas typeset.

=======================  ====================================================================================
:func:`frame_html`       a DataFrame as HTML for readers
:func:`series_html`      a Series as a table of its one column
:func:`header`           a column's name as the book prints it (:data:`HEADERS`)
=======================  ====================================================================================
"""

from __future__ import annotations

from .typeset import count, keep_ranges, named_attentions, plain, short_exponents, typeset_minus

#: column names of result tables that are not words, as the book prints them; any other snake_case name is
#: printed with spaces (``start_min`` -> ``start min``)
HEADERS = {
    "corr_inv_sigma_inv_V": "corr(1/σ, 1/V)", "test_mse": "test MSE", "corr_z_f": "corr(z, f)",
    "corr_z_ls": "corr(z, LS)", "std_alpha1": "std α₁", "std_alpha2": "std α₂", "std_alpha3": "std α₃",
    "eta_eps": "η ε", "eps_goal": "ε goal", "eps": "ε", "final_distance_to_gd": "final distance to GD",
    "dsm_risk": "DSM risk", "sm_risk": "score-matching risk", "x_query": "query x", "r2": "R²",
    "r2_at_train_length": "R² at the training length", "final_r2": "final R²", "max_shortfall": "largest shortfall",
    "max_drop": "largest drop", "paper_bound": "paper's bound", "flops_icl": "FLOPs (ICL)", "flops_gd": "FLOPs (GD)",
    "tf_vs_closed_form": "TF − closed form", "two_gd_steps_vs_ls": "two GD steps − LS",
    "compile_s": "compile (s)", "run_steps_per_s": "steps/s", "speedup": "speed-up", "epochs_per_s": "epochs/s",
    "protocol_hours": "whole protocol (h)", "start_min": "start (min)", "median_ms": "median (ms)",
    "ratio_to_autograd": "÷ autograd", "rel_dev": "relative deviation", "lo": "band low", "hi": "band high",
    "r2 model": "R² model", "r2 context mean": "R² context mean", "r2 shortcut": "R² shortcut", "eta": "η",
    # formulas in column names, typeset (:func:`frame_html`)
    "D_j (ours)": "$D_j$ (ours)", "D_j (Def. 2)": "$D_j$ (Def. 2)", "L_f (REB)": "$L_f$ (REB)",
    "max |ŵ − w_GD| over path": r"max $|\hat w - w_{\mathrm{GD}}|$ over path", "x_t": "$x_t$",
    # result fields the prose names in words (gpt_icl, gpt_plateau)
    "softmax_lead": "softmax's lead", "lead_at_switch": "its weights under relu, untrained",
    "relu_lead": "relu after its training",
    "within_share": "share within prompts", "linear_share_of_within": "linear share of it",
    "left_at_step": "left the plateau at step", "n_layer": "layers",
    "final_excess": "final lead over the context mean",
}


def header(name):
    """A column or index name as the book prints it (:data:`HEADERS`, else snake_case with spaces)."""
    import re

    if not isinstance(name, str):
        return name
    if name in HEADERS:
        return HEADERS[name]
    return name.replace("_", " ") if re.fullmatch(r"[a-z0-9]+(?:_[a-z0-9]+)+", name) else name


#: the smallest count a table sets apart by thousands, as the prose does (:func:`~icdl.repro.typeset.count`:
#: 3 002 beside 3 002, never 3002)
THOUSANDS = 1_000

#: a value that rounds to zero at a table's decimals is shown with significant digits when it is at least
#: this share of its column's largest (an ℓ1 strength of 1e-5 beside 1e-3 is not "0.0000"); below it, it is
#: round-off beside the others and reads as the zero it rounds to
SMALL_SHARE = 1e-3


def _is_label(name) -> bool:
    """Whether a column holds labels rather than counts: a seed is a name for a run, not a quantity."""
    return "seed" in str(name).lower()


def _significant(vals, digits: int) -> list:
    """A column's numbers with ``digits`` significant digits (:func:`~icdl.repro.typeset.plain`: ``1e-5``,
    ``0.0008123``); where one of them needs an exponent and all are below 0.01, all are written with one
    (``1e-5``, ``1e-4``, ``1e-3``, not ``1e-5``, ``0.0001``, ``0.001``)."""
    import numpy as np

    finite = vals[np.isfinite(vals) & (vals != 0)]
    texts = [plain(v, digits) for v in finite]
    power = any("e" in t for t in texts) and (np.abs(finite) < 0.01).all()

    def one(v):
        if not np.isfinite(v):
            return np.nan
        if v == 0:
            return "0"
        if power:
            mantissa, exponent = f"{v:.{digits - 1}e}".split("e")
            mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
            return f"{mantissa}e{int(exponent)}"
        return plain(v, digits)

    return [one(v) for v in vals]


#: the powers of ten a column of e-notation may span and still be written as plain decimals (0.01 to 9 999)
ORDINARY = (-2, 3)


def _powers_of_ten(col):
    """A column of numbers written in e-notation as text (``"7.2e-01"``, ``"4.0e-02"``, ``"2.5e-03"``: what a
    chapter's ``"{:.1e}"`` gives) in one form, each a power of ten (``7.2 × 10⁻¹``, ``4.0 × 10⁻²``, ``2.5 × 10⁻³``)
    -- not some plainly and some with an exponent, as the prose's rule for a single number would write them
    (``0.72`` beside ``4.0e-2``); a column whose exponents all lie in :data:`ORDINARY` as plain decimals with the
    same digits (``0.72``, ``0.040``, ``3.0``: no reader needs ``× 10⁰``); None where a cell is anything else (the
    column is left as it is)."""
    import re

    from .typeset import E_NUMBER

    texts = [v for v in col if isinstance(v, str)]
    if len(texts) != col.notna().sum() or not texts or not all(re.fullmatch(r"[-−]?" + E_NUMBER, t) for t in texts):
        return None
    superscript = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
    if all(ORDINARY[0] <= int(t.split("e")[1]) <= ORDINARY[1] for t in texts):  # 0.72, 0.040, 3.0: no × 10⁰
        def decimal(text):
            mantissa, exponent = text.split("e")
            digits = len(mantissa.lstrip("-−").replace(".", "")) - 1 - int(exponent)
            value = float(mantissa.replace("−", "-")) * 10 ** int(exponent)
            return f"{value:,.{max(0, digits)}f}".replace(",", " ").replace("-", "−")  # 1 200, as counts are

        return col.map(lambda v: decimal(v) if isinstance(v, str) else v)

    def power(text):
        mantissa, exponent = text.split("e")
        if int(exponent) == 0:  # 1.0 beside 9.0 × 10⁻⁵, not 1.0 × 10⁰
            return mantissa.replace("-", "−")
        return f"{mantissa.replace('-', '−')} × 10{str(int(exponent)).translate(superscript)}"

    return col.map(lambda v: power(v) if isinstance(v, str) else v)


def _readable_cells(df, digits: int | None = None):
    """Cells as a reader reads them: a truth value as yes / no (not Python's ``True``), a float column whose
    numbers are all whole (a step count stored as 3600.0) as integers -- decided on the unrounded numbers, so
    0.9996 is not shown as an exact 1 -- and as the book's counts (:func:`~icdl.repro.typeset.count`:
    3 002, 232 741 080) where the column reaches :data:`THOUSANDS` (a column of seeds excepted); other float
    columns rounded to ``digits``, and a zero without a sign (a −0.0004 rounded to two digits is 0.00, not
    −0.00) -- unless a nonzero value would round to zero while it is at least :data:`SMALL_SHARE` of the
    column's largest: then the column is written with ``digits`` significant digits (:func:`_significant`); a
    column of numbers a chapter wrote in e-notation, as powers of ten in one form (:func:`_powers_of_ten`)."""
    import numpy as np
    import pandas as pd

    out = df.copy()
    for i in range(out.shape[1]):
        col = out.iloc[:, i]
        counts = not _is_label(out.columns[i])
        if col.dtype == bool or (col.dtype == object and len(col)
                                 and col.map(lambda v: isinstance(v, (bool, np.bool_))).all()):
            out.isetitem(i, col.map(lambda v: "yes" if v else "no"))
        elif pd.api.types.is_string_dtype(col) and (powers := _powers_of_ten(col)) is not None:
            out.isetitem(i, powers)
        elif pd.api.types.is_integer_dtype(col) and len(col) and counts and (col.abs() >= THOUSANDS).any():
            out.isetitem(i, col.map(count))  # 232 741 080, not 232741080
        elif pd.api.types.is_float_dtype(col):
            vals = col.to_numpy(dtype=float, na_value=np.nan)  # nullable Float64 too
            finite = vals[np.isfinite(vals)]
            whole = (len(finite) and not np.isinf(vals).any() and (finite == np.round(finite)).all()
                     and (np.abs(finite) < 1e15).all())
            if whole:
                big = counts and (np.abs(finite) >= THOUSANDS).any()  # a column with a count of 1 000 or more
                out.isetitem(i, pd.Series([(count(v) if big else int(v)) if np.isfinite(v) else np.nan for v in vals],
                                          index=col.index, dtype=object))  # NaN: the table's dash
                continue
            if digits is not None:
                sizes = np.abs(finite[finite != 0])
                lost = sizes[np.round(sizes, digits) == 0]
                if len(lost) and lost.max() >= SMALL_SHARE * sizes.max():
                    out.isetitem(i, pd.Series(_significant(vals, digits), index=col.index, dtype=object))
                    continue
                vals = np.round(vals, digits)
            out.isetitem(i, pd.Series(np.where(vals == 0, 0.0, vals), index=col.index))  # -0.0 == 0: unsigned
    return out


def _counts_in_index(shown, names) -> None:
    """A named index reset to columns (``names``): its whole numbers of :data:`THOUSANDS` or more as counts,
    like any column's (N = 1 000 beside 10 000)."""
    import numpy as np
    import pandas as pd

    for name in names:
        if name not in shown.columns or _is_label(name):
            continue
        col = shown[name]
        if isinstance(col, pd.DataFrame) or not pd.api.types.is_numeric_dtype(col) or col.dtype == bool:
            continue
        vals = col.to_numpy(dtype=float, na_value=np.nan)
        finite = vals[np.isfinite(vals)]
        if len(finite) and (finite == np.round(finite)).all() and (np.abs(finite) >= THOUSANDS).any():
            shown[name] = [count(v) if np.isfinite(v) else np.nan for v in vals]


#: the fewest rows at which a column holding one value is said once under the table instead
ONE_VALUE_ROWS = 2


def _one_value_columns(shown, pivot: bool):
    """``shown`` without its columns that hold one value in every row, and those columns as (header, value
    as the table would print it) -- a column of "yes" or of one constant tells the reader nothing a sentence
    under the table does not. Kept: a pivot's columns (each is a result), grouped columns, a table of fewer
    than :data:`ONE_VALUE_ROWS` rows, and a table whose every column is constant (its rows are its content)."""
    import re

    if pivot or shown.columns.nlevels > 1 or len(shown) < ONE_VALUE_ROWS:
        return shown, []
    constant = [c for c in shown.columns if shown[c].map(repr).nunique(dropna=False) == 1
                and " = " not in str(c)]  # "k = 11": a column of a pivot reset to columns, each one a result
    if not constant or len(constant) == shown.shape[1]:
        return shown, []
    same = []
    for c in constant:
        cell = re.search(r"<td>(.*?)</td>", shown[[c]].head(1).to_html(index=False, border=0, na_rep="—"), re.S)
        same.append((c, cell.group(1).strip()))
    return shown.drop(columns=constant), same


def _header_number(v) -> str:
    """A pivot's column value in its header: a whole number of :data:`THOUSANDS` or more as the book's count
    (``R = 1 000``, ``R = 100 000``, not ``R = 100000``), any other as ``:g`` writes it."""
    if float(v) == round(float(v)) and abs(float(v)) >= THOUSANDS:
        return count(v)
    return f"{v:g}" if isinstance(v, float) else f"{v}"


def _header_numbers(values) -> list[str]:
    """A pivot's column values as its headers write them, in one form: each by :func:`_header_number`, unless one
    of them needs an exponent -- then every value under 1 takes one too (the bug: "ε goal = 1e-5 | 0.0001 | 0.001 |
    0.01" in relu_sums, one quantity in two notations in one row of headers)."""
    texts = [_header_number(v) for v in values]
    if not any("e" in t for t in texts):
        return texts

    def exponent(v) -> str:
        v = float(v)
        digits = next(d for d in range(6) if float(f"{v:.{d}e}") == v or d == 5)
        return short_exponents(f"{v:.{digits}e}")

    return [exponent(v) if isinstance(v, (int, float)) and 0 < abs(float(v)) < 1 else t for v, t in zip(values, texts)]


def frame_html(df, digits: int | None = None) -> str:
    """A DataFrame as HTML for readers: readable headers, no 0, 1, 2 index (nor the shuffled row numbers a
    sort leaves; a named or meaningful index is kept), readable cells (:func:`_readable_cells`), an em dash
    for a missing number, and each ``$…$`` in a header or cell typeset as inline math."""
    import html
    import re

    import numpy as np
    import pandas as pd

    shown = _readable_cells(df, digits).rename(columns=header)
    shown.columns.names = [header(n) for n in shown.columns.names]
    shown.index.names = [header(n) for n in shown.index.names]
    # row numbers: a RangeIndex, or what is left of one after a sort or a filter (28, 30, 31, 29): an unnamed
    # index of integers names no row
    plain_index = df.index.nlevels == 1 and df.index.name is None and (
        isinstance(df.index, pd.RangeIndex) or pd.api.types.is_integer_dtype(df.index))
    numeric = len(df.columns) and all(isinstance(c, (int, float, np.integer, np.floating)) and not isinstance(c, bool)
                                      for c in df.columns)
    if numeric and df.columns.name is not None and df.index.nlevels == 1 and df.index.name:
        # a pivot (rows N, columns R): each column says its value of R, so that no header row is left empty
        name = header(df.columns.name)
        shown.columns = [f"{name} = {v}" for v in _header_numbers(df.columns)]
    if plain_index and shown.columns.nlevels == 1:  # a pivot reset to columns: its label names no column
        shown.columns.name = None
    if not plain_index and all(n is None for n in shown.columns.names) and all(df.index.names):
        # a named index is a column like the others: no header row of its own (above grouped columns too)
        names = list(shown.index.names)
        shown, plain_index = shown.reset_index(col_fill=""), True
        _counts_in_index(shown, names)
    shown, same = _one_value_columns(shown, pivot=bool(numeric) or df.columns.name is not None)
    out = shown.to_html(index=not plain_index, border=0, na_rep="—")
    if same:  # said once under the table, not repeated in a column
        out += ('<p class="table-note">Same in every row — '  # words, not "k = v" code
                + "; ".join(f"{html.escape(str(k), quote=False)}: {v}" for k, v in same) + ".</p>")
    if out.count("$") % 2:
        raise ValueError("unpaired $ in a table's headers or cells: write each formula as $…$")
    # a number's sign as a minus sign, as in the prose, and an attention by its name, outside the formulas
    parts = re.split(r"(\$[^$]+\$)", out)
    out = "".join(p if i % 2 else keep_ranges(named_attentions(typeset_minus(short_exponents(p))))
                  for i, p in enumerate(parts))
    out = re.sub(_VALUE_AND_INTERVAL, r'<td>\1<br><span class="interval">(\2)</span>', out)
    return re.sub(r"\$([^$]+)\$", r'<span class="math notranslate nohighlight">\\(\1\\)</span>', out)


#: a cell that opens with a number and its interval, ``0.067 (−0.007 to 0.144)``: shown as two lines by design, the
#: number over its interval (set smaller), so that a table of several such columns fits the page without breaking
#: an interval at a random place
_VALUE_AND_INTERVAL = r"<td>([+−-]?\d[\d.,\u00a0%]*) \(([+−-]?\d[^()<]*?\u00a0to\u00a0[^()<]*?)\)"


def series_html(series, digits: int | None = None) -> str:
    """A Series as a table for readers (:func:`frame_html` of its one column, named after the Series), never
    pandas' text with its ``Name: slope, dtype: float64`` line."""
    return frame_html(series.to_frame(series.name if series.name is not None else "value"), digits)


