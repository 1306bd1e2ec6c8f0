import json
import os

import pytest

from icdl.book.profiles import ProfileError, ProfileSet
from icdl.book.results import PROVENANCE_KEYS, ResultFileError, load_result, provenance, save_result
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

    from icdl.book.results import save_profile_result

    monkeypatch.setenv("ICDL_ROOT", str(tmp_path))
    demo = ProfileSet("demo", profiles={"quick": {"a": 1}, "reference": {"a": 2}},
                      command="python -m icdl.demo --profile {profile}")
    path = save_profile_result(demo, "study", {"x": [1, 2]}, profile="reference", seed=3,
                               started=time.perf_counter() - 2.0)
    assert path == tmp_path / "results" / "demo" / "study.reference.json"
    res = load_result(path)
    assert res["data"] == {"x": [1, 2]}
    assert res["provenance"]["command"] == "python -m icdl.demo --profile reference"
    assert res["provenance"]["seed"] == 3 and res["provenance"]["wall_time_s"] >= 2.0
