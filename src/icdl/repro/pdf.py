"""The book as one PDF (``make pdf``): every page of the built HTML book, in the order of ``_toc.yml``, printed by
the headless Chromium the browser tests already drive, then joined with a bookmark per page.

Why this route: Jupyter Book's own PDF builders need either a TeX installation (several hundred MB, on neither these
machines nor CI) or pyppeteer's download of a browser at build time (no network). Printing the rendered pages keeps
what the HTML book shows -- MathJax's formulas, the SVG figures, the claims boxes (their folded parts opened first,
so the print holds what a click would show; hidden code stays folded) -- and works offline.

========================  ===========================================================================================
:func:`page_order`        the built pages of the book's table of contents, in reading order
:func:`print_pages`       each page printed to PDF by Chromium once MathJax has typeset it
:func:`join`              the pages' PDFs as one, a bookmark per page (its title)
:func:`main`              ``python -m icdl.repro.pdf [--html DIR] [--out FILE]``
========================  ===========================================================================================
"""

from __future__ import annotations

import base64
import io
import shutil
import sys
from pathlib import Path

from .files import project_root

#: where ``make pdf`` writes the book: inside the built site, so the first page can link it
OUT = Path("_build") / "html" / "_static" / "icdl-book.pdf"
CHROMIUM, DRIVER = "chromium", "chromedriver"

#: run in each page before printing: every folded part of the text opened (not the toggles of hidden code cells,
#: ``details.hide``), and a promise that settles once MathJax is done
_SETTLE = """
const done = arguments[arguments.length - 1];
document.querySelectorAll('details:not(.hide)').forEach(d => d.open = true);
const ready = window.MathJax && MathJax.startup && MathJax.startup.promise;
(ready ? MathJax.startup.promise : Promise.resolve()).then(() => done(document.title), () => done(document.title));
"""


class PdfError(Exception):
    """A PDF that cannot be made (no built book, no browser): one line saying what to do."""


def page_order(html: Path, toc: Path) -> list[Path]:
    """The built page of every entry of ``toc`` (its root, then each part's chapters), in that order; an entry
    without a built page is refused naming it (the book was built from another table of contents)."""
    import yaml

    spec = yaml.safe_load(toc.read_text(encoding="utf-8"))
    files = [spec["root"]] + [c["file"] for part in spec.get("parts", ()) for c in part.get("chapters", ())]
    pages = [html / f"{f}.html" for f in files]
    missing = [str(p) for p in pages if not p.is_file()]
    if missing:
        raise PdfError(f"the built book has no page for {missing[0]} (and {len(missing) - 1} more): run `make html`")
    return pages


def print_pages(pages: list[Path]) -> list[tuple[str, bytes]]:
    """``(title, pdf bytes)`` of each page, printed by headless Chromium (A4, backgrounds on) after MathJax has
    typeset it and every ``<details>`` is open."""
    missing = [p for p in (CHROMIUM, DRIVER) if not shutil.which(p)]
    if missing:
        raise PdfError(f"{' and '.join(missing)} not found: run `make setup` (it installs Debian's chromium and "
                       "chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.print_page_options import PrintOptions

    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which(CHROMIUM)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                 "--allow-file-access-from-files", "--window-size=1280,900"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(shutil.which(DRIVER)), options=opts)
    driver.set_script_timeout(120)
    printed = []
    try:
        for page in pages:
            driver.get(page.resolve().as_uri())
            title = driver.execute_async_script(_SETTLE) or page.stem
            options = PrintOptions()
            options.background = True
            options.page_width, options.page_height = 21.0, 29.7  # A4, in centimetres
            printed.append((title.split(" — ")[0].strip(), base64.b64decode(driver.print_page(options))))
    finally:
        driver.quit()
    return printed


def join(printed: list[tuple[str, bytes]], out: Path) -> Path:
    """One PDF of the printed pages at ``out`` (written beside it, then renamed: never half a file), a bookmark per
    page at its first sheet."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for title, data in printed:
        first = len(writer.pages)
        for sheet in PdfReader(io.BytesIO(data)).pages:
            writer.add_page(sheet)
        writer.add_outline_item(title=title, page_number=first)
    writer.add_metadata({"/Title": "In-context deep learning, executed"})
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_name(f".{out.name}.tmp")
    with open(part, "wb") as fh:
        writer.write(fh)
    part.replace(out)
    return out


PROG = "python -m icdl.repro.pdf"


def parser():
    """The command's arguments (every flag in ``tests/test_command_flags.py``'s table)."""
    from .cli import Parser

    p = Parser(prog=PROG, description="Print the built book to one PDF.")
    p.add_argument("--html", type=Path, default=None, help="the built HTML book (default: _build/html)")
    p.add_argument("--out", type=Path, default=None, help=f"the PDF to write (default: {OUT})")
    return p


def main(argv: list[str] | None = None) -> int:
    from .files import ResultFileError, check_outputs
    from .profiles import dry_run

    root = project_root()
    args = parser().parse_args(argv)
    html, out = args.html or root / "_build" / "html", args.out or root / OUT
    try:
        check_outputs([out], inputs=(root / "_toc.yml",))  # never over a result, nor over what it reads
        if dry_run(f"print the book in {html} to {out}"):
            return 0
        pages = page_order(html, root / "_toc.yml")
        out = join(print_pages(pages), out)
    except (PdfError, ResultFileError) as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {out} ({len(pages)} pages of the book)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
