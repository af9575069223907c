"""One request, in a process forked from the warm server for it alone (``renderer.daemon``).

The worker becomes the client's process as far as a render can tell: the client's descriptors are its
0, 1 and 2, the client's working folder its own, the client's environment (bytes, as received), umask
and ``sys.argv`` its own, and its standard streams are built with the client's encodings. Then it runs
cozy-render's ``renderer.entry.main``, the in-process path itself, with delegation off
(``renderer.daemon.IN_WORKER``), and leaves with that exit code.
It runs in its own session, so the server's deadline kills whatever it started in its group.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
from collections.abc import Callable
from typing import NamedTuple, NoReturn

import renderer.daemon


class Request(NamedTuple):
    """A request as the server received and checked it (``renderer.daemon.protocol``)."""

    argv: list[bytes]
    environ: dict[bytes, bytes]
    umask: int
    streams: list[str]  # 3 x (encoding, errors, line buffering, write-through) for stdin, stdout, stderr
    descriptors: list[int]  # working folder, stdin, stdout, stderr (the server's copies)
    status: int = -1  # the write end of a pipe to the server: the exit code, once the output is complete


def run(request: Request, run_cli: Callable[[], None]) -> NoReturn:
    """Never returns: the process ends with the render's exit code. Every descriptor the server held
    (its listener, other requests' connections, this one's too: the server reports the exit code) is
    closed first. ``run_cli`` is cozy-render's console entry (``renderer.entry.main``), handed down by
    the process that started the server: the command line runs the daemon and the daemon runs the
    command line, so the worker takes it as a value instead of importing it back (no import cycle)."""
    code = 4  # renderer.errors.EXIT_INTERNAL: only if the set-up itself fails
    try:
        os.setsid()
        for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # what the interpreter sets up at start-up
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.set_wakeup_fd(-1)
        _take_descriptors(request.descriptors, request.status)
        os.umask(request.umask)
        os.environb.clear()
        os.environb.update(request.environ)
        sys.argv = [os.fsdecode(arg) for arg in request.argv]
        _standard_streams(request.streams)
        code = _render(run_cli)
    except BaseException as exc:  # noqa: BLE001 - the set-up failed: say so on the client's stderr, once
        with contextlib.suppress(OSError):
            os.write(2, f"error[CMP-WORKER]: the render worker could not take the request over: "
                        f"{type(exc).__name__}: {exc}\n".encode(errors="backslashreplace"))
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:  # noqa: SIM105 - the same flush the interpreter does at exit
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        _report(code, request.status)
        os._exit(code)


def _report(code: int, status: int) -> None:
    """The output is complete once this process's copies of the client's descriptors are closed: say so
    with the exit code, so the server answers the client without waiting for this process's teardown
    (the reaping that follows still kills whatever the worker left behind)."""
    for fd in (0, 1, 2):
        with contextlib.suppress(OSError):
            os.close(fd)
    if status >= 0:
        with contextlib.suppress(OSError):
            os.write(status, b"%d" % code)


def _take_descriptors(descriptors: list[int], status: int = -1) -> None:
    cwd, stdin, stdout, stderr = descriptors
    for target, source in ((0, stdin), (1, stdout), (2, stderr)):
        os.dup2(source, target)  # inheritable, as a process's own 0, 1, 2 are
    os.fchdir(cwd)
    _close_from(3, status)


def _close_from(lowest: int, keep: int = -1) -> None:
    """Close every descriptor from ``lowest`` up but ``keep``: the open ones as /proc lists them (a loop up
    to the descriptor limit would make a million calls where the limit is that high)."""
    try:
        held = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        if keep >= lowest:
            os.closerange(lowest, keep)
            os.closerange(keep + 1, 65536)
        else:
            os.closerange(lowest, 65536)
        return
    for fd in held:
        if fd >= lowest and fd != keep:
            with contextlib.suppress(OSError):  # the listing's own descriptor is already gone
                os.close(fd)


def _standard_streams(settings: list[str]) -> None:
    """New ``sys.stdin``/``stdout``/``stderr`` on descriptors 0, 1, 2, as the interpreter would have
    made them for the client (POSIX: no newline translation)."""
    made = []
    for fd, at in ((0, 0), (1, 4), (2, 8)):
        encoding, errors, line_buffering, write_through = settings[at:at + 4]
        raw = io.FileIO(fd, "rb" if fd == 0 else "wb", closefd=False)
        buffered = io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
        made.append(io.TextIOWrapper(buffered, encoding=encoding, errors=errors, newline="\n",
                                     line_buffering=bool(line_buffering), write_through=bool(write_through)))
    sys.stdin, sys.stdout, sys.stderr = made
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = made  # type: ignore[misc]


def _render(run_cli: Callable[[], None]) -> int:
    """Run what cozy-render's ``__main__`` and its console script run, ``renderer.entry.main``, minus the
    interpreter's start (called, not found and loaded again through ``runpy``: the server imported it);
    ``sys.argv`` stays the client's."""
    renderer.daemon.IN_WORKER = True  # this process is the in-process path: never hand the request on again
    try:
        run_cli()
    except SystemExit as done:
        return _exit_status(done.code)
    return 0


def _exit_status(code: object) -> int:
    """What the interpreter makes of ``SystemExit(code)`` at exit."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(f"{code}\n")
    return 1
