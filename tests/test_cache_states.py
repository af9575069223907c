"""The render cache's own states (issue 25 item 11): what the cache folder holds is input too."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from renderer import cache

HEAD = ("apiVersion: render.cozystack.io/v1alpha1\nkind: ClusterOverlay\nmetadata: {name: c1}\n"
        "host: {os: apt}\nplatform: {variant: isp-full-generic}\n")


@pytest.fixture
def tree(repo) -> Path:
    return repo({"clusters/c1/cluster.yaml": HEAD})


def _stored(folder: Path, root: Path) -> str:
    cache.store(folder, "k", root, [root / "clusters/c1/cluster.yaml"], "out\n", "", resolved=[])
    return "k"


def test_a_stored_entry_replays(tree: Path, tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    assert cache.lookup(folder, _stored(folder, tree), tree) == ("out\n", "")
    assert oct(folder.stat().st_mode & 0o777) == "0o700"


@pytest.mark.parametrize("kind", ["fifo", "symlink", "directory", "not-json", "wrong-shape", "deep", "huge-ints"])
def test_a_non_regular_or_corrupt_entry_is_a_miss(tree: Path, tmp_path: Path, kind: str) -> None:
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    entry = folder / "k.json"
    if kind == "fifo":
        os.mkfifo(entry)  # opened without blocking and refused: a render never hangs on it
    elif kind == "symlink":
        good = tmp_path / "elsewhere.json"
        good.write_text(json.dumps({"inputs": {}, "resolved": [], "stdout": "forged\n", "stderr": ""}))
        entry.symlink_to(good)
    elif kind == "directory":
        entry.mkdir()
    elif kind == "not-json":
        entry.write_bytes(b"\xff{")
    elif kind == "wrong-shape":
        entry.write_text(json.dumps({"inputs": {}, "resolved": [], "stdout": ["not", "text"], "stderr": ""}))
    elif kind == "deep":
        entry.write_text("[" * 100_000 + "]" * 100_000)
    else:
        entry.write_text(json.dumps({"inputs": {}, "resolved": [[1, 2]], "stdout": "x", "stderr": ""}))
    assert cache.lookup(folder, "k", tree) is None


def test_a_folder_others_may_write_is_never_served_from_directly(tree: Path, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # a Kubernetes emptyDir's mode
    (shared / "k.json").write_text(json.dumps({"inputs": {}, "resolved": [], "stdout": "forged\n", "stderr": ""}))
    assert cache.lookup(shared, "k", tree) is None
    # Writes go to the user's own 0700 folder inside it, which is trusted.
    _stored(shared, tree)
    own = shared / f"cozy-render-{os.geteuid()}"
    assert oct(own.stat().st_mode & 0o777) == "0o700"
    assert cache.lookup(shared, "k", tree) == ("out\n", "")


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_a_folder_owned_by_another_user_is_not_used(tree: Path, tmp_path: Path) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o755)
    (theirs / "k.json").write_text(json.dumps({"inputs": {}, "resolved": [], "stdout": "forged\n", "stderr": ""}))
    os.chown(theirs, 65534, 65534)
    (theirs / f"cozy-render-{os.geteuid()}").mkdir(mode=0o700)
    os.chown(theirs / f"cozy-render-{os.geteuid()}", 65534, 65534)
    assert cache.lookup(theirs, "k", tree) is None
    _stored(theirs, tree)
    assert sorted(p.name for p in theirs.iterdir()) == ["cozy-render-0", "k.json"]


def test_a_failed_write_leaves_no_temporary_file(tree: Path, tmp_path: Path, monkeypatch) -> None:
    folder = tmp_path / "cache"

    def full_disk(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(json, "dump", full_disk)
    _stored(folder, tree)
    assert list(folder.iterdir()) == []
