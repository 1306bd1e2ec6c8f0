"""Each chapter's .py source and its committed, executed .ipynb are one notebook."""

import re
from pathlib import Path

import jupytext
import nbformat
import pytest

from conftest import pseudo_math, scratch_clone
from icdl.repro.execute import chapters

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = [ROOT / "notebooks" / f"{name}.py" for name in chapters(ROOT)]


@pytest.mark.parametrize("src", CHAPTERS, ids=lambda p: p.stem)
def test_pair_is_in_sync_and_executed(src):
    nb_path = src.with_suffix(".ipynb")
    assert nb_path.is_file(), f"{src.name} has no paired {nb_path.name}; run make book"
    text = jupytext.read(src)
    executed = nbformat.read(nb_path, as_version=4)
    assert [(c.cell_type, c.source) for c in text.cells] == [(c.cell_type, c.source) for c in executed.cells], (
        f"{nb_path.name} is out of date with {src.name}: run `python -m icdl.repro.execute {src.stem}`")
    code = [c for c in executed.cells if c.cell_type == "code"]
    assert all(c.execution_count for c in code), f"{nb_path.name} is not fully executed"
    assert not any(o.output_type == "error" for c in code for o in c.outputs)
    assert executed.metadata["kernelspec"]["name"] == "python3"
    assert any("parameters" in c.metadata.get("tags", []) for c in code), "no cell tagged 'parameters'"
    # the tags reach the executed notebook (nbval reads them there), and every chapter pins at least one checked
    # output: a chapter whose numbers drift with nothing pinned would pass nbval unseen
    tags = lambda cells: [c.metadata.get("tags", []) for c in cells]  # noqa: E731
    assert tags(text.cells) == tags(executed.cells), f"{nb_path.name}: cell tags differ from {src.name}; re-execute"
    checked = [c for c in code if "NBVAL_CHECK_OUTPUT" in c.metadata.get("tags", [])]
    assert any(c.outputs for c in checked), f"{src.name} pins no checked output (tag a cell NBVAL_CHECK_OUTPUT)"
    # deterministic cell ids: re-executing with the same outputs leaves no diff
    assert [c.get("id") for c in executed.cells] == [f"{src.stem}-{i}" for i in range(len(executed.cells))]



@pytest.mark.parametrize("src", CHAPTERS, ids=lambda p: p.stem)
def test_the_bookkeeping_cells_are_hidden_in_the_book(src):
    """The parameters cell (``profile = "quick"``) is removed from the rendered page and the cells that record
    the claims show their table without their code: a chapter that dropped the tag would open on a line of
    bookkeeping and close on a cell of escaped LaTeX."""
    code = [c for c in jupytext.read(src).cells if c.cell_type == "code"]
    for c in code:
        tags = c.metadata.get("tags", [])
        if "parameters" in tags:
            assert "remove-cell" in tags, f"{src.name}: the parameters cell is not tagged remove-cell"
        elif "ledger.record" in c.source or "ledger.save()" in c.source:
            assert {"remove-cell", "remove-input"} & set(tags), (
                f"{src.name}: a cell recording claims shows its code (tag it remove-input)")

#: the tables a chapter shows whose printed numbers nbval cannot pin, with what pins them instead: a live timing
#: of the machine, or digits that round-off or a live training decides differently on another CPU
UNPINNED_TABLES = {
    # the settings each chapter resolves (chapter.settings, with its profiles' meanings), read from its profile:
    # tests/test_profiles_results.py checks the profiles, their resolution and the meanings
    **{(c, "chapter.settings(cfg, "): "the profile's settings as resolved" for c in (
        "attention_passes", "diffusion_score", "gradient_decomposition", "icgd_linear", "icgd_transformer",
        "lsa_training", "relu_sums", "softmax")},
    ("computation", "benchmark_shown(live_bench)"): "a live timing of this machine (the committed reference beside it "
                                            "is pinned)",
    ("computation", "cost.cost_table(reb)"): "live times; its FLOP counts: tests/test_gpt_cost.py",
    ("gradient_decomposition", "worst.map("): "deviations at round-off (1e-16), whose digits vary by CPU; the "
                                              "claim icdl-lemma1 bounds them (< 1e-12)",
    ("gradient_decomposition", "bench.round(2)"): "a live timing of this machine",
    ("lsa_training", "t1_live.round(5)"): "a live float32 training; its curve: "
                                          "tests/test_figures.py::test_lsa_training_curve_numbers",
    ("softmax", "softmax_study.one_step_shown(one_step)"): "a live float32 fit; its numbers: "
                                                           "tests/test_figures.py::test_softmax_fit_numbers",
    ("softmax", "softmax_study.sizes_comparison("): "sizes from the live fit's best width; the formulas: "
                                                    "tests/test_softmax.py",
}


def test_every_table_a_chapter_shows_is_pinned():
    """Each table a chapter shows (an HTML table in a visible cell's output) is a checked output
    (``NBVAL_CHECK_OUTPUT``: nbval compares it on every run of the suite) or is listed in
    :data:`UNPINNED_TABLES` with what guards its numbers instead: a table of committed numbers cannot drift
    unseen."""
    unused = set(UNPINNED_TABLES)
    for src in CHAPTERS:
        nb = nbformat.read(src.with_suffix(".ipynb"), as_version=4)
        for c in nb.cells:
            tags = c.metadata.get("tags", []) if c.cell_type == "code" else []
            if c.cell_type != "code" or "remove-cell" in tags or "NBVAL_CHECK_OUTPUT" in tags:
                continue
            if any("<table" in str(o.get("data", {}).get("text/html", "")) for o in c.outputs):
                keys = [k for k in UNPINNED_TABLES if k[0] == src.stem and k[1] in c.source]
                assert keys, f"{src.stem}: a table no check pins; tag its cell NBVAL_CHECK_OUTPUT:\n{c.source[:200]}"
                unused -= set(keys)
    assert not unused, f"exemptions of tables no chapter shows any more: {sorted(unused)}"


def test_strip_volatile_numbers_cells_and_drops_timings():
    from icdl.repro.execute import _strip_volatile

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1"), nbformat.v4.new_markdown_cell("x")])
    nb.metadata["papermill"] = {"duration": 1.0}
    nb.cells[0].metadata["execution"] = {"t": 1}
    _strip_volatile(nb, "demo")
    assert [c.id for c in nb.cells] == ["demo-0", "demo-1"]
    assert "papermill" not in nb.metadata and "execution" not in nb.cells[0].metadata
    nbformat.validate(nb)


def test_every_notebook_is_a_chapter_of_the_toc():
    """The TOC is the one list of chapters: a notebook it does not name would never be executed or built,
    and a name it lists must exist."""
    on_disk = {p.stem for p in (ROOT / "notebooks").glob("*.py")}
    assert on_disk == {p.stem for p in CHAPTERS}
    assert all(p.is_file() for p in CHAPTERS)


def test_chapter_ids_are_slugs_and_shadow_no_module():
    """Chapter ids are topic slugs (the order lives in _toc.yml alone), and none shadows an importable
    module for the kernel, which starts in notebooks/ with that folder first on sys.path."""
    import importlib.util
    import re

    for src in CHAPTERS:
        assert re.fullmatch(r"[a-z][a-z0-9_]*", src.stem), src.stem
        assert not re.match(r"\d", src.stem), f"{src.stem}: no numbers in chapter ids; order them in _toc.yml"
        assert importlib.util.find_spec(src.stem) is None, f"notebooks/{src.stem}.py shadows a module"


def test_no_prose_names_a_chapter_by_number():
    """Chapters are renamed and reordered in _toc.yml alone: prose links to them ({doc}) instead."""
    import re

    pattern = re.compile(r"\b[Cc]hapters? \d")
    for path in [*CHAPTERS, *(ROOT / "book").glob("*.md"), *(ROOT / "src").rglob("*.py")]:
        hits = [line for line in path.read_text(encoding="utf-8").splitlines() if pattern.search(line)]
        assert not hits, f"{path.relative_to(ROOT)} names a chapter by number: {hits[:3]}"


def test_execute_takes_chapter_ids_of_the_toc_only_and_each_setting_once(capsys):
    """A path (``../src/icdl/__init__``) or an unknown id is refused before anything is executed or written;
    ``--set n=-1 --set n=8`` is refused rather than the last value winning silently."""
    import pytest

    from icdl.repro.execute import execute_chapter, main

    for name in ("../src/icdl/__init__", "no_such_chapter"):
        with pytest.raises(SystemExit, match="unknown chapter"):
            execute_chapter(name, root=ROOT)
    assert not (ROOT / "src" / "icdl" / "__init__.ipynb").exists()
    with pytest.raises(SystemExit) as exc:
        main(["icgd_linear", "--set", "n=-1", "--set", "n=8"])
    assert exc.value.code == 2 and "given twice" in capsys.readouterr().err
    # a value or profile that would make the run's notebook name a path is refused before anything runs: by
    # the chapter's own settings first (in one line naming the setting), by the file-name check behind them
    refused = ((["icgd_linear", "--set", "n=../../x"], "n='../../x'"),
               (["icgd_linear", "--profile", "../quick"], "unknown profile '../quick'"))
    for args, named in refused:
        with pytest.raises(SystemExit) as exc:
            main(args)
        err = capsys.readouterr().err
        assert exc.value.code == 2 and named in err and "Traceback" not in err, err
    for args in (("icgd_linear", "quick", {"n": "../../x"}), ("icgd_linear", "../quick", {})):
        with pytest.raises(SystemExit, match="must be names and numbers"):
            execute_chapter(*args, root=ROOT)
    assert not (ROOT / "x.ipynb").exists() and not list((ROOT / "runs").glob("icgd_linear.*/*"))


def test_an_override_run_is_its_own_run(tmp_path, monkeypatch):
    """``execute icgd_linear --set n=8`` must not rewrite the quick profile's summary or ledger under the
    profile's name: its files go to runs/overrides/, named by the overrides, and their provenance's command
    is the one that reproduces them (with the --set)."""
    import json
    import shutil

    from icdl.repro.execute import execute_chapter

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    (tmp_path / "notebooks").mkdir()
    shutil.copy(ROOT / "_toc.yml", tmp_path / "_toc.yml")
    shutil.copy(ROOT / "notebooks" / "icgd_linear.py", tmp_path / "notebooks" / "icgd_linear.py")
    out, _ = execute_chapter("icgd_linear", "quick", {"n": 8}, root=tmp_path)
    assert out == tmp_path / "runs" / "icgd_linear.quick+n=8.ipynb"
    assert not (tmp_path / "results" / "ledger" / "icgd_linear.quick.json").exists()
    assert not (tmp_path / "results" / "icgd_linear" / "summary.quick.json").exists()
    for path in (tmp_path / "runs" / "overrides" / "ledger" / "icgd_linear.quick+n=8.json",
                 tmp_path / "runs" / "overrides" / "icgd_linear" / "summary.quick+n=8.json"):
        prov = json.loads(path.read_text())["provenance"]
        assert prov["command"] == "python -m icdl.repro.execute icgd_linear --profile quick --set n=8", path


def test_chapters_name_the_kernel_that_setup_installs():
    """Opening a chapter in JupyterLab must not mark it changed: its kernelspec (the .py header and the
    executed .ipynb) is the one ``make setup`` installs (``ipykernel install --name python3``)."""
    import json
    import sys

    installed = Path(sys.prefix) / "share" / "jupyter" / "kernels" / "python3" / "kernel.json"
    display = json.loads(installed.read_text())["display_name"] if installed.is_file() else "Python 3 (ipykernel)"
    for src in CHAPTERS:
        assert f"#     display_name: {display}\n" in src.read_text(encoding="utf-8"), src.name
        nb = json.loads(src.with_suffix(".ipynb").read_text(encoding="utf-8"))
        assert nb["metadata"]["kernelspec"]["display_name"] == display, src.name


def test_committed_notebooks_carry_the_outputs_of_the_current_code():
    """Figures are drawn as SVG (icdl.repro.chapter.start): a committed notebook with a PNG figure was executed
    by older code and would change on the next rerun. And the .py saves as it is (jupytext.toml: no version
    stamps), so a save from JupyterLab touches only what the reader edited."""
    for src in CHAPTERS:
        nb = nbformat.read(src.with_suffix(".ipynb"), as_version=4)
        kinds = {k for c in nb.cells if c.cell_type == "code" for o in c.outputs for k in o.get("data", {})}
        assert "image/png" not in kinds, f"{src.stem}.ipynb has PNG figures: re-execute it"
        # a progress bar prints rates and times, so every rerun would change the committed notebook
        streams = "".join(str(o.get("text", "")) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
        assert not re.search(r"\d+/\d+ \[\d+:\d+", streams), f"{src.stem}.ipynb has a progress bar in its outputs"
        resaved = jupytext.writes(jupytext.read(src), fmt="py:percent")
        assert resaved == src.read_text(encoding="utf-8"), f"{src.name} changes when jupytext saves it"
        assert not any(ord(ch) > 127 for c in nb.cells for ch in str(c.metadata.get("mystnb", ""))), (
            f"{src.stem}: a figure caption with non-ASCII text (jupytext writes it as \\u escapes)")


def svg_text_sizes(svg: str) -> tuple[float, list[float]]:
    """An SVG figure's width in inches and the font size, in points, of each text it draws (matplotlib writes
    each glyph run as a path group scaled by ``fontsize / 100``)."""
    import re

    width_pt = float(re.search(r'<svg[^>]*\swidth="([0-9.]+)pt"', svg).group(1))
    sizes = [100 * float(m) for m in re.findall(r"scale\(([0-9.]+) -\1\)", svg)]
    return width_pt / 72, sizes


def committed_figures():
    """``(chapter, cell index, SVG)`` for every figure of every committed chapter notebook."""
    for src in CHAPTERS:
        nb = nbformat.read(src.with_suffix(".ipynb"), as_version=4)
        for i, c in enumerate(nb.cells):
            for o in c.get("outputs", []):
                if svg := o.get("data", {}).get("image/svg+xml"):
                    yield src.stem, i, svg


def test_figure_text_has_no_math_as_plain_text():
    """Every text a committed figure draws (tick labels, axis labels, legends, titles, annotations; matplotlib
    writes each as a comment beside its glyphs) sets its formulas as mathtext, not as ``H^(−1/2)`` or
    ``ε_r`` in plain characters."""
    found = [f"{stem} cell {i}: {text!r} ({hit!r})" for stem, i, svg in committed_figures()
             for text in re.findall(r"<!-- (.*?) -->", svg) for hit in pseudo_math(text)]
    assert not found, "\n".join(found)


def test_the_pseudo_math_check_sees_plain_formulas_and_spares_words():
    """The check itself, on the bugs it was written for and on the text it must leave alone."""
    for bad in ("Lemma 7 rate ∝ H^(−1/2)", "sup error ∝ H^-1.8", "ε_r of the sum", "max |w_explicit − w|",
                "L_f estimate", "(1 + nL_f)^l", "y_{n+1}", r"\hat w"):
        assert pseudo_math(bad), bad
    for fine in ("$\\propto H^{-1/2}$", "results/gpt_scale/scale.json", "icdl.gpt_icl", "snake_case name",
                 "R² at k = 40", "$\\mathdefault{10^{-2}}$", "ε⁻²", "x̄ and ȳ"):
        assert not pseudo_math(fine), fine


def test_figure_text_is_legible_at_the_books_width():
    """Every figure of every committed chapter, shown in the book's column: no text under 11 px (ticks,
    legends and annotations of a figure drawn too wide, or at 6-7 pt, fell to 6-8 px beside 16 px body
    text)."""
    from icdl.figures.style import rendered_px

    small = []
    for stem, i, svg in committed_figures():
        width, sizes = svg_text_sizes(svg)
        if sizes and (px := rendered_px(min(sizes), width)) < 11:
            small.append(f"{stem} cell {i}: {min(sizes):.1f} pt in a {width:.1f} in figure = {px:.1f} px")
    assert not small, "\n".join(small)


def test_the_legibility_check_reads_sizes_and_shrinking():
    """The check itself: a 7 pt legend is too small at any width; 9 pt is legible in a 7 in figure and not in a
    12 in one that the column shrinks."""
    from icdl.figures.style import rendered_px

    svg = '<svg width="504pt" height="200pt"><g transform="translate(1 2) scale(0.07 -0.07)"></g></svg>'
    width, sizes = svg_text_sizes(svg)
    assert width == 7.0 and sizes == pytest.approx([7.0]) and rendered_px(7.0, width) < 11
    assert rendered_px(9.0, 7.0) >= 11 > rendered_px(9.0, 12.0)


def test_a_rerun_at_the_default_changes_no_byte():
    """Executing a chapter twice at its default writes the same notebook and leaves its quick result and
    ledger files as they were (icdl.repro.results.save_result(keep_if_same=True)): rerunning the book to look
    at it leaves git status clean. The chapter is a light one that times nothing live (a chapter that shows a
    live timing, such as gradient_decomposition's, changes those numbers on every run, as the README says);
    its files are restored afterwards."""
    import hashlib

    from icdl.repro.execute import execute_chapter

    name = "relu_sums"
    files = [ROOT / "notebooks" / f"{name}.ipynb", ROOT / "results" / "ledger" / f"{name}.quick.json"]
    saved = {f: f.read_bytes() for f in files if f.is_file()}
    try:
        execute_chapter(name)
        first = {f: hashlib.sha256(f.read_bytes()).hexdigest() for f in files}
        execute_chapter(name)
        assert {f: hashlib.sha256(f.read_bytes()).hexdigest() for f in files} == first
    finally:
        for f, data in saved.items():
            f.write_bytes(data)


def html_tables(html: str):
    """Each ``<table class="dataframe">`` (a DataFrame the book shows) in ``html`` as (headers of its last
    header row, body rows as lists of cell texts)."""
    for table in re.findall(r'<table[^>]*class="dataframe".*?</table>', html, re.S):
        head = table.split("</thead>")[0] if "</thead>" in table else ""
        head_rows = re.findall(r"<tr.*?</tr>", head, re.S)
        headers = re.findall(r"<th[^>]*>(.*?)</th>", head_rows[-1], re.S) if head_rows else []
        body = table.split("<tbody>")[-1]
        rows = [[re.sub(r"<.*?>", "", c).strip() for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", tr, re.S)]
                for tr in re.findall(r"<tr.*?</tr>", body, re.S)]
        yield [re.sub(r"<.*?>", "", h).strip() for h in headers], rows


def one_value_columns(headers, rows, least: int = 2):
    """The headers of the columns that hold one value in every row (at least ``least`` rows), a pivot's
    columns (``k = 11``: each one a result) apart."""
    if len(rows) < least or len({len(r) for r in rows}) != 1:
        return []
    return [headers[j] if j < len(headers) else str(j) for j in range(len(rows[0]))
            if len({r[j] for r in rows}) == 1 and not (j < len(headers) and " = " in headers[j])]


def test_no_table_holds_a_column_of_one_value():
    """A column that reads "yes" (or one constant) in every row is said once under the table
    (``chapter._one_value_columns``); the bug: icgd_transformer's "within" column and the softmax reference's
    "mean step" (two rows), a cell repeated down a whole table."""
    found = []
    for src in CHAPTERS:
        nb = nbformat.read(src.with_suffix(".ipynb"), as_version=4)
        for i, c in enumerate(nb.cells):
            if c.cell_type != "code" or "remove-cell" in c.metadata.get("tags", []):
                continue
            for o in c.outputs:
                for headers, rows in html_tables(str(o.get("data", {}).get("text/html", ""))):
                    if len(rows[0]) > 1 if rows else False:
                        found += [f"{src.stem} cell {i}: {h!r}" for h in one_value_columns(headers, rows)]
    assert not found, "\n".join(found)


def test_the_one_value_check_sees_a_constant_column_and_spares_pivots():
    headers, rows = next(html_tables('<table class="dataframe"><thead><tr><th>H</th><th>within</th><th>k = 11</th>'
                                     "</tr></thead><tbody>" + "<tr><td>1</td><td>yes</td><td>ridge</td></tr>"
                                     "<tr><td>2</td><td>yes</td><td>ridge</td></tr>"
                                     "<tr><td>4</td><td>yes</td><td>ridge</td></tr></tbody></table>"))
    assert one_value_columns(headers, rows) == ["within"]
    assert one_value_columns(headers, rows[:2]) == ["within"]  # two rows alike: the reader still reads it twice
    assert one_value_columns(headers, rows[:1]) == []  # one row: its cells are its content


#: a count with commas (10,000), anywhere the book shows text or tables
COMMA_COUNT = r"(?<![\w.])\d{1,3}(?:,\d{3})+(?![\d.])"
#: a power of ten of zero (4.0e+00) or a positive one (5e+06) in e-notation: wrong in prose and claims boxes
#: (a table's column of e-notation, 1e-03 to 8e+00, is consistent and allowed)
E_NOTATION = r"\d(?:\.\d+)?e[+-]?0*0(?!\d)|\de\+\d+"
BAD_NUMBER = f"{COMMA_COUNT}|{E_NOTATION}"


def test_numbers_in_the_text_use_the_books_formats():
    """Counts with a space between thousands and plain numbers where they are plain (``ledger.count``,
    ``ledger.sci``): the bugs, "10,000" steps in gpt_scale's claims box and a bound of "4.0e+00" in
    icgd_transformer's, where the prose says 10 000 and 4.0. Checked: every table and the glued values (the
    prose's numbers) for commas; the claims boxes, the closing claims tables and the glued values for
    e-notation; every output for the attention's key ``relu`` as a word. Code listings and figures are not text."""
    from icdl.repro.typeset import _RELU_WORD

    found = []
    for src in CHAPTERS:
        nb = nbformat.read(src.with_suffix(".ipynb"), as_version=4)
        for i, c in enumerate(nb.cells):
            if c.cell_type != "code":
                continue
            glue_cell = "remove-cell" in c.metadata.get("tags", [])
            for o in c.outputs:
                html = str(o.get("data", {}).get("text/html", ""))
                text = re.sub(r"<code>.*?</code>|<pre>.*?</pre>", "", html, flags=re.S)
                claims = "".join(re.findall(r'<table class="claims-box.*?</table>', text, flags=re.S))
                found += [f"{src.stem} cell {i}: {m.group(0)!r}" for m in re.finditer(COMMA_COUNT, text)]
                # an attention by its name in every table, box and glued value (the bug: "depth 3 relu" read
                # as a variable); a tag's attribute is not text
                words = re.sub(r"<[^>]*>", " ", text)
                found += [f"{src.stem} cell {i}: {words[max(0, m.start() - 30):m.end() + 10]!r}"
                          for m in re.finditer(_RELU_WORD, words)]
                found += [f"{src.stem} cell {i}: {m.group(0)!r}"
                          for m in re.finditer(E_NOTATION, text if glue_cell else claims)]
    assert not found, "\n".join(found)


def test_the_number_format_check_sees_commas_and_e_notation_and_spares_the_rest():
    for bad in ("10,000 steps", "bound 4.0e+00", "5e+06", "(26,000)"):
        assert re.search(BAD_NUMBER, bad), bad
    for fine in ("10 000 steps", "ε = 1.0e-05", "(3, 9, 17)", "0.5, 1.0", "2.1 × 10⁻³", "x1,234"):
        assert not re.search(BAD_NUMBER, fine), fine


def test_no_prose_is_swallowed_by_a_code_cell():
    """A paragraph of prose whose ``# %% [markdown]`` marker was lost reads as comments inside the code cell
    above it, shown as code in the book (the bug: gpt_mechanism's "What this does and does not show" and a
    paragraph of lsa_construction). Three comment lines in a row in a code cell are taken for such prose."""
    found = []
    for src in CHAPTERS:
        for cell in re.split(r"\n(?=# %%)", src.read_text())[1:]:  # [0]: the jupytext header
            head, *lines = cell.split("\n")
            if "[markdown]" in head:
                continue
            run = 0
            for line in lines:
                run = run + 1 if line.startswith("#") else 0
                if run == 3:
                    found.append(f"{src.name}: {head}")
                    break
    assert not found, "\n".join(found)


@pytest.mark.parametrize("src", CHAPTERS, ids=lambda p: p.stem)
def test_a_chapter_title_holds_no_tex(src):
    """A chapter's title is shown in the sidebar of every page, and a page without math of its own loads no
    MathJax: TeX in a title reads raw there (the bug: gpt_n01's "$x \\sim \\mathcal N(0, I)$", which also left the
    browser check waiting on every such page)."""
    first = next(c for c in jupytext.read(src).cells if c.cell_type == "markdown")
    title = next(line for line in first.source.splitlines() if line.startswith("# "))
    assert "$" not in title and "\\" not in title, f"{src.name}: {title!r}"
