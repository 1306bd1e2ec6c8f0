"""What every chapter's code cells share: the first cell's set-up (:func:`start`), the one policy for which
data a chapter judges (:func:`reference_or_live`), numbers glued into the prose (:func:`glue`, and
:func:`show_glued` for JupyterLab), tables for people (:func:`table`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from .execute import LOCK_ENV, chapter_lock
from .ledger import Ledger, commands_as_code, count, plain, short_exponents, typeset_minus
from .profiles import ProfileError, ProfileSet
from .theme import use_style

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
    "compile_s": "compile (s)", "run_steps_per_s": "steps / s", "epochs_per_s": "epochs / s",
    "protocol_hours": "whole protocol (h)", "start_min": "start (min)", "median_ms": "median (ms)",
    "ratio_to_autograd": "÷ autograd", "rel_dev": "relative deviation", "lo": "band low", "hi": "band high",
    "r2 model": "R² model", "r2 context mean": "R² context mean", "r2 shortcut": "R² shortcut", "eta": "η",
    # formulas in column names, typeset (:func:`frame_html`)
    "D_j (ours)": "$D_j$ (ours)", "D_j (Def. 2)": "$D_j$ (Def. 2)", "L_f (REB)": "$L_f$ (REB)",
    "max |ŵ − w_GD| over path": r"max $|\hat w - w_{\mathrm{GD}}|$ over path", "x_t": "$x_t$",
    # result fields the prose names in words (gpt_icl, gpt_plateau)
    "kept_at_switch": "kept at the switch", "relu_over_softmax": "ReLU ÷ softmax lead",
    "within_share": "share within prompts", "linear_share_of_within": "linear share of it",
    "left_at_step": "left the plateau at step", "n_layer": "layers",
}


def header(name):
    """A column or index name as the book prints it (:data:`HEADERS`, else snake_case with spaces)."""
    import re

    if not isinstance(name, str):
        return name
    if name in HEADERS:
        return HEADERS[name]
    return name.replace("_", " ") if re.fullmatch(r"[a-z0-9]+(?:_[a-z0-9]+)+", name) else name


#: the smallest count a table sets apart by thousands, as the prose does (:func:`~icdl.repro.ledger.count`:
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
    """A column's numbers with ``digits`` significant digits (:func:`~icdl.repro.ledger.plain`: ``1e-5``,
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


def _readable_cells(df, digits: int | None = None):
    """Cells as a reader reads them: a truth value as yes / no (not Python's ``True``), a float column whose
    numbers are all whole (a step count stored as 3600.0) as integers -- decided on the unrounded numbers, so
    0.9996 is not shown as an exact 1 -- and as the book's counts (:func:`~icdl.repro.ledger.count`:
    3 002, 232 741 080) where the column reaches :data:`THOUSANDS` (a column of seeds excepted); other float
    columns rounded to ``digits``, and a zero without a sign (a −0.0004 rounded to two digits is 0.00, not
    −0.00) -- unless a nonzero value would round to zero while it is at least :data:`SMALL_SHARE` of the
    column's largest: then the column is written with ``digits`` significant digits (:func:`_significant`)."""
    import numpy as np
    import pandas as pd

    out = df.copy()
    for i in range(out.shape[1]):
        col = out.iloc[:, i]
        counts = not _is_label(out.columns[i])
        if col.dtype == bool or (col.dtype == object and len(col)
                                 and col.map(lambda v: isinstance(v, (bool, np.bool_))).all()):
            out.isetitem(i, col.map(lambda v: "yes" if v else "no"))
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
        shown.columns = [f"{name} = {_header_number(v)}" for v in df.columns]
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
        out += ('<p class="table-note">In every row: '
                + "; ".join(f"{html.escape(str(k), quote=False)} = {v}" for k, v in same) + ".</p>")
    if out.count("$") % 2:
        raise ValueError("unpaired $ in a table's headers or cells: write each formula as $…$")
    # a number's sign as a minus sign, as in the prose, outside the formulas (TeX keeps its own)
    parts = re.split(r"(\$[^$]+\$)", out)
    out = "".join(p if i % 2 else typeset_minus(short_exponents(p)) for i, p in enumerate(parts))  # 1e-5, not 1e-05
    return re.sub(r"\$([^$]+)\$", r'<span class="math notranslate nohighlight">\\(\1\\)</span>', out)


def table(df, digits: int = 3):
    """A DataFrame (or a Series, as its one column) as the page shows it: rounded, then :func:`frame_html`, as
    HTML whose plain-text fallback is fixed (a Styler's repr carries a memory address that changes on every
    run)."""
    import pandas as pd
    from IPython.display import HTML

    return HTML(series_html(df, digits) if isinstance(df, pd.Series) else frame_html(df, digits))


def series_html(series, digits: int | None = None) -> str:
    """A Series as a table for readers (:func:`frame_html` of its one column, named after the Series), never
    pandas' text with its ``Name: slope, dtype: float64`` line."""
    return frame_html(series.to_frame(series.name if series.name is not None else "value"), digits)


def _readable_frames() -> None:
    """Every DataFrame and Series a chapter shows is drawn by :func:`frame_html` (outside IPython nothing to
    set)."""
    try:
        import pandas as pd
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with the notebooks' kernel
        return
    ip = get_ipython()
    if ip is not None:
        ip.display_formatter.formatters["text/html"].for_type(pd.DataFrame, frame_html)
        ip.display_formatter.formatters["text/html"].for_type(pd.Series, series_html)


#: how a chapter's figures are written: SVG without the date of the run (with the style's fixed hash salt,
#: a rerun that draws the same figure writes the same bytes, so a rerun leaves no diff)
SVG_OPTIONS = {"metadata": {"Date": None}}


def _vector_figures() -> None:
    """Figures as SVG in the notebook and the book: sharp on any screen. (Outside IPython, e.g. in tests,
    there is nothing to set.)"""
    try:
        from IPython import get_ipython
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:  # pragma: no cover - IPython comes with the book's requirements
        return
    if get_ipython() is not None:
        set_matplotlib_formats("svg", **SVG_OPTIONS)


def start(profiles: ProfileSet, profile: str, overrides: Mapping[str, Any] | None = None
          ) -> tuple[Mapping[str, Any], Ledger]:
    """Resolve (and check) the profile's settings, take the chapter's one-writer lock (:func:`hold_lock`),
    apply the book's figure style, and open the chapter's ledger -- named after ``profiles.chapter``, which is
    the notebook's name. However the chapter runs (``python -m icdl.repro.execute``, papermill, nbval,
    JupyterLab), its parameters get the checks of ``--set`` and it has one writer at a time."""
    _papermill_yaml_once()
    profiles.check_chapter_profile(profile)
    cfg = profiles.resolve(profile, **_overrides(overrides))
    hold_lock(profiles.chapter)
    use_style()
    _vector_figures()
    _readable_frames()
    GLUED.clear()
    return cfg, Ledger(profiles.chapter, profile, seed=cfg.get("seed"), overrides=cfg["overrides"])


def _overrides(overrides) -> dict:
    """The chapter's ``overrides`` parameter as a dict: a dict, or its JSON text (``papermill -p overrides
    '{"n": 64}'`` passes a string); anything else, and a key given twice (``'{"n": 8, "n": 16}'``, which
    ``--set`` refuses too), is refused in one line naming the parameter."""
    import json

    if overrides is None or overrides == "":
        return {}
    if isinstance(overrides, str):
        try:
            overrides = json.loads(overrides, object_pairs_hook=_once)
        except json.JSONDecodeError:
            raise ProfileError(f"the parameter overrides must be a dict or its JSON text, e.g. "
                               f"'{{\"n\": 64}}'; got {overrides!r}") from None
    if not isinstance(overrides, Mapping):
        raise ProfileError(f"the parameter overrides must be a dict of settings, e.g. {{'n': 64}}; got {overrides!r}")
    bad = [k for k in overrides if not isinstance(k, str)]
    if bad:
        raise ProfileError(f"the parameter overrides must name settings by strings, e.g. {{'n': 64}}; got keys {bad}")
    return dict(overrides)


def _once(pairs: list[tuple[str, Any]]) -> dict:
    """A JSON object's pairs as a dict, refusing a key given twice (``json.loads`` keeps the last silently)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ProfileError(f"the parameter overrides gives {key!r} twice; give each setting once")
        out[key] = value
    return out


def _papermill_yaml_once() -> None:
    """Refuse a key given twice in papermill's YAML parameters (``papermill -y 'overrides: {n: 8, n: 16}'``, which
    ran with n = 16), in one line naming the parameter, as :func:`_overrides` refuses it in JSON text.

    Papermill reads ``-y``, ``-f`` and ``-b`` in its own process with PyYAML, which keeps the last of two equal keys
    silently, and injects the merged dict into the notebook: the kernel that runs this chapter receives
    ``overrides = {'n': 16}``, the duplicate gone. What survives is papermill's command line, in the process that
    started this kernel: the papermill process among this process's ancestors (``/proc``; elsewhere, and under
    ``execute``, nbval or JupyterLab, there is none and nothing to check) has its YAML read again here, refusing
    duplicates."""
    for argv, cwd in _papermill_ancestors():
        for where, text in _papermill_yaml(argv, cwd):
            check_yaml_once(text, where)


def check_yaml_once(text: str, where: str = "papermill -y") -> None:
    """Refuse, with :class:`ProfileError` in one line, a YAML mapping (at any depth) that gives a key twice;
    text that is not YAML is left to papermill, which refuses it itself."""
    import yaml

    try:
        nodes = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        return
    for node in nodes:
        _mapping_once(node, (), where)


def _mapping_once(node, path: tuple[str, ...], where: str) -> None:
    import yaml

    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _mapping_once(item, path, where)
    if not isinstance(node, yaml.MappingNode):
        return
    seen: set = set()
    for key, value in node.value:
        name = key.value if isinstance(key, yaml.ScalarNode) else None
        if name is not None and name != "<<":
            if name in seen:
                if path:
                    raise ProfileError(f"the parameter {path[0]} gives {'.'.join((*path[1:], name))!r} twice "
                                       f"({where}; papermill keeps the last silently); give each setting once")
                raise ProfileError(f"the parameter {name!r} is given twice ({where}; papermill keeps the last "
                                   f"silently); give each parameter once")
            seen.add(name)
        _mapping_once(value, (*path, str(name)), where)


def _papermill_ancestors() -> list[tuple[list[str], Path]]:
    """The command lines (and working folders) of this process's ancestors that are papermill (``papermill ...``,
    ``python .../bin/papermill ...``, ``python -m papermill ...``), read from ``/proc`` (none where it is absent)."""
    import os

    found, current = [], os.getppid()
    for _ in range(64):
        if current <= 1:
            break
        try:
            argv = Path(f"/proc/{current}/cmdline").read_bytes().decode(errors="replace").split("\0")
            cwd = Path(f"/proc/{current}/cwd").resolve()
            current = int(Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
        argv = [a for a in argv if a != ""] if argv and argv[-1] == "" else argv
        for i, arg in enumerate(argv[:3]):
            if Path(arg).name == "papermill" or (arg == "papermill" and i and argv[i - 1] == "-m"):
                found.append((argv[i + 1:], cwd))
                break
    return found


def _papermill_yaml(args: list[str], cwd: Path | None = None) -> list[tuple[str, str]]:
    """The YAML texts of papermill's arguments ``args`` (``-y TEXT``, ``-f FILE`` read from papermill's working
    folder ``cwd``, ``-b BASE64`` and their long forms), each with where it came from."""
    import base64

    out, i = [], 0
    options = {"-y": "yaml", "--parameters_yaml": "yaml", "-f": "file", "--parameters_file": "file",
               "-b": "base64", "--parameters_base64": "base64"}
    while i < len(args):
        arg, value = args[i], None
        if arg == "--":
            break
        if arg in options:
            kind = options[arg]
            value = args[i + 1] if i + 1 < len(args) else None
            i += 1
        elif arg.startswith("--") and "=" in arg and arg.split("=", 1)[0] in options:
            kind, value = options[arg.split("=", 1)[0]], arg.split("=", 1)[1]
        elif arg[:2] in ("-y", "-f", "-b") and len(arg) > 2:
            kind, value = options[arg[:2]], arg[2:]
        elif arg in ("-p", "--parameters", "-r", "--parameters_raw"):
            i += 3  # a name and a value: the value is no option even if it looks like one
            continue
        i += 1
        if value is None:
            continue
        try:
            if kind == "yaml":
                out.append(("papermill -y", value))
            elif kind == "file":
                out.append((f"papermill -f {Path(value).name}", (Path(cwd or ".") / value).read_text(encoding="utf-8")))
            else:
                out.append(("papermill -b", base64.b64decode(value).decode("utf-8")))
        except (OSError, ValueError):
            continue  # a file papermill reads relative to another folder, or bad base64: papermill's own refusal
    return out


#: the chapters whose lock this process holds (a JupyterLab kernel that runs its chapter again keeps it)
_HELD: dict[str, Any] = {}


def hold_lock(chapter: str) -> None:
    """Take the one-writer lock of ``chapter`` (:func:`icdl.repro.execute.chapter_lock`, the lock ``python -m
    icdl.repro.execute`` holds) for the rest of this process, unless this process or, through
    :data:`LOCK_ENV`, one of its ancestors already holds it. A second writer -- papermill run on a notebook
    that ``execute`` is running, or the reverse -- is refused at once with
    :class:`~icdl.repro.files.ResultFileError` in one line naming the process that holds the lock."""
    import os

    if chapter in _HELD:
        return
    name, _, pid = os.environ.get(LOCK_ENV, "").partition(":")
    if name == chapter and pid.isdigit() and _is_ancestor(int(pid)) and _holds(chapter, int(pid)):
        return
    lock = chapter_lock(chapter)
    lock.__enter__()  # released when the process ends (the kernel of a notebook, a script)
    _HELD[chapter] = lock


def _holds(chapter: str, pid: int) -> bool:
    """Whether process ``pid`` holds the lock of ``chapter`` now: the lock is taken (a non-blocking try fails) and
    its line names ``pid``. An environment that names an ancestor which holds nothing (``ICDL_CHAPTER_LOCK=<chapter>:1``
    set by hand: pid 1 is everyone's ancestor) is not honoured."""
    import fcntl
    import os
    import re

    from .files import lock_file, project_root

    path, _ = lock_file(project_root() / "notebooks" / f"{chapter}.py")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # held: by whom?
            found = re.match(r"pid (\d+)", os.pread(fd, 64, 0).decode(errors="replace"))
            return bool(found) and int(found[1]) == pid
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False  # nobody holds it
    finally:
        os.close(fd)


def _is_ancestor(pid: int) -> bool:
    """Whether ``pid`` is this process's parent or an ancestor (``/proc``; the parent alone where it is absent)."""
    import os
    from pathlib import Path

    current = os.getppid()
    for _ in range(64):
        if current == pid:
            return True
        if current <= 1:
            return False
        try:
            current = int(Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
    return False


#: every value glued since the chapter's :func:`start`, by name (what :func:`show_glued` lists)
GLUED: dict[str, Any] = {}


class Commands:
    """A glued text that holds a command (``python -m …``, ``--part depth --layers L``): its plain text, and
    the same text as markdown with each command as inline code (:func:`~icdl.repro.ledger.commands_as_code`),
    which the prose quotes with ``{glue:md}``. Quoted with ``{glue:text}`` the typographer would print the
    options' ``--`` as an en dash (``–part``)."""

    def __init__(self, text: str):
        self.text = text
        self.data = commands_as_code(text)

    def __repr__(self) -> str:
        return repr(self.text)

    def _repr_markdown_(self) -> str:
        return self.data


def glue(**values: Any) -> None:
    """Glue each value under its name for ``{glue:text}`` in the prose (not shown where it is computed); a
    text's negative numbers with a minus sign (:func:`typeset_minus`). A text that holds a command is glued as
    :class:`Commands`: the prose quotes it with ``{glue:md}``, which shows the commands as code."""
    import re

    from myst_nb import glue as _glue

    from .ledger import COMMAND

    for name, value in values.items():
        if isinstance(value, str):
            value = typeset_minus(short_exponents(value))
            if re.search(COMMAND, value):
                value = Commands(value)
        _glue(name, value, display=False)
        GLUED[name] = value


def glue_md(**values: str) -> None:
    """Glue each text as markdown (:class:`Commands`, its commands as inline code) for ``{glue:md}`` in the
    prose, whether or not this run's text holds a command (a ``{glue:md}`` of a plain text shows nothing)."""
    from myst_nb import glue as _glue

    for name, value in values.items():
        value = Commands(typeset_minus(short_exponents(str(value))))
        _glue(name, value, display=False)
        GLUED[name] = value


def glued_html() -> str:
    """The chapter's claims box (if glued) and a table of every other glued value, by the name the prose
    quotes, as HTML."""
    import re
    from html import escape

    def shown(value) -> str:
        if isinstance(value, Commands):  # its commands as code, as the book shows them
            return re.sub(r"`([^`]*)`", r"<code>\1</code>", escape(value.data))
        return value.data if hasattr(value, "data") and isinstance(value.data, str) else escape(str(value))

    box = shown(GLUED["claims_box"]) if "claims_box" in GLUED else ""
    rows = "".join(f"<tr><td><code>{escape(k)}</code></td><td>{shown(v)}</td></tr>"
                   for k, v in GLUED.items() if k != "claims_box")
    table = (f'<table class="dataframe"><thead><tr><th>name in the prose</th><th>value</th></tr></thead>'
             f"<tbody>{rows}</tbody></table>") if rows else ""
    return (f"<div><p><b>The numbers this page's prose quotes</b> (the book pastes them into the text; a "
            f"notebook front end shows the names):</p>{box}{table}</div>")


def show_glued():
    """The claims box and the glued values, displayed: the last cell of a chapter calls it (hidden in the
    book, whose prose and box show them in place), so that a reader running the page in JupyterLab, which
    cannot paste glued values, sees what each ``{glue:text}`` name in the prose stands for."""
    from IPython.display import HTML

    return HTML(glued_html())


def reference_or_live(profiles: ProfileSet, stems: tuple[str, ...], load: Callable[..., Any],
                      live: Callable[[], Any], live_profile: str, profile: str = "reference") -> tuple[Any, str]:
    """The one "reference if complete, else live" policy of the book: the committed results
    ``results/<chapter>/<stem>.<profile>.json`` of every stem, read by ``load(*objects)``, if they all exist
    and all say ``complete``; otherwise ``live()`` (called only then). Returns ``(data, judged_on)``, where
    ``judged_on`` names what the claims are judged on. A file that exists but does not load is an error
    (:func:`icdl.repro.results.show_reference`), never a silent fall-back."""
    from .results import show_reference

    raws = [show_reference(profiles, stem, profile) for stem in stems]
    if all(raw is not None and raw["data"].get("complete") is True for raw in raws):
        return load(*raws), profile
    incomplete = [s for s, raw in zip(stems, raws) if raw is not None and raw["data"].get("complete") is not True]
    if incomplete:
        print(f"{profile} result(s) {incomplete} not complete: judged on the live {live_profile} run")
    return live(), f"{live_profile} (no complete {profile} result)"
