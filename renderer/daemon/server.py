"""The resident renderer's server: warm imports, one Unix socket, one forked worker per request.

The socket is the plugin user's alone: its folder is created 0700 (an existing one must belong to this
uid and be closed to others), the socket is bound 0600, and every connection's peer uid (SO_PEERCRED)
must be this process's effective uid. One server per socket: it holds ``PATH.lock`` (flock) for its
life, so a socket file found at start-up under a lock it could take is stale and replaced.

An upgrade never serves old code. A request names the client's version and package folder; the
server compares them with its own, and compares, per request, the size, mtime and inode of every file
and folder of its package, and of the folders on its import path (a library upgraded in place), with
what they were when it imported them. On any difference it refuses
(the client renders in-process), stops listening, lets running workers finish and re-executes itself
(same pid, so the sidecar's process tree is unchanged), importing the new code.

Workers are reaped from a SIGCHLD wake-up descriptor. A worker past the deadline, or whose client hung
up, is killed with its process group; its client is told why (CMP-DEADLINE, CMP-WORKER).
SIGTERM/SIGINT stop the server: workers are killed and reaped, their clients told, the socket removed.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import selectors
import signal
import socket
import stat
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import renderer
from renderer.daemon import protocol, worker
from renderer.daemon.client import import_path, interpreter_key, package_identity
from renderer.daemon.worker import Request

DEFAULT_DEADLINE = 300.0
HANDSHAKE_SECONDS = 5.0
EXIT_INPUT, EXIT_INTERNAL = 3, 4  # renderer.errors


class SetupError(Exception):
    """The server cannot serve this socket path; ``message`` says why (``CMP-DAEMON``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Worker(NamedTuple):
    conn: socket.socket
    deadline_at: float


def peer_uid(conn: socket.socket) -> int:
    """The uid of the process at the other end of a connected Unix socket (SO_PEERCRED)."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])


def peer_allowed(conn: socket.socket, expected_uid: int) -> bool:
    try:
        return peer_uid(conn) == expected_uid
    except OSError:
        return False


def private_folder(folder: Path) -> None:
    """Create ``folder`` 0700, or accept an existing one only if it is this uid's and closed to others."""
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise SetupError(f"cannot create the socket folder {folder}: {exc.strerror}") from None
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode):
        raise SetupError(f"the socket folder {folder} is not a folder (a symlink is refused)")
    if info.st_uid != os.geteuid():
        raise SetupError(f"the socket folder {folder} belongs to uid {info.st_uid}, not {os.geteuid()}")
    if info.st_mode & 0o077:
        raise SetupError(f"the socket folder {folder} is open to other users (mode {stat.S_IMODE(info.st_mode):o}; "
                         "it must be 0700)")


def package_snapshot(package: Path) -> dict[str, tuple[int, int, int]]:
    """Size, mtime and inode of every file and folder of the package (bytecode caches left out), and of
    every folder on the import path: pip replaces files (new inodes, new folder mtimes), an editor
    rewrites them (new mtime), and upgrading a library renames its ``*.dist-info`` folder in
    site-packages (a new mtime there)."""

    snapshot = {}
    for entry in import_path():  # under PYTHONSAFEPATH, sys.path[0] is PYTHONPATH's first folder: watched too
        with contextlib.suppress(OSError, ValueError):
            info = os.stat(entry or ".")
            if stat.S_ISDIR(info.st_mode):
                snapshot[entry] = (info.st_size, info.st_mtime_ns, info.st_ino)
    for folder, folders, files in os.walk(package):
        folders[:] = sorted(name for name in folders if name != "__pycache__")
        for name in [".", *files]:
            path = os.path.join(folder, name)
            with contextlib.suppress(OSError):
                info = os.stat(path)
                snapshot[path] = (info.st_size, info.st_mtime_ns, info.st_ino)
    return snapshot


def package_changed(snapshot: dict[str, tuple[int, int, int]]) -> bool:
    for path, known in snapshot.items():
        try:
            info = os.stat(path)
        except OSError:
            return True
        if (info.st_size, info.st_mtime_ns, info.st_ino) != known:
            return True
    return False


class PackageWatch:
    """``package_changed`` without a stat of every file per request: inotify (Linux) watches every folder of
    the snapshot, so a file written, replaced, created, renamed or removed in one of them, or a change to
    the folder itself, queues an event; a request then costs one read that finds the queue empty. Set up
    before the snapshot is taken, so nothing can change between the two unseen. Where inotify is not to
    be had (another OS, the watch limit reached), ``changed`` compares the snapshot file by file."""

    # IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE, IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE,
    # IN_DELETE_SELF, IN_MOVE_SELF (<sys/inotify.h>)
    MASK = 0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200 | 0x400 | 0x800
    EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of NUL-padded name

    def __init__(self, package: Path) -> None:
        self.fd = self._watch(package)
        self.snapshot = package_snapshot(package)
        self.seen_change = False

    def _watch(self, package: Path) -> int:

        folders = [entry or "." for entry in import_path()]
        for folder, children, _files in os.walk(package):
            children[:] = sorted(name for name in children if name != "__pycache__")
            folders.append(folder)
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            fd = int(libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
        except (OSError, AttributeError):
            return -1
        if fd < 0:
            return -1
        for folder in folders:
            if not os.path.isdir(folder):
                continue  # a zip or a missing entry on the import path: the snapshot has no folder there either
            if libc.inotify_add_watch(fd, os.fsencode(folder), self.MASK) < 0:
                os.close(fd)  # the user's watch limit: compare file by file instead
                return -1
        return fd

    def changed(self) -> bool:
        if self.seen_change:
            return True
        if self.fd < 0:
            self.seen_change = package_changed(self.snapshot)
            return self.seen_change
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return False
            except OSError:
                self.seen_change = package_changed(self.snapshot)
                return self.seen_change
            at = 0
            while at + self.EVENT.size <= len(data):
                _wd, _mask, _cookie, size = self.EVENT.unpack_from(data, at)
                name = data[at + self.EVENT.size:at + self.EVENT.size + size].rstrip(b"\0")
                at += self.EVENT.size + size
                if name != b"__pycache__":  # the interpreter writing bytecode (no code changes with it)
                    self.seen_change = True
            if self.seen_change:
                return True

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def become_subreaper() -> bool:
    """Make this process the reaper of its descendants' orphans (Linux PR_SET_CHILD_SUBREAPER): a helm a
    killed worker started in a session of its own is then this server's child, and is killed with the
    rest of what the worker left (``Server._reap``)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(36, 1, 0, 0, 0)) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def orphans_of(parent: int, known: set[int]) -> list[int]:
    """This server's children that are no worker of its own: orphans reparented to it. The kernel lists a
    process's children per thread (/proc/PID/task/TID/children, one small read); without that file
    (a kernel built without CONFIG_PROC_CHILDREN), every process's parent is read from /proc."""
    try:
        found = []
        for task in os.listdir(f"/proc/{parent}/task"):
            with open(f"/proc/{parent}/task/{task}/children", "rb") as handle:
                found += [int(pid) for pid in handle.read().split()]
        return [pid for pid in found if pid not in known]
    except (OSError, ValueError):
        return _orphans_from_every_process(parent, known)


def _orphans_from_every_process(parent: int, known: set[int]) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in known:
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                fields = handle.read().rpartition(b")")[2].split()
        except OSError:
            continue
        if len(fields) > 1 and int(fields[1]) == parent:
            found.append(int(entry))
    return found


class Server:
    def __init__(self, socket_path: Path, deadline: float = DEFAULT_DEADLINE, verbose: bool = False,
                 run_cli: Callable[[], None] | None = None) -> None:

        self.run_cli = run_cli  # what a worker runs: the console entry (renderer.worker.run says why)
        self.socket_path = socket_path
        self.deadline = deadline
        self.verbose = verbose
        self.started: dict[int, float] = {}
        self.uid = os.geteuid()
        self.version, self.package = package_identity()
        self.interpreter = interpreter_key()
        self.watch = PackageWatch(Path(renderer.__file__).resolve().parent)
        self.workers: dict[int, Worker] = {}  # forked, client not yet answered
        self.children: set[int] = set()  # forked, not yet reaped
        self.status: dict[int, int] = {}  # worker -> the read end of its status pipe (worker.run's _report)
        self.selector = selectors.DefaultSelector()
        self.listener: socket.socket | None = None
        self.lock_fd = -1
        self.stopping = False
        self.restarting = False
        self.wake_r, self.wake_w = socket.socketpair()

    # -- start-up ------------------------------------------------------------------------------------

    def bind(self) -> None:
        self.claim()
        self.listen()

    def claim(self) -> None:
        """The folder checked (or made), the lock held and a stale socket file removed: after this,
        the path is this server's (``SetupError`` otherwise)."""
        private_folder(self.socket_path.parent)
        lock = str(self.socket_path) + ".lock"
        self.lock_fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(self.lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SetupError(f"another cozy-render daemon serves {self.socket_path}") from None
        with contextlib.suppress(FileNotFoundError):
            if not stat.S_ISSOCK(os.lstat(self.socket_path).st_mode):
                raise SetupError(f"{self.socket_path} exists and is not a socket; remove it or pick another path")
            os.unlink(self.socket_path)  # stale: its server held the lock we now hold

    def listen(self) -> None:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # born 0600: no moment in which another user could connect
        try:
            listener.bind(str(self.socket_path))
        except OSError as exc:
            listener.close()
            raise SetupError(f"cannot bind {self.socket_path}: {exc.strerror}") from None
        finally:
            os.umask(old)
        os.chmod(self.socket_path, 0o600)
        listener.listen(128)
        listener.setblocking(False)
        self.listener = listener

    # -- the loop ------------------------------------------------------------------------------------

    def serve(self) -> int:
        """Serve until SIGTERM/SIGINT (exit 0) or a package change (re-exec; returns only if exec fails)."""
        assert self.listener is not None
        self.wake_r.setblocking(False)
        self.wake_w.setblocking(False)
        signal.set_wakeup_fd(self.wake_w.fileno(), warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        self.selector.register(self.listener, selectors.EVENT_READ, "listener")
        self.selector.register(self.wake_r, selectors.EVENT_READ, "wake")
        try:
            while True:
                self._reap()
                if self.stopping:
                    self._stop_listening()
                    self._kill_all("the resident renderer stopped before the render finished")
                    return 0
                if self.restarting and not self.workers:
                    self._stop_listening()
                    self._reexec()
                self._kill_late()
                for key, _ in self.selector.select(self._timeout()):
                    if key.data == "listener":
                        self._accept()
                    elif key.data == "wake":
                        with contextlib.suppress(OSError):
                            self.wake_r.recv(4096)
                    elif isinstance(key.data, tuple):
                        self._status_readable(key.data[1])
                    else:
                        self._client_readable(key.data)
        finally:
            self._stop_listening()
            self._kill_all("the resident renderer stopped before the render finished")
            signal.set_wakeup_fd(-1)

    def _stop(self, _signum: int, _frame: object) -> None:
        self.stopping = True

    def _timeout(self) -> float | None:
        if self.stopping:
            return 0
        if not self.workers:
            return None
        return max(0.0, min(w.deadline_at for w in self.workers.values()) - time.monotonic())

    def _stop_listening(self) -> None:
        if self.listener is None:
            return
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(self.listener)
        self.listener.close()
        self.listener = None
        with contextlib.suppress(OSError):
            os.unlink(self.socket_path)

    def _reexec(self) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        os.close(self.lock_fd)
        self.watch.close()
        signal.set_wakeup_fd(-1)
        os.execv(sys.executable, sys.orig_argv)

    # -- requests ------------------------------------------------------------------------------------

    def _accept(self) -> None:
        assert self.listener is not None
        try:
            conn, _ = self.listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            time.sleep(0.05)  # EMFILE and the like: the listener stays readable; do not spin on it
            return
        descriptors: list[int] = []
        try:
            conn.setblocking(True)
            conn.settimeout(HANDSHAKE_SECONDS)
            if not peer_allowed(conn, self.uid):
                conn.sendall(protocol.frame(protocol.REFUSED, b"another uid"))
                return
            fields, descriptors = self._receive(conn)
            refusal = self._refusal(fields)
            if refusal:
                conn.sendall(protocol.frame(protocol.REFUSED, refusal.encode()))
                return
            request = self._request(fields, descriptors)
            conn.sendall(protocol.frame(protocol.ACCEPTED, repr(self.deadline).encode()))
            if protocol.read_exactly(conn, 1) != protocol.GO:
                return
            self._fork(conn, request)
            conn = None  # type: ignore[assignment]  # the worker table owns it now
        except (OSError, ValueError, IndexError, protocol.ProtocolError):
            return
        finally:
            for fd in descriptors:
                with contextlib.suppress(OSError):
                    os.close(fd)
            if conn is not None:
                conn.close()

    def _receive(self, conn: socket.socket) -> tuple[list[bytes], list[int]]:
        space = socket.CMSG_SPACE(protocol.DESCRIPTORS * 4)
        data, ancillary, _flags, _ = conn.recvmsg(1 << 16, space)
        descriptors = []
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                usable = len(payload) - len(payload) % 4
                descriptors += [int.from_bytes(payload[i:i + 4], sys.byteorder, signed=True)
                                for i in range(0, usable, 4)]
        for fd in descriptors:
            os.set_inheritable(fd, False)
        if len(data) < 4:
            data += protocol.read_exactly(conn, 4 - len(data))
        size = int.from_bytes(data[:4], "big")
        if size > protocol.MAX_REQUEST:
            raise protocol.ProtocolError("request too large")
        body = data[4:]
        if len(body) < size:
            body += protocol.read_exactly(conn, size - len(body))
        fields = protocol.unpack(body[:size])
        if len(fields) != len(protocol.FIELDS) or len(descriptors) != protocol.DESCRIPTORS:
            raise protocol.ProtocolError("not a cozy-render daemon request")
        return fields, descriptors

    def _refusal(self, fields: list[bytes]) -> str:
        magic, version, package, interpreter = fields[:4]
        if magic != protocol.MAGIC:
            return "another protocol"
        if version != self.version or package != self.package:
            return "another cozy-render version or installation"
        if interpreter != self.interpreter:
            return "another interpreter or interpreter options"
        if self.watch.changed():
            self.restarting = True  # new code on disk: finish what runs, then re-exec
            self._stop_listening()
            return "the installed package changed since the daemon started"
        if self.restarting or self.stopping:
            return "the daemon is restarting"
        return ""

    @staticmethod
    def _request(fields: list[bytes], descriptors: list[int]) -> Request:
        streams = fields[4].decode().split("\0")
        if len(streams) != 12:
            raise protocol.ProtocolError("stream settings")
        environ = {}
        for entry in fields[7].split(b"\0") if fields[7] else []:
            key, sep, value = entry.partition(b"=")
            if sep:
                environ[key] = value
        return Request(fields[6].split(b"\0"), environ, int(fields[5], 8), streams, descriptors)

    def _fork(self, conn: socket.socket, request: Request) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        status_r, status_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            assert self.run_cli is not None, "a serving daemon is given the console entry"
            worker.run(request._replace(status=status_w), self.run_cli)  # never returns
        os.close(status_w)
        os.set_blocking(status_r, False)
        self.status[pid] = status_r
        self.selector.register(status_r, selectors.EVENT_READ, ("status", pid))
        self.children.add(pid)
        self.started[pid] = time.monotonic()
        self.workers[pid] = Worker(conn, time.monotonic() + self.deadline)
        conn.setblocking(False)
        self.selector.register(conn, selectors.EVENT_READ, pid)

    # -- workers -------------------------------------------------------------------------------------

    def _client_readable(self, pid: int) -> None:
        """A client sends nothing after GO: readable means it hung up (killed by argocd-cmp-server's
        timeout, Ctrl-C): its worker is killed, nobody is left to read the output."""
        worker = self.workers.get(pid)
        if worker is None:
            return
        try:
            data = worker.conn.recv(64)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._kill(pid)
            self._finish(pid, None)

    def _status_readable(self, pid: int) -> None:
        """The worker's exit code, written once its output was complete (``worker._report``): the client is
        answered now, not after the worker's teardown and reaping. Nothing written (the worker was killed,
        or crashed first): the reaping reports how it ended."""
        try:
            data = os.read(self.status[pid], 16)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        self._close_status(pid)
        if data.isdigit() and pid in self.workers:
            self._log_outcome(pid, f"exit {int(data)}")
            self._finish(pid, "", int(data))

    def _close_status(self, pid: int) -> None:
        fd = self.status.pop(pid, None)
        if fd is not None:
            with contextlib.suppress(KeyError, ValueError):
                self.selector.unregister(fd)
            os.close(fd)

    def _kill_late(self) -> None:
        now = time.monotonic()
        for pid, running in list(self.workers.items()):
            if running.deadline_at <= now:
                self._kill(pid)
                self._finish(pid, f"error[CMP-DEADLINE]: the render did not finish within {self.deadline:g} s "
                                  "and was stopped", EXIT_INPUT)

    def _kill(self, pid: int) -> None:
        for kill in (os.killpg, os.kill):
            with contextlib.suppress(OSError):
                kill(pid, signal.SIGKILL)

    def _reap(self) -> None:
        """Collect every finished worker. Its group is killed before it is reaped (a zombie's pid cannot
        be reused), so nothing it left in its group outlives it."""
        while True:  # workers, and orphans reparented here (become_subreaper)
            try:
                info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return
            if info is None:
                return
            with contextlib.suppress(OSError):
                os.killpg(info.si_pid, signal.SIGKILL)
            _, status = os.waitpid(info.si_pid, 0)
            self._log(info.si_pid, status)  # before the client hears: a log read after it exits has the line
            if info.si_pid in self.workers:
                self._report(info.si_pid, status)  # the client next: orphans are looked for after
            if info.si_pid in self.children:
                self.children.discard(info.si_pid)
                self._end_orphans()

    def _end_orphans(self) -> None:
        """Kill what a finished worker left outside its group (reparented here: ``become_subreaper``)."""
        for pid in orphans_of(os.getpid(), self.children):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    def _log(self, pid: int, status: int) -> None:
        self._log_outcome(pid, f"exit {os.WEXITSTATUS(status)}" if os.WIFEXITED(status) else
                          f"signal {os.WTERMSIG(status)}")

    def _log_outcome(self, pid: int, outcome: str) -> None:
        """One line per worker, written before its client is answered (a log read after it exits has the
        line): at the worker's status (``_status_readable``), else when it is reaped."""
        began = self.started.pop(pid, None)
        if self.verbose and began is not None:
            with contextlib.suppress(OSError, ValueError):  # a log nobody reads must not stop the server
                sys.stderr.write(f"cozy-render daemon: worker {pid} {outcome} after "
                                 f"{(time.monotonic() - began) * 1000:.1f} ms\n")
                sys.stderr.flush()

    def _report(self, pid: int, status: int) -> None:
        if os.WIFEXITED(status):
            self._finish(pid, "", os.WEXITSTATUS(status))
            return
        signum = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
        try:
            name = signal.Signals(signum).name
        except ValueError:
            name = str(signum)
        self._finish(pid, f"error[CMP-WORKER]: the render worker was killed by signal {signum} ({name})",
                     EXIT_INTERNAL)

    def _finish(self, pid: int, line: str | None, code: int = EXIT_INTERNAL) -> None:
        """Tell the client (unless it left: ``line`` None) and forget the worker. A killed worker is
        reaped by ``_reap`` later; without a table entry it is not reported twice."""
        self._close_status(pid)
        worker = self.workers.pop(pid, None)
        if worker is None:
            return
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(worker.conn)
        if line is not None:
            payload = b"%d\n" % code + (line.encode() + b"\n" if line else b"")
            with contextlib.suppress(OSError):
                worker.conn.setblocking(True)
                worker.conn.settimeout(1.0)
                worker.conn.sendall(protocol.frame(protocol.EXITED, payload))
        worker.conn.close()

    def _kill_all(self, message: str) -> None:
        """Every worker killed, its client told, every child reaped: nothing outlives the server."""
        for pid in list(self.children):
            self._kill(pid)
        for pid in list(self.workers):
            self._finish(pid, f"error[CMP-WORKER]: {message}", EXIT_INTERNAL)
        for pid in list(self.children):
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
            self.children.discard(pid)
        self._end_orphans()
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass


def warm_up() -> None:
    """Import what a ``cmp generate`` imports and compile the regular expressions it compiles, so every
    worker starts with both. A forked child renders a sample (``cozy-render init``'s, in a temporary
    folder) and reports its modules and ``re``'s cache; only those cross back, never state a render
    leaves behind (caches keyed by paths, listings), and a compiled pattern depends on nothing but its
    text and flags. The samples cannot reach every module a repository's render can (a templated layer,
    the helm judge, a kind they do not emit), so the render's packages are imported whole
    (``WARM_PACKAGES``), and the caches that depend on the package's files alone are filled here."""
    import importlib
    import re
    import tempfile

    found = _what_a_render_loads(tempfile.mkdtemp(prefix="cozy-render-warm-"))
    for name in [*found.get("modules", []), *WARM_MODULES, *_modules_of(WARM_PACKAGES)]:
        if name not in sys.modules:
            with contextlib.suppress(Exception):
                importlib.import_module(name)
    for pattern, flags in found.get("patterns", []):
        with contextlib.suppress(re.error, TypeError, ValueError):
            re.compile(pattern, flags)
    _load_package_data()
    _compile_lazy_patterns()
    import gc

    gc.collect()
    gc.freeze()  # the warm objects stay out of every worker's collections (and their pages shared)


# Imported whole by the warm-up: every module a cmp generate's render can import, whichever features
# the repository uses. Build-time tools among them (schema conversion, vendoring, docs) are left out.
WARM_PACKAGES = ("renderer.load", "renderer.emit", "renderer.resolve", "renderer.check", "renderer.output",
                 "renderer.platform_chart", "renderer.effective", "renderer._generated")
NOT_WARMED = (".build", ".convert", ".export", ".docs", ".vendor")
# What the worker's in-process path runs around the render (renderer.entry, renderer.runner) and the
# render cache's store (COZY_RENDER_CACHE_DIR set in the sidecar).
WARM_MODULES = ("renderer.entry", "renderer.runner", "renderer.streams", "renderer.childproc", "renderer.cache",
                "renderer.commands.cmp")


def _modules_of(packages: tuple[str, ...]) -> list[str]:
    import importlib
    import pkgutil

    names = []
    for package in packages:
        with contextlib.suppress(Exception):
            path = importlib.import_module(package).__path__
            names += [info.name for info in pkgutil.walk_packages(path, package + ".", onerror=lambda _name: None)
                      if not info.name.endswith(NOT_WARMED)]
    return names


def _load_package_data() -> None:
    """Parse the package's own data files every render reads (the variants bundle, the platform chart
    models, the overlay schema), build the rule registry and the templating sandbox, once, here. They
    depend on nothing but files of the package, which the per-request check (``PackageWatch``)
    guards; a worker that changes what it was handed changes its own copy (fork)."""
    with contextlib.suppress(Exception):
        from renderer.load.variants import bundle_index

        bundle_index()
    with contextlib.suppress(Exception):
        from renderer.platform_chart.model import chart_model, shipped_versions

        for version in shipped_versions():
            chart_model(version)
    with contextlib.suppress(Exception):
        from renderer.check.rules import all_rules

        all_rules()
    with contextlib.suppress(Exception):
        from renderer.load.overlay_schema import schema

        schema()
    with contextlib.suppress(Exception):
        from renderer.load.templating import environment

        environment()


def _compile_lazy_patterns() -> None:
    """ruamel.yaml and cozy-render's own modules (``renderer.lazyre``) compile their patterns on first use,
    so that a new interpreter pays only for those its render uses; a worker would compile them again
    on every request (an overlay's first ``{{ var }}``, a timestamp-like scalar). Forced here, the compiled
    patterns are every worker's. A pattern depends on its text and flags alone."""
    lazy_types: list[type] = []
    with contextlib.suppress(ImportError):
        from ruamel.yaml.util import LazyEval

        lazy_types.append(LazyEval)
    from renderer.lazyre import LazyPattern

    lazy_types.append(LazyPattern)
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "renderer" or name.startswith(("renderer.", "ruamel.yaml"))):
            continue
        values = list(vars(module).values())
        values += [v for c in values if isinstance(c, type) for v in vars(c).values()]
        values += [item for v in values if isinstance(v, dict) for item in v.values()]
        values += [item for v in values if isinstance(v, (list, tuple)) for item in v]
        values += [item for v in values if isinstance(v, tuple) for item in v]
        for value in values:
            with contextlib.suppress(Exception):
                if type(value) is LazyPattern:
                    for method in PATTERN_METHODS:  # kept on the instance (LazyPattern.__getattr__)
                        getattr(value, method)
                elif type(value) in lazy_types:
                    value.lazy_self()


PATTERN_METHODS = ("match", "fullmatch", "search", "sub", "subn", "split", "findall", "finditer")


def _what_a_render_loads(folder: str) -> dict[str, list[Any]]:
    import json
    import shutil

    try:
        if _in_child(lambda: _sample(folder)) is None:
            return {}
        listed = _in_child(lambda: _generate([os.path.join(folder, "clusters", name) for name, *_ in SAMPLES]))
        return json.loads(listed) if listed else {}
    except ValueError:
        return {}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# `cozy-render init` samples the warm-up renders: every host OS and GPU mode, Hubble and VLANs.
SAMPLES = [("apt-container", "apt", "container", True, ("100:eno2:tenant-example",)),
           ("apt-vgpu", "apt", "vgpu", False, ()),
           ("talos-default", "talos", "default", True, ("200:eno3:tenant-example",)),
           ("talos-container", "talos", "container", False, ())]


def _sample(folder: str) -> bytes:
    from renderer.commands import init
    from renderer.requests import InitRequest

    for name, host_os, gpu, hubble, vlans in SAMPLES:
        with contextlib.suppress(Exception):
            init.run(InitRequest(name, host_os, gpu=gpu, hubble=hubble, vlans=vlans, root=Path(folder)))
    return b"ok"


def _generate(folders: list[str]) -> bytes:
    import json
    import re

    # Every module the child holds once it has rendered, not only those the render itself imported:
    # the command module and the request classes imported here are a worker's imports too.
    from renderer.commands import cmp
    from renderer.requests import CmpGenerateRequest

    for folder in folders:
        with contextlib.suppress(Exception):
            os.chdir(folder)
            cmp.generate(CmpGenerateRequest.from_environment(Path(".")))
    patterns = [[key[1], key[2]] for key in getattr(re, "_cache", {})
                if isinstance(key, tuple) and len(key) == 3 and isinstance(key[1], str) and isinstance(key[2], int)]
    return json.dumps({"modules": list(sys.modules),
                       "patterns": patterns}).encode()


def _in_child(body: object) -> bytes | None:
    """``body()``'s bytes, computed in a forked child whose output goes nowhere; None when it failed."""
    read, write = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(read)
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            result = body()  # type: ignore[operator]
            with os.fdopen(write, "wb") as out:
                out.write(result)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as source:
        result = source.read()
    _, status = os.waitpid(pid, 0)
    return result if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else None

