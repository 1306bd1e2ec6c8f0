"""``python -m icdl.repro.report REPORT.md SUMMARY.md``: the reproducibility report (every claim, from the
ledger, each linked to the erratum about it where there is one) and the results at a glance that the intro
and the report open with; ``make report`` runs it before the errata's own page
(``python -m icdl.repro.errata``). The one writer of both files. A ledger file that does not load (truncated,
not JSON, records that are not a list of objects), ``ICDL_ROOT`` that is not a clone, or an output that would
write over what it reads (the ledger, anything under ``results/``) or over the other output
(:func:`icdl.repro.files.check_outputs`) ends it with one line naming the file, exit status 2, nothing written."""

from __future__ import annotations

import sys
from pathlib import Path

from .errata import report_links
from .files import atomic_write_text, check_outputs, project_root
from .pages import render_report, render_summary


def parser():
    """The command's arguments (every flag in ``tests/test_command_flags.py``'s table): two file names, never a
    flag (``--profile`` is refused, not written to as a file)."""
    from .cli import Parser

    p = Parser(prog="python -m icdl.repro.report",
               description="The reproducibility report and the results at a glance, from the ledger.")
    p.add_argument("report", metavar="REPORT.md", help="where to write the reproducibility report")
    p.add_argument("summary", metavar="SUMMARY.md", help="where to write the results at a glance")
    return p


def main(argv: list[str] | None = None) -> int:
    from .profiles import dry_run

    args = parser().parse_args(argv)
    if dry_run(f"write the report to {args.report} and the results at a glance to {args.summary}"):
        return 0
    try:  # both outputs checked before the ledger is read, every ledger file as it loads, before anything is written
        check_outputs([Path(args.report), Path(args.summary)], inputs=(project_root() / "results" / "ledger",))
        report, summary = render_report(errata=report_links()), render_summary()
        atomic_write_text(Path(args.report), report)
        atomic_write_text(Path(args.summary), summary)
    except ValueError as err:  # ResultFileError, LedgerFileError: the file, the field and what to do
        print(f"python -m icdl.repro.report: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
