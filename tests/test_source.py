"""The book carries its source (icdl.repro.source, book/_ext/source_archive.py): an archive of the commit it was
built from, which names that commit and rebuilds without git.

Bugs these tests would catch: the working tree archived under the commit's name (an edit of a tracked file in
the archive), untracked files packed (a checkpoint or a stray run in the archive), a repacked archive that loses
or renames files, ``SOURCE_COMMIT`` missing or wrong (records built from the archive name no commit), the
first page naming another commit than the archive's, a chapter whose download menu lacks the archive.
"""

from __future__ import annotations

import re
import subprocess
import tarfile
from pathlib import Path

import pytest

from icdl.repro import commits
from icdl.repro.source import ARCHIVE, COMMIT_FILE, FILES_FILE, render, write_archive

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "Makefile").write_text("book:\n\ttrue\n")
    (root / "src" / "code.py").write_text("x = 1\n")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one")
    return root


def _members(archive: Path) -> dict[str, bytes]:
    with tarfile.open(archive) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def test_the_archive_is_the_commit_not_the_working_tree(repo, tmp_path):
    sha = _git(repo, "rev-parse", "HEAD")
    (repo / "src" / "code.py").write_text("x = 2\n")      # an edit of a tracked file
    (repo / "untracked.pt").write_bytes(b"\0" * 10)      # and a file git does not track
    source = write_archive(repo, tmp_path / "out" / ARCHIVE)
    files = _members(tmp_path / "out" / ARCHIVE)
    prefix = f"icdl-{sha[:12]}/"
    assert source.commit == sha and source.changed and source.from_git
    assert set(files) == {prefix + n for n in ("Makefile", "src/code.py", COMMIT_FILE, FILES_FILE)}
    assert files[prefix + "src/code.py"] == b"x = 1\n"
    assert files[prefix + COMMIT_FILE].decode().strip() == sha
    assert files[prefix + FILES_FILE].decode().split() == ["Makefile", "src/code.py"]
    (repo / "src" / "code.py").write_text("x = 1\n")
    assert not write_archive(repo, tmp_path / "again" / ARCHIVE).changed


def test_outputs_the_book_rewrites_do_not_count_as_a_changed_tree(repo, tmp_path):
    """``make book`` rewrites results and executed chapters: the source is still the commit's."""
    (repo / "results").mkdir()
    (repo / "results" / "r.json").write_text("{}")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "two")
    (repo / "results" / "r.json").write_text('{"rerun": 1}')
    assert not write_archive(repo, tmp_path / ARCHIVE).changed


def test_an_unpacked_archive_packs_itself_again_under_its_commit(repo, tmp_path):
    sha = _git(repo, "rev-parse", "HEAD")
    write_archive(repo, tmp_path / ARCHIVE)
    with tarfile.open(tmp_path / ARCHIVE) as tar:
        tar.extractall(tmp_path / "unpacked", filter="data")
    unpacked = tmp_path / "unpacked" / f"icdl-{sha[:12]}"
    (unpacked / "stray.json").write_text("{}")  # made after unpacking: not part of the source
    again = write_archive(unpacked, tmp_path / "again.tar.gz")
    assert (again.commit, again.changed, again.from_git) == (sha, False, False)
    assert set(_members(tmp_path / "again.tar.gz")) == set(_members(tmp_path / ARCHIVE))
    (unpacked / "Makefile").unlink()
    assert write_archive(unpacked, tmp_path / "less.tar.gz").changed
    # a record written from the unpacked tree names the archive's commit, marked as such
    assert commits.git_commit(unpacked) == sha + "+archive"


def test_a_tree_that_is_neither_is_refused_in_one_line(tmp_path):
    (tmp_path / "plain").mkdir()
    with pytest.raises(RuntimeError, match="neither a git checkout nor an unpacked source archive") as error:
        write_archive(tmp_path / "plain", tmp_path / ARCHIVE)
    assert "\n" not in str(error.value) and not (tmp_path / ARCHIVE).exists()


@pytest.mark.parametrize("where", ["tmp", "dest"])
@pytest.mark.parametrize("tree", ["git", "unpacked"])
def test_a_link_where_the_archive_goes_is_refused_and_its_target_untouched(repo, tmp_path, where, tree):
    """A link planted at the archive's work-in-progress name (``.<archive>.tmp``, a fixed name) or at the
    archive itself -- the bug: ``git archive -o`` and the repacking wrote through the link, over its target (here
    the reader's README), and the rename then moved the link into place -- is refused in one line before
    anything is written; the book's build then says it carries no archive."""
    root = repo
    if tree == "unpacked":
        write_archive(repo, tmp_path / "first.tar.gz")
        with tarfile.open(tmp_path / "first.tar.gz") as tar:
            tar.extractall(tmp_path / "unpacked", filter="data")
        root = next((tmp_path / "unpacked").iterdir())
    victim = tmp_path / "README.md"
    victim.write_text("the reader's file\n")
    dest = tmp_path / "out" / ARCHIVE
    dest.parent.mkdir()
    (dest.with_name(f".{ARCHIVE}.tmp") if where == "tmp" else dest).symlink_to(victim)
    with pytest.raises(RuntimeError, match=r"is a link") as error:
        write_archive(root, dest)
    assert "\n" not in str(error.value) and victim.read_text() == "the reader's file\n"


def test_the_paragraph_names_the_commit_and_says_when_the_tree_had_changed(repo, tmp_path):
    source = write_archive(repo, tmp_path / ARCHIVE)
    text = render(source, "generated/" + ARCHIVE)
    assert f"`{source.commit[:12]}`" in text and "{download}`Its source <generated/icdl-source.tar.gz>`" in text
    assert "changes to tracked files" not in text
    (repo / "Makefile").write_text("changed\n")
    assert "changes to tracked files" in render(write_archive(repo, tmp_path / ARCHIVE), "x")


def test_the_built_book_holds_the_source_of_its_commit():
    """On the book ``make test`` has just built: one archive in the HTML, of this checkout's commit, named on
    the first page and linked from every chapter's download menu."""
    if not (HTML / "index.html").is_file():
        pytest.fail(f"{HTML} has no built book: run `make html` first (make test does)")
    archives = sorted(HTML.glob(f"_downloads/*/{ARCHIVE}"))
    assert len(archives) == 1, archives
    files = _members(archives[0])
    commit = next(v for k, v in files.items() if k.endswith("/" + COMMIT_FILE)).decode().strip()
    assert commit == _git(ROOT, "rev-parse", "HEAD")
    names = {k.split("/", 1)[1] for k in files}
    assert {"Makefile", "_toc.yml", "requirements.txt", "src/icdl/repro/source.py"} <= names
    intro = (HTML / "book" / "intro.html").read_text(encoding="utf-8")
    assert commit[:12] in intro and re.search(rf'href="[^"]*_downloads/[^"]+/{ARCHIVE}"', intro)
    link = archives[0].relative_to(HTML).as_posix()
    chapters = sorted((HTML / "notebooks").glob("*.html"))
    lacking = [p.name for p in chapters if link not in p.read_text(encoding="utf-8")]
    assert chapters and lacking == []


def test_a_clone_names_its_own_commit_whatever_file_is_copied_into_it(repo, tmp_path):
    """A stray ``SOURCE_COMMIT`` in a clone (copied from an unpacked archive) names nothing: the records and the
    archive keep the clone's own commit (the bug: every record of that clone named the stray commit)."""
    sha = _git(repo, "rev-parse", "HEAD")
    (repo / COMMIT_FILE).write_text("0" * 40 + "\n")
    assert commits.git_commit(repo) == sha
    source = write_archive(repo, tmp_path / ARCHIVE)
    assert source.commit == sha and source.from_git


def test_the_file_list_is_the_commits_not_the_staging_areas(repo, tmp_path):
    """A file staged but not committed is neither in the archive nor in its list (the bug: ``git ls-files``
    listed it, and a repack from the unpacked archive then reported a changed tree)."""
    (repo / "staged.py").write_text("y = 2\n")
    _git(repo, "add", "staged.py")
    write_archive(repo, tmp_path / ARCHIVE)
    members = _members(tmp_path / ARCHIVE)
    listed = next(v for k, v in members.items() if k.endswith("/" + FILES_FILE)).decode().split()
    assert "staged.py" not in listed and not any(k.endswith("/staged.py") for k in members)
    assert set(listed) == {"Makefile", "src/code.py"}
