"""The book's machinery: everything that is about running and reporting, not about the papers.

* :mod:`~icdl.book.profiles` -- named run profiles of a chapter (:class:`~icdl.book.profiles.ProfileSet`),
  the chapter's one id, its result folder and its command;
* :mod:`~icdl.book.results` -- result files and checkpoints with provenance, written atomically;
  :func:`~icdl.book.results.show_reference`, the one way a chapter shows a committed result;
* :mod:`~icdl.book.claims` -- the registry of every claim the book checks;
* :mod:`~icdl.book.ledger` -- the records a chapter writes and the reproducibility report;
* :mod:`~icdl.book.chapter` -- what a chapter's first code cell does;
* :mod:`~icdl.book.execute` -- executes the chapters with papermill in the order of ``_toc.yml``.
"""
