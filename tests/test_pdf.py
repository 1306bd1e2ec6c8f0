"""The book as one PDF (``make pdf``, icdl.repro.pdf): every page of the table of contents, in its order, with a
bookmark per page and its formulas typeset; ``make test`` builds it after the HTML, before these tests."""

from pathlib import Path

import pytest

from icdl.repro import pdf

ROOT = Path(__file__).resolve().parents[1]
BUILT = ROOT / pdf.OUT


@pytest.fixture(scope="module")
def book():
    from pypdf import PdfReader

    if not BUILT.is_file():
        pytest.fail(f"{BUILT} is missing: run `make html` then `make pdf` (make test does)")
    return PdfReader(BUILT)


def test_the_pdf_holds_every_page_of_the_book_in_reading_order(book):
    """One bookmark per entry of _toc.yml, in its order, each at a sheet after the one before (the bugs: pages
    printed in the file system's order, a chapter dropped, every bookmark at sheet 0)."""
    pages = pdf.page_order(ROOT / "_build" / "html", ROOT / "_toc.yml")
    marks = [(o.title, book.get_destination_page_number(o)) for o in book.outline]
    assert len(marks) == len(pages) >= 20
    starts = [sheet for _, sheet in marks]
    assert starts == sorted(starts) and len(set(starts)) == len(starts) and starts[0] == 0
    assert marks[0][0].startswith("In-context deep learning") and marks[-1][0] == "References"
    assert len(book.pages) > 2 * len(pages)


def test_the_first_sheet_is_the_intro_with_its_verdicts_and_formulas_typeset(book):
    """The first sheet holds the intro's title and the generated verdicts; no page shows raw TeX delimiters,
    which MathJax would have replaced (the bug: printing before MathJax finished)."""
    first = book.pages[0].extract_text()
    assert "In-context deep learning" in first and "results pass" in first
    raw = [i for i, sheet in enumerate(book.pages[:40]) if "\\(" in (sheet.extract_text() or "")]
    assert not raw, f"raw TeX on sheets {raw[:5]}"


def test_a_book_without_a_page_of_its_toc_is_refused_in_one_line(tmp_path):
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nparts:\n  - chapters:\n"
                                       "      - file: notebooks/x\n")
    (tmp_path / "html" / "book").mkdir(parents=True)
    (tmp_path / "html" / "book" / "intro.html").write_text("<html></html>")
    with pytest.raises(pdf.PdfError, match=r"no page for .*notebooks/x.html \(and 0 more\): run `make html`"):
        pdf.page_order(tmp_path / "html", tmp_path / "_toc.yml")


def test_join_writes_one_pdf_with_a_bookmark_per_printed_page(tmp_path):
    """join on two tiny PDFs: their sheets in order, a bookmark at each one's first sheet, and no temporary file
    left beside the result."""
    import io

    from pypdf import PdfReader, PdfWriter

    def tiny(sheets: int) -> bytes:
        w = PdfWriter()
        for _ in range(sheets):
            w.add_blank_page(width=100, height=100)
        buf = io.BytesIO()
        w.write(buf)
        return buf.getvalue()

    out = pdf.join([("One", tiny(2)), ("Two", tiny(1))], tmp_path / "b.pdf")
    r = PdfReader(out)
    assert len(r.pages) == 3
    assert [(o.title, r.get_destination_page_number(o)) for o in r.outline] == [("One", 0), ("Two", 2)]
    assert [p.name for p in tmp_path.iterdir()] == ["b.pdf"]
