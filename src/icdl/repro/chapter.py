"""What every chapter's code cells share: the first cell's set-up (:func:`start`), the one policy for which
data a chapter judges (:func:`reference_or_live`), numbers glued into the prose (:func:`glue`, and
:func:`show_glued` for JupyterLab), tables for people (:func:`table`, drawn by :mod:`.tables`); a chapter's
parameters are checked by :mod:`.parameters`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from . import reads
from .execute import LOCK_ENV, chapter_lock
from .ledger import Ledger
from .parameters import overrides_dict, papermill_yaml_once
from .profiles import ProfileSet
from .tables import frame_html, series_html
from .theme import use_style
from .typeset import commands_as_code, keep_ranges, named_attentions, short_exponents, typeset_minus


def table(df, digits: int = 3):
    """A DataFrame (or a Series, as its one column) as the page shows it: rounded, then :func:`frame_html`, as
    HTML whose plain-text fallback is fixed (a Styler's repr carries a memory address that changes on every
    run)."""
    import pandas as pd
    from IPython.display import HTML

    return HTML(series_html(df, digits) if isinstance(df, pd.Series) else frame_html(df, digits))


#: the settings every resolved profile carries besides the chapter's own (:meth:`ProfileSet.resolve`), in words
RUN_MEANINGS = {"profile": "the named set of settings this run uses", "overrides": "settings changed from the "
                "profile's with --set", "run": "the run's name: the profile and its overrides"}


def settings(cfg: Mapping[str, Any], profiles: ProfileSet | None = None):
    """A chapter's resolved settings as a table (setting, its meaning in words from ``profiles.meanings``, value),
    each value as the book writes numbers (``1e-5``, not Python's ``1e-05``) -- what a chapter's first cell shows
    of its profile. The setting is its ``--set`` key, as code; the meaning says what it is (a key alone, ``B_w``
    or ``mc``, told a reader nothing)."""
    import pandas as pd
    from IPython.display import HTML

    from .typeset import count, plain, rate

    def value(v, key: str = ""):
        if isinstance(v, bool):
            return "yes" if v else "no"
        if isinstance(v, int):
            return count(v) if abs(v) >= 1000 and "seed" not in key else str(v)  # 5 000 steps, seed 1234
        if isinstance(v, float):
            return rate(v) if key == "lr" else plain(v)  # a learning rate as every rate is written: 1e-4
        if isinstance(v, (tuple, list)):
            return ", ".join(value(x, key) for x in v) if v else "—"
        return str(v)

    table = {"setting": list(cfg), "value": [value(v, k) for k, v in cfg.items()]}
    if profiles is not None and profiles.meanings:
        words = {**RUN_MEANINGS, **profiles.meanings}
        table = {"setting": table["setting"], "meaning": [words.get(k, "") for k in cfg],
                 "value": table["value"]}
    out = frame_html(pd.DataFrame(table))
    for key in cfg:  # a setting's name as code: what --set takes (and N_max is a name, not a subscript)
        out = out.replace(f"<td>{key}</td>", f"<td><code>{key}</code></td>", 1)
    return HTML(out)


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
    papermill_yaml_once()
    profiles.check_chapter_profile(profile)
    cfg = profiles.resolve(profile, **overrides_dict(overrides))
    hold_lock(profiles.chapter)
    use_style()
    _vector_figures()
    _readable_frames()
    GLUED.clear()
    reads.forget()  # the ledger pins the results this chapter reads, not an earlier one's (icdl.repro.reads)
    return cfg, Ledger(profiles.chapter, profile, seed=cfg.get("seed"), overrides=cfg["overrides"])


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
    the kernel names ``pid`` as its holder (:func:`lock_holders`). An environment that names an ancestor which holds
    nothing (``ICDL_CHAPTER_LOCK=<chapter>:1`` set by hand: pid 1 is everyone's ancestor) is not honoured, nor one
    that names a process whose pid was written into the lock file's line by hand while another process holds the
    lock (issue 70: the file's text is anyone's to write; the kernel's table of locks is not)."""
    import fcntl
    import os

    from .files import lock_file, project_root

    path, _ = lock_file(project_root() / "notebooks" / f"{chapter}.py")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:  # held: by whom? the kernel says
            return pid in lock_holders(fd)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False  # nobody holds it
    finally:
        os.close(fd)


def lock_holders(fd: int, table: str = "/proc/locks") -> set[int]:
    """The processes the kernel lists as holding an ``flock`` on the file open as ``fd`` (Linux's ``/proc/locks``:
    ``1: FLOCK  ADVISORY  WRITE <pid> <major>:<minor>:<inode> 0 EOF``, the device in hex). Empty where the table
    cannot be read (another system): then no ancestor's lock is honoured, and a chapter takes its own lock."""
    import os

    st = os.fstat(fd)
    device = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        lines = open(table, encoding="ascii", errors="replace").read().splitlines()
    except OSError:
        return set()
    holders = set()
    for line in lines:
        parts = line.split()
        if len(parts) >= 6 and parts[1] == "FLOCK" and parts[5] == device and parts[4].isdigit():
            holders.add(int(parts[4]))
    return holders


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
    the same text as markdown with each command as inline code (:func:`~icdl.repro.typeset.commands_as_code`),
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

    from .typeset import COMMAND

    for name, value in values.items():
        if isinstance(value, str):
            value = keep_ranges(named_attentions(typeset_minus(short_exponents(value))))
            if re.search(COMMAND, value):
                value = Commands(value)
        _glue(name, value, display=False)
        GLUED[name] = value


def glue_md(**values: str) -> None:
    """Glue each text as markdown (:class:`Commands`, its commands as inline code) for ``{glue:md}`` in the
    prose, whether or not this run's text holds a command (a ``{glue:md}`` of a plain text shows nothing)."""
    from myst_nb import glue as _glue

    for name, value in values.items():
        value = Commands(keep_ranges(named_attentions(typeset_minus(short_exponents(str(value))))))
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
