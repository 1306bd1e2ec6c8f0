"""Named run profiles: one convention for every chapter.

A chapter declares its profiles once, e.g.::

    PROFILES = ProfileSet(
        "01_icgd",
        profiles={"quick": {"n": 32, "steps": 20}, "reference": {"n": 512, "steps": 200}},
        ranges={"n": (2, 100_000), "steps": (1, 10_000)},
    )
    cfg = PROFILES.resolve(profile, **overrides)

``quick`` is always present and is what CI and ``make book`` run. An unknown
profile name, an unknown setting, a value of the wrong type or outside its range
raises :class:`ProfileError` with a message that lists what is allowed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping


class ProfileError(ValueError):
    """A profile name or setting that the chapter does not allow."""


Range = tuple[float, float] | frozenset | tuple


@dataclass(frozen=True)
class ProfileSet:
    chapter: str
    profiles: Mapping[str, Mapping[str, Any]]
    ranges: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if "quick" not in self.profiles:
            raise ProfileError(f"{self.chapter}: every chapter needs a 'quick' profile")
        keys = set(self.profiles["quick"])
        for name, settings in self.profiles.items():
            if set(settings) != keys:
                raise ProfileError(
                    f"{self.chapter}: profile {name!r} has settings {sorted(settings)}, "
                    f"but 'quick' has {sorted(keys)}; all profiles must name the same settings"
                )
            for key, value in settings.items():
                self._check(key, value, where=f"profile {name!r}")

    @property
    def names(self) -> list[str]:
        return list(self.profiles)

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
        kind = type(default)
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

    def resolve(self, profile: str = "quick", **overrides: Any) -> Mapping[str, Any]:
        """The settings of ``profile`` with ``overrides`` applied, checked, read-only."""
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
            self._check(key, value, where="override")
            if type(settings[key]) is int and isinstance(value, float):
                value = int(value)
            settings[key] = value
        settings["profile"] = profile
        return MappingProxyType(settings)
