"""Named run profiles: one convention for every chapter.

A chapter declares its profiles once, e.g.::

    PROFILES = ProfileSet(
        "icgd_linear",
        profiles={"quick": {"n": 32, "steps": 20, "etas": (0.1, 0.5)},
                  "reference": {"n": 512, "steps": 200, "etas": (0.05, 0.1, 0.5)}},
        ranges={"n": (2, 100_000), "steps": (1, 10_000), "etas": (1e-4, 10.0)},
    )
    cfg = PROFILES.resolve(profile, **overrides)

``chapter`` is the chapter's one id: the notebook ``notebooks/<chapter>.py``, its result folder
``results/<chapter>/`` (:meth:`ProfileSet.folder`), its ledger files ``results/ledger/<chapter>.<profile>.json``
and the tag of its claims in :mod:`icdl.repro.claims` all derive from it.

A setting is a number, a string, or a tuple of numbers (the one list type: ``--set widths=16,64`` on the
command line parses to a tuple); a range given for a tuple setting applies to each element.
``quick`` is always present and is what CI and ``make book`` run. An unknown
profile name, an unknown setting, a value of the wrong type or outside its range
raises :class:`ProfileError` with a message that lists what is allowed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import OneLineError


class ProfileError(OneLineError):
    """A profile name or setting that the chapter does not allow."""


Range = tuple[float, float] | frozenset | tuple


@dataclass(frozen=True)
class ProfileSet:
    chapter: str
    profiles: Mapping[str, Mapping[str, Any]]
    ranges: Mapping[str, Any] = field(default_factory=dict)
    #: the command that produces this chapter's results at a profile (``{profile}`` is filled in);
    #: by default the chapter itself, executed by papermill
    command: str = "python -m icdl.repro.execute {chapter} --profile {profile}"
    #: the peak memory (bytes) a resolved profile needs, estimated from its settings; checked as a whole
    #: against this machine's memory by :meth:`resolve` (settings each in range can together be impossible)
    memory: Callable[[Mapping[str, Any]], float] | None = None
    #: profiles only the command runs: the chapter does not execute at them (its claims are another run's, e.g.
    #: gpt_icl's ``n01``, whose result the chapter judges beside the reference on claims of its own)
    command_only: tuple[str, ...] = ()
    #: each setting in words, for the settings table a chapter shows (:func:`icdl.repro.chapter.settings`): the
    #: key is what ``--set`` takes, the meaning what a reader needs (``B_w``: the box bound on the weights); given,
    #: it names every setting
    meanings: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if "quick" not in self.profiles:
            raise ProfileError(f"{self.chapter}: every chapter needs a 'quick' profile")
        if set(self.command_only) - set(self.profiles) or "quick" in self.command_only:
            raise ProfileError(f"{self.chapter}: command_only {self.command_only} must name profiles other than "
                               "'quick'")
        keys = set(self.profiles["quick"])
        for name, settings in self.profiles.items():
            if set(settings) != keys:
                raise ProfileError(
                    f"{self.chapter}: profile {name!r} has settings {sorted(settings)}, "
                    f"but 'quick' has {sorted(keys)}; all profiles must name the same settings"
                )
            for key, value in settings.items():
                self._check(key, value, where=f"profile {name!r}")
        if self.meanings and set(self.meanings) != keys:
            raise ProfileError(f"{self.chapter}: meanings name {sorted(self.meanings)}, the settings are "
                               f"{sorted(keys)}")

    @property
    def names(self) -> list[str]:
        return list(self.profiles)

    def check_chapter_profile(self, profile: str) -> None:
        """Refuse, in one line, executing the chapter at a profile that only its command runs (or a profile that
        is not a name: ``papermill -y 'profile: [quick]'`` passes a list)."""
        self._check_name(profile)
        if profile in self.command_only:
            raise ProfileError(f"{self.chapter}: profile {profile!r} is run by its command, not by the chapter: "
                               f"{self.command_for(profile)} (the chapter shows its result at quick or reference)")

    def _check_name(self, profile: Any) -> None:
        if not isinstance(profile, str):
            raise ProfileError(f"{self.chapter}: the parameter profile must be a profile's name, one of {self.names} "
                               f"(papermill: -p profile quick); got {profile!r}")

    def _check(self, key: str, value: Any, where: str) -> None:
        allowed = self.ranges.get(key)
        if allowed is None:
            return
        if isinstance(allowed, (set, frozenset, list)):
            if value not in allowed:
                raise ProfileError(
                    f"{self.chapter}: {key}={value!r} ({where}) is not allowed; "
                    f"allowed values: {sorted(allowed, key=str)}"
                )
            return
        lo, hi = allowed
        default = self.profiles["quick"][key]
        if isinstance(default, tuple):
            if not isinstance(value, (tuple, list)) or not value:
                raise ProfileError(f"{self.chapter}: {key}={value!r} ({where}) must be a non-empty tuple of numbers "
                                   f"in [{lo}, {hi}], e.g. {default!r}")
            for item in value:
                self._check_number(key, item, type(default[0]), lo, hi, where)
            return
        self._check_number(key, value, type(default), lo, hi, where)

    def _check_number(self, key: str, value: Any, kind: type, lo: float, hi: float, where: str) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ProfileError(
                f"{self.chapter}: {key}={value!r} ({where}) must be a number in [{lo}, {hi}]"
            )
        if kind is int and not float(value).is_integer():
            raise ProfileError(f"{self.chapter}: {key}={value!r} ({where}) must be an integer in [{lo}, {hi}]")
        if not lo <= value <= hi:
            raise ProfileError(
                f"{self.chapter}: {key}={value!r} ({where}) is out of range; allowed: {lo} <= {key} <= {hi}"
            )

    def command_for(self, profile: str, overrides: tuple[str, ...] = ()) -> str:
        """The shell command that produces this chapter's results at ``profile``; with ``overrides`` (the
        ``KEY=VALUE`` items of resolved settings) the chapter executed with one ``--set`` each."""
        if not overrides:
            return self.command.format(chapter=self.chapter, profile=profile)
        return (f"python -m icdl.repro.execute {self.chapter} --profile {profile}"
                + "".join(f" --set {item}" for item in overrides))

    @staticmethod
    def _coerce(default: Any, value: Any) -> Any:
        if isinstance(default, tuple):
            return tuple(ProfileSet._coerce(default[0], v) for v in value)
        if type(default) is int and isinstance(value, float):
            return int(value)
        return value

    def folder(self, *parts: str) -> Path:
        """``results/<chapter>/<parts…>``, created if missing: where this chapter's results live."""
        from .files import results_dir

        return results_dir(self.chapter, *parts)

    def resolve(self, profile: str = "quick", **overrides: Any) -> Mapping[str, Any]:
        """The settings of ``profile`` with ``overrides`` applied, checked, read-only."""
        self._check_name(profile)
        if profile not in self.profiles:
            raise ProfileError(
                f"{self.chapter}: unknown profile {profile!r}; allowed profiles: {self.names}"
            )
        settings = dict(self.profiles[profile])
        for key, value in overrides.items():
            if key not in settings:
                raise ProfileError(
                    f"{self.chapter}: unknown setting {key!r}; settings of this chapter: {sorted(settings)}"
                )
            if isinstance(settings[key], tuple) and not isinstance(value, (tuple, list)):
                value = (value,)  # --set depths=3: a one-element list
            self._check(key, value, where="override")
            settings[key] = self._coerce(settings[key], value)
        settings["profile"] = profile
        # a run with overrides is its own run: its name (``run``) carries them, so that nothing it writes can
        # land in the profile's own files (:func:`run_folder`, :class:`icdl.repro.ledger.Ledger`)
        settings["overrides"] = tuple(f"{k}={_text(settings[k])}" for k in sorted(overrides))
        settings["run"] = "+".join((profile, *settings["overrides"]))
        check_run_name(settings["run"], self.chapter)
        if self.memory is not None:
            need, have = float(self.memory(settings)), machine_memory()
            if need > have:
                raise ProfileError(f"{self.chapter}: profile {profile!r} with {dict(overrides) or 'no overrides'} "
                                   f"needs about {need / 2**30:,.1f} GiB of memory; this machine has "
                                   f"{have / 2**30:,.1f} GiB. Lower the sizes (e.g. test_prompts, batch) or use a "
                                   "larger machine")
        return MappingProxyType(settings)


#: what the name of a run (its profile and overrides, ``quick+n=64+steps=50``) may hold: it names files
#: (``runs/<chapter>.<run>.ipynb``, ``runs/overrides/…``), so never a path
RUN_NAME = r"[A-Za-z0-9_.,=+\-]+"


def check_run_name(run: str, chapter: str = "") -> None:
    """Refuse a run name that is not made of names and numbers (``--set n=../x``, ``-p overrides
    '{"s": "a/b"}'``): the command line and papermill's parameters get the same check."""
    import re

    if not re.fullmatch(RUN_NAME, run):
        raise ProfileError(f"{chapter + ': ' if chapter else ''}profile and override values must be names and "
                           f"numbers (letters, digits, '_', '.', ',', '-'), got {run!r}")


def machine_memory() -> float:
    """Physical memory of this machine in bytes (``inf`` where it cannot be read)."""
    import os

    try:
        return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return float("inf")


def _text(value: Any) -> str:
    """A setting as ``--set`` takes it: tuples as comma-separated values."""
    return ",".join(map(str, value)) if isinstance(value, (tuple, list)) else str(value)


def is_override_run(cfg: Mapping[str, Any]) -> bool:
    """Whether resolved settings come from a profile with overrides (their files are not the profile's)."""
    return bool(cfg.get("overrides"))


#: set (to anything but "" or "0") to make every command of the package stop after checking its arguments
#: and settings: it says what it would run and exits 0 (``tests/test_documented_commands.py`` runs every
#: command of the README and of "How every number is produced" this way on a fresh clone)
DRY_RUN_ENV = "ICDL_DRY_RUN"


def dry_run(what: str) -> bool:
    """True (after printing ``dry run: <what>``) when ``$ICDL_DRY_RUN`` is set: the caller, its arguments and
    settings checked, returns without running anything."""
    import os

    if os.environ.get(DRY_RUN_ENV, "") in ("", "0"):
        return False
    print(f"dry run: {what}", flush=True)
    return True
