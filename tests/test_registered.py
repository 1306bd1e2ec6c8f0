"""Criteria and bands that cannot move after their registration (issue 37): for every claim with a registering
commit (``claims.REGISTERED``, and each band's ``Mismatch.registered``) the registry as it stood at that commit
(``git show``) is read and must hold today's threshold, comparison and band; a committed result that a claim
is judged on must have been made at or after that commit. Needs the repository's history (a clone, not an
export)."""

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from icdl.repro import claims

ROOT = Path(__file__).resolve().parents[1]

#: the committed results each registered claim is judged on
JUDGED_ON = {f"{c}-fitted": ("results/gpt_icl/icl.fitted.json", "results/gpt_icl/shift.fitted.json")
             for c in ("icdl-obj1", "icdl-obj2-shift", "icdl-obj2-length", "icdl-obj3", "gpt-obj3-drop")}
JUDGED_ON["icdl-obj4"] = ("results/gpt_depth/depth.reference.json",)
# measured in the chapter itself, in every profile alike: judged when the chapter's ledger was written
JUDGED_ON |= {c: ("results/ledger/gpt_icl.quick.json",) for c in ("gpt-task-linear", "gpt-task-n01")}
# ICDL's questions at x ~ N(0, I), on profile n01's models trained until flat (python -m icdl.gpt_icl --profile n01-flat
# ...): every claim of that design, the per-model ones and those over every model
JUDGED_ON |= {c: ("results/gpt_icl/icl.n01-flat.json", "results/gpt_icl/shift.n01-flat.json")
              for c in claims.REGISTERED if c.startswith("gpt-n01f-")}
# the mechanism study's positive control (python -m icdl.gpt_icl.mechanism --profile control)
JUDGED_ON["mech-control-linear"] = ("results/gpt_mechanism/mechanism.control.json",)
# the mechanism hypotheses over the main study's seeds (python -m icdl.gpt_icl.mechanism --profile seeds --workers 2)
JUDGED_ON |= {c: ("results/gpt_mechanism/mechanism.seeds.json",)
              for c in ("mech-seeds-nearest-gd", "mech-seeds-sens-gd", "mech-seeds-cosine-gd", "mech-seeds-median-gd")}
# the scale study's claims of its first commit (python -m icdl.gpt_icl.scale --profile reference --workers 2)
JUDGED_ON |= {c: ("results/gpt_scale/scale.reference.json",) for c in (
    "scale-shortfall-falls", "scale-beats-knn", "scale-forecast", "icdl-obj1-longer", "icdl-obj3-longer")}
JUDGED_ON |= {c: ("results/gpt_scale/scale.wide.json",) for c in ("icdl-obj1-wider", "icdl-obj3-wider")}
# LSA without ℓ1, sized (python -m icdl.lsa --profile nol1-sized)
JUDGED_ON |= {c: ("results/lsa_training/training.nol1-sized.json",)
              for c in ("lsa-no-l1-sized", "lsa-no-l1-chain-sized", "lsa-no-l1-fig3-sized")}
# scale-wider-tuned-closer and scale-width-tuned-over-steps (registered at 638b4ca) wait for a run of their design,
# a scan of the learning rate at width 128; the untuned wide run they are shown on leaves their gate unmet


def _git(*args: str) -> str:
    out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    if out.returncode:
        pytest.fail(f"git {' '.join(args)} failed ({out.stderr.strip()}): the registration check needs the "
                    "repository's history -- run it in a full clone")
    return out.stdout


def registry_at(commit: str) -> types.ModuleType:
    """The claims registry as committed at ``commit``, as a module: one file (``…/claims.py``, before the
    registry was split by chapter) or the package ``src/icdl/repro/claims/`` with one part per chapter, loaded
    from that commit's files under a name of its own (its parts import each other relatively)."""
    files = _git("ls-tree", "-r", "--name-only", commit).split()
    package = [p for p in files if p.startswith("src/icdl/repro/claims/") and p.endswith(".py")]
    if package:
        return _package_at(commit, package)
    for path in [p for p in files if p.endswith("/claims.py")]:
        source = _git("show", f"{commit}:{path}")
        if "class Mismatch" in source:
            module = types.ModuleType(f"claims_at_{commit}")
            sys.modules[module.__name__] = module  # dataclasses look their module up
            try:
                exec(compile(source, f"{commit}:{path}", "exec"), module.__dict__)
            finally:
                del sys.modules[module.__name__]
            return module
    pytest.fail(f"no claims registry in commit {commit}")


def _package_at(commit: str, paths: list[str]) -> types.ModuleType:
    import importlib.util
    import tempfile

    name = f"claims_at_{commit}"
    folder = Path(tempfile.mkdtemp()) / name
    folder.mkdir()
    for path in paths:
        (folder / Path(path).name).write_text(_git("show", f"{commit}:{path}"), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
            del sys.modules[key]
    return module


def _criterion(module, claim: str, without: frozenset = frozenset()) -> list[tuple]:
    """A criterion as comparable data; a gate whose kind changed under its own registration
    (``claims.GATES_CHANGED``) is read with the op it was registered with, so that only the change's own
    registration (:func:`test_a_changed_gate_counts_only_as_registered`) can make it differ."""
    back = {key: old for key, (old, new, _) in claims.GATES_CHANGED.items()}
    return [(c.key, back.get(c.key, c.op) if c.op in claims.GATE_OPS else c.op, float(c.threshold))
            for c in module.CRITERIA[claim] if not (c.op in claims.GATE_OPS and c.key in without)]


def _added_gates(then, claim: str, was: str | None = None) -> frozenset:
    """The gates of ``claim``'s criterion today that were added after its registration (``then``: the registry
    at that commit, where the claim was called ``was``) under a registration of their own
    (:data:`icdl.repro.claims.GATES_ADDED`)."""
    had = {c.key for c in then.CRITERIA.get(was or claim, ()) if c.op in claims.GATE_OPS}
    return frozenset(c.key for c in claims.CRITERIA[claim]
                     if c.op in claims.GATE_OPS and c.key in claims.GATES_ADDED and c.key not in had)


def _registrations() -> list[tuple[str, str, str]]:
    out = [("criterion", claim, commit) for claim, commit in claims.REGISTERED.items()]
    out += [("band", m.claim, m.registered) for m in claims.MISMATCHES.values() if m.registered]
    return out


@pytest.mark.parametrize("what, claim, commit", _registrations())
def test_registered_criteria_and_bands_have_not_moved(what, claim, commit):
    then = registry_at(commit)
    if what == "band":
        assert claim in then.MISMATCHES, f"{claim}: commit {commit} registered no band for it"
        assert tuple(then.MISMATCHES[claim].band) == tuple(claims.MISMATCHES[claim].band), (
            f"{claim}: the band moved since its registration at {commit}")
        if not hasattr(then, "CRITERIA"):  # registered before criteria were data: the band is what was registered
            return
    was = claims.RENAMED.get(claim, claim)  # the claim's id at its registering commit
    added = _added_gates(then, claim, was)
    assert _criterion(then, was) == _criterion(claims, claim, added), (
        f"{claim}: the criterion differs from the one registered at {commit}; register the change in a commit "
        "of its own before any run it judges, and name that commit in claims.REGISTERED")
    for key in added:  # a gate added later: as registered at its own commit, for this claim
        at = registry_at(claims.GATES_ADDED[key])
        back = {k: old for k, (old, new, _) in claims.GATES_CHANGED.items()}
        mine = [(back.get(c.key, c.op), float(c.threshold)) for c in claims.CRITERIA[claim] if c.key == key]
        theirs = [(c.op, float(c.threshold)) for c in at.CRITERIA.get(claim, at.CRITERIA.get(was, ())) if c.key == key]
        assert mine == theirs, (f"{claim}: the gate {key!r} differs from the one registered at "
                                f"{claims.GATES_ADDED[key]} ({theirs or 'absent there'})")


@pytest.mark.parametrize("claim", sorted(c for c in claims.REGISTERED if c in JUDGED_ON))
def test_judged_results_were_made_after_the_registration(claim):
    commit = claims.REGISTERED[claim]
    for path in JUDGED_ON[claim]:
        if not (ROOT / path).is_file():  # its run has not been made: the chapter must record it as waiting
            from icdl.repro.ledger import load_records

            status = {r.claim: r.status for r, _ in load_records(ROOT / "results" / "ledger")}.get(claim)
            assert status == "not yet covered", f"{path} is missing, yet {claim} is recorded as {status!r}"
            continue
        made = json.loads((ROOT / path).read_text())["provenance"]["git_commit"]
        ok = subprocess.run(["git", "merge-base", "--is-ancestor", commit, made], cwd=ROOT).returncode == 0
        assert ok, f"{path} was made at {made[:9]}, not after {claim}'s criterion was registered at {commit}"


def test_withdrawn_bands_are_gone_and_every_registered_claim_exists():
    assert not set(claims.WITHDRAWN) & set(claims.MISMATCHES)
    assert set(claims.REGISTERED) <= set(claims.CRITERIA)


def test_the_check_catches_a_moved_threshold_and_a_moved_band(monkeypatch):
    """The positive control: today's registry with one threshold or one band edited fails the check."""
    claim, commit = "icdl-obj4", claims.REGISTERED["icdl-obj4"]
    moved = claims.Condition("value", ">", -0.05)
    monkeypatch.setitem(claims.CRITERIA, claim, (moved,))
    with pytest.raises(AssertionError, match="criterion differs"):
        test_registered_criteria_and_bands_have_not_moved("criterion", claim, commit)
    monkeypatch.undo()
    m = claims.MISMATCHES[claim]
    monkeypatch.setitem(claims.MISMATCHES, claim, claims.Mismatch(m.claim, m.quantity, (-0.25, 0.0), m.reason,
                                                                  m.registered, m.judges))
    with pytest.raises(AssertionError, match="band moved"):
        test_registered_criteria_and_bands_have_not_moved("band", claim, m.registered)


def test_a_gate_added_later_counts_only_as_registered(monkeypatch):
    """A gate may join a criterion after its registration only under a registration of its own
    (``claims.GATES_ADDED``), and only as registered there: another gate added in silence, or the learning gate
    with another margin, fails the check; the learning gate as registered passes it."""
    claim, commit = "icdl-obj4", claims.REGISTERED["icdl-obj4"]
    test_registered_criteria_and_bands_have_not_moved("criterion", claim, commit)  # the gate as registered
    value = claims.CRITERIA[claim][0]
    for extra, words in ((claims.Condition("learned", "gate", 0.01), "gate 'learned' differs"),
                         (claims.Condition("tuned", "gate", 1.0), "criterion differs")):
        monkeypatch.setitem(claims.CRITERIA, claim, (value, extra))
        with pytest.raises(AssertionError, match=words):
            test_registered_criteria_and_bands_have_not_moved("criterion", claim, commit)
        monkeypatch.undo()


@pytest.mark.parametrize("key", sorted(claims.GATES_CHANGED))
def test_a_changed_gate_counts_only_as_registered(key):
    """A gate whose kind changed (the learning gate became refutable, issue 67) has today, in every criterion that
    holds it, the op and threshold the registry held at the change's own commit -- and that commit registered the
    change: its op then differs from the old one. The bug it catches: a gate's kind changed in silence, or changed
    again after its registration."""
    old, new, commit = claims.GATES_CHANGED[key]
    assert commit, f"the change of gate {key!r} names no registering commit"
    at = registry_at(commit)
    then = {(c.op, float(c.threshold)) for crit in at.CRITERIA.values() for c in crit if c.key == key}
    now = {(c.op, float(c.threshold)) for crit in claims.CRITERIA.values() for c in crit if c.key == key}
    assert then == now and {op for op, _ in now} == {new} and new != old, (then, now)


def test_the_registry_is_read_back_from_a_commit_part_by_part():
    """The registry at HEAD, read from git as the check reads a registering commit (the package of one part per
    chapter), holds today's criteria and bands: the bug it guards, a loader that reads only the old single
    file and so cannot check a claim registered after the split."""
    then = registry_at("HEAD")
    assert then.__name__ == "claims_at_HEAD"
    if _git("status", "--porcelain", "--", "src/icdl/repro/claims").strip():
        pytest.skip("the registry has uncommitted changes: HEAD is not today's registry")
    assert {c: _criterion(then, c) for c in then.CRITERIA} == {c: _criterion(claims, c) for c in claims.CRITERIA}
    assert {m.claim: m.band for m in then.MISMATCHES.values()} == {m.claim: m.band for m in claims.MISMATCHES.values()}


@pytest.mark.parametrize("claim", sorted(claims.REPLACED))
def test_a_replaced_design_names_its_registration_and_is_no_longer_live(claim):
    """A replaced claim is out of every live table (no criterion, registration, known failure or chapter record),
    the claims it names as its successors are live, and the commit it names as its registration held its
    criterion (the bugs: a replaced claim still judged beside its successor, a record pointing at a commit that
    never registered it)."""
    r = claims.REPLACED[claim]
    assert claim not in claims.CRITERIA and claim not in claims.REGISTERED and claim not in claims.KNOWN_FAILURES
    assert all(b in claims.CLAIMS_BY_ID for b in r.by)
    assert r.status in ("pass", "fail", "inconclusive", "mismatch") and r.judged_on.startswith("python -m ")
    if r.registered:
        assert claim in registry_at(r.registered).CRITERIA, f"{claim}: {r.registered} registered no criterion for it"


def _provenance_commits() -> list[tuple[str, str]]:
    out = []
    for path in _git("ls-files", "results").split():
        if path.endswith(".json"):
            obj = json.loads((ROOT / path).read_text())
            made = obj.get("provenance", {}).get("git_commit") if isinstance(obj, dict) else None
            if made:
                out.append((path, made))
    return out


def test_every_committed_result_names_a_clean_commit_of_this_history():
    """A committed file is what its stated command produces at its stated commit: that commit must be one a reader
    can check out. Catches a chapter executed on a work-in-progress commit that was later amended away (its hash
    then lives only in the writer's own object store, so a local clone still finds it and a fresh CI clone does
    not), and a result made with uncommitted edits (``+dirty``)."""
    made = _provenance_commits()
    assert len(made) > 20, "the committed results carry their provenance"
    wrong = [f"{path} ({commit})" for path, commit in made if _refused(commit)]
    assert not wrong, ("made at a commit that is not a clean ancestor of HEAD -- run the stated command again at a "
                       "clean commit: " + ", ".join(wrong))


def _refused(commit: str) -> bool:
    """A result's commit that a reader cannot check out as it was: made with uncommitted edits, or not in HEAD's
    history."""
    return commit.endswith("+dirty") or not _in_history(commit)


def _in_history(commit: str) -> bool:
    sha = commit.split("+")[0]
    return subprocess.run(["git", "merge-base", "--is-ancestor", sha, "HEAD"], cwd=ROOT,
                          capture_output=True).returncode == 0


def test_the_history_check_refuses_a_commit_off_the_branch_and_a_dirty_one():
    """The positive control: a dangling commit (made here, then dropped from every branch) and a dirty marker."""
    tree = _git("rev-parse", "HEAD^{tree}").strip()
    who = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    dangling = subprocess.run(["git", "commit-tree", tree, "-m", "dropped work in progress"], cwd=ROOT,
                              capture_output=True, text=True, check=True, env={**os.environ, **who}).stdout.strip()
    head = _git("rev-parse", "HEAD").strip()
    assert _refused(dangling) and _refused(head + "+dirty") and _refused("0" * 40)
    assert not _refused(head) and not _refused(_git("rev-parse", "HEAD~1").strip())


def _committed_ledger(chapter: str) -> dict | None:
    """The quick ledger of ``chapter`` as committed at HEAD (not as this test run's execution of the chapter may
    have rewritten it), or None where it is not committed."""
    out = subprocess.run(["git", "show", f"HEAD:results/ledger/{chapter}.quick.json"], cwd=ROOT,
                         capture_output=True, text=True)
    return json.loads(out.stdout)["data"] if out.returncode == 0 else None


@pytest.mark.parametrize("chapter", sorted(claims.JUDGED_BY))
def test_each_committed_verdict_was_judged_by_today_s_code(chapter):
    """A registration pins the statistic as well as the threshold: the committed ledger records the digest of every
    file that computes its chapter's registered values (``claims.JUDGED_BY``), and a change to one of them -- a
    position moved, a max taken over other models, another interval method -- turns this red until the chapter is
    executed again and its verdicts re-judged by the new code (``python -m icdl.repro.execute <chapter>``), so
    that no committed verdict quietly belongs to code that is gone."""
    from icdl.repro.ledger import stale_judges

    if subprocess.run(["git", "rev-parse", "--git-dir"], cwd=ROOT, capture_output=True).returncode:
        pytest.skip("not a git checkout: the committed ledger cannot be read")
    data = _committed_ledger(chapter)
    assert data is not None, f"results/ledger/{chapter}.quick.json is not committed"
    stale = stale_judges(chapter, data, ROOT / "src" / "icdl")
    assert not stale, (f"{chapter}: the committed verdicts were judged by other code than {stale} holds now; run "
                       f"python -m icdl.repro.execute {chapter} and commit its ledger")


def test_a_changed_judge_file_is_named_and_an_unchanged_one_is_not(tmp_path):
    """The positive control of the test above: in a copy of the judge files, a one-character change to one of
    them is named, the others are not, a ledger without digests names them all, and today's digests name none."""
    from icdl.repro.ledger import judge_digests, stale_judges

    chapter = "gpt_n01"
    for f in claims.JUDGED_BY[chapter]:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_bytes((ROOT / "src" / "icdl" / f).read_bytes())
    data = {"judges": judge_digests(chapter, tmp_path)}
    assert stale_judges(chapter, data, tmp_path) == []
    edited = claims.JUDGED_BY[chapter][-1]
    (tmp_path / edited).write_text((tmp_path / edited).read_text().replace(">", ">=", 1))
    assert stale_judges(chapter, data, tmp_path) == [edited]
    assert stale_judges(chapter, {}, tmp_path) == sorted(claims.JUDGED_BY[chapter])
