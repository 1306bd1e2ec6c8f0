"""What a result file's ``data`` must hold, checked at every load and every save.

A study declares the shape of each result it writes -- its fields, their kinds, a table's columns and
whether it may be empty -- and registers it under its chapter and stem (``results/<chapter>/<stem>.<run>.json``)::

    schema.register("gpt_depth", "depth", {"table": Table(text=("attention",), numbers=("n_layer", "r2")),
                                           "seconds": NUMBER, "complete": FLAG})

:func:`icdl.repro.results.load_result` and :func:`icdl.repro.results.save_result` then refuse a file whose data
do not fit, in one line that names the file and the field (a table emptied by hand, a method that is a number,
a missing column), before a chapter or a command reads a wrong value or fails far away with a ``KeyError``. The
machinery holds the kinds; each study holds its own shapes (this module imports no study).

| kind            | stored as                                                    |
|-----------------|--------------------------------------------------------------|
| :data:`NUMBER`  | an int or a float (NaN allowed; a boolean is not a number)   |
| :data:`FINITE`  | a number that is neither NaN nor infinite                    |
| :data:`SQUARES` | a finite number >= 0: a sum of squares, a count of prompts   |
| :data:`INTEGER` | an int, not a boolean                                        |
| :data:`FLAG`    | ``true`` or ``false``                                        |
| :data:`TEXT`    | a string                                                     |
| ``List(kind)``  | a list of values of one kind (``length``: exactly so many)   |
| ``Table(...)``  | ``{column: [values]}`` (:func:`icdl.repro.results.frame_to_lists`), columns of equal length |
| ``Rows(...)``   | ``[{key: value}, ...]``, each row with the named keys        |
| ``Fields(...)`` | an object with the named fields (others allowed)             |
| ``Keyed(kind)`` | an object whose every value is of one kind (e.g. per depth)  |
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class SchemaError(ValueError):
    """A value that does not fit the registered shape (the caller adds the file's name)."""


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


@dataclass(frozen=True)
class Kind:
    name: str
    test: Any

    def check(self, value, where: str) -> None:
        if not self.test(value):
            raise SchemaError(f"{where} must be {self.name}, got {_show(value)}")


NUMBER = Kind("a number", _number)
INTEGER = Kind("an integer", lambda v: isinstance(v, int) and not isinstance(v, bool))
FLAG = Kind("true or false", lambda v: isinstance(v, bool))
TEXT = Kind("a string", lambda v: isinstance(v, str))
#: a number or null (an empty cell: a step at which a run never left the plateau)
MAYBE_NUMBER = Kind("a number or null", lambda v: v is None or _number(v))
#: a number that is neither NaN nor infinite: what a sum the intervals add up must be (one NaN spreads to every
#: resample, and the interval it gives is no interval)
FINITE = Kind("a finite number", lambda v: _number(v) and math.isfinite(v))
#: a sum of squares (a squared error per block of prompts) or a count (the prompts of a block): finite and never
#: negative -- a negative one is no squared error, but it would pass for a very good model
SQUARES = Kind("a finite number >= 0", lambda v: FINITE.test(v) and v >= 0)
ANY = Kind("any value", lambda v: True)


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


@dataclass(frozen=True)
class List:
    """A list of values of ``kind``: at least ``min_len``, or exactly ``length`` where the design fixes the count
    (the blocks of prompts a squared error is summed over: a list one short is a file cut or edited)."""
    kind: Any
    min_len: int = 1
    length: int | None = None

    def check(self, value, where: str) -> None:
        if not isinstance(value, list) or len(value) < self.min_len:
            raise SchemaError(f"{where} must be a list of at least {self.min_len} item(s), got {_show(value)}")
        if self.length is not None and len(value) != self.length:
            raise SchemaError(f"{where} must hold {self.length} values (one per block of prompts), got "
                              f"{len(value)}")
        for i, item in enumerate(value):
            self.kind.check(item, f"{where}[{i}]")


@dataclass(frozen=True)
class Table:
    """A DataFrame stored as columns: ``text`` columns hold strings, ``numbers`` columns numbers (or null where
    ``nullable``; :data:`SQUARES` where in ``squares``, sums of squares and counts), ``flags`` booleans; other
    columns are allowed. At least ``min_rows`` rows."""
    text: tuple[str, ...] = ()
    numbers: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    nullable: tuple[str, ...] = ()
    min_rows: int = 1
    squares: tuple[str, ...] = ()

    def check(self, value, where: str) -> None:
        if not isinstance(value, dict) or not all(isinstance(v, list) for v in value.values()):
            raise SchemaError(f"{where} must be a table ({{column: [values]}}), got {_show(value)}")
        missing = [c for c in (*self.text, *self.numbers, *self.flags) if c not in value]
        if missing:
            raise SchemaError(f"{where}.{missing[0]} is missing (the table needs the column(s) {missing})")
        lengths = {len(v) for v in value.values()}
        if len(lengths) > 1:
            raise SchemaError(f"{where} has columns of different lengths {sorted(lengths)}")
        rows = lengths.pop() if lengths else 0
        if rows < self.min_rows:
            raise SchemaError(f"{where} has {rows} row(s); it needs at least {self.min_rows}")
        for names, kind in ((self.text, TEXT), (self.flags, FLAG)):
            for c in names:
                _column(value[c], kind, f"{where}.{c}")
        for c in self.numbers:
            kind = SQUARES if c in self.squares else MAYBE_NUMBER if c in self.nullable else NUMBER
            _column(value[c], kind, f"{where}.{c}")


def _column(values: list, kind: Kind, where: str) -> None:
    for i, v in enumerate(values):
        kind.check(v, f"{where}[{i}]")


@dataclass(frozen=True)
class Rows:
    """A list of objects (at least ``min_rows``), each holding ``fields``."""
    fields: Mapping[str, Any]
    min_rows: int = 1

    def check(self, value, where: str) -> None:
        if not isinstance(value, list) or len(value) < self.min_rows:
            raise SchemaError(f"{where} must be a list of at least {self.min_rows} row(s), got {_show(value)}")
        for i, row in enumerate(value):
            Fields(self.fields).check(row, f"{where}[{i}]")


@dataclass(frozen=True)
class Fields:
    """An object holding each of ``fields`` (a name and its kind); ``optional`` ones may be absent."""
    fields: Mapping[str, Any]
    optional: Mapping[str, Any] = field(default_factory=dict)

    def check(self, value, where: str) -> None:
        if not isinstance(value, dict):
            raise SchemaError(f"{where} must be an object with fields {sorted(self.fields)}, got {_show(value)}")
        missing = [k for k in self.fields if k not in value]
        if missing:
            raise SchemaError(f"{where}.{missing[0]} is missing (needed: {missing})")
        for k, kind in (*self.fields.items(), *self.optional.items()):
            if k in value:
                kind.check(value[k], f"{where}.{k}")


@dataclass(frozen=True)
class Keyed:
    """An object whose every value (at least ``min_len``) is of ``kind`` (e.g. one table per target depth)."""
    kind: Any
    min_len: int = 1

    def check(self, value, where: str) -> None:
        if not isinstance(value, dict) or len(value) < self.min_len:
            raise SchemaError(f"{where} must be an object of at least {self.min_len} entries, got {_show(value)}")
        for k, v in value.items():
            self.kind.check(v, f"{where}.{k}")


#: the registered shapes: (chapter, stem) -> the shape of ``data``
SCHEMAS: dict[tuple[str, str], Fields] = {}


def register(chapter: str, stem: str, fields: Mapping[str, Any], optional: Mapping[str, Any] | None = None) -> None:
    """Register the shape of ``results/<chapter>/<stem>.<run>.json``'s ``data`` (called by the study that
    writes it, at import). Registering one stem twice with different shapes is an error."""
    shape = Fields(dict(fields), dict(optional or {}))
    if SCHEMAS.get((chapter, stem), shape) != shape:
        raise RuntimeError(f"two shapes registered for results/{chapter}/{stem}")
    SCHEMAS[(chapter, stem)] = shape


def shape_of(path: str | Path) -> Fields | None:
    """The shape registered for a result file's path (its folder names the chapter, its name's first part the
    stem: ``results/gpt_depth/depth.reference.json``, ``runs/overrides/gpt_depth/depth.quick+n=8.json``; a unit's
    file beside its checkpoints, ``results/gpt_depth/checkpoints/reference/score_L4_seed0.json``, under the stem
    ``checkpoints/score``)."""
    path = Path(path)
    if path.parent.parent.name == "checkpoints":  # a unit's file beside its checkpoints: results/<chapter>/
        # checkpoints/<profile>/<kind>_<unit>.json, registered as "checkpoints/<kind>"
        return SCHEMAS.get((path.parent.parent.parent.name, "checkpoints/" + path.name.split("_", 1)[0]))
    return SCHEMAS.get((path.parent.name, path.name.split(".", 1)[0]))


def check(path: str | Path, data: dict, registered: tuple[str, str] | None = None) -> None:
    """Refuse ``data`` that does not fit the shape registered for ``path`` -- or, where given, for ``registered``
    (a chapter and stem: a file read from a folder whose name does not say it, e.g. a unit's scores in a folder
    given by hand) -- (nothing registered: nothing to check), raising :class:`SchemaError` whose message names
    the file and the field."""
    shape = SCHEMAS.get(registered) if registered else shape_of(path)
    if shape is None:
        return
    try:
        shape.check(data, "data")
    except SchemaError as err:
        raise SchemaError(f"result file {path}: {err}; regenerate it with the command in its provenance") from None
