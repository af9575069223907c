"""Writing folders: each one staged beside its target, marked, and swapped in with one atomic
``renameat2(RENAME_EXCHANGE)`` (two renames where the OS lacks it, a crash between them repaired on
the next run), under a ``flock`` on the parent folder; the old trees are removed by a second thread
while the next folders are staged. The refusals are ``renderer.output.guard``'s.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from renderer.escape import quote
from renderer.load.yamlio import display_path
from renderer.output.guard import (
    _GENERATED_HEADER,  # noqa: F401 - the tests' staging names use it
    _STAGING,
    MARK,
    MARK_TEXT,
    NODE_MARK,
    NODE_MARK_TEXT,
    SCHEMAS_MARK,
    _is_empty_dir,
    _is_file,
    _out_error,
    _refuse_foreign,
    _write_error,
    cluster_folders,
    is_generated_tree,
    refuse_unsafe_target,
)

# The fault-injection seam of the kill test (tests/output/test_kill.py): "<point>:<n>:<KILL|INT>[:fallback]" sends
# the signal to this process the n-th time the write path reaches <point> (before-swap, after-swap,
# between-renames); ":fallback" takes the two-rename path as if renameat2 were missing. Read by the
# write path only.
FAULT_ENV = "COZY_RENDER_FAULT"
_fault_counts: dict[str, int] = {}

# How long a writer waits for another writer of the same parent folder before giving up (OUT-BUSY).
LOCK_WAIT_SECONDS = 60.0


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def locked(parent: Path, out: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the folder the targets sit in while writing there.

    Concurrent writers (two CI jobs, two containers sharing a volume, other PID namespaces) serialise:
    the lock is the kernel's, on the folder itself, not a PID file another namespace cannot read, and
    it leaves nothing behind. A writer that waits longer than ``LOCK_WAIT_SECONDS`` gives up (OUT-BUSY).
    """
    import fcntl
    import time

    try:
        fd = os.open(parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise _write_error(out, exc) from None
    try:
        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise _out_error("OUT-BUSY", f"another cozy-render is writing in {quote(display_path(parent))} "
                                                 f"for over {LOCK_WAIT_SECONDS:.0f} s; try again later", out) from None
                time.sleep(0.05)
            except OSError:
                break  # a file system without flock: writing stays atomic per folder, unserialised
        yield
    finally:
        os.close(fd)  # releases the lock


def write_clusters(out: Path, files: dict[str, str], all_clusters: bool, results: list[Any] = (),  # type: ignore[assignment]
                   *, guarded: bool = False, shard: Any = None) -> None:
    """Write rendered cluster folders (see the module docstring), each marked and swapped in atomically.

    One cluster's files replace ``out``; under ``--all`` the ``<cluster>/<file>`` names replace each
    ``out/<cluster>`` and leave the rest of ``out`` alone, removing only marked folders of clusters that
    are gone. Everything is staged beside its target first, so a failed render or write leaves every
    folder as it was. Writers of the same folder serialise on its lock (``locked``). ``guarded``: the
    caller has just run ``refuse_unsafe_target`` on these very renders (``write_out``), so it is not
    run twice; everything else (the folder refusals, the lock, the swap) is. With ``shard``
    (``--shard K/N``) only vanished folders of that shard's clusters are removed: the other shards'
    folders are theirs to write.
    """
    if not guarded:
        refuse_unsafe_target(out, list(results), all_clusters)
    out = Path(os.path.realpath(out))  # checked above: inside the repository when named inside it
    groups = cluster_folders(out, files) if all_clusters else {out: files}
    for folder in groups:
        _refuse_foreign(folder)
    parent = out if all_clusters else out.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _write_error(out, exc) from None
    with locked(parent, out):
        for folder in groups:  # again, now that no other writer can change them
            _refuse_foreign(folder)
        try:
            _clean_stale(parent)
            mode = 0o777 & ~_umask()
            # The old trees the swaps put aside are removed by a second thread while the next folders are
            # staged (both mostly wait on the kernel); a crash leaves them marked, for _clean_stale.
            with _Remover(len(groups) > 1) as doomed:
                for folder, content in groups.items():
                    _replace_folder(folder, content, mark=(MARK, MARK_TEXT), mode=mode, doomed=doomed)
            if all_clusters:
                _remove_vanished(out, {folder.name for folder in groups}, shard)
        except OSError as exc:
            raise _write_error(out, exc) from None


def _remove_vanished(out: Path, written: set[str], shard: Any = None) -> None:
    """Remove the marked cluster folders in ``out`` that no cluster wrote this time (vanished clusters)."""
    with os.scandir(out) as entries:
        names = sorted(e.name for e in entries if e.name not in written and not e.name.startswith(".")
                       and e.is_dir(follow_symlinks=False))
    if shard is not None:  # a renderer.shard.Shard (the output stage never imports the driver's module)
        names = [name for name in names if shard.holds_cluster(name)]
    for name in names:
        vanished = out / name
        if _is_file(os.path.join(vanished, MARK)):
            _remove_folder(vanished)


def write_tree(out: Path, files: dict[str, str], results: list[Any] = (),  # type: ignore[assignment]
               mark: tuple[str, str] = (NODE_MARK, NODE_MARK_TEXT), legacy: Any = is_generated_tree) -> None:
    """Replace folder ``out`` with exactly ``files`` (relative path -> content), marked and swapped in atomically.

    The one write path of every command whose output is a folder of its own (node-config, schemas
    export); ``render --out`` writes cluster folders with ``write_clusters``, through the same checks,
    lock and swap. The refusals come first (``refuse_unsafe_target``: never over, holding or inside the
    render's inputs or ``.git``, never through a symlink out of the repository), and an existing folder
    is replaced only when it carries ``mark`` (or ``legacy(folder)`` says it is ours from before the mark).
    """
    refuse_unsafe_target(out, list(results), all_clusters=False)
    target = Path(os.path.realpath(out))
    for rel in files:
        if rel.startswith("/") or ".." in rel.split("/"):
            raise AssertionError(f"write_tree: {rel!r} is not a relative path inside the folder")

    def refuse_foreign() -> None:
        if target.exists() and not target.is_dir():
            raise _out_error("OUT-WRITE", f"{quote(display_path(out))} exists and is not a folder", out)
        if target.is_dir() and not _is_empty_dir(target) and not (target / mark[0]).is_file() \
                and not (legacy and legacy(target)):
            raise _out_error("OUT-OWNED", f"{quote(display_path(out))} is a non-empty folder cozy-render did not "
                                          f"write (no {mark[0]} mark); refusing to replace it", out)

    refuse_foreign()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _write_error(target, exc) from None
    with locked(target.parent, out):
        refuse_foreign()
        try:
            _clean_stale(target.parent)
            _replace_folder(target, files, mark=mark)
        except OSError as exc:
            raise _write_error(target, exc) from None


def _replace_folder(target: Path, files: dict[str, str], mark: tuple[str, str], mode: int | None = None,
                    doomed: _Remover | None = None) -> None:
    """Stage ``files`` (and the mark) in a fresh folder beside ``target`` and swap it in.

    Plain ``os`` calls, one ``open`` per file and a folder only where a name has one: a fleet writes
    thousands of files here. ``mode``: the folder's mode (the umask applied), when the caller knows it;
    ``doomed``: where to leave the old tree for the caller to remove, instead of removing it now."""
    import tempfile

    staging = tempfile.mkdtemp(prefix=f".{target.name}{_STAGING}{os.getpid()}-", dir=target.parent)
    try:
        _write_file(os.path.join(staging, mark[0]), mark[1])
        os.chmod(staging, 0o777 & ~_umask() if mode is None else mode)  # mkdtemp's 0700 would stay (issue 23 item 8)
        made: set[str] = set()
        for rel, content in files.items():
            path = os.path.join(staging, rel)
            if "/" in rel:
                folder = os.path.dirname(path)
                if folder not in made:
                    os.makedirs(folder, exist_ok=True)
                    made.add(folder)
            _write_file(path, content)
        _swap(Path(staging), target)
    except BaseException:
        _remove(staging)  # the new tree: the swap did not happen
        raise
    if doomed is not None:
        doomed.append(staging)  # the old tree, after the swap (or nothing, when there was none)
    else:
        _remove(staging)  # the old tree, after the swap


def _write_file(path: str, content: str) -> None:
    """``Path.write_text(content, encoding="utf-8")`` in three system calls (mode 0666 less the umask)."""
    data = content.encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


class _Remover:
    """Removes the folders appended to it (``doomed``), in a thread of its own when ``threaded``; every
    one is gone when the ``with`` block ends, however it ends."""

    def __init__(self, threaded: bool) -> None:
        import queue
        import threading

        self._queue: queue.SimpleQueue[str | None] | None = queue.SimpleQueue() if threaded else None
        self._thread = threading.Thread(target=self._run, name="cozy-render-remover", daemon=True) \
            if threaded else None
        self._pending: list[str] = []

    def append(self, folder: str) -> None:
        if self._queue is not None:
            self._queue.put(folder)
        else:
            self._pending.append(folder)

    def _run(self) -> None:
        assert self._queue is not None
        while (folder := self._queue.get()) is not None:
            _remove(folder)

    def __enter__(self) -> _Remover:
        if self._thread is not None:
            self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._thread is not None and self._queue is not None:
            self._queue.put(None)
            self._thread.join()
        for folder in self._pending:
            _remove(folder)


def _remove(folder: str) -> None:
    """Remove a staging folder so that a kill part-way leaves it marked: everything but its mark first,
    the mark last. ``_clean_stale`` deletes a marked staging folder on the next run but never an
    unmarked one (it may be a user's), so a tree cut short with its mark gone would stay for ever."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    marks = {MARK, NODE_MARK, SCHEMAS_MARK}
    for name in sorted(names, key=lambda n: n in marks):  # the marks last
        path = os.path.join(folder, name)
        if os.path.isdir(path) and not os.path.islink(path):
            _rmtree(path)
        else:
            try:  # noqa: SIM105 - one call, no context manager needed
                os.unlink(path)
            except OSError:
                pass
    _rmtree(folder)


def _remove_folder(folder: Path) -> None:
    """Remove a marked folder: renamed to a marked staging name first (atomic), then deleted."""
    doomed = folder.with_name(f".{folder.name}{_STAGING}{os.getpid()}-gone")
    os.rename(folder, doomed)
    _rmtree(doomed)


def _rmtree(folder: Path | str) -> None:
    """``shutil.rmtree(folder, ignore_errors=True)``; a tree nested past Python's recursion limit (a
    committed ``rendered/c1/d/d/...``) is removed with a stack instead of an internal error."""
    import shutil

    try:
        shutil.rmtree(folder, ignore_errors=True)
    except RecursionError:
        pass
    else:
        return
    folders: list[str] = []
    pending = [str(folder)]
    while pending:
        here = pending.pop()
        folders.append(here)
        try:
            with os.scandir(here) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(entry.path)
                    else:
                        with contextlib.suppress(OSError):
                            os.unlink(entry.path)
        except OSError:
            continue
    for here in reversed(folders):
        with contextlib.suppress(OSError):
            os.rmdir(here)


def _fault(point: str) -> None:
    spec = os.environ.get(FAULT_ENV)
    if not spec:
        return
    want, nth, sig = (spec.split(":") + ["", ""])[:3]
    if want != point:
        return
    _fault_counts[point] = _fault_counts.get(point, 0) + 1
    if str(_fault_counts[point]) == nth:
        import signal

        os.kill(os.getpid(), signal.SIGKILL if sig == "KILL" else signal.SIGINT)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


_RENAMEAT2: list[Any] = []  # the libc function, looked up once per process (a dlopen each time cost a fleet)


def _renameat2() -> Any:
    if not _RENAMEAT2:
        import ctypes

        try:
            function = ctypes.CDLL(None, use_errno=True).renameat2
            function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        except (OSError, AttributeError):
            function = None
        _RENAMEAT2.append(function)
    return _RENAMEAT2[0]


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths with renameat2(RENAME_EXCHANGE); False where the OS or file system lacks it."""
    if not sys.platform.startswith("linux") or os.environ.get(FAULT_ENV, "").endswith(":fallback"):
        return False
    import ctypes

    renameat2 = _renameat2()
    if renameat2 is None:  # glibc before 2.28, musl before 1.2.? : fall back
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _swap(new: Path, target: Path) -> None:
    """Put ``new`` at ``target``; afterwards ``new`` holds the old content (or nothing)."""
    try:
        mode: int | None = os.lstat(target).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISDIR(mode):
        raise OSError(f"{target} exists and is not a directory")
    _fault("before-swap")
    if mode is None:
        os.rename(new, target)
        _fault("after-swap")
        return
    if _exchange(new, target):
        _fault("after-swap")
        return
    # Fallback: two renames. A crash between them leaves target missing and its old content in the
    # marked ``old`` folder; _clean_stale puts it back on the next run.
    old = target.with_name(f".{target.name}{_STAGING}{os.getpid()}-old")
    os.rename(target, old)
    try:
        _fault("between-renames")
        os.rename(new, target)
    except BaseException:
        os.rename(old, target)
        raise
    os.rename(old, new)
    _fault("after-swap")


_STAGING_NAME = re.compile(r"^\.(?P<target>.+?)" + re.escape(_STAGING) + r"(?P<pid>\d+)-(?P<rest>.*)$")


def _clean_stale(parent: Path) -> None:
    """Staging folders a killed run left beside its targets: restore an ``-old`` whose target vanished
    (the two-rename fallback was cut between its renames), delete the marked rest, and remove an empty
    one (a run killed after creating it, before writing its mark: issue 25 item 12).

    Called with ``parent`` locked (``locked``): every writer holds that lock while it stages, so a
    staging folder seen now belongs to a run that is gone, whatever PID namespace it ran in. PIDs are
    not consulted: in another namespace a live writer's PID means nothing here (issue 25 item 5).
    A non-empty folder without a mark is not ours and stays."""
    try:
        entries = sorted(parent.iterdir())
    except OSError:
        return
    for entry in entries:
        found = _STAGING_NAME.match(entry.name)
        if not found or entry.is_symlink() or not entry.is_dir():
            continue
        target = parent / found["target"]
        if found["rest"] == "old" and not os.path.lexists(target):
            os.rename(entry, target)  # the old content, whether or not it carried the mark
            continue
        if (entry / MARK).is_file() or (entry / NODE_MARK).is_file() or (entry / SCHEMAS_MARK).is_file():
            _rmtree(entry)
        elif _is_empty_dir(entry):
            with contextlib.suppress(OSError):
                entry.rmdir()
