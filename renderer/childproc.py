"""Child processes (git, helm) in their own process group, under one deadline and bounded output.

A child runs on data cozy-render does not trust (a pull request's Git objects, a ``--platform-chart``
folder), so it may hang, fork, or write without end. Each one starts in a new session (its own
process group), its stdout and stderr are read as they come up to their caps, and the whole group is
killed at the deadline, at a cap, and on every exit path, including an exception or Ctrl-C in
cozy-render itself: after ``run`` returns or raises, nothing it started is running (SECURITY.md
"Child processes").
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from typing import IO, NamedTuple


class Done(NamedTuple):
    returncode: int
    stdout: bytes
    stderr: bytes


class ChildLimit(Exception):
    """The child hit its deadline (``stream`` None) or the cap of ``stream`` ("stdout", "stderr") and was
    killed with its group; ``message`` says which."""

    def __init__(self, message: str, stream: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.stream = stream


def kill_group(pid: int) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


@contextmanager
def started(args: list[str], env: Mapping[str, str], *, stdin: int | None = subprocess.DEVNULL,
            cwd: str | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """``Popen`` in a new process group whose whole group is killed and reaped when the block ends,
    however it ends. Raises ``OSError`` when the program cannot start."""
    proc = subprocess.Popen(args, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(env),
                            cwd=cwd, start_new_session=True)
    try:
        yield proc
    finally:
        kill_group(proc.pid)  # anything the child left behind in its group, even after a clean exit
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                with suppress(OSError):
                    stream.close()
        proc.wait()


def run(args: list[str], env: Mapping[str, str], *, timeout: float, stdout_bytes: int, stderr_bytes: int,
        data: bytes | None = None, cwd: str | None = None, name: str | None = None,
        on_start: Callable[[int], None] | None = None) -> Done:
    """Run ``args`` to its end within ``timeout`` seconds, its output within the caps; ``ChildLimit``
    when it does not (the group killed), ``OSError`` when it cannot start. ``data`` is its stdin."""
    label = name or os.path.basename(args[0])
    deadline = time.monotonic() + timeout
    with started(args, env, stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL, cwd=cwd) as proc:
        if on_start is not None:
            on_start(proc.pid)
        out, err = _collect(proc, data, deadline, {1: stdout_bytes, 2: stderr_bytes}, label, timeout)
        left = deadline - time.monotonic()
        try:
            returncode = proc.wait(timeout=max(0.05, left))
        except subprocess.TimeoutExpired:
            raise ChildLimit(f"{label} did not finish within {timeout:g} s") from None
    return Done(returncode, out, err)


def _collect(proc: subprocess.Popen[bytes], data: bytes | None, deadline: float, caps: dict[int, int],
             label: str, timeout: float) -> tuple[bytes, bytes]:
    assert proc.stdout is not None and proc.stderr is not None
    chunks: dict[int, list[bytes]] = {1: [], 2: []}
    sizes = {1: 0, 2: 0}
    pending = memoryview(data) if data is not None else None
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ, 1)
        selector.register(proc.stderr, selectors.EVENT_READ, 2)
        if pending is not None:
            assert proc.stdin is not None
            os.set_blocking(proc.stdin.fileno(), False)
            if len(pending):
                selector.register(proc.stdin, selectors.EVENT_WRITE, 0)
            else:
                proc.stdin.close()
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChildLimit(f"{label} did not finish within {timeout:g} s")
            for key, _ in selector.select(min(left, 1.0)):
                if key.data == 0:
                    pending = _feed(selector, key.fileobj, pending)  # type: ignore[arg-type]
                    continue
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                sizes[key.data] += len(chunk)
                if sizes[key.data] > caps[key.data]:
                    stream = "stdout" if key.data == 1 else "stderr"
                    raise ChildLimit(f"{label} wrote more than {caps[key.data]} bytes to {stream}", stream)
                chunks[key.data].append(chunk)
    return b"".join(chunks[1]), b"".join(chunks[2])


def _feed(selector: selectors.BaseSelector, stdin: IO[bytes], pending: memoryview | None) -> memoryview | None:
    assert pending is not None
    try:
        written = os.write(stdin.fileno(), pending[:1 << 16])
    except BrokenPipeError:
        written = len(pending)  # the child stopped reading: its exit status says why
    pending = pending[written:]
    if not len(pending):
        selector.unregister(stdin)
        stdin.close()
    return pending


def descendants(pid: int | None = None) -> list[int]:
    """Every live process below ``pid`` (default: this process), children first; Linux ``/proc``,
    elsewhere none are found."""
    found: list[int] = []
    queue = [pid if pid is not None else os.getpid()]
    while queue and len(found) < 10_000:
        parent = queue.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children", encoding="ascii") as handle:
                    children = [int(p) for p in handle.read().split()]
            except (OSError, ValueError):
                continue
            found.extend(children)
            queue.extend(children)
    return found


def end_descendants() -> None:
    """Kill every process this one started, and theirs (kubeconfig exec plugins and whatever they
    forked): nothing cozy-render started outlives it. With ``adopt_orphans`` in force, a grandchild
    whose parent already exited is still found here."""
    for pid in descendants():
        with suppress(OSError):  # it ended meanwhile
            os.kill(pid, signal.SIGKILL)


def adopt_orphans() -> None:
    """Make this process the reaper of its orphaned descendants (Linux ``PR_SET_CHILD_SUBREAPER``), so a
    helper that forks and exits leaves its child where ``end_descendants`` finds it."""
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass  # not available: direct children are still ended
