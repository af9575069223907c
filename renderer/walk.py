"""One way to read a folder tree cozy-render did not write: a chart given with ``--platform-chart``, a
fleet folder, a variants folder (issue 34 "One read path for every folder walk").

``files(root)`` lists every regular file under ``root`` without ever leaving it: a link is followed
only when what it names is inside ``root`` (a link out of the root is refused, naming the link, never
reading its target), a folder reached twice on one path is a loop, and FIFOs, sockets and devices are
refused rather than opened. Counts, bytes and depth are bounded (``Budget``), and the walk is iterative,
so no tree is deep enough to overflow the stack. ``copy(root, into)`` copies what ``files`` lists,
as plain files, opening each with ``O_NOFOLLOW``: what reaches another program (helm) is exactly the
listed bytes. ``entries(folder, top)`` is the one-level form for a fleet's cluster folders and a
``--against`` folder's per-cluster entries: the same rules, one folder deep, nothing read.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple


class Budget(NamedTuple):
    files: int = 20_000
    bytes: int = 256 * 2**20
    depth: int = 64


class WalkRefused(Exception):
    """Why the tree under ``root`` is not read; ``rel`` is the entry at fault (POSIX, relative to root)."""

    def __init__(self, rel: str, message: str) -> None:
        super().__init__(f"{rel}: {message}")
        self.rel = rel
        self.message = message


class File(NamedTuple):
    rel: str  # where it sits under the root, as listed (through links inside the root)
    real: str  # the file it is (links resolved, inside the root)
    size: int


def _inside(real: str, top: str) -> bool:
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


DEFAULT_BUDGET = Budget()


def _stat(real: str, rel: str) -> os.stat_result:
    """What ``real`` (a resolved path) is; a link that resolves to nothing or loops is refused."""
    try:
        st = os.stat(real, follow_symlinks=False)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise WalkRefused(rel, "is a link loop (it leads back to itself)") from None
        raise WalkRefused(rel, "is a link to nothing") from None
    if stat.S_ISLNK(st.st_mode):  # realpath leaves a looping link unresolved (Python < 3.13)
        raise WalkRefused(rel, "is a link loop (it leads back to itself)")
    return st


class Entry(NamedTuple):
    name: str
    path: str  # as listed: the folder as given, then the name
    real: str  # what it is: the link's target (inside ``top``) for a link, else ``path``
    is_dir: bool


def entries(folder: Path, top: Path | None = None, keep: Callable[[str], bool] | None = None,
            limit: int = DEFAULT_BUDGET.files) -> list[Entry]:
    """The folders and regular files directly in ``folder``, sorted by name, by ``files``'s rules: a link is
    followed only when it resolves inside ``top`` (``folder`` itself by default), a loop, a broken link and
    anything but a file or folder are refused, and at most ``limit`` entries are listed. ``keep(name)``
    leaves out what it rejects before it is looked at. ``rel`` in a refusal is relative to ``top``."""
    base = os.path.realpath(top if top is not None else folder)
    where = os.path.relpath(os.path.realpath(folder), base).replace(os.sep, "/")
    prefix = "" if where == "." else f"{where}/"
    try:
        with os.scandir(folder) as listing:
            found = sorted((e for e in listing if keep is None or keep(e.name)), key=lambda e: e.name)
    except OSError as exc:
        raise WalkRefused(where, f"cannot be listed: {exc.strerror or exc}") from None
    if len(found) > limit:
        raise WalkRefused(where, f"the folder holds more than {limit} entries")
    listed: list[Entry] = []
    for entry in found:
        rel = prefix + entry.name
        real = entry.path
        if entry.is_symlink():
            real = os.path.realpath(entry.path)
            if not _inside(real, base):
                raise WalkRefused(rel, "is a link to outside the folder; links are followed only inside it")
        mode = _stat(real, rel).st_mode
        if stat.S_ISDIR(mode) and real != entry.path and _inside(os.path.realpath(folder), real):
            raise WalkRefused(rel, "is a link loop (it leads back to a folder above it)")
        if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
            raise WalkRefused(rel, "is not a regular file or folder (a FIFO, socket or device)")
        listed.append(Entry(entry.name, entry.path, real, stat.S_ISDIR(mode)))
    return listed


def files(root: Path, budget: Budget = DEFAULT_BUDGET, keep: Callable[[str], bool] | None = None) -> list[File]:
    """Every regular file under ``root``, sorted by ``rel``; ``keep(rel)`` (a folder's or file's path)
    leaves out what it rejects before it is read or counted."""
    top = os.path.realpath(root)
    found: list[File] = []
    total = 0
    # (real folder, its rel, the real folders on its path): the path set finds loops through links
    stack: list[tuple[str, str, frozenset[str]]] = [(top, "", frozenset({top}))]
    while stack:
        folder, prefix, path = stack.pop()
        if len(path) > budget.depth:
            raise WalkRefused(prefix, f"nested more than {budget.depth} folders deep")
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            raise WalkRefused(prefix or ".", f"cannot be listed: {exc.strerror or exc}") from None
        for entry in entries:
            rel = f"{prefix}/{entry.name}" if prefix else entry.name
            if keep is not None and not keep(rel):
                continue
            real = entry.path
            if entry.is_symlink():
                real = os.path.realpath(entry.path)
                if not _inside(real, top):
                    raise WalkRefused(rel, "is a link to outside the folder; links are followed only inside it")
            st = _stat(real, rel)
            if stat.S_ISDIR(st.st_mode):
                if real in path:
                    raise WalkRefused(rel, "is a link loop (it leads back to a folder above it)")
                stack.append((real, rel, path | {real}))
            elif stat.S_ISREG(st.st_mode):
                total += st.st_size
                if len(found) >= budget.files:
                    raise WalkRefused(rel, f"the folder holds more than {budget.files} files")
                if total > budget.bytes:
                    raise WalkRefused(rel, f"the folder holds more than {budget.bytes} bytes")
                found.append(File(rel, real, st.st_size))
            else:
                raise WalkRefused(rel, "is not a regular file or folder (a FIFO, socket or device)")
    found.sort(key=lambda f: f.rel)
    return found


def copy(listed: list[File], into: Path, rename: Callable[[str], str] | None = None) -> None:
    """Copy ``listed`` (from ``files``) under ``into`` as plain files, never following a link on the way."""
    made: set[Path] = set()
    for item in listed:
        target = into / (rename(item.rel) if rename else item.rel)
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.add(target.parent)
        source = os.open(item.real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        try:
            if not stat.S_ISREG(os.fstat(source).st_mode):
                raise WalkRefused(item.rel, "changed into something other than a file while being copied")
            out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            try:
                left = item.size  # a file that grew after the listing is cut at its listed size (the budget)
                while left > 0 and (chunk := os.read(source, min(left, 1 << 20))):
                    os.write(out, chunk)
                    left -= len(chunk)
            finally:
                os.close(out)
        finally:
            os.close(source)
