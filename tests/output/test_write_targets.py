"""Every writing command against every kind of target it must refuse (issue 25, "One write path").

Writers: ``render --out`` (one cluster, ``--all``, ``--check``), ``node-config --out``, ``schema export``
and ``init``. Targets: the repository root, a folder holding the repository, ``.git``, ``clusters/``, the
cluster's own folder, a user's non-empty folder without a mark, a symlink pointing out of the
repository, a path under a symlinked parent, and a path through a committed symlinked ``clusters/``.
Each run must be refused with one located line carrying a registered ``OUT-*`` code, print nothing on
stdout, and leave every byte and mode under the test's folder as it was.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from pathlib import Path

import pytest

from renderer.registry import entries
from tests.output.test_write_path import HEAD, VLANS, cozy

# OUT-* for the target; a target through a symlinked clusters/ may be refused as input first (OVL-PATH)
LINE = re.compile(r"^(?P<where>\S.*?): error\[(?P<code>OUT-[A-Z]+|OVL-PATH|CLI-INIT)\]: \S")

WRITERS = {
    "render --out": ["render", "clusters/c1", "--out", "{target}"],
    "render --all --out": ["render", ".", "--all", "--out", "{target}"],
    "render --out --check": ["render", "clusters/c1", "--out", "{target}", "--check"],
    "node-config --out": ["node-config", "clusters/c1", "--out", "{target}"],
    "schema export": ["schema", "export", "{target}"],
}
TARGETS = ["repository root", "folder holding the repository", ".git", "clusters", "own cluster folder",
           "user folder", "symlink out", "under a symlinked parent", "through a symlinked clusters"]


def snapshot(folder: Path) -> dict[str, object]:
    """Bytes, link targets and modes of everything under ``folder`` (the folder itself included)."""
    found: dict[str, object] = {".": stat.S_IMODE(folder.lstat().st_mode)}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            info = path.lstat()
            rel = path.relative_to(folder).as_posix()
            content: object = os.readlink(path) if path.is_symlink() else \
                path.read_bytes() if stat.S_ISREG(info.st_mode) else "dir"
            found[rel] = (stat.S_IFMT(info.st_mode), stat.S_IMODE(info.st_mode), content)
    return found


def _tree(tmp_path: Path, target: str) -> tuple[Path, str]:
    """The repository (under ``tmp_path/work``) and the target as the command line names it."""
    work = tmp_path / "work"
    root = work / "repo"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "clusters" / "c1").mkdir(parents=True)
    (root / "clusters" / "c1" / "cluster.yaml").write_text(HEAD + VLANS)
    outside = work / "outside"
    outside.mkdir()
    (outside / "theirs.txt").write_text("another team's file\n")
    if target == "repository root":
        return root, "."
    if target == "folder holding the repository":
        return root, ".."
    if target in (".git", "clusters"):
        return root, target
    if target == "own cluster folder":
        return root, "clusters/c1"
    if target == "user folder":
        mine = work / "mine"
        mine.mkdir()
        (mine / "notes.txt").write_text("a user's file\n")
        return root, str(mine)
    if target == "symlink out":
        os.symlink(outside, root / "rendered")
        return root, "rendered"
    if target == "under a symlinked parent":
        os.symlink(outside, root / "linked")
        return root, "linked/rendered"
    assert target == "through a symlinked clusters"
    shutil.move(root / "clusters", outside / "clusters")
    os.symlink(outside / "clusters", root / "clusters")
    return root, "clusters/rendered"


def _refused(done: object, args: list[str]) -> None:
    out, err, code = done.stdout, done.stderr, done.returncode  # type: ignore[attr-defined]
    assert code == 3, (args, code, err)
    assert out == "", (args, out[:500])
    lines = err.rstrip("\n").split("\n")
    for line in lines:
        found = LINE.match(line)
        assert found, (args, f"not one located `where: error[OUT-*]: message` line: {line!r}")
        assert found["code"] in entries(), line


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_writer_refuses_the_target_and_touches_nothing(writer: str, target: str, tmp_path: Path) -> None:
    root, named = _tree(tmp_path, target)
    args = [a.replace("{target}", named) for a in WRITERS[writer]]
    before = snapshot(tmp_path / "work")
    done = cozy(*args, cwd=root)
    if writer == "render --all --out" and target == "user folder":
        # `--all` writes marked cluster folders beside a user's files (README "--out"), never over them
        assert done.returncode == 0, done.stderr
        after = snapshot(tmp_path / "work")
        assert {k: v for k, v in after.items() if k in before} == before
        assert all(k == "mine/c1" or k.startswith("mine/c1/") for k in set(after) - set(before))
        return
    _refused(done, args)
    assert snapshot(tmp_path / "work") == before


INIT_TARGETS = {
    "through a symlinked clusters": ["init", "c2", "--os", "apt", "--gpu", "none"],
    "its cluster folder a symlink out": ["init", "c2", "--os", "apt", "--gpu", "none"],
    "the cluster file a symlink out": ["init", "c2", "--os", "apt", "--gpu", "none"],
    "under a symlinked .cozy": ["init", "c2", "--os", "apt", "--gpu", "none"],
}


@pytest.mark.parametrize("target", list(INIT_TARGETS))
def test_init_refuses_writing_out_of_the_tree_and_touches_nothing(target: str, tmp_path: Path) -> None:
    root, _ = _tree(tmp_path, "through a symlinked clusters" if target == "through a symlinked clusters" else
                    "repository root")
    outside = tmp_path / "work" / "outside"
    if target == "its cluster folder a symlink out":
        os.symlink(outside, root / "clusters" / "c2")
    elif target == "the cluster file a symlink out":
        (root / "clusters" / "c2").mkdir()
        os.symlink(outside / "new.yaml", root / "clusters" / "c2" / "cluster.yaml")
    elif target == "under a symlinked .cozy":
        os.symlink(outside, root / ".cozy")
    args = [*INIT_TARGETS[target], "--root", str(root)]
    before = snapshot(tmp_path / "work")
    done = cozy(*args, cwd=root)
    assert done.returncode == 3, (args, done.stderr)
    assert done.stdout == ""
    assert LINE.match(done.stderr), done.stderr
    assert snapshot(tmp_path / "work") == before


def _nest(folder: Path, depth: int) -> None:
    """``depth`` folders inside ``folder``, made without recursing (past Python's recursion limit)."""
    here = folder
    for _ in range(depth):
        here = here / "d"
        os.mkdir(here)
    (here / "x.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")


@pytest.mark.parametrize("args", [["render", ".", "--all", "--out", "rendered"],
                                  ["render", "clusters/c1", "--out", "rendered/c1"]])
def test_a_marked_folder_nested_past_the_recursion_limit_is_replaced_whole(args: list[str], tmp_path: Path) -> None:
    """A committed ``rendered/c1/d/d/.../x.yaml`` 1,500 deep: --check names it stale, a write replaces the
    folder and leaves no staging litter (shutil.rmtree recursed into an internal error)."""
    root, _ = _tree(tmp_path, "repository root")
    first = cozy("render", ".", "--all", "--out", "rendered", cwd=root)
    assert first.returncode == 0, first.stderr
    _nest(root / "rendered" / "c1", 1500)
    check = cozy(*args, "--check", cwd=root)
    assert check.returncode == 1 and "internal error" not in check.stderr, check.stderr[-500:]
    done = cozy(*args, cwd=root)
    assert done.returncode == 0 and done.stderr == "", done.stderr[-500:]
    assert not (root / "rendered" / "c1" / "d").exists()
    assert sorted(p.name for p in (root / "rendered").iterdir()) == ["c1"]
