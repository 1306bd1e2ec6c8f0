"""A chapter's parameters checked as ``--set`` checks them, however the chapter runs: ``overrides`` as a dict or its
JSON text, a key given twice refused -- also in the YAML papermill reads (``-y``, ``-f``, ``-b``), which it merges
silently, so it is read again from the papermill process among this one's ancestors.

=============================  ================================================================================
:func:`overrides_dict`         the ``overrides`` parameter as a dict, checked
:func:`papermill_yaml_once`    refuse a key papermill's YAML gives twice
:func:`check_yaml_once`        the YAML check itself, on one text
=============================  ================================================================================
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .profiles import ProfileError


def overrides_dict(overrides) -> dict:
    """The chapter's ``overrides`` parameter as a dict: a dict, or its JSON text (``papermill -p overrides
    '{"n": 64}'`` passes a string); anything else, and a key given twice (``'{"n": 8, "n": 16}'``, which
    ``--set`` refuses too), is refused in one line naming the parameter."""
    import json

    if overrides is None or overrides == "":
        return {}
    if isinstance(overrides, str):
        try:
            overrides = json.loads(overrides, object_pairs_hook=_once)
        except json.JSONDecodeError:
            raise ProfileError(f"the parameter overrides must be a dict or its JSON text, e.g. "
                               f"'{{\"n\": 64}}'; got {overrides!r}") from None
    if not isinstance(overrides, Mapping):
        raise ProfileError(f"the parameter overrides must be a dict of settings, e.g. {{'n': 64}}; got {overrides!r}")
    bad = [k for k in overrides if not isinstance(k, str)]
    if bad:
        raise ProfileError(f"the parameter overrides must name settings by strings, e.g. {{'n': 64}}; got keys {bad}")
    return dict(overrides)


def _once(pairs: list[tuple[str, Any]]) -> dict:
    """A JSON object's pairs as a dict, refusing a key given twice (``json.loads`` keeps the last silently)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ProfileError(f"the parameter overrides gives {key!r} twice; give each setting once")
        out[key] = value
    return out


def papermill_yaml_once() -> None:
    """Refuse a key given twice in papermill's YAML parameters (``papermill -y 'overrides: {n: 8, n: 16}'``, which
    ran with n = 16), in one line naming the parameter, as :func:`_overrides` refuses it in JSON text.

    Papermill reads ``-y``, ``-f`` and ``-b`` in its own process with PyYAML, which keeps the last of two equal keys
    silently, and injects the merged dict into the notebook: the kernel that runs this chapter receives
    ``overrides = {'n': 16}``, the duplicate gone. What survives is papermill's command line, in the process that
    started this kernel: the papermill process among this process's ancestors (``/proc``; elsewhere, and under
    ``execute``, nbval or JupyterLab, there is none and nothing to check) has its YAML read again here, refusing
    duplicates."""
    for argv, cwd in _papermill_ancestors():
        for where, text in _papermill_yaml(argv, cwd):
            check_yaml_once(text, where)


def check_yaml_once(text: str, where: str = "papermill -y") -> None:
    """Refuse, with :class:`ProfileError` in one line, a YAML mapping (at any depth) that gives a key twice;
    text that is not YAML is left to papermill, which refuses it itself."""
    import yaml

    try:
        nodes = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        return
    for node in nodes:
        _mapping_once(node, (), where)


def _mapping_once(node, path: tuple[str, ...], where: str) -> None:
    import yaml

    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _mapping_once(item, path, where)
    if not isinstance(node, yaml.MappingNode):
        return
    seen: set = set()
    for key, value in node.value:
        name = key.value if isinstance(key, yaml.ScalarNode) else None
        if name is not None and name != "<<":
            if name in seen:
                if path:
                    raise ProfileError(f"the parameter {path[0]} gives {'.'.join((*path[1:], name))!r} twice "
                                       f"({where}; papermill keeps the last silently); give each setting once")
                raise ProfileError(f"the parameter {name!r} is given twice ({where}; papermill keeps the last "
                                   f"silently); give each parameter once")
            seen.add(name)
        _mapping_once(value, (*path, str(name)), where)


def _papermill_ancestors() -> list[tuple[list[str], Path]]:
    """The command lines (and working folders) of this process's ancestors that are papermill (``papermill ...``,
    ``python .../bin/papermill ...``, ``python -m papermill ...``), read from ``/proc`` (none where it is absent)."""
    import os

    found, current = [], os.getppid()
    for _ in range(64):
        if current <= 1:
            break
        try:
            argv = Path(f"/proc/{current}/cmdline").read_bytes().decode(errors="replace").split("\0")
            cwd = Path(f"/proc/{current}/cwd").resolve()
            current = int(Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
        argv = [a for a in argv if a != ""] if argv and argv[-1] == "" else argv
        for i, arg in enumerate(argv[:3]):
            if Path(arg).name == "papermill" or (arg == "papermill" and i and argv[i - 1] == "-m"):
                found.append((argv[i + 1:], cwd))
                break
    return found


def _papermill_yaml(args: list[str], cwd: Path | None = None) -> list[tuple[str, str]]:
    """The YAML texts of papermill's arguments ``args`` (``-y TEXT``, ``-f FILE`` read from papermill's working
    folder ``cwd``, ``-b BASE64`` and their long forms), each with where it came from."""
    import base64

    out, i = [], 0
    options = {"-y": "yaml", "--parameters_yaml": "yaml", "-f": "file", "--parameters_file": "file",
               "-b": "base64", "--parameters_base64": "base64"}
    while i < len(args):
        arg, value = args[i], None
        if arg == "--":
            break
        if arg in options:
            kind = options[arg]
            value = args[i + 1] if i + 1 < len(args) else None
            i += 1
        elif arg.startswith("--") and "=" in arg and arg.split("=", 1)[0] in options:
            kind, value = options[arg.split("=", 1)[0]], arg.split("=", 1)[1]
        elif arg[:2] in ("-y", "-f", "-b") and len(arg) > 2:
            kind, value = options[arg[:2]], arg[2:]
        elif arg in ("-p", "--parameters", "-r", "--parameters_raw"):
            i += 3  # a name and a value: the value is no option even if it looks like one
            continue
        i += 1
        if value is None:
            continue
        try:
            if kind == "yaml":
                out.append(("papermill -y", value))
            elif kind == "file":
                out.append((f"papermill -f {Path(value).name}", (Path(cwd or ".") / value).read_text(encoding="utf-8")))
            else:
                out.append(("papermill -b", base64.b64decode(value).decode("utf-8")))
        except (OSError, ValueError):
            continue  # a file papermill reads relative to another folder, or bad base64: papermill's own refusal
    return out


