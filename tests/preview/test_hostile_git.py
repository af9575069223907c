"""A pull request's Git objects are data (issue 34 items 6, 7, 8, 11, 12; SECURITY.md "The pull-request
preview"): crafted trees that ``git checkout`` never writes, a committed folder shaped like a Git
directory, a blob no render reads, and every revision form ``git rev-parse`` takes."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from renderer.errors import RenderError
from renderer.preview import trees
from tests.preview.conftest import git

CLUSTER = "overlays/clusters/apt-a/cluster.yaml"


def _git_bytes(repo: Path, *args: str, data: bytes | None = None) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    return subprocess.run(["git", "-C", str(repo), *args], input=data, check=True, capture_output=True,
                          env=env).stdout.decode().strip()


def blob(repo: Path, data: bytes) -> str:
    return _git_bytes(repo, "hash-object", "-w", "--stdin", data=data)


def mktree(repo: Path, entries: list[tuple[str, str, str, bytes]]) -> str:
    """A tree from (mode, type, id, name) entries exactly as given: no check git checkout would make."""
    lines = b"".join(f"{mode} {kind} {oid}\t".encode() + name + b"\0" for mode, kind, oid, name in entries)
    return _git_bytes(repo, "mktree", "-z", "--missing", data=lines)


def commit_tree(repo: Path, tree: str, parent: str) -> str:
    oid = _git_bytes(repo, "commit-tree", tree, "-p", parent, "-m", "crafted")
    _git_bytes(repo, "update-ref", "refs/heads/crafted", oid)
    return oid


def nested(repo: Path, path: bytes, leaf: tuple[str, str, str]) -> tuple[str, str, str, bytes]:
    """The root entry holding ``leaf`` at ``path`` (a/b/c), trees made on the way."""
    parts = path.split(b"/")
    mode, kind, oid = leaf
    for name in reversed(parts[1:]):
        oid = mktree(repo, [(mode, kind, oid, name)])
        mode, kind = "040000", "tree"
    return mode, kind, oid, parts[0]


def with_base(repo: Path, extra: list[tuple[str, str, str, bytes]]) -> str:
    """A head commit: the base's root tree entries plus ``extra`` (duplicates kept as given)."""
    listing = _git_bytes(repo, "ls-tree", "HEAD")
    entries = []
    for line in listing.splitlines():
        meta, name = line.split("\t", 1)
        mode, kind, oid = meta.split()
        entries.append((mode, kind, oid, name.encode()))
    return commit_tree(repo, mktree(repo, entries + extra), _git_bytes(repo, "rev-parse", "HEAD"))


def snapshot(folder: Path) -> dict[str, bytes]:
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[str(path.relative_to(folder))] = path.read_bytes()
    return out


def assert_refused(cli, repo: Path, head: str, outside: Path) -> str:
    before, before_outside = snapshot(repo), snapshot(outside)
    code, out, err = cli("diff", "--all", str(repo / "overlays"), "--base", "HEAD", "--head", head)
    assert (code, out) == (3, ""), err
    assert err.count("\n") == 1 and "error[DIFF-GIT]:" in err, err
    assert snapshot(repo) == before and snapshot(outside) == before_outside
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    return err


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "keep.txt").write_text("untouched\n")
    return folder


def test_a_link_and_a_tree_of_one_name_never_write_through_the_link(cli, fleet_repo: Path, outside: Path) -> None:
    # issue 34 item 6: `hooks` a link to the reviewer's .git/hooks and a tree `hooks/pre-commit`; `overlays`
    # a link to the checkout's own overlays and a tree writing over one of its clusters; `out` outside.
    hook = blob(fleet_repo, b"#!/bin/sh\ntouch /tmp/cozy-render-pwned\n")
    evil = blob(fleet_repo, b"kind: pwned\n")
    head = with_base(fleet_repo, [
        ("120000", "blob", blob(fleet_repo, str(fleet_repo / ".git" / "hooks").encode()), b"hooks"),
        nested(fleet_repo, b"hooks/pre-commit", ("100755", "blob", hook)),
        ("120000", "blob", blob(fleet_repo, str(outside).encode()), b"out"),
        nested(fleet_repo, b"out/keep.txt", ("100644", "blob", evil)),
        ("120000", "blob", blob(fleet_repo, str(fleet_repo / "overlays" / "clusters").encode()), b"zz"),
        nested(fleet_repo, b"zz/apt-a/cluster.yaml", ("100644", "blob", evil)),
    ])
    err = assert_refused(cli, fleet_repo, head, outside)
    assert "both as a file and as a folder" in err
    assert not Path("/tmp/cozy-render-pwned").exists()


@pytest.mark.parametrize("case", ["file-and-tree", "long-name", "long-path", "long-link", "nul-link", "dot-git",
                                  "dot-dot"])
def test_entries_no_file_system_holds_are_one_located_refusal(cli, fleet_repo: Path, outside: Path,
                                                              case: str) -> None:
    # issue 34 item 7: each is one DIFF-GIT line and exit 3 (never 1, which CI reads as "changes", nor 4).
    text = blob(fleet_repo, b"x: 1\n")
    extra = {
        "file-and-tree": [("100644", "blob", text, b"twin"), nested(fleet_repo, b"twin/inner", ("100644", "blob", text))],
        "long-name": [("100644", "blob", text, b"n" * 300)],
        "long-path": [nested(fleet_repo, b"/".join([b"d" * 200] * 25), ("100644", "blob", text))],
        "long-link": [("120000", "blob", blob(fleet_repo, b"t" * 5000), b"link")],
        "nul-link": [("120000", "blob", blob(fleet_repo, b"abc\0def"), b"link")],
        "dot-git": [nested(fleet_repo, b"sub/.git/config", ("100644", "blob", text))],
        "dot-dot": [nested(fleet_repo, b"sub/../x", ("100644", "blob", text))],
    }[case]
    try:
        head = with_base(fleet_repo, extra)
    except subprocess.CalledProcessError:
        pytest.skip(f"this git refuses to build the {case} tree itself")  # nothing to review then
    assert_refused(cli, fleet_repo, head, outside)


def test_a_folder_shaped_like_a_git_directory_is_not_the_repository(cli, fleet_repo: Path, tmp_path: Path) -> None:
    # issue 34 item 8: HEAD, objects/, refs/ and a config with core.fsmonitor and core.worktree, committed
    # in the overlay folder; git's own discovery from there would take it for a bare repository.
    marker = tmp_path / "fsmonitor-ran"
    overlays = fleet_repo / "overlays"
    (overlays / "HEAD").write_text("ref: refs/heads/main\n")
    for keep in ("objects/info/keep", "refs/heads/keep"):
        (overlays / keep).parent.mkdir(parents=True, exist_ok=True)
        (overlays / keep).write_text("")
    (overlays / "config").write_text(f"[core]\n\tbare = false\n\tworktree = ..\n\tfsmonitor = touch {marker}\n")
    git(fleet_repo, "add", "-A")
    git(fleet_repo, "commit", "-q", "-m", "git-shaped folder")
    for args in (["--base", "base"], ["--base", "base", "--head", "HEAD"]):  # the README's form and the CI form
        code, _out, err = cli("diff", "--all", str(overlays), *args)
        assert code in (0, 1) and "error" not in err, err
        assert not marker.exists()
    assert trees.find_repository(overlays).top == fleet_repo.resolve()


def test_the_callers_git_environment_is_not_followed(cli, fleet_repo: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.fsmonitor'='touch {tmp_path / 'ran'}'")
    code, _, err = cli("diff", "--all", str(fleet_repo / "overlays"), "--base", "base", "--head", "change")
    assert code == 1, err
    assert not (tmp_path / "ran").exists()


def test_a_blob_no_render_reads_is_never_held_in_memory(fleet_repo: Path, tmp_path: Path) -> None:
    # issue 34 item 11: larger than limits.MAX_FILE_BYTES, it is written as a sparse file of its size.
    from renderer.load import limits

    big = tmp_path / "big.bin"
    size = limits.MAX_FILE_BYTES * 2 + 3
    big.write_bytes(b"\x01" * size)
    oid = _git_bytes(fleet_repo, "hash-object", "-w", str(big))
    head = with_base(fleet_repo, [("100644", "blob", oid, b"big.bin")])
    repo = trees.find_repository(fleet_repo)
    into = tmp_path / "head"
    into.mkdir()
    side = trees.write_tree(repo, head, "crafted", into)
    written = os.stat(into / "big.bin")
    assert written.st_size == size and written.st_blocks * 512 < size // 4
    assert (into / CLUSTER).read_bytes() == (fleet_repo / CLUSTER).read_bytes()
    assert side.blobs is not None and side.blobs["big.bin"] == oid


def test_working_tree_blob_ids_are_gits_own(fleet_repo: Path) -> None:
    path = fleet_repo / CLUSTER
    expected = _git_bytes(fleet_repo, "hash-object", str(path))
    assert trees.working_blob_id(fleet_repo, CLUSTER) == expected
    data = path.read_bytes()
    assert expected == hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    os.symlink("cluster.yaml", fleet_repo / "overlays/clusters/apt-a/link.yaml")
    assert trees.working_blob_id(fleet_repo, "overlays/clusters/apt-a/link.yaml") == \
        "link:" + _git_bytes(fleet_repo, "hash-object", "--stdin", data=b"cluster.yaml")
    os.mkfifo(fleet_repo / "fifo")
    assert trees.working_blob_id(fleet_repo, "fifo") is None  # never opened for reading: it would block


@pytest.mark.parametrize("revision", [":/base", "main~1", "base^{commit}", "main@{0}", "HEAD^"])
def test_every_rev_parse_form_names_its_commit(fleet_repo: Path, revision: str) -> None:
    # issue 34 item 12: `:/text` and the other git rev-parse forms the README allows.
    repo = trees.find_repository(fleet_repo)
    expected = _git_bytes(fleet_repo, "rev-parse", f"{revision}^{{commit}}" if revision[0] != ":" else revision)
    assert trees.resolve(repo, revision) == expected


@pytest.mark.parametrize("revision", ["--output=/tmp/x", "", "a\0b"])
def test_option_shaped_revisions_are_refused(fleet_repo: Path, revision: str) -> None:
    with pytest.raises(RenderError) as caught:
        trees.resolve(trees.find_repository(fleet_repo), revision)
    assert caught.value.findings[0].code == "DIFF-GIT"
