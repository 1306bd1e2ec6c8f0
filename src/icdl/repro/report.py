"""``python -m icdl.repro.report REPORT.md SUMMARY.md``: the reproducibility report (every claim, from the
ledger, each linked to the erratum about it where there is one) and the results at a glance that the intro
and the report open with; ``make report`` runs it before the errata's own page
(``python -m icdl.repro.errata``). The one writer of both files."""

from __future__ import annotations

import sys
from pathlib import Path

from .errata import report_links
from .ledger import render_report, render_summary
from .results import atomic_write_text


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m icdl.repro.report REPORT.md SUMMARY.md", file=sys.stderr)
        return 2
    atomic_write_text(Path(args[0]), render_report(errata=report_links()))
    atomic_write_text(Path(args[1]), render_summary())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
