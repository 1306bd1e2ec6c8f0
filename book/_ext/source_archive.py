"""The book carries its source (a Sphinx extension, loaded through ``_config.yml``'s ``local_extensions``).

Before the pages are read, :func:`icdl.repro.source.write_archive` packs the commit the book is built from into
``book/generated/icdl-source.tar.gz`` and writes ``book/generated/source.md``, the first page's paragraph naming
the commit and linking the archive (``{download}``, which copies it into the HTML). Every page's download menu
then gets a third entry beside its ``.ipynb`` and ``.md``: that same archive.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.util import logging

from icdl.repro.source import ARCHIVE, render, write_archive

logger = logging.getLogger(__name__)

#: where the archive and its paragraph are written, relative to the book's root (ignored by git)
GENERATED = Path("book") / "generated"


def pack(app) -> None:
    """Write the archive and the first page's paragraph; a tree that is neither a clone nor an unpacked archive
    (a download without git history) still builds, and the paragraph says that this build carries no source."""
    root = Path(app.srcdir)
    (root / GENERATED).mkdir(parents=True, exist_ok=True)
    try:
        source = write_archive(root, root / GENERATED / ARCHIVE)
    except RuntimeError as error:
        (root / GENERATED / ARCHIVE).unlink(missing_ok=True)  # never an archive of another build
        logger.info(f"source_archive: no archive ({error})")
        (root / GENERATED / "source.md").write_text(
            f"This build carries no source archive: {error}.\n", encoding="utf-8")
        return
    # the paragraph is included by book/intro.md: its link is relative to that page
    (root / GENERATED / "source.md").write_text(render(source, f"generated/{ARCHIVE}"), encoding="utf-8")


def download_menu(app, pagename, templatename, context, doctree) -> None:
    """The archive as the last entry of the page's download menu (the book theme's ``download-buttons``)."""
    copied = app.env.dlfiles.get((GENERATED / ARCHIVE).as_posix())
    if not copied:
        return
    url = context["pathto"](f"_downloads/{copied[1]}", 1)
    for group in context.get("header_buttons", []):
        if group.get("label") == "download-buttons":
            group["buttons"].append({
                "type": "link", "url": url, "text": "book source", "icon": "fas fa-file-zipper",
                "tooltip": "The source of the whole book at the commit it was built from (.tar.gz)",
                "label": "download-book-source-button",
            })


def setup(app):
    app.connect("builder-inited", pack)
    app.connect("html-page-context", download_menu, priority=600)  # after the theme fills the menu (501)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
