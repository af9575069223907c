"""The two sides of a review as folders: a revision's tree written out of Git's object store, or the
working tree as it is.

Only Git's read-only plumbing runs (``rev-parse``, ``ls-tree``, ``cat-file``), with
``GIT_OPTIONAL_LOCKS=0`` so that not even an opportunistic index refresh is written: the user's
checkout, index, stash, branches and worktree list are never touched (``git worktree add`` would
register a worktree in ``.git/worktrees``; ``git archive`` would apply ``export-ignore`` and
``export-subst`` attributes and so hand the render other bytes than the commit holds). A revision's
files are written byte for byte from their blobs, with their executable bit and symlinks; submodules
are left out (a render never reads outside the repository it is given).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import NamedTuple

from renderer.errors import EXIT_INPUT, Finding, RenderError

GIT_CODE = "DIFF-GIT"


class Side(NamedTuple):
    """One side of the review: where its files are and what it is."""

    label: str  # what the user asked for: the revision as written, or "working tree"
    commit: str | None  # the resolved commit, None for the working tree
    root: Path  # the repository's top folder on this side
    blobs: dict[str, str] | None  # repository path -> blob id (None: the working tree, read from disk)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_OPTIONAL_LOCKS"] = "0"  # never write the index, not even a stat refresh
    env["LC_ALL"] = "C"
    return env


def git(repo: Path, *args: str, data: bytes | None = None) -> bytes:
    """Run one read-only git command in ``repo``; a failure is one DIFF-GIT line (exit 3)."""
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], input=data, capture_output=True, env=_env(),
                              check=False)
    except OSError as exc:
        raise RenderError([Finding(GIT_CODE, f"cannot run git: {exc}")], EXIT_INPUT) from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RenderError([Finding(GIT_CODE, f"git {args[0]}: {message[-1] if message else 'failed'}")], EXIT_INPUT)
    return done.stdout


def toplevel(path: Path) -> Path:
    """The top folder of the working tree holding ``path``."""
    start = path if path.is_dir() else path.parent
    while not start.exists():
        start = start.parent
    try:
        out = git(start, "rev-parse", "--show-toplevel")
    except RenderError:
        raise RenderError([Finding(GIT_CODE, f"{path} is not inside a Git working tree: --base/--head compare "
                                   "two revisions of a repository")], EXIT_INPUT) from None
    return Path(out.decode().strip()).resolve()


def resolve(repo: Path, revision: str) -> str:
    """The commit ``revision`` names (a branch, tag, ``HEAD~1``, a SHA, ``origin/main``...)."""
    if revision.startswith("-"):
        raise RenderError([Finding(GIT_CODE, f"{revision!r} is not a revision")], EXIT_INPUT)
    try:
        return git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}") \
            .decode().strip()
    except RenderError:
        raise RenderError([Finding(GIT_CODE, f"{revision!r} names no commit in {repo} (fetch it first: a "
                                   "shallow CI clone may lack the base; use fetch-depth: 0)")],
                          EXIT_INPUT) from None


def tree_blobs(repo: Path, commit: str) -> dict[str, tuple[str, str]]:
    """repository path -> (mode, object id) of every file of ``commit`` (submodules left out)."""
    out: dict[str, tuple[str, str]] = {}
    for entry in git(repo, "ls-tree", "-r", "-z", "--full-tree", commit).split(b"\0"):
        if not entry:
            continue
        meta, _, name = entry.partition(b"\t")
        mode, kind, oid = meta.decode().split(" ")
        if kind == "blob":
            out[os.fsdecode(name)] = (mode, oid)
    return out


def write_tree(repo: Path, commit: str, label: str, into: Path) -> Side:
    """Write every file of ``commit`` under ``into`` (an empty folder) from Git's object store."""
    entries = tree_blobs(repo, commit)
    names = sorted(entries)
    if names:
        request = b"".join(entries[n][1].encode() + b"\n" for n in names)
        stream = git(repo, "cat-file", "--batch", data=request)
        at = 0
        for name in names:
            header_end = stream.index(b"\n", at)
            size = stream[at:header_end].decode().split(" ")[2]
            start = header_end + 1
            content = stream[start:start + int(size)]
            at = start + int(size) + 1  # the blob, then a newline
            _write_file(into, name, entries[name][0], content)
    return Side(label, commit, into, {n: entries[n][1] for n in names})


def _write_file(into: Path, name: str, mode: str, content: bytes) -> None:
    target = into / name
    if ".." in Path(name).parts or Path(name).is_absolute():
        return  # git never stores such a path; refuse to follow one anyway
    target.parent.mkdir(parents=True, exist_ok=True)
    if mode == "120000":
        os.symlink(os.fsdecode(content), target)
        return
    target.write_bytes(content)
    if mode == "100755":
        target.chmod(0o755)


def working_tree(repo: Path) -> Side:
    return Side("working tree", None, repo, None)


def read_side(side: Side, rel: str) -> bytes | None:
    """The bytes of repository file ``rel`` on ``side`` (None: absent or not a file)."""
    path = side.root / rel
    try:
        if path.is_symlink():
            return b"symlink:" + os.fsencode(os.readlink(path))
        return path.read_bytes() if path.is_file() else None
    except OSError:
        return None


def differs(base: Side, head: Side, rel: str) -> bool:
    """Whether repository file ``rel`` differs between the two sides (content, presence or link)."""
    if base.blobs is not None and head.blobs is not None:
        return base.blobs.get(rel) != head.blobs.get(rel)
    return read_side(base, rel) != read_side(head, rel)


def changed_paths(base: Side, head: Side) -> set[str]:
    """Every repository file whose bytes differ between the sides, that either side has.

    Between two commits: from the blob ids. Against the working tree: the base's files read back
    from disk, plus the files Git does not track there that it does not ignore either (a new
    cluster not yet added).
    """
    assert base.blobs is not None
    if head.blobs is not None:
        return {p for p in set(base.blobs) | set(head.blobs) if base.blobs.get(p) != head.blobs.get(p)}
    changed = {p for p in base.blobs if read_side(base, p) != read_side(head, p)}
    untracked = git(head.root, "ls-files", "--others", "--exclude-standard", "-z", "--full-name", ":/")
    changed.update(os.fsdecode(p) for p in untracked.split(b"\0") if p and os.fsdecode(p) not in base.blobs)
    return changed


def remove(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
