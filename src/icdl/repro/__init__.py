"""The book's machinery: everything that is about running and reporting, not about the papers.

* :mod:`~icdl.repro.profiles` -- named run profiles of a chapter (:class:`~icdl.repro.profiles.ProfileSet`),
  the chapter's one id, its result folder and its command;
* :mod:`~icdl.repro.results` -- result files and checkpoints with provenance, written atomically;
  :func:`~icdl.repro.results.show_reference`, the one way a chapter shows a committed result;
* :mod:`~icdl.repro.commits` -- which commit of the code made a result, and whether a reader can check it out;
* :mod:`~icdl.repro.claims` -- the registry of every claim the book checks;
* :mod:`~icdl.repro.ledger` -- the records a chapter writes and the reproducibility report;
* :mod:`~icdl.repro.reads` -- the committed results a chapter read, pinned by sha256 in its ledger;
* :mod:`~icdl.repro.errata` -- renders the slips found in the documents; the entries and their evidence live
  beside the code they measure and register under the entry-point group ``icdl.errata`` (this package
  imports no study);
* :mod:`~icdl.repro.report` -- writes the report (linked to the errata) and the results at a glance;
* :mod:`~icdl.repro.chapter` -- what a chapter's first code cell does;
* :mod:`~icdl.repro.execute` -- executes the chapters with papermill in the order of ``_toc.yml``;
* :mod:`~icdl.repro.source` -- the archive of the repository that the built book carries.
"""
