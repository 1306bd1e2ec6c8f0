"""What every command of the package (``python -m icdl…``) shares: one way to refuse its arguments.

Every flag of a command either acts or is refused before any work, in one line -- ``<prog>: error: <what is
wrong and what to do>``, exit status 2, no usage block and no traceback -- and ``$ICDL_DRY_RUN``
(:func:`icdl.repro.profiles.dry_run`) names, in its ``dry run:`` line, every flag that acts.
``tests/test_command_flags.py`` holds the table of every command's flags and checks both.

:class:`Parser`        an ``argparse`` parser whose errors are one line (no abbreviations of flags)
:func:`at_least_one`   the counts a command takes, each refused when below 1
:func:`given_twice`    a repeatable flag's values, each refused when given twice
:func:`cuda_or_refuse` ``--device cuda`` refused where there is no CUDA device
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable


class Parser(argparse.ArgumentParser):
    """An argument parser that refuses in one line: ``<prog>: error: <message>`` on stderr, exit status 2
    (argparse's own usage block would make it several); a flag is never taken from a prefix of it."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_args(self, args=None, namespace=None):
        """:meth:`argparse.ArgumentParser.parse_args`, an unknown ``--flag`` refused first, by name (argparse
        would report a missing positional argument before it, naming something else)."""
        import sys

        words = list(sys.argv[1:] if args is None else args)
        words = words[:words.index("--")] if "--" in words else words
        known = {option for action in self._actions for option in action.option_strings}
        unknown = [w.split("=", 1)[0] for w in words if w.startswith("--") and w.split("=", 1)[0] not in known]
        if unknown:
            self.error(f"unrecognized arguments: {' '.join(unknown)} (see --help)")
        return super().parse_args(args, namespace)

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {' '.join(str(message).split())}\n")


def at_least_one(parser: argparse.ArgumentParser, **counts: int | None) -> None:
    """Refuse a count below 1 (``--workers 0``, ``--until -5``), naming its flag; ``None`` (not given) passes.
    Keyword names are the flags' ``dest`` (``steps_this_call`` for ``--steps-this-call``)."""
    for dest, value in counts.items():
        if value is not None and value < 1:
            parser.error(f"--{dest.replace('_', '-')} must be >= 1, got {value}")


def given_twice(parser: argparse.ArgumentParser, flag: str, values: Iterable | None) -> None:
    """Refuse a repeatable flag given twice with the same value (``--part main --part main``)."""
    seen = set()
    for value in values or ():
        if value in seen:
            parser.error(f"{flag} {value} is given twice; give each once")
        seen.add(value)


def cuda_or_refuse(parser: argparse.ArgumentParser, device: str) -> None:
    """Refuse ``--device cuda`` on a machine without a CUDA device, before any work."""
    if device != "cuda":
        return
    import torch

    if not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device is available on this machine; use --device cpu")
