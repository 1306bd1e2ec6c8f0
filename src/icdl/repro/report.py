"""``python -m icdl.repro.report REPORT.md SUMMARY.md``: the reproducibility report (every claim, from the
ledger, each linked to the erratum about it where there is one) and the results at a glance that the intro
and the report open with; ``make report`` runs it before the errata's own page
(``python -m icdl.repro.errata``). The one writer of both files. A ledger file that does not load (truncated,
not JSON, records that are not a list of objects) ends it with one line naming the file, exit status 2."""

from __future__ import annotations

import sys
from pathlib import Path

from .errata import report_links
from .ledger import render_report, render_summary
from .results import ResultFileError, atomic_write_text, load_result, results_dir


def check_ledger(folder: Path | None = None) -> None:
    """Every ledger file of ``folder`` (default ``results/ledger/``) loads and holds ``records``, a list of
    objects; else :class:`ResultFileError` naming the file and what to do -- before the report reads any."""
    folder = folder or results_dir("ledger")
    for path in sorted(folder.glob("*.json")):
        chapter = path.name.split(".")[0]
        todo = (f"rebuild it by executing its chapter (python -m icdl.repro.execute {chapter}), or restore it "
                "with git checkout")
        try:
            data = load_result(path)["data"]
        except ResultFileError as err:
            raise ResultFileError(f"ledger {err}; {todo}") from None
        records = data.get("records")
        if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
            raise ResultFileError(f"ledger file {path} has 'records' = {records!r:.60}, not a list of records; "
                                  f"{todo}")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m icdl.repro.report REPORT.md SUMMARY.md", file=sys.stderr)
        return 2
    try:
        check_ledger()
        report, summary = render_report(errata=report_links()), render_summary()
        atomic_write_text(Path(args[0]), report)
        atomic_write_text(Path(args[1]), summary)
    except ValueError as err:  # ResultFileError, and a record that does not fit (icdl.repro.ledger)
        print(f"python -m icdl.repro.report: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
