"""Results pinned by digest in the ledgers that judged them (:mod:`icdl.repro.reads`).

The bugs (issue 58): a committed result edited within its schema (``depth.reference.json``'s squared errors
times 0.8) turned a verdict with every test green; a ledger edited and resealed (three lines of stdlib) was
accepted, its provenance outside the seal. A ledger now seals its records, the sha256 of every committed result
file its chapter read, and its provenance together; this file checks the committed ledgers' digests against the
files, and shows on ledgers written here that an edit of a result, of its ledger's records and of the seal
together is still caught while the digest is left.
"""

import hashlib
import json
from pathlib import Path

import pytest

from conftest import scratch_clone
from icdl.repro import pins, reads
from icdl.repro.ledger import Ledger, LedgerFileError, file_seal, load_records
from icdl.repro.profiles import ProfileSet
from icdl.repro.results import load_result, provenance, save_result

ROOT = Path(__file__).resolve().parents[1]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("ledger", sorted(p.name for p in (ROOT / "results" / "ledger").glob("*.json")))
def test_every_committed_ledger_s_results_are_the_files_it_pinned(ledger):
    """Each result file a committed ledger pins exists and has the pinned sha256, and the ledger's seal covers
    those digests (a digest changed without resealing is refused at load). A result edited after its chapter
    judged it -- even with its ledger's records and seal edited to match -- turns this red unless its digest in
    the ledger is changed too; a ledger without digests is refused."""
    obj = json.loads((ROOT / "results" / "ledger" / ledger).read_text(encoding="utf-8"))
    data, prov = obj["data"], obj["provenance"]
    assert "results" in data, (f"results/ledger/{ledger} pins no result file; rerun its chapter "
                               "(python -m icdl.repro.execute <chapter>) and commit its ledger")
    assert data["seal"] == file_seal(data, prov), f"results/ledger/{ledger}: the seal does not match"
    moved = {**data, "results": {**data["results"], "results/x.json": "0" * 64}}
    assert file_seal(moved, prov) != data["seal"], f"results/ledger/{ledger}: the seal does not cover the digests"
    changed = reads.changed(data["results"], ROOT)
    assert not changed, (f"results/ledger/{ledger} pins results that changed since its chapter read them: "
                         + "; ".join(changed))


def _demo_result(tmp_path, monkeypatch, value: float = 1.0) -> Path:
    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    return save_result(tmp_path / "results" / "demo" / "study.reference.json", {"x": [value]},
                       provenance=provenance(command="python -m icdl.demo", wall_time_s=1.0, profile="reference",
                                             seed=0))


def _ledger(profile: str = "reference", value: float = 1e-15) -> Path:
    ledger = Ledger("icgd_linear", profile)
    ledger.record("icdl-icgd-one-step", ours=f"max error {value:.0e}", criterion="< 1e-13", value=value)
    return ledger.save()


def test_a_ledger_pins_the_committed_results_its_chapter_read(tmp_path, monkeypatch):
    """What a ledger pins: every file under ``results/`` its chapter loaded, with the sha256 of the bytes read;
    not a run with overrides (``runs/``), not a ledger. Its seal covers the digests and the provenance: a digest
    or the provenance's commit edited without resealing is refused at load in one line naming the file."""
    path = _demo_result(tmp_path, monkeypatch)
    other = save_result(tmp_path / "runs" / "overrides" / "demo" / "study.quick+n=2.json", {"x": [2.0]},
                        provenance=provenance(command="python -m icdl.demo", wall_time_s=1.0, profile="quick",
                                              seed=0))
    reads.forget()
    load_result(path, profile="reference")
    load_result(other)
    saved = _ledger()
    load_result(saved)  # a ledger read is no result of the chapter
    obj = json.loads(saved.read_text())
    assert obj["data"]["results"] == {"results/demo/study.reference.json": _sha(path)}
    assert reads.changed(obj["data"]["results"], tmp_path) == []
    assert len(load_records(tmp_path / "results" / "ledger")) == 1
    for edit in ("digest", "commit"):
        bad = json.loads(json.dumps(obj))
        if edit == "digest":
            bad["data"]["results"]["results/demo/study.reference.json"] = _sha(saved)
        else:
            bad["provenance"]["git_commit"] = "0" * 40
        saved.write_text(json.dumps(bad))
        with pytest.raises(LedgerFileError, match="changed after the run") as err:
            load_records(tmp_path / "results" / "ledger")
        assert str(saved) in str(err.value) and "\n" not in str(err.value)


def test_a_result_and_its_ledger_forged_and_resealed_together_are_caught_by_the_digest(tmp_path, monkeypatch):
    """The forgery the seal cannot stop: the result's number changed within its schema, the ledger's record
    changed to match and the seal recomputed (three lines of stdlib). The ledger loads -- the seal is consistent
    -- but the pinned digest names the edited result; only a forger who also changes the digest (which the diff
    of the ledger shows) gets past it, and then the re-derivation tests judge the numbers again."""
    path = _demo_result(tmp_path, monkeypatch)
    reads.forget()
    load_result(path, profile="reference")
    saved = _ledger()
    obj = json.loads(saved.read_text())
    path.write_text(path.read_text().replace("1.0", "0.8"))
    assert load_result(path)["data"] == {"x": [0.8]}  # within its schema: nothing else refuses it
    obj["data"]["records"][0]["ours"] = "max error 8e-16"
    obj["data"]["records"][0]["value"] = 8e-16
    obj["data"]["seal"] = file_seal(obj["data"], obj["provenance"])
    saved.write_text(json.dumps(obj))
    assert [r.value for r, _ in load_records(tmp_path / "results" / "ledger")] == [8e-16]
    changed = reads.changed(obj["data"]["results"], tmp_path)
    assert len(changed) == 1 and changed[0].startswith("results/demo/study.reference.json: sha256")
    path.unlink()
    assert reads.changed(obj["data"]["results"], tmp_path) == ["results/demo/study.reference.json: missing"]


def test_a_ledger_written_before_the_digests_still_loads(tmp_path, monkeypatch):
    """A committed ledger of the old form (no ``results``, its seal over the records alone) loads as before, and
    its records edited without resealing are still refused."""
    from icdl.repro.ledger import seal

    _demo_result(tmp_path, monkeypatch)
    saved = _ledger()
    obj = json.loads(saved.read_text())
    del obj["data"]["results"]
    obj["data"]["seal"] = seal(obj["data"]["records"])
    saved.write_text(json.dumps(obj))
    assert len(load_records(tmp_path / "results" / "ledger")) == 1
    obj["data"]["records"][0]["ours"] = "hand-edited"
    saved.write_text(json.dumps(obj))
    with pytest.raises(LedgerFileError, match="changed after the run"):
        load_records(tmp_path / "results" / "ledger")


def test_a_quick_rerun_that_reads_the_same_files_leaves_its_ledger_byte_for_byte(tmp_path, monkeypatch):
    """keep_if_same for quick ledgers, now that the seal covers the provenance (whose wall time and date change
    with every run): a rerun with the same records reading the same files leaves the file as it is; a rerun
    that read a changed result writes the ledger anew, pinning the new digest, under a seal that loads."""
    path = _demo_result(tmp_path, monkeypatch)
    reads.forget()
    load_result(path)
    first = _ledger("quick").read_bytes()
    assert _ledger("quick").read_bytes() == first
    _demo_result(tmp_path, monkeypatch, value=2.0)
    reads.forget()
    load_result(path)
    again = _ledger("quick")
    assert again.read_bytes() != first
    assert json.loads(again.read_text())["data"]["results"] == {"results/demo/study.reference.json": _sha(path)}
    assert len(load_records(tmp_path / "results" / "ledger")) == 1


def test_a_chapter_s_start_forgets_what_was_read_before_it(tmp_path, monkeypatch):
    """:func:`icdl.repro.chapter.start` forgets the reads of an earlier chapter run in the same process (a
    JupyterLab kernel, a test session): a ledger pins what its own chapter read, not another's."""
    from icdl.repro import chapter

    path = _demo_result(tmp_path, monkeypatch)
    load_result(path)
    assert reads.pinned()
    monkeypatch.setattr(chapter, "hold_lock", lambda name: None)
    _, ledger = chapter.start(ProfileSet("demo", profiles={"quick": {"n": 1}}), "quick")
    assert reads.pinned() == {}


def test_only_files_git_would_commit_are_pinned(tmp_path, monkeypatch):
    """A result git ignores (the extra seeds' checkpoint records, the scale study's per-depth scores) stays
    local: a fresh clone has none, so a ledger pinning it would turn the check above red there. In a clone
    only the files git does not ignore are pinned."""
    import subprocess

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("results/demo/local*\n")
    prov = provenance(command="python -m icdl.demo", wall_time_s=1.0, profile="reference", seed=0)
    kept = save_result(tmp_path / "results" / "demo" / "study.reference.json", {"x": [1.0]}, provenance=prov)
    local = save_result(tmp_path / "results" / "demo" / "local.reference.json", {"x": [1.0]}, provenance=prov)
    reads.forget()
    load_result(kept)
    load_result(local)
    assert reads.pinned() == {"results/demo/study.reference.json": _sha(kept)}


def _run_key(text: str) -> tuple:
    """What names a run in a result's provenance, and an editor cannot change without naming another run: the
    commit it was made at, its command, its profile and overrides -- not ``created``, a time any editor can
    bump (issue 70: an edited result with a new ``created`` passed as a new run)."""
    prov = json.loads(text).get("provenance", {})
    return tuple(json.dumps(prov.get(k), sort_keys=True)
                 for k in ("git_commit", "command", "profile", "overrides", "seed"))


def _changed_under_the_same_provenance(root: Path) -> list[str]:
    """The committed result files (``results/**/*.json``) whose content differs from the oldest commit that held
    their present run (:func:`_run_key`): each change to a result must come with a new run -- another commit,
    command, profile, overrides or seed -- so a file edited in place (its ``created`` bumped, its ledger's digest
    and seal recomputed beside it) still differs from what its run committed. Commits where the file is absent are
    passed over (the bug: a file deleted in one commit and re-added edited in the next had no history before the
    gap). A shallow clone, without the history, checks nothing (the first commit found is the present one)."""
    import subprocess

    def git(*args):
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout

    changed = []
    for name in (f for f in git("ls-files", "results").split() if f.endswith(".json") and f != pins.MANIFEST):
        now = (root / name).read_text(encoding="utf-8")
        key = _run_key(now)
        first = None
        for commit in git("log", "--format=%H", "--", name).split():  # newest first
            try:
                then = git("show", f"{commit}:{name}")
            except subprocess.CalledProcessError:  # absent here (deleted in this commit): look further back
                continue
            try:
                if _run_key(then) != key:
                    break
            except ValueError:  # not JSON there: another file under this name
                break
            first = then
        if first is not None and first != now:
            changed.append(name)
    return changed


def test_no_committed_result_changed_without_a_new_run():
    """Every committed result is byte for byte what the first commit of its run held (the probe: a result, its
    ledger and the seal edited together kept every other test green)."""
    assert _changed_under_the_same_provenance(ROOT) == []


def _git_repo(root: Path):
    import subprocess

    def git(*args):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.org")
    git("config", "user.name", "t")
    return git


def test_the_history_check_sees_a_result_edited_in_place(tmp_path):
    """The check itself, on a repository of its own: a result's number changed under the same provenance is named;
    the same change with a new run's provenance is not."""
    git = _git_repo(tmp_path)
    path = tmp_path / "results" / "x" / "r.reference.json"
    path.parent.mkdir(parents=True)

    def commit(value, created, run="abc1234", note=""):
        path.write_text(json.dumps({"data": {"v": value},
                                    "provenance": {"created": created, "git_commit": run, "command": "python -m x"}}))
        git("add", "-A")
        git("commit", "-qm", f"v={value} {note}")

    commit(1.0, "2026-12-01")
    assert _changed_under_the_same_provenance(tmp_path) == []
    commit(0.8, "2026-12-01")  # edited in place: the run's provenance kept
    assert _changed_under_the_same_provenance(tmp_path) == ["results/x/r.reference.json"]
    commit(0.8, "2026-12-05")  # only the time bumped: the same run (issue 70's forgery), still named
    assert _changed_under_the_same_provenance(tmp_path) == ["results/x/r.reference.json"]
    commit(0.8, "2026-12-05", run="def5678")  # a new run: another commit
    assert _changed_under_the_same_provenance(tmp_path) == []
    path.unlink()  # deleted in one commit, re-added edited under the same run in the next
    git("add", "-A")
    git("commit", "-qm", "gone")
    commit(0.5, "2026-12-06", run="def5678", note="back")
    assert _changed_under_the_same_provenance(tmp_path) == ["results/x/r.reference.json"]


def test_every_committed_result_is_pinned_by_a_ledger_or_the_manifest():
    """Every committed result JSON -- score files, checkpoint records, baseline caches included, which no chapter
    reads -- is pinned by the ledger of a chapter that read it or by ``results/pins.json``, and is the file its pin
    names (``icdl.repro.pins``; a run in progress, ``pins.IN_PROGRESS``, is pinned once done)."""
    assert pins.problems(ROOT) == [], ("rewrite the manifest after committing a new run's files: python -c 'from "
                                       "icdl.repro.pins import write; write(\".\")'")


def test_a_forged_score_file_under_a_new_run_s_provenance_is_caught_by_its_pin(tmp_path):
    """The forgery (issue 70): a score file that no chapter reads, its squared errors times 0.5 and its provenance
    made a new run's, committed -- the history check takes it for a new run, and ``--part depth`` would reassemble
    the depth result from it as a genuinely new one. Its pin in the manifest names it; so is a committed input that
    nothing pins."""
    git = _git_repo(tmp_path)
    score = tmp_path / "results" / "gpt_depth" / "checkpoints" / "reference" / "score_L10_seed0.json"
    score.parent.mkdir(parents=True)

    def commit(sse, run):
        score.write_text(json.dumps({"data": {"sse": sse}, "provenance": {"git_commit": run, "command": "x"}}))
        git("add", "-A")
        git("commit", "-qm", run)

    commit([4.0, 2.0], "abc1234")
    assert pins.problems(tmp_path) == [f"{score.relative_to(tmp_path)}: pinned by no ledger and not in "
                                       f"{pins.MANIFEST}"]
    pins.write(tmp_path)
    git("add", "-A")
    git("commit", "-qm", "pinned")
    assert pins.problems(tmp_path) == []
    commit([2.0, 1.0], "def5678")  # forged, under a new run's provenance
    assert _changed_under_the_same_provenance(tmp_path) == []  # a new run, as far as the history goes
    caught = pins.problems(tmp_path)
    assert len(caught) == 1 and caught[0].startswith(f"{score.relative_to(tmp_path)}: sha256")
    assert caught[0].endswith(f"… {pins.MANIFEST} pins")


@pytest.mark.parametrize("emptied", ["results emptied", "results dropped"])
def test_a_ledger_that_pins_nothing_while_its_chapter_reads_results_is_refused(tmp_path, monkeypatch, emptied):
    """``data.results = {}`` resealed (or the field dropped and the seal made over the records alone, the form of
    ledgers written before digests) passed (issue 70): nothing then named the results the verdicts were judged
    on. Where the chapter has committed results to read (``results/icgd_linear/summary.reference.json``), such a
    ledger is refused at load in one line naming the file; the ledger as written loads."""
    from icdl.repro.ledger import seal

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    committed = json.loads((ROOT / "results" / "icgd_linear" / "summary.reference.json").read_text())["data"]
    summary = save_result(tmp_path / "results" / "icgd_linear" / "summary.reference.json", committed,
                          provenance=provenance(command="python -m x", wall_time_s=1.0, profile="reference", seed=0))
    reads.forget()
    load_result(summary)
    saved = _ledger()
    assert len(load_records(tmp_path / "results" / "ledger")) == 1
    obj = json.loads(saved.read_text())
    if emptied == "results emptied":
        obj["data"]["results"] = {}
        obj["data"]["seal"] = file_seal(obj["data"], obj["provenance"])
    else:
        del obj["data"]["results"]
        obj["data"]["seal"] = seal(obj["data"]["records"])
    saved.write_text(json.dumps(obj))
    with pytest.raises(LedgerFileError, match="pins no result file, but chapter icgd_linear reads") as err:
        load_records(tmp_path / "results" / "ledger")
    assert str(saved) in str(err.value) and "\n" not in str(err.value)


def _committed_main_study_checkpoints() -> list[tuple[str, int, str, int]]:
    """``(profile, depth, attention, seed)`` of every committed checkpoint of the main study (its name read)."""
    import re
    import subprocess

    out = subprocess.run(["git", "ls-files", "results/gpt_icl/checkpoints"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.split()
    pattern = re.compile(r"results/gpt_icl/checkpoints/([^/]+)/gpt(?:_seed(\d+))?_depth(\d+)_(softmax|relu)\.pt$")
    return [(m[1], int(m[3]), m[4], int(m[2] or 0)) for m in map(pattern.match, out) if m]


def test_every_committed_checkpoint_is_the_model_its_name_says():
    """Each committed model of the main study and the scale study loads as the model its file name and folder
    say -- its stored settings (attention, target depth, seed, profile's schedule) those the profile gives that
    name (``schedule.load_trained``). The bug it catches (issue 70): one model's checkpoint copied over another's,
    its record's sha256 and size updated to match, which every other check let through."""
    from icdl.gpt_icl.core import main_study
    from icdl.gpt_icl.core.schedule import load_trained
    from icdl.gpt_icl.scale.models import longest_trained_models

    found = _committed_main_study_checkpoints()
    assert len(found) >= 40, found  # the reference, n01 and fitted models
    for profile, depth, att, seed in found:
        cfg = main_study.PROFILES.resolve(profile)
        load_trained(cfg, main_study.PROFILES.folder("checkpoints", profile), depth, att, cfg["n_layer"],
                     replicate=seed, command="-")
    from icdl.gpt_icl.scale.study import PROFILES as SCALE

    assert len(longest_trained_models(SCALE.resolve("reference"))) == 6


def test_a_checkpoint_swapped_for_another_model_s_is_refused_by_name(tmp_path):
    """The planted swap: the relu model's checkpoint and its record copied over the softmax model's (the record's
    digest then matches the file) -- loading it as the softmax model is refused in one line naming the file."""
    import shutil

    from icdl.gpt_icl.core import main_study
    from icdl.gpt_icl.core.schedule import load_trained
    from icdl.repro.checkpoints import CheckpointError

    src = main_study.PROFILES.folder("checkpoints", "n01")
    for suffix in ("", ".json"):
        shutil.copy(src / f"gpt_depth3_relu.pt{suffix}", tmp_path / f"gpt_depth3_softmax.pt{suffix}")
    cfg = main_study.PROFILES.resolve("n01")
    with pytest.raises(CheckpointError, match="holds another model than target depth 3, softmax attention"):
        load_trained(cfg, tmp_path, 3, "softmax", cfg["n_layer"], command="-")
