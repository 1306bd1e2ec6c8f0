import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from conftest import scratch_clone
from icdl.repro.files import ResultFileError
from icdl.repro.profiles import ProfileError, ProfileSet
from icdl.repro.results import PROVENANCE_KEYS, load_result, provenance, save_result
from icdl.studies.linear_gd import PROFILES


def test_resolve_quick_and_override():
    cfg = PROFILES.resolve("quick", n=64)
    assert cfg["n"] == 64 and cfg["profile"] == "quick" and cfg["d"] == PROFILES.profiles["quick"]["d"]
    with pytest.raises(TypeError):
        cfg["n"] = 3  # read-only


@pytest.mark.parametrize("name, overrides, match", [
    ("huge", {}, r"unknown profile 'huge'; allowed profiles: \['quick', 'reference'\]"),
    ("quick", {"width": 3}, r"unknown setting 'width'; settings of this chapter: \["),
    ("quick", {"n": 0}, r"n=0 \(override\) is out of range; allowed: 1 <= n <= 100000"),
    ("quick", {"d": 2.5}, r"must be an integer"),
    ("quick", {"noise": "a lot"}, r"must be a number"),
])
def test_bad_profiles_are_rejected_with_the_allowed_values(name, overrides, match):
    with pytest.raises(ProfileError, match=match):
        PROFILES.resolve(name, **overrides)


def test_profile_sets_must_be_consistent():
    with pytest.raises(ProfileError, match="needs a 'quick' profile"):
        ProfileSet("x", profiles={"big": {"n": 1}})
    with pytest.raises(ProfileError, match="must name the same settings"):
        ProfileSet("x", profiles={"quick": {"n": 1}, "big": {"m": 1}})
    with pytest.raises(ProfileError, match="allowed values"):
        ProfileSet("x", profiles={"quick": {"act": "elu"}}, ranges={"act": {"relu", "tanh"}})


def _prov():
    return provenance(command="pytest", wall_time_s=1.0, profile="quick", seed=0)


def test_result_round_trip_with_provenance(tmp_path):
    path = save_result(tmp_path / "r.json", {"a": [1, 2]}, provenance=_prov())
    obj = load_result(path)
    assert obj["data"] == {"a": [1, 2]}
    assert set(PROVENANCE_KEYS) <= set(obj["provenance"])


def test_loader_refuses_files_without_provenance(tmp_path):
    p = tmp_path / "bare.json"
    p.write_text(json.dumps({"data": {"a": 1}}))
    with pytest.raises(ResultFileError, match="no provenance"):
        load_result(p)
    prov = _prov()
    del prov["git_commit"]
    p.write_text(json.dumps({"provenance": prov, "data": {}}))
    with pytest.raises(ResultFileError, match="lacks provenance fields \\['git_commit'\\]"):
        load_result(p)
    with pytest.raises(ResultFileError, match="does not exist"):
        load_result(tmp_path / "missing.json")
    with pytest.raises(ResultFileError, match="provenance is missing"):
        save_result(tmp_path / "x.json", {}, provenance=prov)


def test_a_killed_write_leaves_the_previous_result_intact(tmp_path, monkeypatch):
    path = save_result(tmp_path / "r.json", {"v": 1}, provenance=_prov())

    def crash(*args, **kwargs):
        raise KeyboardInterrupt("killed midway")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        save_result(path, {"v": 2}, provenance=_prov())
    monkeypatch.undo()
    assert load_result(path)["data"] == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temp file left behind


def test_profile_result_names_its_command(tmp_path, monkeypatch):
    import time

    from icdl.repro.results import save_profile_result

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    demo = ProfileSet("demo", profiles={"quick": {"a": 1}, "reference": {"a": 2}},
                      command="python -m icdl.demo --profile {profile}")
    path = save_profile_result(demo, "study", {"x": [1, 2]}, profile="reference", seed=3,
                               started=time.perf_counter() - 2.0)
    assert path == tmp_path / "results" / "demo" / "study.reference.json"
    res = load_result(path)
    assert res["data"] == {"x": [1, 2]}
    assert res["provenance"]["command"] == "python -m icdl.demo --profile reference"
    assert res["provenance"]["seed"] == 3 and res["provenance"]["wall_time_s"] >= 2.0


def test_a_run_with_overrides_writes_under_runs_overrides_never_the_profiles_file(tmp_path, monkeypatch):
    """A run with overrides is its own run (README: "Running one chapter at another profile"): its result goes to
    ``runs/overrides/<chapter>/<stem>.<profile>+<overrides>.json`` and the profile's committed file in
    ``results/<chapter>/`` is left as it was (the bug: a path chosen without looking at ``overrides`` wrote the
    ``--set n=64`` run's numbers over ``results/<chapter>/<stem>.<profile>.json``)."""
    import time

    from icdl.repro.results import save_profile_result

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    demo = ProfileSet("demo", profiles={"quick": {"a": 1}, "reference": {"a": 2}},
                      command="python -m icdl.demo --profile {profile}")
    for profile in ("quick", "reference"):
        mine = save_profile_result(demo, "study", {"x": [1, 2]}, profile=profile, seed=0,
                                   started=time.perf_counter())
        assert mine == tmp_path / "results" / "demo" / f"study.{profile}.json"
        before = mine.read_bytes()
        cfg = demo.resolve(profile, a=5)
        assert cfg["overrides"] == ("a=5",)
        path = save_profile_result(demo, "study", {"x": [9, 9]}, profile=profile, seed=0,
                                   started=time.perf_counter(), overrides=cfg["overrides"])
        assert path == tmp_path / "runs" / "overrides" / "demo" / f"study.{profile}+a=5.json"
        assert mine.read_bytes() == before  # the profile's file is untouched ...
        assert sorted(p.name for p in (tmp_path / "results" / "demo").iterdir()) == [
            f"study.{p}.json" for p in ("quick", "reference") if p <= profile]  # ... and nothing joined it
        res = load_result(path)
        assert res["data"] == {"x": [9, 9]} and res["provenance"]["profile"] == profile
        assert res["provenance"]["command"] == f"python -m icdl.repro.execute demo --profile {profile} --set a=5"


def test_tuple_settings_are_the_one_list_type():
    """A list setting is a tuple checked element by element; a scalar override becomes a one-element tuple;
    an element out of range or of the wrong type names the setting (an unchecked element would reach deep
    inside a study)."""
    ps = ProfileSet("demo", profiles={"quick": {"widths": (16, 64), "n": 3}}, ranges={"widths": (1, 4096)})
    assert ps.resolve("quick", widths=(8, 32, 128))["widths"] == (8, 32, 128)
    assert ps.resolve("quick", widths=[8, 32])["widths"] == (8, 32)
    assert ps.resolve("quick", widths=8)["widths"] == (8,)
    coerced = ps.resolve("quick", widths=(8.0,))["widths"]
    assert coerced == (8,) and isinstance(coerced[0], int)
    for bad in ((0,), (8, 5000), (8, "x"), (8, 2.5), ()):
        with pytest.raises(ProfileError, match="widths"):
            ps.resolve("quick", widths=bad)


def test_chapter_id_names_folder_and_command(tmp_path, monkeypatch):
    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    ps = ProfileSet("demo", profiles={"quick": {"n": 1}})
    assert ps.folder() == tmp_path / "results" / "demo" and ps.folder().is_dir()
    assert ps.folder("checkpoints", "reference") == tmp_path / "results" / "demo" / "checkpoints" / "reference"
    assert ps.command_for("reference") == "python -m icdl.repro.execute demo --profile reference"
    other = ProfileSet("demo", profiles={"quick": {"n": 1}}, command="python -m icdl.demo --profile {profile}")
    assert other.command_for("paper") == "python -m icdl.demo --profile paper"


def test_show_reference_missing_is_a_note_corrupt_is_an_error(tmp_path, monkeypatch, capsys):
    """Missing: the chapter carries on and says which command produces the file. Present but damaged
    (truncated JSON, no provenance): the chapter stops, naming the file and that command -- it must never
    fall back silently to the live run."""
    from icdl.repro.results import show_reference

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    ps = ProfileSet("demo", profiles={"quick": {"n": 1}}, command="python -m icdl.demo --profile {profile}")
    assert show_reference(ps, "study") is None
    assert "python -m icdl.demo --profile reference" in capsys.readouterr().out
    path = save_result(ps.folder() / "study.reference.json", {"x": [1]},
                       provenance=provenance(command="python -m icdl.demo --profile reference", wall_time_s=1.0,
                                             profile="reference", seed=0))
    assert show_reference(ps, "study")["data"] == {"x": [1]}
    shown = capsys.readouterr().out.splitlines()  # one short line per field, none cut off at the page's width
    assert shown[1] == "  command:   python -m icdl.demo --profile reference"
    assert shown[3] == "  profile:   reference (seed 0)" and "  wall time: 1 s" in shown
    assert max(len(line) for line in shown) <= 72  # the hardware line too, broken after a comma
    path.write_text(path.read_text()[:40])
    with pytest.raises(ResultFileError, match=r"study\.reference\.json.*Regenerate it with: python -m icdl\.demo"):
        show_reference(ps, "study")
    path.write_text('{"data": {"x": [1]}}')
    with pytest.raises(ResultFileError, match="provenance"):
        show_reference(ps, "study")



def test_a_result_relabelled_with_another_profile_is_refused_naming_the_file(tmp_path, monkeypatch):
    """The bug: ``icl.reference.json`` with its provenance's ``profile`` edited to ``quick`` (or a quick file
    copied over the reference one) was accepted and shown as the reference result. A profile's file whose
    provenance names another profile is now one line naming the file, both profiles and the command that
    rewrites it; the loaders that read a profile's file by name refuse it too."""
    from icdl.repro.results import show_reference

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    ps = ProfileSet("demo", profiles={"quick": {"n": 1}}, command="python -m icdl.demo --profile {profile}")
    path = save_result(ps.folder() / "study.reference.json", {"x": [1]},
                       provenance=provenance(command="python -m icdl.demo --profile reference", wall_time_s=1.0,
                                             profile="quick", seed=0))
    with pytest.raises(ResultFileError) as err:
        show_reference(ps, "study")
    line = str(err.value)
    assert "\n" not in line and str(path) in line and "'reference'" in line and "'quick'" in line
    assert line.endswith("Regenerate it with: python -m icdl.demo --profile reference")
    with pytest.raises(ResultFileError, match=r"study\.reference\.json.*made at profile 'quick'"):
        load_result(path, profile="reference")
    assert load_result(path)["data"] == {"x": [1]}  # a file read without a profile (a record, a cache) as before


def test_every_committed_result_named_by_its_profile_loads_at_that_profile():
    """Every committed ``<stem>.<profile>.json`` (ledgers included) records that profile in its provenance, so
    the refusal above refuses no committed file; the files named otherwise (checkpoint records
    ``*.pt.json``, whose provenance profile is empty or the run's, score files, MLP-baseline caches, the
    mutation catalogue) are read without a profile."""
    root = Path(__file__).resolve().parents[1] / "results"
    named = [p for p in root.rglob("*.json")
             if re.fullmatch(r"[A-Za-z0-9_]+\.[A-Za-z0-9-]+\.json", p.name) and not p.name.endswith(".pt.json")]
    assert len(named) > 20
    for p in named:
        load_result(p, profile=p.name.split(".")[1])

def test_frame_to_lists_round_trips_types():
    """Integers stay integers (a cached baseline's positions), booleans stay booleans, NaN survives, text is
    text: a serialiser that turned ints into floats broke the cache comparison of the baselines."""
    import math

    import pandas as pd

    from icdl.repro.results import frame_to_lists

    df = pd.DataFrame({"k": [1, 2], "r2": [0.5, float("nan")], "ok": [True, False], "name": ["a", "b"]})
    out = frame_to_lists(df)
    assert out["k"] == [1, 2] and all(type(v) is int for v in out["k"])
    assert out["ok"] == [True, False] and math.isnan(out["r2"][1])
    back = pd.DataFrame(out)
    assert back["k"].dtype.kind == "i" and back["ok"].dtype == bool and back["name"].tolist() == ["a", "b"]


def test_dirty_marker_ignores_generated_outputs_only(tmp_path):
    """A chapter's own freshly written results and executed notebooks must not mark its provenance dirty;
    a changed source file must (a marker dropped, or one that counts generated files, both fail here)."""
    import subprocess

    from icdl.repro.commits import git_commit

    def git(*args):
        subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    for rel, text in (("src/x.py", "a"), ("results/a.json", "1"), ("notebooks/c.ipynb", "n"), ("notebooks/c.py", "p")):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "init")
    clean = git_commit(tmp_path)
    assert len(clean) == 40 and not clean.endswith("+dirty")
    (tmp_path / "results" / "a.json").write_text("2")
    (tmp_path / "notebooks" / "c.ipynb").write_text("m")
    assert git_commit(tmp_path) == clean
    (tmp_path / "notebooks" / "c.py").write_text("q")
    assert git_commit(tmp_path) == clean + "+dirty"


def test_result_files_get_normal_modes(tmp_path):
    """mkstemp's 0600 must not leak into committed results (other users and CI could not read them)."""
    import os
    import stat

    old = os.umask(0o022)
    try:
        path = save_result(tmp_path / "r.json", {"a": 1}, provenance=provenance(command="c", wall_time_s=0.0,
                                                                                 profile="quick", seed=0))
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert not list(tmp_path.glob(".*tmp"))


def test_checkpoints_are_checked_against_their_record(tmp_path):
    """Truncated, flipped or unrecorded checkpoints fail with one message naming the file and the caller's
    command that rebuilds it (they used to load silently, or fail with a bare OSError/UnicodeDecodeError)."""
    import torch

    from icdl.repro.checkpoints import CheckpointError, load_checkpoint, save_checkpoint

    path = save_checkpoint(tmp_path / "m.pt", {"w": torch.arange(1000.0)}, command="python -m icdl.demo --x")
    assert torch.equal(load_checkpoint(path)["w"], torch.arange(1000.0))
    raw = path.read_bytes()
    flipped = bytearray(raw)
    flipped[len(raw) // 2] ^= 0x01
    path.write_bytes(bytes(flipped))
    with pytest.raises(CheckpointError, match=r"m\.pt is damaged.*python -m icdl\.demo --x"):
        load_checkpoint(path, command="python -m icdl.demo --x")
    path.write_bytes(raw[: len(raw) // 3])
    with pytest.raises(CheckpointError, match=r"m\.pt is damaged"):
        load_checkpoint(path)
    path.write_bytes(raw)
    (tmp_path / "m.pt.json").unlink()
    with pytest.raises(CheckpointError, match=r"m\.pt has no valid record"):
        load_checkpoint(path)
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(tmp_path / "none.pt")


def test_every_committed_result_carries_provenance():
    """Walk results/: every JSON file loads with full provenance, and every checkpoint matches its record."""
    from pathlib import Path

    from icdl.repro.checkpoints import load_checkpoint

    root = Path(__file__).resolve().parents[1] / "results"
    # results/pins.json is the manifest of digests (icdl.repro.pins), not a result: the history check reads it
    jsons = [p for p in root.rglob("*.json") if p != root / "pins.json"]
    assert jsons
    for p in jsons:
        load_result(p)
    for p in root.rglob("*.pt"):
        load_checkpoint(p)


def test_reference_or_live_takes_only_complete_references(tmp_path, monkeypatch, capsys):
    """The one policy of every chapter: the committed results when all of them exist and say complete, the
    live run otherwise -- and the live run is computed only then. An incomplete file (a resumable run
    stopped midway), or one of two files missing, must not be judged as the reference."""
    from icdl.repro.chapter import reference_or_live

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    ps = ProfileSet("demo", profiles={"quick": {"n": 1}}, command="python -m icdl.demo --profile {profile}")
    calls = []

    def live():
        calls.append(1)
        return "live"

    def write(stem, complete):
        save_result(ps.folder() / f"{stem}.reference.json", {"complete": complete, "x": stem},
                    provenance=provenance(command="c", wall_time_s=0.0, profile="reference", seed=0))

    def load(*raws):
        return [r["data"]["x"] for r in raws]

    assert reference_or_live(ps, ("a", "b"), load, live, "quick") == ("live", "quick (no complete reference result)")
    write("a", True)
    assert reference_or_live(ps, ("a", "b"), load, live, "quick")[0] == "live"  # b is missing
    write("b", False)
    assert reference_or_live(ps, ("a", "b"), load, live, "quick")[0] == "live"  # b is incomplete
    assert "['b'] not complete" in capsys.readouterr().out
    write("b", True)
    n = len(calls)
    assert reference_or_live(ps, ("a", "b"), load, live, "quick") == (["a", "b"], "reference")
    assert len(calls) == n  # not computed when the reference is used


def test_one_writer_refuses_a_second_process_and_names_the_first(tmp_path, monkeypatch):
    """Two runs writing one checkpoint: the second is refused at once with the first one's pid; the lock goes
    with its process (no stale lock after the holder ends), and a lock is per file (another file is free)."""
    import subprocess
    import sys
    import time

    from icdl.repro.files import one_writer

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    target = tmp_path / "results" / "demo" / "checkpoint.quick.pt"
    ready = tmp_path / "ready"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import time, pathlib; from icdl.repro.files import one_writer\n"
        f"with one_writer({str(target)!r}):\n"
        f"    pathlib.Path({str(ready)!r}).write_text('x'); time.sleep(30)")],
        env={**os.environ, "ICDL_ROOT": scratch_clone(tmp_path)})
    try:
        for _ in range(300):
            if ready.exists():
                break
            time.sleep(0.05)
        with pytest.raises(ResultFileError, match=rf"being written by pid {holder.pid} "):
            with one_writer(target):
                pass
        with one_writer(tmp_path / "results" / "demo" / "other.pt"):
            pass
    finally:
        holder.kill()
        holder.wait()
    with one_writer(target):  # released by the operating system when its holder died
        pass


def test_a_second_training_run_on_one_checkpoint_is_refused(tmp_path, monkeypatch):
    from icdl.gpt_icl.core.model import GPTConfig
    from icdl.gpt_icl.core.tasks import TaskConfig
    from icdl.gpt_icl.core.training import TrainConfig, train
    from icdl.repro.files import one_writer

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    ckpt = tmp_path / "m.pt"
    cfgs = (GPTConfig(d=3, n_layer=1, n_head=1, n_embd=8, max_examples=6), TaskConfig(d=3, depth=2),
            TrainConfig(steps=2, batch=2, examples=4, log_every=1))
    with one_writer(ckpt):  # as if another process trained it now (one fd per holder: a conflict in-process too)
        with pytest.raises(ResultFileError, match="checkpoint .*m.pt is being written by"):
            train(*cfgs, checkpoint=ckpt, progress=False)
    assert not ckpt.exists()
    assert train(*cfgs, checkpoint=ckpt, progress=False)["steps_done"] == 2


@pytest.mark.parametrize("edit, message", [
    (lambda o: o["provenance"].update(wall_time_s="fast"), "wrong type: wall_time_s='fast'"),
    (lambda o: o["provenance"].update(seed="0"), "wrong type: seed='0'"),
    (lambda o: o["provenance"].update(seed=True), "wrong type: seed=True"),  # a bool is not an integer seed
    (lambda o: o["provenance"].update(wall_time_s=False), "wrong type: wall_time_s=False"),
    (lambda o: o["provenance"].update(command=""), "wrong type: command=''"),
    (lambda o: o.update(data=[]), "no 'data' block"),
    (lambda o: o["data"].update(complete="no"), "data.complete must be true or false"),
])
def test_result_files_of_the_wrong_shape_are_refused_naming_the_file(tmp_path, edit, message):
    """A hand-edited or damaged file is refused at load in one message naming it (not a bare ValueError or
    KeyError later; ``complete: "no"`` is not taken for complete)."""
    path = save_result(tmp_path / "r.json", {"complete": True, "x": [1]}, provenance=_prov())
    obj = json.loads(path.read_text())
    edit(obj)
    path.write_text(json.dumps(obj))
    with pytest.raises(ResultFileError, match=rf"r\.json.*{re.escape(message)}"):
        load_result(path)


def test_the_overrides_parameter_takes_a_dict_or_its_json_text():
    """``papermill -p overrides '{"n": 64}'`` passes a string: it is read as JSON; a string that is not JSON,
    a value that is not a mapping (``-p overrides n=3``, ``-p overrides 7``) or a key given twice
    (``'{"n": 8, "n": 16}'``, which ran with n = 16) is one ProfileError."""
    from icdl.repro.parameters import overrides_dict

    assert overrides_dict('{"n": 64}') == {"n": 64} and overrides_dict({"n": 2}) == {"n": 2}
    assert overrides_dict(None) == {} and overrides_dict("") == {}
    for bad in ("n=3", 7, "[1, 2]"):
        with pytest.raises(ProfileError, match="overrides must be a dict"):
            overrides_dict(bad)
    # the checks of ``execute --set``: a key given twice is refused, not the last value taken (the README says
    # so of papermill too); keys are setting names; the run's name is made of names and numbers
    with pytest.raises(ProfileError, match="gives 'n' twice"):
        overrides_dict('{"n": 8, "n": 16}')
    with pytest.raises(ProfileError, match="must name settings by strings"):
        overrides_dict({1: 2})
    from icdl.repro.profiles import check_run_name

    check_run_name("quick+n=8+etas=0.1,0.5")
    with pytest.raises(ProfileError, match="must be names and numbers"):
        check_run_name("quick+name=../x")
    cfg = PROFILES.resolve("quick", n=8)
    assert cfg["run"] == "quick+n=8" and cfg["overrides"] == ("n=8",)
    assert PROFILES.resolve("quick")["overrides"] == () and PROFILES.resolve("quick")["run"] == "quick"


def test_papermill_yaml_parameters_refuse_a_key_given_twice_in_one_line():
    """``papermill -y 'overrides: {n: 8, n: 16}'`` ran with n = 16: PyYAML keeps the last of two equal keys, and
    the kernel receives the merged dict, the duplicate gone. The chapter reads papermill's YAML again from the
    papermill process among its ancestors and refuses the key given twice, naming the parameter, as it refuses
    ``'{"n": 8, "n": 16}'`` in JSON; a profile that is not a name (``-y 'profile: [quick]'``, a list) is one line
    too, not ``TypeError: unhashable type: 'list'``."""
    from icdl.repro.parameters import _papermill_yaml, check_yaml_once

    check_yaml_once("overrides: {n: 8, steps: 50}\nprofile: quick")
    for text, message in (("overrides: {n: 8, n: 16}", r"the parameter overrides gives 'n' twice \(papermill -y"),
                          ("overrides:\n  n: 8\n  n: 16\n", r"the parameter overrides gives 'n' twice"),
                          ("profile: quick\nprofile: reference", r"the parameter 'profile' is given twice")):
        with pytest.raises(ProfileError, match=message) as err:
            check_yaml_once(text)
        assert "\n" not in str(err.value) and "give each" in str(err.value)
    # papermill's options, long and short, and the value of -p (a name and a value) never read as an option
    args = ["in.ipynb", "out.ipynb", "-p", "x", "-y", "-ya: 1", "--parameters_yaml=b: 2", "--parameters_yaml",
            "c: 3", "-r", "y", "-f", "--cwd", "notebooks"]
    assert [t for _, t in _papermill_yaml(args)] == ["a: 1", "b: 2", "c: 3"]
    for bad in (["quick"], 3, None):
        for check in (PROFILES.check_chapter_profile, PROFILES.resolve):
            with pytest.raises(ProfileError, match=r"the parameter profile must be a profile's name, one of "
                                                   r"\['quick', 'reference'\].*got") as err:
                check(bad)
            assert "\n" not in str(err.value)


def test_a_chapter_started_by_papermill_rereads_its_yaml_from_the_papermill_process(tmp_path):
    """End to end through ``/proc``: a process started by one whose command line is papermill's (its kernel) is
    refused for ``-y`` or ``-f`` YAML that gives a key twice, in one line, and runs on with YAML that does not."""
    import sys

    script = tmp_path / "bin" / "papermill"  # stands for papermill: starts a kernel-like child, as papermill does
    script.parent.mkdir()
    script.write_text("import subprocess, sys\nsys.exit(subprocess.run([sys.executable, '-c', 'from "
                      "icdl.repro.parameters import papermill_yaml_once as f; f(); print(\"ran\")']).returncode)\n")
    (tmp_path / "params.yaml").write_text("overrides:\n  n: 8\n  n: 16\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}

    def run(*args):
        return subprocess.run([sys.executable, str(script), "in.ipynb", "out.ipynb", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=60)

    for args in (["-y", "overrides: {n: 8, n: 16}"], ["-f", "params.yaml"]):
        out = run(*args)
        assert out.returncode != 0 and "ran" not in out.stdout
        assert "ProfileError: the parameter overrides gives 'n' twice" in out.stderr, out.stderr
    out = run("-y", "overrides: {n: 8}", "-p", "profile", "quick")
    assert out.returncode == 0 and "ran" in out.stdout, out.stderr


class _Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs (not an Exception, so no handler cleans up)."""


def _save_killed_at(monkeypatch, ckpt, state, kill_at: int) -> None:
    """``save_checkpoint(ckpt, state)`` killed just before its ``kill_at``-th atomic rename."""
    from icdl.repro import checkpoints, files

    real, calls = files.os.replace, []

    def replace(src, dst):
        calls.append(dst)
        if len(calls) == kill_at:
            raise _Killed
        real(src, dst)

    with monkeypatch.context() as m:
        m.setattr(files.os, "replace", replace)
        with pytest.raises(_Killed):
            checkpoints.save_checkpoint(ckpt, state, command="c")


@pytest.mark.parametrize("kill_at", [1, 2, 3])
def test_a_checkpoint_save_killed_at_any_step_leaves_a_consistent_pair(tmp_path, monkeypatch, kill_at):
    """A save is three atomic renames (new file beside the old, its record, the new file in place); killed
    before any of them, the checkpoint loads -- as the old state or the new one, never "damaged" -- and the
    next save finishes or discards what was left and leaves no stray file."""
    import torch

    from icdl.repro import checkpoints

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    ckpt = tmp_path / "m.pt"
    checkpoints.save_checkpoint(ckpt, {"x": torch.tensor([1.0])}, command="c")
    _save_killed_at(monkeypatch, ckpt, {"x": torch.tensor([2.0])}, kill_at)
    assert float(checkpoints.load_checkpoint(ckpt)["x"]) in (1.0, 2.0)
    checkpoints.save_checkpoint(ckpt, {"x": torch.tensor([3.0])}, command="c")
    assert float(checkpoints.load_checkpoint(ckpt)["x"]) == 3.0
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("m.pt")) == ["m.pt", "m.pt.json"]


def test_a_first_save_killed_after_its_record_still_counts_as_a_checkpoint(tmp_path, monkeypatch):
    """Killed before the last rename of a first save, only ``<name>.pt.new`` and its record exist: the
    checkpoint exists (a resume must not start again from step 0), loads, and the next save promotes it."""
    import torch

    from icdl.repro import checkpoints

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    ckpt = tmp_path / "m.pt"
    _save_killed_at(monkeypatch, ckpt, {"x": torch.tensor([5.0])}, 3)
    assert not ckpt.exists() and checkpoints.checkpoint_exists(ckpt)
    assert float(checkpoints.load_checkpoint(ckpt)["x"]) == 5.0
    checkpoints.remove_checkpoint(ckpt)
    assert not checkpoints.checkpoint_exists(ckpt) and not list(tmp_path.glob("m.pt*"))


def test_no_half_saved_checkpoint_is_committed():
    """A ``*.pt.new`` is ignored by git while its record (committed) may describe it: none may be left."""
    root = Path(__file__).resolve().parents[1]
    assert not list((root / "results").rglob("*.pt.new"))


def test_write_errors_are_one_line_and_a_refused_file_chooses_no_command(tmp_path, monkeypatch):
    """A read-only folder is one ResultFileError naming it, the previous file intact; a damaged checkpoint's
    message suggests the caller's command, not one written in the refused file's record (whose author
    would otherwise choose what the user is told to run)."""
    import torch

    from icdl.repro import checkpoints, files, results

    monkeypatch.setenv("ICDL_ROOT", scratch_clone(tmp_path))
    folder = tmp_path / "ro"
    path = results.save_result(folder / "r.json", {"x": 1}, provenance=_prov())
    folder.chmod(0o500)
    try:
        with monkeypatch.context() as m:
            if os.access(folder, os.W_OK):  # root ignores the mode: simulate the full disk instead
                def full(*a, **k):
                    raise OSError(28, "No space left on device")
                m.setattr(files.tempfile, "mkstemp", full)
            with pytest.raises(ResultFileError, match=r"cannot write .*r\.json: .*the previous file is unchanged"):
                results.save_result(path, {"x": 2}, provenance=_prov())
    finally:
        folder.chmod(0o700)
    assert json.loads(path.read_text())["data"] == {"x": 1}
    ckpt = tmp_path / "m.pt"
    checkpoints.save_checkpoint(ckpt, {"x": torch.tensor([1.0])}, command="rm -rf / (from the file)")
    ckpt.write_bytes(ckpt.read_bytes()[:-5] + b"xxxxx")
    with pytest.raises(checkpoints.CheckpointError) as err:
        checkpoints.load_checkpoint(ckpt, command="python -m icdl.gpt_icl --profile reference --part main")
    assert "--part main" in str(err.value) and "rm -rf" not in str(err.value)


def test_a_quick_result_with_the_same_numbers_is_not_rewritten(tmp_path):
    """keep_if_same: the same data from the same command, profile and seed leave the file byte for byte (its
    provenance names the first run that produced them); a changed number, command or seed rewrites it."""
    path = tmp_path / "r.json"

    def prov(command="python -m x", seed=0, wall=1.0):
        return provenance(command=command, wall_time_s=wall, profile="quick", seed=seed)

    save_result(path, {"x": [1.0, 2.0]}, provenance=prov(wall=1.0), keep_if_same=True)
    first = path.read_bytes()
    save_result(path, {"x": [1.0, 2.0]}, provenance=prov(wall=9.0), keep_if_same=True)
    assert path.read_bytes() == first
    for data, p in (({"x": [1.0, 2.0000001]}, prov()), ({"x": [1.0, 2.0]}, prov(command="python -m y")),
                    ({"x": [1.0, 2.0]}, prov(seed=1))):
        save_result(path, data, provenance=p, keep_if_same=True)
        assert path.read_bytes() != first
        save_result(path, {"x": [1.0, 2.0]}, provenance=prov(), keep_if_same=False)
        first = path.read_bytes()
    path.write_text("{ damaged")  # a damaged file is replaced, never kept
    save_result(path, {"x": [1.0, 2.0]}, provenance=prov(), keep_if_same=True)
    assert load_result(path)["data"] == {"x": [1.0, 2.0]}


def test_a_kept_result_names_a_commit_of_this_history(tmp_path):
    """keep_if_same keeps a file's provenance only where its commit is one a reader can check out: made at an
    ancestor of today's commit it is kept; made at a commit since amended away (a dangling one: the bug that
    left a ledger naming a commit no fresh clone has) or with uncommitted edits, it is written anew."""
    from icdl.repro.commits import checkable

    def rev(name: str) -> str:
        return subprocess.run(["git", "rev-parse", name], capture_output=True, text=True, check=True).stdout.strip()

    head, parent, tree = rev("HEAD"), rev("HEAD~1"), rev("HEAD^{tree}")
    who = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    dangling = subprocess.run(["git", "commit-tree", tree, "-m", "amended away"], capture_output=True, text=True,
                              check=True, env={**os.environ, **who}).stdout.strip()
    assert checkable(parent, head) and checkable(head, head) and checkable(head + "+dirty", head + "+dirty")
    assert not checkable(dangling, head) and not checkable(parent + "+dirty", head)
    assert not checkable("unknown", head) and checkable(parent, head + "+dirty")

    path = tmp_path / "r.json"
    p = provenance(command="python -m x", wall_time_s=1.0, profile="quick", seed=0)
    for made, kept in ((parent, True), (dangling, False), (parent + "+dirty", False)):
        save_result(path, {"x": [1.0]}, provenance={**p, "git_commit": made})
        save_result(path, {"x": [1.0]}, provenance=p, keep_if_same=True)
        assert (load_result(path)["provenance"]["git_commit"] == made) is kept, made


def test_tables_for_readers_drop_the_row_numbers_and_name_their_columns():
    """What a chapter's DataFrame looks like in the book: no 0, 1, 2 column (the bug: a RangeIndex printed as a
    column of row numbers), snake_case result fields as words or math (``corr_inv_sigma_inv_V`` -> corr(1/σ,
    1/V)), a named index as a plain first column, a missing number as a dash (not NaN); an index of row labels
    and a pivot's header row are kept."""
    import numpy as np
    import pandas as pd

    from icdl.repro.chapter import GLUED, glued_html
    from icdl.repro.tables import frame_html

    html = frame_html(pd.DataFrame({"corr_inv_sigma_inv_V": [0.5, np.nan], "start_min": [1, 2], "N": [3, 4]}))
    assert "<th>corr(1/σ, 1/V)</th>" in html and "<th>start min</th>" not in html and "<th>start (min)</th>" in html
    assert "<th>0</th>" not in html and "NaN" not in html and "<td>—</td>" in html and "<th>N</th>" in html
    named = frame_html(pd.DataFrame({"r2": [0.9]}, index=pd.Index([50], name="N")))
    assert named.count("<tr") == 2 and "<th>N</th>" in named and "<th>R²</th>" in named  # one header row
    labels = frame_html(pd.DataFrame({"x": [1]}, index=["token 1"]))
    assert "<th>token 1</th>" in labels
    pivot = frame_html(pd.DataFrame([[1.0]], index=pd.Index([10], name="N"), columns=pd.Index([100.0], name="R")))
    # a pivot: one header row, each column naming its value of R (the bug: an empty row under R for N)
    assert "<th>R = 100</th>" in pivot and "<th>N</th>" in pivot and pivot.split("</thead>")[0].count("<tr") == 1
    # grouped columns (ours beside the paper's) with a named index: two header rows, not three (the bug: the
    # index name on a row of its own)
    part = pd.DataFrame({"test_mse": [0.1]}, index=pd.Index([1], name="run"))
    grouped = frame_html(pd.concat({"ours": part, "paper": part}, axis=1))
    assert grouped.split("</thead>")[0].count("<tr") == 2 and "<th>run</th>" in grouped
    # a formula in a header or cell is typeset; an unpaired dollar is refused, not shown as text
    maths = frame_html(pd.DataFrame({"D_j (ours)": ["$x < 1$"]}))
    assert r'<span class="math notranslate nohighlight">\(D_j\)</span> (ours)' in maths
    assert r"\(x &lt; 1\)" in maths and "$" not in maths
    with pytest.raises(ValueError, match="unpaired"):
        frame_html(pd.DataFrame({"a": ["costs $5"]}))
    # negative numbers with the prose's minus sign; a formula's own minus and an option's hyphens untouched
    signs = frame_html(pd.DataFrame({"gain": [-0.012], "rate": ["$H^{-1/2}$"], "cmd": ["--layers 4"]}))
    assert "<td>−0.012</td>" in signs and r"\(H^{-1/2}\)" in signs and "<td>--layers 4</td>" in signs
    # cells for readers: yes / no for a truth value, a whole-number float column as integers, no signed zero
    # (the bugs: "True", a step count printed "3600.0", a rounded −0.0004 printed "−0.0"); other floats untouched
    cells = frame_html(pd.DataFrame({"held": [True, False], "steps": [3600.0, np.nan], "gain": [-0.0, 0.25],
                                     "r2": [0.5, 1.0]}))
    assert "<td>yes</td>" in cells and "<td>no</td>" in cells and "True" not in cells
    assert "<td>3 600</td>" in cells and "3600" not in cells and "<td>—</td>" in cells
    assert "<td>0.00</td>" in cells and "−0" not in cells and "<td>0.25</td>" in cells and "<td>0.5</td>" in cells
    # whole numbers decided before rounding (0.9996 is not an exact 1), an infinity kept, nullable floats read,
    # a small negative rounded to zero shown without its sign
    edge = frame_html(pd.DataFrame({"near": [0.9996, 2.0001], "inf": [np.inf, 2.0], "gap": [-0.0004, 0.5],
                                    "nullable": pd.array([1.5, None], dtype="Float64")}), 2)
    assert "<td>1.0</td>" in edge and "<td>1</td>" not in edge and "<td>inf</td>" in edge and "−0" not in edge
    assert "<td>1.5</td>" in edge
    # a frame with named axes whose columns are not numbers is not taken for a pivot
    reset = pd.DataFrame({"depth": [3], "softmax": [0.9]}).rename_axis(columns="model")  # a pivot, reset
    assert "<th>model</th>" not in frame_html(reset) and frame_html(reset).split("</thead>")[0].count("<tr") == 1
    named = pd.DataFrame([[1.0]], index=pd.Index(["a"], name="row"), columns=pd.Index(["x"], name="kind"))
    assert "kind = x" not in frame_html(named)
    # a column of one value (the bug: a "within" column reading yes in every row) is said once under the
    # table; a pivot's columns, a two-row table and a table of constants only are left as they are
    same = frame_html(pd.DataFrame({"H": [1, 2, 4], "within": [True] * 3, "step": [0.0602] * 3,
                                    "err": [1.5, 2.5, 3.5]}))
    assert "<th>within</th>" not in same and "<th>step</th>" not in same and "<th>err</th>" in same
    assert 'Same in every row — within: yes; step: 0.0602.' in same
    two = frame_html(pd.DataFrame({"H": [1, 2], "within": [True] * 2}))  # two rows alike: said once too
    assert "<th>within</th>" not in two and "Same in every row — within: yes." in two
    assert "<th>within</th>" in frame_html(pd.DataFrame({"H": [1], "within": [True]}))  # one row: its content
    assert "<th>a</th>" in frame_html(pd.DataFrame({"a": [1] * 3, "b": [2] * 3}))
    wide = frame_html(pd.DataFrame([["ridge", "ridge"]] * 3, index=pd.Index([3, 4, 6], name="depth"),
                                   columns=pd.Index([11, 40], name="k")))
    assert "<th>k = 11</th>" in wide and "Same in every row" not in wide
    # a pivot's headers in one notation (the bug: "ε goal = 1e-5 | 0.0001 | 0.001" in relu_sums)
    goals = frame_html(pd.DataFrame([[1.0, 2.0, 3.0]], index=pd.Index(["tanh"], name="target"),
                                    columns=pd.Index([1e-5, 1e-4, 1e-3], name="eps goal")))
    assert all(f"= {g}</th>" in goals for g in ("1e-5", "1e-4", "1e-3")), goals
    # counts with the prose's thousands space from 1 000 on (the bug: softmax's "3002" in one table beside
    # "3 002" in the next, whose column reached 10 000), in cells, a pivot's headers and a named index alike;
    # a column of seeds is labels, not counts
    counts = frame_html(pd.DataFrame({"params": [3002, 7178], "mse": [0.5, 0.25], "seed": [1234, 1235]},
                                     index=pd.Index([1000, 2000], name="N")))
    assert "<td>3 002</td>" in counts and "3002" not in counts and "<td>1 000</td>" in counts
    assert "<td>1234</td>" in counts
    assert "<th>R = 1 000</th>" in frame_html(pd.DataFrame([[1.0]], index=pd.Index([10], name="N"),
                                                          columns=pd.Index([1000.0], name="R")))
    # a small value is not rounded away when it matters beside its column (the bug: an ℓ1 strength of 1e-5
    # printed "0.0000" beside 1e-4 and 1e-3); round-off beside large values still reads as 0
    small = frame_html(pd.DataFrame({"l1": [1e-5, 1e-4, 1e-3], "mse": [8.1e-4, 1.3e-3, 5.1e-3]}), 4)
    assert "<td>1e-5</td>" in small and "<td>1e-3</td>" in small and "0.0000" not in small
    assert "<td>0.0051</td>" in small  # no value of its own rounds to zero: decimals as asked
    assert "<td>0.0</td>" in frame_html(pd.DataFrame({"gap": [1e-9, 0.5]}), 2)  # as pandas prints a zero
    # row numbers left by a sort or a filter are no index either (the bug: a column 28, 30, 31, 29 in
    # lsa_training); a Series is a one-column table (the bug: "Name: slope, dtype: float64")
    sorted_rows = frame_html(pd.DataFrame({"cell": ["(1, 51)", "(3, 51)"]}, index=[28, 30]))
    assert "<th>28</th>" not in sorted_rows and "<td>(1, 51)</td>" in sorted_rows
    from icdl.repro.tables import series_html
    series = series_html(pd.Series({"tanh": -2.04, "relu": -1.96}, name="slope"), 1)
    assert "<th>slope</th>" in series and "<th>tanh</th>" in series and "<td>−2.0</td>" in series
    assert "dtype" not in series
    # what JupyterLab shows in place of glued values: the box and each name with its value
    GLUED.clear()
    box = type("Box", (), {"data": '<p class="status-pass">x</p>'})()
    GLUED.update({"depth_min_gain": "+0.012", "claims_box": box})
    shown = glued_html()
    assert '<p class="status-pass">x</p>' in shown and "<td><code>depth_min_gain</code></td><td>+0.012</td>" in shown
    GLUED.clear()


def test_a_provenance_block_fits_the_column_and_pastes_as_the_command():
    """A long command and hardware line are broken to the book's width (a 90-character line scrolled inside
    its box, hiding the end of the command), the command broken only before an option and with a backslash,
    so that the lines pasted into a shell are the command itself (a dropped or doubled option would differ);
    one thread is "1 torch thread"."""
    import shlex

    from icdl.repro.results import PROVENANCE_WIDTH, provenance_block

    command = ("python -m icdl.gpt_icl --profile reference --part depth --layers 10 --workers 2 "
               "--set steps=6500 --set relu_steps=2500")
    prov = {"command": command, "git_commit": "0123456789abcdef", "profile": "reference", "seed": 7,
            "hardware": "Linux x86_64, 2 CPUs, 1 torch threads, python 3.11.7, torch 2.13.0+cpu, NVIDIA H200",
            "wall_time_s": 4000.0, "created": "2026-12-01T00:00:00+00:00"}
    lines = provenance_block("results/x.json", prov).splitlines()
    assert max(map(len, lines)) <= PROVENANCE_WIDTH < len(command)
    start = next(i for i, ln in enumerate(lines) if ln.startswith("  command:"))
    end = next(i for i in range(start, len(lines)) if not lines[i].endswith("\\"))
    pasted = " ".join(ln.split("command:", 1)[-1].strip().rstrip("\\") for ln in lines[start:end + 1])
    assert shlex.split(pasted) == shlex.split(command)
    text = "\n".join(lines)
    assert "1 torch thread," in text and "torch threads" not in text and "NVIDIA H200" in text
    assert "0123456789ab" in text and "(seed 7)" in text and "67 min" in text


def test_glued_numbers_carry_a_minus_sign_not_a_hyphen():
    """The prose's negative numbers match the tables' (−0.012, a minus sign; the bug: "-0.012 to -0.005" in the
    text beside "−0.012" in the table under it); exponents, options and ranges keep their hyphens."""
    from icdl.repro.typeset import typeset_minus

    assert typeset_minus("-0.012 to -0.005 (-.5)") == "−0.012 to −0.005 (−.5)"
    for kept in ("1e-12", "--layers 4", "-m icdl", "x-1", "N(0, I)-prompts"):
        assert typeset_minus(kept) == kept
    # a small negative number rounded to zero keeps its sign: an interval's end below 0 (the bug: "(0.000 to
    # +0.007)" for a straddling interval, its straddle hidden)
    assert typeset_minus("(-0.000 to +0.004), -0.0001") == "(−0.000 to +0.004), −0.0001"


def _committed_results():
    import importlib

    for package in ("icdl.gpt_icl", "icdl.lsa", "icdl.studies"):
        importlib.import_module(package)  # each package registers the shapes of its result files on import

    root = Path(__file__).resolve().parents[1] / "results"
    units = root.glob("*/checkpoints/*/*.json")  # a unit's scores beside its checkpoints (gpt_depth's score files)
    return sorted(p for p in (*root.glob("*/*.json"), *units) if p.parent.name not in ("ledger", "mutation")
                  and not p.name.endswith(".pt.json"))


def test_every_committed_result_has_a_registered_shape_and_fits_it():
    """A result kind without a registered shape would be read unchecked: each committed result file has one
    (icdl.repro.schema) and loads under it."""
    from icdl.repro import schema

    files = _committed_results()
    assert len(files) >= 15
    for p in files:
        assert schema.shape_of(p) is not None, f"{p}: register its shape with icdl.repro.schema.register"
        load_result(p)


@pytest.mark.parametrize("path", _committed_results(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_field_of_a_committed_result_emptied_or_retyped_is_refused_naming_it(tmp_path, path):
    """Every field a chapter reads, removed, emptied (a table of no rows: the chapter then failed with
    ``KeyError: 'attention'``) or given a value of another kind (``method = 5``), is refused at load in one
    line naming the file and the field -- before a chapter reads it or a command copies it into another
    result (``python -m icdl.lsa`` copied a damaged benchmark); an optional field (gpt_depth's ``blocks``) may be
    absent but is refused when it holds another kind (the survivor: a check that skipped the optional fields)."""
    from icdl.repro import schema

    obj = json.loads(path.read_text())
    shape = schema.shape_of(path)
    copy = tmp_path / path.relative_to(Path(__file__).resolve().parents[1] / "results")  # chapter/…/name
    copy.parent.mkdir(parents=True)
    for name, kind in shape.fields.items():
        emptied = [] if isinstance(kind, (schema.List, schema.Rows)) else {} if not isinstance(kind, schema.Kind) \
            else None
        retyped = 5 if kind is not schema.NUMBER and kind is not schema.INTEGER else "5"
        for bad in ({k: v for k, v in obj["data"].items() if k != name}, {**obj["data"], name: emptied},
                    {**obj["data"], name: retyped}):
            if getattr(kind, "min_rows", 1) == 0 and bad.get(name) == {}:
                continue  # a table that may be empty (a run too short for a trend)
            copy.write_text(json.dumps({**obj, "data": bad}))
            with pytest.raises(ResultFileError, match=rf"{re.escape(str(copy))}: data\.{re.escape(name)}") as err:
                load_result(copy)
            assert "\n" not in str(err.value)
        if isinstance(kind, schema.Table) and kind.min_rows:  # every column kept, every row removed
            rowless = {c: [] for c in obj["data"][name]}
            copy.write_text(json.dumps({**obj, "data": {**obj["data"], name: rowless}}))
            with pytest.raises(ResultFileError, match=rf"data\.{re.escape(name)} has 0 row\(s\)"):
                load_result(copy)
        if isinstance(kind, schema.Table):  # a required column dropped, and a text column given numbers
            for col in (*kind.text, *kind.numbers)[:2]:
                table = {c: v for c, v in obj["data"][name].items() if c != col}
                copy.write_text(json.dumps({**obj, "data": {**obj["data"], name: table}}))
                with pytest.raises(ResultFileError, match=re.escape(col)):
                    load_result(copy)
            for col in [c for c in kind.text[:1] if obj["data"][name][c]]:
                table = {**obj["data"][name], col: [5] * len(obj["data"][name][col])}
                copy.write_text(json.dumps({**obj, "data": {**obj["data"], name: table}}))
                message = rf"{re.escape(name)}\.{re.escape(col)}\[0\] must be a string"
                with pytest.raises(ResultFileError, match=message):
                    load_result(copy)
    for name, kind in shape.optional.items():  # an optional field may be absent, but never of another kind
        if name not in obj["data"]:
            continue
        retyped = 5 if kind is not schema.NUMBER and kind is not schema.INTEGER else "5"
        copy.write_text(json.dumps({**obj, "data": {**obj["data"], name: retyped}}))
        with pytest.raises(ResultFileError, match=rf"{re.escape(str(copy))}: data\.{re.escape(name)}"):
            load_result(copy)
        copy.write_text(json.dumps({**obj, "data": {k: v for k, v in obj["data"].items() if k != name}}))
        load_result(copy)  # absent: allowed
    copy.write_text(path.read_text())
    load_result(copy)  # and the untouched copy loads


def _sample(kind):
    """A smallest value that fits ``kind`` (icdl.repro.schema), built from the shape alone."""
    from icdl.repro import schema

    simple = {schema.NUMBER: 1.5, schema.INTEGER: 1, schema.FLAG: True, schema.TEXT: "a",
              schema.MAYBE_NUMBER: None, schema.ANY: None, schema.FINITE: 1.5, schema.SQUARES: 1.5}
    if isinstance(kind, schema.Kind):
        return simple[kind]
    if isinstance(kind, schema.List):
        return [_sample(kind.kind)] * (kind.length or max(kind.min_len, 1))
    if isinstance(kind, schema.Table):
        rows = max(kind.min_rows, 1)
        return {**{c: ["a"] * rows for c in kind.text}, **{c: [1.5] * rows for c in kind.numbers},
                **{c: [True] * rows for c in kind.flags}}
    if isinstance(kind, schema.Rows):
        return [_sample(schema.Fields(kind.fields))] * max(kind.min_rows, 1)
    if isinstance(kind, schema.Fields):
        return {k: _sample(v) for k, v in kind.fields.items()}
    if isinstance(kind, schema.Keyed):
        return {f"k{i}": _sample(kind.kind) for i in range(max(kind.min_len, 1))}
    raise AssertionError(f"no sample for the kind {kind!r}: teach _sample it")


def _wrong(kind):
    """A value of another kind than ``kind``."""
    from icdl.repro import schema

    return "5" if kind in (schema.NUMBER, schema.INTEGER, schema.MAYBE_NUMBER, schema.FINITE, schema.SQUARES) else 5


def test_every_optional_field_of_every_registered_shape_is_checked_for_its_kind(tmp_path):
    """Each optional field of every registered shape (gpt_depth's ``blocks``, ``labels``, ``models``,
    gpt_mechanism's ``blocks``, and any registered later) may be absent, but when present is checked like a
    required field: a number where rows are meant is refused in one line naming the file and the field (the bug:
    the check skipped the optional fields' kinds, and ``blocks = 5`` loaded). Built from the shapes themselves, so
    an optional field no committed result holds yet is covered too."""
    from icdl.repro import schema

    _committed_results()  # imports every package, which registers its shapes
    optional = [(key, name, kind) for key, shape in schema.SCHEMAS.items() for name, kind in shape.optional.items()]
    assert {("gpt_depth", "depth", n) for n in ("blocks", "labels", "models")} | {
        ("gpt_mechanism", "mechanism", "blocks")} <= {(*key, name) for key, name, _ in optional}
    for (chapter, stem), name, kind in optional:
        shape = schema.SCHEMAS[(chapter, stem)]
        data = _sample(shape)
        path = tmp_path / chapter / f"{stem}.quick.json"
        if stem.startswith("checkpoints/"):  # a unit's file: <chapter>/checkpoints/<profile>/<kind>_<unit>.json
            path = tmp_path / chapter / "checkpoints" / "quick" / f"{stem.split('/', 1)[1]}_unit.json"
        assert schema.shape_of(path) is shape, path
        schema.check(path, data)  # absent: allowed
        schema.check(path, {**data, name: _sample(kind)})  # present and of its kind: allowed
        for bad in (_wrong(kind), [] if isinstance(kind, (schema.List, schema.Rows)) else None):
            if bad is None or (bad == [] and getattr(kind, "min_rows", getattr(kind, "min_len", 1)) == 0):
                continue
            with pytest.raises(schema.SchemaError, match=rf"{re.escape(str(path))}: data\.{re.escape(name)}") as err:
                schema.check(path, {**data, name: bad})
            assert "\n" not in str(err.value)


_ROOT = Path(__file__).resolve().parents[1]
_SCORE = "gpt_depth/checkpoints/reference/score_L4_seed0.json"  # one unit's scores, read into depth.reference.json


def _set(field, row, column, i, value):
    """An edit of a result's ``data``: ``data[field][row][column][i] = value``."""
    return lambda d: d[field][row][column].__setitem__(i, value)


@pytest.mark.parametrize("committed, edit, message", [
    pytest.param(_SCORE, _set("blocks", 0, "sse", 5, None),
                 r"data\.blocks\[0\]\.sse\[5\] must be a finite number >= 0, got None", id="score-null"),
    pytest.param(_SCORE, lambda d: d["blocks"][2]["sse"].pop(),
                 r"data\.blocks\[2\]\.sse must hold 32 values \(one per block of prompts\), got 31",
                 id="score-block-short"),
    pytest.param("gpt_depth/depth.reference.json", _set("blocks", 3, "sse", 0, float("nan")),
                 r"data\.blocks\[3\]\.sse\[0\] must be a finite number >= 0, got nan", id="depth-nan"),
    pytest.param("gpt_depth/depth.reference.json", _set("labels", 0, "n", 1, -128.0),
                 r"data\.labels\[0\]\.n\[1\] must be a finite number >= 0, got -128\.0", id="depth-negative-count"),
    pytest.param("gpt_icl/shift.reference.json", _set("blocks", 0, "sse", 0, -1e-3),
                 r"data\.blocks\[0\]\.sse\[0\] must be a finite number >= 0, got -0\.001", id="shift-negative-sse"),
    pytest.param("gpt_icl/shift.reference.json", _set("labels", 0, "sy", 0, float("inf")),
                 r"data\.labels\[0\]\.sy\[0\] must be a finite number, got inf", id="shift-infinite-sum"),
    pytest.param("gpt_mechanism/mechanism.control.json", lambda d: d["blocks"]["pred"].__setitem__(7, -2.0),
                 r"data\.blocks\.pred\[7\] must be a finite number >= 0, got -2\.0", id="mechanism-negative-pred"),
])
def test_a_sum_of_squares_that_is_nan_negative_or_a_block_short_is_refused_naming_the_file(tmp_path, committed, edit,
                                                                                           message):
    """The sums per block of prompts every interval is computed from (a squared error, the prompts of a block, the
    labels' sums; the mechanism's squared differences) are finite, the squared ones never negative, and a unit's
    score file holds one per block of the design (the probe: a NaN, a negative ``sse`` and a list one block short
    loaded, and a negative squared error passes for a very good model): each edit is refused at load in one line
    naming the file and the value."""
    path = tmp_path / committed
    path.parent.mkdir(parents=True)
    obj = json.loads((_ROOT / "results" / committed).read_text())
    edit(obj["data"])
    path.write_text(json.dumps(obj))
    with pytest.raises(ResultFileError, match=rf"{re.escape(str(path))}: {message}") as err:
        load_result(path)
    assert "\n" not in str(err.value)


def test_an_optional_field_nested_in_an_object_is_checked_for_its_kind():
    """The same rule one level down: ``Fields(..., optional=...)`` inside a shape refuses an optional field of
    another kind and accepts it absent."""
    from icdl.repro import schema

    inner = schema.Fields({"seed": schema.INTEGER}, optional={"rows": schema.Rows({"r2": schema.NUMBER})})
    inner.check({"seed": 1}, "data.settings")
    inner.check({"seed": 1, "rows": [{"r2": 0.5}]}, "data.settings")
    for bad, message in ((5, r"data\.settings\.rows must be a list"),
                         ([{"r2": "x"}], r"rows\[0\]\.r2 must be a number")):
        with pytest.raises(schema.SchemaError, match=message):
            inner.check({"seed": 1, "rows": bad}, "data.settings")


def test_a_null_in_a_number_column_is_refused_unless_the_column_is_nullable():
    """JSON's ``null`` is not a number: a table's number column (and a number field, a list of numbers, a row's
    number) holding one is refused naming the cell, and only a column declared ``nullable`` (a step at which a run
    never left the plateau) takes it (the survivor: a dropped None check let a ``null`` r² load, where the tests
    above fed only strings); NaN, which ``NUMBER`` allows, still loads."""
    from icdl.repro import schema

    table = schema.Table(text=("attention",), numbers=("r2", "left_at_step"), nullable=("left_at_step",))
    good = json.loads('{"attention": ["softmax", "linear"], "r2": [0.9, NaN], "left_at_step": [120, null]}')
    table.check(good, "data.table")  # null in the nullable column, NaN in a number column: allowed
    bad = json.loads('{"attention": ["softmax", "linear"], "r2": [0.9, null], "left_at_step": [120, 80]}')
    with pytest.raises(schema.SchemaError, match=r"data\.table\.r2\[1\] must be a number, got None"):
        table.check(bad, "data.table")
    shape = schema.Fields({"seconds": schema.NUMBER, "seed": schema.INTEGER, "r2": schema.List(schema.NUMBER),
                           "rows": schema.Rows({"r2": schema.NUMBER})})
    fine = {"seconds": 1.5, "seed": 0, "r2": [0.5], "rows": [{"r2": 0.5}]}
    shape.check(fine, "data")
    for name, value, where in (("seconds", None, r"data\.seconds"), ("seed", None, r"data\.seed"),
                               ("r2", [0.5, None], r"data\.r2\[1\]"), ("rows", [{"r2": None}], r"data\.rows\[0\]\.r2")):
        with pytest.raises(schema.SchemaError, match=where + r" must be an? (number|integer), got None"):
            shape.check({**fine, name: value}, "data")


def test_counts_and_powers_of_ten_as_the_prose_writes_them():
    """``count``: a space between thousands (the bug: "10,000" beside "6 500"), a float step count whole;
    ``sci``: plain between 0.1 and 10 000, from 1 000 on with the count's space (the bugs: "4.0e+00", "1167.2"),
    otherwise a power of ten with a minus sign,
    on both sides of each edge."""
    from icdl.repro.typeset import count, sci

    assert count(10000) == "10 000" and count(3600.0) == "3 600" and count(999) == "999" and count(158209) == "158 209"
    assert sci(4.0) == "4.0" and sci(0.1) == "0.1" and sci(9999.0, 0) == "9 999" and sci(999.0, 0) == "999"
    assert sci(1167.2) == "1 167.2" and sci(-1167.2) == "−1 167.2"  # the bug: "1167.2" beside "8 192"
    assert sci(0.0999) == "1.0 × 10⁻¹" and sci(2.1e-3) == "2.1 × 10⁻³" and sci(1e4, 0) == "1 × 10⁴"
    assert sci(-2.12e-5, 2) == "−2.12 × 10⁻⁵" and sci(-4.0) == "−4.0" and sci(0.0) == "0"


def test_large_counts_in_tables_are_set_apart_as_in_the_prose():
    """A column of whole numbers reaching 10 000 reads 232 741 080, as ledger.count writes it in the prose (the
    bug: "232741080" in the FLOPs table beside "26 000" in the text); smaller counts and fractions are left as
    they were, and a pivot's header reads "R = 100 000"."""
    import pandas as pd

    from icdl.repro.tables import frame_html

    t = frame_html(pd.DataFrame({"eps": [0.1, 0.01], "flops": [232741080, 5000], "steps": [26000.0, 6500.0],
                                 "small": [12, 13], "x": [0.5, 1.25]}))
    assert "<td>232 741 080</td>" in t and "<td>5 000</td>" in t and "<td>26 000</td>" in t
    assert "<td>12</td>" in t and "<td>1.25</td>" in t
    pivot = frame_html(pd.DataFrame([[1.0, 2.0]], index=pd.Index([50], name="N"),
                                    columns=pd.Index([100.0, 100000.0], name="R")))
    assert "<th>R = 100</th>" in pivot and "<th>R = 100 000</th>" in pivot


def test_a_column_written_in_e_notation_reads_in_one_form():
    """A column a chapter formatted with "{:.1e}" shows every cell as a power of ten (the bug: the prose's rule for a
    single number, applied cell by cell, wrote 0.72 beside 4.0e-2 and 2.5e-3 in one column); its sign is a minus
    sign and its digits are kept; a column holding other text as well is left as it is, and so is a lone
    e-number in prose-like cells."""
    import pandas as pd

    from icdl.repro.tables import frame_html

    t = frame_html(pd.DataFrame({"H": [10, 100, 1000], "eta_eps": ["7.2e-01", "4.0e-02", "-2.5e-03"],
                                 "big": ["1.0e+04", "3.0e+00", "5.5e+12"], "note": ["a", "1e-03", "b"]}))
    assert "<td>7.2 × 10⁻¹</td>" in t and "<td>4.0 × 10⁻²</td>" in t and "<td>−2.5 × 10⁻³</td>" in t
    assert "<td>1.0 × 10⁴</td>" in t and "<td>3.0</td>" in t and "<td>5.5 × 10¹²</td>" in t  # no "× 10⁰"
    assert "<td>0.72</td>" not in t and "<td>1e-3</td>" in t  # the mixed column: the prose's rule, cell by cell
    # every value ordinary (0.01 to 9 999): plain decimals with the digits given, never "× 10⁰" (the bug: a
    # reader met 3.0 × 10⁰ and 4.0 × 10⁻² in a column of ordinary numbers); one value past the range: powers again
    plain_col = frame_html(pd.DataFrame({"a": ["7.2e-01", "4.0e-02", "-3.0e+00", "1.25e+03"]}))
    assert all(f"<td>{v}</td>" in plain_col for v in ("0.72", "0.040", "−3.0", "1 250"))  # a count's space
    assert "× 10" not in plain_col
    assert "<td>7.2 × 10⁻¹</td>" in frame_html(pd.DataFrame({"a": ["7.2e-01", "4.0e-03"]}))


def test_the_books_number_formats_for_settings_shares_ranges_and_commands():
    """The shared formatters behind the prose's numbers (icdl.repro.ledger): a small setting as ``1e-5``, and any
    e-notation shown with its exponent unpadded (the bug: ``1e-05`` beside the text's ``1e-5``); a share as
    ``52 %`` (the bug: ``52%`` beside the book's ``90 %``); a range whose ends print alike never as
    ``0.24–0.24`` (the bug: diffusion_score's transformer errors); and a
    command glued into the prose as markdown with its options as code (the bug: ``--part`` typeset as
    ``–part`` by the typographer in computation's glued text)."""
    import IPython.core.formatters as formatters
    import pandas as pd

    from icdl.repro.chapter import GLUED, Commands, glue, glued_html
    from icdl.repro.tables import frame_html
    from icdl.repro.typeset import (
        commands_as_code,
        fixed,
        math_html,
        named_attentions,
        percent,
        plain,
        short_exponents,
        span,
    )

    assert plain(1e-5) == "1e-5" and plain(2.5e-7) == "2.5e-7" and plain(0.001) == "0.001" and plain(1e5) == "100000"
    assert plain(0.000985, 3) == "0.000985"
    # one e-notation in the prose, the tables and the claims boxes: the exponent unpadded, a hash untouched
    assert short_exponents("error 1e-05, 1.0e-03 and 5e+06 at commit a13e05b") == (
        "error 1e-5, 1.0e-3 and 5e6 at commit a13e05b")
    # a number that needs no exponent is written plainly, with the digits it was given (the bug: "8e0, 2e1, 8e-1"
    # in a column of bounds); the powers beyond keep theirs
    assert short_exponents("8e+00, 8.2e+00, 2e+01, 8e-01, 9.9e-02, 1.2e+03") == "8, 8.2, 20, 0.8, 9.9e-2, 1.2e3"
    # a table's column of such numbers in one form, each a power of ten (test_a_column_written_in_e_notation_...)
    assert "<td>1.0 × 10⁻³</td>" in frame_html(pd.DataFrame({"eps": ["1.0e-03", "2.0e-04"]}))
    assert math_html("max deviation 1e-05") == "max deviation 1e-5"
    # the claims boxes, the report and the glance hold a range's ends together too (the bug: "0.41–" above "0.87")
    assert math_html("error/bound 0.41–0.87, −0.042 to 0.029") == (
        "error/bound 0.41–\u20600.87, −0.042\u00a0to\u00a00.029")
    assert percent(0.52) == "52 %" and percent(0.015, 1) == "1.5 %"
    assert span([0.2412, 0.2444], ".2f", widen=1) == "0.241–0.244"  # one more digit tells them apart
    assert span([0.24, 0.24], ".2f", widen=1) == "0.24"  # alike however printed: one value
    assert [fixed(v, "+.3f") for v in (-0.0001, 0.0001, 0.0, -0.006)] == ["0.000", "0.000", "0.000", "-0.006"]
    assert span([0.031, 0.052], ".3f") == "0.031–0.052" and span([-0.2, 0.1], ".1f") == "-0.2 to 0.1"
    # a range in a table cell stays on one line (the bug: "0.097 (0.048 to" above "0.147)" at 1280 px)
    held = frame_html(pd.DataFrame({"lead": ["0.097 (0.048 to 0.147)", "0.03–0.10"], "note": ["from a to b", "x"]}))
    assert "0.048\u00a0to\u00a00.147" in held and "0.03–\u20600.10" in held and "from a to b" in held
    # by design the number over its interval, never a break inside the interval (and signed ends, shares held too)
    assert '<td>0.097<br><span class="interval">(0.048\u00a0to\u00a00.147)</span></td>' in held
    signed = frame_html(pd.DataFrame({"a": ["+0.434 (+0.341 to +0.522)", "49 % (48 %–50 %)"]}))
    assert "+0.341\u00a0to\u00a0+0.522" in signed and "48 %–\u206050 %" in signed
    # an attention by its name, not its key (the bug: "depth 3 relu: 0.051" in the claims boxes, read as a
    # variable), in the boxes, the tables and the report alike; code, commands, paths and identifiers keep the key
    assert math_html("depth 3 relu: 0.051; relu @15 (relu, softmax)") == "depth 3 ReLU: 0.051; ReLU @15 (ReLU, softmax)"
    assert "<td>ReLU</td>" in frame_html(pd.DataFrame({"attention": ["relu", "softmax"], "r2": [0.9, 0.8]}))
    # the package's code by its dotted name a link to its source (the bug: "validated by icdl.prompts" as words)
    assert math_html("validated by icdl.prompts (shape)") == (
        'validated by <a class="code-link" data-code="icdl.prompts"><code>icdl.prompts</code></a> (shape)')
    assert "code-link" not in math_html("src/icdl.x, my_icdl.y, `icdl.z`")  # a path, another name, code already
    for kept in ("--attention relu", "gpt_relu_depth3", "icdl.relu_sums", "relu(x)", "attention=relu", "relu.pt",
                 "results/relu/x", "`relu`"):
        assert named_attentions(kept) == kept, kept
    assert commands_as_code("trained by --part depth --layers L --seeds S, then --part main") == (
        "trained by `--part depth --layers L --seeds S`, then `--part main`")
    assert commands_as_code("(python -m icdl.gpt_icl --profile n01 --part main) is not") == (
        "(`python -m icdl.gpt_icl --profile n01 --part main`) is not")
    assert commands_as_code("an ℓ1 of 1e-5 -- and a dash") == "an ℓ1 of 1e-5 -- and a dash"  # prose's -- left
    bundle, _ = formatters.format_display_data(Commands("by --part main --seeds S, then"))
    assert bundle["text/markdown"] == "by `--part main --seeds S`, then" and "--part" in bundle["text/plain"]
    GLUED.clear()
    glue(spread="0.238–0.242, target depth 6, relu, at -0.5")  # the prose's glued words as the tables write them
    assert GLUED["spread"] == "0.238–\u20600.242, target depth 6, ReLU, at −0.5"
    GLUED.clear()
    GLUED["reruns"] = Commands("by --part main")
    assert "<code>--part main</code>" in glued_html()
    GLUED.clear()


def test_a_glued_command_is_quoted_as_markdown_in_the_prose():
    """A glued value that holds a command (``--part``, ``python -m``) is quoted in the prose with ``{glue:md}``,
    which shows the command as code; ``{glue:text}`` would print its ``--`` as an en dash. Checked on the
    committed notebooks' glued values."""
    import re

    import nbformat

    from icdl.repro.execute import chapters
    from icdl.repro.typeset import COMMAND

    root = Path(__file__).resolve().parents[1]
    found = []
    for name in chapters(root):
        src = (root / "notebooks" / f"{name}.py").read_text(encoding="utf-8")
        nb = nbformat.read(root / "notebooks" / f"{name}.ipynb", as_version=4)
        for c in nb.cells:
            for o in c.get("outputs", []):
                key = o.get("metadata", {}).get("scrapbook", {}).get("name")
                text = str(o.get("data", {}).get("application/papermill.record/text/plain", ""))
                if key and re.search(COMMAND, text) and f"{{glue:text}}`{key}`" in src:
                    found.append(f"{name}: {key}")
    assert not found, "quote these with {glue:md}: " + ", ".join(found)


def test_a_checkpoint_record_names_its_profile_seed_and_training_time(tmp_path):
    """A checkpoint's record carries the provenance a result has: the profile its command names, the training
    seed and the training time so far (the bug: every GPT checkpoint recorded with an empty profile, no seed and
    a wall time of 0, so a committed model did not say which run of which profile it was)."""
    from icdl.repro.checkpoints import checkpoint_record, save_checkpoint

    path = tmp_path / "model.pt"
    save_checkpoint(path, {"settings": {}, "model": {}}, command="python -m icdl.gpt_icl --profile n01 --part main",
                    seed=2, wall_time_s=123.4)
    prov = load_result(checkpoint_record(path))["provenance"]
    assert (prov["profile"], prov["seed"], prov["wall_time_s"]) == ("n01", 2, pytest.approx(123.4))
    save_checkpoint(path, {"settings": {}, "model": {}}, command="the training command", seed=None)
    prov = load_result(checkpoint_record(path))["provenance"]
    assert prov["profile"] == "" and prov["seed"] is None


def test_a_result_that_assembles_trained_models_names_their_training_beside_its_wall_time():
    """A result whose models earlier calls trained (``data.training``, a row per model with its seconds) shows that
    training beside the command's own wall time (the bug: gpt_depth's reference printed "wall time: 5 s" for models
    that took six core-hours); a result without it shows its wall time alone, unqualified."""
    from icdl.repro.results import provenance_block, trained_seconds

    prov = {"command": "python -m icdl.gpt_icl --profile reference --part depth", "git_commit": "3d464febe7774b4f",
            "profile": "reference", "seed": 0, "hardware": "Linux x86_64, 2 CPUs", "wall_time_s": 4.6,
            "created": "2026-12-03T07:12:29+00:00"}
    data = {"training": {"n_layer": [4, 8], "seconds": [20000.0, 2380.0]}}
    assert trained_seconds(data) == (22380.0, 2)
    block = provenance_block("results/x.json", prov, trained_seconds(data))
    assert "wall time: 5 s (this command's own)" in block and "training:  6.2 h of one core, its 2 models" in block
    plain = provenance_block("results/x.json", prov, trained_seconds({"seconds": 4.6}))
    assert "wall time: 5 s\n" in plain and "training" not in plain
    assert trained_seconds({"training": {"seconds": []}}) is None


def test_a_result_assembled_from_kept_units_names_their_measuring_beside_its_wall_time():
    """The mechanism's seeds-n01 result was assembled in 0.4 s from three units measured by earlier calls over 2.5
    core-hours (``data.seconds``): its provenance names both (the bug: "wall time: 0 s"); a result measured by
    the call that wrote it (seconds about its wall time) shows its wall time alone."""
    from icdl.repro.results import earlier_seconds, provenance_block

    prov = {"command": "python -m icdl.gpt_icl.mechanism --profile seeds-n01", "git_commit": "2724e0d0de60324f",
            "profile": "seeds-n01", "seed": 0, "hardware": "Linux x86_64, 2 CPUs", "wall_time_s": 0.417,
            "created": "2026-12-05T09:19:28+00:00"}
    assert earlier_seconds({"seconds": 8980.4}, 0.417) == pytest.approx(8980.4)
    block = provenance_block("results/x.json", prov, None, earlier_seconds({"seconds": 8980.4}, 0.417))
    assert "wall time: 0 s (this command's own)" in block and "measured:  2.5 h of one core" in block
    assert earlier_seconds({"seconds": 4100.0}, 4178.5) is None  # measured in the call itself
    assert earlier_seconds({"seconds": True}, 0.1) is None and earlier_seconds({}, 0.1) is None
    assert "measured" not in provenance_block("results/x.json", prov, None, None)


def test_a_learning_rate_is_written_one_way():
    """``typeset.rate``: every learning rate in e-notation with its short exponent and no trailing zeros (the bug:
    "lr 0.0001" in a legend beside "lr 1e-4" in the prose); the chapters' settings tables write ``lr`` so too."""
    from icdl.repro.typeset import rate

    assert [rate(x) for x in (1e-4, 3e-4, 2.5e-4, 1e-3, 5e-3)] == ["1e-4", "3e-4", "2.5e-4", "1e-3", "5e-3"]


def test_a_criterion_writes_its_comparison_as_the_prose_does():
    """``typeset.relation``: ≥ and ≤ in the criteria a judge writes (the bug: "query ratio >= 10" and ">= 15 %" in the
    claims boxes beside the prose's ≥); the strict comparisons as they are."""
    from icdl.repro.typeset import relation

    assert [relation(op) for op in (">=", "<=", ">", "<", "==")] == ["≥", "≤", ">", "<", "="]


def test_every_settings_table_says_what_each_setting_is():
    """Every chapter that shows its settings (``chapter.settings``) passes its profiles, whose ``meanings`` name
    every setting in words; the table gains a "meaning" column beside the ``--set`` key (the bug: a first cell of
    bare keys, ``B_w``, ``mc``, ``grid_K``, that told a reader nothing). Meanings that miss a setting, or name
    one the profiles lack, are refused when the profiles are declared."""
    import re

    from icdl.repro import chapter
    from icdl.repro.execute import chapter_profiles
    from icdl.repro.profiles import ProfileError, ProfileSet

    notebooks = Path(__file__).resolve().parents[1] / "notebooks"
    showing = [p.stem for p in sorted(notebooks.glob("*.py")) if "chapter.settings(" in p.read_text()]
    assert len(showing) >= 8
    for name in showing:
        assert re.search(r"chapter\.settings\(cfg, [\w.]+\)", (notebooks / f"{name}.py").read_text())
        profiles = chapter_profiles(name)
        keys = set(profiles.profiles["quick"])
        assert set(profiles.meanings) == keys and all(v.strip() for v in profiles.meanings.values()), name
        html = chapter.settings(profiles.resolve("quick"), profiles).data
        meanings = re.findall(r"<tr>\s*<td>.*?</td>\s*<td>(.*?)</td>", html, re.S)
        assert "<th>meaning</th>" in html and len(meanings) == len(profiles.resolve("quick")), name
        assert all(m.strip() for m in meanings), (name, meanings)  # profile, overrides and run said in words too
    with pytest.raises(ProfileError, match="meanings"):
        ProfileSet("x", profiles={"quick": {"n": 1, "m": 2}}, meanings={"n": "examples"})
