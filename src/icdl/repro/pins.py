"""Every committed result file pinned by its sha256: by the ledger of the chapter that read it
(:mod:`icdl.repro.reads`), or else by the manifest ``results/pins.json``, which the history check reads.

A chapter's ledger pins the results the chapter loads; what a study command re-derives them from -- the score
files a depth result is assembled from, the checkpoint records (``.pt.json``, which hold their checkpoint's
sha256), the baseline caches -- no chapter loads, and no ledger pinned them (the bug, issue 70: the three
``score_L10_seed*.json`` scaled by 0.5 under a new run's provenance, then ``--part depth`` reassembled the depth
result from them as a genuinely new run, every test green). ``tests/test_pinned_results.py`` checks, through
:func:`problems`, that every committed result JSON is pinned by a ledger or by the manifest and is what its pin
says: a changed input then shows in the diff of the manifest (``write()`` rewrites it, for a new run's files), not
only in the file. And a ledger that pins nothing while its chapter has results to read (:func:`reads_results`) is
refused at load (:func:`icdl.repro.ledger.load_records`).

====================  ======================================================================================
:func:`problems`      one line per committed result that no pin covers or that is not what its pin says
:func:`write`         the manifest rewritten from the tree (what no ledger pins), after a new run's files
:func:`reads_results` whether a chapter has committed results to read (its ledger must then pin some)
====================  ======================================================================================
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

#: the manifest, relative to the project root
MANIFEST = "results/pins.json"
#: folders a run still in progress commits its files into as it goes: pinned once the run is done, by rerunning
#: :func:`write` (the recipe scan on ICDL's task, issue 67: python -m icdl.gpt_icl.recipes --profile icdl)
IN_PROGRESS: tuple[str, ...] = ("results/gpt_n01/checkpoints/recipes_icdl/",)


def committed_results(root: Path) -> list[str]:
    """The result JSON files git tracks under ``root/results`` (the ledgers and the manifest aside), by name."""
    out = subprocess.run(["git", "ls-files", "-z", "results"], cwd=root, capture_output=True, text=True,
                         check=True).stdout
    return sorted(n for n in out.split("\0") if n.endswith(".json") and not n.startswith("results/ledger/")
                  and n != MANIFEST)


def ledger_pins(root: Path) -> dict[str, str]:
    """``{file: sha256}`` of every result the committed ledgers (``results/ledger/*.json``) pin."""
    pins: dict[str, str] = {}
    for path in sorted((Path(root) / "results" / "ledger").glob("*.json")):
        pins.update(json.loads(path.read_text(encoding="utf-8"))["data"].get("results") or {})
    return pins


def manifest(root: Path) -> dict[str, str]:
    """The manifest's pins (``{}`` where there is none)."""
    path = Path(root) / MANIFEST
    return json.loads(path.read_text(encoding="utf-8"))["pins"] if path.is_file() else {}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def problems(root: Path) -> list[str]:
    """One line per committed result (outside :data:`IN_PROGRESS`) that neither a ledger nor the manifest pins,
    and per manifest entry whose file is missing or whose sha256 is not the pinned one; empty where all is pinned."""
    by_ledger, pins = ledger_pins(root), manifest(root)
    out = [f"{name}: pinned by no ledger and not in {MANIFEST}" for name in committed_results(root)
           if name not in by_ledger and name not in pins and not name.startswith(IN_PROGRESS)]
    for name, digest in sorted(pins.items()):
        path = Path(root) / name
        if not path.is_file():
            out.append(f"{name}: missing, but {MANIFEST} pins it")
        elif (now := _sha(path)) != digest:
            out.append(f"{name}: sha256 {now[:12]}… is not the {digest[:12]}… {MANIFEST} pins")
    return out


def write(root: Path) -> Path:
    """Rewrite the manifest: the sha256 of every committed result that no ledger pins (outside
    :data:`IN_PROGRESS`), as the tree holds it now -- after a new run's files are committed, and reviewed."""
    by_ledger = ledger_pins(root)
    pins = {n: _sha(Path(root) / n) for n in committed_results(root)
            if n not in by_ledger and not n.startswith(IN_PROGRESS)}
    about = ("sha256 of every committed result file no ledger pins (icdl.repro.pins); rewrite with "
             "python -c 'from icdl.repro.pins import write; write(\".\")' after committing a new run's files")
    path = Path(root) / MANIFEST
    path.write_text(json.dumps({"about": about, "pins": pins}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def reads_results(chapter: str, root: Path) -> list[str]:
    """The committed results ``chapter`` declares it reads (:data:`icdl.repro.required.REQUIRED`, its ledgers
    aside) that are there under ``root``: where any is, the chapter's ledger must pin what it read."""
    from .required import REQUIRED

    return [f for f in REQUIRED.get(chapter, ()) if not f.startswith("results/ledger/") and (Path(root) / f).is_file()]
